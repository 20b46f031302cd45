"""
Temporal partition mappers and windows: any ISO 8601 key in, one canonical key per period out.

Each class is a thin view over a :class:`~airflow_partitions.grains.Grain`:

- :class:`TemporalMapper` maps an upstream key to the key of the period of its grain that
  contains it (``2026-07-30T09:15:00+02:00`` → ``2026-07-30`` with ``Day()``), optionally
  shifted by whole periods (``offset=-1``: T-1 processing).
- :class:`TemporalWindow` lists the periods of a finer grain inside one coarser period, for
  Airflow's ``RollupMapper`` (wait for all of them) and ``FanOutMapper`` (one run each).
- :class:`SlidingWindow` is N consecutive periods trailing, leading or centred on each
  downstream period (the last 7 days), one upstream key feeding N downstream periods.
- :class:`TemporalRollupMapper` is Airflow's ``RollupMapper`` for the above, checking at
  Dag parse that the window's grain nests in the mapper's, routing each key to every sliding
  window it belongs to, caching each expected key set, and taking a completion deadline.
- :class:`TemporalFanOutMapper` is Airflow's ``FanOutMapper`` with a default downstream mapper
  for our windows.

Their decoded type is :class:`~airflow_partitions.grains.Period`, not ``datetime``: Airflow's
``RollupMapper`` refuses at Dag parse to pair them with core's naive-datetime mappers and
windows, whose 24-hour days disagree with our DST-correct ones. ``TemporalWindow`` and
``SlidingWindow`` roll up in :class:`TemporalRollupMapper` only, which counts every spelling of a
member period once and refuses keys that would never count when they arrive; Airflow's
``RollupMapper`` refuses them at parse, naming it (:class:`~airflow_partitions.rollup.OnlyOurRollup`).
``BusinessDayWindow`` works in both, as Airflow's docs pair it with core's ``RollupMapper``.

Cost on the scheduler loop: decoding a downstream key, listing a period's members and mapping a
key with an ``offset`` are memoized in bounded, process-wide LRU caches keyed by the frozen grain
(or the mapper), and each member period computes its key once; the scheduler deserializes our
objects afresh every tick, and the new objects hit the same entries. Re-evaluating a pending
rollup costs a few dictionary look-ups.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, ClassVar

from airflow.partition_mappers.base import PartitionMapper
from airflow.partition_mappers.temporal import FanOutMapper, StartOfDayMapper, _BaseTemporalMapper
from airflow.partition_mappers.window import Window

from airflow_partitions.business import BusinessDayWindow
from airflow_partitions.fan_out import MappedPeriodFanOut, largest_fan_out
from airflow_partitions.grains import Grain, Period
from airflow_partitions.grains.keys import OutsideCalendar
from airflow_partitions.grains.stored import ValueEquality, dump, load
from airflow_partitions.grains.zones import time_zone
from airflow_partitions.mapping import check_fan_out
from airflow_partitions.rollup import CountingRollupMapper, OnlyOurRollup
from airflow_partitions.temporal_checks import (
    check_sliding,
    largest_window,
    require_grain,
    sample_keys,
    sliding_start,
)
from airflow_partitions.temporal_keys import KeyReading, decoded_period, shifted_key
from airflow_partitions.temporal_windowing import TemporalWindowing


# The memos of a mapper's keys are in temporal_keys.py; this one is a window's. The scheduler
# deserializes our objects afresh every tick, so it is module-level and keyed by the frozen
# configuration (grains are hashable values): a new, equal window hits the same entries.
@lru_cache(maxsize=256)  # the keys of each expected set are memoized by the rollup, not its periods
def _members(grain: Grain, of: Grain, period: Period) -> tuple[Period, ...]:
    # Keyed by the period's grain too (*of*): periods compare by their bounds only, and a trading
    # session's members skip its lunch break, which another grain's period of the same bounds has not.
    return tuple(grain.members(period))


class TemporalMapper(ValueEquality, PartitionMapper):
    """
    Map any ISO 8601 partition key to the canonical key of the *grain* period that contains it.

    Reads every ISO 8601 spelling (``2026-07-30``, ``2026-07-30T09``, ``2026-07-30T09:15:00Z``,
    ``2026-07-30T09:15+0200``, ``20260730T0915Z``, the keys core's ``CronPartitionTimetable``
    writes) and our period keys (``2026-03``, ``2026-Q1``, ``2026-W11``); a key with a time of
    day and no offset is read in *input_timezone*, by default the grain's time zone (the first
    occurrence on fall-back's repeated hour). A key without a time of day (``2026-03-10``,
    ``20260310``, ``2026-W11-2``, ``2026-03``, or read with a date-only *input_format*) names a
    span of the grain's own local calendar whatever *input_timezone* is, and a date names its
    own day also when days start at ``start_hour``; under a
    :class:`~airflow_partitions.grains.sessions.TradingSession` a date names the session of that
    date (``2026-11-27``: 09:30 to 13:00 New York time). A fiscal or retail grain also reads the
    labelled keys of its own calendar (``FY2026-Q3``, ``R2026-W05``), in its own time zone.
    With *input_format*, keys are read with ``strptime`` instead (``"%Y%m%d"``: ``20260730``).
    Writes the grain's canonical key: ``TemporalMapper(Day())`` maps all of the above to
    ``2026-07-30``, ``TemporalMapper(Hour(timezone="America/New_York"))`` maps
    ``2026-11-01T05:30:00Z`` to ``2026-11-01T01-04:00`` and ``2026-11-01T06:30:00Z`` to
    ``2026-11-01T01-05:00``.

    With *offset*, the key is shifted by whole periods after mapping:
    ``TemporalMapper(Day(), offset=-1)`` maps ``2026-03-10T09:00`` to ``2026-03-09`` (T-1).

    In a rollup, ``RollupMapper(upstream_mapper=TemporalMapper(Day(timezone="America/New_York"),
    input_timezone="UTC"), window=TemporalWindow(Hour()))`` waits for the real UTC hours of each
    New York day (23 on 2026-03-08: ``2026-03-08T05`` … ``2026-03-09T03``). Airflow matches
    received keys to the window's by exact string, so producers must send the member grain's
    canonical keys (or keys in *input_format*), and naive member keys (UTC grains write no
    offset) must be read in the member grain's zone: set *input_timezone* to it.

    ``dag_run.partition_date`` is the period's start (aware). The decoded type is
    :class:`~airflow_partitions.grains.Period`.

    :param grain: The downstream grain.
    :param input_timezone: IANA zone of upstream keys that carry no offset; default: the grain's.
    :param input_format: ``strptime`` format of upstream keys, when they are not ISO 8601.
    :param offset: Periods to shift the mapped key by (negative: earlier).
    :param max_downstream_keys: Passed through to Airflow's fan-out cap, as core mappers do.
    An *input_format* with a time of day but no ``%z`` (``%Y-%m-%dT%H``) reads local wall-clock
    times in *input_timezone*, as naive ISO 8601 keys are read, also in a zone with DST:
    ``2026-11-01T01`` under ``Hour(timezone="America/New_York")`` names both 01:00 hours of the
    fall-back night (it maps to the first, ``2026-11-01T01-04:00``; a rollup counts it for both),
    and ``2026-03-08T02``, skipped by the clocks, is read as 03:00 EDT. ``%z`` tells them apart.

    :raises ValueError: at Dag parse for a grain that is not a grain, an unknown
        *input_timezone*, a non-integer offset, or an *input_format* without a ``%`` directive;
        at mapping time, naming the key and the forms expected, for a key that names no date
        (``2026-02-30``), does not match *input_format* or has characters outside ASCII; naming
        the key and the years read, for a time outside the years 0003 to 9997 (``9999-12-31``:
        its period, neighbours and members would reach past what a datetime holds).
    """

    expected_decoded_type: ClassVar[type] = Period

    def __init__(
        self,
        grain: Grain,
        *,
        input_timezone: str | None = None,
        input_format: str | None = None,
        offset: int = 0,
        max_downstream_keys: int | None = None,
    ) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.grain = require_grain(grain, "TemporalMapper")
        self.input_timezone = input_timezone
        input_tz = (
            time_zone(input_timezone, owner="TemporalMapper input_timezone") if input_timezone else grain.tz
        )
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise ValueError(f"TemporalMapper: offset must be a whole number of periods; got {offset!r}.")
        if input_format is not None and (not isinstance(input_format, str) or "%" not in input_format):
            raise ValueError(
                "TemporalMapper: input_format must be a strptime format such as '%Y%m%d'; "
                f"got {input_format!r}."
            )
        self.input_format = input_format
        self.offset = offset
        self._reading = KeyReading(grain, input_tz, input_format, offset)

    def to_downstream(self, key: str) -> str:
        """Return the canonical key of the period containing *key*, shifted by ``offset``."""
        if self.offset:
            # Shifting builds and walks periods (business days walk the calendar): memoized per key
            # (a key that is not a string is no memo key; it is refused, naming it).
            return shifted_key(self, key) if isinstance(key, str) else self.downstream_period(key).key
        return self._reading.mapped(key, False)

    def downstream_period(self, key: str) -> Period:
        """
        Return the period :meth:`to_downstream` names for *key* (the one holding it, shifted).

        :raises ValueError: naming the key, as :meth:`to_downstream`.
        """
        return self._reading.mapped(key, True)

    def occurrence_periods(self, key: str) -> list[Period]:
        """
        Return every period *key* can name: :meth:`downstream_period`'s, and one more for a repeated hour.

        A naive local time on the hour fall-back repeats names two instants (Berlin's
        ``2026-10-25T02`` is 02:00 CEST and 02:00 CET, :func:`~airflow_partitions.grains.zones.
        occurrences`); a producer looping over a day's local hours writes that key once, for both.
        Under ``Hour(timezone="Europe/Berlin")`` it names ``2026-10-25T02+02:00`` and
        ``2026-10-25T02+01:00``; under ``Day()`` both lie in ``2026-10-25``, one period. Every other
        key names one period. Our rollups count such a key for each (``counts_as``).

        :raises ValueError: naming the key, as :meth:`to_downstream`.
        """
        return self._reading.occurrences(key, True)

    def occurrence_keys(self, key: str) -> list[str]:
        """
        Return the keys of :meth:`occurrence_periods` (``to_downstream``'s, or two for a repeated hour).

        :raises ValueError: naming the key, as :meth:`to_downstream`.
        """
        if self.offset:
            return [period.key for period in self._reading.occurrences(key, True)]
        return self._reading.occurrences(key, False)

    def decode_output(self, downstream_key: str) -> Period:
        """
        Return the period *downstream_key* itself names, offset kept: what a fan-out expands.

        ``TemporalMapper(Day(), offset=-1)`` maps ``2026-03-10`` to ``2026-03-09``, and a fan-out
        of it runs the hours of 2026-03-09; :meth:`decode_downstream` (2026-03-10, the period a
        rollup waits for) is the other direction.

        :raises ValueError: naming the key, if it is not a canonical key of the grain.
        """
        return decoded_period(self.grain, 0, downstream_key)

    def decode_downstream(self, downstream_key: str) -> Period:
        """Return the upstream period a downstream key stands for (its own period, less ``offset``)."""
        return decoded_period(self.grain, self.offset, downstream_key)

    def encode_upstream(self, decoded: Period) -> str:
        """Return the key producers write for the member period *decoded*."""
        if self.input_format:
            return decoded.start.strftime(self.input_format)
        return decoded.key

    def format(self, decoded: Period) -> str:
        """Return the key of this grain's period holding *decoded*'s start (``FanOutMapper``'s output)."""
        return decoded.key if decoded.grain == self.grain else self.grain.key_at(decoded.start)

    def to_partition_date(self, downstream_key: str) -> datetime:
        """Return the start of the period *downstream_key* names, as an aware datetime."""
        return self.grain.parse(downstream_key).start

    def serialize(self) -> dict[str, Any]:
        """Return ``{"grain": …, "offset": …[, "input_format", "max_downstream_keys"]}``, versioned."""
        return dump(
            grain=self.grain.serialize(),
            input_format=self.input_format,
            input_timezone=self.input_timezone,
            offset=self.offset,
            max_downstream_keys=self.max_downstream_keys,
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> TemporalMapper:
        """Rebuild the mapper from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(
            Grain.deserialize(data["grain"]),
            input_timezone=data.get("input_timezone"),
            input_format=data.get("input_format"),
            offset=data.get("offset", 0),
            max_downstream_keys=data.get("max_downstream_keys"),
        )


class TemporalWindow(ValueEquality, Window):
    """
    The periods of *grain* inside one downstream period: what a rollup waits for, a fan-out runs.

    ``TemporalWindow(Minutes(15))`` under an ``Hour()`` mapper: the four slots ``…T09:00``,
    ``…T09:15``, ``…T09:30``, ``…T09:45``. ``TemporalWindow(Hour())`` under
    ``Day(timezone="America/New_York")``: the real hours of the local day, 23 on 2026-03-08, 24,
    or 25 on 2026-11-01 (DST-correct, unlike core's ``DayWindow``). ``TemporalWindow(Cron("0
    9-17 * * 1-5"))`` under a ``Day()``: the nine hourly ticks of a weekday, none on weekends.
    Members tile the period exactly (no gap, no overlap), except for cron grains, whose members
    are the ticks inside it. Size: the period's length over the member's (at most 1440 minutes
    a day; a year of days is 365 or 366).

    A rollup over it is :class:`TemporalRollupMapper`; Airflow's ``RollupMapper`` refuses it at Dag
    parse, naming ours (:class:`~airflow_partitions.rollup.OnlyOurRollup`). Airflow's
    ``FanOutMapper`` (and :class:`TemporalFanOutMapper`) take it.

    :param grain: The member grain.
    :raises ValueError: at Dag parse if *grain* is not a grain; when the scheduler expands the
        window, if its periods do not nest in the downstream period (ISO weeks in a month).
    :raises TypeError: at Dag parse, from Airflow's ``RollupMapper``, if given this window.
    """

    expected_decoded_type = OnlyOurRollup(Period, "TemporalRollupMapper")

    def __init__(self, grain: Grain) -> None:
        super().__init__()
        self.grain = require_grain(grain, "TemporalWindow")

    def to_upstream(self, decoded_downstream: Period) -> Sequence[Period]:
        """Return the member periods of *decoded_downstream*, in order (memoized)."""
        return _members(self.grain, decoded_downstream.grain, decoded_downstream)

    def serialize(self) -> dict[str, Any]:
        """Return ``{"format_version": 1, "grain": …}``."""
        return dump(grain=self.grain.serialize())

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> TemporalWindow:
        """Rebuild the window from :meth:`serialize`'s output."""
        return cls(Grain.deserialize(load(data, cls)["grain"]))


_ALIGNMENTS = ("trailing", "leading", "centred")
#: The widest sliding window: each upstream key feeds this many pending Dag runs, and Airflow's
#: default fan-out cap ([scheduler] partition_mapper_max_downstream_keys) is 1000 as well.
MAX_SLIDING_PERIODS = 1000


class SlidingWindow(ValueEquality, Window):
    """
    The *periods* consecutive periods of *grain* trailing, leading or centred on a downstream one.

    ``SlidingWindow(Day(), 7)`` (trailing, the default) under ``TemporalMapper(Day())``: the
    window for ``2026-03-09`` is ``2026-03-03`` … ``2026-03-09``, and an upstream key
    ``2026-03-05`` belongs to the windows ``2026-03-05`` … ``2026-03-11``. ``align="leading"``:
    ``2026-03-09`` … ``2026-03-15``; ``align="centred"`` (odd *periods*): ``2026-03-06`` …
    ``2026-03-12``. Any grain works (``SlidingWindow(Hour(), 24)``, ``SlidingWindow(BusinessDay(
    calendar), 5)``); periods are the grain's own, so a New York day is 23, 24 or 25 real hours.

    Only :class:`TemporalRollupMapper` can use it: the rollup's ``to_downstream`` must return
    every window a key belongs to (:meth:`containing`), which core's ``RollupMapper`` does not
    (core's ``WeekWindow(direction=BACKWARD)`` routes each day only to itself, so it never
    fires). The two directions agree: ``u in to_upstream(D)`` if and only if ``D in
    containing(u)``. Size: exactly *periods* members, and each key feeds *periods* windows.

    :param grain: The grain of the members; it must be the rollup mapper's grain.
    :param periods: How many periods the window holds (1 to 1000).
    :param align: ``"trailing"`` (ending with the downstream period), ``"leading"`` (starting
        with it) or ``"centred"`` (around it; *periods* must be odd).
    :param start: The first period the producer has, a key of *grain* (``"2026-01-01"``), if its
        data begins there: no window with a member before it is opened, so a feed's first days
        open no trailing window that would wait forever for days before them (with ``Day()``
        and 7 periods, ``2026-01-01`` feeds only the window ``2026-01-07``), and a key before
        it feeds none and is refused on arrival, naming *start*. ``None`` (the default): every
        window opens, and those reaching before the data wait until those keys come (a backfill).
    :raises ValueError: at Dag parse, for a grain that is not a grain, *periods* not a positive
        integer, an unknown *align*, an even centred window, or a *start* that is not a key of
        *grain*; from :meth:`to_upstream`, :class:`~airflow_partitions.grains.keys.OutsideCalendar`
        (a ``ValueError``) for a window with a member before *start*.
    :raises TypeError: at Dag parse, from Airflow's ``RollupMapper``, if given this window, naming
        :class:`TemporalRollupMapper` (:class:`~airflow_partitions.rollup.OnlyOurRollup`).
    """

    expected_decoded_type = OnlyOurRollup(Period, "TemporalRollupMapper")

    def __init__(
        self, grain: Grain, periods: int, *, align: str = "trailing", start: str | None = None
    ) -> None:
        super().__init__()
        self.grain = require_grain(grain, "SlidingWindow")
        if type(periods) is not int or not 1 <= periods <= MAX_SLIDING_PERIODS:
            raise ValueError(
                f"SlidingWindow: periods must be a whole number from 1 to {MAX_SLIDING_PERIODS} such as 7; "
                f"got {periods!r}."
            )
        if align not in _ALIGNMENTS:
            raise ValueError(f"SlidingWindow: align must be one of {_ALIGNMENTS}; got {align!r}.")
        if align == "centred" and periods % 2 == 0:
            raise ValueError(
                f"SlidingWindow: a centred window needs an odd number of periods; got {periods}."
            )
        self.periods = periods
        self.align = align
        first = {"trailing": 1 - periods, "leading": 0, "centred": -(periods // 2)}[align]
        #: Offsets, in periods, of the members from the downstream period.
        self.offsets = range(first, first + periods)
        self._start = sliding_start(self.grain, start)

    @property
    def start(self) -> str | None:
        """The first period of the data, as its key (``2026-02-22``); ``None``: every window opens."""
        return self._start.key if self._start else None

    def to_upstream(self, decoded_downstream: Period) -> list[Period]:
        """
        Return the member periods of the window on *decoded_downstream*, in order.

        :raises ValueError: naming the window, if a member is before :attr:`start`.
        """
        members = self._run(decoded_downstream, self.offsets[0])
        if self.before_start(members[0]):
            raise OutsideCalendar(
                f"partition key {decoded_downstream.key!r}: its window starts at {members[0].key!r}, before "
                f"the SlidingWindow's start {self.start!r}, so it is never opened."
            )
        return members

    def first_window(self) -> Period | None:
        """Return the first window opened, whose first member is :attr:`start` (``None`` without one)."""
        return None if self._start is None else self.grain.shift(self._start, -self.offsets[0])

    def before_start(self, period: Period) -> bool:
        """Return whether *period* is before :attr:`start`, and so feeds no window."""
        return self._start is not None and period.utc[0] < self._start.utc[0]

    def containing(self, period: Period) -> list[Period]:
        """
        Return the downstream periods whose window holds *period*, in order.

        Near year 1 or 9999 only those a ``datetime`` can hold (a 7-day leading window of
        ``0001-01-03`` has no window starting two days before it).
        """
        try:
            return self._run(period, -self.offsets[-1])
        except (OverflowError, ValueError):  # datetime's "year 0 is out of range"
            return [shifted for step in range(self.periods) if (shifted := self._shifted(period, step))]

    def _shifted(self, period: Period, step: int) -> Period | None:
        """Return the *step*-th period of :meth:`containing`'s run, or ``None`` if no datetime holds it."""
        try:
            return self.grain.shift(period, step - self.offsets[-1])
        except (OverflowError, ValueError):
            return None

    def _run(self, period: Period, first: int) -> list[Period]:
        """Return *periods* consecutive periods from *first* periods after *period*, step by step."""
        current = self.grain.shift(period, first) if first else period
        run = [current]
        for _ in range(self.periods - 1):
            current = self.grain.shift(current, 1)  # one step: a cron grain walks shifts tick by tick
            run.append(current)
        return run

    def serialize(self) -> dict[str, Any]:
        """Return ``{"align", "format_version", "grain", "periods"}``, and ``"start"`` if given."""
        return dump(grain=self.grain.serialize(), periods=self.periods, align=self.align, start=self.start)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> SlidingWindow:
        """Rebuild the window from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(
            Grain.deserialize(data["grain"]), data["periods"], align=data["align"], start=data.get("start")
        )


class TemporalRollupMapper(CountingRollupMapper):
    """
    Airflow's ``RollupMapper`` for a :class:`TemporalMapper` and our windows, counting periods.

    ``TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))``
    maps ``2026-03-10T09`` to ``2026-03-10`` and runs the consumer once all 24 hours of that
    day have arrived. Like every rollup of ours (:class:`~airflow_partitions.rollup.
    CountingRollupMapper`), it counts each key as the member period it names, whatever its
    spelling (:class:`MemberSpelling`: ``2026-03-10T00Z`` counts as ``2026-03-10T00``), and
    refuses on arrival a key that names no member (a Saturday for a business-day window).
    In addition:

    - With a :class:`SlidingWindow`, each upstream key is routed to every window it belongs to:
      ``TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(),
      7))`` maps ``2026-03-05`` to ``2026-03-05`` … ``2026-03-11``, and runs ``2026-03-09`` once
      ``2026-03-03`` … ``2026-03-09`` have all arrived (one run per complete window).
    - With a :class:`~airflow_partitions.business.BusinessDayWindow`, a month (or any period of
      the mapper's grain) waits for its business days in the mapper's time zone.
    - ``wait_policy`` may be a :class:`~airflow_partitions.deadlines.CompletionDeadline`: fire
      when complete, or after the period's end plus a grace with what has arrived.
    - At Dag parse, it checks that the window's grain tiles the mapper's (on an ordinary day, both
      2026 US DST changes, a year end and a leap day), so ``TemporalWindow(IsoWeek())`` under
      ``TemporalMapper(Month())`` is refused there, not discovered by the scheduler; and that
      the member keys map back to the period that waits for them.
    - It memoizes each downstream key's expected upstream key set process-wide, so the scheduler's
      re-evaluation of a pending rollup on every tick is one cache look-up; a window of more than
      :data:`LISTED_MEMBERS` minutes or hours of one length (a year of minutes) is counted out,
      not listed (:meth:`to_upstream`).

    :param upstream_mapper: A :class:`TemporalMapper` (reads upstream keys, names the period).
    :param window: A :class:`TemporalWindow` (the member grain), a :class:`SlidingWindow` (of the
        mapper's grain) or a :class:`~airflow_partitions.business.BusinessDayWindow`.
    :param wait_policy: Airflow's ``WaitForAll`` (default) or ``MinimumCount``, or a
        :class:`~airflow_partitions.deadlines.CompletionDeadline`.
    :param max_downstream_keys: Airflow's fan-out cap; a sliding window's *periods* must not
        exceed it (checked at parse).
    :param max_upstream_keys: The most upstream keys one period may await (default 50,000,
        :data:`~airflow_partitions.rollup.DEFAULT_MAX_UPSTREAM_KEYS`: a leap year of hours and a
        month of minutes fit); checked at parse against the largest period.
    :param rerun_policy: What a key for a period that already ran does: ``"hold"`` (default, and
        Airflow 3.3's only behaviour: it opens a pending run beside the run, which waits for the
        whole period again), ``"refresh"`` or ``"ignore"``, or Airflow 3.4's ``RerunPolicy``
        members; applied by Airflow 3.4's scheduler (:func:`~airflow_partitions.rollup.as_rerun_policy`).
    :param expected_within: How long after its period's end each partition is expected to have run
        (a ``timedelta`` longer than zero, at most ten years; default ``None``, no expectation):
        with ``timedelta(hours=2)``, the day ``2026-03-10`` is late from 02:00 the next day in the
        mapper's time zone if it has no successful run by then (:meth:`~airflow_partitions.rollup.
        CountingRollupMapper.late_at`). Periods the calendar does not have (holidays, days without
        a session) are never partitions, so never late.
    :raises ValueError: at Dag parse, for an *expected_within* that is not a ``timedelta`` longer
        than zero (and at most ten years), for a *rerun_policy* Airflow cannot apply (see
        :func:`~airflow_partitions.rollup.as_rerun_policy`), if the mapper or window is not ours,
        the window's grain does not nest in the mapper's (or, sliding, differs from it), member keys
        would not map back (or an *input_format* writes distinct local times alike: ``%Y-%m-%d`` under hours),
        a sliding window is wider than the fan-out cap, or a period awaits more keys than
        *max_upstream_keys* (naming the count, the cap and the way out); at mapping time, naming
        the key, for a key the mapper cannot read or that names no member of its window.
    """

    upstream_mapper: TemporalMapper
    window: TemporalWindow | SlidingWindow | BusinessDayWindow

    def __init__(
        self,
        *,
        upstream_mapper: TemporalMapper,
        window: TemporalWindow | SlidingWindow | BusinessDayWindow,
        wait_policy: Any = None,
        max_downstream_keys: int | None = None,
        max_upstream_keys: int | None = None,
        rerun_policy: Any = None,
        expected_within: timedelta | None = None,
    ) -> None:
        if not isinstance(upstream_mapper, TemporalMapper) or not isinstance(
            window, TemporalWindow | SlidingWindow | BusinessDayWindow
        ):
            raise ValueError(
                "TemporalRollupMapper: upstream_mapper must be a TemporalMapper and window a TemporalWindow, "
                f"SlidingWindow or BusinessDayWindow; got {type(upstream_mapper).__name__} and "
                f"{type(window).__name__} (use Airflow's RollupMapper for Airflow's mappers and windows)."
            )
        grain = upstream_mapper.grain
        member_grain = window.grain(grain.timezone) if isinstance(window, BusinessDayWindow) else window.grain
        super().__init__(
            upstream_mapper=upstream_mapper,
            window=window,
            windowing=TemporalWindowing(
                upstream_mapper,
                window,
                member_grain=member_grain,
                sliding=isinstance(window, SlidingWindow),
                slots=window.grain if isinstance(window, TemporalWindow) else None,
            ),
            wait_policy=wait_policy,
            max_downstream_keys=max_downstream_keys,
            max_upstream_keys=max_upstream_keys,
            rerun_policy=rerun_policy,
            expected_within=expected_within,
        )
        sliding = window if isinstance(window, SlidingWindow) else None
        if (size := largest_window(grain, member_grain, sliding.periods if sliding else None)) is not None:
            self._check_size(*size)
        if sliding:
            check_sliding(sliding, grain, max_downstream_keys)
        #: The most keys one upstream key maps to: every sliding window it feeds, else its period.
        self.largest_fan_out = sliding.periods if sliding else 1
        self._check_routes(
            sample_keys(grain, sliding.first_window() if sliding else None),
            hint="read naive member keys in the window grain's zone: "
            f"TemporalMapper(..., input_timezone={member_grain.timezone!r})",
        )


class TemporalFanOutMapper(ValueEquality, MappedPeriodFanOut):
    """
    Airflow's ``FanOutMapper`` whose downstream mapper defaults to ``TemporalMapper(window.grain)``.

    ``TemporalFanOutMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))``
    turns ``2026-03-10`` into ``2026-03-10T00`` … ``2026-03-10T23`` (one Dag run each).

    With core's windows it defaults as core's ``FanOutMapper`` does, and a
    :class:`~airflow_partitions.business.BusinessDayWindow` fans a month out to its business days
    with ``StartOfDayMapper()`` (``2026-03`` → ``2026-03-02`` … ``2026-03-31``).

    At Dag parse, the largest fan-out of a :class:`TemporalWindow` under a :class:`TemporalMapper`
    (31 days of a month, 25 hours of a New York fall-back day, 366 days of a leap year) is checked
    against *max_downstream_keys* (default: ``[scheduler] partition_mapper_max_downstream_keys``,
    1000), so ``Year()`` fanned out to ``Hour()`` (8,784) is refused when the Dag is parsed rather
    than skipped by the scheduler.

    :raises ValueError: at Dag parse, as core's ``FanOutMapper``, for a window with no default;
        naming the widest period, if the largest fan-out exceeds the cap.
    """

    def __init__(
        self,
        *,
        upstream_mapper: PartitionMapper,
        window: Window,
        downstream_mapper: PartitionMapper | None = None,
        max_downstream_keys: int | None = None,
    ) -> None:
        super().__init__(
            upstream_mapper=upstream_mapper,
            window=window,
            downstream_mapper=downstream_mapper,
            max_downstream_keys=max_downstream_keys,
        )
        #: The most keys one upstream key maps to (1 when unknown: core's windows).
        self.largest_fan_out = 1
        if isinstance(upstream_mapper, TemporalMapper) and isinstance(window, TemporalWindow):
            self.largest_fan_out, widest = largest_fan_out(upstream_mapper, window)
            check_fan_out("TemporalFanOutMapper", self.largest_fan_out, widest, max_downstream_keys)

    default_downstream_mapper_by_window_name: ClassVar[dict[str, type[_BaseTemporalMapper]]] = {
        **FanOutMapper.default_downstream_mapper_by_window_name,
        "BusinessDayWindow": StartOfDayMapper,
    }

    @classmethod
    def _resolve_default_downstream_mapper(cls, window: Window) -> PartitionMapper:
        if isinstance(window, TemporalWindow):
            return TemporalMapper(window.grain)
        return super()._resolve_default_downstream_mapper(window)
