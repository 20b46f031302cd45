"""
Dags of ``benchmarks/sqlite_lockup.py``: core Airflow only (no airflow-partitions), so the freeze it
reproduces is shown to be core's.

- ``lockup_day_of_hours``: a day of the hours posted to ``lockup_hours`` (``2030-01-01T05``),
  core's ``RollupMapper(StartOfDayMapper, DayWindow)``: a run once a day's 24 hours are in;
- ``lockup_hour``: one run per hour posted (``IdentityMapper``), so tasks start all the time;
- ``lockup_producer``: triggered with ``conf={"keys": [...]}``, its task adds the keys to
  ``lockup_produced_hours`` in one call (registered by the execution API when the task ends),
  rolled up into days by ``lockup_day_of_produced_hours``.

Every task is a real task (run by the executor, calling the execution API), not an
``EmptyOperator``.
"""

from __future__ import annotations

from airflow.sdk import (
    DAG,
    Asset,
    DayWindow,
    IdentityMapper,
    PartitionedAssetTimetable,
    PartitionMapper,
    RollupMapper,
    StartOfDayMapper,
    task,
)

posted_hours = Asset("lockup_hours")
produced_hours = Asset("lockup_produced_hours")


def day_of_hours() -> RollupMapper:
    """Core's rollup of ``2030-01-01T05``-style hour keys into ``2030-01-01`` days."""
    return RollupMapper(upstream_mapper=StartOfDayMapper(input_format="%Y-%m-%dT%H"), window=DayWindow())


@task
def record(dag_run=None) -> str:
    """Return the run's partition key (a task that runs, as users' tasks do)."""
    return dag_run.partition_key


def consumer(dag_id: str, asset: Asset, mapper: PartitionMapper) -> None:
    """Declare a Dag run by *asset*'s events through *mapper*, with one task."""
    with DAG(
        dag_id,
        schedule=PartitionedAssetTimetable(assets=asset, default_partition_mapper=mapper),
        catchup=False,
    ):
        record()


consumer("lockup_day_of_hours", posted_hours, day_of_hours())
consumer("lockup_hour", posted_hours, IdentityMapper())
consumer("lockup_day_of_produced_hours", produced_hours, day_of_hours())

with DAG("lockup_producer", schedule=None, catchup=False):

    @task(outlets=[produced_hours])
    def produce(outlet_events=None, dag_run=None) -> int:
        """Add the run's ``conf["keys"]`` to ``lockup_produced_hours``."""
        keys = dag_run.conf["keys"]
        outlet_events[produced_hours].add_partitions(keys)
        return len(keys)

    produce()
