"""
Grains: ways of cutting time into periods, each period with exactly one canonical partition key.

A :class:`Grain` cuts the time line of an IANA time zone into :class:`Period` values, half-open
intervals ``[start, end)`` of aware instants. Everything temporal in this package is a grain plus
a little glue: a mapper writes the key of the period that contains an upstream key's instant, a
window lists the periods of a finer grain inside a coarser period, an offset shifts a period.

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
| ``Cron("*/20 9-17 * * *")`` | one cron tick to the next  | ``2026-03-10T09:20``          |
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

**Keys in.** :func:`parse_instant` reads any ISO 8601 date or time that Python's
``datetime.fromisoformat`` reads (``2026-07-30``, ``2026-07-30T09``, ``20260730T0915Z``,
``2026-07-30T09:15:30.25+02:00``, ``2026-W31-4`` …) and our period keys (``2026``,
``2026-03``, ``2026-Q1``, ``2026-W11``). A key without an offset means the grain's time zone;
on fall-back's repeated hour it means the first occurrence (``2026-11-01T01:30`` in New York is
01:30 EDT, 05:30 UTC; write ``2026-11-01T01:30-05:00`` for the second).

Rules followed: ISO 8601 (calendar dates, ISO week dates and week-numbering years, UTC offsets),
the IANA time zone database (through :mod:`zoneinfo`), and cron as Apache Airflow reads it
(``croniter``; ticks on DST days are ours, see :class:`Cron`).
"""

from __future__ import annotations

import re
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property, lru_cache
from importlib import import_module
from itertools import pairwise
from typing import Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from airflow_partitions._common import dump, load, shown

#: The years of the keys a mapper accepts: a period of any grain around them, its neighbours and
#: its members all lie within the years 1 to 9999 that Python's datetime holds (a key in 9999
#: would map to a period whose end, 10000-01-01, no datetime can hold).
FIRST_YEAR, LAST_YEAR = 3, 9997

#: Modules defining grains beyond this one, imported when a stored grain names an unknown kind.
_GRAIN_MODULES = ("airflow_partitions.business", "airflow_partitions.fiscal", "airflow_partitions.retail")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_PERIOD_KEY = re.compile(r"(?P<y>\d{4})(?:-(?:(?P<m>\d{2})|Q(?P<q>[1-4])|W(?P<w>\d{2})))?")
#: A period key of a fiscal or retail calendar: the calendar's label, a year and optionally a unit
#: letter and number (``FY2026``, ``FY2026-Q3``, ``R2026-M01``, ``R2026-W53``). The instants it
#: names depend on the calendar, so only a grain of that calendar reads it (``_calendar_start``).
_CALENDAR_KEY = re.compile(r"(?P<label>[A-Za-z]+)(?P<year>\d{4})(?:-(?P<unit>Q\d|[MW]\d{2}))?")
#: Legacy IANA names of fixed offsets, which people write meaning a region's local time (``EST``
#: for New York): a grain in one warns. ``Etc/GMT+5`` is UTC-05:00 (POSIX signs), also fixed.
_FIXED_ZONE = re.compile(r"EST|MST|HST|Etc/GMT[+-](?!0$)\d{1,2}")
_REGION = {"EST": "America/New_York", "MST": "America/Denver", "HST": "Pacific/Honolulu"}
_EXPECTED_KEYS = (
    "an ISO 8601 date or time such as '2026-07-30', '2026-07-30T09', '2026-07-30T09:15:00Z', "
    "'2026-07-30T09:15+02:00' or '20260730T0915Z', or a period key such as '2026', '2026-03', "
    "'2026-Q1' or '2026-W11'"
)


