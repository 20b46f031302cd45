"""
What a temporal rollup asks of its window: periods, their spellings, windows that slide or are counted out.

The :class:`~airflow_partitions.windowing.Windowing` of
:class:`~airflow_partitions.temporal.TemporalRollupMapper` (built by it, never called back):

- a key is routed to the period holding it, or to every window of a sliding window it feeds;
- a key is read as the member period it names, whatever its spelling (:class:`MemberSpelling`);
- a window of more than :data:`LISTED_MEMBERS` minutes or hours of one length (a year of minutes)
  is checked by its bounds and counted out (:class:`~airflow_partitions.windowing.ExpectedSlots`),
  not listed.
"""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache
from typing import Any

from airflow_partitions.grains import (
    Day,
    Grain,
    IsoWeek,
    Minutes,
    Month,
    Period,
    Quarter,
    TradingSession,
    Year,
)
from airflow_partitions.grains.clock import mean_time_between
from airflow_partitions.grains.keys import (
    FIRST_YEAR,
    ISO_WEEK_KEY,
    LAST_YEAR,
    OutsideCalendar,
    is_iso_date,
    read_dated,
    shown,
)
from airflow_partitions.windowing import Awaited, ExpectedSlots, Windowing

#: Entries kept by the memo of each window's bounds: one look-up per event into a pending period.
_CACHE_SIZE = 8192


#: Above this many members a window of minutes or hours is checked by its bounds, not listed, at
#: Dag parse and on each event (:meth:`TemporalWindowing.edge_keys`, :meth:`TemporalWindowing.awaits`),
#: and counted out for the scheduler (:meth:`TemporalWindowing.expected`): a day of minutes (1,440)
#: and smaller windows are listed, member by member.
LISTED_MEMBERS = 1_440
#: The smallest step of time: the last instant of a period is its end less this.
_INSTANT = timedelta(microseconds=1)

#: Why a date or period key counts as no member: ``2026-03`` under days, ``2027-W01`` under weeks
#: from Sunday (as long as one, across two).
_NO_MEMBER = "it names a span that no one member of the window holds, being longer or across two"


