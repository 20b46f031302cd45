"""
Sample keys a producer writes, from its timetable (the declared ones: :mod:`airflow_partitions.examples`).

A producer whose timetable keys runs ahead (core's ``CronPartitionTimetable``, our
``GrainPartitionTimetable`` and ``ExplicitPartitionTimetable``) is sampled by walking its
partitions from fixed dates.
"""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import islice
from typing import Any

#: Where a keyed-ahead producer's walk starts: New Year, and the days before the 2026 US and EU
#: daylight saving changes (so hourly producers cross a 23- and a 25-hour day).
ANCHORS = tuple(
    datetime(2026, month, day, tzinfo=UTC) for month, day in ((1, 1), (3, 7), (3, 28), (10, 24), (10, 31))
)
#: Partitions walked from each anchor.
PERIODS = 60


def reads_assets(timetable: Any) -> bool:
    """Return whether *timetable* is a consumer's: on partitioned assets (``PartitionedAssetTimetable``)."""
    return getattr(timetable, "partitioned", False) and hasattr(timetable, "partition_mapper_config")


def timetable_samples(timetable: Any) -> list[list[str]]:
    """
    Return runs of consecutive keys a keyed-ahead producer *timetable* writes (one run per anchor).

    ``CronPartitionTimetable("0 * * * *", timezone="America/New_York")`` gives 60 hourly keys from
    each of :data:`ANCHORS`; an ``ExplicitPartitionTimetable`` its listed keys. Empty for a
    timetable that keys nothing ahead (runtime producers, asset-driven consumers).
    """
    walk = getattr(timetable, "iter_partition_dagrun_infos", None)
    if (
        walk is None
        or not getattr(timetable, "partitioned", False)
        or getattr(timetable, "partitioned_at_runtime", False)
        or reads_assets(timetable)
    ):
        return []
    runs = []
    for anchor in ANCHORS:
        infos = islice(walk(earliest=anchor, latest=anchor.replace(year=anchor.year + 20)), PERIODS)
        keys = [info.partition_key for info in infos if info.partition_key]
        if keys and keys not in runs:
            runs.append(keys)
    return runs
