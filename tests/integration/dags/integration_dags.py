"""Dags for the integration tests: each proves one behaviour through the real scheduler."""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import (
    DAG,
    Asset,
    DayWindow,
    IdentityMapper,
    PartitionedAssetTimetable,
    PartitionedAtRuntime,
    PartitionMapper,
    RollupMapper,
    StartOfDayMapper,
    StartOfMonthMapper,
    get_current_context,
    task,
)

from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    BusinessDayWindow,
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    FiscalMonth,
    FiscalQuarter,
    GrainPartitionTimetable,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    PrefixStripMapper,
    RegexMapper,
    ScheduledRuntimePartitionTimetable,
    SlidingWindow,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
    missing_upstream_keys,
)

#: Every task retries twice. With SQLite, Airflow 3.3's api-server can stall for the 60 s lock
#: wait: its REST audit log (``log_action``) commits on the event loop while another request's
#: transaction, holding the one write lock, waits for that loop to commit. A task calling the
#: execution API then (``task-instances/…/run``) times out and fails; seen in about one session in
#: two on a loaded 2-core machine while both APIs shared a process. The execution API now runs apart
#: (tests/support/launcher.py), but two REST writes at once still freeze the REST process
#: (docs/deployment.md). The tests check which runs the scheduler creates, not first tries.
RETRY_TRANSIENT_FAILURES = {"retries": 2, "retry_delay": timedelta(seconds=5)}

regional_sales = Asset("it_regional_sales")
daily_sales = Asset("it_daily_sales")
runtime_output = Asset("it_runtime_output")
utc_hours = Asset("it_utc_hours")
quarter_hours = Asset("it_quarter_hours")
days = Asset("it_days")
fiscal_months = Asset("it_fiscal_months")
business_day_files = Asset("it_business_day_files")
US_BUSINESS_DAY_NEW_YORK = BusinessDay(BusinessCalendar(country="US"), timezone="America/New_York")
daily_orders = Asset("it_daily_orders")
landed_files = Asset("it_landed_files")
regional_hours = Asset("it_regional_hours")
daily_metrics = Asset("it_daily_metrics")
export_files = Asset("it_export_files")
#: Regions the deadline rollup waits for, per minute (test_scheduler.py sends their keys).
DEADLINE_REGIONS = ["apac", "eu", "us"]
#: The deadline rollups by how long after each minute ends they wait, each fed by an asset of
#: its own (``it_regional_minutes_5s``). test_scheduler.py takes whichever deadline comes first
#: (two graces half a minute apart: a deadline every half minute).
DEADLINE_GRACES = {
    "it_minute_of_all_regions_by_deadline": timedelta(seconds=5),
    "it_minute_of_all_regions_by_later_deadline": timedelta(seconds=35),
}
#: How long a partial period must see no new key before a deadline fires it, in these tests.
DEADLINE_SETTLE = timedelta(seconds=5)
#: A nested quantifier, ``([a-z]+)+``, that Python's backtracking ``re`` takes exponential time
#: on when the key does not match (measured: 0.27 s for 22 letters and a "!", doubling with each
#: letter); RE2 answers in microseconds for 10,000 characters.
ADVERSARIAL_PATTERN = r"exports/(?P<dataset>([a-z]+)+)/(?P<day>\d{8})\.csv"


@task
def record_partition(dag_run=None) -> dict:
    """Return what the run was created for, so the test can read it back as XCom."""
    return {"partition_key": dag_run.partition_key, "partition_date": str(dag_run.partition_date)}


def consumer(dag_id: str, asset: Asset, mapper: PartitionMapper, *, record: bool = True) -> None:
    """
    Declare a Dag run by *asset*'s events through *mapper*, whose task records its partition.

    With ``record=False`` its one task is an ``EmptyOperator``, which the scheduler marks done
    without the executor: for the reliability tests' hundreds of runs, which count runs, not
    what a task saw, and must not leave a queue of tasks behind for the tests after them.
    """
    with DAG(
        dag_id,
        default_args=RETRY_TRANSIENT_FAILURES,
        schedule=PartitionedAssetTimetable(assets=asset, default_partition_mapper=mapper),
        catchup=False,
    ):
        if record:
            record_partition()
        else:
            EmptyOperator(task_id="done")


