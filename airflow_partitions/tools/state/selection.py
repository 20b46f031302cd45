"""
What a request selects of one Dag: a range of its keys, or of times, and one key; checked first.

Every command takes the same range language, one bound at a time (``--start``, ``--end``,
``--before``; the view's ``start`` and ``end``): a key of the Dag's grain, its leading part, or an
ISO 8601 date or time. It is read here, against the grain the Dag's keys are written in
(:func:`~airflow_partitions.tools.state.serialized.consumer_grain`), before anything is read or
removed:

- :func:`selected_range` (``status``, ``discard``, the view's Dag and asset pages) bounds the
  time part of keys, in the keys' spelling;
- :func:`selected_times` (``requeue``'s event times, ``clean --before``) names instants: a key's
  period from its first instant (its last, for an end), an ISO 8601 date or time in UTC unless
  it has an offset.

A bound or key the Dag's keys cannot match is a
:class:`~airflow_partitions.tools.errors.UsageError` naming the option, the value and what was
expected (exit code 2, or 400), never an empty answer, or every partition. Pure: no database.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from airflow_partitions.grains import Grain, Period
from airflow_partitions.grains.keys import no_such_week
from airflow_partitions.tools.errors import UsageError
from airflow_partitions.tools.state.model import time_part

#: The ISO 8601 calendar spellings a range may be bounded by: the leading part of a key written as
#: a date and time (``2013``, ``2013-03``, ``2013-03-10``, ``2013-03-10T05``, ``2013-03-10T05:15``).
CALENDAR_PREFIX = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}(?::\d{2})?)?)?)?")
#: A calendar spelling naming a span of time (:func:`selected_times`), with its offset if any:
#: ``2013-03``, ``2013-03-10T05+02:00``, ``2013-03-10T05:15Z``.
ZONED_CALENDAR = re.compile(rf"(?P<local>{CALENDAR_PREFIX.pattern})(?P<offset>Z|[+-]\d{{2}}:?\d{{2}})?")
#: What the messages say a range bound may be, besides one of the Dag's keys.
EXPECTED_BOUND = (
    "an ISO 8601 date or time such as '2013', '2013-03', '2013-03-10' or '2013-03-10T05' (local, "
    "as the keys are written; '--end 2013-03' keeps all of March)"
)
#: What the messages say a bound of times may be, besides one of the Dag's keys.
EXPECTED_TIME = (
    "an ISO 8601 date or time such as '2026-03', '2026-03-01' or '2026-03-01T12:00+02:00' (UTC without "
    "an offset)"
)
#: The instant whose period gives the example key a message shows (any period of the grain would do).
_EXAMPLE = datetime(2026, 3, 10, 9, 15)
#: The time a bound of times names by its last instant is before its next one by this much.
_TICK = timedelta(microseconds=1)


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

    :raises UsageError: naming the option (``--start``, ``--end``), the value and what was expected,
        for a bound that is none of these, or a local time the grain's zone skips (``2026-03-08T02``
        in New York); or ``--start`` after ``--end`` (no key lies between them).
    """
    first = _bound(dag_id, grain, "--start", start, last=False)
    last = _bound(dag_id, grain, "--end", end, last=True)
    if first is not None and last is not None and first[: len(last)] > last:
        raise UsageError(f"--start {start!r} is after --end {end!r}.")
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

    :raises UsageError: naming the key, the Dag and why (the grain's own message: the key its
        period is written as, or the date it cannot read).
    """
    if key is None or grain is None:
        return
    try:
        grain.parse(time_part(key))
    except ValueError as err:
        raise UsageError(f"--key {key!r} is not a partition key of {dag_id!r}: {err}") from None


def selected_times(
    dag_id: str | None, grain: Grain | None, start: str | None, end: str | None
) -> tuple[datetime | None, datetime | None]:
    """
    Return ``(start, end)`` as instants (aware, UTC): the first instant *start* names, the last *end* names.

    ``requeue``'s ``--start`` and ``--end`` (event times) and ``clean``'s ``--before`` (*start*)
    of *dag_id* (``None``: every Dag), whose keys are written in *grain* (``None``: no grain to
    read a key by). A bound is, in this order:

    - an ISO 8601 calendar spelling (``2026``, ``2026-03``, ``2026-03-01``, ``2026-03-01T05``,
      ``2026-03-01T05:15``; UTC, or with its offset: ``2026-03-01T05+02:00``): the span it
      names, from its first instant to its last (``--end 2026-03`` runs to
      ``2026-03-31T23:59:59.999999Z``); or an ISO 8601 time to the second
      (``2026-03-01T12:00:00+02:00``; UTC without an offset): that instant;
    - a key of *grain* (``2026-W11`` of Berlin's ISO weeks, ``FY2026-Q3``): its period;
    - the leading part of one (``2026-W``): from the first period whose key starts with it to the
      last;
    - another ISO 8601 date (``2026-W11-1``, ``20260310``): that day, UTC.

    :raises UsageError: naming the option (``--start``, ``--end``), the value and what was
        expected, for a bound that is none of these, a time whose UTC instant no ``datetime``
        holds (``0001-01-01T00:00+14:00``); or ``--start`` after ``--end``.
    """
    first = None if start is None else time_bound(dag_id, grain, "--start", start, last=False)
    last = None if end is None else time_bound(dag_id, grain, "--end", end, last=True)
    if first is not None and last is not None and first > last:
        raise UsageError(f"--start {start!r} is after --end {end!r}.")
    return first, last


def checked_times(start: str | None, end: str | None, *, option: str = "--start") -> None:
    """
    Refuse, before any Dag is asked, a bound of times that no Dag's grain could read.

    The part of :func:`selected_times` that needs no grain, run by the requests themselves (on the
    command line in both modes, and by the routes): every bound of times names a year (ISO 8601
    dates and times do, and so does every grain's key: ``2026-W11``, ``FY2026-Q3``,
    ``R2026-W05``), so one without four digits is refused; a calendar spelling must name a date or
    time (``2026-04-31`` does not) whose instant a ``datetime`` holds in UTC; an ISO week must be
    one its year has; of two calendar spellings or times of day, *start* must not be after *end*.
    *option* names *start* (``--before`` of ``clean``).

    :raises UsageError: naming the option and the value, as :func:`selected_times` does.
    """
    spans = {}
    for name, value in ((option, start), ("--end", end)):
        if value is None:
            continue
        week = no_such_week(value)
        if week:
            raise UsageError(f"{name} {value!r} {week}.")
        if re.search(r"\d{4}", value) is None:
            raise UsageError(
                f"{name} {value!r} is not {EXPECTED_TIME}, nor a partition key or the leading part of one "
                "(each names a year)."
            )
        if ZONED_CALENDAR.fullmatch(value) or _written_instants(value):
            spans[name] = time_bound(None, None, name, value, last=name == "--end")
    if len(spans) == 2 and spans[option] > spans["--end"]:
        raise UsageError(f"{option} {start!r} is after --end {end!r}.")


def time_bound(dag_id: str | None, grain: Grain | None, option: str, value: str, *, last: bool) -> datetime:
    """
    Return one bound of :func:`selected_times`: the first instant *value* names (*last*: its last), UTC.

    ``clean --before`` is one: ``time_bound("d", None, "--before", "2026-01", last=False)`` is
    ``2026-01-01T00:00Z``.

    :raises UsageError: as :func:`selected_times`, naming *option*.
    """
    span = _written_instants(value)
    if span is None and grain is not None:
        span = _period_instants(grain, value) or _leading_instants(grain, value)
    if span is None:
        span = _day_instants(value)
    if span is None:
        week = no_such_week(value)
        key = f"a partition key of {dag_id!r}{_written_like(grain)}, nor the leading part of one, nor "
        raise UsageError(
            f"{option} {value!r} {week}."
            if week
            else f"{option} {value!r} is {f'neither {key}' if grain else 'not '}{EXPECTED_TIME}."
        )
    try:
        return (span[1] if last else span[0]).astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00: before the first instant a datetime holds in UTC
        raise UsageError(
            f"{option} {value!r} is outside the times a date can name (0001-01-01 to 9999-12-31 UTC)."
        ) from None


def _written_instants(value: str) -> tuple[datetime, datetime] | None:
    """
    Return the first and last instants *value* names whatever the Dag's grain, or ``None``.

    A calendar spelling's span (UTC, or its offset: ``2026-03-01T05+02:00``), or an ISO 8601 time
    with a time of day (``2026-03-01T12:00:00+02:00``; naive: UTC): that instant, twice.
    """
    found = ZONED_CALENDAR.fullmatch(value)
    span = None if found is None else _calendar_span(found["local"])
    if found is None or span is None:
        if "T" not in value and " " not in value:
            return None
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            return None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        return when, when
    offset = found["offset"]
    try:
        zone = UTC if offset in (None, "Z") else datetime.strptime(offset.replace(":", ""), "%z").tzinfo
    except ValueError:  # an offset that is none (-00:60): not a time, said by the caller
        return None
    start, end = span
    return start.replace(tzinfo=zone), (end if end == datetime.max else end - _TICK).replace(tzinfo=zone)


def _period_instants(grain: Grain, value: str) -> tuple[datetime, datetime] | None:
    """Return the first and last instants of the period *value* is the key of under *grain*, or ``None``."""
    try:
        period = grain.parse(value)
        return period.start, period.end - _TICK
    except (ValueError, OverflowError):  # not one of its keys; or the calendar's last period
        return None


def _leading_instants(grain: Grain, value: str) -> tuple[datetime, datetime] | None:
    """
    Return the first instant of the first period whose key starts with *value*, and the last of the last.

    ``None`` if *value* is not the leading part of a key of *grain* (:func:`_starts_a_key`). The
    edges lie between the samples :func:`_starts_a_key` reads (periods at month starts).
    """
    samples = _month_periods(grain, value)
    inside = [p for p in samples if p.key.startswith(value)]
    if not inside:
        return None
    first, last = min(inside), max(inside)
    before, after = [p for p in samples if p < first], [p for p in samples if p > last]
    first = _edge(grain, value, first, max(before) if before else None)
    last = _edge(grain, value, last, min(after) if after else None)
    return first.start, last.end - _TICK


def _edge(grain: Grain, value: str, inside: Period, outside: Period | None) -> Period:
    """
    Return the period nearest *outside* of those from *inside* towards it whose keys start with *value*.

    Keys of one leading part are consecutive in time. Under a grain that tiles time, found by
    halving the time between the two; else (business days, sessions: a month of them at most)
    period by period.
    """
    if outside is None:
        return inside
    if not grain.tiles:
        step = -1 if outside < inside else 1
        while True:
            try:
                beside = grain.shift(inside, step)
            except (ValueError, OverflowError):  # the calendar's end
                return inside
            if beside == outside or not beside.key.startswith(value):
                return inside
            inside = beside
    kept, left = inside.start.astimezone(UTC), outside.start.astimezone(UTC)
    while abs(left - kept) > _TICK:
        middle = kept + (left - kept) // 2
        if grain.floor(middle).key.startswith(value):
            kept = middle
        else:
            left = middle
    return grain.floor(kept)


def _day_instants(value: str) -> tuple[datetime, datetime] | None:
    """Return the first and last instants (UTC) of the day another ISO 8601 date names (``2026-W11-1``)."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return None
    return datetime.combine(day, time.min, tzinfo=UTC), datetime.combine(day, time.max, tzinfo=UTC)


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
    raise UsageError(
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

    :raises UsageError: naming *option*, for a local time the grain's zone skips.
    """
    try:
        # Real instants, the end's last one taken before its exclusive end: on a fall-back night
        # "01" names both 01:00 hours, from the first one's start to the second one's end.
        first, after = (local.replace(tzinfo=grain.tz).astimezone(UTC) for local in span)
        key = grain.key(grain.floor(after - timedelta(microseconds=1) if last else first))
    except (ValueError, OverflowError):  # datetime's "year 10000 is out of range"
        return None
    if first >= after:
        raise UsageError(
            f"{option} {value!r} names no time in {grain.timezone}: its clocks skip it (daylight "
            "saving time starts)."
        )
    return key


def _starts_a_key(grain: Grain, value: str) -> bool:
    """
    Whether *value* is the leading part of a key of *grain*: ``2026-W`` of ISO weeks, ``FY2026-``.

    Looked for among the keys of :func:`_month_periods`: every family of keys a year of the grain
    writes.
    """
    return any(p.key.startswith(value) for p in _month_periods(grain, value))


def _month_periods(grain: Grain, value: str) -> list[Period]:
    """
    Return the periods of *grain* at or after the start of each month around the year *value* names.

    Of the year its first four digits name and of the years on either side (a fiscal year is named
    by its end, a retail year may start in the year before); none if it names no year from 0002 to
    9998. Only those with a key (a fiscal year 10000 has none).
    """
    found = re.search(r"\d{4}", value)
    if found is None or not 1 < int(found[0]) < 9999:
        return []
    year = int(found[0])
    periods = []
    for first in (datetime(year + n, month, 1) for n in (-1, 0, 1) for month in range(1, 13)):
        try:
            period = grain.period_at_or_after(first.replace(tzinfo=grain.tz))
            period.key  # noqa: B018 - written once here: a fiscal year 10000 has no key
        except ValueError:  # a calendar without a period then (a business day's on a Sunday)
            continue
        periods.append(period)
    return periods


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
