"""
Missing-only backfill: the partitions of a range that have no successful Dag run, and runs for them.

Airflow's own backfill takes a date range and reruns all of it (or, with its "missing" reprocess
behaviour, what has no run at all); this takes a partitioned Dag's partitions, keys like
``2026-03-10`` or ``FY2026-Q3``, and keeps those without a successful run, failed ones included.
Read through Airflow's models; runs are created through Airflow's own ``trigger_dag``.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.tools.state import run_states


@dataclass(frozen=True)
class MissingPartition:
    """
    A partition of the range without a successful run: its key, its date, and its runs' states.

    ``MissingPartition("2026-03-10", datetime(2026, 3, 10, tzinfo=UTC), ("failed",))``: the
    run for 2026-03-10 failed. ``states`` is empty when the partition never ran. ``due`` is when
    the timetable runs it (its period's end, plus the timetable's lag): a partition whose ``due``
    is still to come is *open*, and left out unless asked for, as Airflow's scheduler would not
    run it yet.
    """

    partition_key: str
    partition_date: datetime | None
    states: tuple[str, ...]
    due: datetime | None = None

    def is_open(self, now: datetime) -> bool:
        """Return whether the partition is not due by *now* (aware): its period has not ended."""
        return self.due is not None and self.due > now

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601)."""
        date = self.partition_date.isoformat() if self.partition_date else None
        due = self.due.isoformat() if self.due else None
        return {
            "partition_key": self.partition_key,
            "partition_date": date,
            "states": list(self.states),
            "due": due,
        }


def missing_partitions(
    dag_id: str,
    start: datetime,
    end: datetime,
    *,
    include_open: bool = False,
    now: datetime | None = None,
    session: Any = None,
) -> list[MissingPartition]:
    """
    Return, in order, the partitions of *dag_id* dated in ``[start, end]`` with no successful run.

    Partitions that are not due by *now* (their period has not ended: today, or a range reaching
    into the future) are left out, as Airflow's own backfill leaves out runs that are not due,
    unless *include_open*; with it, ``MissingPartition.is_open`` tells them apart.

    The partitions are the ones its timetable makes (``iter_partition_dagrun_infos``, as Airflow's
    backfill walks them): our ``GrainPartitionTimetable`` and ``ExplicitPartitionTimetable``,
    core's ``CronPartitionTimetable``. For ``GrainPartitionTimetable(BusinessDay(US))`` over the
    week of 2026-11-23, whose 24th failed: ``[MissingPartition("2026-11-24", …, ("failed",))]``
    (Thanksgiving, the 26th, is no partition).

    :param start: The first partition date (aware, or naive meaning UTC).
    :param end: The last partition date, inclusive.
    :param include_open: Also return the partitions not due yet.
    :param now: The time to compare with (aware); default the current time.
    :raises UnknownDag: naming the Dag, if it has no serialized Dag or its timetable does not make
        partitions ahead of runs (asset-triggered or runtime-keyed Dags: their keys come from
        events or tasks; use ``status``): :func:`~airflow_partitions.tools.state.serialized.
        consumer_timetable`.
    :raises ValueError: naming the Dag, if its timetable cannot list partitions.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return missing_partitions(dag_id, start, end, include_open=include_open, now=now, session=new)

    from airflow.sdk import timezone

    from airflow_partitions.tools.state.serialized import consumer_timetable

    timetable, _ = consumer_timetable(dag_id, session, needs="timetable")
    try:
        infos = list(
            timetable.iter_partition_dagrun_infos(
                earliest=timezone.coerce_datetime(start), latest=timezone.coerce_datetime(end)
            )
        )
    except NotImplementedError as err:
        raise ValueError(f"{dag_id!r}: its timetable cannot list partitions ({err}).") from None
    states = run_states(dag_id, (info.partition_key for info in infos), session)
    now = now or datetime.now(UTC)
    # When the scheduler runs a partition: ours say (GrainPartitionTimetable: its period's end
    # plus the lag); core's backfill infos carry it as run_after.
    due = getattr(timetable, "due", None)
    missing = [
        MissingPartition(
            info.partition_key,
            info.partition_date,
            tuple(states.get(info.partition_key, ())),
            due(info.partition_key) if due else info.run_after,
        )
        for info in infos
        if "success" not in states.get(info.partition_key, ())
    ]
    return missing if include_open else [m for m in missing if not m.is_open(now)]


def create_runs(
    dag_id: str, partitions: list[MissingPartition], *, user: str | None = None, session: Any = None
) -> list[str]:
    """
    Create one manual Dag run per partition, through Airflow's ``trigger_dag``; return their run ids.

    Each run carries the partition's key (``dag_run.partition_key``, ``2026-11-24``) and a note
    naming this command; the scheduler then runs them like any manual run. Triggered by the CLI
    and the operating-system user, or, with *user* (the api-server's caller), by the REST API and
    that user (``triggering_user_name``).

    :raises ValueError: (Airflow's) if the Dag does not allow manual runs.
    """
    from airflow.api.common.trigger_dag import trigger_dag
    from airflow.utils.types import DagRunTriggeredByType

    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return create_runs(dag_id, partitions, user=user, session=new)
    run_ids = []
    for partition in partitions:
        run = trigger_dag(
            dag_id,
            triggered_by=DagRunTriggeredByType.REST_API if user else DagRunTriggeredByType.CLI,
            triggering_user_name=user or getpass.getuser(),
            partition_key=partition.partition_key,
            note="airflow-partitions backfill --missing",
            session=session,
        )
        if run is None:  # trigger_dag found no Dag of that id
            raise ValueError(f"{dag_id!r}: no Dag of that id to create runs for.")
        run_ids.append(run.run_id)
    return run_ids
