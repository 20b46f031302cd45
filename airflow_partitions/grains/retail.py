"""
Retail calendars of 52/53-week years (the NRF's 4-5-4 and any other year end) as grains.

- :class:`RetailCalendar`: which 52/53-week year. It ends on a *weekday* nearest the last day
  of *year_end_month* (``rule="nearest"``) or on the last such weekday in that month
  (``rule="last"``), is named by the calendar year of its first or its last month, and gives a
  53-week year's extra week to one month. The default is the NRF's calendar.
- ``RetailYear()``: 52 or 53 weeks. NRF: Sunday after the Saturday nearest 31 January to the next
  such Saturday, named by the calendar year it begins in: ``R2025`` is 2 February 2025 to
  31 January 2026.
- ``RetailQuarter()``: 13 weeks (the one holding the extra month 14 in a 53-week year): ``R2025-Q1``.
- ``RetailMonth(pattern="4-5-4")``: 4, 5 and 4 weeks in each quarter, the last month (by default)
  taking the 53rd week: ``R2025-M01`` (the NRF's "February", 2 February to 1 March 2025).
- ``RetailWeek()``: the seven days after the year end's weekday (NRF: Sunday to Saturday):
  ``R2025-W01`` to ``R2025-W52`` (``W53`` in 53-week years).

Weeks, months and quarters nest in the retail year, so ``TemporalWindow(RetailWeek())`` under
``TemporalMapper(RetailMonth())`` lists a month's 4 or 5 weeks (6 for a 4-4-5 year's last month
in a 53-week year). Another year end is a calendar passed to every grain: an Australian
retailer's 4-4-5 year ending on the Saturday nearest 30 June, named by the year it ends in, is
``RetailMonth("4-4-5", calendar=RetailCalendar(year_end_month=6, named_by="end", prefix="FY"))``,
whose ``FY2027`` is 28 June 2026 to 3 July 2027 (53 weeks). Sources: the National Retail
Federation's 4-5-4 calendar (https://nrf.com/resources/4-5-4-calendar), whose published years
this module reproduces (fiscal 2023: 29 January 2023 to 3 February 2024, 53 weeks), and the
52-53-week taxable year of 26 CFR 1.441-2 (a year ending on the same day of the week, either the
last such day in a calendar month or the one nearest its last day).
"""

from __future__ import annotations

from bisect import bisect_right
from calendar import monthrange
from dataclasses import dataclass, field, fields, replace
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from itertools import accumulate
from typing import Any, ClassVar

from airflow_partitions.grains.clock import WEEKDAYS
from airflow_partitions.grains.labelled import LabelledGrain, check_prefix
from airflow_partitions.grains.stored import dump, load

#: Weeks of the three months of each quarter, per pattern.
_PATTERNS = {"4-5-4": (4, 5, 4), "4-4-5": (4, 4, 5), "5-4-4": (5, 4, 4)}
_RULES = ("nearest", "last")
_NAMED_BY = ("start", "end")
#: The spellings of *extra_week* besides a month number; 1 and 12 are stored as these.
_EXTRA_WEEK_NAMES = {"first": 1, "last": 12}


