"""
Land one airport-day of weather observations, as an upstream system would.

One producer per airport: ``weather_land_jfk`` is triggered with a namespaced partition key
such as ``jfk::2013-03-11`` (for example through the REST API, ``POST
/api/v2/dags/weather_land_jfk/dagRuns`` with ``partition_key``), copies that New York local day
of JFK's hourly observations to ``landing/JFK/2013-03-11.csv`` and emits an asset event on
``weather_jfk_landing`` carrying the same key.
"""

from __future__ import annotations

import csv
from datetime import date

from airflow.sdk import DAG, PartitionedAtRuntime, task
from weather_data import AIRPORTS, DATA, landing_asset, observations

for airport in AIRPORTS:
    with DAG(
        f"weather_land_{airport.lower()}",
        schedule=PartitionedAtRuntime(),
        catchup=False,
        tags=["airflow-partitions", "example"],
        doc_md=__doc__,
    ):

        @task(outlets=[landing_asset(airport)])
        def land(airport: str = airport, dag_run=None) -> str:
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
            return str(target.relative_to(DATA))

        land()