def time_zone(name: str, *, owner: str) -> ZoneInfo:
    """
    Return the IANA time zone *name* (``"America/New_York"``, ``"UTC"``).

    :raises ValueError: naming *owner* and *name* if it is not a string naming a zone in the
        IANA database as :mod:`zoneinfo` has it.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"{owner}: timezone must be an IANA time zone name such as 'UTC'; got {name!r}.")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{owner}: timezone {name!r} is not an IANA time zone name such as 'UTC' or 'America/New_York'."
        ) from None


def read_key(key: str, input_format: str | None = None, grain: Grain | None = None) -> datetime:
    """
    Return the date and time a partition key names, naive if the key carries no offset.

    Reads every ISO 8601 form ``datetime.fromisoformat`` reads (with ``z`` for ``Z``, as RFC 3339
    section 5.6 allows: ``2026-03-10T09:15:00z``), and the period keys ``YYYY``, ``YYYY-MM``,
    ``YYYY-Qn`` and ``YYYY-Www`` (their first instant). With *input_format*, reads the key with
    ``datetime.strptime`` instead (``"%Y%m%d"`` for ``20260730``). With a fiscal or retail
    *grain*, also reads the labelled keys of its calendar (``FY2026-Q3``, ``R2026-W05``): the
    start of the period they name, aware, in the grain's time zone.

    :raises ValueError: naming the key and the forms expected, if the key is not a string, has
        characters outside ASCII (``strptime`` and the period-key reader would read other
        scripts' digits, fullwidth or Arabic-Indic, as a date), or names no real date or time
        (``2026-02-30``).
    """
    return read_dated(key, input_format, grain)[0]


def read_dated(
    key: str, input_format: str | None = None, grain: Grain | None = None
) -> tuple[datetime, bool]:
    """
    Return :func:`read_key`'s value and whether the key names a local date or period, no time of day.

    Date-only keys are the ISO 8601 dates ``2026-03-10``, ``20260310``, ``2026-W11-2`` and
    ``2026W112``, the period keys (``2026-03``, ``2026-W11``), labelled keys, and keys read with
    an *input_format* that has no time directive (``"%Y%m%d"``). They name a span of a local
    calendar, not an instant of some zone.

    :raises ValueError: as :func:`read_key`.
    """
    if not isinstance(key, str):
        raise ValueError(f"partition key {shown(key)} is not a string; expected {_EXPECTED_KEYS}.")
    if not key.isascii():
        raise ValueError(
            f"partition key {shown(key)} has characters outside ASCII; only ASCII digits are read as a date "
            f"or time: expected {_EXPECTED_KEYS}."
        )
    try:
        if input_format:
            return datetime.strptime(key, input_format), not has_time(input_format)
        # fromisoformat's dates are 7 to 10 characters; with a time of day a key has at least 10,
        # and only a 7-character date (2026W10) leaves room for one: 2026W10T09, not dashed.
        value = datetime.fromisoformat(key[:-1] + "Z" if key[-1:] == "z" else key)
        return value, len(key) <= 10 and (len(key) < 10 or key[4] == "-")
    except ValueError as err:
        match = None if input_format else _PERIOD_KEY.fullmatch(key)
        if match is None:
            labelled = None if input_format or grain is None else _CALENDAR_KEY.fullmatch(key)
            if labelled is not None:
                label, year, unit = labelled["label"], int(labelled["year"]), labelled["unit"] or ""
                return grain._calendar_start(key, label, year, unit).replace(tzinfo=grain.tz), True
            expected = f"a key in the format {input_format!r}" if input_format else _EXPECTED_KEYS
            raise ValueError(f"partition key {shown(key)} is not {expected} ({err}).") from None
        return _period_key_start(key, match), True


@lru_cache(maxsize=64)
def has_time(input_format: str) -> bool:
    """Whether the ``strptime`` format reads a time of day or an offset (``%H``, ``%M``, ``%z`` …)."""
    return re.search(r"%[HIMSfpzcX]", input_format.replace("%%", "")) is not None


def parse_instant(
    key: str, tz: ZoneInfo, input_format: str | None = None, grain: Grain | None = None
) -> datetime:
    """
    Return the aware instant a partition key names (:func:`read_key`); no offset means *tz*.

    :raises ValueError: as :func:`read_key`.
    """
    instant = read_key(key, input_format, grain)
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=tz)


def _period_key_start(key: str, match: re.Match[str]) -> datetime:
    year, month, quarter, week = match["y"], match["m"], match["q"], match["w"]
    try:
        if week:
            return datetime.combine(date.fromisocalendar(int(year), int(week), 1), time())
        if quarter:
            return datetime(int(year), 3 * int(quarter) - 2, 1)
        return datetime(int(year), int(month or 1), 1)
    except ValueError as err:
        raise ValueError(f"partition key {shown(key)} is not {_EXPECTED_KEYS} ({err}).") from None


#: ``T00`` … ``T23``, the hour of a slot key.
_HOURS = tuple(f"T{hour:02d}" for hour in range(24))
#: An hour, a day: ``timedelta(days=n)`` parses keywords, several times slower than ``_DAY * n``.
_HOUR, _DAY = timedelta(hours=1), timedelta(days=1)


def _naive(instant: datetime) -> datetime:
    """
    Return the wall-clock time of *instant* without its zone, as ``instant.replace(tzinfo=None)``.

    ``datetime.combine`` takes no keyword arguments: on Python 3.11 it is four times faster than
    ``replace``, which the mapping and period-building hot paths call for every key and period.
    """
    return datetime.combine(instant.date(), instant.time())


def _resolve(wall: datetime, tz: ZoneInfo) -> datetime:
    """
    Return the first real instant at or after the local wall-clock time *wall*.

    An ambiguous *wall* (repeated by fall-back) means its first occurrence; one skipped by
    spring-forward means the end of the gap (New York's 2026-03-08T02:40 is 03:00 EDT).
    """
    if tz.utcoffset(None) is not None:  # a zone that never changes its offset (UTC): no gap, no repeat
        return datetime.combine(wall.date(), wall.time(), tz)  # (fold means nothing there)
    first = wall.replace(tzinfo=tz, fold=0)
    local = first.astimezone(UTC).astimezone(tz)
    if local.replace(tzinfo=None) == wall.replace(fold=0):
        return local
    # Skipped: fold 1 reads the wall time with the offset after the change (an instant before
    # the gap ends), fold 0 with the one before (after it). Find the change to the second.
    naive = wall.replace(fold=0)
    lo, hi = int(wall.replace(tzinfo=tz, fold=1).timestamp()), int(first.timestamp())
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid, tz).replace(tzinfo=None) >= naive:
            hi = mid
        else:
            lo = mid
    return datetime.fromtimestamp(hi, tz)


@lru_cache(maxsize=1024)
def _offset_changes(zone: str, year: int) -> tuple[tuple[datetime, timedelta, timedelta], ...]:
    """
    Return the changes of *zone*'s UTC offset in UTC calendar *year*, per the IANA tz database.

    Each is ``(instant, offset before, offset after)``, the instant (UTC, whole second) the first
    with the new offset. :mod:`zoneinfo` has no public list of transitions, so the offset is
    sampled every 12 hours and each change found by bisection (two changes less than 12 hours
    apart would be missed). Memoized per zone and year.
    """
    tz = ZoneInfo(zone)
    start = int(datetime(year, 1, 1, tzinfo=UTC).timestamp())
    end = int(datetime(year + 1, 1, 1, tzinfo=UTC).timestamp()) if year < 9999 else start + 365 * 86400
    changes = []
    before = datetime.fromtimestamp(start, tz).utcoffset()
    for lo in range(start, end, 43200):
        hi = min(lo + 43200, end)
        after = datetime.fromtimestamp(hi, tz).utcoffset()
        if after != before:
            was, low = before, lo
            while hi - low > 1:
                mid = (low + hi) // 2
                if datetime.fromtimestamp(mid, tz).utcoffset() == was:
                    low = mid
                else:
                    hi = mid
            changes.append((datetime.fromtimestamp(hi, UTC), was, datetime.fromtimestamp(hi, tz).utcoffset()))
        before = after
    return tuple(changes)


def _changes_between(zone: str, lo: datetime, hi: datetime) -> list[tuple[datetime, timedelta, timedelta]]:
    """Return :func:`_offset_changes` of *zone* at instants ``lo <= c <= hi``."""
    lo, hi = lo.astimezone(UTC), hi.astimezone(UTC)
    return [
        change
        for year in range(lo.year, hi.year + 1)
        for change in _offset_changes(zone, year)
        if lo <= change[0] <= hi
    ]


#: The years :func:`_cut_years` samples; later years repeat the last one's rules.
_CUT_SAMPLE = (1850, 2200)


@lru_cache(maxsize=256)
def _cut_years(zone: str, slot: timedelta) -> frozenset[int]:
    """
    Return the UTC years in which *zone*'s offset changes by no whole number of *slot*.

    Sampled weekly from 1850 to 2200 (years after 2200 count as 2199); changes from or to a local
    mean time with a seconds part (New York's -04:56:02 until 1883) are left out, since keys are
    written to the minute there anyway. A change undone within a week may be missed. Memoized:
    once per zone and slot length per process.
    """
    tz = ZoneInfo(zone)
    first, last = (int(datetime(year, 1, 1, tzinfo=UTC).timestamp()) for year in _CUT_SAMPLE)
    years: set[int] = set()
    before = datetime.fromtimestamp(first, tz)
    for t in range(first + 7 * 86400, last, 7 * 86400):
        after = datetime.fromtimestamp(t, tz)
        change = (after.utcoffset() or timedelta()) - (before.utcoffset() or timedelta())
        whole = not (before.utcoffset() or timedelta()).seconds % 60 and not change.seconds % 60
        if change % slot and whole:
            years.update((before.astimezone(UTC).year, after.astimezone(UTC).year))
        before = after
    return frozenset(years)


def _as_utc(instant: datetime) -> datetime:
    """Return the aware *instant* as a plain UTC ``datetime`` (pendulum's lose ``UTC`` in sums)."""
    utc = instant.astimezone(UTC)
    return datetime.combine(utc.date(), utc.time(), UTC)


def _offset(instant: datetime) -> str:
    offset = instant.utcoffset() or timedelta()
    sign = "-" if offset < timedelta() else "+"
    seconds = int(abs(offset).total_seconds())
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    # Local mean times before standard zones had offsets in seconds (Santiago: -04:42:45).
    return text + f":{seconds % 60:02d}" if seconds % 60 else text


class _once(cached_property):
    """``functools.cached_property`` without the lock Python 3.11 takes on every first access."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
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

    @_once
    def utc(self) -> tuple[datetime, datetime]:
        """The bounds as UTC datetimes: what equality, ordering and hashing use."""
        return self.start.astimezone(UTC), self.end.astimezone(UTC)

    @_once
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
    kind: ClassVar[str]
    _registry: ClassVar[dict[str, type[Grain]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            Grain._registry[cls.kind] = cls

    def __post_init__(self) -> None:
        object.__setattr__(self, "tz", time_zone(self.timezone, owner=type(self).__name__))
        if _FIXED_ZONE.fullmatch(self.timezone):
            region = _REGION.get(self.timezone, "America/New_York")
            warnings.warn(
                f"{type(self).__name__}: timezone {self.timezone!r} is a fixed UTC offset all year, without "
                "daylight saving time, so its days and hours are not a region's local ones; if you meant "
                f"a region's local time, use its IANA name, such as {region!r}.",
                UserWarning,
                stacklevel=3,
            )

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

    def period_of(self, key: str, input_format: str | None = None) -> Period:
        """
        Return the period that contains the instant any ISO 8601 *key* names.

        :raises ValueError: naming the key, if :func:`parse_instant` cannot read it.
        """
        return self.floor(parse_instant(key, self.tz, input_format, self))

    def parse(self, key: str) -> Period:
        """
        Return the period whose canonical key is *key* (the inverse of :meth:`key`).

        :raises ValueError: naming the key and an example canonical key, if *key* is not this
            grain's canonical spelling of a period.
        """
        period = self._named_period(key)
        canonical = self.key(period)
        if canonical != key:
            raise ValueError(
                f"partition key {shown(key)} is not a canonical {self!r} key; the period it falls in is "
                f"written {canonical!r}."
            )
        return period

    def _named_period(self, key: str) -> Period:
        """Return the period a canonical *key* names (before the canonical-spelling check)."""
        return self.period_of(key)

    def _calendar_start(self, key: str, label: str, year: int, unit: str) -> datetime:
        """
        Return the naive local start of the period a labelled calendar *key* names.

        :func:`read_key` splits the key into *label* (``"FY"``), *year* and *unit* (``"Q3"``,
        ``"W05"``, ``""`` for a year). Only fiscal and retail grains read such keys.

        :raises ValueError: naming the key and what was expected.
        """
        raise ValueError(
            f"partition key {shown(key)} is not {_EXPECTED_KEYS}; labelled keys such as 'FY2026' are read "
            f"only by a grain of their own fiscal or retail calendar, not by {self!r}."
        )

    #: Whether the periods tile the time line without gaps (every grain but :class:`Cron`,
    #: whose ticks need not nest in a coarser period).
    tiles: ClassVar[bool] = True

    def members(self, period: Period) -> list[Period]:
        """
        Return the periods of this grain that start within *period*, in order.

        For a tiling grain they tile *period* exactly (no gap, no overlap): an hour holds four
        ``Minutes(15)``, a New York day 23, 24 or 25 ``Hour()`` periods. For :class:`Cron`
        they are the ticks inside *period* (the hourly ticks of a 09:00 to 17:00 weekday).

        :raises ValueError: for a tiling grain whose periods do not start at *period*'s start or
            end at its end (the grains do not nest, e.g. ISO weeks in a month).
        """
        members = []
        start, end = period.utc
        current = self.floor(period.start)
        if current.utc[0] < start and not self.tiles:
            current = self.shift(current, 1)
        while current.utc[0] < end:
            members.append(current)
            current = self.shift(current, 1)
        if self.tiles and (not members or members[0].utc[0] != start or members[-1].utc[1] != end):
            raise ValueError(
                f"{self!r} periods do not tile {period.grain!r} period {period.key!r} "
                f"[{period.start.isoformat()}, {period.end.isoformat()}); pick a grain that nests in it."
            )
        return members

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
        if kind not in Grain._registry:
            # Grains register on import; the scheduler may not have imported their module yet.
            for module in _GRAIN_MODULES:
                import_module(module)
        if kind not in Grain._registry:
            raise ValueError(f"unknown grain kind {kind!r}; known: {sorted(Grain._registry)}.")
        return Grain._registry[kind]._from_parameters(data)

    @classmethod
    def _from_parameters(cls, parameters: dict[str, Any]) -> Grain:
        """Build the grain from :meth:`_parameters`' output (grains nesting values rebuild them)."""
        return cls(**parameters)


class _WallGrain(Grain):
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
        return _naive(instant.astimezone(self.tz)) + self._name_offset

    def _named_period(self, key: str) -> Period:
        return self._period(self._floor_wall(self._named_wall(key)))

    def _period(self, start_wall: datetime) -> Period:
        return Period(_resolve(start_wall, self.tz), _resolve(self._shift_wall(start_wall, 1), self.tz), self)

    def _wall_start(self, period: Period) -> datetime:
        # A start moved forward out of a spring-forward gap floors back to its own wall cut.
        return self._floor_wall(_naive(period.start))

    @abstractmethod
    def _wall_key(self, start: datetime) -> str:
        """Return the canonical key of the period whose naive local start is *start*."""

    def key(self, period: Period) -> str:
        """Return the canonical key of *period*."""
        return self._wall_key(self._wall_start(period))

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
        return self._wall_name(_naive(aware.astimezone(self.tz)))

    def floor(self, instant: datetime) -> Period:
        """Return the period that contains the aware *instant*."""
        period = self._period(self._floor_wall(_naive(instant.astimezone(self.tz))))
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
        return self._period(self._shift_wall(self._wall_start(period), n))


@dataclass(frozen=True)
class Minutes(_WallGrain):
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
        cuts = _cut_years(self.timezone, slot) if 60 % self.n == 0 else frozenset()
        object.__setattr__(self, "_slot", slot)
        object.__setattr__(self, "_cuts", cuts)
        object.__setattr__(self, "_utc_slots", self.timezone == "UTC" and not 60 % self.n)

    #: The slot length, *n* minutes.
    _slot: timedelta = field(init=False, repr=False, compare=False)
    #: The years with offset changes that are no whole number of slots (none in most zones).
    _cuts: frozenset[int] = field(init=False, repr=False, compare=False)
    #: Whether slots are clock-aligned UTC ones, whose keys are their floored UTC wall times.
    _utc_slots: bool = field(init=False, repr=False, compare=False)

    def _named_period(self, key: str) -> Period:
        return super()._named_period(key) if 60 % self.n else self.period_of(key)

    def _absolute_period(self, start: datetime) -> Period:
        """Return the slot of *n* real minutes from the UTC instant *start*."""
        return Period._between(start, start + self._slot, self)

    def floor(self, instant: datetime) -> Period:
        """Return the slot that contains the aware *instant*."""
        if 60 % self.n:
            return super().floor(instant)
        local = instant.astimezone(self.tz)
        into = timedelta(minutes=local.minute % self.n, seconds=local.second, microseconds=local.microsecond)
        if not self._cuts:
            return self._absolute_period(_as_utc(local) - into)
        # An offset change that is not a whole number of slots cuts the slot it falls in.
        slot, start = self._slot, _as_utc(local) - into
        cuts = [c for c in self._cuts_between(start, start + slot) if start < c < start + slot]
        first = max([start, *(c for c in cuts if c <= instant)])
        end = min([start + slot, *(c for c in cuts if c > first)])
        return Period(first.astimezone(self.tz), end.astimezone(self.tz), self)

    def _cuts_between(self, lo: datetime, hi: datetime) -> list[datetime]:
        """Return the instants in ``[lo, hi]`` at which the offset changes by no whole number of slots."""
        slot, last = self._slot, _CUT_SAMPLE[1] - 1
        if not any(min(year, last) in self._cuts for year in range(lo.year, hi.year + 1)):
            return []
        return [
            at
            for at, before, after in _changes_between(self.timezone, lo, hi)
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
        start, target = _as_utc(period.start), _as_utc(period.start) + slot * n
        if not self._cuts_between(min(start, target) - slot, max(start, target) + slot):
            return self._absolute_period(target)
        current = self.floor(period.start)
        while n:
            start = _as_utc(current.start)
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
        return text if self.timezone == "UTC" else text + _offset(start)

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


@dataclass(frozen=True)
class Day(_WallGrain):
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
class Week(_WallGrain):
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
        if self.start not in _WEEKDAYS:
            raise ValueError(f"Week: start must be one of {', '.join(_WEEKDAYS)}; got {self.start!r}.")

    def _floor_wall(self, wall: datetime) -> datetime:
        day = wall.replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=(day.weekday() - _WEEKDAYS.index(self.start)) % 7)

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
class Month(_WallGrain):
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


#: The stretch :func:`most_members` samples: December 2027 through 2028, a leap year, so it
#: holds every month length, a 53-week ISO year's end and the 2028 DST changes of any zone.
_SAMPLE_SPAN = (datetime(2027, 12, 1, tzinfo=UTC), datetime(2029, 1, 1, tzinfo=UTC))
#: How much of it :func:`most_members` walks for cron ticks, which are slow to step through.
_CRON_SAMPLE = timedelta(days=42)


def _sample_periods(grain: Grain) -> list[Period]:
    """Return the periods of *grain* :func:`most_members` inspects (at most a few thousand)."""
    first, last = _SAMPLE_SPAN
    period = grain.floor(first)
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
        period = grain.floor(start)
        end = stop or start + timedelta(hours=48)
        while period.utc[0] < end:
            periods.append(period)
            period = grain.shift(period, 1)
    return periods


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
    for hourly ticks in days, seconds for hourly ticks in a year. Memoized per process: it runs
    once per configuration.

    :raises ValueError: if *member* periods do not tile *grain* periods.
    """
    periods = _sample_periods(grain)
    if member.tiles:  # tiling members of fixed rules: the longest period holds the most
        periods = [max(periods, key=lambda p: p.duration)]
    elif periods[0].duration >= timedelta(hours=23):  # cron ticks, about 1 ms each: six weeks
        periods = [p for p in periods if p.utc[0] < _SAMPLE_SPAN[0] + _CRON_SAMPLE]
    return max(((len(member.members(p)), p) for p in periods), key=lambda pair: pair[0])


@dataclass(frozen=True)
class Cron(Grain):
    """
    Cron periods, from one tick to the next, keyed by the tick: ``2026-03-10T09:00``.

    Keys are written like :class:`Minutes` keys, with minutes and the offset outside UTC
    (``2026-03-10T09:00-04:00`` in New York). The last tick of a day runs to the first of the
    next (17:00 to 09:00 the next weekday above).

    **Ticks.** The local wall-clock times the expression matches, as ``croniter`` reads it
    (Airflow's cron library; presets such as ``@hourly`` as Airflow expands them), each standing
    for real instants by the IANA tz database:

    - an ordinary time: its one instant;
    - a time skipped by spring-forward: the first real instant after the gap, as for the
      wall-clock cuts of :class:`Day` (``30 2 * * *`` in New York ticks at 03:00 EDT on
      2026-03-08, ``2026-03-08T03:00-04:00``; several skipped times make one tick). A cron that
      ticks every hour (hour field ``*``) has no tick for a skipped time instead: its ticks are the
      instants whose local time matches, like :class:`Hour`;
    - a time repeated by fall-back: its first occurrence (``30 1 * * *`` in New York ticks once on
      2026-11-01, at 01:30 EDT, ``2026-11-01T01:30-04:00``), as a key without an offset reads;
      a cron ticking every hour ticks at both occurrences (``30 * * * *`` at 01:30 EDT and EST).

    So a period always contains the instants it is the period of, periods tile time from the
    first tick on, and ``shift`` steps tick by tick both ways. Airflow's ``CronTriggerTimetable``
    differs on DST days only: it runs a skipped time as the wall time read with the offset before
    the change (03:30 EDT above), a repeated one at its second occurrence (01:30 EST), and steps
    crons ticking every hour in real time (in ``Australia/Lord_Howe``, whose clocks go back 30
    minutes, ``@hourly`` runs at 01:00 +11:00, 01:30 +10:30 and 02:00 +10:30 on 2026-04-05; these
    ticks are 01:00 +11:00 and 02:00 +10:30). Its walker breaks the invariants above on those days.

    Each period look-up steps ``croniter`` a few times: more near an offset change, by the
    number of ticks in its length.

    :param expression: Five-field cron expression or preset (``"@hourly"``).
    :raises ValueError: if the expression is invalid or names no date that exists.
    """

    expression: str = "@hourly"
    kind: ClassVar[str] = "cron"
    tiles: ClassVar[bool] = False
    _expanded: str = field(init=False, repr=False, compare=False)
    _hourly: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        from airflow.utils.dates import cron_presets
        from croniter import CroniterBadDateError, croniter

        expression = cron_presets.get(self.expression, self.expression)
        if (
            not isinstance(expression, str)
            or len(expression.split()) != 5
            or not croniter.is_valid(expression)
        ):
            raise ValueError(
                f"Cron: expression {self.expression!r} is not a five-field cron expression or preset "
                "such as '*/15 * * * *' or '@daily'."
            )
        try:
            croniter(expression, datetime(2000, 1, 1)).get_next(datetime)
        except CroniterBadDateError as err:
            raise ValueError(f"Cron: expression {self.expression!r} names no date that exists.") from err
        object.__setattr__(self, "_expanded", expression)
        object.__setattr__(self, "_hourly", croniter(expression).expanded[1] == ["*"])

    def _instants(self, wall: datetime) -> list[datetime]:
        """Return the UTC ticks the matching naive local time *wall* stands for, in order."""
        first = wall.replace(tzinfo=self.tz, fold=0).astimezone(UTC)
        if first.astimezone(self.tz).replace(tzinfo=None) != wall:  # skipped by spring-forward
            return [] if self._hourly else [_resolve(wall, self.tz).astimezone(UTC)]
        second = wall.replace(tzinfo=self.tz, fold=1).astimezone(UTC)
        return [first, second] if self._hourly and second != first else [first]

    def _walls(self, instant: datetime, forward: bool) -> Any:
        """
        Yield the matching naive local times from near *instant*, forward or backward.

        They start far enough out (by the offset changes within two days) that every tick after
        (before) *instant* comes from a later (earlier) yielded time.
        """
        from croniter import croniter

        local = instant.astimezone(self.tz)
        near = _changes_between(self.timezone, instant - timedelta(days=2), instant + timedelta(days=2))
        reach = max((abs(o - local.utcoffset()) for _, *pair in near for o in pair), default=timedelta())
        wall = local.replace(tzinfo=None) + (-reach if forward else reach)
        ticks = croniter(self._expanded, wall + timedelta(microseconds=-1 if forward else 1))
        step = ticks.get_next if forward else ticks.get_prev
        while True:
            yield step(datetime)

    def _tick_at_or_before(self, instant: datetime) -> datetime:
        # First occurrences grow with the wall time: the first wall whose first one is not after
        # the instant has the last first occurrence. Second occurrences (a repeated hour) of
        # earlier walls can come later: walk on while they are after the instant.
        best: datetime | None = None
        for wall in self._walls(instant, forward=False):
            ticks = self._instants(wall)
            if not ticks or (best is None and ticks[0] > instant):
                continue
            best = max([tick for tick in ticks if tick <= instant] + ([best] if best else []))
            if len(ticks) == 1 or ticks[1] <= instant:
                return best
        raise AssertionError("unreachable: croniter walks on")  # pragma: no cover

    def _tick_after(self, instant: datetime) -> datetime:
        # Walk forward to the first wall whose first occurrence is after the instant; a second
        # occurrence of an earlier wall (a repeated hour) may come first.
        later: list[datetime] = []
        for wall in self._walls(instant, forward=True):
            ticks = self._instants(wall)
            later += [tick for tick in ticks if tick > instant]
            if ticks and ticks[0] > instant:
                return min(later)
        raise AssertionError("unreachable: croniter walks on")  # pragma: no cover

    def _period(self, tick: datetime) -> Period:
        return Period(tick.astimezone(self.tz), self._tick_after(tick).astimezone(self.tz), self)

    def floor(self, instant: datetime) -> Period:
        """Return the period from the last tick at or before *instant* to the next tick."""
        return self._period(self._tick_at_or_before(_as_utc(instant)))

    def shift(self, period: Period, n: int) -> Period:
        """Return the period *n* ticks after *period* (before it if *n* is negative)."""
        tick = _as_utc(period.start)
        for _ in range(abs(n)):
            tick = (
                self._tick_after(tick) if n > 0 else self._tick_at_or_before(tick - timedelta(microseconds=1))
            )
        return self._period(tick)

    def key(self, period: Period) -> str:
        """Return the tick as ``YYYY-MM-DDTHH:MM``, plus the offset outside UTC."""
        s = period.start
        text = f"{s.year:04d}-{s.month:02d}-{s.day:02d}T{s.hour:02d}:{s.minute:02d}"
        return text if self.timezone == "UTC" else text + _offset(s)

    def _parameters(self) -> dict[str, Any]:
        return {"expression": self.expression, "timezone": self.timezone}
