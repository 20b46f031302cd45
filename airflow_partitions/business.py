"""
Business-day rollups: windows whose members are the working days of a period.

Today the working days are Monday to Friday. A holiday calendar will be an optional argument
added later; Dags serialized now will keep deserializing to the Monday-to-Friday window.
"""

from __future__ import annotations

import calendar
from datetime import datetime, timezone
from typing import Any, ClassVar

from airflow.partition_mappers.window import Window

from airflow_partitions._common import dump, load


class BusinessDayWindow(Window):
    """
    Roll a calendar month up over its business days, Monday to Friday.

    The downstream period is a calendar month, given as its start (day 1, as Airflow's
    ``StartOfMonthMapper`` decodes ``"2026-03"``); the members are the month's weekdays, each
    as a day start in the same time zone as the period start, so the paired upstream mapper
    writes them as daily keys. March 2026 has 22 (``2026-03-02`` … ``2026-03-31``, without
    the weekends). Saturdays and Sundays are not waited for. Weekdays follow
    :meth:`datetime.weekday` (ISO 8601 weeks, Monday first). A month has 20 to 23 members.

    Use it in a rollup of daily keys into months::

        RollupMapper(
            upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"),
            window=BusinessDayWindow(),
        )  # "2026-03-10" -> "2026-03", fires once all 22 weekdays of March have arrived

    and to fan one monthly key out to its business days::

        FanOutMapper(
            upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"),
            window=BusinessDayWindow(),
            downstream_mapper=StartOfDayMapper(),
        )  # "2026-03" -> "2026-03-02", "2026-03-03", … "2026-03-31"

    Members keep the period start's time zone and wall-clock time, so a local-time month
    enumerates local days across DST changes (a day is a date, not 24 hours); a start with a
    fixed UTC offset (decoded from a key with ``%z``) yields naive wall-clock days instead, which
    the paired mapper reads in its own time zone.

    Pair it only with mappers that decode to month starts (``StartOfMonthMapper``): under
    ``StartOfQuarterMapper`` it would list the quarter's first month alone. Weekend keys map to
    their month but are not waited for; one that arrives after its month's run was created
    opens a new pending rollup for that month, which waits until the month's business days
    arrive again (core Airflow's rollup behaviour; the demo shows such entries).

    :raises ValueError: from :meth:`to_upstream`, if the period start is not a datetime on day 1
        of a month at midnight (the paired upstream mapper must decode to month starts).
    """

    expected_decoded_type: ClassVar[type] = datetime

    def __init__(self) -> None:
        super().__init__()

    def to_upstream(self, period_start: datetime) -> list[datetime]:
        """Return the start of each Monday-to-Friday day of the month that starts at *period_start*."""
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
        first_weekday, days = calendar.monthrange(start.year, start.month)
        return [start.replace(day=day) for day in range(1, days + 1) if (first_weekday + day - 1) % 7 < 5]

    def serialize(self) -> dict[str, Any]:
        """Return ``{"format_version": 1}``: the window has no configuration yet."""
        return dump()

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> BusinessDayWindow:
        """Rebuild the window from :meth:`serialize`'s output."""
        load(data, cls)
        return cls()
