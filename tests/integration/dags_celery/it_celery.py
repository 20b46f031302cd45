"""The CeleryExecutor test's Dags (test_celery.py): a batch producer, two day rollups; tasks run on Celery."""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, PartitionedAtRuntime, task

from airflow_partitions import Day, Hour, TemporalMapper, TemporalRollupMapper, TemporalWindow

#: A task killed with its Celery worker is failed by the scheduler (heartbeat timeout) and retried.
RETRIES = {"retries": 3, "retry_delay": timedelta(seconds=5)}
hours = Asset("it_celery_hours")

with DAG("it_celery_produce_hours", default_args=RETRIES, schedule=PartitionedAtRuntime(), catchup=False):

    @task(outlets=[hours])
    def add_keys(outlet_events=None, dag_run=None, ti=None) -> int:
        """Emit one asset event per key of the run's conf (``{"keys": [...]}``): a batch."""
        keys = dag_run.conf["keys"]
        outlet_events[ti.task.outlets[0]].add_partitions(keys)
        return len(keys)

    add_keys()

for dag_id, day in (
    ("it_celery_utc_day", Day()),
    ("it_celery_new_york_day", Day(timezone="America/New_York")),
):
    with DAG(
        dag_id,
        default_args=RETRIES,
        schedule=PartitionedAssetTimetable(
            assets=hours,
            default_partition_mapper=TemporalRollupMapper(
                upstream_mapper=TemporalMapper(day, input_timezone="UTC"), window=TemporalWindow(Hour())
            ),
        ),
        catchup=False,
    ):

        @task
        def load_day(dag_run=None) -> str:
            """Run on a Celery worker: return the day it loads."""
            return dag_run.partition_key

        load_day()
