"""
Keys follow their members: once a member list read at run time changes, each key is logged where it counts.

A rollup over :class:`~airflow_partitions.VariableMembers` awaits the members the Variable lists
now. Airflow logs a key once, on arrival, in the pending run of the period it counted for then
(``PartitionedAssetKeyLog``). When a store moves from north to south, its keys already received
stay in north's pending runs, which no longer await them, and south's periods await keys that
were sent but are logged elsewhere: they would wait forever. :func:`reroute` puts each key where it
counts now, for one consumer Dag, in one transaction:

- **moved**: a key logged in a pending run whose period no longer counts it is logged in the
  pending run of each period that counts it now, and removed from the first;
- **copied**: a key a pending run awaits that was received but logged elsewhere (in another
  pending run, or in a run that already fired before the change) or refused on arrival (the store
  was not listed yet) is logged in that pending run too, from its latest asset event;
- a pending run is **opened** for a period that counts a moved key and has neither a pending run
  nor a Dag run yet (through Airflow's own ``AssetManager._get_or_create_apdr``, under its lock,
  stamped with the current rollup fingerprint); a period that already ran is never re-opened: the
  key is listed as counting for a period that **ran** (``status`` shows what that run had);
- a pending run left without keys is **removed**.

It is what the api-server's watch runs after every change of a Variable a rollup lists members
from (:mod:`airflow_partitions.tools.watch`), and again a minute later for keys that processes
still holding the old value routed meanwhile. Read-only work (mapping every key) happens before the
transaction; inside it every step is checked again against the rows as they are then (a pending
run the scheduler fired meanwhile is left alone), so running it twice, or in two api-servers at
once, changes nothing more. One audit-log row (``partition-tools reroute``) records what it did.

Airflow dependency: ``AssetManager._get_or_create_apdr`` and ``_lock_asset_model`` (Airflow 3.3,
``airflow/assets/manager.py``), the private functions the scheduler's own event path uses;
``tests/unit/test_requeue.py`` pins their signatures.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.mapping import downstream_keys
from airflow_partitions.tools.state.model import REROUTED_EVENT
from airflow_partitions.tools.state.plain import jsonable
from airflow_partitions.tools.state.sql import chunks
from airflow_partitions.tools.write import audit

#: Whom the watch's writes are audit-logged as.
WATCH_USER = "airflow-partitions"


@dataclass(frozen=True)
class Placed:
    """
    One received key to log in the pending run of *target*, from asset event *event_id* of *asset_id*.

    *row_id*: the key-log row it moves out of (``None``: a copy, the key staying where it is).
    """

    asset_id: int
    event_id: int
    source_key: str
    target: str
    row_id: int | None = None


@dataclass(frozen=True)
class Rerouted:
    """
    What :func:`reroute` did (or, from :func:`plan`, would do) for one Dag, keys as producers sent them.

    ``moved``: ``(key, from, to)`` for keys taken out of a pending run that no longer counts them;
    ``copied``: ``(key, to)`` for keys logged in a pending run that awaited them; ``opened``: the
    partitions whose pending run was created; ``removed``: the partitions whose emptied pending run
    was deleted; ``ran``: ``(key, partition)`` for keys counting for a partition that already ran.
    """

    dag_id: str
    moved: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    copied: tuple[tuple[str, str], ...] = ()
    opened: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    ran: tuple[tuple[str, str], ...] = ()

    @property
    def changed(self) -> bool:
        """Whether it logged, moved or removed anything."""
        return bool(self.moved or self.copied or self.opened or self.removed)

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types."""
        return jsonable(self)


@dataclass
class _Plan:
    """What :func:`plan` found: rows to delete, keys to place, pending runs that may empty."""

    dag_id: str
    removals: dict[int, tuple[int, str, str, tuple[str, ...]]] = field(default_factory=dict)
    placements: list[Placed] = field(default_factory=list)
    emptied: set[int] = field(default_factory=set)


