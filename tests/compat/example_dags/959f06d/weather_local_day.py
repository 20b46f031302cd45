"""
Assemble each New York local day from UTC-keyed hourly readings, exactly when all have arrived.

``weather_local_day_jfk`` listens to ``weather_jfk_hourly``, whose keys are UTC hours
(``2013-03-10T05``). :class:`~airflow_partitions.TemporalRollupMapper` maps each hour to its New
York day and waits for every *real* hour of that day: 23 on 2013-03-10 (spring forward), 24 on
an ordinary day, 25 on 2013-11-03 (fall back). The run, keyed ``2013-03-10``, writes the day's
readings in local time with their UTC offsets to ``local_days/JFK/2013-03-10.csv``. A day with
an hour missing from the source waits (core's ``DayWindow`` would wait for 24 hours on every
day, so a DST day would never, or wrongly, complete).
"""

from __future__ import annotations

import csv
import sys
from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG, PartitionedAssetTimetable, task

# The helper module beside this file, wherever this folder sits in the dags folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from weather_data import AIRPORTS, DATA, NEW_YORK, RETRY_TRANSIENT_FAILURES, hourly_asset

from airflow_partitions import Day, Hour, TemporalMapper, TemporalRollupMapper, TemporalWindow

for airport in AIRPORTS:
    with DAG(
        f"weather_local_day_{airport.lower()}",
        schedule=PartitionedAssetTimetable(
            assets=hourly_asset(airport),
            default_partition_mapper=TemporalRollupMapper(
                upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
                window=TemporalWindow(Hour()),
            ),
        ),
        catchup=False,
        tags=["airflow-partitions", "example"],
        default_args=RETRY_TRANSIENT_FAILURES,
        doc_md=__doc__,
    ):

        @task
        def assemble(airport: str = airport, dag_run=None) -> str:
            """Write the local day's hourly readings in New York time, one row per real hour."""
            day = dag_run.partition_key
            with (DATA / "landing" / airport / f"{day}.csv").open(newline="") as handle:
                rows = list(csv.DictReader(handle))
            target = DATA / "local_days" / airport / f"{day}.csv"
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("w", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["local_time", "utc_hour", "temp_f", "precip_in"])
                for row in rows:
                    instant = datetime.fromisoformat(row["time_hour"].replace("Z", "+00:00"))
                    local = instant.astimezone(NEW_YORK).isoformat(timespec="minutes")
                    writer.writerow([local, row["time_hour"][:13], row["temp"], row["precip"]])
            return str(target.relative_to(DATA))

        assemble()