with DAG(
    "it_prefix_producer",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAtRuntime(),
    catchup=False,
):

    @task(outlets=[regional_sales])
    def emit() -> None:
        """Emit one event on regional_sales; it carries the run's partition key."""

    emit()

consumer("it_prefix_consumer", regional_sales, PrefixStripMapper("eu"))

consumer(
    "it_business_month",
    daily_sales,
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
)

with DAG(
    "it_runtime_producer",
    default_args=RETRY_TRANSIENT_FAILURES,
    # Hourly, with the latest tick run at once: one scheduled run early in the session and
    # little write load afterwards (SQLite has one writer).
    schedule=ScheduledRuntimePartitionTimetable(
        "0 * * * *", timezone="America/New_York", run_immediately=True
    ),
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
):

    @task(outlets=[runtime_output])
    def produce(outlet_events=None, logical_date=None) -> list[str]:
        """Add two keys derived from the tick, as a task that found two regions' files would."""
        minute = logical_date.in_timezone("America/New_York").strftime("%Y-%m-%dT%H:%M")
        keys = [f"eu::{minute}", f"us::{minute}"]
        outlet_events[runtime_output].add_partitions(keys)
        return keys

    produce()

consumer(
    "it_new_york_day_from_utc_hours",
    utc_hours,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    ),
)

consumer(
    "it_hour_from_quarter_hours",
    quarter_hours,
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Hour()), window=TemporalWindow(Minutes(15))),
)

consumer(
    "it_six_hour_slots_from_day",
    days,
    TemporalFanOutMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Minutes(360))),
)

consumer(
    "it_business_week",
    daily_orders,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Week()),
        window=TemporalWindow(BusinessDay(BusinessCalendar(country="US"))),
    ),
)

consumer(
    "it_previous_business_day",
    landed_files,
    TemporalMapper(
        BusinessDay(BusinessCalendar(country="US", subdiv="NY"), timezone="America/New_York"), offset=-1
    ),
)

consumer(
    "it_fiscal_quarter",
    fiscal_months,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(FiscalQuarter(start_month=7)), window=TemporalWindow(FiscalMonth())
    ),
)

consumer("it_runtime_consumer", runtime_output, PrefixStripMapper("eu"))

with DAG(
    "it_business_day_producer",
    default_args=RETRY_TRANSIENT_FAILURES,
    # One partition per US business day in New York, run at 06:00 the next business day.
    schedule=GrainPartitionTimetable(US_BUSINESS_DAY_NEW_YORK, offset=-1, lag=timedelta(hours=6)),
    # Scheduled runs only from 2100: none whose key would depend on when the tests run.
    # Backfill walks partitions regardless of start_date.
    start_date=pendulum.datetime(2100, 1, 1, tz="UTC"),
    catchup=False,
):

    @task(outlets=[business_day_files])
    def land_business_day() -> None:
        """Emit one event on business_day_files; it carries the run's partition key."""

    land_business_day()

consumer(
    "it_business_week_of_produced_days",
    business_day_files,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Week(timezone="America/New_York")),
        window=TemporalWindow(US_BUSINESS_DAY_NEW_YORK),
    ),
)

consumer(
    "it_region_day_from_hours",
    regional_hours,
    DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    ),
)

consumer(
    "it_trailing_seven_days",
    daily_metrics,
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7)),
)


