"""
What the state reader keeps between reads: answers kept while a Dag's rows hold, and memos.

A Dag's fingerprint (:func:`fingerprints`) changes whenever its runs or pending runs do; an answer
read from all of a Dag's rows (its range, a page of its keys, its strip) is kept with the
fingerprint it was read under. What a fired run ran with and what a pending run's keys give it
are memoized per process (their keys never change).
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.model import AssetProgress, RanWith

#: What the runs a rollup fired ran with, by (rollup identity, the runs' pending-run ids): the keys
#: Airflow logged for a pending run never change once it fired, so each is worked out once per
#: process. Bounded; the scheduler-side mappers are rebuilt per process too.
RAN_WITH: OrderedDict[tuple[int, tuple[int, ...]], RanWith] = OrderedDict()
RAN_WITH_SIZE = 200_000

#: What a pending run's received keys give it, by (its Dag's mappers, its key, the keys): its
#: progress and the times its state turns on (:func:`pending_times`, which depend on the keys, not
#: the clock). The overview counts every pending run of a Dag each time it is read, and building
#: their awaited sets again (thousands, more than the rollups' own cache holds) was most of it.
PENDING: OrderedDict[
    tuple[Any, ...], tuple[tuple[AssetProgress, ...], datetime | None, datetime | None, bool]
] = OrderedDict()
PENDING_SIZE = 10_000


def fingerprints(dag_ids: list[str], session: Any) -> dict[str, tuple[Any, ...]]:
    """
    Return, per Dag, what changes whenever its runs or pending runs do: counts, greatest ids, updates.

    Two grouped queries (``dag_run`` through its ``dag_id`` index; ``asset_partition_dag_run``,
    one scan). A run's state change moves its ``updated_at``; a new pending run or run, the
    greatest id; a pending run that fires, its ``created_dag_run_id`` and ``updated_at``.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    prints: dict[str, tuple[Any, ...]] = {}
    for dag_id, *values in session.execute(
        select(DagRun.dag_id, func.count(), func.max(DagRun.id), func.max(DagRun.updated_at))
        .where(DagRun.dag_id.in_(dag_ids))
        .group_by(DagRun.dag_id)
    ):
        prints[dag_id] = tuple(values)
    for dag_id, *values in session.execute(
        select(
            AssetPartitionDagRun.target_dag_id,
            func.count(),
            func.max(AssetPartitionDagRun.id),
            func.max(AssetPartitionDagRun.updated_at),
            func.count(AssetPartitionDagRun.created_dag_run_id),
        )
        .where(AssetPartitionDagRun.target_dag_id.in_(dag_ids))
        .group_by(AssetPartitionDagRun.target_dag_id)
    ):
        prints[dag_id] = (*prints.get(dag_id, ()), *values)
    return prints


#: Answers read from all of a Dag's rows (its range, a page of its keys), by what was asked, with
#: the Dag's fingerprint when read (:func:`fingerprints`): kept while the fingerprint holds. Bounded.
KEPT: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
KEPT_SIZE = 4096


def keep(memo: tuple[Any, ...], fingerprint: Any, value: Any) -> None:
    KEPT[memo] = (fingerprint, value)
    KEPT.move_to_end(memo)
    if len(KEPT) > KEPT_SIZE:
        KEPT.popitem(last=False)


def kept_value(memo: tuple[Any, ...], prints: dict[str, tuple[Any, ...]]) -> tuple[Any, Any] | None:
    """Return the kept ``(fingerprint, value)`` of *memo* (the Dag id second) while its Dag's print holds."""
    found = KEPT.get(memo)
    return found if found is not None and found[0] == prints.get(memo[1]) else None


def kept(memo: tuple[Any, ...], fingerprint: Any, read: Any) -> Any:
    """Return what *read* () returned for *memo* while *fingerprint* holds, else read it again."""
    found = KEPT.get(memo)
    if found is not None and found[0] == fingerprint:
        return found[1]
    value = read()
    keep(memo, fingerprint, value)
    return value
