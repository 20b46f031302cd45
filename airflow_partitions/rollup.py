"""
The rollup base: Airflow's ``RollupMapper`` counting members, not spellings; refusing keys that never count.

:class:`CountingRollupMapper` is the base of our rollups (:class:`~airflow_partitions.temporal.
TemporalRollupMapper`, :class:`~airflow_partitions.composite.DimensionRollupMapper`). A key's way
through the scheduler reads top to bottom: ``to_downstream`` asks the rollup's
:class:`~airflow_partitions.windowing.Windowing` where the key goes and refuses it unless each
window it is routed to counts it; ``to_upstream`` asks it what a window awaits (memoized here);
the scheduler hands the keys received to :class:`CountingPolicy`, which reads each as the member it
counts as (the windowing's ``counts_as``) before the configured wait policy decides. The
subclasses only build their windowing and check their configuration at Dag parse; nothing in this
module calls back into them. :func:`counted` does the same reading for any rollup, ours or
Airflow's, for tasks and tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from airflow.partition_mappers.base import PartitionMapper, RollupMapper
from airflow.partition_mappers.wait_policy import PartitionSatisfaction, WaitForAll, WaitPolicy

from airflow_partitions.deadlines import CompletionDeadline
from airflow_partitions.grains.grain import Period
from airflow_partitions.grains.keys import FIRST_YEAR, LAST_YEAR, OutsideCalendar, refusal, shown
from airflow_partitions.grains.stored import ValueEquality, dump, load, rebuilt_once
from airflow_partitions.grains.zones import naive
from airflow_partitions.lateness import as_expected_within, from_stored, stored_seconds
from airflow_partitions.mapping import known_keys
from airflow_partitions.windowing import Awaited, Windowing, awaited_among, period_ends, spelled_range

try:  # Airflow 3.4: the scheduler applies a rollup's rerun policy (apache/airflow PR #68778)
    from airflow.partition_mappers.rerun_policy import (  # type: ignore[import-not-found,unused-ignore]
        RerunPolicy as _CoreRerunPolicy,
    )
except ImportError:  # Airflow 3.3: every key for a period that ran opens a pending run (HOLD)
    _CoreRerunPolicy = None

#: What a rollup does with a key for a period that already ran (Airflow 3.4's ``RerunPolicy``):
#: ``"hold"`` opens a pending run that waits for the whole period again (the only behaviour of
#: Airflow 3.3), ``"refresh"`` fires a run at once with the keys that came again, ``"ignore"``
#: drops the event.
RERUN_POLICIES = ("hold", "refresh", "ignore")


def rerun_policy_of(rollup: Any) -> str:
    """Return the rerun policy of a rollup, ours or Airflow's, by name: ``"hold"`` where it has none (3.3)."""
    value = getattr(rollup, "rerun_policy", None)
    return "hold" if value is None else str(getattr(value, "value", value))


def as_rerun_policy(owner: str, value: Any) -> Any:
    """
    Return *value* as the rerun policy a rollup keeps: Airflow 3.4's ``RerunPolicy`` member, else ``"hold"``.

    *value* is ``None`` (HOLD), a ``RerunPolicy`` member (``airflow.sdk.RerunPolicy.REFRESH``,
    core's) or its value as a string (``"hold"``, ``"refresh"``, ``"ignore"``). Airflow 3.4's
    scheduler compares the rollup's ``rerun_policy`` with its own members by identity, so on 3.4
    the member of ``airflow.partition_mappers.rerun_policy.RerunPolicy`` is returned; on 3.3 only
    HOLD exists, kept as the string ``"hold"`` (equal to the member: ``RerunPolicy`` is a ``str``
    enum).

    :raises ValueError: at Dag parse, naming *owner*, for any other value; and on Airflow 3.3 for
        ``"refresh"`` or ``"ignore"``, which only Airflow 3.4's scheduler applies, naming what to
        use on 3.3 (``airflow-partitions discard``, a ``CompletionDeadline``).
    """
    name = "hold" if value is None else getattr(value, "value", value)
    if not isinstance(name, str) or name not in RERUN_POLICIES:
        raise ValueError(
            f"{owner}: rerun_policy must be one of {', '.join(map(repr, RERUN_POLICIES))} or a RerunPolicy "
            f"member (what a key for a period that already ran does); got {value!r}."
        )
    if _CoreRerunPolicy is not None:
        return _CoreRerunPolicy(name)
    if name != "hold":
        import airflow

        raise ValueError(
            f"{owner}: rerun_policy={name!r} needs Airflow 3.4 or later, whose scheduler applies it; this is "
            f"Airflow {airflow.__version__}, which holds every key for a period that already ran in a new "
            "pending run (HOLD). On it, remove such pending runs with `airflow-partitions discard DAG_ID`, "
            "or let a CompletionDeadline fire them with the keys that came again (as REFRESH would)."
        )
    return name