class MemberSpelling:
    """
    Read an upstream key as the member period of *grain* it names, spelled as a rollup awaits it.

    ``MemberSpelling(TemporalMapper(Day()), Hour())`` (*mapper* a
    :class:`~airflow_partitions.temporal.TemporalMapper`) reads ``2026-03-10T00:00:00``,
    ``2026-03-10T00Z``, ``2026-03-10T00:00+00:00`` and ``20260310T00`` all as ``2026-03-10T00``
    (the key *mapper* writes for that hour: its canonical key, or its ``input_format``). Naive
    keys are read as *mapper* reads them (its ``input_timezone``, else its grain's zone). A key
    with a time of day names the member holding its instant; a naive local time on the hour
    fall-back repeats names both instants, and so the members holding each (Berlin's
    ``2026-10-25T02`` is ``2026-10-25T02+02:00`` and ``2026-10-25T02+01:00`` where hours are
    awaited: a producer looping over the local hours of that day sends 24 keys for its 25 hours);
    one in the hour spring-forward skips names the instant after the gap (Berlin's
    ``2026-03-29T02`` counts as ``2026-03-29T03+02:00``, as its ``T03`` does; the 23-hour day
    completes on the 24 keys such a producer sends). A key without one names a span of
    the local calendar, in the member grain's zone: a date (``2026-03-10``, ``20260310``,
    ``2026-W11-2``) names its own day (where members are days, its own day even when days start at
    ``start_hour``), and a period key (``2026-03``, ``2026-Q1``, ``2026-W11``, ``2026``) its
    period; it names the member holding that span if one does (``2026-06-01`` under months:
    ``2026-06``), and no member if the span is longer (``2026-03-10`` where hours are awaited).

    :raises ValueError: from :meth:`__call__`, naming the key: if it cannot be read, falls in no
        member (a Saturday for business days), or names a span that no one member holds.
    """

    def __init__(self, mapper: Any, grain: Grain) -> None:
        self.encode = mapper.encode_upstream
        self.input_format = mapper.input_format
        zone = mapper.input_timezone or mapper.grain.timezone
        reader = type(mapper)  # a TemporalMapper, reading keys as the rollup's mapper does
        self.reader = reader(grain, input_timezone=zone, input_format=mapper.input_format)
        self.calendar = mapper.grain  # reads the labelled keys of its calendar (FY2026-Q3)
        self.days = isinstance(grain, Day | TradingSession)  # members a date names: its own
        #: Readers of the local day a date names, and the grains whose canonical keys name longer
        #: spans of the member grain's local calendar.
        self.day = reader(Day(timezone=grain.timezone), input_format=mapper.input_format)
        self.spans = [kind(timezone=grain.timezone) for kind in (IsoWeek, Month, Quarter, Year)]

    def __call__(self, key: str) -> tuple[str, ...]:
        """Return the awaited spelling of the member *key* names (of both, for a repeated hour)."""
        try:
            periods = self.reader.occurrence_periods(key)
        except ValueError:
            # A period key the members' grain cannot read as one of them (2026-03 under business
            # days starts on a Sunday; FY2026-Q3 under calendar months): said as such, whatever
            # its first day.
            if self._names_period(key):
                raise ValueError(_NO_MEMBER) from None
            raise
        members = tuple(dict.fromkeys(self.encode(period) for period in periods))
        if members == (key,) or not read_dated(key, self.input_format)[1]:
            return members  # the key's own spelling, or a time of day: the member holding it
        # A date or a period key names a span of the local calendar: the member holding that span.
        (period,) = periods
        if self.days and self._names_day(key):
            return members
        span = self._span(key)
        if span is not None and period.utc[0] <= span.utc[0] and span.utc[1] <= period.utc[1]:
            return members
        raise ValueError(f"{_NO_MEMBER} (such as {members[0]!r})")

    def _names_period(self, key: str) -> bool:
        """Return whether *key* names a period longer than a day of the mapper's calendar."""
        if self._names_day(key):
            return False
        try:
            return read_dated(key, self.input_format, self.calendar)[1]
        except ValueError:
            return False

    def _names_day(self, key: str) -> bool:
        if self.input_format:
            return "%d" in self.input_format or "%j" in self.input_format
        return is_iso_date(key)

    def _span(self, key: str) -> Period | None:
        """Return the local day or period a key without a time of day names, if it names one."""
        if self._names_day(key):
            return self.day.downstream_period(key)
        if week := ISO_WEEK_KEY.fullmatch(key):
            key = f"{week['y']}-W{week['w']}"  # the basic 2026W11, as IsoWeek writes it
        for grain in self.spans:
            try:
                return grain.parse(key)
            except ValueError:
                continue
        return None