@dataclass(frozen=True, kw_only=True)
class RetailCalendar:
    """
    A 52/53-week year (a retail or "4-4-5" fiscal year): where it ends, how it is named, its keys' prefix.

    The year ends on *weekday*: with ``rule="nearest"`` the one nearest the last day of
    *year_end_month* (up to three days before or after it, so possibly in the next month), with
    ``rule="last"`` the last one in that month. It starts the day after the previous year's end,
    so it has 52 weeks, or 53 when the end moved a week later. It is named by the calendar year
    of its first month (``named_by="start"``) or of its last, *year_end_month* (``"end"``). The
    extra week of a 53-week year goes to month *extra_week* of the year (``"last"``, month 12,
    by default; ``"first"`` is month 1); its quarter then has 14 weeks. Weeks are numbered 1 to
    52 or 53 through the year whichever month takes the extra one.

    The default is the National Retail Federation's calendar: the Saturday nearest 31 January,
    named by the year it begins in (``R2025`` is 2 February 2025 to 31 January 2026; ``R2023``,
    29 January 2023 to 3 February 2024, has 53 weeks, the 53rd in January, ``R2023-M12``).
    ``RetailCalendar(year_end_month=6, named_by="end", prefix="FY")`` is an Australian retail
    year ending on the Saturday nearest 30 June: ``FY2027`` is 28 June 2026 to 3 July 2027
    (53 weeks). ``RetailCalendar(year_end_month=9, rule="last", named_by="end", prefix="FY",
    extra_week="first")`` ends on the last Saturday of September and puts the 53rd week in the
    first quarter, as Apple Inc. does (its fiscal 2023, 25 September 2022 to 30 September 2023,
    had 53 weeks and a 14-week first quarter).

    Passed as ``calendar=`` to :class:`RetailYear`, :class:`RetailQuarter`, :class:`RetailMonth`
    and :class:`RetailWeek`; keys are ``FY2027``, ``FY2027-Q1``, ``FY2027-M01`` and
    ``FY2027-W53`` with the *prefix* given. Calendar dates only: the grains read them in their
    own *timezone*. A frozen, hashable value.

    Rules' sources: the 52-53-week taxable year of 26 CFR 1.441-2 (the same day of the week,
    either the last in a calendar month or the nearest the month's last day); the NRF's 4-5-4
    calendar (https://nrf.com/resources/4-5-4-calendar).

    :param year_end_month: Month (1 to 12) the year ends in or nearest the end of; default 1.
    :param weekday: Lower-case English name of the weekday every year and week ends on; default
        ``"saturday"`` (weeks then run Sunday to Saturday).
    :param rule: ``"nearest"`` (default) or ``"last"``.
    :param named_by: ``"start"`` (default, the NRF's) or ``"end"``.
    :param prefix: ASCII letters before the year in keys; default ``"R"``.
    :param extra_week: The month (1 to 12, or ``"first"`` or ``"last"``, the default) that takes
        the 53rd week.
    :raises ValueError: at construction, naming the parameter and the values it takes, if any
        value is not one of those above.
    """

    year_end_month: int = 1
    weekday: str = "saturday"
    rule: str = "nearest"
    named_by: str = "start"
    prefix: str = "R"
    extra_week: str | int = "last"
    _ends: dict[int, date] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        if type(self.year_end_month) is not int or not 1 <= self.year_end_month <= 12:
            raise ValueError(
                "RetailCalendar: year_end_month must be the month the year ends in (or nearest the end "
                f"of), 1 (January) to 12 (December); got {self.year_end_month!r}."
            )
        if self.weekday not in WEEKDAYS:
            raise ValueError(
                f"RetailCalendar: weekday must be one of {', '.join(WEEKDAYS)}; got {self.weekday!r}."
            )
        if self.rule not in _RULES:
            raise ValueError(
                "RetailCalendar: rule must be 'nearest' (the weekday nearest the last day of year_end_month) "
                f"or 'last' (the last such weekday in it); got {self.rule!r}."
            )
        if self.named_by not in _NAMED_BY:
            raise ValueError(
                "RetailCalendar: named_by must be 'start' (named by the calendar year of its first month) "
                f"or 'end' (of its last month); got {self.named_by!r}."
            )
        check_prefix("RetailCalendar", self.prefix)
        extra = (
            _EXTRA_WEEK_NAMES.get(self.extra_week) if isinstance(self.extra_week, str) else self.extra_week
        )
        if type(extra) is not int or not 1 <= extra <= 12:
            raise ValueError(
                "RetailCalendar: extra_week must be the month of the year that takes a 53-week year's extra "
                f"week: 'first', 'last' or a number from 1 to 12; got {self.extra_week!r}."
            )
        # One spelling per month, so that equal calendars compare and serialize alike.
        names = {number: name for name, number in _EXTRA_WEEK_NAMES.items()}
        object.__setattr__(self, "extra_week", names.get(extra, extra))

    @property
    def extra_month(self) -> int:
        """The month of the year (1 to 12) that takes a 53-week year's extra week."""
        return self.extra_week if isinstance(self.extra_week, int) else _EXTRA_WEEK_NAMES[self.extra_week]

    @property
    def is_nrf_year(self) -> bool:
        """Whether the years are the NRF's, whatever the prefix: the grains then store no calendar."""
        return replace(self, prefix=NRF.prefix) == NRF

    def last_day(self, year: int) -> date:
        """
        Return the last day of the year named *year*: ``date(2026, 1, 31)`` for the NRF's 2025.

        :raises ValueError: if that day is outside the years 1 to 9999.
        """
        anchor = year + int(self.named_by == "start" and self.year_end_month < 12)
        end = self._ends.get(anchor)
        if end is None:
            last = date(anchor, self.year_end_month, monthrange(anchor, self.year_end_month)[1])
            weekday = WEEKDAYS.index(self.weekday)
            if self.rule == "last":
                end = last - timedelta(days=(last.weekday() - weekday) % 7)
            else:
                end = last + timedelta(days=(weekday - last.weekday() + 3) % 7 - 3)
            self._ends[anchor] = end
        return end

    def first_day(self, year: int) -> date:
        """Return the first day of the year named *year*: ``date(2025, 2, 2)`` for the NRF's 2025."""
        return self.last_day(year - 1) + timedelta(days=1)

    def weeks(self, year: int) -> int:
        """Return the number of weeks, 52 or 53, of the year named *year*."""
        return (self.last_day(year) - self.last_day(year - 1)).days // 7

    def locate(self, day: date) -> tuple[int, int]:
        """Return the name of the year holding *day* and the index (0 to 52) of its week in that year."""
        year = day.year - int(self.named_by == "start" and self.year_end_month < 12)
        if day > self.last_day(year):
            year += 1
        elif day < self.first_day(year):
            year -= 1
        return year, (day - self.first_day(year)).days // 7

    def week_start(self, year: int, week: int) -> datetime:
        """Return the naive local start (midnight) of week index *week* (0 to 52) of the year named *year*."""
        return datetime.combine(self.first_day(year) + timedelta(weeks=week), time())

    def serialize(self) -> dict[str, Any]:
        """Return the calendar as sorted, plain JSON, every parameter written (``format_version`` 1)."""
        return dump(**{f.name: getattr(self, f.name) for f in fields(self) if f.init})

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> RetailCalendar:
        """
        Rebuild a calendar from :meth:`serialize`'s output.

        :raises ValueError: as :func:`~airflow_partitions.grains.stored.load`, or as the constructor.
        """
        parameters = dict(load(data, cls))
        parameters.pop("format_version", None)
        return cls(**parameters)