class OnlyOurRollup:
    """
    The ``expected_decoded_type`` of a window only our rollup takes: Airflow's refuses it, naming ours.

    Airflow's ``RollupMapper`` (core's and ``airflow.sdk``'s) reads ``window.expected_decoded_type``
    at Dag parse to check the pairing. On an instance of our ``TemporalWindow``, ``SlidingWindow``
    or ``DimensionWindow`` that read raises ``TypeError`` naming the rollup to use, so
    ``RollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))`` fails
    with our message, not one about types: core's rollup compares keys by spelling, so it could
    neither count another spelling of a member nor refuse a key that never counts, and it routes a
    key to one window only (a sliding window there never fires). Read on the class, it is the type
    the window's periods decode to, for our own checks. Airflow's ``FanOutMapper`` never reads it.
    (``BusinessDayWindow`` declares ``datetime`` instead: Airflow's docs pair it with core's
    ``RollupMapper``.)
    """

    def __init__(self, decoded: type, rollup: str) -> None:
        self.decoded = decoded
        self.rollup = rollup

    def __get__(self, instance: object, owner: type) -> type:
        if instance is None:
            return self.decoded
        window = owner.__name__
        raise TypeError(
            f"{window} works in airflow_partitions' {self.rollup}, not in Airflow's RollupMapper, which "
            "compares keys by spelling (it would hold keys it never counts) and routes each key to one "
            f"window only: use {self.rollup}(upstream_mapper=..., window={window}(...)). Airflow's "
            "FanOutMapper takes it."
        )


#: Expected key sets kept by the memo: the scheduler evaluates at most 500 pending rollups a tick,
#: and a set holds up to a window's keys (1,440 minutes of a day: about 130 KB).
_CACHE_SIZE = 2048


@lru_cache(maxsize=_CACHE_SIZE)
def _expected(rollup: CountingRollupMapper, downstream_key: str, read: Any) -> Awaited:
    # Keyed by the rollup (its stored form), which names it in a deadline's memory too.
    return rollup.windowing.expected(downstream_key, read, hash(rollup))


#: The most upstream keys one rollup period may await unless the rollup's ``max_upstream_keys``
#: says otherwise: a leap year of hours (8,784) and a 31-day month of minutes (44,640) fit.
DEFAULT_MAX_UPSTREAM_KEYS = 50_000

#: Keys whose awaited spelling is memoized: a tick re-reads every received key of up to 500
#: pending runs (500 days of 24 hours is 12,000), and an LRU smaller than that misses every time.
_MEMBER_CACHE_SIZE = 65536


@lru_cache(maxsize=_MEMBER_CACHE_SIZE)
def _counts_as(windowing: Windowing, key: str, read: Any) -> tuple[tuple[str, ...], ValueError | None]:
    try:
        return windowing.counts_as(key), None
    except ValueError as err:
        return (), err


def _wall_clock(member: Any) -> Any:
    """Return a decoded member, each period as its local wall-clock start (a repeated hour's alike)."""
    if isinstance(member, Period):
        return naive(member.start)
    if isinstance(member, dict):
        return tuple(sorted((name, _wall_clock(value)) for name, value in member.items()))
    return member


