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
from collections import OrderedDict
from collections.abc import Iterable, Set
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from airflow.partition_mappers.base import PartitionMapper, RollupMapper
from airflow.partition_mappers.wait_policy import PartitionSatisfaction, WaitForAll, WaitPolicy

from airflow_partitions._common import ValueEquality, as_core, dump, load, rebuilt_once, shown
from airflow_partitions.grains import FIRST_YEAR, LAST_YEAR, Period


class UseTemporalRollupMapper(Period):
    """
    The decoded type our temporal windows declare, so that only our rollups accept them.

    Never instantiated. Airflow's ``RollupMapper`` checks at Dag parse that its mapper decodes to
    the type its window declares; no mapper decodes to this one, so ``RollupMapper(upstream_mapper=
    TemporalMapper(Day()), window=TemporalWindow(Hour()))`` (or ``StartOfMonthMapper`` with a
    ``BusinessDayWindow``, or any ``SlidingWindow``) raises ``TypeError`` naming it. Core's rollup
    compares keys by spelling and cannot refuse a key that will never count, so a rollup over our
    windows is :class:`~airflow_partitions.temporal.TemporalRollupMapper`, which counts periods
    and refuses non-members on arrival. Fan-outs (Airflow's ``FanOutMapper``) still take them.
    """


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
    #: The downstream key these keys roll up into (``2026-03-10``).
    downstream_key: str
    #: The rollup's hash (of its serialized form), naming it in the settle-time memory.
    owner: int
    #: A member key that no key read on arrival can name (a period starting outside the years
    #: 0003 to 9997), or ``""``: a window awaiting it could never complete.
    unreadable: str

    def __new__(
        cls,
        keys: Iterable[str],
        closes_at: datetime | None,
        downstream_key: str = "",
        owner: int = 0,
        unreadable: str = "",
    ) -> ExpectedKeys:
        """Build the set of *keys* of *downstream_key* closing at *closes_at* (UTC)."""
        made = super().__new__(cls, keys)
        made.closes_at = closes_at
        made.downstream_key = downstream_key
        made.owner = owner
        made.unreadable = unreadable
        return made


def _periods(decoded: Any) -> list[Period]:
    """Return the periods in a decoded key (a Period, or a dict of dimensions)."""
    if isinstance(decoded, Period):
        return [decoded]
    if isinstance(decoded, dict):
        return [value for value in decoded.values() if isinstance(value, Period)]
    return []


def _unreadable(encode: Any, members: list[Any]) -> str:
    """Return the key of the first member with a period starting outside the years keys are read in."""
    for member in members:
        if any(not FIRST_YEAR <= p.start.year <= LAST_YEAR for p in _periods(member)):
            return encode(member)
    return ""


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


#: Expected key sets kept by the memo: the scheduler evaluates at most 500 pending rollups a tick,
#: and a set holds up to a window's keys (1,440 minutes of a day: about 130 KB).
_CACHE_SIZE = 2048


@lru_cache(maxsize=_CACHE_SIZE)
def _expected(rollup: PolicyRollupMapper, downstream_key: str) -> ExpectedKeys:
    mapper = rollup.upstream_mapper
    decoded = mapper.decode_downstream(downstream_key)
    try:
        members = list(rollup.window.to_upstream(decoded))
    except (OverflowError, ValueError):  # datetime's "year 10000 is out of range"
        raise ValueError(
            f"partition key {shown(downstream_key)}: its window reaches past year 1 or 9999, and keys are "
            f"read only from the years {FIRST_YEAR:04d} to {LAST_YEAR}."
        ) from None
    ends = [period.utc[1] for item in (decoded, *members) for period in _periods(item)]
    # Only a window ending near year 3 or 9997 can hold a member starting outside them (no member
    # is longer than a retail year): scan its members then, not on every first build (10 % of it).
    closes_at = max(ends, default=None)
    near_the_ends = closes_at is not None and (
        min(ends).year <= FIRST_YEAR + 2 or closes_at.year >= LAST_YEAR - 1
    )
    return ExpectedKeys(
        (mapper.encode_upstream(m) for m in members),
        closes_at=closes_at,
        downstream_key=downstream_key,
        owner=hash(rollup),
        unreadable=_unreadable(mapper.encode_upstream, members) if near_the_ends else "",
    )


#: Keys whose awaited spelling is memoized: a tick re-reads every received key of up to 500
#: pending runs (500 days of 24 hours is 12,000), and an LRU smaller than that misses every time.
_MEMBER_CACHE_SIZE = 65536


@lru_cache(maxsize=_MEMBER_CACHE_SIZE)
def _member_or_error(rollup: PolicyRollupMapper, key: str) -> tuple[str | None, str]:
    try:
        return rollup.member_key(key), ""
    except ValueError as err:
        return None, str(err)


