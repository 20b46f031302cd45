"""
Clock and calendar grains: N-minute slots, hours, days, weeks, ISO weeks, months, quarters, years.

+---------------------------+------------------------------+-------------------------------+
| grain                     | one period                   | canonical key, e.g.           |
+===========================+==============================+===============================+
| ``Minutes(15)``           | 15 real minutes              | ``2026-03-10T09:15``          |
| ``Hour()``                | 60 real minutes              | ``2026-03-10T09``             |
| ``Minutes(360)``          | a quarter of the local day   | ``2026-03-10T06:00``          |
| ``Day(start_hour=6)``     | a local day, 06:00 to 06:00  | ``2026-03-10``                |
| ``Week(start="sunday")``  | 7 local days                 | ``2026-03-08`` (its 1st day)  |
| ``IsoWeek()``             | an ISO 8601 week             | ``2026-W11``                  |
| ``Month()``               | a calendar month             | ``2026-03``                   |
| ``Quarter()``             | a calendar quarter           | ``2026-Q1``                   |
| ``Year()``                | a calendar year              | ``2026``                      |
+---------------------------+------------------------------+-------------------------------+

**Time zones and DST.** Keys of day and coarser grains are local calendar names (a date, a
month); the periods they name are the real instants of that local span, so a New York day has 23
hours on 2026-03-08 and 25 on 2026-11-01. ``Minutes(n)`` with ``n`` dividing 60 (``Hour`` too)
tiles real time in slots of exactly ``n`` minutes aligned to the local clock; in a time zone
other than UTC its keys carry the UTC offset (``2026-11-01T01-04:00``, then
``2026-11-01T01-05:00``: fall-back's repeated hour is two periods with two keys). Slots of
``n`` dividing 1440 (above 60) and day grains are cut at local wall-clock times; a wall-clock
boundary that does not exist (skipped by spring-forward) moves to the first real instant after
it, an ambiguous one (repeated by fall-back) means its first occurrence. Where the offset
changes by no whole number of slots (``Hour`` in ``Australia/Lord_Howe``, whose DST is 30
minutes), the change also cuts a partial slot, keyed with minutes: ``2026-04-05T01:30+10:30``.

Rules followed: ISO 8601 (calendar dates, ISO week dates and week-numbering years, UTC offsets)
and the IANA time zone database (through :mod:`zoneinfo`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, TypeVar
from zoneinfo import ZoneInfo

from airflow_partitions.grains.grain import Grain, Period, WallClockGrain
from airflow_partitions.grains.zones import CUT_SAMPLE, as_utc, changes_between, cut_years, offset_text

_T = TypeVar("_T")

#: Weekday names, Monday first (as :meth:`datetime.weekday` numbers them).
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: ``T00`` … ``T23``, the hour of a slot key.
_HOURS = tuple(f"T{hour:02d}" for hour in range(24))
#: An hour, a day: ``timedelta(days=n)`` parses keywords, several times slower than ``_DAY * n``.
_HOUR, _DAY = timedelta(hours=1), timedelta(days=1)


@dataclass(frozen=True)
class Minutes(WallClockGrain):
    """
    Slots of *n* minutes: ``2026-03-10T09:15`` in UTC, ``2026-03-10T09:15+01:00`` elsewhere.

    With *n* dividing 60, every slot but a partial one is exactly *n* real minutes, aligned to the local clock
    (``:00``, ``:15`` …); fall-back's repeated hour holds its slots twice, told apart by the
    offset in their keys. An offset change that is not a whole number of slots (Lord Howe's
    30-minute DST for ``Hour``) also cuts: the slot it falls in ends there and a partial slot
    starts there, keyed with minutes (:meth:`key`). With *n* dividing 1440 and above 60
    (``Minutes(360)``: keys ``2026-03-10T06:00``), slots are cut at local midnight plus multiples
    of *n* minutes and hold the real instants between the cuts (a slot spanning a DST change is an
    hour shorter or longer).

    :param n: Slot length in minutes: a divisor of 60 or of 1440.
    :raises ValueError: if *n* divides neither 60 nor 1440.
    """

    n: int = 60
    kind: ClassVar[str] = "minutes"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.n, int) or self.n < 1 or (60 % self.n and 1440 % self.n):
            raise ValueError(
                f"{type(self).__name__}: n must be a number of minutes dividing 60 or 1440 "
                f"(e.g. 5, 15, 60, 360); got {self.n!r}."
            )
        # Clock-aligned slots need extra cuts only in zones whose offsets are not all a whole
        # number of slots apart (Lord Howe's +10:30 and +11:00 against hours): decided once here.
        slot = timedelta(minutes=self.n)
        cuts = cut_years(self.timezone, slot) if 60 % self.n == 0 else frozenset()
        object.__setattr__(self, "_slot", slot)
        object.__setattr__(self, "_cuts", cuts)
        object.__setattr__(self, "_utc_slots", self.timezone == "UTC" and not 60 % self.n)

    #: The slot length, *n* minutes.
    _slot: timedelta = field(init=False, repr=False, compare=False)
    #: The years with offset changes that are no whole number of slots (none in most zones).
    _cuts: frozenset[int] = field(init=False, repr=False, compare=False)
    #: Whether slots are clock-aligned UTC ones, whose keys are their floored UTC wall times.
    _utc_slots: bool = field(init=False, repr=False, compare=False)

    @property
    def fixed_length(self) -> timedelta | None:
        """*n* minutes, for clock-aligned slots in a zone whose offsets are whole slots apart."""
        return None if 60 % self.n or self._cuts else self._slot

    def _named_period(self, key: str) -> Period:
        return super()._named_period(key) if 60 % self.n else self.floor_key(key)

    def _absolute_period(self, start: datetime) -> Period:
        """Return the slot of *n* real minutes from the UTC instant *start*."""
        return Period._between(start, start + self._slot, self)

    def floor(self, instant: datetime) -> Period:
        """Return the slot that contains the aware *instant*."""
        if 60 % self.n:
            return super().floor(instant)
        # Through UTC: an aware wall time in a spring-forward gap (Python keeps it as written) is
        # read as the instant it stands for, whose wall time lies after the gap.
        local = as_utc(instant).astimezone(self.tz)
        into = timedelta(minutes=local.minute % self.n, seconds=local.second, microseconds=local.microsecond)
        if not self._cuts:
            return self._absolute_period(as_utc(local) - into)
        # An offset change that is not a whole number of slots cuts the slot it falls in.
        slot, start = self._slot, as_utc(local) - into
        cuts = [c for c in self._cuts_between(start, start + slot) if start < c < start + slot]
        first = max([start, *(c for c in cuts if c <= instant)])
        end = min([start + slot, *(c for c in cuts if c > first)])
        return Period(first.astimezone(self.tz), end.astimezone(self.tz), self)

    def _cuts_between(self, lo: datetime, hi: datetime) -> list[datetime]:
        """Return the instants in ``[lo, hi]`` at which the offset changes by no whole number of slots."""
        slot, last = self._slot, CUT_SAMPLE[1] - 1
        if not any(min(year, last) in self._cuts for year in range(lo.year, hi.year + 1)):
            return []
        return [
            at
            for at, before, after in changes_between(self.timezone, lo, hi)
            if (after - before) % slot and not (before.seconds % 60 or after.seconds % 60)
        ]

    def _aligned(self, start: datetime) -> bool:
        local = start.astimezone(self.tz)
        return not (local.minute % self.n or local.second or local.microsecond)

    def shift(self, period: Period, n: int) -> Period:
        """
        Return the slot *n* slots after *period* (before it if *n* is negative).

        Counts real time in slots; in a zone with partial slots (see :meth:`key`) each partial slot
        counts as one, so the offset changes between *period* and the result are looked up.
        """
        if 60 % self.n:
            return super().shift(period, n)
        slot = self._slot
        if not self._cuts:
            return self._absolute_period(period.utc[0] + slot * n)
        start, target = as_utc(period.start), as_utc(period.start) + slot * n
        if not self._cuts_between(min(start, target) - slot, max(start, target) + slot):
            return self._absolute_period(target)
        current = self.floor(period.start)
        while n:
            start = as_utc(current.start)
            if not self._aligned(start) or self._cuts_between(start, start):
                # A partial slot, or one starting at a cut: step one slot, off the cut.
                current = self.floor(current.end if n > 0 else start - timedelta(microseconds=1))
                n -= 1 if n > 0 else -1
                continue
            # From an aligned start, slots are whole up to the next cut: jump there in one go.
            reach = start + slot * (n + (1 if n > 0 else -1))
            cuts = [c for c in self._cuts_between(min(start, reach), max(start, reach)) if c != start]
            if not cuts:
                return self.floor(start + slot * n)
            cut = min(cuts) if n > 0 else max(cuts)
            between = -(-abs(cut - start) // slot)  # slots starting in [start, cut) or [cut, start)
            if between > abs(n):
                return self.floor(start + slot * n)
            current = self.floor(cut)
            n -= between if n > 0 else -between
        return current

    def _floor_wall(self, wall: datetime) -> datetime:
        day = wall.replace(hour=0, minute=0, second=0, microsecond=0)
        return day + timedelta(minutes=(wall.hour * 60 + wall.minute) // self.n * self.n)

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        return start + timedelta(minutes=self.n * n)

    def _wall_key(self, start: datetime) -> str:
        return self.key(self._period(start))

    def key_at(self, when: datetime, tz: ZoneInfo | None = None) -> str:
        """Return the key of the slot containing *when* (naive: read in *tz*)."""
        if self._utc_slots and (tz is None or tz is self.tz or when.tzinfo):
            # UTC has no offsets to write: the slot key is the floored UTC wall time.
            utc = when.astimezone(UTC) if when.tzinfo else when
            minute = utc.minute
            return self._text(utc, minute - minute % self.n)
        # Elsewhere a slot key carries its real start's offset, which only the period knows.
        return Grain.key_at(self, when, tz)

    def _text(self, start: datetime, minute: int) -> str:
        text = start.date().isoformat() + _HOURS[start.hour]  # no format specs: the mapping hot path
        return f"{text}:{minute:02d}" if minute or self.n != 60 else text

    def key(self, period: Period) -> str:
        """
        Return ``YYYY-MM-DDTHH:MM`` (``YYYY-MM-DDTHH`` for hours), plus the offset outside UTC.

        A *partial slot* (*n* dividing 60) starts at an offset change that is not a whole number of
        slots, off the local clock's slot marks; its key always has minutes. In
        ``Australia/Lord_Howe`` (02:00 +11:00 -> 01:30 +10:30 at 2026-04-04T15:00Z, per the IANA tz
        database) the hours there are ``2026-04-05T01+11:00`` (14:00Z to 15:00Z),
        ``2026-04-05T01:30+10:30`` (to 15:30Z), then ``2026-04-05T02+10:30``. Zones whose offsets
        are all whole slots apart (whole hours for ``Hour``) never have partial slots.
        """
        start = period.start
        text = self._text(start, start.minute)
        return text if self.timezone == "UTC" else text + offset_text(start)

    def _parameters(self) -> dict[str, Any]:
        return {"n": self.n, "timezone": self.timezone}


@dataclass(frozen=True)
class Hour(Minutes):
    """
    Hours: ``2026-03-10T09`` in UTC, ``2026-03-10T09-04:00`` in ``America/New_York``.

    Each period is exactly 60 real minutes starting at a local ``:00`` (``:30`` UTC in
    ``Asia/Kolkata``); a New York local day holds 23 of them on 2026-03-08 and 25 on 2026-11-01.
    Where the offset changes by a half hour (``Australia/Lord_Howe``), the change cuts the hour it
    falls in and starts a partial hour keyed with minutes, ``2026-04-05T01:30+10:30``
    (:meth:`Minutes.key`).
    """

    n: int = field(default=60, init=False)
    kind: ClassVar[str] = "hour"

    def _parameters(self) -> dict[str, Any]:
        return {"timezone": self.timezone}


def mean_time_between(zone: str, start: datetime, end: datetime) -> bool:
    """
    Whether *zone*'s offset has a seconds part anywhere in ``[start, end]`` (aware instants).

    Local mean times before standard time had such offsets (Santiago's -04:42:45 until 1910);
    :func:`~airflow_partitions.grains.zones.cut_years` leaves their changes out, since keys are
    written to the minute there, so two slots' keys may repeat. UTC never does.
    """
    if zone == "UTC":
        return False
    offsets = [start.astimezone(ZoneInfo(zone)).utcoffset()]
    offsets += [after for _, _, after in changes_between(zone, start, end)]
    return any((offset or timedelta()).seconds % 60 for offset in offsets)


class SlotKeys(Set[str]):
    """
    The canonical keys of *count* consecutive slots of *grain* from the UTC instant *start*, never listed.

    ``SlotKeys(Minutes(1), datetime(2027, 1, 1, tzinfo=UTC), 525_600)`` answers as the
    ``frozenset`` of the keys ``2027-01-01T00:00`` … ``2027-12-31T23:59`` does, without holding
    them (that ``frozenset`` is about 50 MB and seconds to build): a key of a slot is its local
    date (``2027-06-10``) followed by a part written from its local time and offset (``T09:15``,
    ``T09-04:00``: :meth:`Minutes.key`), and every local day the zone's offset does not change
    in holds the same parts. So it keeps, for each local date of the range, the parts of that
    day's slots: one shared table for all such days of one offset (worked out from the grain's
    own keys of the first of them), and a table of their own for the first and last days and the
    days of an offset change (:func:`~airflow_partitions.grains.zones.changes_between`), from the
    grain's keys of their slots. A year of minutes takes 0.02 to 0.07 s in UTC (about 0.16 s in a
    zone with DST, whose changes are looked up and whose change days are keyed slot by slot) and
    holds under a megabyte.

    - ``key in keys``: the part after the date is looked up in the table of its date: true exactly
      for the keys listed, false for any other spelling (``2027-01-01T00:00Z``), a non-key or a
      non-string; a fraction of a microsecond, as a ``frozenset``'s;
    - ``len`` is *count*; iteration writes the keys in time order (fall-back's repeated hour once
      per offset: ``2026-11-01T01-04:00`` before ``2026-11-01T01-05:00``), each when reached;
    - ``==``, ``<=``, ``&``, ``-``, ``|``, ``^`` with other sets answer as the ``frozenset``
      would, returning a ``frozenset`` (:class:`collections.abc.Set`'s; ``received & keys``
      costs one look-up per received key); ``hash`` is the ``frozenset``'s.

    For grains of one real slot length only (:attr:`Minutes.fixed_length`: ``Minutes(n)`` with *n*
    dividing 60 and ``Hour()``, in UTC or in any zone whose offsets are whole slots apart, with or
    without DST): slots follow one another every *n* real minutes, so the slots of the range are
    ``start + i * n minutes`` as :meth:`Grain.members` counts them out, and a New York day holds
    23, 24 or 25 hours. The caller gives *start*, a slot's start.

    :raises ValueError: if *grain* has no fixed slot length, *start* is not an aware instant
        starting one of its slots, or *count* is negative.
    """

    __slots__ = ("_count", "_days", "_order")

    def __init__(self, grain: Minutes, start: datetime, count: int) -> None:
        slot = grain.fixed_length
        if slot is None or start.tzinfo is None or count < 0 or grain.floor(start).utc[0] != start:
            raise ValueError(
                f"SlotKeys: needs a grain of one slot length, an aware slot start and a count >= 0; got "
                f"{grain!r}, {start!r}, {count!r}."
            )
        if mean_time_between(grain.timezone, start, start + slot * count):
            raise ValueError(
                f"SlotKeys: {grain!r} from {start.isoformat()} for {count} slots reaches a local mean time "
                "with a seconds part (before the zone's standard time), whose keys are written to the "
                "minute and may repeat: list those keys instead."
            )
        self._count = count
        #: The parts after the date of the keys of each local date, for ``in``.
        self._days: dict[str, Set[str]] = {}
        #: The dates in time order, each with its parts in time order (a date twice if the clock
        #: goes back into it), for iteration.
        self._order: list[tuple[str, tuple[str, ...]]] = []
        start = start.astimezone(UTC)
        tz, per_day = grain.tz, timedelta(days=1) // slot

        def local(index: int) -> datetime:
            return (start + slot * index).astimezone(tz)

        def part(at: datetime) -> str:
            return grain.key(Period._between(at, at + slot, grain))[10:]

        # Days the offset changes in hold parts of their own (as do the first and last, partial).
        special = {local(0).date(), local(count - 1).date()} if count else set()
        if grain.timezone != "UTC":
            for change, _, _ in changes_between(grain.timezone, start, start + slot * count):
                special.update((change.astimezone(tz).date(), (change - slot).astimezone(tz).date()))
        shared: dict[tuple[timedelta | None, Any], tuple[tuple[str, ...], frozenset[str]]] = {}
        listed: dict[str, set[str]] = {}
        index = 0
        while index < count:
            first = local(index)
            day, date = first.date(), first.date().isoformat()
            after = index + per_day
            if day not in special and after <= count:
                # Checked as well: a change the sampled list misses (two within 12 hours) shows here.
                last, following = local(after - 1), (local(after) if after < count else None)
                if (
                    last.date() == day
                    and last.utcoffset() == first.utcoffset()
                    and (following is None or following.date() != day)
                ):
                    # A whole day of one offset: the parts of every such day (its slots start at
                    # the same local times) are worked out once, from the grain's keys.
                    phase = (first.utcoffset(), first.time())
                    if phase not in shared:
                        parts = tuple(part(start + slot * i) for i in range(index, after))
                        shared[phase] = parts, frozenset(parts)
                    self._order.append((date, shared[phase][0]))
                    self._days[date] = shared[phase][1]
                    index = after
                    continue
            own = []
            while index < count and local(index).date() == day:
                own.append(part(start + slot * index))
                index += 1
            self._order.append((date, tuple(own)))
            listed.setdefault(date, set()).update(own)
        for date, keys in listed.items():
            self._days[date] = frozenset(keys)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        parts = self._days.get(key[:10])
        return parts is not None and key[10:] in parts

    def __len__(self) -> int:
        return self._count

    def among(self, keys: Iterable[object]) -> set[str]:
        """Return the *keys* that are in this set: ``in`` for each, inlined (a tick asks it of 500,000)."""
        days = self._days
        return {
            key
            for key in keys
            if isinstance(key, str) and (parts := days.get(key[:10])) is not None and key[10:] in parts
        }

    def text_bounds(self) -> tuple[str, str]:
        """
        Return the least and the greatest key as text (``min`` and ``max`` of the set), without a pass.

        Every key is its date (ten characters) and a part: the least is the least part of the least
        date. Sorted text is not time order at fall-back (Berlin's ``T02+01:00`` sorts first).

        :raises ValueError: if there are no keys.
        """
        if not self._days:
            raise ValueError("SlotKeys.text_bounds: no keys.")
        first, last = min(self._days), max(self._days)
        return first + min(self._days[first]), last + max(self._days[last])

    def __iter__(self) -> Iterator[str]:
        return (date + part for date, parts in self._order for part in parts)

    @classmethod
    def _from_iterable(cls, it: Iterable[_T]) -> frozenset[_T]:
        """Return the result of a set operation as a ``frozenset`` (:class:`collections.abc.Set`'s hook)."""
        return frozenset(it)

    def __hash__(self) -> int:
        return self._hash()

    def __repr__(self) -> str:
        if not self._count:
            return f"{type(self).__name__}(no keys)"
        (date, parts), (last, ends) = self._order[0], self._order[-1]
        return f"{type(self).__name__}({date + parts[0]!r} … {last + ends[-1]!r}, {self._count:,} keys)"


@dataclass(frozen=True)
class Day(WallClockGrain):
    """
    Local days, ``2026-03-10``; with ``start_hour=6``, operations days from 06:00 to 06:00.

    A day holds the real instants between its two local starts: 23 hours on a spring-forward
    date, 25 on a fall-back date. A start that falls in a spring-forward gap moves to the
    first real instant after it.

    :param start_hour: Local hour (0 to 23) at which each day starts; default 0 (midnight).
    :raises ValueError: if *start_hour* is not an integer from 0 to 23.
    """

    start_hour: int = 0
    kind: ClassVar[str] = "day"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.start_hour, int) or not 0 <= self.start_hour <= 23:
            raise ValueError(f"Day: start_hour must be an hour from 0 to 23; got {self.start_hour!r}.")

    @property
    def _name_offset(self) -> timedelta:  # type: ignore[override]
        return timedelta(hours=self.start_hour)

    def _floor_wall(self, wall: datetime) -> datetime:
        start = datetime(wall.year, wall.month, wall.day, self.start_hour)  # faster than wall.replace(…)
        return start if start <= wall else start - _DAY

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        return start + _DAY * n

    def _wall_key(self, start: datetime) -> str:
        """Return the local date the period starts on, ``YYYY-MM-DD`` (four-digit years 1 to 9999)."""
        return start.date().isoformat()

    def _wall_name(self, wall: datetime) -> str:
        # The mapping hot path: the day holding *wall* starts on the date *start_hour* hours earlier.
        return (wall - _HOUR * self.start_hour if self.start_hour else wall).date().isoformat()

    def _parameters(self) -> dict[str, Any]:
        return {"start_hour": self.start_hour, "timezone": self.timezone}


@dataclass(frozen=True)
class Week(WallClockGrain):
    """
    Weeks of 7 local days from *start* (default Monday), keyed by their first date.

    ``Week(start="sunday")`` keys the week of 2026-03-10 ``2026-03-08``.

    :param start: Lower-case English weekday name the week starts on.
    :raises ValueError: if *start* is not a weekday name.
    """

    start: str = "monday"
    kind: ClassVar[str] = "week"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.start not in WEEKDAYS:
            raise ValueError(f"Week: start must be one of {', '.join(WEEKDAYS)}; got {self.start!r}.")

    def _floor_wall(self, wall: datetime) -> datetime:
        day = wall.replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=(day.weekday() - WEEKDAYS.index(self.start)) % 7)

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        return start + timedelta(weeks=n)

    _wall_key = Day._wall_key  # the local date of the week's first day

    def _parameters(self) -> dict[str, Any]:
        return {"start": self.start, "timezone": self.timezone}