def reroute(dag_id: str, *, session: Any = None, user: str | None = None) -> Rerouted:
    """
    Log each received key of *dag_id* where it counts now, and take it out of where it no longer does.

    See the module's docstring. For ``it_region_day`` after ``s004`` moved north to south: its
    ``s004|2026-12-02T07`` leaves the pending run of ``north|2026-12-02`` for that of
    ``south|2026-12-02``.

    :param user: Whom the audit-log row names (default :data:`WATCH_USER`).
    :raises ~airflow_partitions.tools.state.serialized.NotAConsumer: if *dag_id* is no partitioned
        consumer Dag.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return reroute(dag_id, session=new, user=user)
    found = plan(dag_id, session)
    session.commit()  # the reads above took no lock; the writes below check each row again
    done = _apply(found, session)
    if done.changed:
        audit(session, REROUTED_EVENT, dag_id, user or WATCH_USER, _summary(done))
    session.commit()
    return done


def plan(dag_id: str, session: Any) -> _Plan:
    """
    Work out, read-only, which keys of *dag_id*'s pending runs to move and which awaited keys to copy.

    A pending run beside a run that already fired (Airflow 3.3 holds a key sent again in one, and it
    waits for the whole period again) is never completed with copies of the keys its period had.

    :raises ~airflow_partitions.tools.state.serialized.NotAConsumer: as :func:`reroute`.
    """
    from airflow_partitions.tools.state.serialized import asset_rows, consumer_timetable

    timetable, assets = consumer_timetable(dag_id, session)
    mappers = {
        asset_id: timetable.get_partition_mapper(name=name, uri=uri)
        for asset_id, name, uri in asset_rows(assets, session)
    }
    pending = _pending(dag_id, session)
    found = _Plan(dag_id)
    kept: dict[int, dict[int, set[str]]] = {apdr: defaultdict(set) for apdr in pending}
    for row_id, apdr, asset_id, event_id, source_key in _logged(list(pending), session):
        mapper = mappers.get(asset_id)
        targets = _targets(mapper, source_key) if mapper is not None else None
        if targets is None or pending[apdr] in targets:
            kept[apdr][asset_id].add(source_key)  # counts here, or nowhere now: it stays
            continue
        found.removals[row_id] = (apdr, source_key, pending[apdr], targets)
        found.placements += [Placed(asset_id, event_id, source_key, t, row_id) for t in targets]
    found.emptied = {apdr for apdr, received in kept.items() if not any(received.values())}
    ran = _ran(dag_id, pending.values(), session)
    missing = _missing(
        {apdr: key for apdr, key in pending.items() if key not in ran}, mappers, kept, found.placements
    )
    found.placements += _sent(missing, session)
    return found


def _missing(
    pending: dict[int, str],
    mappers: dict[int, Any],
    kept: dict[int, dict[int, set[str]]],
    placed: list[Placed],
) -> dict[int, dict[str, set[str]]]:
    """Return, per asset id and partition key of *pending*, the awaited keys it misses after *placed*."""
    from airflow_partitions.tools.rollup_view import RollupView

    coming: dict[tuple[str, int], set[str]] = defaultdict(set)
    for placement in placed:
        coming[(placement.target, placement.asset_id)].add(placement.source_key)
    missing: dict[int, dict[str, set[str]]] = defaultdict(dict)
    for asset_id, mapper in mappers.items():
        if (view := RollupView.of(mapper)) is None:
            continue
        for apdr, key in pending.items():
            try:
                lacking = set(view.missing(key, kept[apdr][asset_id] | coming[(key, asset_id)]))
            except ValueError:  # its members cannot be known now: nothing to copy
                continue
            if lacking:
                missing[asset_id][key] = lacking
    return missing


def _targets(mapper: Any, key: str) -> tuple[str, ...] | None:
    """Return where *key* counts now under *mapper*, or ``None`` if it is refused now."""
    try:
        return tuple(downstream_keys(mapper, key))
    except ValueError:
        return None


def _pending(dag_id: str, session: Any, *, lock: bool = False) -> dict[int, str]:
    """Return the Dag's open pending runs, id → partition key (*lock*: locked until the transaction ends)."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending_run

    query = select(pending_run.c.id, pending_run.c.partition_key).where(
        pending_run.c.target_dag_id == dag_id,
        pending_run.c.created_dag_run_id.is_(None),
    )
    if lock:
        query = query.order_by(pending_run.c.id).with_for_update(of=pending_run)
    return dict(session.execute(query).all())


