"""
Remove stray pending partitioned runs: those a key sent again opened beside a period's Dag runs.

At-least-once producers send keys again (a Kafka consumer re-reading after a rebalance, a vendor
re-sending a file, a replay of history). On Airflow 3.3, and on 3.4 under a rollup's default
``RerunPolicy.HOLD``, a key for a period that already has a Dag run opens a new pending
partitioned run (an ``asset_partition_dag_run`` row without a Dag run) that waits for the whole
period again: under ``WaitForAll`` it never completes, and it takes one of the 500 places the
scheduler evaluates per loop. Nothing in Airflow removes it. :func:`stray_runs` lists such runs
(a dry run); :func:`discard` removes them with the keys they received (their
``partitioned_asset_key_log`` rows), writing one audit-log row per removal. Dag runs, and the
asset events themselves, are never touched.

Airflow dependency: :func:`discard` takes, for each asset the Dag reads, the lock Airflow's own
``AssetManager`` takes before it adds a key to a pending run (``_lock_asset_model`` in
``airflow/assets/manager.py``, Airflow 3.3 and 3.4: a row lock on the asset on PostgreSQL and
MySQL, SQLite's writer lock), then locks the pending runs' rows as the scheduler does before it
fires one. So a key arriving meanwhile waits and then opens a new pending run (it is never added
to one being removed), and a run the scheduler fires meanwhile is left alone.
``tests/unit/tools/write/test_discard.py`` pins that function's signature. Under Airflow 3.4 a
pending run also carries ``pending_partition_key`` (unique per Dag among pending runs) and
``rerun_policy``: removing the row frees its key, and nothing here reads either column.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from airflow_partitions.tools.errors import UsageError
from airflow_partitions.tools.state.model import DISCARDED_EVENT
from airflow_partitions.tools.state.plain import jsonable
from airflow_partitions.tools.state.runs import run_states
from airflow_partitions.tools.state.sql import selected_keys
from airflow_partitions.tools.write import audit, remove_pending_rows


@dataclass(frozen=True)
class StrayRun:
    """
    A pending partitioned run selected for removal: its partition, the keys it holds, since when.

    ``StrayRun("2026-05-01", 41, <opened>, ("2026-05-01T07",), ("success",))``: pending run 41 of
    ``2026-05-01`` holds the one key sent again, beside the period's successful Dag run.
    ``received`` are the upstream keys as producers sent them, sorted; ``runs`` the states of the
    partition's Dag runs, oldest first (empty if it never ran). ``opened_at`` is UTC.
    """

    partition_key: str
    pending_run_id: int
    opened_at: datetime | None
    received: tuple[str, ...]
    runs: tuple[str, ...]


@dataclass(frozen=True)
class Discarded:
    """
    The pending runs of one Dag :func:`stray_runs` selected, in key order; ``removed`` once removed.

    ``selection`` says what was asked in words (``"of periods that already have a Dag run"``,
    ``"of 2026-05-01"``, ``"of keys from 2026-05-01 to 2026-05-31"``).
    """

    dag_id: str
    selection: str
    runs: tuple[StrayRun, ...]
    removed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601)."""
        return jsonable(self)


