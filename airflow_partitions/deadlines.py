"""
Completion deadlines for rollups, and the rollup base every rollup mapper of ours shares.

Airflow's rollups wait for every upstream key (``WaitForAll``) or a fixed count
(``MinimumCount``), and core serialization refuses any other wait policy. A day whose 03:00
file never comes holds its Dag run forever. :class:`CompletionDeadline` fires the rollup when
it is complete or, once its period has ended plus a grace duration, with what has arrived if
enough has. It lives inside our own rollup mappers (:class:`~airflow_partitions.temporal.
TemporalRollupMapper`, :class:`~airflow_partitions.composite.DimensionRollupMapper`), which
serialize it themselves; :func:`missing_upstream_keys` tells the consumer's task what did not
arrive.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Set
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from airflow.partition_mappers.base import PartitionMapper, RollupMapper
from airflow.partition_mappers.wait_policy import PartitionSatisfaction, WaitForAll, WaitPolicy

from airflow_partitions._common import ValueEquality, as_core, dump, load, shown
from airflow_partitions.grains import Period


class ExpectedKeys(frozenset):
    """
    The upstream keys a rollup waits for (a ``frozenset`` of ``str``), and when its period closes.

    :attr:`closes_at` is the end, in UTC, of the latest period among the downstream period and
    its members (``2026-03-11T00:00:00+00:00`` for the UTC day ``2026-03-10``), or ``None``
    when the keys carry no time. Our rollups' ``to_upstream`` returns it, so that
    :class:`CompletionDeadline` can tell when a period has ended: Airflow hands a wait policy
    only the matched and expected key sets.
    """

    closes_at: datetime | None

    def __new__(cls, keys: Iterable[str], closes_at: datetime | None) -> ExpectedKeys:
        """Build the set of *keys* closing at *closes_at* (UTC)."""
        made = super().__new__(cls, keys)
        made.closes_at = closes_at
        return made


def _period_ends(decoded: Any) -> list[datetime]:
    """Return the UTC ends of the periods in a decoded key (a Period, or a dict of dimensions)."""
    if isinstance(decoded, Period):
        return [decoded.utc[1]]
    if isinstance(decoded, dict):
        return [value.utc[1] for value in decoded.values() if isinstance(value, Period)]
    return []


#: The longest grace accepted: far beyond any real use, and far from ``datetime``'s year 9999.
_MAX_GRACE = timedelta(days=3660)


class CompletionDeadline(ValueEquality, WaitPolicy):
    """
    Fire a rollup when complete or, after its period's end plus *grace*, with enough keys.

    ``TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()),
    wait_policy=CompletionDeadline(timedelta(hours=2), min_fraction=0.9))`` runs the consumer
    for ``2026-03-10`` as soon as all 24 hours have arrived, or from 2026-03-11T02:00Z on once at
    least 22 of them (90 %, rounded up) have. Before the deadline, only a complete window fires;
    after it, a window below the minimum keeps waiting (late keys still count). The minimum is
    capped at the window's size, so it never makes a rollup unreachable.

    The period ends at the latest end among the downstream period and the window's members
    (the day's end for hours of a day; the last day's for a centred sliding window), in UTC.
    This is the only place airflow-partitions reads the clock (``datetime.now(UTC)``): the
    scheduler re-evaluates pending rollups every tick, so a rollup fires within a tick or two of
    its deadline without any new event. The consumer's task lists what was missing with
    :func:`missing_upstream_keys`.

    Usable only as the ``wait_policy`` of our rollup mappers; Airflow's ``RollupMapper``
    refuses wait policies it does not ship.

    :param grace: How long after the period's end to wait for stragglers (a ``timedelta``, at
        most ten years).
    :param min_count: Fire after the deadline only if at least this many upstream keys arrived.
    :param min_fraction: Fire after the deadline only if at least this fraction (0 < f <= 1) of
        the expected keys arrived, rounded up. With neither, one key is enough; with both, both
        must hold.
    :raises ValueError: at Dag parse, for a *grace* that is not a non-negative ``timedelta``, a
        *min_count* that is not a positive integer, or a *min_fraction* outside (0, 1].
    """

    def __init__(
        self, grace: timedelta, *, min_count: int | None = None, min_fraction: float | None = None
    ) -> None:
        if not isinstance(grace, timedelta) or not timedelta(0) <= grace <= _MAX_GRACE:
            raise ValueError(
                "CompletionDeadline: grace must be a timedelta from 0 to 3660 days (ten years) such as "
                f"timedelta(hours=2); got {grace!r}."
            )
        if min_count is not None and (type(min_count) is not int or min_count < 1):
            raise ValueError(f"CompletionDeadline: min_count must be a positive integer; got {min_count!r}.")
        if min_fraction is not None and (
            isinstance(min_fraction, bool)
            or not isinstance(min_fraction, int | float)
            or not 0 < min_fraction <= 1
        ):
            raise ValueError(
                "CompletionDeadline: min_fraction must be a number in (0, 1] such as 0.9; "
                f"got {min_fraction!r}."
            )
        self.grace = grace
        self.min_count = min_count
        self.min_fraction = min_fraction

    def __repr__(self) -> str:
        return (
            f"CompletionDeadline(grace={self.grace!r}, min_count={self.min_count!r}, "
            f"min_fraction={self.min_fraction!r})"
        )

    def needed(self, expected: int) -> int:
        """Return how many of *expected* keys must have arrived to fire after the deadline."""
        fraction = math.ceil(self.min_fraction * expected - 1e-9) if self.min_fraction else 0
        return min(expected, max(self.min_count or 1, fraction))

    def is_satisfied(self, matched: int, expected: int) -> bool:
        """Return whether *matched* of *expected* keys complete the window (no deadline known)."""
        return matched >= expected

    def is_unreachable(self, expected: int) -> bool:
        """Return ``False``: the minimum is capped at the window's size."""
        return False

    def is_satisfied_by_keys(self, *, matched: Set[str], expected: Set[str]) -> PartitionSatisfaction:
        """
        Return satisfied if every expected key arrived, or the deadline has passed with enough.

        *expected* is the :class:`ExpectedKeys` our rollups return; a plain set (no closing time)
        is satisfied only when complete.
        """
        if expected <= matched:
            satisfied = True
        else:
            closes_at = getattr(expected, "closes_at", None)
            satisfied = (
                closes_at is not None
                and datetime.now(UTC) >= closes_at + self.grace
                and len(matched & expected) >= self.needed(len(expected))
            )
        return PartitionSatisfaction(satisfied=satisfied, unreachable=False, unreachable_reason=None)

    def serialize(self) -> dict[str, Any]:
        """Return ``{"format_version", "grace_seconds"[, "min_count", "min_fraction"]}``."""
        return dump(
            grace_seconds=self.grace.total_seconds(), min_count=self.min_count, min_fraction=self.min_fraction
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> CompletionDeadline:
        """Rebuild the policy from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(
            timedelta(seconds=data["grace_seconds"]),
            min_count=data.get("min_count"),
            min_fraction=data.get("min_fraction"),
        )


#: Entries kept by the expected-key memo (the scheduler evaluates at most 500 rollups a tick).
_CACHE_SIZE = 8192


@lru_cache(maxsize=_CACHE_SIZE)
def _expected(rollup: PolicyRollupMapper, downstream_key: str) -> ExpectedKeys:
    mapper = rollup.upstream_mapper
    try:
        decoded = mapper.decode_downstream(downstream_key)
        members = list(rollup.window.to_upstream(decoded))
    except OverflowError:
        raise ValueError(
            f"partition key {shown(downstream_key)}: its window reaches past year 1 or 9999."
        ) from None
    ends = [end for item in (decoded, *members) for end in _period_ends(item)]
    return ExpectedKeys((mapper.encode_upstream(m) for m in members), closes_at=max(ends, default=None))


@lru_cache(maxsize=256)
def _checked_routes(rollup: PolicyRollupMapper, samples: tuple[str, ...], hint: str) -> None:
    for downstream in samples:
        members = sorted(rollup.to_upstream(downstream))
        for key in members[:3] + members[-3:]:
            try:
                mapped = rollup.to_downstream(key)
            except ValueError as err:
                mapped = f"an error ({err})"
            if downstream not in ([mapped] if isinstance(mapped, str) else mapped):
                raise ValueError(
                    f"{type(rollup).__name__}: the run for {downstream!r} would wait forever: it waits for "
                    f"{key!r}, which maps to {mapped!r}; {hint}."
                )


class PolicyRollupMapper(ValueEquality, RollupMapper):
    """
    Airflow's ``RollupMapper`` that also takes a :class:`CompletionDeadline`, and memoizes.

    The base of our rollup mappers; not registered, not used directly. Adds to core's:

    - ``wait_policy`` may be a :class:`CompletionDeadline` (serialized by this class, under
      ``completion_deadline``, since core serialization refuses wait policies it does not ship);
    - :meth:`to_upstream` returns :class:`ExpectedKeys` (the keys and the period's closing time),
      memoized process-wide by the rollup's serialized form: the scheduler deserializes Dags
      every tick, and an equal, new rollup hits the same entries;
    - :meth:`missing_keys`, for tasks and tools.

    :raises ValueError: at Dag parse, as the subclass documents.
    """

    def __init__(
        self,
        *,
        upstream_mapper: PartitionMapper,
        window: Any,
        wait_policy: WaitPolicy | None = None,
        max_downstream_keys: int | None = None,
    ) -> None:
        # Not RollupMapper.__init__: its check that the mapper decodes to the window's declared
        # type is one our subclasses make themselves, so that a SlidingWindow (which declares a
        # type no mapper decodes to) is refused by core's RollupMapper but accepted here.
        PartitionMapper.__init__(self, max_downstream_keys=max_downstream_keys)
        self.upstream_mapper = upstream_mapper
        self.window = window
        self.wait_policy = WaitForAll() if wait_policy is None else wait_policy

    def _check_routes(self, samples: tuple[str, ...], hint: str) -> None:
        """
        Refuse, at Dag parse, a rollup that would wait forever for one of the *samples* keys.

        Airflow matches the keys producers send against :meth:`to_upstream` by string and routes
        each by ``to_downstream``: unless every awaited key ``u`` of ``D`` has ``D in
        to_downstream(u)``, the run for ``D`` never fires (naive UTC hour keys read in New York
        time; a kept dimension whose mapper does not map its own output to itself). Checks the
        first and last three awaited keys of each sample, once per configuration and process (the
        scheduler rebuilds rollups every tick; a failure is not memoized).

        :raises ValueError: naming the sample, the awaited key, where it goes instead, and *hint*;
            or the window's own error for a sample it cannot expand (grains that do not nest).
        """
        _checked_routes(self, samples, hint)

    def to_upstream(self, downstream_key: str) -> ExpectedKeys:
        """Return the upstream keys *downstream_key* waits for, with its closing time (memoized)."""
        return _expected(self, downstream_key)

    def missing_keys(self, downstream_key: str, received: Iterable[str]) -> list[str]:
        """
        Return, sorted, the upstream keys of *downstream_key* not among *received*.

        ``missing_keys("2026-03-10", ["2026-03-10T00", …])`` lists the hours that never came.

        :raises ValueError: if *downstream_key* is not a key this rollup writes.
        """
        return sorted(self.to_upstream(downstream_key) - set(received))

    def serialize(self) -> dict[str, Any]:
        """Return core's ``RollupMapper`` form, with a :class:`CompletionDeadline` under its own name."""
        from airflow.serialization.encoders import encode_partition_mapper, encode_wait_policy, encode_window

        deadline = isinstance(self.wait_policy, CompletionDeadline)
        return dump(
            upstream_mapper=encode_partition_mapper(self.upstream_mapper),
            window=encode_window(self.window),
            wait_policy=None if deadline else encode_wait_policy(self.wait_policy),
            completion_deadline=self.wait_policy.serialize() if deadline else None,
            max_downstream_keys=self.max_downstream_keys,
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        """Rebuild the rollup from :meth:`serialize`'s output."""
        from airflow.serialization.decoders import decode_partition_mapper, decode_wait_policy, decode_window

        data = load(data, cls)
        if "completion_deadline" in data:
            policy: WaitPolicy = CompletionDeadline.deserialize(data["completion_deadline"])
        else:
            policy = decode_wait_policy(data["wait_policy"])
        return cls(
            upstream_mapper=decode_partition_mapper(data["upstream_mapper"]),
            window=decode_window(data["window"]),
            wait_policy=policy,
            max_downstream_keys=data.get("max_downstream_keys"),
        )


def _assets(condition: Any) -> list[Any]:
    """Return the assets of a schedule's asset condition (``AssetAll``/``AssetAny`` nest them)."""
    nested = getattr(condition, "objects", None)
    return [a for part in nested for a in _assets(part)] if nested is not None else [condition]


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
        or the Dag's partition mapper for *asset* is not a rollup.
    """
    partition_key = context["dag_run"].partition_key
    timetable = context["dag"].timetable
    if asset not in _assets(timetable.asset_condition):
        raise ValueError(
            f"missing_upstream_keys: {asset!r} is not among the assets this Dag is scheduled on."
        )
    mapper = timetable.partition_mapper_config.get(asset, timetable.default_partition_mapper)
    if getattr(mapper, "is_rollup", False) and not hasattr(mapper, "to_upstream"):
        mapper = as_core(mapper, "partition_mapper")  # airflow.sdk's RollupMapper: a definition only
    if not partition_key or not getattr(mapper, "is_rollup", False):
        raise ValueError(
            f"missing_upstream_keys: expected a partitioned Dag run of a rollup on {asset!r}; got partition "
            f"key {partition_key!r} and mapper {type(mapper).__name__}."
        )
    received = {event.partition_key for event in context["triggering_asset_events"].get(asset, ())}
    return sorted(mapper.to_upstream(partition_key) - received)
