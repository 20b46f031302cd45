"""
The NRF retail calendar (4-5-4, and its 4-4-5 and 5-4-4 variants) as grains.

- ``RetailYear()``: 52 or 53 weeks, Sunday after the Saturday nearest 31 January to the next
  such Saturday, named by the calendar year it begins in: ``R2025`` is 2 February 2025 to
  31 January 2026.
- ``RetailQuarter()``: 13 weeks (the fourth 14 in a 53-week year): ``R2025-Q1``.
- ``RetailMonth(pattern="4-5-4")``: 4, 5 and 4 weeks in each quarter, the last month taking the
  53rd week: ``R2025-M01`` (the NRF's "February", 2 February to 1 March 2025).
- ``RetailWeek()``: Sunday to Saturday: ``R2025-W01`` to ``R2025-W52`` (``W53`` in 53-week years).

Weeks, months and quarters nest in the retail year, so ``TemporalWindow(RetailWeek())`` under
``TemporalMapper(RetailMonth())`` lists a month's 4 or 5 weeks (6 for a 4-4-5 year's last month
in a 53-week year). Source: the National Retail Federation's 4-5-4 calendar
(https://nrf.com/resources/4-5-4-calendar), whose published years this module reproduces
(fiscal 2023: 29 January 2023 to 3 February 2024, 53 weeks).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from itertools import accumulate
from typing import Any, ClassVar

from airflow_partitions.grains.labelled import LabelledGrain

#: Weeks of the three months of each quarter, per pattern.
_PATTERNS = {"4-5-4": (4, 5, 4), "4-4-5": (4, 4, 5), "5-4-4": (5, 4, 4)}
_SATURDAY = 5


@lru_cache(maxsize=1024)
def _year_start(year: int) -> date:
    """Return the Sunday retail year *year* starts on: the day after the Saturday nearest 31 January."""
    january_31 = date(year, 1, 31)
    nearest_saturday = january_31 + timedelta(days=(_SATURDAY - january_31.weekday() + 3) % 7 - 3)
    return nearest_saturday + timedelta(days=1)


def _locate(day: date) -> tuple[int, int]:
    """Return the retail year holding *day* and the index (0 to 52) of its week in that year."""
    year = day.year if day >= _year_start(day.year) else day.year - 1
    return year, (day - _year_start(year)).days // 7


def _week_start(year: int, week: int) -> datetime:
    """Return the naive local start (Sunday 00:00) of week index *week* of retail year *year*."""
    return datetime.combine(_year_start(year) + timedelta(weeks=week), time())


@lru_cache(maxsize=16)
def _first_weeks(unit: str, pattern: str) -> tuple[int, ...]:
    """Return the index of the first week of each period of *unit* (``""``, Q, M or W) in a year."""
    if unit == "W":
        return tuple(range(53))
    weeks = {"": (52,), "Q": (13,) * 4, "M": _PATTERNS[pattern] * 4}[unit]
    return tuple(accumulate(weeks[:-1], initial=0))


@dataclass(frozen=True)
class _RetailGrain(LabelledGrain):
    """The NRF retail calendar shared by the four retail grains; *unit* is the grain's key unit."""

    pattern: str = "4-5-4"
    prefix: str = "R"
    unit: ClassVar[str]
    units: ClassVar[str] = "QMW"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.pattern, str) or self.pattern not in _PATTERNS:
            raise ValueError(
                f"{type(self).__name__}: pattern must be one of {', '.join(map(repr, _PATTERNS))} "
                f"(weeks of each quarter's three months); got {self.pattern!r}."
            )
        self._check_prefix()

    @property
    def _firsts(self) -> tuple[int, ...]:
        return _first_weeks(self.unit, self.pattern)

    def _floor_wall(self, wall: datetime) -> datetime:
        year, week = _locate(wall.date())
        return _week_start(year, self._firsts[bisect_right(self._firsts, week) - 1])

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        year, week = _locate(start.date())
        count = len(self._firsts)
        year, index = divmod(year * count + self._firsts.index(week) + n, count)
        return _week_start(year, self._firsts[index])

    def _wall_key(self, start: datetime) -> str:
        year, week = _locate(start.date())
        return self._label(year, self.unit, self._firsts.index(week) + 1)

    def _unit_start(self, year: int, unit: str, number: int) -> datetime | None:
        if not unit:
            return _week_start(year, 0)
        firsts = _first_weeks(unit, self.pattern)
        count = (_year_start(year + 1) - _year_start(year)).days // 7 if unit == "W" else len(firsts)
        return _week_start(year, firsts[number - 1]) if 1 <= number <= count else None

    def _parameters(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "prefix": self.prefix, "timezone": self.timezone}


