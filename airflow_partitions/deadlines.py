"""
Completion deadlines: fire a rollup when complete or, after its period's end plus a grace, with what came.

Airflow's rollups wait for every upstream key (``WaitForAll``) or a fixed count
(``MinimumCount``), and core serialization refuses any other wait policy. A day whose 03:00
file never comes holds its Dag run forever. :class:`CompletionDeadline` fires the rollup when
it is complete or, once its period has ended plus a grace duration, with what has arrived if
enough has. It lives inside our own rollup mappers (:mod:`airflow_partitions.rollup`), which
serialize it themselves; :func:`~airflow_partitions.task.missing_upstream_keys` tells the
consumer's task what did not arrive.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Set
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.partition_mappers.wait_policy import PartitionSatisfaction, WaitPolicy

from airflow_partitions.grains.stored import ValueEquality, dump, load

#: When a deadline beyond the last instant ``datetime`` holds "fires": never, in practice.
_END_OF_TIME = datetime.max.replace(tzinfo=UTC)
#: The longest grace accepted: far beyond any real use, and far from ``datetime``'s year 9999.
_MAX_GRACE = timedelta(days=3660)


#: How long a partial period must go without a new key before a deadline fires it, by default.
DEFAULT_SETTLE = timedelta(seconds=30)
#: Pending rollups whose last change the deadline remembers (the scheduler evaluates 500 a tick).
_SETTLE_MEMORY = 100_000
#: ``(rollup, downstream key) -> (keys counted, when that count was first seen)``, per process.
_last_change: OrderedDict[tuple[int, str], tuple[int, datetime]] = OrderedDict()


def _now() -> datetime:
    """Return the current time in UTC: the one clock read of airflow-partitions."""
    return datetime.now(UTC)


def _settled(expected: Set[str], counted: int, now: datetime, settle: timedelta) -> bool:
    """Return whether *counted* keys of *expected* have stood unchanged for *settle* (as seen here)."""
    slot = (getattr(expected, "owner", 0), getattr(expected, "downstream_key", ""))
    seen = _last_change.get(slot)
    if seen is None or seen[0] != counted:
        seen = _last_change[slot] = (counted, now)
        if len(_last_change) > _SETTLE_MEMORY:
            _last_change.popitem(last=False)
    _last_change.move_to_end(slot)
    return now - seen[1] >= settle


class CompletionDeadline(ValueEquality, WaitPolicy):
    """
    Fire a rollup when complete or, after its period's end plus *grace*, with what has arrived.

    ``TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()),
    wait_policy=CompletionDeadline(timedelta(hours=2), min_fraction=0.9))`` runs the consumer
    for ``2026-03-10`` as soon as all 24 hours have arrived, or from 2026-03-11T02:00Z on once at
    least 22 of them (90 %, rounded up) have and no new hour has arrived for *settle*. Before the
    deadline, only a complete window fires.

    **Nothing waits forever.** After the deadline a pending run always fires in the end:

    - with at least the minimum, once it has *settled* (no new key for *settle*, 30 s by
      default): a replay of history, whose periods all ended long ago, runs each period once with
      every key that streams in within seconds, not at its minimum;
    - below the minimum (but with at least one key: a run needs something to run on), one more
      *grace* later (at least *settle*): a period whose upstream
      mostly never came, or **late keys** — keys that arrive after their period already ran open
      a new pending run for it, which Airflow cannot tell from a first one. It runs the period
      again (a refresh) with the keys that came late, so the consumer's task can redo the period;
      :func:`missing_upstream_keys` lists what that run lacks.

    The period ends at the latest end among the downstream period and the window's members (the
    day's end for hours of a day; the last day's for a centred sliding window), in UTC. This is
    the only place airflow-partitions reads the clock (``datetime.now(UTC)``): the scheduler
    re-evaluates pending rollups every tick, so a rollup fires within a tick or two of its
    deadline without any new event. The settle time is measured by the scheduler process from the
    first tick that saw the current count (a restarted scheduler waits one settle time more).

    Usable only as the ``wait_policy`` of our rollup mappers (:class:`~airflow_partitions.
    temporal.TemporalRollupMapper`, :class:`~airflow_partitions.composite.DimensionRollupMapper`);
    Airflow's ``RollupMapper`` refuses wait policies it does not ship (the Dag fails to
    serialize: one import error for its file).

    :param grace: How long after the period's end to wait for stragglers (a ``timedelta``, at
        most ten years).
    :param min_count: Fire at the deadline only if at least this many upstream keys arrived
        (below it: one grace later).
    :param min_fraction: Likewise, a fraction (0 < f <= 1) of the expected keys, rounded up. With
        neither, one key is enough; with both, both must hold.
    :param settle: How long a partial period must go without a new key before it fires
        (``timedelta``, 0 to one day; default 30 seconds).
    :raises ValueError: at Dag parse, for a *grace* that is not a non-negative ``timedelta``, a
        *min_count* that is not a positive integer, a *min_fraction* outside (0, 1], or a
        *settle* outside 0 to one day.
    """

    def __init__(
        self,
        grace: timedelta,
        *,
        min_count: int | None = None,
        min_fraction: float | None = None,
        settle: timedelta = DEFAULT_SETTLE,
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
        if not isinstance(settle, timedelta) or not timedelta(0) <= settle <= timedelta(days=1):
            raise ValueError(
                "CompletionDeadline: settle must be a timedelta from 0 to one day such as "
                f"timedelta(seconds=30); got {settle!r}."
            )
        self.grace = grace
        self.min_count = min_count
        self.min_fraction = min_fraction
        self.settle = settle

    def __repr__(self) -> str:
        return (
            f"CompletionDeadline(grace={self.grace!r}, min_count={self.min_count!r}, "
            f"min_fraction={self.min_fraction!r}, settle={self.settle!r})"
        )

    def needed(self, expected: int) -> int:
        """Return how many of *expected* keys must have arrived to fire at the deadline."""
        fraction = math.ceil(self.min_fraction * expected - 1e-9) if self.min_fraction else 0
        return min(expected, max(self.min_count or 1, fraction))

    def is_satisfied(self, matched: int, expected: int) -> bool:
        """Return whether *matched* of *expected* keys complete the window (no deadline known)."""
        return matched >= expected

    def is_unreachable(self, expected: int) -> bool:
        """Return ``False``: after its deadline every pending run fires in the end."""
        return False

    def fires_at(self, closes_at: datetime, counted: int, expected: int) -> datetime:
        """
        Return when a partial period closing at *closes_at* (UTC) with *counted* keys may fire.

        The deadline (*closes_at* plus grace) with at least :meth:`needed` keys, one more grace
        (at least the settle time) later below it; either way also once settled.
        """
        try:
            deadline = closes_at + self.grace
            return deadline if counted >= self.needed(expected) else deadline + max(self.grace, self.settle)
        except OverflowError:
            return _END_OF_TIME  # a period near year 9999: its deadline lies beyond what datetime holds

    def is_satisfied_by_keys(self, *, matched: Set[str], expected: Set[str]) -> PartitionSatisfaction:
        """
        Return satisfied if every expected key arrived, or the period's time to fire has come.

        *expected* is the :class:`ExpectedKeys` our rollups return; a plain set (no closing time)
        is satisfied only when complete. *matched* holds the keys received, in the spelling
        *expected* lists them (our rollups count periods, not spellings).
        """
        counted = len(matched & expected)
        satisfied = counted == len(expected)
        closes_at = getattr(expected, "closes_at", None)
        if not satisfied and counted and closes_at is not None:
            now = _now()
            satisfied = now >= self.fires_at(closes_at, counted, len(expected)) and _settled(
                expected, counted, now, self.settle
            )
        return PartitionSatisfaction(satisfied=satisfied, unreachable=False, unreachable_reason=None)

    def serialize(self) -> dict[str, Any]:
        """Return ``{"format_version", "grace_seconds"[, "min_count", "min_fraction", "settle_seconds"]}``."""
        return dump(
            grace_seconds=self.grace.total_seconds(),
            min_count=self.min_count,
            min_fraction=self.min_fraction,
            settle_seconds=None if self.settle == DEFAULT_SETTLE else self.settle.total_seconds(),
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> CompletionDeadline:
        """Rebuild the policy from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(
            timedelta(seconds=data["grace_seconds"]),
            min_count=data.get("min_count"),
            min_fraction=data.get("min_fraction"),
            settle=timedelta(seconds=data.get("settle_seconds", DEFAULT_SETTLE.total_seconds())),
        )


def __getattr__(name: str) -> Any:
    # 0.1.0 documented missing_upstream_keys in this module; it is a task helper
    # (airflow_partitions.task), and this import of it warns for a deprecation period (CHANGELOG.md).
    if name == "missing_upstream_keys":
        import warnings

        from airflow_partitions import task

        warnings.warn(
            "airflow_partitions.deadlines.missing_upstream_keys moved to airflow_partitions.task (or import "
            "it from airflow_partitions); the old import will be removed in a later release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return task.missing_upstream_keys
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
