"""Producer timetables for partitioned assets."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from airflow.timetables.trigger import CronTriggerTimetable
from croniter import CroniterBadDateError, croniter
from dateutil.relativedelta import relativedelta
from pendulum.tz.timezone import FixedTimezone, Timezone

from airflow_partitions._common import dump, load, require_text

if TYPE_CHECKING:
    from airflow.timetables.base import Timetable
    from dateutil.relativedelta import relativedelta


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
