"""
Fiscal calendars as grains: fiscal years starting in any month, their quarters, and fiscal months.

- ``FiscalYear(start_month=7)``: July to June, keyed ``FY2026`` (July 2025 to June 2026).
- ``FiscalQuarter(start_month=7)``: its thirds, keyed ``FY2026-Q3`` (January to March 2026).
- ``FiscalMonth(start_day=26)``: the 26th to the 25th, keyed ``2026-03`` (26 February to
  25 March 2026).

A fiscal month is named by the calendar month it ends in (``2026-03``: 26 February to
25 March 2026), the fiscal year by the calendar year of its last month (``named_by="end"``,
the default: ``FY2026`` is July 2025 to June 2026) or of its first (``named_by="start"``).
Every grain here is an ordinary grain: ``TemporalMapper``, ``TemporalWindow``, rollups, fan-outs
and offsets work with them as with ``Month()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from airflow_partitions.grains.grain import WallClockGrain
from airflow_partitions.grains.labelled import LabelledGrain

_NAMED_BY = ("end", "start")


def _check_start_day(owner: str, start_day: Any) -> None:
    if type(start_day) is not int or not 1 <= start_day <= 28:
        raise ValueError(
            f"{owner}: start_day must be a day of the month from 1 to 28 (days every month has); "
            f"got {start_day!r}."
        )


class _FiscalMonths(WallClockGrain):
    """
    Periods of :attr:`months` fiscal months, each fiscal month from local midnight on ``start_day``.

    A fiscal month is identified by the index (``year * 12 + month - 1``) of the calendar month
    it is named by, the month it ends in: with ``start_day=26``, 26 February to 25 March is March.
    """

    start_day: int
    #: Fiscal months per period: 1, 3 or 12.
    months: ClassVar[int]

    @property
    def _anchor(self) -> int:
        """The month of the year (0 to 11) naming the first fiscal month of each period group."""
        return 0

    def _named_month(self, wall: datetime) -> int:
        """Return the index of the month naming the fiscal month that holds the naive local *wall*."""
        return wall.year * 12 + wall.month - 1 + int(self.start_day > 1) - int(wall.day < self.start_day)

    def _start(self, named: int) -> datetime:
        """Return the naive local start of the fiscal month named by month index *named*."""
        month = named - int(self.start_day > 1)
        return datetime(month // 12, month % 12 + 1, self.start_day)

    def _floor_wall(self, wall: datetime) -> datetime:
        named = self._named_month(wall)
        return self._start(named - (named - self._anchor) % self.months)

    def _shift_wall(self, start: datetime, n: int) -> datetime:
        return self._start(self._named_month(start) + n * self.months)


@dataclass(frozen=True, kw_only=True)
class FiscalMonth(_FiscalMonths):
    """
    Fiscal months from local midnight on *start_day* to the same day of the next month.

    Key: ``YYYY-MM``, the calendar month the fiscal month **ends** in: with ``start_day=26``,
    ``2026-03`` is 26 February 2026 00:00 to 26 March 2026 00:00 (the 26th to the 25th), and
    2026-03-26 is in ``2026-04``. With ``start_day=1`` (the default) the fiscal months are the
    calendar months. Naming by the end month follows the usual closing-date convention (the
    books of "March" close on the 25th of March), and makes every key parse with the ISO 8601
    reader: ``2026-03`` read as an instant is 1 March, inside the fiscal month it names, so
    ``TemporalMapper(FiscalQuarter(...))`` maps fiscal month keys without any special case.

    Time zones: months run from local midnight in *timezone* (default ``"UTC"``); a month holding
    a DST change is an hour shorter or longer in real time.

    Nests in :class:`FiscalQuarter` and :class:`FiscalYear` with the same *start_day*.

    :param start_day: Day of the month (1 to 28) each fiscal month starts on; keyword only.
    :raises ValueError: if *start_day* is not an integer from 1 to 28, or the time zone is unknown.
    """

    start_day: int = 1
    kind: ClassVar[str] = "fiscal_month"
    months: ClassVar[int] = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_start_day(type(self).__name__, self.start_day)

    def _wall_key(self, start: datetime) -> str:
        """Return ``YYYY-MM``, the calendar month the fiscal month ends in."""
        named = self._named_month(start)
        return f"{named // 12:04d}-{named % 12 + 1:02d}"

    def _parameters(self) -> dict[str, Any]:
        return {"start_day": self.start_day, "timezone": self.timezone}


@dataclass(frozen=True, kw_only=True)
class _FiscalCalendar(_FiscalMonths, LabelledGrain):
    """The fiscal calendar shared by :class:`FiscalQuarter` and :class:`FiscalYear`."""

    start_month: int
    start_day: int = 1
    named_by: str = "end"
    prefix: str = "FY"
    units: ClassVar[str] = "Q"

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = type(self).__name__
        if type(self.start_month) is not int or not 1 <= self.start_month <= 12:
            raise ValueError(
                f"{owner}: start_month must be the month the fiscal year starts in, 1 (January) to "
                f"12 (December); got {self.start_month!r}."
            )
        _check_start_day(owner, self.start_day)
        if self.named_by not in _NAMED_BY:
            raise ValueError(
                f"{owner}: named_by must be 'end' (FY2026 ends in 2026) or 'start' (FY2026 starts in "
                f"2026); got {self.named_by!r}."
            )
        self._check_prefix()

    @property
    def _anchor(self) -> int:
        return self.start_month - 1

    def _year_first(self, named: int) -> int:
        """Return the index of the month naming the first fiscal month of the year holding *named*."""
        return named - (named - self._anchor) % 12

    def _year_name(self, first: int) -> int:
        """Return the number of the fiscal year whose first fiscal month is named by *first*."""
        return (first if self.named_by == "start" else first + 11) // 12

    def _unit_start(self, year: int, unit: str, number: int) -> datetime | None:
        last = year * 12 + (self._anchor - 1) % 12  # the month naming year's last fiscal month
        first = year * 12 + self._anchor if self.named_by == "start" else last - 11
        if unit == "Q" and 1 <= number <= 4:
            return self._start(first + 3 * (number - 1))
        return None if unit else self._start(first)

    def _parameters(self) -> dict[str, Any]:
        return {
            "named_by": self.named_by,
            "prefix": self.prefix,
            "start_day": self.start_day,
            "start_month": self.start_month,
            "timezone": self.timezone,
        }


@dataclass(frozen=True, kw_only=True)
class FiscalYear(_FiscalCalendar):
    """
    Fiscal years of 12 fiscal months, the first named by *start_month*: ``FY2026``.

    Key: *prefix* and the year, ``FY2026``. With ``named_by="end"`` (the default) the year is named
    by the calendar year its last month falls in, with ``"start"`` by that of its first month:
    ``FiscalYear(start_month=7)`` maps ``2026-03-15`` to ``FY2026`` (1 July 2025 to 1 July 2026),
    ``FiscalYear(start_month=7, named_by="start")`` maps it to ``FY2025``. With
    ``start_month=1`` both namings agree (the calendar year). With ``start_day=26`` the year
    starts on the 26th of the month before *start_month* (fiscal months are named by the month
    they end in; see :class:`FiscalMonth`), so ``FiscalYear(start_month=7, start_day=26)``'s
    ``FY2026`` is 26 June 2025 to 26 June 2026.

    Reads, besides any ISO 8601 key, its own calendar's keys: ``FY2026`` and ``FY2026-Q3``.
    Rolls up over ``Month()`` (``start_day=1``), :class:`FiscalMonth` and :class:`FiscalQuarter`
    of the same *start_day* and *start_month*: ``FY2026`` over ``Month()`` is ``2025-07`` …
    ``2026-06``.

    Time zones: years run from local midnight in *timezone* (default ``"UTC"``).

    Rules: fiscal years named by their end year are the common usage (the US federal
    government's FY2026 is October 2025 to September 2026, 31 U.S.C. 1102; Australia's and
    Microsoft's FY2026 end in June 2026); naming by the start year is the other convention
    (Japan's and India's fiscal year 2025 starts in April 2025).

    :param start_month: Month (1 to 12) the fiscal year starts in; required, keyword only.
    :param start_day: Day (1 to 28) each fiscal month starts on; default 1.
    :param named_by: ``"end"`` (default) or ``"start"``.
    :param prefix: ASCII letters before the year; default ``"FY"``.
    :raises ValueError: at construction, if *start_month* is not an integer from 1 to 12,
        *start_day* not one from 1 to 28, *named_by* neither ``"end"`` nor ``"start"``, *prefix*
        not ASCII letters, or the time zone unknown; when reading a key, naming the key, if it
        is a labelled key of another calendar (``R2026``, ``FY2026-Q5``).
    """

    kind: ClassVar[str] = "fiscal_year"
    months: ClassVar[int] = 12

    def _wall_key(self, start: datetime) -> str:
        """Return *prefix* and the fiscal year, ``FY2026``."""
        return self._label(self._year_name(self._named_month(start)))


@dataclass(frozen=True, kw_only=True)
class FiscalQuarter(_FiscalCalendar):
    """
    Fiscal quarters of 3 fiscal months, Q1 starting the fiscal year: ``FY2026-Q3``.

    Key: the fiscal year's key, ``-Q`` and the quarter 1 to 4: ``FiscalQuarter(start_month=7)``
    maps ``2026-03-15`` to ``FY2026-Q3`` (January to March 2026). The year is named as by
    :class:`FiscalYear` with the same parameters.

    Reads, besides any ISO 8601 key, its own calendar's keys: ``FY2026-Q3`` and ``FY2026`` (its
    first quarter). Rolls up over ``Month()`` (``start_day=1``) or :class:`FiscalMonth` of the
    same *start_day*, and fans out to them: ``FY2026-Q3`` → ``2026-01``, ``2026-02``, ``2026-03``.

    Time zones: quarters run from local midnight in *timezone* (default ``"UTC"``).

    Rules: as :class:`FiscalYear`; quarters are the fiscal year's consecutive thirds.

    :param start_month: Month (1 to 12) the fiscal year starts in; required, keyword only.
    :param start_day: Day (1 to 28) each fiscal month starts on; default 1.
    :param named_by: ``"end"`` (default) or ``"start"``.
    :param prefix: ASCII letters before the year; default ``"FY"``.
    :raises ValueError: as :class:`FiscalYear`.
    """

    kind: ClassVar[str] = "fiscal_quarter"
    months: ClassVar[int] = 3

    def _wall_key(self, start: datetime) -> str:
        """Return the fiscal year's key and the quarter, ``FY2026-Q3``."""
        named = self._named_month(start)
        first = self._year_first(named)
        return self._label(self._year_name(first), "Q", (named - first) // 3 + 1)
