"""
Dags repaired by ``airflow-partitions backfill`` (test_repair.py).

- A chain fed through the REST API: UTC hours (``it_repair_hours``, posted by the test) into days
  (``it_repair_day``, waiting for all 24; its task fails for the days a Variable lists and makes
  ``it_repair_days``), days into months (``it_repair_month``, waiting for every day); a sibling of
  the days under a completion deadline (``it_repair_day_by_deadline``: a day short of hours runs
  without them, ran incomplete).
- A chain fed by a producer: UTC days made by their own timetable (``it_repair_day_producer``, no
  scheduled run before 2100) into weeks (``it_repair_week``).
- Days the Partitions view repairs (``it_repair_ui_day``, test_ui.py): UTC hours into days, whose
  run fails on :data:`UI_FAILING_DAYS`.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, Variable, task

from airflow_partitions import (
    CompletionDeadline,
    Day,
    GrainPartitionTimetable,
    Hour,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
)

HOURS = Asset("it_repair_hours")
DAYS = Asset("it_repair_days")
PRODUCED_DAYS = Asset("it_repair_produced_days")
#: The Variable listing (JSON) the days whose ``it_repair_day`` run fails.
FAILING = "it_repair_failing"
#: The days whose ``it_repair_ui_day`` run fails, every time.
UI_FAILING_DAYS = ("2026-02-03", "2026-02-04")
#: One retry, soon: a transient failure of a SQLite api-server is not a failed day.
RETRY_ONCE = {"retries": 1, "retry_delay": timedelta(seconds=1)}


def rollup(grain, window, **policy) -> TemporalRollupMapper:
    """The rollup of *window*'s periods into *grain*'s (UTC)."""
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(grain), window=TemporalWindow(window), **policy
    )


with DAG(
    "it_repair_day",
    default_args=RETRY_ONCE,
    schedule=PartitionedAssetTimetable(assets=HOURS, default_partition_mapper=rollup(Day(), Hour())),
    catchup=False,
):

    @task(outlets=[DAYS])
    def make_day(dag_run=None) -> str:
        """Take two seconds (a backfill's pace shows in dag_run), then fail for a listed day."""
        time.sleep(2)
        if dag_run.partition_key in json.loads(Variable.get(FAILING, default="[]")):
            raise RuntimeError(f"no data for {dag_run.partition_key}")
        return dag_run.partition_key

    make_day()

with DAG(
    "it_repair_day_by_deadline",
    schedule=PartitionedAssetTimetable(
        assets=HOURS,
        default_partition_mapper=rollup(
            Day(), Hour(), wait_policy=CompletionDeadline(timedelta(0), settle=timedelta(seconds=15))
        ),
    ),
    catchup=False,
):
    EmptyOperator(task_id="done")

with DAG(
    "it_repair_month",
    schedule=PartitionedAssetTimetable(assets=DAYS, default_partition_mapper=rollup(Month(), Day())),
    catchup=False,
):
    EmptyOperator(task_id="done")

with DAG(
    "it_repair_day_producer",
    default_args=RETRY_ONCE,
    schedule=GrainPartitionTimetable(Day()),
    # No scheduled run before 2100: only the test's runs and the backfill's exist.
    start_date=pendulum.datetime(2100, 1, 1, tz="UTC"),
    catchup=False,
):

    @task(outlets=[PRODUCED_DAYS])
    def produce_day() -> None:
        """Emit one event of it_repair_produced_days; it carries the run's partition key."""

    produce_day()

with DAG(
    "it_repair_week",
    schedule=PartitionedAssetTimetable(assets=PRODUCED_DAYS, default_partition_mapper=rollup(Week(), Day())),
    catchup=False,
):
    EmptyOperator(task_id="done")

with DAG(
    "it_repair_ui_day",
    schedule=PartitionedAssetTimetable(
        assets=Asset("it_repair_ui_hours"), default_partition_mapper=rollup(Day(), Hour())
    ),
    catchup=False,
):

    @task
    def make_ui_day(dag_run=None) -> str:
        """Fail on UI_FAILING_DAYS (no data), succeed on the other days."""
        if dag_run.partition_key in UI_FAILING_DAYS:
            raise RuntimeError(f"no data for {dag_run.partition_key}")
        return dag_run.partition_key

    make_ui_day()