def stray_runs(
    dag_id: str,
    *,
    keys: list[str] | None = None,
    start: str | None = None,
    end: str | None = None,
    session: Any = None,
) -> Discarded:
    """
    List *dag_id*'s pending partitioned runs to remove: by default those of periods that already ran.

    Read-only. Without *keys*, *start* or *end*: every pending run whose partition key already has
    a Dag run of the Dag (whatever that run's state). *keys* (``["2026-05-01"]``) select the pending
    runs of those partition keys, and *start* / *end* those whose key's time part (after the last
    ``|``: ``2026-05-01`` of ``vic|2026-05-01``) lies in the range (``end="2026-05"`` keeps May),
    whether or not the period ran. Each bound is a key of the Dag's grain or an ISO 8601 date or
    time (:func:`~airflow_partitions.tools.state.selection.selected_range`).

    :raises UnknownDag: naming the Dag, if the metadata database has no such Dag, or it is not a
        partitioned consumer (:func:`~airflow_partitions.tools.state.serialized.consumer_timetable`).
    :raises UsageError: before anything is read, if both *keys* and a range are given, a key is not
        a key of the Dag's grain, a bound is neither one nor an ISO 8601 date or time, or *start*
        is after *end*: naming the option and the value.
    """
    if session is None:
        from airflow_partitions.tools.state.database import read_session

        with read_session() as new:
            return stray_runs(dag_id, keys=keys, start=start, end=end, session=new)
    from airflow_partitions.tools.state.kept.answers import Answers
    from airflow_partitions.tools.state.pending import open_rows, received_keys
    from airflow_partitions.tools.state.selection import checked_key, selected_range
    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending_run

    grain = Answers(dag_id, session).grain  # a stored answer: the Dag's mappers read on a miss
    if keys and (start or end):
        raise UsageError("give --key or --start/--end, not both.")
    for key in keys or ():
        checked_key(dag_id, grain, key)
    start, end = selected_range(dag_id, grain, start, end)
    column = pending_run.c.partition_key
    chosen = [column.in_(keys)] if keys else selected_keys(column, start, end, None)
    rows = sorted(
        open_rows(session, dag_id, pending_run.c.id, column, pending_run.c.created_at, where=tuple(chosen)),
        key=lambda row: (row[1], row[0]),
    )
    runs = run_states(dag_id, (key for _, key, _ in rows), session)
    if not (keys or start or end):
        rows = [row for row in rows if row[1] in runs]
    received = received_keys(session, [apdr_id for apdr_id, _, _ in rows])
    return Discarded(
        dag_id,
        _selection(keys, start, end),
        tuple(
            StrayRun(
                key,
                apdr_id,
                opened,
                tuple(sorted(k for logged in received.get(apdr_id, {}).values() for k in logged)),
                tuple(runs.get(key, ())),
            )
            for apdr_id, key, opened in rows
        ),
    )


def discard(
    dag_id: str,
    *,
    keys: list[str] | None = None,
    start: str | None = None,
    end: str | None = None,
    user: str | None = None,
    session: Any = None,
) -> Discarded:
    """
    Remove the pending runs :func:`stray_runs` selects, with the keys they hold, in one transaction.

    Safe while the scheduler and the api-server run (see the module's note on locks): a pending
    run that fired meanwhile is left out of what is removed and of the answer, and a key arriving
    meanwhile opens a new pending run. Each removal writes an audit-log row (event
    ``partition-tools discard``, the Dag, *user* as owner, default the operating-system user; its
    ``extra`` a JSON object with the partition key, the pending run's id, when it opened and the
    keys it held).

    :returns: What was removed, with ``removed=True``.
    :raises UnknownDag: as :func:`stray_runs`.
    :raises UsageError: as :func:`stray_runs`.
    :raises RuntimeError: if this Airflow has no ``airflow.assets.manager._lock_asset_model``.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return discard(dag_id, keys=keys, start=start, end=end, user=user, session=new)
    from airflow.assets import manager
    from airflow.utils.sqlalchemy import with_row_locks
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending_run

    lock = getattr(manager, "_lock_asset_model", None)
    if lock is None:
        raise RuntimeError(
            "This Airflow has no airflow.assets.manager._lock_asset_model (Airflow 3.3's and 3.4's): discard "
            "cannot keep keys that arrive meanwhile out of the runs it removes."
        )
    from airflow_partitions.tools.state.serialized import asset_rows, consumer_timetable

    found = stray_runs(dag_id, keys=keys, start=start, end=end, session=session)
    if not found.runs:
        return replace(found, removed=True)
    with ExitStack() as locks:
        # In id order, as every discard takes them.
        for asset_id, _, _ in asset_rows(consumer_timetable(dag_id, session)[1], session):
            locks.enter_context(lock(session=session, asset_id=asset_id))
        still_pending = set(
            session.scalars(
                with_row_locks(
                    select(pending_run.c.id).where(
                        pending_run.c.id.in_([run.pending_run_id for run in found.runs]),
                        pending_run.c.created_dag_run_id.is_(None),
                    ),
                    session=session,
                )
            )
        )
        removed = tuple(run for run in found.runs if run.pending_run_id in still_pending)
        remove_pending_rows(session, [run.pending_run_id for run in removed])
        for run in removed:
            what = {
                "partition_key": run.partition_key,
                "pending_run_id": run.pending_run_id,
                "opened_at": run.opened_at.isoformat() if run.opened_at else None,
                "received": list(run.received),
                "runs": list(run.runs),
            }
            audit(session, DISCARDED_EVENT, dag_id, user, what)
        session.commit()
    return replace(found, runs=removed, removed=True)


def _selection(keys: list[str] | None, start: str | None, end: str | None) -> str:
    """Return what was selected, in words: ``"of periods that already have a Dag run"``."""
    if keys:
        return "of " + ", ".join(keys)
    if start or end:
        return f"of keys from {start or 'the first'} to {end or 'the last'}"
    return "of periods that already have a Dag run"
