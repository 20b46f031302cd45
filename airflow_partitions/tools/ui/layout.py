"""
Partitions laid out as the Partitions view draws them: pure functions on ``ConsumerState.to_dict()``.

A key is placed by its shape, read off its spelling (no mapper needed):

- a composite key (``jfk|2013-03-10``): one row per first dimension, cells in time order under a
  date axis: the month where it changes, each column's day under it (:func:`time_axis`);
- a day (``2013-03-10``): a month calendar, weeks from Monday; under a grain with days off
  (trading sessions, business days), a date without a period is a closed place, not an
  unopened one;
- an hour (``2013-03-10T05``, ``2026-10-25T02+02:00``, other ISO spellings): a strip of its
  local day, hours in time order (both occurrences of a repeated hour);
- a minute (``2013-03-10T05:15``): the hours of its day, each cell the worst state of its
  minutes and how many there are, zoomed into one hour's minutes when the page holds one hour;
- a period of a year (``2013-03``, ``2026-Q3``, ``2026-W05``, ``FY2026-Q3``, ``R2025-M01``,
  ``FY2026``): a grid of years by periods;
- any other key, or one of these shapes naming no real place (``2026-13-45``): a plain list.

Places in a month, day or year with no partition are "not opened" cells; dates the Dag's grain
has no period on are "closed" (no partition will open there: the view draws them blank).
"""

from __future__ import annotations

import calendar
import re
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from airflow_partitions.grains import Grain
from airflow_partitions.tools.state import PENDING_STATES, SEPARATOR, STATES, attention, has_period_on
from airflow_partitions.tools.ui.axis import DAY, PERIOD, TIME, bucket_unit, period_head, time_axis

#: The states the view colours: a partition's own (:data:`~airflow_partitions.tools.state.STATES`)
#: and a place of the grid no partition has opened yet.
VIEW_STATES = (*STATES, "not opened")
#: A place of a month calendar where the Dag's grain has no period (a weekend of business days,
#: a day without a trading session): no state, drawn blank with its date.
CLOSED = "closed"
#: Periods of a year a grid shows in full (unopened places included), by their letter.
_PERIODS_OF_A_YEAR = {"": 12, "Q": 4, "M": 12, "H": 2, "W": 52}
_PERIOD_NAMES = {"": "months", "Q": "quarters", "M": "months", "H": "halves", "W": "weeks"}


def counted(partition: dict[str, Any]) -> tuple[int, int] | None:
    """
    Return (upstream keys counted, keys awaited) to show on a partition's cell, else ``None``.

    A pending partition shows what it has counted so far (summed over its assets: a rollup's
    expected keys, 1 for an asset under a mapper that is no rollup); a run that ran incomplete,
    what it ran with (``ran_with``).
    """
    if partition["state"] in PENDING_STATES:
        have = need = 0
        for progress in partition["progress"]:
            if progress["expected_total"]:
                need += progress["expected_total"]
                have += progress["counted"]
            else:
                need += 1
                have += bool(progress["received_total"])
        return have, need
    ran = partition.get("ran_with")
    if partition["state"] == "ran incomplete" and ran:
        return ran["counted"], ran["awaited"]
    return None


def cell(partition: dict[str, Any], label: str) -> dict[str, Any]:
    """Return the grid cell of *partition*: its key, state, place label and "n/m" where it has one."""
    count = counted(partition)
    return {
        "key": partition["partition_key"],
        "state": partition["state"],
        "label": label,
        "count": f"{count[0]}/{count[1]}" if count else None,
    }


def _unopened(label: str) -> dict[str, Any]:
    return {"key": None, "state": "not opened", "label": label, "count": None}


def _closed(label: str) -> dict[str, Any]:
    return {"key": None, "state": CLOSED, "label": label, "count": None}


