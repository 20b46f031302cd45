"""
Partitions laid out as the Partitions view draws them: pure functions on ``ConsumerState.to_dict()``.

A key is placed by its shape: a composite key (``jfk|2013-03-10``) in one row per first
dimension; a day (``2013-03-10``) in a month calendar, weeks from Monday; an hour
(``2013-03-10T05``, or longer ISO spellings) in a strip of 24 hours of its day; any other key in
a plain list. Places of a month or day with no partition are "not opened" cells.
"""

from __future__ import annotations

import calendar
import re
from collections import Counter, defaultdict
from datetime import date, timedelta
from typing import Any

from airflow_partitions.tools.state import in_time_range, time_part

#: States the view colours; a partition's own state is one of the first seven.
STATES = (
    "success",
    "failed",
    "running",
    "queued",
    "pending",
    "past deadline",
    "never counting",
    "not opened",
)
#: States of a pending partitioned Dag run: their cells show "n/m" upstream keys counted.
PENDING = ("pending", "past deadline", "never counting")
SEPARATOR = "|"
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_HOUR = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2})(?::00(?::00)?)?(?:Z|[+-]00:?00)?$")


def select(
    partitions: list[dict[str, Any]], start: str | None = None, end: str | None = None
) -> list[dict[str, Any]]:
    """
    Return the partitions whose time part lies in [*start*, *end*], ordered by time part, then key.

    As :func:`~airflow_partitions._common.in_time_range`: ``end="2026-04"`` keeps every key
    of April 2026 (``2026-04-30T23`` too).
    """
    chosen = [p for p in partitions if in_time_range(p["partition_key"], start, end)]
    return sorted(chosen, key=lambda p: (time_part(p["partition_key"]), p["partition_key"]))


def counted(partition: dict[str, Any]) -> tuple[int, int] | None:
    """
    Return (upstream keys counted, keys awaited) of a pending partition, else None.

    A rollup awaits its expected keys; an asset whose mapper is no rollup counts as one key, given
    once any key arrived.
    """
    if partition["state"] not in PENDING:
        return None
    have = need = 0
    for progress in partition["progress"]:
        if progress["expected"]:
            need += len(progress["expected"])
            have += len(progress["expected"]) - len(progress["missing"])
        else:
            need += 1
            have += bool(progress["received"])
    return have, need


def cell(partition: dict[str, Any], label: str) -> dict[str, Any]:
    """Return the grid cell of *partition*: its key, state, place label and "n/m" when pending."""
    count = counted(partition)
    return {
        "key": partition["partition_key"],
        "state": partition["state"],
        "label": label,
        "count": f"{count[0]}/{count[1]}" if count else None,
    }


def _unopened(label: str) -> dict[str, Any]:
    return {"key": None, "state": "not opened", "label": label, "count": None}


def layout(partitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """
    Lay *partitions* out in blocks, each a dict with ``kind`` and ``title``.

    - ``rows``: composite keys, ``columns`` (the rest of the key, sorted) and ``rows``
      (``{"title": first dimension, "cells": [...]}``, one cell per column);
    - ``month``: days, ``weeks`` of seven cells from Monday (None outside the month);
    - ``day``: hours, ``cells`` for hours 00 to 23;
    - ``list``: any other key, ``cells`` in key order.

    Blocks come in that order, months and days in time order.
    """
    rows: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    months: dict[tuple[int, int], dict[int, dict[str, Any]]] = defaultdict(dict)
    days: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    others: list[dict[str, Any]] = []
    for partition in partitions:
        key = partition["partition_key"]
        if SEPARATOR in key:
            first, rest = key.split(SEPARATOR, 1)
            rows[first][rest] = partition
        elif day := _DAY.match(key):
            months[int(day[1]), int(day[2])][int(day[3])] = partition
        elif hour := _HOUR.match(key):
            days[hour[1]][int(hour[2])] = partition
        else:
            others.append(partition)

    blocks: list[dict[str, Any]] = []
    if rows:
        columns = sorted({rest for by_rest in rows.values() for rest in by_rest})
        blocks.append(
            {
                "kind": "rows",
                "title": "by first dimension",
                "columns": columns,
                "rows": [
                    {
                        "title": first,
                        "cells": [cell(by_rest[c], c) if c in by_rest else _unopened(c) for c in columns],
                    }
                    for first, by_rest in sorted(rows.items())
                ],
            }
        )
    for (year, month), by_day in sorted(months.items()):
        weeks = [
            [None if d == 0 else cell(by_day[d], str(d)) if d in by_day else _unopened(str(d)) for d in week]
            for week in calendar.Calendar(calendar.MONDAY).monthdayscalendar(year, month)
        ]
        blocks.append({"kind": "month", "title": f"{year}-{month:02d}", "weeks": weeks})
    for date_key, by_hour in sorted(days.items()):
        cells = [cell(by_hour[h], f"{h:02d}") if h in by_hour else _unopened(f"{h:02d}") for h in range(24)]
        blocks.append({"kind": "day", "title": date_key, "cells": cells})
    if others:
        blocks.append(
            {"kind": "list", "title": "other keys", "cells": [cell(p, p["partition_key"]) for p in others]}
        )
    return blocks


def summary(partitions: list[dict[str, Any]]) -> dict[str, int]:
    """Return how many of *partitions* are in each state (states with none left out)."""
    return dict(Counter(p["state"] for p in partitions))


#: Days listed between an asset's first and last day at most; a longer span lists only its days with keys.
MAX_COVERAGE_DAYS = 3660
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def coverage(keys: list[dict[str, Any]]) -> dict[str, Any]:
    """
    Lay out an asset's keys (``AssetCoverage.to_dict()["keys"]``) by day, gaps marked.

    Keys are grouped in ``series``, one per first dimension of a composite key (``""`` for plain
    keys), each with ``days``: every day from its first to its last as
    ``{"day", "keys", "events", "gap", "missing_hours"}``. ``gap`` marks a day with no key;
    ``missing_hours`` the hours 00-23 without a key on a day that has hour keys. Keys with no
    date go to ``other``. Over :data:`MAX_COVERAGE_DAYS`, only the days with keys are listed.
    """
    by_series: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    other = []
    for item in keys:
        key = item["partition_key"]
        prefix, _, part = key.rpartition(SEPARATOR)
        if day := _DATE.match(part):
            by_series[prefix][day[1]].append(item)
        else:
            other.append(key)
    series = []
    for prefix, by_day in sorted(by_series.items()):
        first, last = (date.fromisoformat(d) for d in (min(by_day), max(by_day)))
        span = (last - first).days + 1
        days = (
            [(first + timedelta(n)).isoformat() for n in range(span)]
            if span <= MAX_COVERAGE_DAYS
            else sorted(by_day)
        )
        series.append({"title": prefix, "days": [_day(d, by_day.get(d, [])) for d in days]})
    return {"series": series, "other": sorted(other)}


def _day(day: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    hours = {int(m[2]) for i in items if (m := _HOUR.match(time_part(i["partition_key"])))}
    return {
        "day": day,
        "keys": sorted(i["partition_key"] for i in items),
        "events": sum(i["events"] for i in items),
        "gap": not items,
        "missing_hours": [f"{h:02d}" for h in range(24) if h not in hours] if hours else [],
    }
