"""
The Dag of the differential test (test_differential.py): store days rolled up into region days.

Each region's day (``north|2025-01-02``, UTC) awaits the stores the Airflow Variable
``it_diff_stores`` lists in that region (``[{"value": "s1", "group": "north"}, …]``, set and
changed by the test). Its task is an ``EmptyOperator``, which the scheduler marks done without
the executor: a run ends within a scheduler loop of being created or cleared.
"""

from __future__ import annotations

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable

from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    TemporalMapper,
    VariableMembers,
)

with DAG(
    "it_diff_region_day",
    schedule=PartitionedAssetTimetable(
        assets=Asset("it_diff_store_days"),
        default_partition_mapper=DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}),
            window=DimensionWindow(store=VariableMembers("it_diff_stores")),
        ),
    ),
    catchup=False,
):
    EmptyOperator(task_id="done")