def minute_of_all_regions_by_deadline(dag_id: str, grace: timedelta) -> None:
    """Declare a deadline rollup of ``it_regional_minutes_<grace>s``, whose task reports what it lacked."""
    regional_minutes = Asset(f"it_regional_minutes_{grace.seconds}s")
    with DAG(
        dag_id,
        default_args=RETRY_TRANSIENT_FAILURES,
        # Per UTC minute, one key from each region (``eu|2026-03-10T09:01``); after the minute
        # has ended plus the grace, two of the three regions are enough.
        schedule=PartitionedAssetTimetable(
            assets=regional_minutes,
            default_partition_mapper=DimensionRollupMapper(
                upstream_mapper=CompositeKeyMapper(
                    ["region", "time"], {"time": TemporalMapper(Minutes(1))}, output=["time"]
                ),
                window=DimensionWindow(region=DEADLINE_REGIONS),
                wait_policy=CompletionDeadline(grace, min_count=2, settle=DEADLINE_SETTLE),
            ),
        ),
        catchup=False,
    ):

        @task
        def report_missing() -> dict:
            """Return the run's partition and the upstream keys the deadline fired without."""
            context = get_current_context()
            return {
                "partition_key": context["dag_run"].partition_key,
                "missing": missing_upstream_keys(context, regional_minutes),
            }

        report_missing()


for deadline_dag_id, deadline_grace in DEADLINE_GRACES.items():
    minute_of_all_regions_by_deadline(deadline_dag_id, deadline_grace)

consumer("it_exports_by_dataset", export_files, RegexMapper(ADVERSARIAL_PATTERN, "{dataset}|{day}"))


# -- no silent holds (test_no_silent_holds.py) -------------------------------------------------

spelled_hours = Asset("it_spelled_hours")
formatted_days = Asset("it_formatted_days")
series_hours = Asset("it_series_hours")
restart_hours = Asset("it_restart_hours")
#: The series of the replay (``a|2026-03-01T05``): three, as in the issue's measurement.
REPLAY_SERIES = ["a", "b", "c"]

consumer(
    "it_day_of_spelled_hours",
    spelled_hours,
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())),
)

consumer(
    "it_month_of_formatted_days",
    formatted_days,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(), input_format="%Y/%m/%d"), window=TemporalWindow(Day())
    ),
)

consumer(
    "it_restart_day",
    restart_hours,
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())),
)

# -- a changed rollup definition, and requeue (test_upgrade.py) ------------------------------------

requeue_hours = Asset("it_requeue_hours")
#: The environment variable holding it_requeue_new_york_day's max_downstream_keys (unset: None).
#: test_upgrade.py sets it and restarts Airflow: a change of the stored mapper and nothing else.
REQUEUE_CAP_VARIABLE = "IT_REQUEUE_MAX_DOWNSTREAM_KEYS"

with DAG(
    "it_requeue_new_york_day",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAssetTimetable(
        assets=requeue_hours,
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
            window=TemporalWindow(Hour()),
            max_downstream_keys=int(os.environ[REQUEUE_CAP_VARIABLE])
            if REQUEUE_CAP_VARIABLE in os.environ
            else None,
        ),
    ),
    catchup=False,
):

    @task
    def count_hours() -> dict:
        """Return the run's partition, the hour keys of the events that fed it, and what it lacks."""
        context = get_current_context()
        events = context["triggering_asset_events"][requeue_hours]
        return {
            "partition_key": context["dag_run"].partition_key,
            "keys": sorted(e.partition_key for e in events),
            "missing": missing_upstream_keys(context, requeue_hours),
        }

    count_hours()

with DAG(
    "it_series_day_by_deadline",
    default_args=RETRY_TRANSIENT_FAILURES,
    # UTC hours per series (``a|2026-03-01T05``) into New York days per series, a deadline long
    # past (a replay of history): each day must run once, complete, not at its 20th hour.
    schedule=PartitionedAssetTimetable(
        assets=series_hours,
        default_partition_mapper=DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(
                ["series", "time"],
                {"time": TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC")},
            ),
            window=DimensionWindow(time=TemporalWindow(Hour())),
            wait_policy=CompletionDeadline(timedelta(hours=1), min_count=20),  # the default settle, 30 s
        ),
    ),
    catchup=False,
):

    @task
    def count_keys() -> dict:
        """Return the run's partition, how many hour events fed it and which hours it lacks."""
        context = get_current_context()
        return {
            "partition_key": context["dag_run"].partition_key,
            "events": len(context["triggering_asset_events"][series_hours]),
            "missing": missing_upstream_keys(context, series_hours),
        }

    count_keys()