_RETAIL_ERRORS = """
    :param pattern: Weeks of each quarter's three months: ``"4-5-4"`` (default, the NRF's),
        ``"4-4-5"`` or ``"5-4-4"``.
    :param prefix: ASCII letters before the year; default ``"R"``.
    :raises ValueError: at construction, if *pattern* is not one of the three, *prefix* not ASCII
        letters, or the time zone unknown; when reading a key, naming the key, if it is a labelled
        key that names no period of this calendar (``FY2026``, ``R2026-W53`` in a 52-week year).
"""


@dataclass(frozen=True)
class RetailYear(_RetailGrain):
    __doc__ = f"""
    NRF retail years of 52 or 53 weeks, named by the calendar year they begin in: ``R2025``.

    A retail year ends on the Saturday nearest 31 January (up to three days before or after it)
    and starts on the Sunday after the previous one: ``R2023`` is 29 January 2023 to 3 February
    2024 (53 weeks), ``R2025`` 2 February 2025 to 31 January 2026, ``R2028`` 30 January 2028 to
    3 February 2029 (53 weeks). The NRF calls ``R2025`` "fiscal 2025".

    Key: *prefix* and the year, ``R2025``. Reads, besides any ISO 8601 key, its calendar's keys
    (``R2025``, ``R2025-Q1``, ``R2025-M01``, ``R2025-W01``), months per *pattern*.

    Time zones: years run from local midnight on Sunday in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar); the year end is the 52-53-week "nearest" rule
    of 26 CFR 1.441-2 with Saturday and January.
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_year"
    unit: ClassVar[str] = ""


@dataclass(frozen=True)
class RetailQuarter(_RetailGrain):
    __doc__ = f"""
    NRF retail quarters of 13 weeks (the fourth has 14 in a 53-week year): ``R2025-Q1``.

    Key: the retail year's key, ``-Q`` and the quarter 1 to 4. ``R2025-Q1`` is 2 February to
    3 May 2025; ``R2023-Q4`` is 29 October 2023 to 3 February 2024 (14 weeks).

    Time zones: quarters run from local midnight on Sunday in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar).
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_quarter"
    unit: ClassVar[str] = "Q"


@dataclass(frozen=True)
class RetailMonth(_RetailGrain):
    __doc__ = f"""
    NRF retail months of 4 or 5 weeks, per *pattern*: ``R2025-M01`` (the NRF's "February").

    Key: the retail year's key, ``-M`` and the month 01 to 12; ``M01`` is the month the NRF
    names February, ``M12`` January. With ``"4-5-4"``, ``R2025-M01`` is 2 February to 1 March
    2025 (4 weeks) and ``R2025-M02`` 2 March to 5 April 2025 (5 weeks). In a 53-week year the
    last month takes the 53rd week: ``R2023-M12`` is 31 December 2023 to 3 February 2024
    (5 weeks; 6 with ``"4-4-5"``).

    Time zones: months run from local midnight on Sunday in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar), whose 53-week years give January 5 weeks.
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_month"
    unit: ClassVar[str] = "M"


@dataclass(frozen=True)
class RetailWeek(_RetailGrain):
    __doc__ = f"""
    NRF retail weeks, Sunday to Saturday, numbered within the retail year: ``R2025-W01``.

    Key: the retail year's key, ``-W`` and the week 01 to 52 (53 in a 53-week year).
    ``R2025-W01`` is 2 to 8 February 2025; ``R2023-W53`` is 28 January to 3 February 2024.
    The weeks do not depend on *pattern*; it only says how this grain reads month keys.

    Time zones: weeks run from local midnight on Sunday in *timezone* (default ``"UTC"``).

    Rule's source: the National Retail Federation's 4-5-4 calendar
    (https://nrf.com/resources/4-5-4-calendar).
    {_RETAIL_ERRORS}"""

    kind: ClassVar[str] = "retail_week"
    unit: ClassVar[str] = "W"

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        return start + timedelta(weeks=n)