class TemporalWindowing(Windowing):
    """
    What :class:`~airflow_partitions.temporal.TemporalRollupMapper` asks of its window (module docstring).

    :param upstream_mapper: The rollup's :class:`~airflow_partitions.temporal.TemporalMapper`.
    :param window: Its window (a ``TemporalWindow``, ``SlidingWindow`` or ``BusinessDayWindow``).
    :param member_grain: The grain of the window's members (a business day's in the mapper's zone).
    :param sliding: Whether the window slides (one key feeds several windows).
    :param slots: The member grain if the window is a ``TemporalWindow``, whose periods may be
        counted out by their bounds; ``None`` for other windows (always listed).
    """

    def __init__(
        self, upstream_mapper: Any, window: Any, *, member_grain: Grain, sliding: bool, slots: Grain | None
    ) -> None:
        super().__init__(upstream_mapper, window)
        self.sliding = sliding
        self.slots = slots
        self.spelling = MemberSpelling(upstream_mapper, member_grain)

    def route(self, key: str) -> list[str]:
        """
        Return the key of the period holding *key* or, sliding, the keys of every window it feeds.

        :raises ValueError: naming the key, as the mapper's ``to_downstream``.
        """
        if not self.sliding:
            return self.upstream_mapper.occurrence_keys(key)
        periods = self.upstream_mapper.occurrence_periods(key)
        return list(dict.fromkeys(p.key for period in periods for p in self.window.containing(period)))

    def feeds_none(self, key: str) -> ValueError:
        """Return why a sliding *key* feeds no window: before the window's start, or past the years."""
        start = getattr(self.window, "start", None) if self.sliding else None
        if start is not None:
            periods = self.upstream_mapper.occurrence_periods(key)
            if all(self.window.before_start(period) for period in periods):
                return OutsideCalendar(
                    f"partition key {shown(key)} is before the SlidingWindow's start {start!r}, the "
                    "first period the producer has: it feeds no window."
                )
        return super().feeds_none(key)

    def unlisted(self, decoded: Period) -> Grain | None:
        """
        Return the member grain if the window of *decoded* is checked by its bounds, not listed.

        For a ``TemporalWindow`` of more than :data:`LISTED_MEMBERS` members of one length
        (minutes, hours) whose first starts at *decoded*'s start and last ends at its end, away
        from the years 0003 and 9997, under a mapper writing canonical keys (no *input_format*:
        distinct members have distinct keys): its members are then exactly the member grain's
        periods inside *decoded*. ``None`` otherwise (the window is listed).
        """
        member = self.slots
        slot = member.fixed_length if member is not None else None
        if member is None or slot is None or self.upstream_mapper.input_format is not None:
            return None
        start, end = decoded.utc
        if (end - start) // slot <= LISTED_MEMBERS or decoded.grain.spans(decoded) != (decoded.utc,):
            return None
        if not FIRST_YEAR + 2 < start.year <= end.year < LAST_YEAR - 1:
            return None
        if member.floor(start).utc[0] != start or member.floor(end - _INSTANT).utc[1] != end:
            return None  # members that do not tile it: listing it names the period
        return member

    def expected(self, downstream_key: str, read: Any, owner: int) -> Awaited:
        """
        Return the upstream keys *downstream_key* waits for, with its closing time.

        A window checked by its bounds (:meth:`unlisted`: more than :data:`LISTED_MEMBERS` minutes
        or hours of one length, such as a year of minutes, 525,600 keys) is counted out, not
        listed: an :class:`~airflow_partitions.windowing.ExpectedSlots`, which answers as the listed
        ``frozenset`` would in a few milliseconds and under a megabyte. Any other window is listed
        (:class:`~airflow_partitions.windowing.ExpectedKeys`).

        :raises ValueError: if *downstream_key* is not a key this rollup writes, or its window
            cannot be listed (members that do not nest, a window reaching past year 1 or 9999).
        """
        found = _bounds_checked(self, downstream_key)
        if found is not None:
            decoded, member = found
            slot = member.fixed_length
            start, end = decoded.utc
            # Slots that fit the period a whole number of times, and keys not of a local mean
            # time (written to the minute, they may repeat): counted out; else listed.
            if (
                isinstance(member, Minutes)
                and slot is not None
                and not (end - start) % slot
                and not mean_time_between(member.timezone, start, end)
            ):
                return ExpectedSlots(member, start, (end - start) // slot, end, downstream_key, owner)
        return super().expected(downstream_key, read, owner)

    def edge_keys(self, downstream_key: str) -> list[str] | None:
        """Return the first and last three keys of a window checked by its bounds (:meth:`unlisted`)."""
        found = _bounds_checked(self, downstream_key)
        if found is None:
            return None
        decoded, member = found
        first, last = member.floor(decoded.utc[0]), member.floor(decoded.utc[1] - _INSTANT)
        edges = [member.shift(first, n) for n in range(3)] + [member.shift(last, n) for n in range(-2, 1)]
        return [self.upstream_mapper.encode_upstream(period) for period in edges]

    def awaits(self, downstream_key: str, key: str) -> bool:
        """Return whether *key* names a member inside a window checked by its bounds (:meth:`unlisted`)."""
        found = _bounds_checked(self, downstream_key)
        if found is None:
            return False
        decoded, member = found
        try:
            periods = [member.parse(spelled) for spelled in self.counts_as(key)]
        except ValueError:
            return False  # listing the window says why
        start, end = decoded.utc
        return any(start <= period.utc[0] and period.utc[1] <= end for period in periods)

    def counts_as(self, key: str) -> tuple[str, ...]:
        """
        Return the members *key* counts as, spelled as the window awaits them (:class:`MemberSpelling`).

        ``("2026-03-10T00",)`` for ``2026-03-10T00:00:00Z`` under hours; two members for a naive
        local time on a repeated hour (``2026-10-25T02`` in Berlin).

        :raises ValueError: saying why, if *key* names no member.
        """
        return self.spelling(key)


@lru_cache(maxsize=_CACHE_SIZE)
def _bounds_checked(windowing: TemporalWindowing, downstream_key: str) -> tuple[Period, Grain] | None:
    # Every event asks this for each period it maps to: one memo look-up, as to_upstream's.
    decoded = windowing.upstream_mapper.decode_downstream(downstream_key)
    member = windowing.unlisted(decoded)
    return None if member is None else (decoded, member)
