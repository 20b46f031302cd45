"""
Re-queue the stored asset events that no longer feed a consumer Dag, after its rollup changed.

When a consumer's rollup definition changes (any change of a partition mapper's stored form, even
``max_downstream_keys``), Airflow's scheduler deletes the Dag's pending partitioned runs
(``AssetPartitionDagRun`` rows without a Dag run) with the keys they had received
(``PartitionedAssetKeyLog`` rows), logging "Cleared provisional partition Dag run(s) because the
rollup definition (mapper / window) has changed", and replays nothing: a half-filled period never
completes. The events themselves stay in the ``asset_event`` table. :func:`orphaned_events` finds
those of the Dag's upstream assets that feed none of its runs; :func:`requeue` queues them again,
for that Dag only, as the scheduler would have on their arrival.

Airflow dependency: :func:`requeue` calls ``AssetManager._queue_partitioned_dags`` (Airflow 3.3,
``airflow/assets/manager.py``), the private method that ``register_asset_change`` calls for every
new event. It maps the key with the Dag's current mapper, writes the pending run (under Airflow's
lock, stamped with the current rollup fingerprint) and its ``PartitionedAssetKeyLog`` row, and
audit-logs refusals; it creates no asset event, so no other consumer of the asset is triggered
again. ``tests/unit/test_requeue.py`` pins its signature.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

from airflow_partitions.tools.errors import UsageError
from airflow_partitions.tools.state.model import LISTED
from airflow_partitions.tools.state.plain import jsonable
from airflow_partitions.tools.state.runs import run_states
from airflow_partitions.tools.write import audit

#: The audit-log event of one ``requeue --yes`` (Airflow's ``log`` table; ``event`` holds 60).
REQUEUED_EVENT = "partition-tools requeue"


@dataclass(frozen=True)
class OrphanedEvent:
    """
    A stored asset event of the Dag's upstream asset that feeds none of the Dag's runs.

    ``OrphanedEvent(412, "it_requeue_hours", "2026-04-01T05", <its time>, ("2026-04-01",))``:
    event 412 sent ``2026-04-01T05``, which the Dag's current mapper counts towards the New York
    day ``2026-04-01``. ``refused`` is the refusal (as Airflow audit-logs it) when the current
    mapper refuses the key or maps it to more keys than its fan-out cap; then ``downstream_keys``
    is empty. ``partition_date`` is the one Airflow would carry: the producing run's, if the event
    has its key.
    """

    event_id: int
    asset: str
    partition_key: str
    timestamp: datetime
    downstream_keys: tuple[str, ...] = ()
    refused: str | None = None
    partition_date: datetime | None = None


@dataclass(frozen=True)
class Orphans:
    """
    The orphaned events of one consumer Dag with a timestamp in ``[start, end]``, oldest first.

    ``stale_pending`` counts the Dag's pending runs stamped with an older rollup definition: the
    scheduler clears them at its next loop, and only then are their events orphaned. ``runs``
    gives, per downstream key of the events, the states of the Dag's runs of that key (a key that
    already ran gets a new pending run). ``requeued`` is whether :func:`requeue` queued them.
    """

    dag_id: str
    start: datetime
    end: datetime
    events: tuple[OrphanedEvent, ...]
    stale_pending: int = 0
    runs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    requeued: bool = False

    @property
    def queueable(self) -> tuple[OrphanedEvent, ...]:
        """The events the current mapper accepts: those :func:`requeue` queues."""
        return tuple(e for e in self.events if e.refused is None)

    def by_downstream_key(self) -> dict[str, list[OrphanedEvent]]:
        """Return the queueable events per downstream key, in key order (an event under each of its keys)."""
        grouped: dict[str, list[OrphanedEvent]] = defaultdict(list)
        for event in self.queueable:
            for key in event.downstream_keys:
                grouped[key].append(event)
        return dict(sorted(grouped.items()))

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601), with ``downstream`` event counts per key."""
        counts = {key: len(events) for key, events in self.by_downstream_key().items()}
        return jsonable({**asdict(self), "downstream": counts})


