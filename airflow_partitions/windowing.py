"""
What a rollup asks of its window: where a key goes, what a period awaits, which member a key names.

Every rollup of ours (:class:`~airflow_partitions.rollup.CountingRollupMapper`) holds one
:class:`Windowing` and calls down into it, never back: ``to_downstream`` asks it where a key goes
(:meth:`Windowing.route`) and, for each downstream key, whether it awaits the key
(:meth:`Windowing.awaits`, else the keys :meth:`Windowing.expected` lists); the scheduler's wait
policy asks which member each received key names (:meth:`Windowing.counts_as`). The base lists a
window's members and routes a key by the upstream mapper; a temporal rollup's
(:class:`~airflow_partitions.temporal_windowing.TemporalWindowing`) reads spellings of periods,
counts a year of minutes out and routes a key to every sliding window it feeds; a composite
rollup's (:class:`~airflow_partitions.dimension_windowing.DimensionWindowing`) groups listed
members (a store into its region) and reads them from an Airflow Variable.

The sets of keys awaited are :class:`ExpectedKeys` (listed) or :class:`ExpectedSlots` (counted
out), which also tell when the period closes: Airflow hands a wait policy only the key sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from datetime import datetime
from typing import Any

from airflow_partitions.grains.clock import Minutes, SlotKeys
from airflow_partitions.grains.grain import Period
from airflow_partitions.grains.keys import FIRST_YEAR, LAST_YEAR, OutsideCalendar, refusal, shown
from airflow_partitions.mapping import downstream_keys


class _AwaitedFacts:
    """What the keys a rollup waits for tell besides them (:class:`ExpectedKeys`, :class:`ExpectedSlots`)."""

    #: The end, in UTC, of the latest period among the downstream period and its members, or ``None``.
    closes_at: datetime | None
    #: The downstream key these keys roll up into (``2026-03-10``).
    downstream_key: str
    #: The rollup's hash (of its serialized form), naming it in the settle-time memory.
    owner: int
    #: A member key that no key read on arrival can name (a period starting outside the years
    #: 0003 to 9997), or ``""``: a window awaiting it could never complete.
    unreadable: str
    #: Why the members cannot be known now (a broken Variable, named), or ``""``. The keys are then
    #: none: the scheduler's pending runs wait (:class:`CountingPolicy`), the tools raise it
    #: (:func:`known_keys`).
    problem: str

    def _tell(
        self, closes_at: datetime | None, downstream_key: str, owner: int, unreadable: str, problem: str = ""
    ) -> None:
        self.closes_at = closes_at
        self.downstream_key = downstream_key
        self.owner = owner
        self.unreadable = unreadable
        self.problem = problem


class ExpectedKeys(_AwaitedFacts, frozenset[str]):
    """
    The upstream keys a rollup waits for (a ``frozenset`` of ``str``), and when its period closes.

    :attr:`closes_at` is the end, in UTC, of the latest period among the downstream period and
    its members (``2026-03-11T00:00:00+00:00`` for the UTC day ``2026-03-10``), or ``None``
    when the keys carry no time. Our rollups' ``to_upstream`` returns it (or, for a window of
    many slots of one length, :class:`ExpectedSlots`), so that :class:`CompletionDeadline` can
    tell when a period has ended: Airflow hands a wait policy only the matched and expected key
    sets.
    """

    #: The keys in the window's order, which is time order for temporal windows
    #: (``2026-10-25T02+02:00`` before ``2026-10-25T02+01:00``, unlike sorted text).
    in_order: tuple[str, ...]

    def __new__(
        cls,
        keys: Iterable[str],
        closes_at: datetime | None,
        downstream_key: str = "",
        owner: int = 0,
        unreadable: str = "",
        problem: str = "",
    ) -> ExpectedKeys:
        """Build the set of *keys* (in window order) of *downstream_key*, closing at *closes_at* (UTC)."""
        in_order = tuple(dict.fromkeys(keys))
        made = super().__new__(cls, in_order)
        made._tell(closes_at, downstream_key, owner, unreadable, problem)
        made.in_order = in_order
        return made


class ExpectedSlots(_AwaitedFacts, SlotKeys):
    """
    The upstream keys a rollup waits for when they are many slots of one length: counted out, not listed.

    What :class:`~airflow_partitions.temporal.TemporalRollupMapper` returns for a window of more
    than :data:`~airflow_partitions.temporal.LISTED_MEMBERS` minutes or hours (a year of minutes:
    525,600 keys): a :class:`~airflow_partitions.grains.clock.SlotKeys`, which answers ``in``,
    ``len``, iteration, comparisons and set operations as the ``frozenset`` of
    :class:`ExpectedKeys` would, in under a megabyte; with :class:`ExpectedKeys`' facts
    (:attr:`closes_at`, :attr:`downstream_key`, …). Airflow's scheduler hands it to the rollup's
    wait policy, which reads it as a set (``WaitForAll``: ``expected <= matched``, comparing sizes
    first; ``MinimumCount``, :class:`CompletionDeadline`: ``len(matched & expected)``, one look-up
    per matched key).

    :raises ValueError: as :class:`~airflow_partitions.grains.clock.SlotKeys`.
    """

    def __init__(
        self,
        grain: Minutes,
        start: datetime,
        count: int,
        closes_at: datetime | None,
        downstream_key: str,
        owner: int,
    ) -> None:
        """Count out *count* slots of *grain* from *start* (UTC), the keys of *downstream_key*."""
        super().__init__(grain, start, count)
        self._tell(closes_at, downstream_key, owner, "")

    @property
    def in_order(self) -> tuple[str, ...]:
        """The keys in time order, listed (for the tools, which show them; the scheduler never asks)."""
        return tuple(self)


#: What our rollups' ``to_upstream`` returns.
Awaited = ExpectedKeys | ExpectedSlots


def awaited_among(expected: Set[str], keys: set[str]) -> set[str]:
    """Return the *keys* that are in *expected*, a new set (C-level for sets, by dates for slots)."""
    if isinstance(expected, SlotKeys):
        return expected.among(keys)
    if isinstance(expected, set | frozenset):
        return keys & expected
    return {key for key in keys if key in expected}


def spelled_range(expected: Set[str]) -> str:
    """Return ``'first' … 'last'`` of the *expected* keys sorted as text (without sorting them), or ``''``."""
    if not expected:
        return ""
    first, last = expected.text_bounds() if isinstance(expected, SlotKeys) else (min(expected), max(expected))
    return f"{first!r} … {last!r}"


def _periods(decoded: Any) -> list[Period]:
    """Return the periods in a decoded key (a Period, or a dict of dimensions)."""
    if isinstance(decoded, Period):
        return [decoded]
    if isinstance(decoded, dict):
        return [value for value in decoded.values() if isinstance(value, Period)]
    return []


def period_ends(decoded: Iterable[Any]) -> list[datetime]:
    """Return the ends (UTC) of the periods in the *decoded* keys, a closing time's candidates."""
    return [period.utc[1] for item in decoded for period in _periods(item)]


