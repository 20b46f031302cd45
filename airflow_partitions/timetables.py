"""
Producer timetables for partitioned assets.

- :class:`ScheduledRuntimePartitionTimetable` and :class:`IntervalRuntimePartitionTimetable`: a
  cron or interval schedule whose runs let the task decide the keys (``partitioned_at_runtime``).
- :class:`GrainPartitionTimetable`: one run per period of a grain, keyed ahead of the run in
  the grain's canonical format (business days, fiscal and retail periods, N-minute slots …).
- :class:`ExplicitPartitionTimetable`: a fixed list of keys, each with its run time.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pendulum
from airflow.exceptions import InvalidPartitionKeyError
from airflow.timetables.base import DagRunInfo, DataInterval, Timetable
from airflow.timetables.trigger import CronTriggerTimetable, DeltaTriggerTimetable
from croniter import CroniterBadDateError, croniter
from dateutil.relativedelta import relativedelta
from pendulum.tz.timezone import FixedTimezone, Timezone

from airflow_partitions.business import BusinessDay
from airflow_partitions.grains import Grain, Minutes, Period, TradingSession
from airflow_partitions.grains.grain import WallClockGrain
from airflow_partitions.grains.keys import MAX_KEY_LENGTH
from airflow_partitions.grains.stored import dump, load
from airflow_partitions.grains.zones import resolve
from airflow_partitions.mapping import require_text

if TYPE_CHECKING:
    from airflow.timetables.base import TimeRestriction
    from airflow.utils.types import DagRunType

#: Largest ``offset`` a :class:`GrainPartitionTimetable` accepts, in periods either way.
MAX_OFFSET = 1000


def _utcnow() -> datetime.datetime:
    """Return the current time (the one clock read of these timetables; tests replace it)."""
    return datetime.datetime.now(datetime.UTC)


def _utc(instant: datetime.datetime) -> pendulum.DateTime:
    """Return *instant* (aware) as a pendulum UTC datetime, as Airflow stores run times."""
    return pendulum.instance(instant.astimezone(datetime.UTC))


def _run_id(run_type: DagRunType, run_after: datetime.datetime, partition_key: str | None) -> str:
    # As core's CronPartitionTimetable: time, key and a random suffix (two runs can share a time).
    from airflow.utils.strings import get_random_string

    suffix = run_after.isoformat()
    if partition_key:
        suffix = f"{suffix}__{partition_key}"
    return run_type.generate_run_id(suffix=f"{suffix}__{get_random_string()}")


class ScheduledRuntimePartitionTimetable(CronTriggerTimetable):
    """
    Run on a cron schedule and let the task decide the partition keys it produces.

    Scheduling is exactly :class:`~airflow.timetables.trigger.CronTriggerTimetable`'s: one run
    at each cron tick, in *timezone* (``"0 6 * * *"`` with ``timezone="America/New_York"`` runs
    at 06:00 New York time, 11:00 or 10:00 UTC depending on DST). The run itself has no
    partition key; the producing task adds the keys it actually produced::

        outlet_events[asset].add_partitions(["jfk::2013-03-10", "lga::2013-03-10"])

    Each key becomes one partitioned asset event (two keys, two events). A run that adds no
    key produces no partitioned event: if the task succeeds it emits Airflow's ordinary,
    unpartitioned event, which partitioned consumers ignore (the scheduler logs ``missing
    partition key``); raise ``AirflowSkipException`` instead to emit nothing at all.

    It differs from ``PartitionedAtRuntime`` (which never schedules) and from
    ``CronPartitionTimetable`` (which decides the key from the tick before the run).

    :param cron: A five-field cron expression or preset (``"@daily"``), read by ``croniter``
        exactly as Airflow reads it.
    :param timezone: An IANA time zone name (``"America/New_York"``), a ``ZoneInfo`` or a pendulum
        time zone.
    :param interval: Data interval length before each tick, as in ``CronTriggerTimetable``.
    :param run_immediately: As in ``CronTriggerTimetable``: whether the first run is the most
        recent past tick.
    :raises ValueError: at Dag parse, if *cron* is not a valid five-field expression or preset
        (or names no date that exists, like ``"0 6 31 2 *"``), *timezone* is not a known IANA time
        zone, *interval* is not a non-negative duration, or *run_immediately* is neither a bool
        nor a timedelta.
    """

    partitioned_at_runtime = True

    def __init__(
        self,
        cron: str,
        *,
        timezone: str | Timezone | FixedTimezone,
        interval: datetime.timedelta | relativedelta = datetime.timedelta(),
        run_immediately: bool | datetime.timedelta = False,
    ) -> None:
        owner = "ScheduledRuntimePartitionTimetable"
        require_text(cron, owner=owner, name="cron", example="0 6 * * *")
        if isinstance(timezone, ZoneInfo):
            timezone = timezone.key
        if not isinstance(interval, datetime.timedelta | relativedelta) or (
            isinstance(interval, datetime.timedelta) and interval < datetime.timedelta()
        ):
            raise ValueError(
                f"{owner}: interval must be a non-negative timedelta or relativedelta, "
                f"e.g. timedelta(hours=1); got {interval!r}."
            )
        if not isinstance(run_immediately, bool | datetime.timedelta):
            raise ValueError(
                f"{owner}: run_immediately must be True, False or a timedelta; got {run_immediately!r}."
            )
        if not isinstance(timezone, str | Timezone | FixedTimezone):
            raise ValueError(
                f"{owner}: timezone must be an IANA time zone name such as 'America/New_York' "
                f"(or a pendulum time zone); got {timezone!r}."
            )
        try:
            super().__init__(cron, timezone=timezone, interval=interval, run_immediately=run_immediately)
        except ValueError as err:  # pendulum's InvalidTimezone is a ValueError
            raise ValueError(
                f"{owner}: timezone {timezone!r} is not an IANA time zone name such as 'UTC' or "
                "'America/New_York'."
            ) from err
        # Core accepts a bad expression here and fails later; we refuse it at Dag parse.
        fields = self._expression.split()
        if not croniter.is_valid(self._expression) or (
            len(fields) != 5 and not self._expression.startswith("@")
        ):
            raise ValueError(
                f"{owner}: cron {cron!r} is not a valid five-field cron expression "
                "(minute hour day-of-month month day-of-week) or preset, e.g. '0 6 * * *' or '@daily'."
            )
        try:  # a valid expression can still name no real date, e.g. '0 6 31 2 *' (31 February)
            croniter(self._expression, datetime.datetime(2000, 1, 1)).get_next(datetime.datetime)
        except CroniterBadDateError as err:
            raise ValueError(f"{owner}: cron {cron!r} never fires: it names no date that exists.") from err

    @property
    def summary(self) -> str:
        """Return the cron expression, as the Airflow UI shows it for cron schedules."""
        return self._expression

    def serialize(self) -> dict[str, Any]:
        """Return ``CronTriggerTimetable``'s form (expression, timezone, interval, …) with a version."""
        return dump(**super().serialize())

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        """Rebuild the timetable from :meth:`serialize`'s output."""
        return super().deserialize(load(data, cls))


