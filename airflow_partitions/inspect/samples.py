"""
Sample keys a producer writes: worked out from its timetable, or declared in its Dag file.

A producer whose timetable keys runs ahead (core's ``CronPartitionTimetable``, our
``GrainPartitionTimetable`` and ``ExplicitPartitionTimetable``) is sampled by walking its
partitions from fixed dates; a producer whose tasks choose keys at runtime declares examples
with :func:`example_keys`, which ``airflow-partitions check`` reads and Airflow ignores.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from itertools import islice
from typing import Any, TypeVar

#: ``(asset name, asset uri) -> keys`` declared by the Dag files loaded in this process.
_declared: dict[tuple[str, str], tuple[str, ...]] = {}

#: Where a keyed-ahead producer's walk starts: New Year, and the days before the 2026 US and EU
#: daylight saving changes (so hourly producers cross a 23- and a 25-hour day).
ANCHORS = tuple(
    datetime(2026, month, day, tzinfo=UTC) for month, day in ((1, 1), (3, 7), (3, 28), (10, 24), (10, 31))
)
#: Partitions walked from each anchor.
PERIODS = 60

AssetT = TypeVar("AssetT")


def example_keys(asset: AssetT, keys: Iterable[str]) -> AssetT:
    """
    Declare keys a runtime producer writes to *asset*, for ``airflow-partitions check``; return *asset*.

    Use it where the asset is listed as an outlet:
    ``@task(outlets=[example_keys(hourly, ["2013-03-10T05", "2013-03-10T06"])])``. Airflow never sees
    the declaration (the asset is returned unchanged, so its stored form, and the Dag's, do not
    change); ``check`` pushes the keys through every consumer's mapper. Declare one key of each
    shape the task writes. A producer on ``PartitionedAtRuntime`` without a declaration is
    reported by ``check`` (``info``), since nothing can be checked for it.

    :param asset: An ``airflow.sdk`` ``Asset``.
    :param keys: Non-empty partition keys, such as ``"jfk::2013-03-11"``.
    :raises ValueError: naming *asset*, if *keys* is empty or holds a value that is not a
        non-empty string.
    """
    listed = tuple(keys)
    if not listed or not all(isinstance(k, str) and k for k in listed):
        raise ValueError(
            f"example_keys: expected non-empty partition key strings for {asset!r}; got {listed!r}."
        )
    name, uri = getattr(asset, "name", ""), getattr(asset, "uri", "")
    _declared[name, uri] = tuple(dict.fromkeys(_declared.get((name, uri), ()) + listed))
    return asset


def declared_example_keys(name: str, uri: str) -> tuple[str, ...]:
    """Return the keys declared with :func:`example_keys` for the asset *name* / *uri* (else ``()``)."""
    return _declared.get((name, uri), ())


def forget_example_keys() -> None:
    """Forget every declaration (before a Dag folder is loaded again)."""
    _declared.clear()


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
