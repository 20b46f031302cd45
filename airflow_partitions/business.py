"""
Business-day windows: a month's business days, for Airflow's ``RollupMapper`` and ``FanOutMapper``.

:class:`BusinessDayWindow` is the window of Airflow's documented plugin example ("Custom partition
mappers, windows, and timetables in plugins"), with business calendars. The calendars and the
business-day grain are pure values in :mod:`airflow_partitions.grains.business`, importable from
here too, where 0.1.0 had them (``from airflow_partitions.business import BusinessCalendar``).
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.partition_mappers.window import Window

from airflow_partitions.grains.business import (
    MONDAY_TO_FRIDAY,
    BusinessCalendar,
    BusinessDay,
    calendar_from_stored,
    is_day_calendar,
)
from airflow_partitions.grains.days import ROLLS
from airflow_partitions.grains.grain import Period
from airflow_partitions.grains.stored import dump, load

if TYPE_CHECKING:
    from airflow_partitions.grains.sessions import ExchangeCalendar

__all__ = ["ROLLS", "BusinessCalendar", "BusinessDay", "BusinessDayWindow"]


class BusinessDayWindow(Window):
    """
    Roll a calendar month up over its business days: Monday to Friday, or a calendar's.

    The downstream period is a calendar month, given as its start (day 1, as Airflow's
    ``StartOfMonthMapper`` decodes ``"2026-03"``); the members are the month's business days, each
    as a day start in the same time zone as the period start, so the paired upstream mapper
    writes them as daily keys. Without a calendar, March 2026 has 22 (``2026-03-02`` …
    ``2026-03-31``, without the weekends) and a month 20 to 23; weekdays follow
    :meth:`datetime.weekday` (ISO 8601 weeks, Monday first). With
    ``calendar=BusinessCalendar(country="US")``, November 2026 has 19 (``2026-11-11``, Veterans
    Day, and ``2026-11-26``, Thanksgiving, are not waited for).

    As Airflow's docs ("Custom partition mappers, windows, and timetables in plugins") use it, in
    Airflow's own ``RollupMapper`` under ``StartOfMonthMapper``::

        RollupMapper(
            upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"),
            window=BusinessDayWindow(),
        )  # "2026-03-10" -> "2026-03", fires once the 22 weekdays of March have arrived

    There keys are compared as core compares them, by spelling: the members are day starts that
    ``StartOfMonthMapper`` writes as ``2026-03-02`` …, a weekend key (``2026-03-07``) is held in
    the month's pending run without counting, and ``2026-03-10T00:00:00`` does not count for
    ``2026-03-10``. Our rollup does better (``airflow-partitions check`` says so, as ``info``)::

        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Month()),
            window=BusinessDayWindow(),
        )  # the same runs; a weekend key is refused on arrival, every spelling of a day counts

    There the members are the business days of :class:`BusinessDay` in the mapper's time zone,
    and a key of another day is refused when it arrives (``ValueError``, audit-logged by Airflow)
    instead of opening a pending run that would never count it.

    It also fans one monthly key out to its business days, under Airflow's ``FanOutMapper``
    (``TemporalFanOutMapper`` defaults the downstream mapper to ``StartOfDayMapper()``)::

        FanOutMapper(
            upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"),
            window=BusinessDayWindow(),
            downstream_mapper=StartOfDayMapper(),
        )  # "2026-03" -> "2026-03-02", "2026-03-03", … "2026-03-31"

    Under core's ``StartOfMonthMapper`` the downstream period is given as its start (day 1, as
    it decodes ``"2026-03"``), and members are day starts in the same time zone. They keep the
    period start's time zone and wall-clock time, so a local-time month enumerates local days
    across DST changes (a day is a date, not 24 hours); a start with a fixed UTC offset (decoded
    from a key with ``%z``) yields naive wall-clock days instead, which the paired mapper reads
    in its own time zone.

    With an :class:`~airflow_partitions.grains.sessions.ExchangeCalendar`, the business days are
    the exchange's session dates: ``BusinessDayWindow(ExchangeCalendar("XNYS"))`` waits for the 20
    sessions of November 2026 (Thanksgiving, 2026-11-26, has none; 2026-11-27, an early close, is a
    session) and 21 of April 2026 (Good Friday, 2026-04-03, closed).

    Stored form: ``{"format_version": 1}`` for Monday to Friday (what the first release wrote,
    which still reads back to it), else ``{"calendar": {…}, "format_version": 1}``.

    :param calendar: The business calendar, a :class:`BusinessCalendar` or an ``ExchangeCalendar``;
        default Monday to Friday without holidays.
    :raises ValueError: at construction, for a calendar that is neither a :class:`BusinessCalendar`
        nor an ``ExchangeCalendar``;
        from :meth:`to_upstream`, if the period start is not a datetime on day 1 of a month at
        midnight (the paired upstream mapper must decode to month starts).
    """

    #: What Airflow's ``RollupMapper`` checks its upstream mapper decodes to: core's temporal
    #: mappers' month start (our ``TemporalRollupMapper`` checks its own pairing).
    expected_decoded_type: ClassVar[type] = datetime

    def __init__(self, calendar: BusinessCalendar | ExchangeCalendar | None = None) -> None:
        super().__init__()
        if calendar is not None and not is_day_calendar(calendar):
            raise ValueError(
                "BusinessDayWindow: calendar must be a BusinessCalendar such as "
                "BusinessCalendar(country='US'), an ExchangeCalendar such as ExchangeCalendar('XNYS'), or "
                f"None for Monday to Friday; got {calendar!r}."
            )
        self.calendar = MONDAY_TO_FRIDAY if calendar is None else calendar

    def grain(self, timezone: str) -> BusinessDay:
        """Return the business days of this window's calendar in *timezone* (an IANA name)."""
        return BusinessDay(self.calendar, timezone=timezone)

    def to_upstream(self, period_start: datetime | Period) -> list[datetime] | list[Period]:
        """
        Return the business days of a month: periods within a :class:`Period`, or day starts.

        A :class:`~airflow_partitions.grains.Period` (our mappers' month) gives the business
        days starting within it, in its time zone; a datetime (core's month start) gives the
        start of each business day of the month that starts there.
        """
        if isinstance(period_start, Period):
            return self.grain(period_start.grain.timezone).members(period_start)
        if not isinstance(period_start, datetime):
            raise ValueError(
                f"BusinessDayWindow expects the month's start as a datetime, got {period_start!r}; "
                "pair it with an upstream mapper that decodes to datetime month starts, "
                "e.g. StartOfMonthMapper(input_format='%Y-%m-%d')."
            )
        start = period_start
        if isinstance(start.tzinfo, timezone):
            # A fixed UTC offset (from a key with '%z') knows no DST: a day after a DST change
            # would land on the previous evening. Enumerate wall-clock days; the mapper localizes.
            start = start.replace(tzinfo=None)
        if (start.day, start.hour, start.minute, start.second, start.microsecond) != (1, 0, 0, 0, 0):
            raise ValueError(
                f"BusinessDayWindow expects a month start (day 1, 00:00), got {period_start.isoformat()}; "
                "pair it with an upstream mapper that decodes to month starts, "
                "e.g. StartOfMonthMapper(input_format='%Y-%m-%d')."
            )
        following = date(start.year + start.month // 12, start.month % 12 + 1, 1)
        return [start.replace(day=day.day) for day in self.calendar.business_days(start.date(), following)]

    def serialize(self) -> dict[str, Any]:
        """Return ``{"format_version": 1}`` for Monday to Friday, else also ``"calendar"``."""
        return dump(calendar=None if self.calendar == MONDAY_TO_FRIDAY else self.calendar.serialize())

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> BusinessDayWindow:
        """Rebuild the window from :meth:`serialize`'s output (without a calendar: Monday to Friday)."""
        calendar = load(data, cls).get("calendar")
        return cls(None if calendar is None else calendar_from_stored(calendar))