def _unreadable(encode: Any, members: list[Any]) -> str:
    """Return the key of the first member with a period starting outside the years keys are read in."""
    for member in members:
        if any(not FIRST_YEAR <= p.start.year <= LAST_YEAR for p in _periods(member)):
            return encode(member)
    return ""


def _near_the_ends(decoded: Any) -> bool:
    """Whether a decoded key has a period within two years of the years 0003 to 9997 keys are read in."""
    return any(p.start.year <= FIRST_YEAR + 2 or p.end.year >= LAST_YEAR - 1 for p in _periods(decoded))


def listed(windowing: Windowing, downstream_key: str, read: Any, owner: int) -> ExpectedKeys:
    """
    Return the keys *downstream_key* awaits, listed: its window's members as the upstream mapper writes them.

    *read* is what the members were read from (:meth:`Windowing.read`); *owner* names the rollup
    (its hash) in a deadline's memory of when keys last came.

    :raises ValueError: naming the key, if its window cannot be listed (grains that do not nest,
        a window reaching past year 1 or 9999).
    """
    mapper = windowing.upstream_mapper
    decoded = mapper.decode_downstream(downstream_key)
    try:
        members = list(windowing.members(decoded, read))
    except OutsideCalendar:  # a window the rule leaves out (before a SlidingWindow's start)
        raise
    except (OverflowError, ValueError) as err:
        if not _near_the_ends(decoded):  # the window's own reason (grains that do not nest)
            raise refusal(err, f"partition key {shown(downstream_key)}: {err}") from None
        raise ValueError(  # datetime's "year 10000 is out of range"
            f"partition key {shown(downstream_key)}: its window reaches past year 1 or 9999, and keys are "
            f"read only from the years {FIRST_YEAR:04d} to {LAST_YEAR}."
        ) from None
    ends = period_ends((decoded, *members))
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
        owner=owner,
        unreadable=_unreadable(mapper.encode_upstream, members) if near_the_ends else "",
    )