def _listed_edges(rollup: CountingRollupMapper, downstream: str) -> list[str]:
    """Return the first and last three keys *downstream* awaits, listing them (checked distinct)."""
    decoded = rollup.windowing.members(rollup.upstream_mapper.decode_downstream(downstream))
    # Members at distinct local wall-clock times need distinct keys; the two occurrences of a
    # repeated hour may share one (a naive input_format): such a key counts for both.
    walls = len({_wall_clock(member) for member in decoded})
    members = sorted(rollup.to_upstream(downstream))
    if len(members) < walls:
        raise ValueError(
            f"{type(rollup).__name__}: the run for {downstream!r} waits for {walls} members, but its "
            f"upstream mapper writes them as {len(members)} distinct keys (such as {members[0]!r}), so "
            "it would fire on too few; give the mapper an input_format that names each member, or none."
        )
    return members[:3] + members[-3:]


@lru_cache(maxsize=256)
def _checked_routes(rollup: CountingRollupMapper, samples: tuple[str, ...], hint: str) -> None:
    for downstream in samples:
        edges = rollup.windowing.edge_keys(downstream)
        for key in _listed_edges(rollup, downstream) if edges is None else edges:
            try:
                mapped = rollup.to_downstream(key)
            except ValueError as err:
                mapped = f"an error ({err})"
            if downstream not in ([mapped] if isinstance(mapped, str) else mapped):
                raise ValueError(
                    f"{type(rollup).__name__}: the run for {downstream!r} would wait forever: it waits for "
                    f"{key!r}, which maps to {mapped!r}; {hint}."
                )


class CountingPolicy(WaitPolicy):
    """
    What our rollups hand the scheduler as ``wait_policy``: theirs, over the keys that count.

    Airflow passes a wait policy every key received for a pending run, as producers spelled them,
    and the keys the window lists. This adapter first reads each received key as the member it
    names (``2026-03-10T00:00:00Z`` counts as ``2026-03-10T00``), then asks the configured policy
    (``WaitForAll``, ``MinimumCount`` or :class:`CompletionDeadline`). A pending run that holds
    a key which can never count, and is not satisfied, is reported ``unreachable`` with a reason
    naming the downstream key, the key and the spelling awaited: the scheduler logs it once, as a
    warning naming the Dag. Equal to the configured policy; never serialized (the rollup writes
    the configured one).
    """

    def __init__(self, rollup: CountingRollupMapper) -> None:
        self.rollup = rollup
        self.policy = rollup.policy

    def __repr__(self) -> str:
        return repr(self.policy)

    def __eq__(self, other: object) -> bool:
        return self.policy == (other.policy if isinstance(other, CountingPolicy) else other)

    def __hash__(self) -> int:
        return hash(self.policy)

    def is_satisfied_by_keys(self, *, matched: Set[str], expected: Set[str]) -> PartitionSatisfaction:
        """
        Return the configured policy's answer for the received keys that count, as members.

        A window whose members cannot be known now (:attr:`ExpectedKeys.problem`: a broken
        Variable) or that awaits no key at all (its group left the members) never fires: Airflow's
        policies call an empty window satisfied, and a run would start holding whatever keys its
        pending run had. It is ``unreachable``, which the scheduler logs once, not per loop.
        """
        problem = getattr(expected, "problem", "")
        if problem or not expected:
            downstream_key = getattr(expected, "downstream_key", "?")
            return PartitionSatisfaction(
                satisfied=False,
                unreachable=True,
                unreachable_reason=f"the pending run for partition key {downstream_key!r} waits: "
                + (problem or "its window awaits no keys (its group is no longer among the members)"),
            )
        counted, never = self.rollup.count(expected, matched)
        result = self.policy.is_satisfied_by_keys(matched=counted, expected=expected)
        if result.satisfied or result.unreachable or not never:
            return result
        return PartitionSatisfaction(
            satisfied=False,
            unreachable=True,
            unreachable_reason=(
                f"the pending run for partition key {getattr(expected, 'downstream_key', '?')!r} holds "
                f"{len(never)} key(s) it will never count ({', '.join(shown(k) for k in never[:3])}); "
                f"it counts {len(counted)} of {len(expected)} keys spelled like {spelled_range(expected)}"
            ),
        )


