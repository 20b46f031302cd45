"""
What the tools keep between reads, the only process-wide mutable state of :mod:`airflow_partitions.tools`.

A Dag's fingerprint (:func:`fingerprints`) changes whenever its runs or pending runs do; an answer
read from all of a Dag's rows (its range, a page of its keys, its strip) is kept with the
fingerprint it was read under. What a fired run ran with, what a pending run's keys give it and
the keys logged for it, and a Dag's deserialized timetable are memoized per process (each is
checked against what changes it, or never changes); the metrics' count of refused keys goes on
from the last audit-log row it read. One module, so that what outlives a request is in one place.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from collections.abc import Iterable
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

#: The keys logged for a pending run, by its id, with the stamp of its key-log rows when read (their
#: count and greatest id): Airflow only adds a pending run's key-log rows (``clean`` and
#: ``discard`` remove them all), so an unchanged stamp means unchanged keys
#: (:func:`~airflow_partitions.tools.state.pending.received_keys`). Bounded.
RECEIVED: OrderedDict[int, tuple[tuple[int, int], dict[str, frozenset[str]]]] = OrderedDict()
RECEIVED_SIZE = 50_000

#: Deserialized timetables by Dag id, with the serialized version (row id, hash) they were read from
#: and their assets (:func:`~airflow_partitions.tools.state.serialized.consumer_timetables`): one
#: per Dag of the deployment.
TIMETABLES: dict[str, tuple[tuple[Any, ...], Any, tuple[tuple[str, str], ...]]] = {}

#: Per metadata database (its URL): the last audit-log row of a refused key the metrics counted,
#: and the refusals counted so far by (Dag id, reason)
#: (:func:`~airflow_partitions.tools.metrics.refused_counts`): a counter read on from where it
#: stopped, so each scrape reads only the rows written since.
REFUSED: dict[str, tuple[int, Counter[tuple[str, str]]]] = {}


def fingerprints(dag_ids: list[str], session: Any) -> dict[str, tuple[Any, ...]]:
    """
    Return, per Dag, what changes whenever its runs or pending runs do: counts, greatest ids, updates.

    Two grouped queries (``dag_run`` through its ``dag_id`` index; ``asset_partition_dag_run``,
    one scan). A run's state change moves its ``updated_at``; a new pending run or run, the
    greatest id; a pending run that fires, its ``created_dag_run_id`` and ``updated_at``.
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run, dag_run

    prints: dict[str, tuple[Any, ...]] = {}
    for dag_id, *values in session.execute(
        select(dag_run.c.dag_id, func.count(), func.max(dag_run.c.id), func.max(dag_run.c.updated_at))
        .where(dag_run.c.dag_id.in_(dag_ids))
        .group_by(dag_run.c.dag_id)
    ):
        prints[dag_id] = tuple(values)
    for dag_id, *values in session.execute(
        select(
            asset_partition_dag_run.c.target_dag_id,
            func.count(),
            func.max(asset_partition_dag_run.c.id),
            func.max(asset_partition_dag_run.c.updated_at),
            func.count(asset_partition_dag_run.c.created_dag_run_id),
        )
        .where(asset_partition_dag_run.c.target_dag_id.in_(dag_ids))
        .group_by(asset_partition_dag_run.c.target_dag_id)
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


def digest(items: Iterable[Any]) -> str:
    """Return a short, order-free digest of *items* (strings or tuples of strings), for a memo's key."""
    return hashlib.blake2b("\n".join(sorted(map(repr, items))).encode(), digest_size=16).hexdigest()


def kept(memo: tuple[Any, ...], fingerprint: Any, read: Any) -> Any:
    """Return what *read* () returned for *memo* while *fingerprint* holds, else read it again."""
    found = KEPT.get(memo)
    if found is not None and found[0] == fingerprint:
        return found[1]
    value = read()
    keep(memo, fingerprint, value)
    return value
