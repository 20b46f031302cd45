"""The consumer Dags whose partition state the golden files pin (tests/unit/tools/test_state_golden.py)."""

from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable

from airflow_partitions import (
    BusinessDay,
    BusinessDayWindow,
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    GrainPartitionTimetable,
    Hour,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)


def consumer(dag_id, asset, mapper):
    timetable = PartitionedAssetTimetable(assets=Asset(asset), default_partition_mapper=mapper)
    with DAG(dag_id, schedule=timetable, catchup=False):
        EmptyOperator(task_id="done")


# New York days of UTC hours, fired at the latest an hour after the day ends.
consumer(
    "golden_ny_day",
    "golden_utc_hours",
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
        wait_policy=CompletionDeadline(timedelta(hours=1)),
    ),
)
# One run per airport and day: keys "jfk|2013-03-08".
consumer(
    "golden_region_day",
    "golden_region_days",
    CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
)
# A month of business days (Monday to Friday): a Saturday is refused by the calendar's rule.
consumer(
    "golden_business_month",
    "golden_business_days",
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
)
# UTC days of UTC hours, each expected within two hours of its end (late after that without a success).
consumer(
    "golden_late_day",
    "golden_late_hours",
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()),
        window=TemporalWindow(Hour()),
        expected_within=timedelta(hours=2),
    ),
)
# A producer partitioned by business days (no upstream assets): its weekends are closed, not unopened.
with DAG(
    "golden_business_producer",
    schedule=GrainPartitionTimetable(BusinessDay()),
    start_date=pendulum.datetime(2100, 1, 1, tz="UTC"),  # no scheduled run: only those written
    catchup=False,
):
    EmptyOperator(task_id="land")
