"""
One run per airport and New York day from a shared feed of composite keys, with a deadline.

``weather_airport_day`` listens to ``weather_readings``, whose keys are ``airport|UTC hour``
(``jfk|2013-03-10T05``). :class:`~airflow_partitions.DimensionRollupMapper` keeps the airport,
maps the hour to its New York day (``jfk|2013-03-10``) and waits for every real hour of that
day for that airport alone (23 on 2013-03-10). Its :class:`~airflow_partitions.CompletionDeadline`
does not wait forever: six hours after the day has ended, a day with at least 90 % of its hours
(22 of 24) runs with what arrived, and the task lists the missing hours with
:func:`~airflow_partitions.missing_upstream_keys`. (The 2013 days ended long ago, so here a
day with an hour missing from the source runs at once; ``weather_local_day_*`` waits for it.)
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from airflow.sdk import DAG, PartitionedAssetTimetable, get_current_context, task

# The helper module beside this file, wherever this folder sits in the dags folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from weather_data import READINGS, RETRY_TRANSIENT_FAILURES

from airflow_partitions import (
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    Hour,
    TemporalMapper,
    TemporalWindow,
    missing_upstream_keys,
)

with DAG(
    "weather_airport_day",
    schedule=PartitionedAssetTimetable(
        assets=READINGS,
        default_partition_mapper=DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(
                ["airport", "time"],
                {"time": TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC")},
            ),
            window=DimensionWindow(time=TemporalWindow(Hour())),
            wait_policy=CompletionDeadline(timedelta(hours=6), min_fraction=0.9),
        ),
    ),
    catchup=False,
    tags=["airflow-partitions", "example"],
    default_args=RETRY_TRANSIENT_FAILURES,
    doc_md=__doc__,
):

    @task
    def check_hours(dag_run=None) -> str:
        """Say whether the airport-day was complete, and which UTC hours were missing."""
        missing = missing_upstream_keys(get_current_context(), READINGS)
        if not missing:
            return "complete: every real hour arrived"
        return f"ran at its deadline; missing {', '.join(key.split('|')[1] for key in missing)}"

    check_hours()
