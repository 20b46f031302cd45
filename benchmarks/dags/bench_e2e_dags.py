"""
The Dags of ``benchmarks/bench_e2e.py``: one producer per asset, and the rollup consumers.

A producer (``produce__<asset>``) is triggered with ``conf={"keys": [...]}`` and adds them all
to its asset in one ``outlet_events[asset].add_partitions(keys)``, as
``example_dags/weather_landing.py`` does. A consumer has one ``EmptyOperator``, which the
scheduler marks done itself: no worker runs it, so what is measured is the scheduler turning
events into runs. The names come from ``e2e_spec.py`` beside this file; the trend's sizes from
``$AIRFLOW_PARTITIONS_BENCH_SIZES`` (``1000,10000``), the spellings from
``$AIRFLOW_PARTITIONS_BENCH_SPELLINGS`` (``canonical,zulu``; canonical if unset).
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from pathlib import Path

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import (
    DAG,
    Asset,
    DayWindow,
    PartitionedAssetTimetable,
    RollupMapper,
    StartOfDayMapper,
    StartOfWeekMapper,
    WeekWindow,
    task,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_spec import SIZES_ENV, SPELLED, SPELLINGS_ENV, producer_id, rollup_kind, scenarios

from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    Hour,
    IsoWeek,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)


def rollup(kind: str):
    """Return a fresh rollup mapper of *kind* (see ``e2e_spec.py``; ``…_zulu`` reads that spelling)."""
    base, spelling = rollup_kind(kind)
    _, offset, core_format = SPELLED[spelling]
    ny_day = TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC", input_format=offset)
    return {
        "ny_day": lambda: TemporalRollupMapper(upstream_mapper=ny_day, window=TemporalWindow(Hour())),
        "utc_day": lambda: TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day(), input_format=offset), window=TemporalWindow(Hour())
        ),
        "airport_ny_day": lambda: DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["airport", "time"], {"time": ny_day}),
            window=DimensionWindow(time=TemporalWindow(Hour())),
        ),
        "iso_week": lambda: TemporalRollupMapper(
            upstream_mapper=TemporalMapper(IsoWeek()), window=TemporalWindow(Day())
        ),
        "core_day": lambda: RollupMapper(
            upstream_mapper=StartOfDayMapper(input_format=core_format), window=DayWindow()
        ),
        "core_week": lambda: RollupMapper(
            upstream_mapper=StartOfWeekMapper(input_format="%Y-%m-%d"), window=WeekWindow()
        ),
    }[base]()


def consumer_dag(dag_id: str, asset: str, kind: str) -> DAG:
    """Build the consumer Dag *dag_id*: a rollup of *kind* over *asset*, one ``EmptyOperator``."""
    with DAG(
        dag_id,
        schedule=PartitionedAssetTimetable(assets=Asset(asset), default_partition_mapper=rollup(kind)),
        catchup=False,
        tags=["benchmark"],
    ) as dag:
        EmptyOperator(task_id="done")
    return dag


def producer(asset: Asset) -> None:
    """Build the Dag whose one task adds the run's ``conf["keys"]`` to *asset*."""
    with DAG(
        producer_id(asset.name),
        schedule=None,
        catchup=False,
        tags=["benchmark"],
        # A task lost on a loaded machine (no heartbeat) is tried again, not a failed benchmark.
        default_args={"retries": 2, "retry_delay": timedelta(seconds=3)},
    ):

        @task(outlets=[asset])
        def produce(outlet_events=None, dag_run=None) -> int:
            keys = dag_run.conf["keys"]
            outlet_events[asset].add_partitions(keys)
            return len(keys)

        produce()


SIZES = [int(size) for size in os.environ.get(SIZES_ENV, "").split(",") if size]
SPELLINGS = os.environ.get(SPELLINGS_ENV, "canonical").split(",")
for scenario in scenarios(sizes=SIZES, spellings=SPELLINGS, with_keys=False):
    for name in scenario.keys:
        if scenario.delivery == "tasks":
            producer(Asset(name))
    for consumer in scenario.consumers:
        consumer_dag(consumer.dag_id, consumer.asset, consumer.rollup)