# -- status and backfill --missing (test_status.py) ----------------------------------------------

status_hours = Asset("it_status_hours")
core_hours = Asset("it_core_hours")

consumer(
    "it_status_day",
    status_hours,
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())),
)

# Core's rollup compares keys by spelling: "2026-03-10T5" maps to its day but never counts.
consumer(
    "it_core_day_of_hours",
    core_hours,
    RollupMapper(upstream_mapper=StartOfDayMapper(input_format="%Y-%m-%dT%H"), window=DayWindow()),
)

# Core's IdentityMapper makes every key Airflow accepts its own partition (test_ui.py: any key).
consumer("it_any_key", Asset("it_any_key_keys"), IdentityMapper(), record=False)

#: The days of the backfill week whose runs fail (test_status.py then backfills exactly them).
FAILING_DAYS = ("2026-03-03", "2026-03-05")

with DAG(
    "it_backfill_daily",
    # One partition per UTC day; no scheduled run before 2100, so only the test's runs exist.
    schedule=GrainPartitionTimetable(Day()),
    start_date=pendulum.datetime(2100, 1, 1, tz="UTC"),
    catchup=False,
):

    @task
    def process(dag_run=None) -> str:
        """Fail on FAILING_DAYS (no data), succeed on the other days."""
        if dag_run.partition_key in FAILING_DAYS:
            raise RuntimeError(f"no data for {dag_run.partition_key}")
        return dag_run.partition_key

    process()


# -- keys sent again after their period ran (test_again.py) -------------------------------------

#: The day whose run fails (no retries): a key sent again for it must not hide the failure.
AGAIN_FAILING_DAY = "2026-05-02"

with DAG(
    "it_again_day",
    schedule=PartitionedAssetTimetable(
        assets=Asset("it_again_hours"),
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())
        ),
    ),
    catchup=False,
):

    @task
    def load_day(dag_run=None) -> str:
        """Fail on AGAIN_FAILING_DAY, succeed on the other days."""
        if dag_run.partition_key == AGAIN_FAILING_DAY:
            raise RuntimeError(f"bad data for {dag_run.partition_key}")
        return dag_run.partition_key

    load_day()

# An at-least-once replay: UTC hours into Sydney days (a 25-hour day on 2026-04-05), 1 % sent twice.
consumer(
    "it_sydney_replay_day",
    Asset("it_replay_utc_hours"),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="Australia/Sydney"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    ),
    record=False,
)

# A Dag that is not partitioned: `discard` refuses it by name.
with DAG("it_not_partitioned", schedule=None, catchup=False):
    EmptyOperator(task_id="done")


# -- the contract with what users have (test_scheduler.py) ---------------------------------------

# Airflow's docs pair BusinessDayWindow with core's RollupMapper and StartOfMonthMapper.
consumer(
    "it_documented_business_month",
    Asset("it_documented_daily_sales"),
    RollupMapper(upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=BusinessDayWindow()),
)
# A feed of naive local hours (no offset): a producer looping over a Berlin day's hours.
consumer(
    "it_berlin_naive_day",
    Asset("it_berlin_naive_hours"),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="Europe/Berlin")),
        window=TemporalWindow(Hour(timezone="Europe/Berlin")),
    ),
)

# UTC hours into New York days with a deadline long past for the days sent: a day with 20 of its
# 24 hours runs with them once settled (5 s); what each run ran with shows in status and the view.
consumer(
    "it_new_york_day_by_deadline",
    Asset("it_deadline_utc_hours"),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
        wait_policy=CompletionDeadline(timedelta(hours=1), settle=timedelta(seconds=5)),
    ),
)