@dataclass(frozen=True)
class IsoWeek(Week):
    """
    ISO 8601 weeks, Monday to Sunday, keyed by ISO week-numbering year and week: ``2026-W11``.

    The week-numbering year can differ from the calendar year near New Year: 2024-12-30 is in
    ``2025-W01``, and 2026-12-31 in ``2026-W53`` (2026 has 53 ISO weeks).
    """

    start: str = field(default="monday", init=False)
    kind: ClassVar[str] = "iso_week"

    def _wall_key(self, start: datetime) -> str:
        """Return ``YYYY-Www`` (ISO week-numbering year, two-digit week)."""
        year, week, _ = start.isocalendar()
        return f"{year:04d}-W{week:02d}"

    def _parameters(self) -> dict[str, Any]:
        return {"timezone": self.timezone}


@dataclass(frozen=True)
class Month(WallClockGrain):
    """Calendar months from local midnight on the 1st: ``2026-03``."""

    kind: ClassVar[str] = "month"
    months: ClassVar[int] = 1

    def _floor_wall(self, wall: datetime) -> datetime:
        month = (wall.month - 1) // self.months * self.months + 1
        return datetime(wall.year, month, 1)

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        total = start.year * 12 + start.month - 1 + n * self.months
        return datetime(total // 12, total % 12 + 1, 1)

    def _wall_key(self, start: datetime) -> str:
        """Return ``YYYY-MM``."""
        return f"{start.year:04d}-{start.month:02d}"


@dataclass(frozen=True)
class Quarter(Month):
    """Calendar quarters (January, April, July, October): ``2026-Q1``."""

    kind: ClassVar[str] = "quarter"
    months: ClassVar[int] = 3

    def _wall_key(self, start: datetime) -> str:
        """Return ``YYYY-Qn``."""
        return f"{start.year:04d}-Q{(start.month - 1) // 3 + 1}"


@dataclass(frozen=True)
class Year(Month):
    """Calendar years from local midnight on 1 January: ``2026``."""

    kind: ClassVar[str] = "year"
    months: ClassVar[int] = 12

    def _wall_key(self, start: datetime) -> str:
        """Return ``YYYY``."""
        return f"{start.year:04d}"