def _check_interval(value: Any, *, owner: str, name: str, positive: bool) -> None:
    """Refuse anything but a (positive, or non-negative) ``timedelta`` or ``relativedelta``."""
    ok = isinstance(value, datetime.timedelta | relativedelta)
    if ok:
        start = datetime.datetime(2000, 1, 1)
        ok = start + value > start if positive else start + value >= start
    if not ok:
        kind = "positive" if positive else "non-negative"
        raise ValueError(
            f"{owner}: {name} must be a {kind} timedelta or relativedelta, e.g. timedelta(minutes=15); "
            f"got {value!r}."
        )


class IntervalRuntimePartitionTimetable(DeltaTriggerTimetable):
    """
    Run every *delta* and let the task decide the partition keys it produces.

    Scheduling is exactly :class:`~airflow.timetables.trigger.DeltaTriggerTimetable`'s: runs
    *delta* apart in real time, the first at the Dag's ``start_date`` (or now, without one). As
    with :class:`ScheduledRuntimePartitionTimetable`, the run has no key; the task adds the keys
    it produced with ``outlet_events[asset].add_partitions([...])``, one partitioned asset event
    per key.

    :param delta: Time between runs: a positive ``timedelta`` (``timedelta(minutes=15)``) or
        ``relativedelta`` (``relativedelta(months=1)``).
    :param interval: Data interval length before each run, as in ``DeltaTriggerTimetable``.
    :raises ValueError: at Dag parse, if *delta* is not a positive duration or *interval* not a
        non-negative one.
    """

    partitioned_at_runtime = True

    def __init__(
        self,
        delta: datetime.timedelta | relativedelta,
        *,
        interval: datetime.timedelta | relativedelta = datetime.timedelta(),
    ) -> None:
        owner = "IntervalRuntimePartitionTimetable"
        _check_interval(delta, owner=owner, name="delta", positive=True)
        _check_interval(interval, owner=owner, name="interval", positive=False)
        super().__init__(delta, interval=interval)
        self.description = f"Every {delta}; the task decides the partition keys"

    def serialize(self) -> dict[str, Any]:
        """Return ``DeltaTriggerTimetable``'s form (delta, interval) with a version."""
        return dump(**super().serialize())

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        """Rebuild the timetable from :meth:`serialize`'s output."""
        return super().deserialize(load(data, cls))


