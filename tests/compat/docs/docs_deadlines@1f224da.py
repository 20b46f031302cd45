# -- block 1 of docs/deadlines.md at 1f224da
"""Hourly sales into daily reports: at once when complete, from 02:00 UTC the next day with 22 hours."""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, PartitionedAtRuntime, task

from airflow_partitions import (
    CompletionDeadline,
    Day,
    Hour,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    missing_upstream_keys,
)

hourly_sales = Asset("hourly_sales")

# Producer: triggered with a partition key such as "2026-03-10T03"; its event carries that key.
with DAG("hourly_sales_landing", schedule=PartitionedAtRuntime(), catchup=False):

    @task(outlets=[hourly_sales])
    def land(dag_run=None) -> str:
        return dag_run.partition_key

    land()

# Consumer: one run per UTC day, "2026-03-10"; complete days at once, others from
# 2026-03-11T02:00Z on if at least 22 of the 24 hours (90 %, rounded up) have arrived and no
# new hour came for 30 s (with fewer, one grace later: 2026-03-11T04:00Z).
with DAG(
    "daily_sales_report",
    schedule=PartitionedAssetTimetable(
        assets=hourly_sales,
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()),
            window=TemporalWindow(Hour()),
            wait_policy=CompletionDeadline(timedelta(hours=2), min_fraction=0.9),
        ),
    ),
    catchup=False,
):

    @task
    def report(**context) -> dict:
        day = context["dag_run"].partition_key  # "2026-03-10"
        missing = missing_upstream_keys(context, hourly_sales)  # e.g. ["2026-03-10T03"]
        return {"day": day, "complete": not missing, "missing_hours": missing}

    report()