#: The National Retail Federation's calendar: the default of every retail grain.
NRF = RetailCalendar()


@lru_cache(maxsize=256)
def _first_weeks(unit: str, pattern: str, extra_month: int, weeks: int) -> tuple[int, ...]:
    """
    Return the index of the first week of each period of *unit* (``""``, Q, M or W) in a year.

    The year has *weeks* weeks (52 or 53); in a 53-week year month *extra_month* has one more.
    """
    if unit == "W":
        return tuple(range(weeks))
    months = list(_PATTERNS[pattern] * 4)
    months[extra_month - 1] += weeks - 52
    lengths = {"": [weeks], "Q": [sum(months[i : i + 3]) for i in range(0, 12, 3)], "M": months}[unit]
    return tuple(accumulate(lengths[:-1], initial=0))


@dataclass(frozen=True)
class _RetailGrain(LabelledGrain):
    """The retail calendar shared by the four retail grains; *unit* is the grain's key unit."""

    pattern: str = "4-5-4"
    prefix: str = "R"
    calendar: RetailCalendar = field(default=NRF, kw_only=True)
    unit: ClassVar[str]
    units: ClassVar[str] = "QMW"

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = type(self).__name__
        if not isinstance(self.pattern, str) or self.pattern not in _PATTERNS:
            raise ValueError(
                f"{owner}: pattern must be one of {', '.join(map(repr, _PATTERNS))} "
                f"(weeks of each quarter's three months); got {self.pattern!r}."
            )
        self._check_prefix()
        if not isinstance(self.calendar, RetailCalendar):
            raise ValueError(
                f"{owner}: calendar must be a RetailCalendar such as RetailCalendar(year_end_month=6, "
                f"named_by='end', prefix='FY'); got {self.calendar!r}."
            )
        # The prefix is the calendar's; this grain's own prefix (older than calendars) sets it
        # when the calendar leaves it at the NRF's.
        if self.calendar.prefix == NRF.prefix:
            object.__setattr__(self, "calendar", replace(self.calendar, prefix=self.prefix))
        elif self.prefix == NRF.prefix:
            object.__setattr__(self, "prefix", self.calendar.prefix)
        elif self.prefix != self.calendar.prefix:
            raise ValueError(
                f"{owner}: prefix {self.prefix!r} and the calendar's prefix {self.calendar.prefix!r} differ; "
                "give the prefix once, in RetailCalendar(prefix=...)."
            )

    def __repr__(self) -> str:
        calendar = "" if self.calendar.is_nrf_year else f", calendar={self.calendar!r}"
        return (
            f"{type(self).__name__}(timezone={self.timezone!r}, pattern={self.pattern!r}, "
            f"prefix={self.prefix!r}{calendar})"
        )

    def _firsts(self, year: int, unit: str | None = None) -> tuple[int, ...]:
        """Return the first week of each period of *unit* (default: this grain's) in year *year*."""
        unit = self.unit if unit is None else unit
        return _first_weeks(unit, self.pattern, self.calendar.extra_month, self.calendar.weeks(year))

    def _floor_wall(self, wall: datetime) -> datetime:
        year, week = self.calendar.locate(wall.date())
        firsts = self._firsts(year)
        return self.calendar.week_start(year, firsts[bisect_right(firsts, week) - 1])

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        year, week = self.calendar.locate(start.date())
        firsts = self._firsts(year)
        count = len(firsts)  # periods per year: 1, 4 or 12 (weeks shift by seven days)
        year, index = divmod(year * count + firsts.index(week) + n, count)
        return self.calendar.week_start(year, self._firsts(year)[index])

    def _wall_key(self, start: datetime) -> str:
        year, week = self.calendar.locate(start.date())
        return self._label(year, self.unit, self._firsts(year).index(week) + 1)

    def _unit_start(self, year: int, unit: str, number: int) -> datetime | None:
        if not unit:
            return self.calendar.week_start(year, 0)
        firsts = self._firsts(year, unit)
        return self.calendar.week_start(year, firsts[number - 1]) if 1 <= number <= len(firsts) else None

    def _parameters(self) -> dict[str, Any]:
        stored = {} if self.calendar.is_nrf_year else {"calendar": self.calendar.serialize()}
        return {"pattern": self.pattern, "prefix": self.prefix, "timezone": self.timezone, **stored}

    @classmethod
    def _from_parameters(cls, parameters: dict[str, Any]) -> _RetailGrain:
        if "calendar" in parameters:
            parameters = {**parameters, "calendar": RetailCalendar.deserialize(parameters["calendar"])}
        return cls(**parameters)