with DAG(
    "it_backfill_open",
    # Daily UTC partitions; no scheduled run before 2100: backfill over a range ending next week.
    schedule=GrainPartitionTimetable(Day()),
    start_date=pendulum.datetime(2100, 1, 1, tz="UTC"),
    catchup=False,
):
    EmptyOperator(task_id="done")


# -- reliability: two schedulers, SIGKILL, bad keys (test_reliability.py) -----------------------

NEW_YORK = "America/New_York"
#: UTC hours in bulk (two schedulers), UTC hours across a SIGKILL, New York local hours and
#: ``region|New York local hour`` keys mixed with bad keys.
bulk_hours = Asset("it_bulk_hours")
fault_hours = Asset("it_fault_hours")
local_hours = Asset("it_local_hours")
region_local_hours = Asset("it_region_local_hours")
#: New York minutes, a day of them counted out (more than 1,440: test_scheduler.py).
local_minutes = Asset("it_local_minutes")
#: UTC hours posted while the tasks of their producer and consumer start (test_lockup.py).
lockup_hours = Asset("it_lockup_hours")

for fed in (bulk_hours, fault_hours, local_hours, region_local_hours, local_minutes, lockup_hours):
    with DAG(
        f"it_produce_{fed.name.removeprefix('it_')}",
        default_args=RETRY_TRANSIENT_FAILURES,
        schedule=PartitionedAtRuntime(),
        catchup=False,
    ):

        @task(outlets=[fed])
        def add_keys(outlet_events=None, dag_run=None, ti=None) -> int:
            """Emit one asset event per key of the run's conf (``{"keys": [...]}``): a batch."""
            keys = dag_run.conf["keys"]
            outlet_events[ti.task.outlets[0]].add_partitions(keys)
            return len(keys)

        add_keys()

UTC_HOURS_INTO_NEW_YORK_DAYS = TemporalRollupMapper(
    upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK), input_timezone="UTC"),
    window=TemporalWindow(Hour()),
)
UTC_HOURS_INTO_UTC_DAYS = TemporalRollupMapper(
    upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())
)
consumer("it_bulk_new_york_day", bulk_hours, UTC_HOURS_INTO_NEW_YORK_DAYS, record=False)
consumer("it_bulk_utc_day", bulk_hours, UTC_HOURS_INTO_UTC_DAYS, record=False)
consumer(
    "it_bulk_core_utc_day",
    bulk_hours,
    RollupMapper(upstream_mapper=StartOfDayMapper(input_format="%Y-%m-%dT%H"), window=DayWindow()),
    record=False,
)
consumer("it_fault_new_york_day", fault_hours, UTC_HOURS_INTO_NEW_YORK_DAYS, record=False)
consumer("it_fault_utc_day", fault_hours, UTC_HOURS_INTO_UTC_DAYS, record=False)
# The Dag of issue 48's freeze: a real task starts for every complete day.
consumer("it_lockup_day", lockup_hours, UTC_HOURS_INTO_UTC_DAYS)

#: Naive keys are New York wall-clock hours, as a producer writing local time sends them.
LOCAL_HOUR = TemporalWindow(Hour(timezone=NEW_YORK))
consumer(
    "it_local_day",
    local_hours,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK), input_timezone=NEW_YORK), window=LOCAL_HOUR
    ),
    record=False,
)
consumer(
    "it_local_iso_week",
    local_hours,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(IsoWeek(timezone=NEW_YORK), input_timezone=NEW_YORK), window=LOCAL_HOUR
    ),
    record=False,
)
consumer(
    "it_region_local_day",
    region_local_hours,
    DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["region", "time"], {"time": TemporalMapper(Day(timezone=NEW_YORK), input_timezone=NEW_YORK)}
        ),
        window=DimensionWindow(time=LOCAL_HOUR),
    ),
    record=False,
)

# A New York day of minutes: 1,500 on the fall-back day, more than a window lists, so the
# scheduler is handed them counted out (ExpectedSlots; issue 38).
consumer(
    "it_new_york_day_of_minutes",
    local_minutes,
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK)),
        window=TemporalWindow(Minutes(1, timezone=NEW_YORK)),
    ),
)