def orphaned_events(dag_id: str, start: datetime, end: datetime, *, session: Any = None) -> Orphans:
    """
    Read the stored asset events of *dag_id*'s upstream assets in ``[start, end]`` that feed none of its runs.

    Read-only. The events are the ``asset_event`` rows of the assets the Dag's
    ``PartitionedAssetTimetable`` reads, with a partition key and a ``timestamp`` in the range,
    that no ``PartitionedAssetKeyLog`` row links to the Dag. Airflow keeps those rows for every run
    it created, and deletes them with the pending runs it clears; so these are the events the
    cleared runs had received, and also any the Dag never took (sent while it was paused or did not
    exist yet, or refused by its mapper then): read the list before re-queueing. Each is mapped
    with the Dag's current mapper: for a New York day of UTC hours, ``2026-04-01T05`` gives
    ``2026-04-01``.

    :param start: Earliest event time (aware, or naive meaning UTC).
    :param end: Latest event time, inclusive.
    :param session: An Airflow ORM session; a new one if omitted.
    :raises UnknownDag: naming the Dag, if it is no partitioned consumer Dag or reads no assets
        (:func:`~airflow_partitions.tools.state.serialized.consumer_timetable`).
    :raises UsageError: if *start* is after *end*.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return orphaned_events(dag_id, start, end, session=new)
    return _read(dag_id, start, end, session)[0]


def requeue(
    dag_id: str, start: datetime, end: datetime, *, user: str | None = None, session: Any = None
) -> Orphans:
    """
    Queue :func:`orphaned_events` again for *dag_id* alone, as the scheduler would on their arrival.

    Writes, in one transaction, what Airflow writes for a new event (through
    ``AssetManager._queue_partitioned_dags``): for ``2026-04-01T05`` of a New York day rollup, the
    pending run of ``2026-04-01`` (created if none, stamped with the current rollup fingerprint)
    and a ``PartitionedAssetKeyLog`` row linking the event to it. Events the current mapper
    refuses are left out (queueing one would only audit-log its refusal again). Queued events are
    no longer orphaned: a second call finds only the refused ones. One audit-log row
    (``partition-tools requeue``, the Dag, *user* as owner, default the operating-system user)
    records the events queued and their downstream keys. Commits *session*.

    :returns: The events read, with ``requeued=True``.
    :raises UnknownDag: as :func:`orphaned_events`.
    :raises UsageError: as :func:`orphaned_events`.
    :raises ValueError: naming the Dag, while pending runs stamped
        with an older rollup definition remain (the scheduler is about to clear them, with the
        keys this would add to them): run it again once the scheduler has cleared them.
    :raises RuntimeError: if this Airflow has no ``AssetManager._queue_partitioned_dags``.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return requeue(dag_id, start, end, user=user, session=new)

    from airflow.assets.manager import AssetManager
    from airflow.models.dag import DagModel

    queue = getattr(AssetManager, "_queue_partitioned_dags", None)
    if queue is None:
        raise RuntimeError(
            "This Airflow has no AssetManager._queue_partitioned_dags (Airflow 3.3's); requeue cannot "
            "queue events through it. Re-send the keys instead (POST /api/v2/assets/events)."
        )
    orphans, stored = _read(dag_id, start, end, session)
    if orphans.stale_pending:
        raise ValueError(
            f"{dag_id!r} has {orphans.stale_pending} pending runs stamped with its previous rollup "
            "definition; the scheduler clears them at its next loop (it logs 'Cleared provisional partition "
            "Dag run(s)'). Wait until it has, then run this again: their events are orphaned only then."
        )
    dag = session.get(DagModel, dag_id)
    orphans = _still_orphaned(orphans, stored, session)
    for event in orphans.queueable:
        queue(
            asset_id=stored[event.event_id].asset_id,
            partition_dags=[dag],
            event=stored[event.event_id],
            partition_key=event.partition_key,
            partition_date=event.partition_date,
            task_instance=None,
            session=session,
        )
    if orphans.queueable:
        queued = sorted({key for event in orphans.queueable for key in event.downstream_keys})
        what = {
            "events": len(orphans.queueable),
            "partition_keys": queued[:LISTED],
            "partitions": len(queued),
        }
        audit(session, REQUEUED_EVENT, dag_id, user, what)
    # Committed here, not when the caller's session closes: in the api-server that is the request's
    # teardown, which waits for the event loop; on SQLite a REST write's audit log may hold the loop
    # waiting for this very transaction's lock (docs/deployment.md, "SQLite").
    session.commit()
    return replace(orphans, requeued=True)