def _logged(apdr_ids: list[int], session: Any) -> list[tuple[int, int, int, int, str]]:
    """Return ``(id, pending run, asset, event, key)`` of the key-log rows of pending runs *apdr_ids*."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    rows = []
    for chunk in chunks(apdr_ids):
        rows += session.execute(
            select(
                key_log.c.id,
                key_log.c.asset_partition_dag_run_id,
                key_log.c.asset_id,
                key_log.c.asset_event_id,
                key_log.c.source_partition_key,
            ).where(key_log.c.asset_partition_dag_run_id.in_(chunk))
        ).all()
    return [tuple(row) for row in rows]


def _sent(missing: dict[int, dict[str, set[str]]], session: Any) -> list[Placed]:
    """
    Return where to log the *missing* keys that were sent: each from its latest asset event.

    *missing*: per asset id, per partition key, the keys its pending run misses. A key counts as
    sent if an asset event of that asset carries it as awaited: logged for another partition of the
    Dag, or for none (refused on arrival, when its store was not listed yet or the Variable was
    broken). A key sent in another spelling only (``…T07:00:00Z`` for ``…T07``) is not found.
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import asset_event

    placements = []
    for asset_id, by_target in missing.items():
        wanted: dict[str, list[str]] = defaultdict(list)
        for target, keys in by_target.items():
            for key in keys:
                wanted[key].append(target)
        for chunk in chunks(sorted(wanted)):
            for key, event_id in session.execute(
                select(asset_event.c.partition_key, func.max(asset_event.c.id))
                .where(asset_event.c.asset_id == asset_id, asset_event.c.partition_key.in_(chunk))
                .group_by(asset_event.c.partition_key)
            ):
                placements += [Placed(asset_id, event_id, key, target) for target in wanted[key]]
    return placements


def _apply(found: _Plan, session: Any) -> Rerouted:
    """
    Carry out *found* in one transaction, each step checked against the rows as they are now.

    First the lock Airflow takes to create pending runs (on SQLite the writer's lock, so that
    nothing changes between the checks and the writes; else each asset's row), then the Dag's
    pending runs read again (locked on PostgreSQL and MySQL: a scheduler evaluating them
    finishes first). A key leaves a pending run only once it is logged where it counts now.
    """
    from airflow.assets.manager import _lock_asset_model

    if not found.placements:
        return Rerouted(found.dag_id)
    for asset_id in sorted({p.asset_id for p in found.placements}):
        with _lock_asset_model(session=session, asset_id=asset_id):
            pass  # held until the transaction ends
    pending = {key: apdr for apdr, key in _pending(found.dag_id, session, lock=True).items()}
    ran = _ran(found.dag_id, {p.target for p in found.placements}, session)
    placed: set[int] = set()
    copied, opened, ran_keys = [], [], []
    for placement in found.placements:
        if placement.target in ran:
            ran_keys.append((placement.source_key, placement.target))
            continue
        outcome = _place(found.dag_id, placement, pending, session)
        if placement.row_id is not None:
            placed.add(placement.row_id)
        elif outcome is not None:
            copied.append((placement.source_key, placement.target))
        if outcome == "opened":
            opened.append(placement.target)
    open_ids = set(pending.values())
    moved = [
        (key, source, targets)
        for row_id, (apdr, key, source, targets) in sorted(found.removals.items())
        if row_id in placed and apdr in open_ids and _delete_row(row_id, apdr, session)
    ]
    removed = _drop_emptied(found.emptied & open_ids, session)
    return Rerouted(
        found.dag_id,
        tuple(moved),
        tuple(copied),
        tuple(sorted(set(opened))),
        tuple(sorted(removed)),
        tuple(sorted(set(ran_keys))),
    )


def _delete_row(row_id: int, apdr: int, session: Any) -> bool:
    """Delete key-log row *row_id* if it still belongs to pending run *apdr*; return whether it did."""
    from sqlalchemy import delete

    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    done = session.execute(
        delete(key_log).where(key_log.c.id == row_id, key_log.c.asset_partition_dag_run_id == apdr)
    )
    return bool(done.rowcount)