class _KeyedAheadTimetable(Timetable):
    """What our timetables that work out partition keys ahead of the run share (private)."""

    partitioned = True

    def next_dagrun_info(
        self, *, last_automated_data_interval: DataInterval | None, restriction: TimeRestriction
    ) -> DagRunInfo | None:
        """
        Answer the pre-partition API (``LatestOnlyOperator``, ``AssetOrTimeSchedule`` call it).

        Runs of this timetable have no data interval: an earlier run is found by the interval's
        end, read as its ``run_after``.
        """
        last = None
        if last_automated_data_interval is not None:
            end = last_automated_data_interval.end
            last = DagRunInfo(run_after=end, data_interval=last_automated_data_interval)
        return self.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction)

    def infer_manual_data_interval(self, *, run_after: pendulum.DateTime) -> DataInterval:
        """Return the instant a manual run was triggered at as its data interval (as core's triggers)."""
        return DataInterval(run_after, run_after)

    def generate_run_id(
        self,
        *,
        run_type: DagRunType,
        run_after: pendulum.DateTime,
        data_interval: DataInterval | None,
        **extra: Any,
    ) -> str:
        """Return ``<type>__<run_after>__<key>__<random>``, as core's ``CronPartitionTimetable``."""
        return _run_id(run_type, run_after, extra.get("partition_key"))


