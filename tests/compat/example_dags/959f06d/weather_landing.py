"""
Land one airport-day of weather observations, as an upstream system would.

One producer per airport: ``weather_land_jfk`` is triggered with a namespaced partition key
such as ``jfk::2013-03-11`` (for example through the REST API, ``POST
/api/v2/dags/weather_land_jfk/dagRuns`` with ``partition_key``), copies that New York local day
of JFK's hourly observations to ``landing/JFK/2013-03-11.csv`` and emits an asset event on
``weather_jfk_landing`` carrying the same key. It also emits one event per observed hour on
``weather_jfk_hourly``, keyed by the UTC hour (``2013-03-11T04`` … ``2013-03-12T03``), as a
feed of hourly readings would, and the same hours on the all-airport ``weather_readings`` asset
with composite keys (``jfk|2013-03-11T04``).
"""

from __future__ import annotations

import csv
import sys
from datetime import date
from pathlib import Path

from airflow.sdk import DAG, PartitionedAtRuntime, task

# The helper module beside this file, wherever this folder sits in the dags folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from weather_data import (
    AIRPORTS,
    DATA,
    READINGS,
    RETRY_TRANSIENT_FAILURES,
    hourly_asset,
    landing_asset,
    observations,
)

for airport in AIRPORTS:
    with DAG(
        f"weather_land_{airport.lower()}",
        schedule=PartitionedAtRuntime(),
        catchup=False,
        tags=["airflow-partitions", "example"],
        default_args=RETRY_TRANSIENT_FAILURES,
        doc_md=__doc__,
    ):

        @task(outlets=[landing_asset(airport), hourly_asset(airport), READINGS])
        def land(airport: str = airport, dag_run=None, outlet_events=None) -> str:
            """Copy the airport-day named by the run's partition key to the landing folder."""
            namespace, _, day_text = dag_run.partition_key.partition("::")
            if namespace != airport.lower():
                raise ValueError(
                    f"partition key {dag_run.partition_key!r}: expected '{airport.lower()}::YYYY-MM-DD'"
                )
            day = date.fromisoformat(day_text)
            rows = observations(airport, day)
            if not rows:
                raise ValueError(f"no {airport} observations for {day} in the 2013 data")
            target = DATA / "landing" / airport / f"{day}.csv"
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            # time_hour is UTC ("2013-03-11T04:00:00Z"): its hour is the UTC hour key.
            hours = [row["time_hour"][:13] for row in rows]
            outlet_events[hourly_asset(airport)].add_partitions(hours)
            outlet_events[READINGS].add_partitions([f"{namespace}|{hour}" for hour in hours])
            return str(target.relative_to(DATA))

        land()