@lru_cache(maxsize=256)
def _checked_routes(rollup: PolicyRollupMapper, samples: tuple[str, ...], hint: str) -> None:
    for downstream in samples:
        periods = len(list(rollup.window.to_upstream(rollup.upstream_mapper.decode_downstream(downstream))))
        members = sorted(rollup.to_upstream(downstream))
        if len(members) != periods:
            raise ValueError(
                f"{type(rollup).__name__}: the run for {downstream!r} waits for {periods} members, but its "
                f"upstream mapper writes them as {len(members)} distinct keys (such as {members[0]!r}), so "
                "it would fire on too few; give the mapper an input_format that names each member, or none."
            )
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


class CountedPolicy(WaitPolicy):
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

    def __init__(self, rollup: PolicyRollupMapper) -> None:
        self.rollup = rollup
        self.policy = rollup.policy

    def __repr__(self) -> str:
        return repr(self.policy)

    def __eq__(self, other: object) -> bool:
        return self.policy == (other.policy if isinstance(other, CountedPolicy) else other)

    def __hash__(self) -> int:
        return hash(self.policy)

    def is_satisfied_by_keys(self, *, matched: Set[str], expected: Set[str]) -> PartitionSatisfaction:
        """Return the configured policy's answer for the received keys that count, as members."""
        counted, never = self.rollup.sort_received(expected, matched)
        result = self.policy.is_satisfied_by_keys(matched=counted, expected=expected)
        if result.satisfied or result.unreachable or not never:
            return result
        awaited = sorted(expected)
        return PartitionSatisfaction(
            satisfied=False,
            unreachable=True,
            unreachable_reason=(
                f"the pending run for partition key {getattr(expected, 'downstream_key', '?')!r} holds "
                f"{len(never)} key(s) it will never count ({', '.join(shown(k) for k in never[:3])}); "
                f"it counts {len(counted)} of {len(expected)} keys spelled like {awaited[0]!r} … "
                f"{awaited[-1]!r}"
                if awaited
                else "its window is empty"
            ),
        )


class PolicyRollupMapper(ValueEquality, RollupMapper):
    """
    Airflow's ``RollupMapper`` counting periods, not spellings, and refusing keys that never count.

    The base of our rollup mappers; not registered, not used directly. Adds to core's:

    - **every key counted or refused**: :meth:`to_downstream` refuses (``ValueError``, which
      Airflow audit-logs as ``failed to map partition_key``) a key that is not a member of the
      window it is routed to (a Saturday for a business-day window, a date for a window of hours);
      the scheduler sees the :class:`CountedPolicy`, which counts each received key as the member
      it names (``2026-03-10T00:00:00``, ``…T00Z``, ``…T00+00:00`` and ``20260310T00`` all count
      as ``2026-03-10T00``, once);
    - ``wait_policy`` may be a :class:`CompletionDeadline` (serialized by this class, under
      ``completion_deadline``, since core serialization refuses wait policies it does not ship);
    - :meth:`to_upstream` returns :class:`ExpectedKeys` (the keys, the period's closing time, the
      downstream key), memoized process-wide by the rollup's serialized form: the scheduler
      deserializes Dags every tick, and an equal, new rollup hits the same entries;
    - :meth:`missing_keys`, for tasks and tools.

    Subclasses route keys (:meth:`route`) and read them as members (:meth:`member_key`).

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
        # type is one our subclasses make themselves (our windows declare types that only our
        # rollups accept, so that Airflow's RollupMapper refuses them at parse).
        PartitionMapper.__init__(self, max_downstream_keys=max_downstream_keys)
        self.upstream_mapper = upstream_mapper
        self.window = window
        #: The wait policy as configured (and serialized); the scheduler sees :attr:`wait_policy`.
        self.policy = WaitForAll() if wait_policy is None else wait_policy
        #: Whether one key feeds several windows of the same members (a sliding window).
        self.sliding = False

    @property
    def wait_policy(self) -> CountedPolicy:
        """The configured policy over the keys that count (:class:`CountedPolicy`)."""
        return CountedPolicy(self)

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

    def route(self, key: str) -> str | list[str]:
        """Return the downstream key(s) *key* is routed to (before the membership check)."""
        return self.upstream_mapper.to_downstream(key)

    def member_key(self, key: str) -> str:
        """
        Return *key* as the window lists the member it names (here: *key* itself).

        :raises ValueError: saying why, if *key* names no member.
        """
        return key

    def to_downstream(self, key: str) -> str | list[str]:
        """
        Return the downstream key(s) of *key*, having checked that each run will count it.

        :raises ValueError: naming the key, if the upstream mapper cannot read it, or it is not a
            member of the window of a downstream key it maps to (the message names the downstream
            key and the spelling awaited). Airflow audit-logs it; other keys keep flowing.
        """
        routed = self.route(key)
        checked = [routed] if isinstance(routed, str) else routed
        if self.sliding:
            # A sliding window's routes all hold the key's period (u in to_upstream(D) <=> D in
            # to_downstream(u)), and the first and the last reach furthest either way: checking
            # them spares up to 998 windows per key. Near the ends of the calendar some windows
            # await keys no producer can send (years outside 0003 to 9997): a key feeds only
            # the windows that can complete, and is refused if none can.
            edges = routed[:1] + routed[1:][-1:]
            if not all(self._completable(downstream) for downstream in edges):
                routed = [downstream for downstream in routed if self._completable(downstream)]
                if not routed:
                    raise ValueError(
                        f"partition key {shown(key)}: every window it feeds reaches outside the years "
                        f"{FIRST_YEAR:04d} to {LAST_YEAR} keys are read in, so none could complete."
                    )
            checked = routed[:1] + routed[1:][-1:]
        for downstream in checked:
            try:
                expected = self.to_upstream(downstream)
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
            member, why = _member_or_error(self, key)
            if member not in expected:
                awaited = sorted(expected)
                raise ValueError(
                    f"partition key {shown(key)} would never count towards {downstream!r}: "
                    + (
                        why.removeprefix(f"partition key {shown(key)}: ").rstrip(".")
                        or f"it is read as {member!r}, which is not one of the keys the window awaits"
                    )
                    + (
                        f" (it awaits {len(awaited)} keys: {awaited[0]!r} … {awaited[-1]!r})."
                        if awaited
                        else "."
                    )
                )
        return routed

    def _completable(self, downstream_key: str) -> bool:
        """Whether the window of *downstream_key* can be listed and awaits only keys read on arrival."""
        try:
            return not self.to_upstream(downstream_key).unreadable
        except ValueError:  # it reaches past year 1 or 9999
            return False

    def sort_received(self, expected: Set[str], received: Iterable[str]) -> tuple[set[str], list[str]]:
        """Return the members of *expected* that *received* keys name, and (sorted) those naming none."""
        counted, never = set(), []
        for key in received:
            member = key if key in expected else _member_or_error(self, key)[0]
            if member in expected:
                counted.add(member)
            else:
                never.append(key)
        return counted, sorted(never)

    def to_upstream(self, downstream_key: str) -> ExpectedKeys:
        """Return the upstream keys *downstream_key* waits for, with its closing time (memoized)."""
        return _expected(self, downstream_key)

    def missing_keys(self, downstream_key: str, received: Iterable[str]) -> list[str]:
        """
        Return, sorted, the upstream keys of *downstream_key* that no key in *received* names.

        ``missing_keys("2026-03-10", ["2026-03-10T00", "2026-03-10T01:00:00Z", …])`` lists the hours
        that never came, in the spelling the window lists them.

        :raises ValueError: if *downstream_key* is not a key this rollup writes.
        """
        expected = self.to_upstream(downstream_key)
        return sorted(expected - self.sort_received(expected, received)[0])

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
        return cls(
            upstream_mapper=decode_partition_mapper(data["upstream_mapper"]),
            window=decode_window(data["window"]),
            wait_policy=policy,
            max_downstream_keys=data.get("max_downstream_keys"),
        )


def assets_of(condition: Any) -> list[Any]:
    """Return the assets of a schedule's asset condition (``AssetAll``/``AssetAny`` nest them)."""
    nested = getattr(condition, "objects", None)
    return [a for part in nested for a in assets_of(part)] if nested is not None else [condition]


