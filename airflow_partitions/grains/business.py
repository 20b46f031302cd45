"""
Business calendars and business days: which dates are working days, and the grain of them.

- :class:`BusinessCalendar`: which dates are working days. A weekmask (Monday to Friday by
  default), the public holidays of a country and subdivision and the closures of a financial
  market from the ``holidays`` library (``country="US", subdiv="NY"``, ``market="NYSE"``), and
  explicit extra holidays and extra working days. A frozen, hashable value.
- :class:`BusinessDay`: the grain whose periods are a calendar's business days, local days keyed
  ``2026-11-25``. ``TemporalMapper(BusinessDay(cal), offset=-1)`` maps a key to the business
  day before it (T-1); ``TemporalWindow(BusinessDay(cal))`` under a week, month, quarter or fiscal
  mapper waits for exactly the working days of that period.

Pure (no Airflow import). Holiday look-ups run no I/O: the ``holidays`` library computes each
year's dates from code. A year's business days are worked out once per process and calendar, in a
bounded process-wide cache keyed by the frozen calendar (the scheduler rebuilds our objects from
their stored form every tick; equal calendars share the entries).

**Upgrading the holidays library.** The stored form of a calendar is its configuration (codes,
weekmask, explicit dates), not the holiday dates nor the library's version. Airflow's scheduler
keeps a pending rollup while its *rollup fingerprint* is unchanged; the fingerprint
(``airflow.timetables.base.compute_rollup_fingerprint``) is the JSON of each asset's partition
mapper, which an upgrade leaves identical. So a rollup pending across an upgrade is kept, with the
keys it already received, and the scheduler, which calls the mapper's ``to_upstream`` afresh on
every tick, evaluates it against the new holiday list from the next tick after its restart: a day
that became a holiday is no longer waited for (the rollup may fire at once); a day that stopped
being one is waited for (the rollup is held until that day's key arrives). Mapping a key to a
business day can change the same way (a key on a new holiday is refused, or rolled). Editing a
calendar in the Dag file (an extra holiday, another weekmask) does change the fingerprint, and the
scheduler then deletes the pending rollups of that Dag with the keys they had received.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from importlib.metadata import version
from typing import TYPE_CHECKING, Any, ClassVar

from airflow_partitions.grains.clock import WEEKDAYS, Day
from airflow_partitions.grains.days import _as_date, _require_roll
from airflow_partitions.grains.grain import Period, WallClockGrain
from airflow_partitions.grains.keys import OutsideCalendar
from airflow_partitions.grains.stored import dump, load
from airflow_partitions.grains.zones import naive

if TYPE_CHECKING:
    from airflow_partitions.grains.sessions import ExchangeCalendar

#: Years of business days kept by the process-wide cache: (calendar, year) pairs.
_CACHE_SIZE = 1024

_WEEKMASK_EXPECTED = (
    "7 characters '1' (working) or '0', Monday first, such as '1111100', or lower-case weekday "
    "names such as ('monday', 'tuesday', 'wednesday', 'thursday', 'friday')"
)


def _weekmask(value: Any) -> str:
    if isinstance(value, str) and len(value) == 7 and set(value) <= {"0", "1"}:
        mask = value
    elif isinstance(value, tuple | list | set | frozenset) and all(name in WEEKDAYS for name in value):
        mask = "".join("1" if name in value else "0" for name in WEEKDAYS)
    else:
        raise ValueError(f"BusinessCalendar: weekmask must be {_WEEKMASK_EXPECTED}; got {value!r}.")
    if "1" not in mask:
        raise ValueError(
            f"BusinessCalendar: weekmask {value!r} has no working day; expected {_WEEKMASK_EXPECTED}."
        )
    return mask


def _iso_dates(value: Any, name: str) -> tuple[str, ...]:
    if not isinstance(value, tuple | list | set | frozenset):
        raise ValueError(
            f"BusinessCalendar: {name} must be a list of ISO 8601 dates such as ['2026-12-24']; "
            f"got {value!r}."
        )
    return tuple(sorted({_iso_date(item, name) for item in value}))


def _iso_date(item: Any, name: str) -> str:
    if type(item) is date:
        return item.isoformat()
    if isinstance(item, str) and len(item) == 10:
        try:
            if date.fromisoformat(item).isoformat() == item:
                return item
        except ValueError:
            pass
    raise ValueError(
        f"BusinessCalendar: {name} entry {item!r} is not an ISO 8601 calendar date written "
        "YYYY-MM-DD, such as '2026-12-24', nor a datetime.date."
    )


def _check_codes(country: Any, subdiv: Any, market: Any) -> None:
    """Refuse codes the installed ``holidays`` library does not list (imported only when needed)."""
    if country is None:
        if subdiv is not None:
            raise ValueError(
                f"BusinessCalendar: subdiv {subdiv!r} needs a country, e.g. country='US', subdiv='NY'."
            )
        if market is None:
            return
    import holidays

    library = f"the holidays library {version('holidays')}"
    if country is not None:
        countries = holidays.list_supported_countries()
        if not isinstance(country, str) or country not in countries:
            raise ValueError(
                f"BusinessCalendar: country {country!r} is not a country code of {library}: expected an "
                "ISO 3166-1 alpha-2 or alpha-3 code it lists, such as 'US', 'GB' or 'DEU' "
                "(holidays.list_supported_countries())."
            )
        if subdiv is not None and (not isinstance(subdiv, str) or subdiv not in countries[country]):
            known = ", ".join(countries[country]) or "none"
            raise ValueError(
                f"BusinessCalendar: subdiv {subdiv!r} is not a subdivision of country {country!r} in "
                f"{library}; expected one of its codes: {known}."
            )
    if market is not None:
        markets = holidays.list_supported_financial()
        if not isinstance(market, str) or market not in markets:
            raise ValueError(
                f"BusinessCalendar: market {market!r} is not a market code of {library}: expected an "
                f"ISO 10383 MIC or a name it lists: {', '.join(sorted(markets))}."
            )


@lru_cache(maxsize=_CACHE_SIZE)
def _business_ordinals(calendar: BusinessCalendar, year: int) -> tuple[int, ...]:
    """Return the proleptic ordinals of *calendar*'s business days in *year*, ascending."""
    if not 1 <= year <= 9999:
        raise ValueError(f"{calendar!r}: business days exist for the years 1 to 9999 only; got year {year}.")
    closed = set(_library_holidays(calendar, year))
    closed.update(date.fromisoformat(day).toordinal() for day in calendar.extra_holidays)
    opened = {date.fromisoformat(day).toordinal() for day in calendar.extra_workdays}
    first, last = date(year, 1, 1).toordinal(), date(year, 12, 31).toordinal()
    # date.fromordinal(1), 0001-01-01, is a Monday: the weekday of ordinal o is (o - 1) % 7.
    return tuple(
        o
        for o in range(first, last + 1)
        if o in opened or (calendar.weekmask[(o - 1) % 7] == "1" and o not in closed)
    )


