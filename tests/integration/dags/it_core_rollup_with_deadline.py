"""
A Dag file that gives Airflow's own RollupMapper a CompletionDeadline: it must fail alone.

Airflow's RollupMapper serializes only the wait policies it ships, so this file gets one import
error (the dag-processor cannot serialize its Dag); every other Dag keeps running.
test_no_silent_holds.py checks both.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, Asset, DayWindow, PartitionedAssetTimetable, RollupMapper, StartOfDayMapper, task

from airflow_partitions import CompletionDeadline

with DAG(
    "it_core_rollup_with_deadline",
    schedule=PartitionedAssetTimetable(
        assets=Asset("it_core_deadline_hours"),
        default_partition_mapper=RollupMapper(
            upstream_mapper=StartOfDayMapper(),
            window=DayWindow(),
            wait_policy=CompletionDeadline(timedelta(hours=1)),
        ),
    ),
    catchup=False,
):

    @task
    def never() -> None:
        """Never runs: the Dag cannot be serialized."""

    never()