def _still_orphaned(orphans: Orphans, stored: dict[int, Any], session: Any) -> Orphans:
    """
    Return *orphans* less the events logged for the Dag since they were read, under Airflow's lock.

    The lock Airflow takes to log a key (``_lock_asset_model``: on SQLite the writer's lock, else
    each asset's row), held until the transaction ends: the api-server's watch may have logged one
    meanwhile (:mod:`~airflow_partitions.tools.write.reroute`), and an event logged twice for one
    pending run would make its Dag run consume it twice.
    """
    from airflow.assets.manager import _lock_asset_model
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    ids = [event.event_id for event in orphans.queueable]
    for asset_id in sorted({stored[i].asset_id for i in ids}):
        with _lock_asset_model(session=session, asset_id=asset_id):
            pass  # held until the transaction ends
    logged = set(
        session.scalars(
            select(key_log.c.asset_event_id).where(
                key_log.c.target_dag_id == orphans.dag_id,
                key_log.c.asset_event_id.in_(ids),
            )
        )
    )
    return replace(orphans, events=tuple(e for e in orphans.events if e.event_id not in logged))


def _read(dag_id: str, start: datetime, end: datetime, session: Any) -> tuple[Orphans, dict[int, Any]]:
    """Return the :class:`Orphans` and their ``AssetEvent`` rows by id."""
    # The events as Airflow's models (requeue hands them to Airflow's AssetManager); the rest as
    # the Core tables every reader reads.
    from airflow.models.asset import AssetEvent
    from airflow.sdk import timezone
    from airflow.timetables.base import compute_rollup_fingerprint
    from sqlalchemy import select

    from airflow_partitions.tools.state.serialized import asset_rows, consumer_timetable
    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending_run
    from airflow_partitions.tools.state.tables import dag_run
    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    start, end = timezone.coerce_datetime(start), timezone.coerce_datetime(end)
    if start > end:
        raise UsageError(f"--start {start.isoformat()} is after --end {end.isoformat()}.")
    timetable, assets = consumer_timetable(dag_id, session, needs="assets")
    rows = asset_rows(assets, session)
    mappers = {i: timetable.get_partition_mapper(name=name, uri=uri) for i, name, uri in rows}
    names = {asset_id: name for asset_id, name, _ in rows}
    # The events linked to the Dag, read once (Airflow indexes no column of the key log but the
    # pending run's id): a correlated NOT EXISTS scanned the whole key log once per event on SQLite.
    linked = select(key_log.c.asset_event_id).where(key_log.c.target_dag_id == dag_id).distinct().subquery()
    rows = session.execute(
        select(AssetEvent, dag_run.c.partition_key, dag_run.c.partition_date)
        .outerjoin(
            dag_run,
            (dag_run.c.dag_id == AssetEvent.source_dag_id) & (dag_run.c.run_id == AssetEvent.source_run_id),
        )
        .outerjoin(linked, linked.c.asset_event_id == AssetEvent.id)
        .where(
            AssetEvent.asset_id.in_(list(mappers)),
            AssetEvent.partition_key.is_not(None),
            AssetEvent.timestamp >= start,
            AssetEvent.timestamp <= end,
            linked.c.asset_event_id.is_(None),
        )
        .order_by(AssetEvent.id)
    ).all()
    events = []
    for event, run_key, run_date in rows:
        keys, refused = _map(mappers[event.asset_id], event.partition_key)
        # Airflow carries the producing run's partition_date only onto an event with the run's key.
        carried = run_date if run_key == event.partition_key else None
        events.append(
            OrphanedEvent(
                event.id, names[event.asset_id], event.partition_key, event.timestamp, keys, refused, carried
            )
        )

    fingerprint = compute_rollup_fingerprint(timetable)
    pending = select(pending_run.c.rollup_fingerprint).where(
        pending_run.c.target_dag_id == dag_id, pending_run.c.created_dag_run_id.is_(None)
    )
    stale = sum(stamp is None or stamp != fingerprint for stamp in session.scalars(pending))
    runs = run_states(dag_id, (key for e in events for key in e.downstream_keys), session)
    orphans = Orphans(
        dag_id, start, end, tuple(events), stale, {key: tuple(states) for key, states in sorted(runs.items())}
    )
    return orphans, {event.id: event for event, _, _ in rows}


def _map(mapper: Any, key: str) -> tuple[tuple[str, ...], str | None]:
    """Return the downstream keys *mapper* gives *key*, or the refusal Airflow would audit-log."""
    from airflow_partitions.mapping import downstream_keys, fan_out_cap

    try:
        keys = tuple(downstream_keys(mapper, key))
    except Exception as err:  # Airflow catches every exception of a mapper here, and so do we
        return (), f"{type(err).__name__}: {err}"
    cap, source = fan_out_cap(mapper.max_downstream_keys)
    if len(keys) > cap:
        return (), f"{len(keys)} downstream keys, more than {source}: Airflow queues no run for it"
    return keys, None
