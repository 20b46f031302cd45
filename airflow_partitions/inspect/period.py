"""The period a partitioned Dag run covers, for the task that processes it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from airflow_partitions.deadlines import run_mapper
from airflow_partitions.grains import Period


@dataclass(frozen=True)
class PartitionPeriod:
    """
    A run's partition: its key, its period (aware, in the grain's zone) and, for a rollup, its members.

    For the New York day ``2026-03-08``: ``start`` 2026-03-08T00:00-05:00, ``end``
    2026-03-09T00:00-04:00, ``timezone`` ``"America/New_York"`` and, under
    ``TemporalWindow(Hour())``, 23 ``members`` (``2026-03-08T05`` … ``2026-03-09T03``). ``end``
    and ``timezone`` are ``None`` where the mapper names only a start (Airflow's own mappers);
    ``members`` is empty except for rollups.
    """

    key: str
    start: datetime | None
    end: datetime | None
    timezone: str | None
    members: tuple[str, ...] = ()


def _period(mapper: Any, key: str) -> Period | None:
    """Return the period *mapper* names with the downstream *key* (our temporal dimension), else ``None``."""
    for part in (
        mapper,
        getattr(mapper, "upstream_mapper", None),
        getattr(mapper, "downstream_mapper", None),
    ):
        decode = getattr(part, "decode_output", None)
        if decode is None:
            continue
        try:
            decoded = decode(key)
        except ValueError:
            continue
        found = [
            v for v in (decoded.values() if isinstance(decoded, dict) else [decoded]) if isinstance(v, Period)
        ]
        if len(found) == 1:
            return found[0]
    return None


def period_of(mapper: Any, key: str) -> PartitionPeriod:
    """
    Return the period of the downstream *key* of *mapper* (any core mapper, ours or Airflow's).

    ``period_of(TemporalMapper(Month(timezone="America/New_York")), "2026-03")`` starts
    2026-03-01T00:00-05:00 and ends 2026-04-01T00:00-04:00.

    :raises ValueError: (the mapper's) if *mapper* is a rollup and *key* not a key it writes.
    """
    members = tuple(sorted(mapper.to_upstream(key))) if getattr(mapper, "is_rollup", False) else ()
    period = _period(mapper, key)
    if period is not None:
        return PartitionPeriod(key, period.start, period.end, period.grain.timezone, members)
    try:
        start = mapper.to_partition_date(key)
    except (ValueError, TypeError):
        start = None
    return PartitionPeriod(key, start, None, None, members)


def partition_period(context: Any, asset: Any = None) -> PartitionPeriod:
    """
    Return the period of the running task's partitioned Dag run, read through the Dag's mapper.

    In a consumer Dag on ``PartitionedAssetTimetable(assets=hourly, default_partition_mapper=
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="America/New_York"),
    input_timezone="UTC"), window=TemporalWindow(Hour())))``::

        @task
        def assemble(**context):
            period = partition_period(context)  # the run for "2026-03-08"
            period.start, period.end  # 2026-03-08 00:00-05:00, 2026-03-09 00:00-04:00
            len(period.members)  # 23: "2026-03-08T05" … "2026-03-09T03"

    :param context: The task's context (``get_current_context()`` or ``**context``).
    :param asset: The upstream ``Asset`` whose mapper reads the key; optional when the Dag is
        scheduled on one asset.
    :raises ValueError: if the run has no partition key, or *asset* is not (or, omitted, cannot
        be chosen) among the Dag's assets.
    """
    key = context["dag_run"].partition_key
    if not key:
        raise ValueError("partition_period: this Dag run has no partition key (expected a partitioned run).")
    return period_of(run_mapper(context, asset, owner="partition_period"), key)
