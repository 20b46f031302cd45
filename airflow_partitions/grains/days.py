"""
What business calendars share: the roll conventions, and the checks of their arguments.

Below :mod:`~airflow_partitions.grains.business` (our calendars) and
:mod:`~airflow_partitions.grains.sessions` (an exchange's), which both use them: neither imports
the other for them.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

#: Roll conventions for dates that are not business days, named as ``numpy.busday_offset`` names
#: them: keep the date or refuse it, the next business day, the previous one, and the "modified"
#: variants that roll the other way when the first would leave the date's month.
ROLLS = ("raise", "following", "preceding", "modifiedfollowing", "modifiedpreceding")


def _require_roll(convention: Any, owner: str) -> str:
    if not isinstance(convention, str) or convention not in ROLLS:
        raise ValueError(
            f"{owner}: roll must be one of {', '.join(map(repr, ROLLS))} (numpy.busday_offset's "
            f"conventions); got {convention!r}."
        )
    return convention


def _as_date(day: Any, owner: str) -> date:
    if isinstance(day, datetime):
        return day.date()
    if not isinstance(day, date):
        raise ValueError(f"{owner}: expected a datetime.date such as date(2026, 11, 25); got {day!r}.")
    return day
