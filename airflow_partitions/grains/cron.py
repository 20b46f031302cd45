"""
Cron periods: from one tick of a cron expression to the next, walked with ``croniter`` as Airflow does.

Pure (no Airflow import): the presets are Airflow's (``@hourly`` … ``@yearly``), copied from
``airflow.utils.dates.cron_presets``; the expression syntax is croniter's, Airflow's cron library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from airflow_partitions.grains.grain import Grain, Period
from airflow_partitions.grains.zones import as_utc, changes_between, offset_text, resolve

#: Airflow's cron presets (``airflow.utils.dates.cron_presets`` in Airflow 3.3), as it expands them.
CRON_PRESETS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@quarterly": "0 0 1 */3 *",
    "@yearly": "0 0 1 1 *",
}


@dataclass(frozen=True)
class Cron(Grain):
    """
    Cron periods, from one tick to the next, keyed by the tick: ``2026-03-10T09:00``.

    Keys are written like :class:`Minutes` keys, with minutes and the offset outside UTC
    (``2026-03-10T09:00-04:00`` in New York). The last tick of a day runs to the first of the
    next (17:00 to 09:00 the next weekday above).

    **Ticks.** The local wall-clock times the expression matches, as ``croniter`` reads it
    (Airflow's cron library; presets such as ``@hourly`` as Airflow expands them), each standing
    for real instants by the IANA tz database:

    - an ordinary time: its one instant;
    - a time skipped by spring-forward: the first real instant after the gap, as for the
      wall-clock cuts of :class:`Day` (``30 2 * * *`` in New York ticks at 03:00 EDT on
      2026-03-08, ``2026-03-08T03:00-04:00``; several skipped times make one tick). A cron that
      ticks every hour (hour field ``*``) has no tick for a skipped time instead: its ticks are the
      instants whose local time matches, like :class:`Hour`;
    - a time repeated by fall-back: its first occurrence (``30 1 * * *`` in New York ticks once on
      2026-11-01, at 01:30 EDT, ``2026-11-01T01:30-04:00``), as a key without an offset reads;
      a cron ticking every hour ticks at both occurrences (``30 * * * *`` at 01:30 EDT and EST).

    So a period always contains the instants it is the period of, periods tile time from the
    first tick on, and ``shift`` steps tick by tick both ways. Airflow's ``CronTriggerTimetable``
    differs on DST days only: it runs a skipped time as the wall time read with the offset before
    the change (03:30 EDT above), a repeated one at its second occurrence (01:30 EST), and steps
    crons ticking every hour in real time (in ``Australia/Lord_Howe``, whose clocks go back 30
    minutes, ``@hourly`` runs at 01:00 +11:00, 01:30 +10:30 and 02:00 +10:30 on 2026-04-05; these
    ticks are 01:00 +11:00 and 02:00 +10:30). Its walker breaks the invariants above on those days.

    Each period look-up steps ``croniter`` a few times: more near an offset change, by the
    number of ticks in its length.

    :param expression: Five-field cron expression or preset (``"@hourly"``).
    :raises ValueError: if the expression is invalid or names no date that exists.
    """

    expression: str = "@hourly"
    kind: ClassVar[str] = "cron"
    tiles: ClassVar[bool] = False
    _expanded: str = field(init=False, repr=False, compare=False)
    _hourly: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        from croniter import CroniterBadDateError, croniter

        expression = CRON_PRESETS.get(self.expression, self.expression)
        if (
            not isinstance(expression, str)
            or len(expression.split()) != 5
            or not croniter.is_valid(expression)
        ):
            raise ValueError(
                f"Cron: expression {self.expression!r} is not a five-field cron expression or preset "
                "such as '*/15 * * * *' or '@daily'."
            )
        try:
            croniter(expression, datetime(2000, 1, 1)).get_next(datetime)
        except CroniterBadDateError as err:
            raise ValueError(f"Cron: expression {self.expression!r} names no date that exists.") from err
        object.__setattr__(self, "_expanded", expression)
        object.__setattr__(self, "_hourly", croniter(expression).expanded[1] == ["*"])

    def _instants(self, wall: datetime) -> list[datetime]:
        """Return the UTC ticks the matching naive local time *wall* stands for, in order."""
        first = wall.replace(tzinfo=self.tz, fold=0).astimezone(UTC)
        if first.astimezone(self.tz).replace(tzinfo=None) != wall:  # skipped by spring-forward
            return [] if self._hourly else [resolve(wall, self.tz).astimezone(UTC)]
        second = wall.replace(tzinfo=self.tz, fold=1).astimezone(UTC)
        return [first, second] if self._hourly and second != first else [first]

    def _walls(self, instant: datetime, forward: bool) -> Any:
        """
        Yield the matching naive local times from near *instant*, forward or backward.

        They start far enough out (by the offset changes within two days) that every tick after
        (before) *instant* comes from a later (earlier) yielded time.
        """
        from croniter import croniter

        local = instant.astimezone(self.tz)
        near = changes_between(self.timezone, instant - timedelta(days=2), instant + timedelta(days=2))
        offset = local.utcoffset() or timedelta()
        reach = max((abs(o - offset) for _, *pair in near for o in pair), default=timedelta())
        wall = local.replace(tzinfo=None) + (-reach if forward else reach)
        ticks = croniter(self._expanded, wall + timedelta(microseconds=-1 if forward else 1))
        step = ticks.get_next if forward else ticks.get_prev
        while True:
            yield step(datetime)

    def _tick_at_or_before(self, instant: datetime) -> datetime:
        # First occurrences grow with the wall time: the first wall whose first one is not after
        # the instant has the last first occurrence. Second occurrences (a repeated hour) of
        # earlier walls can come later: walk on while they are after the instant.
        best: datetime | None = None
        for wall in self._walls(instant, forward=False):
            ticks = self._instants(wall)
            if not ticks or (best is None and ticks[0] > instant):
                continue
            best = max([tick for tick in ticks if tick <= instant] + ([best] if best else []))
            if len(ticks) == 1 or ticks[1] <= instant:
                return best
        raise AssertionError("unreachable: croniter walks on")  # pragma: no cover

    def _tick_after(self, instant: datetime) -> datetime:
        # Walk forward to the first wall whose first occurrence is after the instant; a second
        # occurrence of an earlier wall (a repeated hour) may come first.
        later: list[datetime] = []
        for wall in self._walls(instant, forward=True):
            ticks = self._instants(wall)
            later += [tick for tick in ticks if tick > instant]
            if ticks and ticks[0] > instant:
                return min(later)
        raise AssertionError("unreachable: croniter walks on")  # pragma: no cover

    def _period(self, tick: datetime) -> Period:
        return Period(tick.astimezone(self.tz), self._tick_after(tick).astimezone(self.tz), self)

    def floor(self, instant: datetime) -> Period:
        """Return the period from the last tick at or before *instant* to the next tick."""
        return self._period(self._tick_at_or_before(as_utc(instant)))

    def shift(self, period: Period, n: int) -> Period:
        """Return the period *n* ticks after *period* (before it if *n* is negative)."""
        tick = as_utc(period.start)
        for _ in range(abs(n)):
            tick = (
                self._tick_after(tick) if n > 0 else self._tick_at_or_before(tick - timedelta(microseconds=1))
            )
        return self._period(tick)

    def key(self, period: Period) -> str:
        """Return the tick as ``YYYY-MM-DDTHH:MM``, plus the offset outside UTC."""
        s = period.start
        text = f"{s.year:04d}-{s.month:02d}-{s.day:02d}T{s.hour:02d}:{s.minute:02d}"
        return text if self.timezone == "UTC" else text + offset_text(s)

    def _parameters(self) -> dict[str, Any]:
        return {"expression": self.expression, "timezone": self.timezone}