class Windowing:
    """
    What a rollup asks of its window (the module's docstring): the base, for a window listing its members.

    Routes a key by the upstream mapper (``2026-03-10T09`` to ``2026-03-10``), lists a period's
    members with the window's ``to_upstream`` and writes each with the upstream mapper's
    ``encode_upstream``; a key counts as itself. Equal to another windowing of the same type over
    equal mappers and windows, so that memos keyed by it are shared by the equal rollups the
    scheduler deserializes every tick.

    :param upstream_mapper: The rollup's upstream mapper.
    :param window: The rollup's window.
    """

    #: Whether one key feeds several windows of the same members (a sliding window).
    sliding = False

    def __init__(self, upstream_mapper: Any, window: Any) -> None:
        self.upstream_mapper = upstream_mapper
        self.window = window

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, Windowing)
            and (other.upstream_mapper, other.window) == (self.upstream_mapper, self.window)
        )

    def __hash__(self) -> int:
        return hash((type(self), self.upstream_mapper, self.window))

    def read(self) -> Any:
        """
        Return what the members were read from now, hashable (``None``: the Dag file's, fixed).

        The memos of awaited keys and of keys' readings are keyed by it, so a member list read at
        run time (an Airflow Variable) is never answered from an older value's memo.
        """
        return None

    def route(self, key: str) -> list[str]:
        """
        Return the downstream keys *key* is routed to (before the rollup checks they count it), in order.

        :raises ValueError: naming the key, if the upstream mapper cannot read it.
        """
        return downstream_keys(self.upstream_mapper, key)

    def members(self, decoded: Any, read: Any = None) -> Iterable[Any]:
        """Return the decoded members of a decoded downstream key (*read*: as :meth:`read` gave it)."""
        return self.window.to_upstream(decoded)

    def expected(self, downstream_key: str, read: Any, owner: int) -> Awaited:
        """
        Return the upstream keys *downstream_key* awaits, with its closing time (:func:`listed`).

        :raises ValueError: as :func:`listed`.
        """
        return listed(self, downstream_key, read, owner)

    def counts_as(self, key: str) -> tuple[str, ...]:
        """
        Return the members *key* counts as, spelled as the window lists them (here: *key* itself).

        :raises ValueError: saying why, if *key* names no member.
        """
        return (key,)

    def awaits(self, downstream_key: str, key: str) -> bool:
        """
        Return whether the run for *downstream_key* is known to count *key* without listing its keys.

        ``False`` here: the rollup then looks *key* up in :meth:`expected`'s keys (listed once,
        memoized). A windowing that can tell from the periods alone says ``True``, so that an
        event into a month of minutes does not list its 44,640 keys.
        """
        return False

    def edge_keys(self, downstream_key: str) -> list[str] | None:
        """
        Return the first and last three keys *downstream_key* awaits, if known without listing them all.

        ``None`` here: the parse-time route check lists the window (and checks that its members'
        keys are distinct).
        """
        return None

    def feeds_none(self, key: str) -> ValueError:
        """Return the refusal of a sliding *key* none of whose windows can complete."""
        return ValueError(
            f"partition key {shown(key)}: every window it feeds reaches outside the years "
            f"{FIRST_YEAR:04d} to {LAST_YEAR} keys are read in, so none could complete."
        )