def _place(dag_id: str, placement: Placed, pending: dict[str, int], session: Any) -> str | None:
    """
    Log *placement* in the pending run of its target; return ``"logged"``, ``"opened"`` or ``None``.

    ``None``: that asset event was logged there already. A target without a pending run gets one
    (*pending*, partition key → pending run id, gains it).
    """
    from sqlalchemy import insert, select

    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    apdr = pending.get(placement.target)
    outcome = "logged"
    if apdr is None:
        apdr = pending[placement.target] = _open(dag_id, placement, session)
        outcome = "opened"
    there = session.scalar(
        select(key_log.c.id).where(
            key_log.c.asset_partition_dag_run_id == apdr, key_log.c.asset_event_id == placement.event_id
        )
    )
    if there is not None:
        return None
    session.execute(
        insert(key_log).values(
            asset_id=placement.asset_id,
            asset_event_id=placement.event_id,
            asset_partition_dag_run_id=apdr,
            source_partition_key=placement.source_key,
            target_dag_id=dag_id,
            target_partition_key=placement.target,
            created_at=datetime.now(UTC),  # as Airflow's model stamps a row it adds
        )
    )
    return outcome


def _ran(dag_id: str, keys: Any, session: Any) -> set[str]:
    """Return the partition keys among *keys* that have a Dag run, or a pending run that fired."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending_run
    from airflow_partitions.tools.state.tables import dag_run

    ran: set[str] = set()
    for chunk in chunks(sorted(set(keys))):
        ran.update(
            session.scalars(
                select(dag_run.c.partition_key).where(
                    dag_run.c.dag_id == dag_id, dag_run.c.partition_key.in_(chunk)
                )
            )
        )
        ran.update(
            session.scalars(
                select(pending_run.c.partition_key).where(
                    pending_run.c.target_dag_id == dag_id,
                    pending_run.c.partition_key.in_(chunk),
                    pending_run.c.created_dag_run_id.is_not(None),
                )
            )
        )
    return ran


def _open(dag_id: str, placement: Placed, session: Any) -> int:
    """Create the pending run of *placement*'s target through Airflow's own path; return its id."""
    from airflow.assets.manager import AssetManager
    from airflow.models.dag import DagModel
    from airflow.timetables.base import compute_rollup_fingerprint

    from airflow_partitions.tools.state.serialized import consumer_timetable

    timetable, _ = consumer_timetable(dag_id, session)
    apdr = AssetManager._get_or_create_apdr(
        target_key=placement.target,
        target_partition_date=None,
        target_dag=session.get(DagModel, dag_id),
        rollup_fingerprint=compute_rollup_fingerprint(timetable),
        asset_id=placement.asset_id,
        session=session,
    )
    return int(apdr.id)


def _drop_emptied(candidates: set[int], session: Any) -> list[str]:
    """Delete the pending runs among *candidates* that hold no key-log row now; return their keys."""
    from sqlalchemy import delete, exists, select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending_run
    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    removed = []
    for apdr in sorted(candidates):
        key = session.scalar(select(pending_run.c.partition_key).where(pending_run.c.id == apdr))
        done = session.execute(
            delete(pending_run).where(
                pending_run.c.id == apdr,
                pending_run.c.created_dag_run_id.is_(None),
                ~exists().where(key_log.c.asset_partition_dag_run_id == apdr),
            )
        )
        if done.rowcount:
            removed.append(key)
    return removed


def _summary(done: Rerouted) -> dict[str, Any]:
    """Return what the audit-log row records: counts, and the first keys of each kind."""
    from airflow_partitions.tools.state.model import LISTED

    return {
        "moved": len(done.moved),
        "copied": len(done.copied),
        "opened": list(done.opened[:LISTED]),
        "removed": list(done.removed[:LISTED]),
        "ran": len(done.ran),
        "keys": sorted({key for key, *_ in done.moved} | {key for key, _ in done.copied})[:LISTED],
    }