def run_mapper(context: Any, asset: Any = None, *, owner: str) -> PartitionMapper:
    """
    Return the working partition mapper of the running task's Dag for *asset*.

    *asset* may be omitted when the Dag is scheduled on one asset. ``airflow.sdk`` definitions
    (what a task's ``context["dag"]`` holds) are converted with :func:`~airflow_partitions._common.as_core`.

    :raises ValueError: naming *owner*, if the Dag is not scheduled on assets, *asset* is not
        among them, or *asset* is omitted and there are several.
    """
    timetable = context["dag"].timetable
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
        or the Dag's partition mapper for *asset* is not a rollup.
    """
    partition_key = context["dag_run"].partition_key
    mapper = run_mapper(context, asset, owner="missing_upstream_keys")
    if not partition_key or not getattr(mapper, "is_rollup", False):
        raise ValueError(
            f"missing_upstream_keys: expected a partitioned Dag run of a rollup on {asset!r}; got partition "
            f"key {partition_key!r} and mapper {type(mapper).__name__}."
        )
    received = {event.partition_key for event in context["triggering_asset_events"].get(asset, ())}
    expected = mapper.to_upstream(partition_key)
    return sorted(expected - counted_keys(mapper, expected, received)[0])


def configured_policy(rollup: Any) -> WaitPolicy:
    """
    Return a rollup's wait policy as configured (``WaitForAll()``, ``CompletionDeadline(…)``).

    Ours keep it in ``policy`` (the scheduler sees a :class:`CountedPolicy` over it); Airflow's
    ``RollupMapper`` in ``wait_policy``.
    """
    return rollup.policy if isinstance(rollup, PolicyRollupMapper) else rollup.wait_policy


def counted_keys(rollup: Any, expected: Set[str], received: Iterable[str]) -> tuple[set[str], list[str]]:
    """
    Return the members of *expected* the *received* keys count as, and (sorted) those counting for none.

    Our rollups read each key as the member it names (``2026-03-10T00Z`` counts as
    ``2026-03-10T00``); Airflow's ``RollupMapper`` compares spellings.
    """
    if isinstance(rollup, PolicyRollupMapper):
        return rollup.sort_received(expected, received)
    keys = set(received)
    return keys & expected, sorted(keys - expected)