_RETAIL_ERRORS = """
    :param pattern: Weeks of each quarter's three months: ``"4-5-4"`` (default, the NRF's),
        ``"4-4-5"`` or ``"5-4-4"``.
    :param prefix: ASCII letters before the year; default ``"R"``. The calendar's prefix, if it
        sets one other than ``"R"``, is used instead.
    :param calendar: The :class:`RetailCalendar` (year end, naming, the month taking a 53rd
        week); keyword only; default the NRF's.
    :raises ValueError: at construction, if *pattern* is not one of the three, *prefix* not ASCII
        letters or not the calendar's, *calendar* not a :class:`RetailCalendar`, or the time zone
        unknown; when reading a key, naming the key and the calendar, if it is a labelled key
        that names no period of this calendar (``FY2026``, ``R2026-W53`` in a 52-week year).
"""


@dataclass(frozen=True, repr=False)
class RetailYear(_RetailGrain):
    __doc__ = f"""
    Retail years of 52 or 53 weeks (NRF: named by the calendar year they begin in): ``R2025``.

    With the default calendar, the NRF's, a retail year ends on the Saturday nearest 31 January
    (up to three days before or after it) and starts on the Sunday after the previous one:
    ``R2023`` is 29 January 2023 to 3 February 2024 (53 weeks), ``R2025`` 2 February 2025 to
    31 January 2026, ``R2028`` 30 January 2028 to 3 February 2029 (53 weeks). The NRF calls
    ``R2025`` "fiscal 2025". With *calendar*, the years :class:`RetailCalendar` gives:
    ``RetailYear(calendar=RetailCalendar(year_end_month=6, named_by="end", prefix="FY"))``'s
    ``FY2027`` is 28 June 2026 to 3 July 2027 (53 weeks).

    Key: *prefix* and the year, ``R2025``. Reads, besides any ISO 8601 key, its calendar's keys
    (``R2025``, ``R2025-Q1``, ``R2025-M01``, ``R2025-W01``), months per *pattern*.

    Time zones: years run from local midnight on the day after the calendar's *weekday* (NRF:
    Sunday) in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar); the year end is the 52-53-week "nearest" rule
    of 26 CFR 1.441-2 with Saturday and January.
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_year"
    unit: ClassVar[str] = ""


@dataclass(frozen=True, repr=False)
class RetailQuarter(_RetailGrain):
    __doc__ = f"""
    Retail quarters of 13 weeks (NRF: the fourth has 14 in a 53-week year): ``R2025-Q1``.

    Key: the retail year's key, ``-Q`` and the quarter 1 to 4. ``R2025-Q1`` is 2 February to
    3 May 2025; ``R2023-Q4`` is 29 October 2023 to 3 February 2024 (14 weeks). The quarter
    holding the calendar's *extra_week* month has the 53rd week.

    Time zones: quarters run from local midnight on the day after the calendar's *weekday* (NRF:
    Sunday) in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar).
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_quarter"
    unit: ClassVar[str] = "Q"