def _library_holidays(calendar: BusinessCalendar, year: int) -> Iterable[int]:
    """Return the ordinals of the ``holidays`` library's holiday dates in *year* for *calendar*."""
    if calendar.country is None and calendar.market is None:
        return ()
    import holidays

    # Ask for the neighbouring years too: an observed day can fall in the year before its
    # holiday (New Year's Day 2028 is a Saturday, observed in the US on Friday 2027-12-31).
    years = range(max(year - 1, 1), min(year + 1, 9999) + 1)
    found: list[date] = []
    if calendar.country is not None:
        found.extend(holidays.country_holidays(calendar.country, subdiv=calendar.subdiv, years=years))
    if calendar.market is not None:
        found.extend(holidays.financial_holidays(calendar.market, years=years))
    return [day.toordinal() for day in found if day.year == year]


@dataclass(frozen=True, kw_only=True)
class BusinessCalendar:
    """
    Which dates are business days: a weekmask, less public and market holidays, plus extra dates.

    ``BusinessCalendar(country="US", subdiv="NY")``: Monday to Friday without New York State's
    public holidays (2026-11-26, Thanksgiving, is closed; so is 2026-07-03, Independence Day
    observed). ``BusinessCalendar(market="NYSE")``: the New York Stock Exchange's trading days
    (closed on Good Friday, 2026-04-03). ``BusinessCalendar(weekmask="1111110")``: Monday to
    Saturday, no holidays.

    A date is a business day if it is listed in *extra_workdays*, or if its weekday is working in
    *weekmask* and it is neither a holiday of *country*/*subdiv* or of *market* (observed days
    included, as the ``holidays`` library lists them) nor listed in *extra_holidays*. Dates are
    calendar dates without a time zone; :class:`BusinessDay` reads them in its own zone.

    Rules' sources: country codes are ISO 3166-1 (``"US"``, ``"GB"``, ``"DEU"``), subdivisions
    the ``holidays`` library's codes (mostly ISO 3166-2 without the country prefix: ``"NY"``,
    ``"ENG"``), markets ISO 10383 MICs or the names the library lists (``"XNYS"`` or ``"NYSE"``);
    the holiday dates are those of the installed ``holidays`` library (computed from its code, no
    I/O). Dates are ISO 8601 calendar dates, ``YYYY-MM-DD``.

    Stored form (sorted JSON, empty fields left out), e.g. ``{"country": "US", "format_version":
    1, "subdiv": "NY", "weekmask": "1111100"}``.

    :param weekmask: Working weekdays, Monday first: ``"1111100"`` (default, Monday to Friday) or
        a sequence of lower-case weekday names (``("sunday", "monday", …, "thursday")``).
    :param country: ``holidays`` country code, e.g. ``"US"``; default none.
    :param subdiv: Subdivision code of *country*, e.g. ``"NY"``.
    :param market: ``holidays`` financial market code, e.g. ``"NYSE"``.
    :param extra_holidays: More closed dates, ``["2026-12-24"]`` (strings or ``datetime.date``).
    :param extra_workdays: Dates that are business days whatever the rest says (a working
        Saturday, a holiday the office works).
    :raises ValueError: at construction, naming the argument: a weekmask in neither form or with
        no working day; a country, subdivision or market the installed ``holidays`` library does
        not list (a subdivision without a country); a date that is not ``YYYY-MM-DD``; a date both
        in *extra_holidays* and in *extra_workdays*.
    """

    weekmask: str = "1111100"
    country: str | None = None
    subdiv: str | None = None
    market: str | None = None
    extra_holidays: tuple[str, ...] = ()
    extra_workdays: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "weekmask", _weekmask(self.weekmask))
        object.__setattr__(self, "extra_holidays", _iso_dates(self.extra_holidays, "extra_holidays"))
        object.__setattr__(self, "extra_workdays", _iso_dates(self.extra_workdays, "extra_workdays"))
        if both := sorted(set(self.extra_holidays) & set(self.extra_workdays)):
            raise ValueError(
                f"BusinessCalendar: {', '.join(both)} listed both in extra_holidays and in extra_workdays; "
                "expected each date in one of them."
            )
        _check_codes(self.country, self.subdiv, self.market)

    def __repr__(self) -> str:
        changed = (f for f in fields(self) if getattr(self, f.name) != f.default)
        return f"BusinessCalendar({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in changed)})"

    def is_business_day(self, day: date) -> bool:
        """
        Return whether *day* (a ``datetime.date``; a datetime counts by its date) is a business day.

        :raises ValueError: if *day* is not a date, or lies outside the years 1 to 9999.
        """
        day = _as_date(day, "BusinessCalendar.is_business_day")
        days = _business_ordinals(self, day.year)
        index = bisect_left(days, day.toordinal())
        return index < len(days) and days[index] == day.toordinal()

    def roll(self, day: date, convention: str = "raise") -> date:
        """
        Return *day* if it is a business day, else the business day *convention* names.

        ``"raise"`` refuses a day that is not a business day; ``"following"`` takes the next
        business day, ``"preceding"`` the previous one; ``"modifiedfollowing"`` the next unless it
        is in another month, then the previous (``"modifiedpreceding"`` the reverse). The same
        conventions as ``numpy.busday_offset``'s ``roll``. With ``BusinessCalendar(country="US")``:
        ``roll(date(2026, 11, 28), "preceding")`` is 2026-11-27, ``"following"`` 2026-11-30.

        :raises OutsideCalendar: (a ``ValueError``) naming the day, its neighbouring business days
            and the conventions, for a day that is not a business day under ``"raise"``.
        :raises ValueError: for an unknown convention or a *day* that is not a date.
        """
        day = _as_date(day, "BusinessCalendar.roll")
        _require_roll(convention, "BusinessCalendar.roll")
        forward = convention in ("raise", "following", "modifiedfollowing")
        rolled = self._nearest(day, forward)
        if rolled == day:
            return day
        if convention == "raise":
            raise OutsideCalendar(
                f"{day.isoformat()} is not a business day of {self!r} (the previous is "
                f"{self._nearest(day, False).isoformat()}, the next {rolled.isoformat()}); expected a "
                "business day, or a roll convention such as 'following' or 'preceding'."
            )
        if convention.startswith("modified") and rolled.month != day.month:
            return self._nearest(day, not forward)
        return rolled

    def shift(self, day: date, n: int, roll: str = "raise") -> date:
        """
        Return the business day *n* business days after *day* (before it if *n* is negative).

        *day* is first rolled to a business day with the *roll* convention (see :meth:`roll`),
        then moved, as ``numpy.busday_offset(day, n, roll=roll)`` does. With
        ``BusinessCalendar(country="US", subdiv="NY")``, ``shift(date(2026, 11, 27), -1)`` is
        2026-11-25 (Thanksgiving, the 26th, is skipped); ``shift(date(2026, 11, 28), -1,
        roll="following")`` is 2026-11-27.

        :raises ValueError: as :meth:`roll`; if *n* is not an integer; if the result would lie
            outside the years 1 to 9999.
        """
        if not isinstance(n, int) or isinstance(n, bool):
            raise ValueError(f"BusinessCalendar.shift: n must be a whole number of business days; got {n!r}.")
        start = self.roll(day, roll)
        return self._at(start.year, bisect_left(_business_ordinals(self, start.year), start.toordinal()) + n)

    def business_days(self, start: date, end: date) -> list[date]:
        """
        Return the business days from *start* (included) to *end* (excluded), in order.

        ``BusinessCalendar(country="US").business_days(date(2026, 11, 23), date(2026, 11, 30))`` is
        2026-11-23, -24, -25 and -27. Size: at most the days between the two dates.

        :raises ValueError: if *start* or *end* is not a date.
        """
        start = _as_date(start, "BusinessCalendar.business_days")
        end = _as_date(end, "BusinessCalendar.business_days")
        found: list[int] = []
        for year in range(start.year, end.year + 1) if start < end else ():
            days = _business_ordinals(self, year)
            found.extend(days[bisect_left(days, start.toordinal()) : bisect_left(days, end.toordinal())])
        return [date.fromordinal(o) for o in found]

    def _nearest(self, day: date, forward: bool) -> date:
        """Return the first business day on or after *day* (*forward*), else on or before it."""
        days = _business_ordinals(self, day.year)
        ordinal = day.toordinal()
        return self._at(day.year, bisect_left(days, ordinal) if forward else bisect_right(days, ordinal) - 1)

    def _at(self, year: int, index: int) -> date:
        """Return business day number *index* of *year* (0 is the first), counting across years."""
        days = _business_ordinals(self, year)
        while index < 0:
            year -= 1
            days = _business_ordinals(self, year)
            index += len(days)
        while index >= len(days):
            index -= len(days)
            year += 1
            days = _business_ordinals(self, year)
        return date.fromordinal(days[index])

    def serialize(self) -> dict[str, Any]:
        """Return the calendar as sorted, plain JSON, leaving out empty fields (``format_version`` 1)."""
        return dump(
            weekmask=self.weekmask,
            country=self.country,
            subdiv=self.subdiv,
            market=self.market,
            extra_holidays=list(self.extra_holidays) or None,
            extra_workdays=list(self.extra_workdays) or None,
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> BusinessCalendar:
        """
        Rebuild a calendar from :meth:`serialize`'s output.

        :raises ValueError: as the constructor (a code the installed ``holidays`` library no longer
            lists), or if *data* was written by a newer airflow-partitions.
        """
        return cls(**{name: value for name, value in load(data, cls).items() if name != "format_version"})


#: Monday to Friday, no holidays: the default calendar.
MONDAY_TO_FRIDAY = BusinessCalendar()


def is_day_calendar(calendar: Any) -> bool:
    """
    Return whether *calendar* is a business calendar: a :class:`BusinessCalendar` or an ``ExchangeCalendar``.

    An :class:`~airflow_partitions.grains.sessions.ExchangeCalendar`'s business days are its
    session dates.
    """
    from airflow_partitions.grains.sessions import ExchangeCalendar

    return isinstance(calendar, BusinessCalendar | ExchangeCalendar)


def calendar_from_stored(data: dict[str, Any]) -> BusinessCalendar | ExchangeCalendar:
    """
    Rebuild a business calendar from its stored form: an exchange's (``{"exchange": "XNYS", …}``) or ours.

    :raises ImportError: for an exchange's calendar without the ``exchanges`` extra.
    :raises ValueError: as the calendar's ``deserialize``.
    """
    if "exchange" in data:
        from airflow_partitions.grains.sessions import ExchangeCalendar

        return ExchangeCalendar.deserialize(data)
    return BusinessCalendar.deserialize(data)


@dataclass(frozen=True)
class BusinessDay(Day):
    """
    The business days of a :class:`BusinessCalendar`, as local days: key ``2026-11-25``.

    A period is the whole local day (from local midnight, or from *start_hour*, to the same time
    the next day: 23 or 25 real hours on a DST change day) of a business day; other days belong
    to no period. :meth:`shift` moves by business days, so ``TemporalMapper(BusinessDay(cal),
    offset=-1)`` maps a key to the previous business day (T-1): with ``cal =
    BusinessCalendar(country="US", subdiv="NY")`` and ``timezone="America/New_York"``,
    ``2026-11-27`` maps to ``2026-11-25`` (Thanksgiving skipped) and ``2026-11-30`` to
    ``2026-11-27``. As a window's grain, ``TemporalWindow(BusinessDay(cal))`` lists the business
    days that start within a week, month, quarter or fiscal period (no tiling: ``tiles`` is
    false, as for cron grains).

    A key on a day that is not a business day (``2026-11-28``, a Saturday) is refused by
    :meth:`floor` with the default ``roll="raise"``: ``TemporalMapper`` raises ``ValueError``
    and the scheduler logs the key as failed to map, creating no run. With ``roll="following"``
    or ``"preceding"`` (or the ``"modified…"`` conventions, see :meth:`BusinessCalendar.roll`),
    such a key moves to the next or previous business day instead, before any offset is applied,
    as ``numpy.busday_offset`` does: under ``roll="following", offset=-1`` a Saturday maps to the
    Friday before it. Canonical keys (:meth:`parse`) are always business days, whatever *roll*.

    With an :class:`~airflow_partitions.grains.sessions.ExchangeCalendar` the business days are
    the exchange's session dates (``BusinessDay(ExchangeCalendar("XNYS"), timezone="America/New_York")``:
    2026-11-26 and Good Friday, 2026-04-03, are not); the period is still the whole local day
    (the session's hours are :class:`~airflow_partitions.grains.sessions.TradingSession`'s).

    Rules' sources: the calendar's (``holidays`` library codes, ISO 3166, ISO 10383, or
    ``exchange_calendars``); keys are ISO 8601 calendar dates, the local date in *timezone* (IANA)
    the day starts on.

    :param calendar: The business calendar, a :class:`BusinessCalendar` or an
        :class:`~airflow_partitions.grains.sessions.ExchangeCalendar`; default Monday to Friday
        without holidays.
    :param roll: What :meth:`floor` does with an instant on a day that is not a business day:
        ``"raise"`` (default), ``"following"``, ``"preceding"``, ``"modifiedfollowing"``,
        ``"modifiedpreceding"``.
    :param start_hour: Local hour (0 to 23) each day starts at; default 0.
    :raises ValueError: at construction, for a calendar that is neither a :class:`BusinessCalendar`
        nor an ``ExchangeCalendar``, an unknown *roll*, or the errors of
        :class:`~airflow_partitions.grains.Day`.
    :raises OutsideCalendar: (a ``ValueError``) from :meth:`floor` (under ``roll="raise"``) and
        :meth:`parse`, naming the local date, for a day that is not a business day.
    """

    calendar: BusinessCalendar | ExchangeCalendar = field(default_factory=BusinessCalendar)
    roll: str = "raise"
    start_hour: int = field(default=0, kw_only=True)
    kind: ClassVar[str] = "business_day"
    tiles: ClassVar[bool] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if not is_day_calendar(self.calendar):
            raise ValueError(
                "BusinessDay: calendar must be a BusinessCalendar such as BusinessCalendar(country='US') or "
                f"an ExchangeCalendar such as ExchangeCalendar('XNYS'); got {self.calendar!r}."
            )
        _require_roll(self.roll, "BusinessDay")

    def _business_start(self, wall: datetime, convention: str) -> datetime:
        """Return the naive local start of the business day holding *wall*, rolled by *convention*."""
        start = super()._floor_wall(wall)
        day = start.date()
        if self.calendar.is_business_day(day):
            return start
        if convention == "raise":
            raise OutsideCalendar(
                f"{day.isoformat()} (the local date in {self.timezone}) is not a business day of "
                f"{self.calendar!r}; expected a key on a business day, or BusinessDay(roll='following') "
                "or roll='preceding' to move such keys to the next or previous business day."
            )
        return datetime.combine(self.calendar.roll(day, convention), start.time())

    def _floor_wall(self, wall: datetime) -> datetime:
        return self._business_start(wall, self.roll)

    _wall_name = WallClockGrain._wall_name  # not Day's: the date is checked (or rolled) by _floor_wall

    def _named_period(self, key: str) -> Period:
        # A key names its own date: one that is not a business day is refused whatever roll says.
        return self._period(self._business_start(self._named_wall(key), "raise"))

    def wall_start(self, period: Period) -> datetime:
        # A period of this grain is a business day already: its key and shifts need no calendar look-up.
        return Day._floor_wall(self, naive(period.start))

    def shift(self, period: Period, n: int) -> Period:
        """Return the business day *n* business days after *period* (before it if *n* is negative)."""
        start = self.wall_start(period)
        return self._period(datetime.combine(self.calendar.shift(start.date(), n), start.time()))

    def members(self, period: Period) -> list[Period]:
        """
        Return the business days that start within *period*, in order.

        Under ``Week()``, ``Month()`` or ``Quarter()`` in the same time zone: exactly the
        calendar's business days of that week, month or quarter (the week of 2026-11-23 with US
        holidays: ``2026-11-23``, ``-24``, ``-25``, ``-27``). Size: at most the period's days.
        """
        start, end = period.utc
        first = period.start.astimezone(self.tz).date() - timedelta(days=1)
        last = period.end.astimezone(self.tz).date() + timedelta(days=1)
        hour = time(self.start_hour)
        days = (self._period(datetime.combine(d, hour)) for d in self.calendar.business_days(first, last))
        return [day for day in days if start <= day.utc[0] < end]

    def _parameters(self) -> dict[str, Any]:
        return {
            "calendar": self.calendar.serialize(),
            "roll": self.roll,
            "start_hour": self.start_hour,
            "timezone": self.timezone,
        }

    @classmethod
    def _from_parameters(cls, parameters: dict[str, Any]) -> BusinessDay:
        return cls(**{**parameters, "calendar": calendar_from_stored(parameters["calendar"])})
