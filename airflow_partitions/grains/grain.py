"""
The grain: a way of cutting time into periods, each with exactly one canonical partition key.

:class:`Period` is a half-open interval ``[start, end)`` of aware instants; :class:`Grain` cuts
the time line of one IANA time zone into periods (``floor``, ``key``, ``shift``; parsing, members
and serialization derive from them); :class:`WallClockGrain` is a grain cut at local wall-clock
times (days, weeks, months, fiscal and retail periods). The grains themselves live beside this
module (:mod:`~airflow_partitions.grains.clock`, :mod:`~airflow_partitions.grains.cron`, …) and
register themselves by kind in :data:`GRAIN_KINDS` when their class is made: this module never
imports them (the package's ``__init__`` imports every one, so all are registered before any
grain is rebuilt).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any, ClassVar, Generic, TypeVar, overload
from zoneinfo import ZoneInfo

from airflow_partitions.grains.keys import EXPECTED_KEYS, FIRST_YEAR, LAST_YEAR, parse_instant, shown
from airflow_partitions.grains.stored import dump, load
from airflow_partitions.grains.zones import naive, resolve, time_zone, warn_if_fixed

T = TypeVar("T")


class once(Generic[T]):
    """
    A property computed once per instance, as ``functools.cached_property`` without its lock.

    Python 3.11's ``cached_property`` takes a lock on every first access; periods are built by the
    thousand on the mapping path. The value is stored in the instance's ``__dict__``, which then
    shadows this (non-data) descriptor, also on frozen dataclasses.
    """

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> once[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | once[T]:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value


@dataclass(frozen=True, eq=False)
class Period:
    """
    One period of a grain: the aware instants ``start <= t < end``, in the grain's time zone.

    ``start`` and ``end`` are local aware datetimes (``zoneinfo``), so they print as local time.
    Periods compare, order and hash by the real instants of their bounds (:attr:`utc`), never
    by wall-clock time: Python compares two datetimes of the same zone by wall clock, which
    would confuse the two 01:30s of a fall-back night. :attr:`key` is the grain's canonical key.
    """

    start: datetime
    end: datetime
    grain: Grain

    @once
    def utc(self) -> tuple[datetime, datetime]:
        """The bounds as UTC datetimes: what equality, ordering and hashing use."""
        return self.start.astimezone(UTC), self.end.astimezone(UTC)

    @once
    def key(self) -> str:
        """The canonical partition key of this period, e.g. ``"2026-03-10"`` (computed once)."""
        return self.grain.key(self)

    @property
    def duration(self) -> timedelta:
        """Real elapsed time from start to end (23 hours for a spring-forward day)."""
        return self.utc[1] - self.utc[0]

    def __contains__(self, instant: datetime) -> bool:
        start, end = self.utc
        return start <= instant.astimezone(UTC) < end

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Period) and self.utc == other.utc

    def __lt__(self, other: Period) -> bool:
        return self.utc < other.utc

    def __hash__(self) -> int:
        return hash(self.utc)

    @classmethod
    def _between(cls, start: datetime, end: datetime, grain: Grain) -> Period:
        """Return the period from the UTC instant *start* to *end*, its :attr:`utc` already known."""
        period = cls(start.astimezone(grain.tz), end.astimezone(grain.tz), grain)
        period.__dict__["utc"] = (start, end)
        return period


#: ``kind`` → grain class, for every grain of this package: each registers itself when its class is
#: made (:meth:`Grain.__init_subclass__`). What a stored grain's ``kind`` field names.
GRAIN_KINDS: dict[str, type[Grain]] = {}


@dataclass(frozen=True)
class Grain(ABC):
    """
    A way of cutting the time line of one IANA time zone into periods with canonical keys.

    Subclasses implement :meth:`floor`, :meth:`key` and :meth:`shift`; parsing, member
    enumeration and serialization derive from them.

    :param timezone: IANA time zone name; default ``"UTC"``.
    :raises ValueError: at construction, for an unknown time zone or a bad parameter.
    :warns UserWarning: at construction, for the fixed-offset legacy names ``EST``, ``MST``,
        ``HST`` and ``Etc/GMT+5``-style zones (no daylight saving time), suggesting a region's
        IANA name such as ``America/New_York``; the grain is still built.
    """

    timezone: str = field(default="UTC", kw_only=True)
    #: The name of the grain's kind in its stored form (``"day"``); :data:`GRAIN_KINDS` maps each
    #: kind to its class.
    kind: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """
        Register a grain class that names its own ``kind`` in :data:`GRAIN_KINDS`.

        :raises TypeError: if another class (by module and name) already registered that kind.
        """
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:
            return
        known = GRAIN_KINDS.setdefault(cls.kind, cls)
        if (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
            raise TypeError(
                f"grain kind {cls.kind!r} is taken by {known.__qualname__}, not {cls.__qualname__}."
            )
        GRAIN_KINDS[cls.kind] = cls  # the same class made again (its module reloaded)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tz", time_zone(self.timezone, owner=type(self).__name__))
        warn_if_fixed(self.timezone, type(self).__name__)

    tz: ZoneInfo = field(init=False, repr=False, compare=False)

    @abstractmethod
    def floor(self, instant: datetime) -> Period:
        """Return the period that contains the aware *instant*."""

    @abstractmethod
    def key(self, period: Period) -> str:
        """Return the canonical key of *period*."""

    @abstractmethod
    def shift(self, period: Period, n: int) -> Period:
        """Return the period *n* periods after *period* (before it if *n* is negative)."""

    def key_at(self, when: datetime, tz: ZoneInfo | None = None) -> str:
        """
        Return the canonical key of the period containing *when*; naive *when* is read in *tz*.

        Equal to ``key(floor(...))``; grains cut at wall-clock times compute it without building
        the period (the mapping hot path).
        """
        return self.key(self.floor(when if when.tzinfo else when.replace(tzinfo=tz or self.tz)))

    def floor_key(self, key: str, input_format: str | None = None) -> Period:
        """
        Return the period that contains the instant any ISO 8601 *key* names (:meth:`floor` of it).

        :raises ValueError: naming the key, if :func:`parse_instant` cannot read it.
        """
        return self.floor(parse_instant(key, self.tz, input_format, self))

    def period_of(self, key: str, input_format: str | None = None) -> Period:
        """Return :meth:`floor_key`, 0.1.0's name for it; deprecated: ``period_of`` names the task helper."""
        import warnings

        warnings.warn("Grain.period_of is now Grain.floor_key", DeprecationWarning, stacklevel=2)
        return self.floor_key(key, input_format)

    def parse(self, key: str) -> Period:
        """
        Return the period whose canonical key is *key* (the inverse of :meth:`key`).

        :raises ValueError: naming the key and an example canonical key, if *key* is not this
            grain's canonical spelling of a period; naming the years keys are read from, for a
            period (or its end) that no ``datetime`` holds (``9999-12-31`` of days: it ends in 10000).
        """
        try:
            period = self._named_period(key)
        except OverflowError:
            raise ValueError(
                f"partition key {shown(key)} names a period past the years {FIRST_YEAR:04d} to {LAST_YEAR} "
                "that keys are read from."
            ) from None
        canonical = self.key(period)
        if canonical != key:
            raise ValueError(
                f"partition key {shown(key)} is not a canonical {self!r} key; the period it falls in is "
                f"written {canonical!r}."
            )
        return period

    def _named_period(self, key: str) -> Period:
        """Return the period a canonical *key* names (before the canonical-spelling check)."""
        return self.floor_key(key)

    def labelled_start(self, key: str, label: str, year: int, unit: str) -> datetime:
        """
        Return the naive local start of the period a labelled calendar *key* names.

        :func:`read_key` splits the key into *label* (``"FY"``), *year* and *unit* (``"Q3"``,
        ``"W05"``, ``""`` for a year). Only fiscal and retail grains read such keys.

        :raises ValueError: naming the key and what was expected.
        """
        raise ValueError(
            f"partition key {shown(key)} is not {EXPECTED_KEYS}; labelled keys such as 'FY2026' are read "
            f"only by a grain of their own fiscal or retail calendar, not by {self!r}."
        )

    #: Whether the periods tile the time line without gaps (every grain but :class:`Cron`,
    #: whose ticks need not nest in a coarser period).
    tiles: ClassVar[bool] = True
    #: Whether a member of a finer grain running past the end of a period is cut short there: a
    #: trading session's last bar on an early close off the bar grid (14:00 to 14:10). Not at a
    #: lunch break: bars that do not tile the morning are refused.
    cuts_last_member: ClassVar[bool] = False

    @property
    def fixed_length(self) -> timedelta | None:
        """The real length of every period, if all have one (minutes and hours), else ``None``."""
        return None

    def members(self, period: Period) -> list[Period]:
        """
        Return the periods of this grain that start within *period*, in order.

        For a tiling grain they tile *period* exactly (no gap, no overlap): an hour holds four
        ``Minutes(15)``, a New York day 23, 24 or 25 ``Hour()`` periods. For :class:`Cron`
        they are the ticks inside *period* (the hourly ticks of a 09:00 to 17:00 weekday).
        Members are listed in each of *period*'s :meth:`spans` (its grain's): the whole period,
        but for a trading session with a lunch break the two parts around the break, so that no
        member starts in the break (Hong Kong's 09:30 to 16:00 holds 11 ``Minutes(30)``, not 13).
        A trading session closing off the members' grid ends with a short member, cut at the
        close and keyed by its start: ASX's 14:10 early close ends with the bar 14:00 to 14:10.

        :raises ValueError: for a tiling grain whose periods do not start at *period*'s start or
            end at its end (the grains do not nest, e.g. ISO weeks in a month), or at the start
            and end of each span (but a trading session's close, above).
        """
        spans = period.grain.spans(period)
        if len(spans) == 1:
            return self._members_between(period, *spans[0])
        return [member for start, end in spans for member in self._members_between(period, start, end)]

    def _members_between(self, period: Period, start: datetime, end: datetime) -> list[Period]:
        """Return the periods of this grain that start in ``[start, end)`` (UTC), a span of *period*."""
        slot = self.fixed_length
        if slot is not None and not (end - start) % slot and self.floor(start).utc[0] == start:
            # Slots of one real length from an aligned start: counted out, not stepped one by one.
            return [
                Period._between(start + slot * i, start + slot * (i + 1), self)
                for i in range((end - start) // slot)
            ]
        members = []
        current = self.floor(start)
        if current.utc[0] < start and not self.tiles:
            current = self.shift(current, 1)
        while current.utc[0] < end:
            members.append(current)
            current = self.shift(current, 1)
        last = members[-1].utc if members else None
        if last and last[1] > end == period.utc[1] and self.tiles and period.grain.cuts_last_member:
            # a short last bar (14:00 to 14:10 on an early close), named by its start like every bar
            members[-1] = Period._between(last[0], end, self)
        if self.tiles and (not members or members[0].utc[0] != start or members[-1].utc[1] != end):
            within = "" if (start, end) == period.utc else f" in its hours {_span_text(period, start, end)}"
            raise ValueError(
                f"{self!r} periods do not tile {period.grain!r} period {period.key!r}{within} "
                f"[{period.start.isoformat()}, {period.end.isoformat()}); pick a grain that nests in it."
            )
        return members

    def spans(self, period: Period) -> tuple[tuple[datetime, datetime], ...]:
        """
        Return the parts of *period* its members are listed in, as ``(start, end)`` UTC instants.

        The whole period, ``(period.utc,)``, for every grain but
        :class:`~airflow_partitions.grains.sessions.TradingSession`, whose sessions with a lunch
        break (Hong Kong, Tokyo) have two: from the open to the break, and from the break's end
        to the close.
        """
        return (period.utc,)

    def period_at_or_after(self, instant: datetime) -> Period:
        """
        Return the period holding the aware *instant*; for a grain with gaps, the first one after it.

        :meth:`floor` for every grain but :class:`~airflow_partitions.grains.sessions.TradingSession`,
        whose sessions leave the nights and weekends out: an instant between two sessions gives
        the next. Used where a sample period near an instant is wanted (checks at Dag parse).

        :raises ValueError: as :meth:`floor` (a business day's grain on a Sunday).
        """
        return self.floor(instant)

    def serialize(self) -> dict[str, Any]:
        """Return the grain as sorted, plain JSON: its ``kind`` and its parameters."""
        return dump(kind=self.kind, **self._parameters())

    def _parameters(self) -> dict[str, Any]:
        return {"timezone": self.timezone}

    @staticmethod
    def deserialize(data: dict[str, Any]) -> Grain:
        """
        Rebuild a grain from :meth:`serialize`'s output.

        :raises ValueError: if the ``kind`` is unknown to this release.
        """
        data = dict(load(data, Grain))
        data.pop("format_version", None)
        kind = data.pop("kind")
        if kind not in GRAIN_KINDS:
            raise ValueError(f"unknown grain kind {kind!r}; known: {sorted(GRAIN_KINDS)}.")
        return GRAIN_KINDS[kind]._from_parameters(data)

    @classmethod
    def _from_parameters(cls, parameters: dict[str, Any]) -> Grain:
        """Build the grain from :meth:`_parameters`' output (grains nesting values rebuild them)."""
        return cls(**parameters)


class WallClockGrain(Grain):
    """A grain cut at local wall-clock times: ``_floor_wall``/``_shift_wall`` name the cuts."""

    @abstractmethod
    def _floor_wall(self, wall: datetime) -> datetime:
        """Return the naive local start of the period containing the naive local time *wall*."""

    @abstractmethod
    def _shift_wall(self, start: datetime, n: int) -> datetime:
        """Return the naive local start *n* periods after the naive local start *start*."""

    #: How far into its period a key's own instant lies: a day starting at 06:00 is named by
    #: its date, whose midnight is 6 hours before the period starts.
    _name_offset: ClassVar[timedelta] = timedelta()

    def _named_wall(self, key: str) -> datetime:
        """Return the naive local time *key* names, moved by :attr:`_name_offset` into its period."""
        instant = parse_instant(key, self.tz, grain=self)
        return naive(instant.astimezone(self.tz)) + self._name_offset

    def _named_period(self, key: str) -> Period:
        return self._period(self._floor_wall(self._named_wall(key)))

    def _period(self, start_wall: datetime) -> Period:
        return Period(resolve(start_wall, self.tz), resolve(self._shift_wall(start_wall, 1), self.tz), self)

    def wall_start(self, period: Period) -> datetime:
        """Return the naive local wall-clock time *period* starts at (its cut, also where a gap moved it)."""
        # A start moved forward out of a spring-forward gap floors back to its own wall cut.
        return self._floor_wall(naive(period.start))

    @abstractmethod
    def _wall_key(self, start: datetime) -> str:
        """Return the canonical key of the period whose naive local start is *start*."""

    def key(self, period: Period) -> str:
        """Return the canonical key of *period*."""
        return self._wall_key(self.wall_start(period))

    def _wall_name(self, wall: datetime) -> str:
        """Return the canonical key of the period holding the naive local time *wall*."""
        return self._wall_key(self._floor_wall(wall))

    def key_at(self, when: datetime, tz: ZoneInfo | None = None) -> str:
        """Return the key of the period containing *when* (naive: read in *tz*), from wall time."""
        if when.tzinfo is None and (tz is None or tz is self.tz):
            # A naive local time names its wall cut directly: a day or coarser period is the same
            # whether or not the time falls in a spring-forward gap.
            return self._wall_name(when)
        aware = when if when.tzinfo else when.replace(tzinfo=tz)
        return self._wall_name(naive(aware.astimezone(self.tz)))

    def floor(self, instant: datetime) -> Period:
        """Return the period that contains the aware *instant*."""
        period = self._period(self._floor_wall(naive(instant.astimezone(self.tz))))
        if not self.tiles:
            return period
        # A cut inside a repeated or skipped local hour can leave the instant just outside the
        # period its wall time names: step to the neighbour that holds it.
        utc = instant.astimezone(UTC)
        while utc >= period.utc[1]:
            period = self.shift(period, 1)
        while utc < period.utc[0]:
            period = self.shift(period, -1)
        return period

    def shift(self, period: Period, n: int) -> Period:
        """Return the period *n* periods after *period* (before it if *n* is negative)."""
        return self._period(self._shift_wall(self.wall_start(period), n))


def _span_text(period: Period, start: datetime, end: datetime) -> str:
    """Return ``09:30-12:00`` for a span of *period*, in local wall-clock time."""
    return f"{start.astimezone(period.grain.tz):%H:%M}-{end.astimezone(period.grain.tz):%H:%M}"


#: The stretch :func:`most_members` samples: December 2027 through 2028, a leap year, so it
#: holds every month length, a 53-week ISO year's end and the 2028 DST changes of any zone.
_SAMPLE_SPAN = (datetime(2027, 12, 1, tzinfo=UTC), datetime(2029, 1, 1, tzinfo=UTC))
#: The stretch :func:`shortest_period` samples: also 2027, a common year.
_SHORTEST_SPAN = (datetime(2026, 12, 1, tzinfo=UTC), _SAMPLE_SPAN[1])
#: How much of it :func:`most_members` walks for cron ticks, which are slow to step through.
_CRON_SAMPLE = timedelta(days=42)


def _sample_periods(grain: Grain, span: tuple[datetime, datetime] = _SAMPLE_SPAN) -> list[Period]:
    """Return the periods of *grain* in *span* :func:`most_members` inspects (at most a few thousand)."""
    first, last = span
    period = grain.period_at_or_after(first)
    if period.duration >= timedelta(hours=23):
        starts = [first]
        stop = last
    else:  # sub-daily: the periods around each DST change of 2028, and one ordinary day
        days = [first + timedelta(days=n) for n in range((last - first).days)]
        starts = [first] + [
            day - timedelta(hours=12)
            for day, after in pairwise(days)
            if day.astimezone(grain.tz).utcoffset() != after.astimezone(grain.tz).utcoffset()
        ]
        stop = None
    periods: list[Period] = []
    for start in starts:
        period = grain.period_at_or_after(start)
        end = stop or start + timedelta(hours=48)
        while period.utc[0] < end:
            periods.append(period)
            period = grain.shift(period, 1)
    return periods


def shortest_period(grain: Grain) -> timedelta:
    """
    Return the real length of the shortest period of *grain*: 23 hours for a New York day.

    Worked out over the periods of December 2026 through 2028 as :func:`most_members` samples
    them: a common year and a leap year (February's 28 and 29 days, 90- and 91-day first
    quarters), and each DST change of the grain's zone under today's rules; a period of a year
    whose rules differ (a zone that moved its offset by more than its DST shift) may be shorter.
    ``shortest_period(Day(timezone="America/New_York"))`` is 23 hours, ``shortest_period(
    Month())`` 28 days. The sample is read once per process and grain (:func:`_lengths`).
    """
    return min(_lengths(grain))


def typical_period(grain: Grain) -> timedelta:
    """
    Return the most common real length of *grain*'s periods: 24 hours for a New York day.

    Over the periods :func:`shortest_period` samples; ``typical_period(Month())`` is 31 days.
    """
    return _lengths(grain).most_common(1)[0][0]


@lru_cache(maxsize=256)
def _lengths(grain: Grain) -> Counter[timedelta]:
    """Return the real lengths of the periods :func:`shortest_period` samples, counted (memoized)."""
    return Counter(period.duration for period in _sample_periods(grain, _SHORTEST_SPAN))


def shorter_periods(
    grain: Grain, start: datetime, end: datetime, *, limit: int = 20_000
) -> list[datetime] | None:
    """
    Return the UTC starts of *grain*'s periods starting from *start* to *end* that are shorter than typical.

    ``shorter_periods(Day(timezone="America/New_York"), …2026-01-01…, …2026-12-31…)`` is the
    start of 2026-03-08 (23 hours), as :func:`typical_period` is 24 hours. ``[]`` for a grain
    whose periods all last alike (hours, UTC days); ``None`` if more than *limit* periods lie
    between (walking them would take longer than it saves).
    """
    typical = typical_period(grain)
    if shortest_period(grain) >= typical:
        return []
    found: list[datetime] = []
    period = grain.floor(start)
    for _ in range(limit):
        if period.utc[0] > end:
            return found
        if period.duration < typical:
            found.append(period.utc[0])
        period = grain.shift(period, 1)
    return None


@lru_cache(maxsize=256)
def most_members(grain: Grain, member: Grain) -> tuple[int, Period]:
    """
    Return the largest number of *member* periods in one *grain* period, and such a period.

    ``most_members(Month(), Day())`` is ``(31, <2027-12>)``; ``most_members(Day(timezone=
    "America/New_York"), Hour())`` is 25 (the fall-back day). Worked out over December 2027
    through 2028, which holds every month length, a leap day and each DST change of the grain's
    zone; the Gregorian calendar and today's DST rules repeat these lengths in other years.
    Tiling members are counted in the longest sampled period; cron ticks in the sampled periods
    that start in the first six weeks (every weekday, a month start and end, and for sub-daily
    grains the DST changes), since each tick costs about a millisecond: a fraction of a second
    for hourly ticks in days, seconds for hourly ticks in a year. Members of one fixed length
    (:attr:`Grain.fixed_length`: minutes, hours) are not listed but counted from the longest
    period's length: a year of minutes (527,040) takes no longer than a day of hours. Members of
    trading sessions with a lunch break are counted in every sampled session (none starts in the
    break). Memoized per process: it runs once per configuration.

    :raises ValueError: if *member* periods do not tile *grain* periods.
    """
    periods = _sample_periods(grain)
    if member.tiles and any(len(grain.spans(p)) > 1 for p in periods):
        # Trading sessions with a lunch break: the longest is not the one with the most members
        # (a half day has no break); the sampled sessions, a few dozen, are each counted.
        return max(((len(member.members(p)), p) for p in periods), key=lambda pair: pair[0])
    if member.tiles:  # tiling members of fixed rules: the longest period holds the most
        longest = max(periods, key=lambda p: p.duration)
        slot = member.fixed_length
        bounds = (longest.start, longest.end - timedelta(microseconds=1))
        if slot is not None and [member.floor(b).utc[i] for i, b in enumerate(bounds)] == list(longest.utc):
            return -(-longest.duration // slot), longest  # whole slots, from the first cut to the last
        periods = [longest]
    elif periods[0].duration >= timedelta(hours=23):  # cron ticks, about 1 ms each: six weeks
        periods = [p for p in periods if p.utc[0] < _SAMPLE_SPAN[0] + _CRON_SAMPLE]
    return max(((len(member.members(p)), p) for p in periods), key=lambda pair: pair[0])
