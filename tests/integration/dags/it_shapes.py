"""
Dags for the Partitions view's browser tests (test_ui.py): one per key shape the page draws.

Each rolls up keys that test_ui.py sends through the REST API, so its partitions are what the
scheduler makes of them: runs, and pending runs that wait (their period not over) or are overdue.
Their one task is an ``EmptyOperator`` (the scheduler marks it done without the executor).
"""

from __future__ import annotations

from datetime import timedelta

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, PartitionMapper

from airflow_partitions import (
    BusinessDayWindow,
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    FiscalMonth,
    FiscalQuarter,
    Hour,
    Minutes,
    Month,
    RetailWeek,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    VariableMembers,
)

#: How long a day with keys missing must see no new key before its (long past) deadline fires it.
SHAPES_SETTLE = timedelta(seconds=10)


def shape(dag_id: str, asset: str, mapper: PartitionMapper) -> None:
    """Declare a Dag run by *asset*'s events through *mapper*, with one EmptyOperator."""
    with DAG(
        dag_id,
        schedule=PartitionedAssetTimetable(assets=Asset(asset), default_partition_mapper=mapper),
        catchup=False,
    ):
        EmptyOperator(task_id="done")


# Days into months: a grid of years by months.
shape(
    "it_shape_month_of_days",
    "it_shape_days",
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day())),
)
# Plain months into a July fiscal year's quarters (FY2026-Q3 is January to March 2026).
shape(
    "it_shape_fiscal_quarter",
    "it_shape_fiscal_months",
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(FiscalQuarter(start_month=7)), window=TemporalWindow(FiscalMonth())
    ),
)
# Airport-hours into airport-days (jfk|2026-02-10T05 -> jfk|2026-02-10): a row per airport.
shape(
    "it_shape_airport_day",
    "it_shape_airport_hours",
    DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["airport", "time"], {"time": TemporalMapper(Day())}),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    ),
)
# Quarter hours into hours: a strip of a day's hours.
shape(
    "it_shape_hour",
    "it_shape_quarter_hours",
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Hour()), window=TemporalWindow(Minutes(15))),
)
# Five minutes into quarter hours (2026-04-01T05:15): minutes by hour, an hour's minutes zoomed in.
shape(
    "it_shape_quarter_hour",
    "it_shape_five_minutes",
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Minutes(15)), window=TemporalWindow(Minutes(5))),
)
# UTC hours into UTC days with a deadline long past: a day with hours missing runs with what it has.
shape(
    "it_shape_deadline_day",
    "it_shape_deadline_hours",
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()),
        window=TemporalWindow(Hour()),
        wait_policy=CompletionDeadline(timedelta(hours=1), settle=SHAPES_SETTLE),
    ),
)
# Hours into months: a pending month awaits 744 hours, more than a partition's answer lists.
shape(
    "it_shape_month_of_hours",
    "it_shape_month_hours",
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Hour())),
)
# Business days into months: a Saturday is refused by the calendar's rule (expected), "2026-8-3" by mistake.
shape(
    "it_shape_business_month",
    "it_shape_business_days",
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
)
# Stores' days into days (store-001|2025-11-29 -> 2025-11-29), the stores the Variable it_shape_stores
# lists, each day expected within an hour of its end: days of November and December, late; a store
# the Variable does not list yet is refused, then re-queued once it does.
shape(
    "it_shape_store_day",
    "it_shape_store_days",
    DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}, output=["day"]),
        window=DimensionWindow(store=VariableMembers("it_shape_stores")),
        expected_within=timedelta(hours=1),
    ),
)
# Days into NRF retail weeks (R2025-W01 is 2 to 8 February 2025): a year of weeks, its heatmap by week.
shape(
    "it_shape_retail_week",
    "it_shape_retail_days",
    TemporalRollupMapper(upstream_mapper=TemporalMapper(RetailWeek()), window=TemporalWindow(Day())),
)