@dataclass(frozen=True, repr=False)
class RetailMonth(_RetailGrain):
    __doc__ = f"""
    Retail months of 4 or 5 weeks, per *pattern*: ``R2025-M01`` (the NRF's "February").

    Key: the retail year's key, ``-M`` and the month 01 to 12; ``M01`` is the month the NRF
    names February, ``M12`` January. With ``"4-5-4"``, ``R2025-M01`` is 2 February to 1 March
    2025 (4 weeks) and ``R2025-M02`` 2 March to 5 April 2025 (5 weeks). In a 53-week year the
    calendar's *extra_week* month, by default the last, takes the 53rd week: ``R2023-M12`` is
    31 December 2023 to 3 February 2024 (5 weeks; 6 with ``"4-4-5"``). Under
    ``RetailCalendar(year_end_month=6, named_by="end", prefix="FY")`` with ``"4-4-5"``,
    ``FY2027-M12`` is 23 May to 3 July 2027 (6 weeks).

    Time zones: months run from local midnight on the day after the calendar's *weekday* (NRF:
    Sunday) in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar), whose 53-week years give January 5 weeks.
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_month"
    unit: ClassVar[str] = "M"


@dataclass(frozen=True, repr=False)
class RetailWeek(_RetailGrain):
    __doc__ = f"""
    Retail weeks (NRF: Sunday to Saturday), numbered within the retail year: ``R2025-W01``.

    Key: the retail year's key, ``-W`` and the week 01 to 52 (53 in a 53-week year).
    ``R2025-W01`` is 2 to 8 February 2025; ``R2023-W53`` is 28 January to 3 February 2024.
    The weeks do not depend on *pattern* nor on *extra_week*; they only say how this grain reads
    month and quarter keys. A week ends on the calendar's *weekday*.

    Time zones: weeks run from local midnight on the day after the calendar's *weekday* (NRF:
    Sunday) in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar).
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_week"
    unit: ClassVar[str] = "W"

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        return start + timedelta(weeks=n)
