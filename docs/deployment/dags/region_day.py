"""
A region's day (Sydney) once every store the Airflow Variable ``retail_stores`` lists has reported it.

Stores post ``store-001|2026-04-06`` through Airflow's REST API. docs/deployment.md checks this folder
on a laptop outside a managed Airflow, the Variable given as ``AIRFLOW_VAR_RETAIL_STORES``.
"""

from datetime import timedelta

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable

from airflow_partitions import (
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    TemporalMapper,
    VariableMembers,
)

with DAG(
    "region_day",
    schedule=PartitionedAssetTimetable(
        assets=Asset("store_days"),
        default_partition_mapper=DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(
                ["store", "day"], {"day": TemporalMapper(Day(timezone="Australia/Sydney"))}, output=["day"]
            ),
            window=DimensionWindow(store=VariableMembers("retail_stores")),
            wait_policy=CompletionDeadline(timedelta(hours=6)),
        ),
    ),
):
    EmptyOperator(task_id="load")