class CountingRollupMapper(ValueEquality, RollupMapper):
    """
    Airflow's ``RollupMapper`` counting periods, not spellings, and refusing keys that never count.

    The base of our rollup mappers; not registered, not used directly. Adds to core's:

    - **every key counted or refused**: :meth:`to_downstream` refuses (``ValueError``, which
      Airflow audit-logs as ``failed to map partition_key``) a key that is not a member of the
      window it is routed to (a Saturday for a business-day window, a date for a window of hours);
      the scheduler sees the :class:`CountingPolicy`, which counts each received key as the member
      it names (``2026-03-10T00:00:00``, ``…T00Z``, ``…T00+00:00`` and ``20260310T00`` all count
      as ``2026-03-10T00``, once);
    - ``wait_policy`` may be a :class:`CompletionDeadline` (serialized by this class, under
      ``completion_deadline``, since core serialization refuses wait policies it does not ship);
    - :meth:`to_upstream` returns :class:`ExpectedKeys` (the keys, the period's closing time, the
      downstream key), memoized process-wide by the rollup's serialized form: the scheduler
      deserializes Dags every tick, and an equal, new rollup hits the same entries;
    - :meth:`missing_keys`, for tasks and tools;
    - ``expected_within``: when each partition is late without a successful run, after its
      period's end (:meth:`late_at`, :mod:`airflow_partitions.lateness`).

    Subclasses build the :class:`~airflow_partitions.windowing.Windowing` it asks where a key goes
    and what a period awaits, and check their configuration at Dag parse.

    :raises ValueError: at Dag parse, as the subclass documents.
    """

    def __init__(
        self,
        *,
        upstream_mapper: PartitionMapper,
        window: Any,
        windowing: Windowing,
        wait_policy: WaitPolicy | None = None,
        max_downstream_keys: int | None = None,
        max_upstream_keys: int | None = None,
        rerun_policy: Any = None,
        expected_within: timedelta | None = None,
    ) -> None:
        # Not RollupMapper.__init__: its check that the mapper decodes to the window's declared
        # type is one our subclasses make themselves (our windows declare types that only our
        # rollups accept, so that Airflow's RollupMapper refuses them at parse).
        PartitionMapper.__init__(self, max_downstream_keys=max_downstream_keys)
        if max_upstream_keys is not None and (type(max_upstream_keys) is not int or max_upstream_keys < 1):
            raise ValueError(
                f"{type(self).__name__}: max_upstream_keys must be a positive integer or None; "
                f"got {max_upstream_keys!r}."
            )
        #: The most upstream keys one period may await (``None``: :data:`DEFAULT_MAX_UPSTREAM_KEYS`).
        self.max_upstream_keys = max_upstream_keys
        self.upstream_mapper = upstream_mapper
        self.window = window
        #: What it asks of its window: where a key goes, what a period awaits, what a key names.
        self.windowing = windowing
        #: The wait policy as configured (and serialized); the scheduler sees :attr:`wait_policy`.
        self.policy = WaitForAll() if wait_policy is None else wait_policy
        #: What a key for a period that already ran does (:func:`as_rerun_policy`); Airflow 3.4's
        #: scheduler reads it, Airflow 3.3's holds (``"hold"``).
        self.rerun_policy = as_rerun_policy(type(self).__name__, rerun_policy)
        #: How long after its period's end a partition is expected to have run (``None``: no
        #: expectation; :meth:`late_at`).
        self.expected_within = as_expected_within(type(self).__name__, expected_within)

    @property
    def wait_policy(self) -> CountingPolicy:  # type: ignore[override]  # core sets it; the scheduler reads it
        """The configured policy over the keys that count (:class:`CountingPolicy`)."""
        return CountingPolicy(self)

    def _check_size(self, largest: int, widest: str) -> None:
        """
        Refuse, at Dag parse, a rollup one of whose periods awaits more upstream keys than its cap.

        The tools list a pending run's awaited keys to show what it misses, and the scheduler lists
        them on every loop for windows not counted out (those of grains other than minutes or hours
        of one length: :class:`ExpectedSlots`), so a year of such keys costs seconds and megabytes
        per pending run. The cap is
        *max_upstream_keys*, by default :data:`DEFAULT_MAX_UPSTREAM_KEYS` (50,000: a leap year of
        hours, 8,784, and a 31-day month of minutes, 44,640, fit).

        :param largest: The most keys one period awaits; *widest*: such a period, for the message.
        :raises ValueError: naming the rollup, the count, the cap and the ways out.
        """
        cap = DEFAULT_MAX_UPSTREAM_KEYS if self.max_upstream_keys is None else self.max_upstream_keys
        if largest > cap:
            source = "the default" if self.max_upstream_keys is None else "max_upstream_keys"
            raise ValueError(
                f"{type(self).__name__}: {widest} would wait for {largest:,} upstream keys, more than "
                f"{source} of {cap:,} keys one period may await (the tools list them for each pending run, "
                "and so may the scheduler's loop). Roll up in steps, such as minutes into hours with one "
                f"rollup and hours into the year with another, or pass max_upstream_keys={largest} or more."
            )

    def _check_routes(self, samples: tuple[str, ...], hint: str) -> None:
        """
        Refuse, at Dag parse, a rollup that would wait forever for one of the *samples* keys.

        Airflow routes each key producers send by ``to_downstream``: unless every awaited key
        ``u`` of ``D`` has ``D in to_downstream(u)``, the run for ``D`` never fires (naive UTC hour
        keys read in New York time; a kept dimension whose mapper does not map its own output to
        itself). Checks the first and last three awaited keys of each sample, once per
        configuration and process (the scheduler rebuilds rollups every tick; a failure is not
        memoized).

        :raises ValueError: naming the sample, the awaited key, where it goes instead, and *hint*;
            or the window's own error for a sample it cannot expand (grains that do not nest).
        """
        _checked_routes(self, samples, hint)

    @property
    def sliding(self) -> bool:
        """Whether one key feeds several windows of the same members (a sliding window)."""
        return self.windowing.sliding

    def members_read(self) -> Any:
        """Return what the members were read from now (:meth:`.windowing.Windowing.read`)."""
        return self.windowing.read()

    def route(self, key: str) -> list[str]:
        """Return the downstream keys *key* is routed to, before the check that each counts it."""
        return self.windowing.route(key)

    def counts_as(self, key: str) -> tuple[str, ...]:
        """
        Return the members *key* counts as, spelled as the window lists them.

        One member, or two for a naive local time on the hour fall-back repeats.

        :raises ValueError: saying why, if *key* names no member.
        """
        return self.windowing.counts_as(key)

    def to_downstream(self, key: str) -> str | list[str]:
        """
        Return the downstream key(s) of *key*, having checked that each run will count it.

        :raises ValueError: naming the key, if the upstream mapper cannot read it, or it is not a
            member of the window of a downstream key it maps to (the message names the downstream
            key and the spelling awaited). Airflow audit-logs it; other keys keep flowing.
        """
        windowing = self.windowing
        routed = windowing.route(key)
        checked = routed
        if windowing.sliding:
            # A sliding window's routes all hold the key's period (u in to_upstream(D) <=> D in
            # to_downstream(u)), and the first and the last reach furthest either way: checking
            # them spares up to 998 windows per key. Near the ends of the calendar some windows
            # await keys no producer can send (years outside 0003 to 9997), and none opens
            # before the window's start: a key feeds only the windows that can complete, and is
            # refused if none can.
            edges = routed[:1] + routed[1:][-1:]
            if not all(self._completable(downstream) for downstream in edges):
                routed = [downstream for downstream in routed if self._completable(downstream)]
                if not routed:
                    raise windowing.feeds_none(key)
            checked = routed[:1] + routed[1:][-1:]
        for downstream in checked:
            if windowing.awaits(downstream, key):
                continue
            try:
                expected = known_keys(self.to_upstream(downstream))
            except ValueError as err:  # the scheduler would meet it on every loop: refuse now
                why = str(err).removeprefix(f"partition key {shown(downstream)}: ")
                raise ValueError(f"partition key {shown(key)} maps to {downstream!r}: {why}") from None
            if expected.unreadable:
                raise ValueError(
                    f"partition key {shown(key)} would never complete {downstream!r}: its window awaits "
                    f"{expected.unreadable!r}, and keys are read only from the years {FIRST_YEAR:04d} to "
                    f"{LAST_YEAR}."
                )
            if key in expected:
                continue  # spelled as awaited: the common case, no second reading
            members, error = _counts_as(windowing, key, windowing.read())
            if not any(member in expected for member in members):
                why = str(error or "")
                # A key read as members outside every window, or naming a day its calendar leaves
                # out (a Saturday into a business-day month), is the rule at work, not a mistake.
                raise refusal(
                    OutsideCalendar() if members else error,
                    f"partition key {shown(key)} would never count towards {downstream!r}: "
                    + (
                        why.removeprefix(f"partition key {shown(key)}: ").rstrip(".")
                        or f"it is read as {' and '.join(map(repr, members))}, which is not one of the keys "
                        "the window awaits"
                    )
                    + (f" (it awaits {len(expected)} keys: {spelled_range(expected)})." if expected else "."),
                )
        return routed[0] if len(routed) == 1 and not windowing.sliding else routed

    def _completable(self, downstream_key: str) -> bool:
        """Whether the window of *downstream_key* can be listed and awaits only keys read on arrival."""
        try:
            return not self.to_upstream(downstream_key).unreadable
        except ValueError:  # it reaches past year 1 or 9999
            return False

    def count(self, expected: Set[str], received: Iterable[str]) -> tuple[set[str], list[str]]:
        """Return the members of *expected* that *received* keys name, and (sorted) those naming none."""
        keys = received if isinstance(received, set) else set(received)
        # The keys spelled as awaited, the common case, in one pass over them: a tick counts every
        # received key of 500 pending runs (up to 525,600 for a year of minutes).
        counted = awaited_among(expected, keys)
        never: list[str] = []
        windowing = self.windowing
        read = windowing.read()
        for key in keys - counted if len(counted) < len(keys) else ():
            named = False  # no list per key
            for member in _counts_as(windowing, key, read)[0]:
                if member in expected:
                    counted.add(member)
                    named = True
            if not named:
                never.append(key)
        return counted, sorted(never)

    # Airflow's RollupMapper says frozenset; its scheduler only hands the value to our wait policy,
    # and ExpectedSlots answers as a frozenset of its keys (ExpectedSlots' docstring).
    def to_upstream(self, downstream_key: str) -> Awaited:  # type: ignore[override]
        """Return the upstream keys *downstream_key* waits for, with its closing time (memoized)."""
        return _expected(self, downstream_key, self.windowing.read())

    def missing_keys(self, downstream_key: str, received: Iterable[str]) -> list[str]:
        """
        Return, sorted, the upstream keys of *downstream_key* that no key in *received* names.

        ``missing_keys("2026-03-10", ["2026-03-10T00", "2026-03-10T01:00:00Z", …])`` lists the hours
        that never came, in the spelling the window lists them.

        :raises ValueError: if *downstream_key* is not a key this rollup writes.
        """
        expected = known_keys(self.to_upstream(downstream_key))
        return sorted(expected - self.count(expected, received)[0])

    def period_end(self, downstream_key: str) -> datetime | None:
        """
        Return when the period of *downstream_key* ends (UTC), as a :class:`CompletionDeadline` reads it.

        The latest end among the downstream period and its window's members (:attr:`ExpectedKeys.
        closes_at`): the day's end (its local midnight) for hours of a day, a trading session's
        close, a fiscal month's last day's end; a centred sliding window's last member's end. Under
        a mapper with an *offset*, the period whose keys the run waits for (T-1: the next day). Only
        a sliding window is listed for it; other windows' members lie within the period, whose end
        is read from the key alone. ``None`` for keys that carry no time.

        :raises ValueError: if *downstream_key* is not a key this rollup writes (a holiday under a
            business-day rollup, a day without a session: such days are never partitions).
        """
        if self.windowing.sliding:
            return self.to_upstream(downstream_key).closes_at
        return max(period_ends((self.upstream_mapper.decode_downstream(downstream_key),)), default=None)

    def late_at(self, downstream_key: str) -> datetime | None:
        """
        Return when the partition *downstream_key* is late without a successful run (UTC), or ``None``.

        Its period's end (:meth:`period_end`) plus *expected_within*: with ``expected_within=
        timedelta(hours=2)`` a UTC day ``2026-03-10`` of hours is late from
        ``2026-03-11T02:00:00+00:00``; a New York Stock Exchange session ``2026-11-27`` (an early
        close, 13:00 local time) from 20:00Z. ``None`` without *expected_within*.

        :raises ValueError: if *downstream_key* is not a key this rollup writes: days that are not
            periods of the calendar (holidays, days without a session) are never late.
        """
        if self.expected_within is None:
            return None
        end = self.period_end(downstream_key)
        return None if end is None else end + self.expected_within

    def serialize(self) -> dict[str, Any]:
        """Return core's ``RollupMapper`` form, with a :class:`CompletionDeadline` under its own name."""
        from airflow.serialization.encoders import encode_partition_mapper, encode_wait_policy, encode_window

        deadline = isinstance(self.policy, CompletionDeadline)
        return dump(
            upstream_mapper=encode_partition_mapper(self.upstream_mapper),
            window=encode_window(self.window),
            wait_policy=None if deadline else encode_wait_policy(self.policy),
            completion_deadline=self.policy.serialize() if deadline else None,
            max_downstream_keys=self.max_downstream_keys,
            max_upstream_keys=self.max_upstream_keys,
            # Airflow 3.4's place for it: a top-level key, left out under HOLD (the form of every
            # rollup before it), which 3.4's rollup fingerprint leaves out.
            rerun_policy=None if self.rerun_policy == "hold" else str(self.rerun_policy.value),
            # Left out when unset: the stored form of every rollup before it.
            expected_within_seconds=stored_seconds(self.expected_within),
        )

    @classmethod
    @rebuilt_once
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        """Rebuild the rollup from :meth:`serialize`'s output (once per stored form: :func:`rebuilt_once`)."""
        from airflow.serialization.decoders import decode_partition_mapper, decode_wait_policy, decode_window

        data = load(data, cls)
        if "completion_deadline" in data:
            policy: WaitPolicy = CompletionDeadline.deserialize(data["completion_deadline"])
        else:
            policy = decode_wait_policy(data["wait_policy"])
        return cls(  # type: ignore[call-arg]  # a subclass: it builds its windowing itself
            upstream_mapper=decode_partition_mapper(data["upstream_mapper"]),
            window=decode_window(data["window"]),
            wait_policy=policy,
            max_downstream_keys=data.get("max_downstream_keys"),
            max_upstream_keys=data.get("max_upstream_keys"),
            rerun_policy=data.get("rerun_policy"),
            expected_within=from_stored(data.get("expected_within_seconds")),
        )


def configured_policy(rollup: Any) -> WaitPolicy:
    """
    Return a rollup's wait policy as configured (``WaitForAll()``, ``CompletionDeadline(…)``).

    Ours keep it in ``policy`` (the scheduler sees a :class:`CountingPolicy` over it); Airflow's
    ``RollupMapper`` in ``wait_policy``.
    """
    return rollup.policy if isinstance(rollup, CountingRollupMapper) else rollup.wait_policy


def counted(rollup: Any, expected: Set[str], received: Iterable[str]) -> tuple[set[str], list[str]]:
    """
    Return the members of *expected* the *received* keys count as, and (sorted) those counting for none.

    Our rollups read each key as the member it names (``2026-03-10T00Z`` counts as
    ``2026-03-10T00``); Airflow's ``RollupMapper`` compares spellings.
    """
    if isinstance(rollup, CountingRollupMapper):
        return rollup.count(expected, received)
    keys = set(received)
    return keys & expected, sorted(keys - expected)
