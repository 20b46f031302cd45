"""
Helpers for the tasks of partitioned Dag runs: the run's period, and the upstream keys that never came.

- :func:`partition_period`: the period a run's partition covers (its start, end, time zone and,
  for a rollup, its members), read through the Dag's own mapper;
- :func:`missing_upstream_keys`: the upstream keys of the run's partition that had not arrived
  when a :class:`~airflow_partitions.CompletionDeadline` fired it;
- :func:`period_of`: the same period for any mapper and downstream key, outside a task.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from airflow.partition_mappers.base import PartitionMapper, is_rollup

from airflow_partitions.grains.grain import Period
from airflow_partitions.mapping import as_core, known_keys


def assets_of(condition: Any) -> list[Any]:
    """Return the assets of a schedule's asset condition (``AssetAll``/``AssetAny`` nest them)."""
    nested = getattr(condition, "objects", None)
    return [a for part in nested for a in assets_of(part)] if nested is not None else [condition]


def required_assets(condition: Any) -> set[str]:
    """
    Return the names of the assets a run needs whatever arrives: all of ``a & b``, none of ``a | b``.

    ``(a & b) | c`` needs none for sure (``c`` alone satisfies it); ``(a | b) & c`` needs ``c``.
    """
    nested = getattr(condition, "objects", None)
    if nested is None:
        return {condition.name} if hasattr(condition, "name") else set()
    parts = [required_assets(part) for part in nested]
    if type(condition).__name__.endswith("All"):  # AssetAll (sdk) or SerializedAssetAll (core)
        return set().union(*parts)
    return set.intersection(*parts) if parts else set()


def _from_context(context: Any, name: str, *, owner: str) -> Any:
    """
    Return ``context[name]``, or say that the task's context lacks it.

    A task that names ``dag_run`` (or ``dag``) as a parameter of its own gets it there, not in
    ``**context``.

    :raises ValueError: naming *owner* and *name*, if the context has no *name*.
    """
    try:
        return context[name]
    except KeyError:
        raise ValueError(
            f"{owner}: the task's context has no {name!r} (a task taking {name} as a parameter of its own "
            "gets it there, not in **context): pass get_current_context(), from airflow.sdk."
        ) from None


def run_mapper(context: Any, asset: Any = None, *, owner: str) -> PartitionMapper:
    """
    Return the working partition mapper of the running task's Dag for *asset*.

    *asset* may be omitted when the Dag is scheduled on one asset. ``airflow.sdk`` definitions
    (what a task's ``context["dag"]`` holds) are converted with :func:`~airflow_partitions.mapping.as_core`.

    :raises ValueError: naming *owner*, if the Dag is not scheduled on assets, *asset* is not
        among them, or *asset* is omitted and there are several.
    """
    timetable = _from_context(context, "dag", owner=owner).timetable
    condition = getattr(timetable, "asset_condition", None)
    assets = [] if condition is None else assets_of(condition)
    if asset is None and len(assets) == 1:
        asset = assets[0]
    if asset is None or asset not in assets:
        raise ValueError(
            f"{owner}: {asset!r} is not among the assets this Dag is scheduled on ({assets!r}); pass one "
            "of them."
        )
    return as_core(
        timetable.partition_mapper_config.get(asset, timetable.default_partition_mapper), "partition_mapper"
    )


def missing_upstream_keys(context: Any, asset: Any) -> list[str]:
    """
    Return, sorted, the upstream keys of this run's partition that had not arrived from *asset*.

    Call it in the task of a Dag run a rollup started (after a :class:`CompletionDeadline`,
    most usefully): ``missing_upstream_keys(context, hourly)`` in a run for ``2026-03-10`` of
    a day-of-hours rollup whose ``2026-03-10T03`` never came returns ``["2026-03-10T03"]``.
    It compares the rollup's expected keys for ``dag_run.partition_key`` with the partition
    keys of the run's triggering asset events from *asset*. Empty when the window was complete.

    :param context: The task's context (``get_current_context()`` or the ``**context`` a task
        receives).
    :param asset: The upstream ``Asset`` whose rollup to check, as the Dag's schedule names it.
    :raises ValueError: if *asset* is not in the Dag's schedule, the run has no partition key,
        the Dag's partition mapper for *asset* is not a rollup, or *context* lacks ``dag``,
        ``dag_run`` or ``triggering_asset_events`` (a task taking ``dag_run`` as a parameter:
        pass ``get_current_context()``).
    """
    owner = "missing_upstream_keys"
    partition_key = _from_context(context, "dag_run", owner=owner).partition_key
    mapper = run_mapper(context, asset, owner=owner)
    if not partition_key or not is_rollup(mapper):
        raise ValueError(
            f"missing_upstream_keys: expected a partitioned Dag run of a rollup on {asset!r}; got partition "
            f"key {partition_key!r} and mapper {type(mapper).__name__}."
        )
    events = _from_context(context, "triggering_asset_events", owner=owner)
    received = {event.partition_key for event in events.get(asset, ())}
    # Our rollups read each key as the member it names (``2026-03-10T00Z`` counts as
    # ``2026-03-10T00``: ``missing_keys``); Airflow's ``RollupMapper`` compares spellings.
    missing_keys = getattr(mapper, "missing_keys", None)
    if missing_keys is not None:
        return list(missing_keys(partition_key, received))
    return sorted(known_keys(mapper.to_upstream(partition_key)) - received)


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
    members = tuple(sorted(known_keys(mapper.to_upstream(key)))) if is_rollup(mapper) else ()
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
    :raises ValueError: if the run has no partition key, *asset* is not (or, omitted, cannot
        be chosen) among the Dag's assets, or *context* lacks ``dag`` or ``dag_run``.
    """
    key = _from_context(context, "dag_run", owner="partition_period").partition_key
    if not key:
        raise ValueError("partition_period: this Dag run has no partition key (expected a partitioned run).")
    return period_of(run_mapper(context, asset, owner="partition_period"), key)