class GrainPartitionTimetable(_KeyedAheadTimetable):
    """
    One run per period of a grain, for the partition *offset* periods from it, keyed ahead.

    Each period of *grain* is one partition, keyed ``grain.key(period)``: exactly the keys
    ``TemporalMapper(grain)`` writes and reads (so a consumer with that mapper, or a rollup over
    it, accepts them by construction), and ``dag_run.partition_date`` is the period's start.

    **When runs happen.** Every period of the grain is a *run period*: the timetable runs once in
    it, *lag* after it starts, for the partition ``offset`` periods from it. The default,
    ``offset=-1, lag=timedelta(0)``, runs as each period ends (the next one starts) for the
    period just ended; ``offset=0`` runs at the start of the period for the period itself (core's
    ``CronPartitionTimetable`` with ``run_offset=0``). For grains cut at local wall-clock times
    (days, business days, weeks, months, fiscal and retail periods, ``Minutes(n)`` with *n* over
    60) *lag* is added on the local wall clock: ``lag=timedelta(hours=6)`` on a New York day is
    06:00 local time on 23- and 25-hour days too (a time skipped by spring-forward moves to the
    end of the gap, a repeated one means its first occurrence). For grains of real elapsed time
    (``Minutes(n)`` with *n* dividing 60, ``Hour``, ``Cron``) it is real elapsed time.

    Runs therefore happen only in periods of the grain: with a :class:`BusinessDay` grain only on
    business days, and *offset* counts business days. "Weekdays at 06:00 New York time, for the
    previous business day" is::

        GrainPartitionTimetable(
            BusinessDay(BusinessCalendar(country="US", subdiv="NY"), timezone="America/New_York"),
            offset=-1,
            lag=timedelta(hours=6),
        )

    The run on Friday 2026-11-27 at 06:00 is for ``2026-11-25`` (Thanksgiving, 2026-11-26, has
    no period and no run), the run on Monday 2026-11-30 for ``2026-11-27``. Read as "run at
    period end plus a lag" this could not be said: Wednesday's period ends on Thanksgiving.

    **Trading sessions.** A :class:`~airflow_partitions.grains.sessions.TradingSession`'s periods
    are an exchange's sessions, with nights and weekends between them. Its run period starts when
    the session before it closes (a trading day begins at the previous close), and *lag* is real
    elapsed time, so the default ``offset=-1`` runs as each session closes, for that session: "once
    per New York session, 30 minutes after the close" is::

        GrainPartitionTimetable(TradingSession(ExchangeCalendar("XNYS")), lag=timedelta(minutes=30))

    runs for ``2026-11-25`` at 16:30 New York time that day, for ``2026-11-27`` (an early close) at
    13:30 on 2026-11-27, none for Thanksgiving; ``offset=0`` runs at the same times for the next
    session (work before its open). Keys are session dates, ``partition_date`` the session's open.

    **Start, end, catchup.** The Dag's ``start_date`` and ``end_date`` bound *partitions*: the
    first is the first period starting at or after ``start_date``, the last the last one starting
    at or before ``end_date`` (the axis a backfill uses). With catchup, every partition from
    there gets its run, in order; without, the scheduler starts with the partition whose run is
    the latest due (or the next one, if it is later than that). With neither a start date nor an
    earlier run, the first run is the first one due at or after now.

    **Backfill.** :meth:`iter_partition_dagrun_infos` yields one run per period whose start lies
    in ``[earliest, latest]`` (both read on the grain's local wall clock, as core reads them),
    with ``run_after`` equal to its ``partition_date`` as in core's backfill; with a business-day
    grain holidays and non-working days yield nothing.

    Each scheduled run: ``partition_key`` the period's key, ``partition_date`` its start (UTC),
    ``run_after`` as above, ``data_interval`` ``None`` (as core's ``CronPartitionTimetable``).

    :param grain: Any grain of this package (``Day``, ``BusinessDay``, ``Minutes(15)``,
        ``FiscalQuarter``, ``TradingSession`` …), in its own time zone.
    :param offset: Which partition a run period's run is for, in periods of the grain: ``-1``
        (default) the previous one, ``0`` the run period itself, ``1`` the next; at most
        ``1000`` either way.
    :param lag: How long after its run period starts a run is due: a non-negative ``timedelta``
        (default 0), wall-clock or real as explained above.
    :raises ValueError: at Dag parse, if *grain* is not a grain, *offset* not an integer within
        ``±1000`` or *lag* not a non-negative ``timedelta``.
    """

    def __init__(
        self, grain: Grain, *, offset: int = -1, lag: datetime.timedelta = datetime.timedelta()
    ) -> None:
        owner = "GrainPartitionTimetable"
        if not isinstance(grain, Grain):
            raise ValueError(
                f"{owner}: grain must be a grain of airflow_partitions, such as Day(timezone='UTC') or "
                f"BusinessDay(BusinessCalendar(country='US')); got {grain!r}."
            )
        if type(offset) is not int or abs(offset) > MAX_OFFSET:
            raise ValueError(
                f"{owner}: offset must be an integer number of periods from -{MAX_OFFSET} to "
                f"{MAX_OFFSET}, e.g. -1 for the previous period; got {offset!r}."
            )
        if not isinstance(lag, datetime.timedelta) or lag < datetime.timedelta():
            raise ValueError(
                f"{owner}: lag must be a non-negative timedelta, e.g. timedelta(hours=6); got {lag!r}."
            )
        self.grain = grain
        self.offset = offset
        self.lag = lag
        # Wall-clock lag for grains cut at local wall-clock times, real time for the others.
        self._wall = isinstance(grain, WallClockGrain) and not (
            isinstance(grain, Minutes) and 60 % grain.n == 0
        )
        # A business-day grain refuses to floor an instant on a holiday, a session grain one outside
        # trading hours; finding the period at or before such an instant needs the one before it.
        self._sessions = isinstance(grain, TradingSession)
        if isinstance(grain, BusinessDay):
            self._finder: Grain = dataclasses.replace(grain, roll="preceding")
        elif isinstance(grain, TradingSession):
            self._finder = dataclasses.replace(grain, outside="previous")
        else:
            self._finder = grain
        self.description = self._describe()

    # -- periods -------------------------------------------------------------------------------

    def _near(self, instant: datetime.datetime) -> Period:
        """Return a period of the grain at or near *instant* (the one holding it, or just before)."""
        return self.grain.shift(self._finder.floor(instant), 0)

    def _first_from(self, instant: datetime.datetime) -> Period:
        """Return the first period that starts at or after *instant*."""
        period = self._near(instant)
        while period.utc[0] < instant:
            period = self.grain.shift(period, 1)
        while (before := self.grain.shift(period, -1)).utc[0] >= instant:
            period = before
        return period

    def _run_time(self, run_period: Period) -> datetime.datetime:
        """Return when the run of *run_period* is due: its start (a session: the last close) plus the lag."""
        if self._sessions:
            return self.grain.shift(run_period, -1).utc[1] + self.lag
        if self._wall:
            wall = self.grain.wall_start(run_period) + self.lag  # type: ignore[attr-defined]
            return resolve(wall, self.grain.tz).astimezone(datetime.UTC)
        return run_period.utc[0] + self.lag

    def _last_run_at_or_before(self, instant: datetime.datetime) -> Period:
        """Return the run period whose run is the latest one due at or before *instant*."""
        period = self._near(instant - self.lag)
        while self._run_time(period) > instant:
            period = self.grain.shift(period, -1)
        while self._run_time(after := self.grain.shift(period, 1)) <= instant:
            period = after
        return period

    def _first_run_from(self, instant: datetime.datetime) -> Period:
        """Return the partition whose run is the first one due at or after *instant*."""
        run_period = self._last_run_at_or_before(instant)
        if self._run_time(run_period) < instant:
            run_period = self.grain.shift(run_period, 1)
        return self.grain.shift(run_period, self.offset)

    def _info(self, partition: Period) -> DagRunInfo:
        run_period = self.grain.shift(partition, -self.offset)
        return DagRunInfo(
            run_after=_utc(self._run_time(run_period)),
            data_interval=None,
            partition_date=_utc(partition.start),
            partition_key=partition.key,
        )

    def _last_partition(self, info: DagRunInfo) -> Period:
        """Return the partition of an earlier automated run (by key; else by date or run time)."""
        if info.partition_key:
            try:
                return self.grain.parse(info.partition_key)
            except ValueError:
                pass  # a key this grain does not write (the Dag changed grain): go by time
        if info.partition_date is not None:
            return self._first_from(info.partition_date)
        return self.grain.shift(self._last_run_at_or_before(info.run_after), self.offset)

    # -- the Timetable protocol ----------------------------------------------------------------

    def next_dagrun_info_v2(
        self, *, last_dagrun_info: DagRunInfo | None, restriction: TimeRestriction
    ) -> DagRunInfo | None:
        """Return the next partition's run (see the class docstring for catchup and bounds)."""
        after_last = None
        if last_dagrun_info is not None:
            after_last = self.grain.shift(self._last_partition(last_dagrun_info), 1)
        if restriction.catchup:
            if after_last is not None:
                partition = after_last
            elif restriction.earliest is None:
                partition = self._first_run_from(_utcnow())
            else:
                partition = self._first_from(restriction.earliest)
        else:
            now = _utcnow()
            candidates = [self.grain.shift(self._last_run_at_or_before(now), self.offset)]
            if after_last is not None:
                candidates.append(after_last)
            elif restriction.earliest is None:
                candidates.append(self._first_run_from(now))
            if restriction.earliest is not None:
                candidates.append(self._first_from(restriction.earliest))
            partition = max(candidates, key=lambda period: period.utc)
        if restriction.latest is not None and partition.utc[0] > restriction.latest:
            return None
        return self._info(partition)

    def iter_partition_dagrun_infos(
        self, *, earliest: datetime.datetime, latest: datetime.datetime
    ) -> Iterator[DagRunInfo]:
        """
        Yield one run per period whose start lies in ``[earliest, latest]`` (both inclusive).

        The bounds' wall-clock readings are read in the grain's time zone (as core's
        ``CronPartitionTimetable`` reads them), so ``2026-11-23`` to ``2026-11-30`` means New York
        midnights for a New York grain. Each run has the key and ``partition_date`` the scheduler
        gives that partition (Airflow deduplicates backfill runs by ``partition_date``) and, as
        core's backfill runs, ``run_after = partition_date``: a backfill runs every partition at
        once, even one whose period is not over yet (end the range before it to avoid that).
        """
        upper = self.localize_partition_datetime(latest)
        partition = self._first_from(self.localize_partition_datetime(earliest))
        while partition.utc[0] <= upper:
            start = _utc(partition.start)
            yield DagRunInfo(
                run_after=start, data_interval=None, partition_date=start, partition_key=partition.key
            )
            partition = self.grain.shift(partition, 1)

    def localize_partition_datetime(self, dt: datetime.datetime) -> pendulum.DateTime:
        """Read *dt*'s wall-clock reading in the grain's time zone (first occurrence if repeated)."""
        return _utc(resolve(dt.replace(tzinfo=None), self.grain.tz))

    def due(self, partition_key: str) -> datetime.datetime:
        """
        Return when the scheduler runs partition *partition_key* (UTC): its run period's start plus the lag.

        With the default ``offset=-1``, the end of the partition's own period: a day is due when it
        has ended. ``backfill --missing`` leaves out partitions not due yet.

        :raises InvalidPartitionKeyError: as :meth:`_decode_partition_date`.
        """
        self._decode_partition_date(partition_key)  # refuses a key that is not the grain's
        return self._run_time(self.grain.shift(self.grain.parse(partition_key), -self.offset))

    def _decode_partition_date(self, partition_key: str) -> datetime.datetime:
        """
        Return the start of the period *partition_key* names (``grain.parse(key).start``), in UTC.

        :raises InvalidPartitionKeyError: if the key is not this grain's canonical key of a period.
        """
        try:
            return _utc(self.grain.parse(partition_key).start)
        except ValueError as err:
            raise InvalidPartitionKeyError(
                f"GrainPartitionTimetable: partition key {partition_key!r} is not a key of "
                f"{self.grain!r}: {err}"
            ) from err

    @property
    def summary(self) -> str:
        """Return e.g. ``BusinessDay T-1 +6:00:00 (America/New_York)``."""
        offset = f"T{self.offset:+d}" if self.offset else "T"
        return f"{type(self.grain).__name__} {offset} +{self.lag} ({self.grain.timezone})"

    def _describe(self) -> str:
        name = type(self.grain).__name__
        if self._sessions:
            which = {0: "the next session", -1: "that session", -2: "the session before it"}.get(
                self.offset,
                f"the session {abs(self.offset + 1)} sessions {'before' if self.offset < -1 else 'after'} it",
            )
            return (
                f"One run per {self.grain!r} session, {self.lag} (real time) after it closes in "
                f"{self.grain.timezone}, for {which}; keys as TemporalMapper({name}) writes them"
            )
        which = {0: "that period", -1: "the period before it", 1: "the period after it"}.get(
            self.offset,
            f"the period {abs(self.offset)} periods {'before' if self.offset < 0 else 'after'} it",
        )
        clock = "local wall-clock time" if self._wall else "real time"
        return (
            f"One run per {name} period in {self.grain.timezone}, {self.lag} ({clock}) after the "
            f"period starts, for {which}; keys as TemporalMapper({name}) writes them"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GrainPartitionTimetable):
            return NotImplemented
        return (self.grain, self.offset, self.lag) == (other.grain, other.offset, other.lag)

    def __hash__(self) -> int:
        return hash((self.grain, self.offset, self.lag))

    def serialize(self) -> dict[str, Any]:
        """Return sorted plain JSON: the grain's own form, the offset and the lag in seconds."""
        return dump(grain=self.grain.serialize(), lag=self.lag.total_seconds(), offset=self.offset)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        """Rebuild the timetable from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(
            Grain.deserialize(data["grain"]),
            offset=data["offset"],
            lag=datetime.timedelta(seconds=data["lag"]),
        )


class ExplicitPartitionTimetable(_KeyedAheadTimetable):
    """
    A fixed list of partitions, each with the time its run is due: month-end closes, say.

    ::

        ExplicitPartitionTimetable({
            "2026-10": datetime(2026, 11, 4, 18, tzinfo=ZoneInfo("America/New_York")),
            "2026-11": datetime(2026, 12, 3, 18, tzinfo=ZoneInfo("America/New_York")),
        })

    Each entry is one run, keyed by the entry's key, due at its time; ``partition_date`` is that
    time too (Airflow tells partitions apart by ``partition_date`` when it backfills, so the
    times must differ). Runs come in time order. The Dag's ``start_date``/``end_date`` bound the
    times; with catchup every entry from the first one at or after ``start_date`` (from the first
    entry, without one) runs in order; without catchup the scheduler starts from the latest one
    due. :meth:`iter_partition_dagrun_infos` yields the entries whose times lie in the range.

    :param partitions: ``{key: run_after}`` or ``[(key, run_after), ...]``: keys non-empty
        strings of at most 250 characters, times timezone-aware ``datetime`` values.
    :raises ValueError: at Dag parse, for no entries, a key that is not a non-empty string of at
        most 250 characters, a key listed twice, a naive or non-``datetime`` time, or two entries
        with the same time.
    """

    def __init__(
        self, partitions: Mapping[str, datetime.datetime] | Iterable[tuple[str, datetime.datetime]]
    ) -> None:
        owner = "ExplicitPartitionTimetable"
        try:
            items = list(partitions.items() if isinstance(partitions, Mapping) else partitions)
            pairs = [(key, when) for key, when in items]
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"{owner}: partitions must be a mapping {{key: datetime}} or a list of (key, datetime) "
                f"pairs; got {partitions!r}."
            ) from err
        if not pairs:
            raise ValueError(f"{owner}: partitions must list at least one (key, datetime) entry.")
        seen_keys: set[str] = set()
        by_time: dict[pendulum.DateTime, str] = {}
        for key, when in pairs:
            require_text(key, owner=owner, name="every partition key", example="2026-11")
            if len(key) > MAX_KEY_LENGTH:
                raise ValueError(
                    f"{owner}: partition key {key[:40]!r}... is {len(key)} characters long; the metadata "
                    f"database stores at most {MAX_KEY_LENGTH}."
                )
            if key in seen_keys:
                raise ValueError(f"{owner}: partition key {key!r} is listed twice; expected each key once.")
            seen_keys.add(key)
            if not isinstance(when, datetime.datetime) or when.utcoffset() is None:
                raise ValueError(
                    f"{owner}: the time of partition {key!r} must be a timezone-aware datetime, e.g. "
                    f"datetime(2026, 12, 3, 18, tzinfo=ZoneInfo('America/New_York')); got {when!r}."
                )
            utc = _utc(when)
            if utc in by_time:
                raise ValueError(
                    f"{owner}: partitions {by_time[utc]!r} and {key!r} have the same time {utc.isoformat()}; "
                    "Airflow tells partitions apart by that time, so each needs its own."
                )
            by_time[utc] = key
        self._entries: tuple[tuple[pendulum.DateTime, str], ...] = tuple(sorted(by_time.items()))
        self._times = {key: when for when, key in self._entries}
        first, last = self._entries[0], self._entries[-1]
        self.description = (
            f"{len(self._entries)} explicit partitions, from {first[1]!r} at {first[0].isoformat()} "
            f"to {last[1]!r} at {last[0].isoformat()}"
        )

    @property
    def partitions(self) -> list[tuple[str, pendulum.DateTime]]:
        """The entries as ``(key, run_after)`` pairs in time order (times in UTC)."""
        return [(key, when) for when, key in self._entries]

    def _info(self, index: int) -> DagRunInfo:
        when, key = self._entries[index]
        return DagRunInfo(run_after=when, data_interval=None, partition_date=when, partition_key=key)

    def _first_from(self, instant: datetime.datetime) -> int:
        """Return the index of the first entry at or after *instant* (``len`` if none)."""
        return next((i for i, (when, _) in enumerate(self._entries) if when >= instant), len(self._entries))

    def _after(self, info: DagRunInfo) -> int:
        """Return the index of the entry after an earlier automated run's."""
        when = self._times.get(info.partition_key or "")
        if when is None:  # not one of ours (the list changed): go by time
            when = info.partition_date or info.run_after
        return next((i for i, (t, _) in enumerate(self._entries) if t > when), len(self._entries))

    def next_dagrun_info_v2(
        self, *, last_dagrun_info: DagRunInfo | None, restriction: TimeRestriction
    ) -> DagRunInfo | None:
        """Return the next entry's run (see the class docstring for catchup and bounds)."""
        after_last = None if last_dagrun_info is None else self._after(last_dagrun_info)
        if restriction.catchup:
            if after_last is not None:
                index = after_last
            elif restriction.earliest is None:
                index = 0
            else:
                index = self._first_from(restriction.earliest)
        else:
            now = _utcnow()
            due = self._first_from(now + datetime.timedelta(microseconds=1)) - 1  # latest at or before now
            candidates = [max(due, 0)]
            if after_last is not None:
                candidates.append(after_last)
            elif restriction.earliest is None:
                candidates.append(self._first_from(now))
            if restriction.earliest is not None:
                candidates.append(self._first_from(restriction.earliest))
            index = max(candidates)
        if index >= len(self._entries):
            return None
        if restriction.latest is not None and self._entries[index][0] > restriction.latest:
            return None
        return self._info(index)

    def iter_partition_dagrun_infos(
        self, *, earliest: datetime.datetime, latest: datetime.datetime
    ) -> Iterator[DagRunInfo]:
        """Yield the run of each entry whose time lies in ``[earliest, latest]`` (both inclusive)."""
        lower, upper = self.localize_partition_datetime(earliest), self.localize_partition_datetime(latest)
        for index, (when, _) in enumerate(self._entries):
            if lower <= when <= upper:
                yield self._info(index)

    def due(self, partition_key: str) -> datetime.datetime:
        """
        Return when the scheduler runs the partition *partition_key*: the time listed for it.

        :raises InvalidPartitionKeyError: if the key is not listed.
        """
        return self._decode_partition_date(partition_key)

    def _decode_partition_date(self, partition_key: str) -> datetime.datetime:
        """
        Return the time listed for *partition_key*.

        :raises InvalidPartitionKeyError: if the key is not listed.
        """
        if partition_key not in self._times:
            raise InvalidPartitionKeyError(
                f"ExplicitPartitionTimetable: partition key {partition_key!r} is not one of the listed "
                f"partitions ({len(self._times)} keys, e.g. {self._entries[0][1]!r})."
            )
        return self._times[partition_key]

    @property
    def summary(self) -> str:
        """Return e.g. ``12 explicit partitions``."""
        return f"{len(self._entries)} explicit partitions"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExplicitPartitionTimetable):
            return NotImplemented
        return self._entries == other._entries

    def __hash__(self) -> int:
        return hash(self._entries)

    def serialize(self) -> dict[str, Any]:
        """Return ``[[key, ISO 8601 UTC time], ...]`` in time order, with a version."""
        return dump(partitions=[[key, when.isoformat()] for when, key in self._entries])

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        """Rebuild the timetable from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls([(key, datetime.datetime.fromisoformat(when)) for key, when in data["partitions"]])
