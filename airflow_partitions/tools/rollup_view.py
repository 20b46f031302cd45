"""
One reader of a rollup, ours or Airflow's: what a downstream key awaits, which keys count, when it fires.

Every tool that shows a rollup asks it here: ``explain`` (what a period waits for), ``check`` (keys
held but never counted, periods no producer completes), ``status`` and the Partitions view (what a
pending run has counted, what it misses, the keys that will never count and why, when a deadline
fires it). The answers come from the mapper's own methods (``to_upstream``, ``to_downstream``,
our rollups' ``counts_as`` and the wait policy's ``fires_at``), so they are what the scheduler
computes; the counting itself is :func:`airflow_partitions.rollup.counted`, the one the task helper
:func:`~airflow_partitions.task.missing_upstream_keys` uses too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from airflow.partition_mappers.wait_policy import WaitForAll

from airflow_partitions.composite import CompositeKeyMapper
from airflow_partitions.deadlines import CompletionDeadline
from airflow_partitions.grains import Grain
from airflow_partitions.mapping import known_keys
from airflow_partitions.rollup import CountingRollupMapper, configured_policy, counted, rerun_policy_of


@dataclass(frozen=True)
class Progress:
    """
    What the keys received give one downstream key of a rollup.

    ``awaited`` and ``missing`` are upstream keys in the spelling the window lists them, in time
    order (``2026-03-10T00`` …); ``counted`` how many of the awaited keys have arrived in any spelling;
    ``never_counting`` the received keys that count towards no awaited key, each with why.
    ``fires_at`` (UTC) is when a :class:`~airflow_partitions.CompletionDeadline` lets the pending
    run fire with what it has, else ``None``.
    """

    awaited: tuple[str, ...]
    counted: int
    missing: tuple[str, ...]
    never_counting: tuple[tuple[str, str], ...]
    fires_at: datetime | None


@dataclass(frozen=True)
class Wait:
    """
    What one downstream key waits for under its rollup's wait policy (``explain``'s answer).

    ``closes_at`` is the period's end (UTC) and, for a :class:`~airflow_partitions.
    CompletionDeadline`, ``needed`` the keys it needs at the deadline, ``fires_at`` when it fires
    with at least that many and ``fires_at_below_minimum`` with fewer. ``rerun_policy`` is what a
    key for the period does once it ran (``"hold"``, ``"refresh"``, ``"ignore"``: Airflow 3.4's
    ``RerunPolicy``; ``"hold"`` on Airflow 3.3).
    """

    awaited: tuple[str, ...]
    policy: str
    closes_at: datetime | None
    needed: int | None
    fires_at: datetime | None
    fires_at_below_minimum: datetime | None
    rerun_policy: str = "hold"


class RollupView:
    """
    A rollup mapper (ours or Airflow's ``RollupMapper``) as the tools read it.

    ``RollupView.of(mapper)`` is ``None`` for a mapper that is no rollup (one key is enough to run).
    Ours count each key as the member it names (``2026-03-10T00Z`` counts as ``2026-03-10T00``) and
    refuse the others on arrival; Airflow's compare spellings, so a key spelled otherwise is held
    without counting.
    """

    def __init__(self, mapper: Any) -> None:
        self.mapper = mapper
        #: Whether it is one of our rollups (counts members, refuses non-members on arrival).
        self.ours = isinstance(mapper, CountingRollupMapper)
        #: The wait policy as configured (``WaitForAll()``, ``CompletionDeadline(…)``).
        self.policy = configured_policy(mapper)
        #: What a key for a period that already ran does: ``"hold"``, ``"refresh"`` or ``"ignore"``.
        self.rerun_policy = rerun_policy_of(mapper)
        #: Whether a run can fire before every awaited key counted (any policy but ``WaitForAll``).
        self.may_fire_incomplete = not isinstance(self.policy, WaitForAll)
        #: The grain of its periods and its deadline's grace, when a run's creation time can prove
        #: it fired with every key (see :meth:`_deadline`), else ``None``.
        self.deadline = self._deadline()

    def _deadline(self) -> tuple[Grain, timedelta] | None:
        """
        Return the grain of the rollup's periods and its deadline's grace, for proving runs complete.

        A :class:`~airflow_partitions.CompletionDeadline` fires a run without all its keys only
        from its period's end plus the grace on: a run Airflow created before the period's start
        (its ``partition_date``) plus the period's length plus the grace counted every key, and
        needs no reading of what it ran with. ``None`` for other policies (``MinimumCount`` fires
        at any time) and for mappers whose periods are not one grain's.
        """
        if not isinstance(self.policy, CompletionDeadline):
            return None
        grain = period_grain(getattr(self.mapper, "upstream_mapper", None))
        return None if grain is None else (grain, self.policy.grace)

    @classmethod
    def of(cls, mapper: Any) -> RollupView | None:
        """Return the view of *mapper*, or ``None`` if it is not a rollup (``is_rollup`` false)."""
        return cls(mapper) if getattr(mapper, "is_rollup", False) else None

    def awaited(self, downstream_key: str) -> frozenset[str]:
        """
        Return the upstream keys *downstream_key* waits for (``to_upstream``, as the scheduler calls it).

        :raises ValueError: (the mapper's) if *downstream_key* is not a key the rollup writes, its
            window cannot be listed, or its members cannot be known now (a broken Variable, named).
        """
        return known_keys(self.mapper.to_upstream(downstream_key))

    @staticmethod
    def in_order(expected: frozenset[str]) -> tuple[str, ...]:
        """Return *expected* keys in time order (our rollups' window order), else sorted."""
        return getattr(expected, "in_order", None) or tuple(sorted(expected))

    def counts_as(self, key: str) -> tuple[str, ...]:
        """
        Return the members *key* counts as, spelled as awaited (ours: those it names), ``()`` if none.

        Airflow's rollup counts a key only as itself. Ours count a naive local time on a repeated
        hour as both occurrences (``2026-10-25T02`` in Berlin: ``…T02+02:00`` and ``…T02+01:00``).
        """
        if not self.ours:
            return (key,)
        try:
            return tuple(self.mapper.counts_as(key))
        except ValueError:
            return ()

    def never_counts(self, key: str, downstream_key: str) -> str | None:
        """
        Return why *key* will never count towards *downstream_key*, or ``None`` if it counts.

        Ours: the refusal ``to_downstream`` gives (Airflow audit-logs it); Airflow's rollup: ``"not
        one of the awaited keys (compared by spelling)"``: another spelling of a member, or no
        member at all (a Saturday under ``BusinessDayWindow``); the pending run holds it without
        counting it.
        """
        if counted(self.mapper, self.awaited(downstream_key), [key])[0]:
            return None
        if not self.ours:
            return "not one of the awaited keys (compared by spelling)"
        try:
            self.mapper.to_downstream(key)
        except ValueError as err:
            return str(err)
        return f"it counts towards other partitions, not {downstream_key!r}"

    def missing(self, downstream_key: str, received: Iterable[str]) -> tuple[str, ...]:
        """
        Return, sorted, the keys *downstream_key* awaits that none of the *received* keys counts as.

        :raises ValueError: as :meth:`awaited`.
        """
        expected = self.awaited(downstream_key)
        members = counted(self.mapper, expected, received)[0]
        return tuple(key for key in self.in_order(expected) if key not in members)

    def progress(self, downstream_key: str, received: Iterable[str]) -> Progress:
        """
        Return what the *received* keys (as producers spelled them) give *downstream_key*.

        :raises ValueError: as :meth:`awaited`.
        """
        expected = self.awaited(downstream_key)
        members, never = counted(self.mapper, expected, received)
        reasons = tuple((key, self.never_counts(key, downstream_key) or "") for key in never)
        awaited = self.in_order(expected)
        return Progress(
            awaited=awaited,
            counted=len(members),
            missing=tuple(key for key in awaited if key not in members),
            never_counting=reasons,
            fires_at=self.fires_at(expected, len(members)),
        )

    def fires_at(self, expected: frozenset[str], counted_keys: int) -> datetime | None:
        """Return when a deadline fires a period with *counted_keys* of *expected* (UTC), else ``None``."""
        closes_at = getattr(expected, "closes_at", None)
        if not isinstance(self.policy, CompletionDeadline) or closes_at is None:
            return None
        return self.policy.fires_at(closes_at, counted_keys, len(expected))

    def wait(self, downstream_key: str) -> Wait:
        """
        Return what *downstream_key* waits for and when it fires (``explain --downstream``).

        :raises ValueError: as :meth:`awaited`.
        """
        expected = self.awaited(downstream_key)
        closes_at = getattr(expected, "closes_at", None)
        deadline = self.policy if isinstance(self.policy, CompletionDeadline) else None
        needed = deadline.needed(len(expected)) if deadline and closes_at else None
        return Wait(
            awaited=self.in_order(expected),
            policy=repr(self.policy),
            closes_at=closes_at,
            needed=needed,
            fires_at=self.fires_at(expected, needed) if needed is not None else None,
            fires_at_below_minimum=self.fires_at(expected, 0) if needed is not None else None,
            rerun_policy=self.rerun_policy,
        )


def period_grain(mapper: Any) -> Grain | None:
    """
    Return the grain of the periods whose start Airflow stamps on a run as its ``partition_date``.

    A :class:`~airflow_partitions.TemporalMapper`'s; of a :class:`~airflow_partitions.
    CompositeKeyMapper`, its one temporal output dimension's (as ``to_partition_date`` picks it).
    """
    grain = getattr(mapper, "grain", None)
    if isinstance(grain, Grain):
        return grain
    if isinstance(mapper, CompositeKeyMapper):
        grains = [g for name in mapper.output if (g := period_grain(mapper.mappers.get(name))) is not None]
        return grains[0] if len(grains) == 1 else None
    return None
