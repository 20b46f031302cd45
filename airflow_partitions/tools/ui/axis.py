"""
The labels of the Partitions view's grids: the shapes of keys, and how a row of columns is named.

A column of a grid is a time part of a key (``2026-11-29`` of ``jfk|2026-11-29``); :func:`time_axis`
names the coarser unit where it changes and each column's own place in it, so every month and day
the view draws is labelled; :func:`bucket_unit` says what a bucket of a Dag's overview holds. Pure
functions on key spellings: no mapper needed.
"""

from __future__ import annotations

import re
from typing import Any

#: A day key: its year, month and day.
DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
#: An hour or minute key: its date, hour, minute, and offset (``Z``, ``+02:00``) if any.
TIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<hour>\d{2})(?::?(?P<minute>\d{2})(?::?00(?:\.0+)?)?)?"
    r"(?P<offset>Z|[+-]\d{2}(?::?\d{2})?)?$"
)
#: A period of a year: an optional label (``FY``, ``R``), the year, an optional period within it
#: (``03``, ``Q3``, ``W05``, ``M01``, ``H2``).
PERIOD = re.compile(r"^(?P<label>[A-Za-z]*)(?P<year>\d{4})(?:-(?P<part>[A-Za-z]*\d{1,2}))?$")


def time_axis(parts: list[str]) -> tuple[list[list[Any]], list[str]]:
    """
    Return the labels of grid columns whose time parts are *parts*, in order: ``(axis, heads)``.

    ``axis`` names the coarser unit where it changes, ``[column index, label]``; ``heads`` each
    column's own place in it, so every month and every day drawn is named:
    ``["2026-11-29", "2026-11-30", "2026-12-01"]`` gives ``[[0, "2026-11"], [2, "2026-12"]]`` and
    ``["29", "30", "01"]``. Days over hours (``2026-03-10T05``: ``2026-03-10``, ``05``), hours over
    minutes (``2026-04-01T05:15``: ``2026-04-01T05``, ``15``), years over months (``2013-03``:
    ``2013``, ``03``) and over periods of a year (``R2026-W44``: ``R2026``, ``44``), each year of
    years; a part of no such shape has no coarser label and no head.
    """
    axis: list[list[Any]] = []
    heads, previous = [], None
    # Minute keys (a 15-minute grain) hold "T05:00" too: a minute, not an hour (as the grid reads them).
    minutes = any((time := TIME.match(part)) and time["minute"] not in (None, "00") for part in parts)
    for index, part in enumerate(parts):
        major, head = _major_and_head(part, minutes)
        if major is not None and major != previous:
            axis.append([index, major])
        previous = major
        heads.append(head)
    return axis, heads


def _major_and_head(part: str, minutes: bool) -> tuple[str | None, str]:
    """Return the coarser unit a time part lies in and its own label there (:func:`time_axis`)."""
    if time := TIME.match(part):
        if time["minute"] is not None and minutes:
            return f"{time['date']}T{time['hour']}", time["minute"]
        return time["date"], time["hour"]
    if day := DAY.match(part):
        return f"{day[1]}-{day[2]}", day[3]
    if period := PERIOD.match(part.rstrip("-")):
        year = period["label"] + period["year"]
        return (year, period_head(period["part"])) if period["part"] else (year, "")
    return None, ""


def period_head(period: str) -> str:
    """Return a period of a year as its column's head: ``05`` of ``W05``; ``Q3`` and ``03`` as they are."""
    return period if len(period) <= 2 else re.sub(r"^[A-Za-z]+", "", period)


#: What a bucket of the overview holds, by its shape (:func:`bucket_unit`).
_UNITS = {"": "month", "W": "week", "M": "month", "Q": "quarter", "H": "half"}


def bucket_unit(bucket: str) -> str:
    """
    Return what a bucket of a Dag's overview holds: ``hour``, ``day``, ``week``, ``month``, ``year``, etc.

    By its spelling: ``2026-03-10T05`` an hour, ``2026-03-10`` a day, ``2026-03`` a month,
    ``R2026-W44`` and ``2026-W05`` a week, ``FY2026-Q3`` a quarter, ``2026`` and ``FY2026-`` a
    year; ``period`` for any other.
    """
    if time := TIME.match(bucket):
        return "minute" if time["minute"] not in (None, "00") else "hour"
    if DAY.match(bucket):
        return "day"
    if period := PERIOD.match(bucket.rstrip("-")):
        part = period["part"]
        return "year" if not part else _UNITS.get(re.sub(r"\d", "", part), "period")
    return "period"
