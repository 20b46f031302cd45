"""
What a request selects of one Dag's partitions: a time range's bounds and one key, checked first.

``status`` and ``discard`` (both modes, both REST routes that read a Dag's state) read their
``--start``, ``--end`` and ``--key`` here, against the grain the Dag's keys are written in
(:func:`~airflow_partitions.tools.state.serialized.consumer_grain`), before any partition is read
or removed: a bound or key the Dag's keys cannot match is a ``ValueError`` naming the option, the
value and what was expected (exit code 2, or 400), never an empty answer, or every partition.
Pure: no database.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from airflow_partitions.grains import Grain
from airflow_partitions.grains.keys import no_such_week
from airflow_partitions.tools.state.model import time_part

#: The ISO 8601 calendar spellings a range may be bounded by: the leading part of a key written as
#: a date and time (``2013``, ``2013-03``, ``2013-03-10``, ``2013-03-10T05``, ``2013-03-10T05:15``).
CALENDAR_PREFIX = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}(?::\d{2})?)?)?)?")
#: What the messages say a range bound may be, besides one of the Dag's keys.
EXPECTED_BOUND = (
    "an ISO 8601 date or time such as '2013', '2013-03', '2013-03-10' or '2013-03-10T05' (local, "
    "as the keys are written; '--end 2013-03' keeps all of March)"
)
#: The instant whose period gives the example key a message shows (any period of the grain would do).
_EXAMPLE = datetime(2026, 3, 10, 9, 15)


def selected_range(
    dag_id: str, grain: Grain | None, start: str | None, end: str | None
) -> tuple[str | None, str | None]:
    """
    Return ``(start, end)`` as bounds on the time part of *dag_id*'s keys, checked and in their spelling.

    *grain* is the grain the Dag's keys are written in; ``None`` (a core mapper's keys, or
    categories: nothing to judge a bound by) keeps both as written. A bound is, in this order:

    - one of its keys (``2026-W11`` of ISO weeks, ``FY2026-Q3``), kept as written;
    - an ISO 8601 calendar spelling (:data:`CALENDAR_PREFIX`), local time as keys are written:
      under a grain whose periods tile time, the key of the period holding its first instant
      (*start*) or its last (*end*): ``--start 2026-03 --end 2026-03`` of ISO weeks is
      ``2026-W09`` … ``2026-W14``, of days ``2026-03-01`` … ``2026-03-31``, and on a fall-back
      night ``2026-11-01T01`` of New York hours ends with the second 01:00 hour
      (``2026-11-01T01-05:00``); else (business days, trading sessions, cron ticks: keys written
      as dates) kept as written;
    - the leading part of one of its keys (``2026-W`` of ISO weeks, ``FY2026-`` of fiscal
      quarters: the Partitions view's buckets), kept as written.

    A bound kept as written is compared with the keys' time parts as text, *end* on its own length
    (``2013-03`` keeps all of March).

    :raises ValueError: naming the option (``--start``, ``--end``), the value and what was expected,
        for a bound that is none of these, or a local time the grain's zone skips (``2026-03-08T02``
        in New York); or ``--start`` after ``--end`` (no key lies between them).
    """
    first = _bound(dag_id, grain, "--start", start, last=False)
    last = _bound(dag_id, grain, "--end", end, last=True)
    if first is not None and last is not None and first[: len(last)] > last:
        raise ValueError(f"--start {start!r} is after --end {end!r}.")
    return first, last


def bound_instant(grain: Grain | None, option: str, value: str, *, last: bool) -> datetime:
    """
    Return the instant a range bound (:func:`selected_range`'s) starts from: a key's period start.

    ``2026-03-10`` of New York days is 2026-03-10T00:00-05:00; a calendar spelling the start of the
    period holding its first instant, or with *last* its last (``2026-03`` of days: 03-01, or
    03-31 with *last*), in the grain's zone; without a grain an ISO 8601 time (naive: UTC).
    Walking a range period by period (``backfill --state missing``) starts and ends there.

    :raises ValueError: naming *option* and *value*, for a bound that is the leading part of a key
        (``FY2026-``: no instant), a time no ``datetime`` holds, or one outside the years 0003 to
        9997 (:data:`~airflow_partitions.grains.keys.FIRST_YEAR`: a walk there would step past the
        years a ``datetime`` holds).
    """
    from airflow_partitions.grains.keys import FIRST_YEAR, LAST_YEAR

    outside = ValueError(
        f"{option} {value!r} is outside the years partitions are made in ({FIRST_YEAR:04d} to {LAST_YEAR})."
    )
    written = re.match(r"\d{4}", value)
    if written and not FIRST_YEAR <= int(written[0]) <= LAST_YEAR:
        raise outside
    try:
        if grain is None:
            when = datetime.fromisoformat(value)
            when = when if when.tzinfo else when.replace(tzinfo=UTC)
        else:
            when = _bound_start(grain, value, last=last)
        year = when.astimezone(UTC).year
    except (ValueError, OverflowError):
        raise ValueError(
            f"{option} {value!r} names no instant to walk the periods of a range from: give a key or "
            f"{EXPECTED_BOUND}."
        ) from None
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise outside
    return when


def _bound_start(grain: Grain, value: str, *, last: bool) -> datetime:
    """Return :func:`bound_instant` under *grain*; raise ``ValueError`` or ``OverflowError`` for none."""
    try:
        return grain.parse(value).start
    except ValueError:
        span = _calendar_span(value)
        if span is None:
            raise
    local = span[1] - timedelta(microseconds=1) if last else span[0]
    return grain.floor(local.replace(tzinfo=grain.tz)).start


def checked_key(dag_id: str, grain: Grain | None, key: str | None) -> None:
    """
    Check that *key* (``--key``) is a partition key of *dag_id*: its time part a key of *grain*.

    ``2013-03-10`` of New York days, ``nsw|2013-03-08`` of a region's days; any key when *grain*
    is ``None`` (a core mapper's keys: nothing to check them by).

    :raises ValueError: naming the key, the Dag and why (the grain's own message: the key its
        period is written as, or the date it cannot read).
    """
    if key is None or grain is None:
        return
    try:
        grain.parse(time_part(key))
    except ValueError as err:
        raise ValueError(f"--key {key!r} is not a partition key of {dag_id!r}: {err}") from None


def _bound(dag_id: str, grain: Grain | None, option: str, value: str | None, *, last: bool) -> str | None:
    """Return one bound of :func:`selected_range` (``None``: open), or raise naming *option*."""
    if value is None or grain is None:
        return value
    try:
        grain.parse(value)
        return value
    except ValueError:
        pass  # not one of its keys: an ISO 8601 calendar spelling, the start of a key, or refused
    span = _calendar_span(value)
    if span is not None and grain.tiles:
        bound = _period_bound(grain, option, value, span, last=last)
        return value if bound is None else bound  # at the calendar's ends: compared as written
    if span is not None or _starts_a_key(grain, value):
        return value
    week = no_such_week(value)
    raise ValueError(
        f"{option} {value!r} {week}."
        if week
        else f"{option} {value!r} is neither a partition key of {dag_id!r}{_written_like(grain)}, nor the "
        f"leading part of one, nor {EXPECTED_BOUND}."
    )


def _period_bound(
    grain: Grain, option: str, value: str, span: tuple[datetime, datetime], *, last: bool
) -> str | None:
    """
    Return the key of the period of a tiling *grain* holding the first (*last*: the last) instant of *span*.

    ``None`` for a span in the calendar's first or last days, whose instants or period no
    ``datetime`` holds (``9999-12`` of months: the period ends in the year 10000).

    :raises ValueError: naming *option*, for a local time the grain's zone skips.
    """
    try:
        # Real instants, the end's last one taken before its exclusive end: on a fall-back night
        # "01" names both 01:00 hours, from the first one's start to the second one's end.
        first, after = (local.replace(tzinfo=grain.tz).astimezone(UTC) for local in span)
        key = grain.key(grain.floor(after - timedelta(microseconds=1) if last else first))
    except (ValueError, OverflowError):  # datetime's "year 10000 is out of range"
        return None
    if first >= after:
        raise ValueError(
            f"{option} {value!r} names no time in {grain.timezone}: its clocks skip it (daylight "
            "saving time starts)."
        )
    return key


def _starts_a_key(grain: Grain, value: str) -> bool:
    """
    Whether *value* is the leading part of a key of *grain*: ``2026-W`` of ISO weeks, ``FY2026-``.

    Looked for among the keys of the periods at the start of each month of the year *value* names
    (its first four digits) and of the years on either side (a fiscal year is named by its end, a
    retail year may start in the year before): every family of keys a year of the grain writes.
    """
    found = re.search(r"\d{4}", value)
    if found is None or not 1 < int(found[0]) < 9999:
        return False
    year = int(found[0])
    for first in (datetime(year + n, month, 1) for n in (-1, 0, 1) for month in range(1, 13)):
        try:
            if grain.key(grain.period_at_or_after(first.replace(tzinfo=grain.tz))).startswith(value):
                return True
        except ValueError:  # a calendar without a period then (a business day's on a Sunday)
            continue
    return False


def _calendar_span(value: str) -> tuple[datetime, datetime] | None:
    """
    Return the local ``[start, end)`` an ISO 8601 calendar spelling names (naive), or ``None``.

    ``2013-03`` is March 2013, ``2013-03-10T05`` the hour from 05:00; ``None`` for any other text
    and for a spelling that names no date or time (``2013-02-30``, ``2013-03-10T24``, ``0000``).
    A span that ends with the year 9999 ends at ``datetime.max``.
    """
    if not CALENDAR_PREFIX.fullmatch(value):
        return None
    try:
        start = datetime.fromisoformat({4: f"{value}-01-01", 7: f"{value}-01"}.get(len(value), value))
    except ValueError:  # 2013-13, 0000
        return None
    try:
        if len(value) == 4:
            return start, start.replace(year=start.year + 1)
        if len(value) == 7:
            return start, (start + timedelta(days=31)).replace(day=1)
        unit = {10: timedelta(days=1), 13: timedelta(hours=1)}.get(len(value), timedelta(minutes=1))
        return start, start + unit
    except (ValueError, OverflowError):  # the year 9999's end: no datetime holds it
        return start, datetime.max


def _written_like(grain: Grain | None) -> str:
    """Return ``" (its keys are written like '2026-W11')"`` for *grain*, or ``""`` without one."""
    if grain is None:
        return ""
    try:
        example = grain.key(grain.period_at_or_after(_EXAMPLE.replace(tzinfo=grain.tz)))
    except ValueError:  # a calendar without a period at the example instant
        return ""
    return f" (its keys are written like {example!r})"