def _group(label: str, members: list[dict[str, Any]], zoom: tuple[str, str]) -> dict[str, Any]:
    """Return a cell standing for several partitions: their worst state, how many, the range to zoom to."""
    return {
        "key": None,
        "state": min((p["state"] for p in members), key=attention),
        "label": label,
        "count": str(len(members)),
        "zoom": list(zoom),
    }


def layout(partitions: list[dict[str, Any]], grain: Grain | None = None) -> list[dict[str, Any]]:
    """
    Lay *partitions* (one page, in time order) out in blocks, each a dict with ``kind`` and ``title``.

    *grain* is the grain of the Dag's periods, if known (:func:`~airflow_partitions.tools.state.
    consumer_grain`): under ``TradingSession(ExchangeCalendar("XNYS"))`` a month's weekends and
    holidays are :data:`CLOSED` places.

    - ``rows``: composite keys; ``columns`` (the rest of each key, in time order), ``axis`` and
      ``heads`` (:func:`time_axis`: ``[column index, month]`` where the month changes, each column's
      day) and ``rows`` (``{"title": first dimension, "cells": [...]}``, one cell per column);
    - ``periods``: periods of a year; ``columns`` (``Q1`` …), ``heads`` (``05`` of ``W05``), ``rows``;
    - ``month``: days; ``weeks`` of seven cells from Monday (``None`` outside the month; state
      :data:`CLOSED` on a date *grain* has no period on);
    - ``day``: hours of one date; ``cells`` in time order, hours 00 to 23 (an unopened place for
      an hour without a key), or for minute keys one cell per hour holding them (``zoom``: the
      hour's range);
    - ``hour``: the minutes of one hour, when the page holds a single hour of minute keys;
    - ``list``: any other key, ``cells`` in page order.

    Blocks come in that order, each kind's in time order.
    """
    rows: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    periods: dict[tuple[str, str | None], dict[str, dict[str, dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    months: dict[tuple[int, int], dict[int, dict[str, Any]]] = defaultdict(dict)
    hours: dict[str, list[tuple[re.Match[str], dict[str, Any]]]] = defaultdict(list)
    minutes: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    others: list[dict[str, Any]] = []
    # A page of minute keys (a 15-minute grain) holds "T05:00" too: a minute key, not an hour.
    minute_keys = any(
        (time := TIME.match(p["partition_key"])) and time["minute"] not in (None, "00") for p in partitions
    )
    for partition in partitions:
        key = partition["partition_key"]
        if SEPARATOR in key:
            first, rest = key.split(SEPARATOR, 1)
            rows[first][rest] = partition
        elif (day := DAY.match(key)) and _date_of(key):
            months[int(day[1]), int(day[2])][int(day[3])] = partition
        elif (time := _time_of(key)) and time["minute"] not in (None, "" if minute_keys else "00"):
            minutes[time["date"]][time["hour"]].append(partition)
        elif time:
            hours[time["date"]].append((time, partition))
        elif period := PERIOD.match(key):
            part = period["part"] or ""
            kind = (period["label"], re.sub(r"\d", "", part) if part else None)
            periods[kind][period["label"] + period["year"]][part] = partition
        else:
            others.append(partition)
    blocks: list[dict[str, Any]] = []
    if rows:
        blocks.append(_rows(rows))
    for kind, by_year in sorted(periods.items(), key=lambda item: (item[0][0], item[0][1] or "")):
        block, unplaced = _periods(kind, by_year)
        blocks.extend([block] if block else [])
        others.extend(unplaced)
    blocks.extend(_month(year, month, by_day, grain) for (year, month), by_day in sorted(months.items()))
    for date_key, found in sorted(hours.items()):
        blocks.append({"kind": "day", "title": date_key, "cells": _hours(found)})
    if len(minutes) == 1 and len(next(iter(minutes.values()))) == 1:
        ((date_key, by_hour),) = minutes.items()
        ((hour, in_hour),) = by_hour.items()
        cells = [cell(p, p["partition_key"][len(date_key) + 4 :][:2]) for p in in_hour]
        blocks.append({"kind": "hour", "title": f"{date_key}T{hour}", "cells": cells})
    else:
        for date_key, by_hour in sorted(minutes.items()):
            cells = [
                _group(h, by_hour[h], (f"{date_key}T{h}", f"{date_key}T{h}"))
                if h in by_hour
                else _unopened(h)
                for h in (f"{n:02d}" for n in range(24))
            ]
            blocks.append({"kind": "day", "title": date_key, "cells": cells})
    if others:
        blocks.append(
            {"kind": "list", "title": "other keys", "cells": [cell(p, p["partition_key"]) for p in others]}
        )
    return blocks


def _month(year: int, month: int, by_day: dict[int, dict[str, Any]], grain: Grain | None) -> dict[str, Any]:
    """Return a ``month`` block: weeks from Monday, a date *grain* has no period on :data:`CLOSED`."""

    def place(d: int) -> dict[str, Any] | None:
        if d == 0:
            return None
        if d in by_day:
            return cell(by_day[d], str(d))
        if grain is not None and not has_period_on(grain, f"{year}-{month:02d}-{d:02d}"):
            return _closed(str(d))
        return _unopened(str(d))

    weeks = [
        [place(d) for d in week] for week in calendar.Calendar(calendar.MONDAY).monthdayscalendar(year, month)
    ]
    return {"kind": "month", "title": f"{year}-{month:02d}", "weeks": weeks}


def _rows(rows: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Return a ``rows`` block: one row per first dimension, columns in time order, a date axis."""
    columns = sorted(
        {rest for by_rest in rows.values() for rest in by_rest}, key=lambda r: (r.split(SEPARATOR)[-1], r)
    )
    axis, heads = time_axis([column.split(SEPARATOR)[-1] for column in columns])
    return {
        "kind": "rows",
        "title": "by first dimension",
        "columns": columns,
        "axis": axis,
        "heads": heads,
        "rows": [
            {
                "title": first,
                "cells": [cell(by_rest[c], c) if c in by_rest else _unopened(c) for c in columns],
            }
            for first, by_rest in sorted(rows.items())
        ],
    }


def _periods(
    kind: tuple[str, str | None], by_year: dict[str, dict[str, dict[str, Any]]]
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """
    Return a ``periods`` block: years by the periods of a year of one *kind* (label, letter).

    ``("FY", "Q")`` for fiscal quarters (``FY2026-Q3``), ``("", "")`` for months (``2013-03``),
    ``("R", "W")`` for retail weeks; letter ``None`` for years themselves (``FY2026``, ``2026``).
    Months, quarters, halves and weeks show every period of the year (unopened places too); with
    the block (``None`` if empty) come the partitions it has no place for (``2026-13``, ``2026-Q5``).
    """
    label, letter = kind
    seen = {part for parts in by_year.values() for part in parts}
    count = _PERIODS_OF_A_YEAR.get(letter) if letter is not None else None
    if letter == "W" and any(part.endswith("53") for part in seen):
        count = 53  # an ISO or retail year of 53 weeks
    if count is None or letter is None:
        columns = sorted(seen)
    else:
        digits = max(len(part) - len(letter) for part in seen)
        columns = [f"{letter}{n:0{digits}d}" for n in range(1, count + 1)]
    name = "years" if letter is None else _PERIOD_NAMES.get(letter, "periods")
    unplaced = [p for parts in by_year.values() for part, p in parts.items() if part not in columns]
    rows = [
        {"title": year, "cells": [cell(parts[c], c or year) if c in parts else _unopened(c) for c in columns]}
        for year, parts in sorted(by_year.items())
        if any(c in parts for c in columns)
    ]
    title = f"{label} {name}" if label else name
    heads = [period_head(column) for column in columns]
    block = {"kind": "periods", "title": title, "columns": columns, "heads": heads, "rows": rows}
    return (block if rows else None), unplaced


def _hours(found: list[tuple[re.Match[str], dict[str, Any]]]) -> list[dict[str, Any]]:
    """Return the cells of one date's hours: 00 to 23 in time order, both occurrences of a repeated one."""
    by_hour: dict[str, list[tuple[re.Match[str], dict[str, Any]]]] = defaultdict(list)
    for time, partition in found:
        by_hour[time["hour"]].append((time, partition))
    repeated = {hour for hour, keys in by_hour.items() if len(keys) > 1}
    cells = []
    for hour in (f"{n:02d}" for n in range(24)):
        keys = by_hour.get(hour, [])
        if not keys:
            cells.append(_unopened(hour))
        # A repeated hour (a fall-back night) shows each occurrence, earlier (larger offset) first.
        for time, partition in sorted(
            keys, key=lambda pair: _offset_minutes(pair[0]["offset"]), reverse=True
        ):
            label = f"{hour}{time['offset']}" if hour in repeated and time["offset"] else hour
            cells.append(cell(partition, label))
    return cells


def _offset_minutes(offset: str | None) -> int:
    """Return a UTC offset (``+02:00``, ``Z``, ``-0500``) in minutes east of UTC (``None``: 0)."""
    if not offset or offset == "Z":
        return 0
    digits = offset[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:4] or 0)
    return minutes if offset[0] == "+" else -minutes


def _date_of(text: str) -> date | None:
    """Return the date *text* names (``2026-03-10``); ``None`` for none (``2026-13-45``, ``0000-01-01``)."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _time_of(key: str) -> re.Match[str] | None:
    """Return an hour or minute key's match if it names a real time (not ``2026-02-30T05``, ``T24``)."""
    time = TIME.match(key)
    try:
        return time if time and _instant(time, ZoneInfo("UTC")) else None
    except ValueError:
        return None


def overview(state: dict[str, Any]) -> dict[str, Any]:
    """
    Return the Dag's selected partitions as strips of buckets (``ConsumerState.overview``): the head.

    ``{"bucket": 7, "unit": "month", "columns": ["2013-03", "2013-04"], "axis": [[0, "2013"]],
    "heads": ["03", "04"], "rows": [{"title": "jfk", "cells": [{"bucket": "2013-03", "state": …,
    "count": "31", "zoom": ["2013-03", "2013-03"]}, …]}]}``: every selected partition, not only
    the page, in buckets of ``bucket`` characters of the time part, each a ``unit``
    (:func:`bucket_unit`); ``columns`` every bucket of any row, in time order, labelled by
    :func:`time_axis`; a cell zooms the page to its bucket.
    """
    columns = sorted({bucket for _, strip in state["overview"] for bucket, _, _ in strip})
    axis, heads = time_axis(columns)
    rows = [
        {
            "title": prefix,
            "cells": [
                {"key": None, "state": worst, "label": bucket, "count": str(n), "zoom": [bucket, bucket]}
                for bucket, worst, n in strip
            ],
        }
        for prefix, strip in state["overview"]
    ]
    unit = bucket_unit(columns[0]) if columns else "period"
    return {
        "bucket": state["bucket"],
        "unit": unit,
        "columns": columns,
        "axis": axis,
        "heads": heads,
        "rows": rows,
    }


#: Days listed between an asset's first and last day at most; a longer span lists only its days with keys.
MAX_COVERAGEDAYS = 3660
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def coverage(
    keys: list[dict[str, Any]],
    zone: str = "UTC",
    input_zone: str = "UTC",
    awaited: Callable[[str], tuple[str, ...] | None] | None = None,
) -> dict[str, Any]:
    """
    Lay out an asset's keys (``AssetCoverage.to_dict()["keys"]``) by local day of *zone*, gaps marked.

    Hour and minute keys are read as instants (naive ones in *input_zone*, as the consumer's
    mapper reads them) and placed in their local day of *zone* (an IANA name: the consumer's),
    so a New York feed of UTC hours shows New York days of 23, 24 or 25 hours. Keys are grouped in
    ``series``, one per key prefix (``""`` for plain keys), each with ``days``: every day from its
    first to its last as ``{"day", "until", "days", "keys", "events", "gap", "missing_hours"}``;
    ``gap`` marks a day with no key, and consecutive such days are one row from ``day`` to
    ``until`` (``days`` of them: :func:`_spans`), ``missing_hours`` the local hours of a day with
    hour keys that have none (``"01-05:00"`` for an occurrence of a repeated hour). Keys with no
    real date or time (``2013-03-13T99``, ``2026-13-45``), or on the calendar's first or last day
    (``9999-12-31T23:45``), go to ``other``. Over :data:`MAX_COVERAGEDAYS`, only days with keys are listed.

    *awaited* (:func:`~airflow_partitions.tools.state.awaited_by_date` of the consumer's mapper,
    for a grain with days off) says what the period of each date awaits, ``None`` for a date
    without one. Then each day of plain keys also has ``closed`` (no period: not a gap, whatever
    arrived) and ``strip``: the awaited keys as a strip of the period's hours, each ``{"key",
    "label", "state"}`` (``label`` its local time, ``"09:30"``; ``state`` ``"received"`` if a key
    names that instant, in any spelling, else ``"missing"``); ``missing_hours`` then lists the
    labels of the missing ones. A rollup of 30-minute bars into NYSE sessions has 13 on
    2026-11-23, 7 on 2026-11-27 (an early close) and none on 2026-11-26 (Thanksgiving: closed).
    """
    tz, naive_tz = ZoneInfo(zone), ZoneInfo(input_zone)
    by_series: dict[str, dict[str, list[tuple[dict[str, Any], datetime | None]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    other = []
    for item in keys:
        prefix, _, part = item["partition_key"].rpartition(SEPARATOR)
        placed = _local_day(part, naive_tz, tz)
        if placed is None:
            other.append(item["partition_key"])
        else:
            by_series[prefix][placed[0]].append((item, placed[1]))
    series = []
    for prefix, by_day in sorted(by_series.items()):
        first, last = (date.fromisoformat(d) for d in (min(by_day), max(by_day)))
        span = (last - first).days + 1
        days = (
            [(first + timedelta(n)).isoformat() for n in range(span)]
            if span <= MAX_COVERAGEDAYS
            else sorted(by_day)
        )
        listed = [_day(d, by_day.get(d, []), tz) for d in days]
        if awaited is not None and prefix == "":
            arrived = {i["partition_key"] for found in by_day.values() for i, _ in found}
            arrived |= {
                local.astimezone(UTC).isoformat() for found in by_day.values() for _, local in found if local
            }
            listed = [_awaited_day(day, awaited(day["day"]), arrived, tz, naive_tz) for day in listed]
        series.append({"title": prefix, "days": _spans(listed)})
    return {"zone": zone, "series": series, "other": sorted(other)}


def _local_day(part: str, naive_tz: ZoneInfo, tz: ZoneInfo) -> tuple[str, datetime | None] | None:
    """
    Return the local day of *tz* of a key's time part, and its local instant if it names one.

    ``("2013-03-09", 2013-03-09T23:00-05:00)`` of ``2013-03-10T04`` (UTC) in New York; ``None``:
    :func:`coverage`'s ``other``.
    """
    time = TIME.match(part)
    try:
        local = _instant(time, naive_tz).astimezone(tz) if time else None
    except (ValueError, OverflowError):  # "2013-03-13T99"; "0001-01-01T00" west of its zone
        return None
    day = (
        local.date() if local is not None else (_date_of(found[1]) if (found := _DATE.match(part)) else None)
    )
    if day is None or day in (date.min, date.max):
        return None
    return day.isoformat(), local


def _spans(days: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """
    Return *days* with each run of days without a key (and nothing awaited) as one row.

    Every row gets ``until`` (its last day) and ``days`` (how many it covers): a gap of 181 days
    between two sparse keys is one row, ``{"day": "2013-03-11", "until": "2013-09-07", "days":
    181, "gap": True, …}``; a day with keys, or a gap with a strip of what its period awaits, is
    a row of its own (``until`` its ``day``, ``days`` 1).
    """
    rows: list[dict[str, Any]] = []
    for day in days:
        plain_gap = day["gap"] and not day.get("strip")
        last = rows[-1] if rows else None
        if plain_gap and last is not None and last["gap"] and not last.get("strip"):
            last["until"], last["days"] = day["day"], last["days"] + 1
        else:
            rows.append({**day, "until": day["day"], "days": 1})
    return rows


def _instant(time: re.Match[str], naive_tz: ZoneInfo) -> datetime:
    """Return the aware instant an hour or minute key names (naive: in *naive_tz*)."""
    wall = datetime.fromisoformat(f"{time['date']}T{time['hour']}:{time['minute'] or '00'}")
    offset = time["offset"]
    if offset is None:
        return wall.replace(tzinfo=naive_tz)
    return wall.replace(tzinfo=timezone(timedelta(minutes=_offset_minutes(offset))))


def _local_hours(day: str, tz: ZoneInfo) -> list[datetime]:
    """Return the starts of the real hours of the local *day* in *tz* (23, 24 or 25), in time order."""
    start = datetime.combine(date.fromisoformat(day), datetime.min.time(), tz).astimezone(UTC)
    following = date.fromisoformat(day) + timedelta(days=1)
    end = datetime.combine(following, datetime.min.time(), tz).astimezone(UTC)
    return [
        (start + timedelta(hours=n)).astimezone(tz) for n in range(-(-(end - start) // timedelta(hours=1)))
    ]


def _day(day: str, found: list[tuple[dict[str, Any], datetime | None]], tz: ZoneInfo) -> dict[str, Any]:
    items = [item for item, _ in found]
    present = {local.astimezone(UTC).replace(minute=0) for _, local in found if local is not None}
    missing = []
    if present:
        hours = _local_hours(day, tz)
        repeated = {h.hour for h in hours if sum(o.hour == h.hour for o in hours) > 1}
        for hour in hours:
            # An hour counts as present when a key names any instant in it (real, UTC-floored time).
            if hour.astimezone(UTC).replace(minute=0) not in present:
                label = f"{hour.hour:02d}" + (
                    hour.strftime("%z")[:3] + ":" + hour.strftime("%z")[3:] if hour.hour in repeated else ""
                )
                missing.append(label)
    return {
        "day": day,
        "keys": sorted(i["partition_key"] for i in items),
        "events": sum(i["events"] for i in items),
        "gap": not items,
        "missing_hours": missing,
    }


def _awaited_day(
    day: dict[str, Any], expected: tuple[str, ...] | None, arrived: set[str], tz: ZoneInfo, naive_tz: ZoneInfo
) -> dict[str, Any]:
    """Return a coverage *day* with what its period awaits: ``closed``, ``strip``, its ``missing_hours``."""
    if expected is None:
        return {**day, "gap": False, "closed": True, "strip": [], "missing_hours": []}
    strip = []
    for key in expected:
        time = TIME.match(key)
        at = _instant(time, naive_tz) if time else None
        seen = key in arrived or (at is not None and at.astimezone(UTC).isoformat() in arrived)
        label = at.astimezone(tz).strftime("%H:%M") if at is not None else key
        strip.append({"key": key, "label": label, "state": "received" if seen else "missing"})
    missing = [c["label"] for c in strip if c["state"] == "missing"]
    return {**day, "closed": False, "strip": strip, "missing_hours": missing}
