"""
Export yesterday's airport summaries every morning, emitting a partition per airport found.

``weather_daily_export`` runs at 06:00 New York time
(:class:`~airflow_partitions.ScheduledRuntimePartitionTimetable`). The run has no partition
key of its own: the task looks for the previous local day's daily summaries, writes
``exports/2013-03-10.csv`` with one row per airport that has one, and adds one partition key
per airport it exported (``jfk::2013-03-10``, ``lga::2013-03-10`` …). If no airport has that
day, the task skips and nothing is emitted.
"""

from __future__ import annotations

import csv
import json
from datetime import timedelta

from airflow.sdk import DAG, Asset, task
from airflow.sdk.exceptions import AirflowSkipException
from weather_data import AIRPORTS, DATA, NEW_YORK, folder_uri

from airflow_partitions import ScheduledRuntimePartitionTimetable

exports = Asset("weather_daily_export", uri=folder_uri("exports"))

with DAG(
    "weather_daily_export",
    schedule=ScheduledRuntimePartitionTimetable("0 6 * * *", timezone="America/New_York"),
    catchup=False,
    tags=["airflow-partitions", "example"],
    doc_md=__doc__,
):

    @task(outlets=[exports])
    def export(logical_date=None, outlet_events=None) -> str:
        """Export the previous New York day's summaries; add one key per airport exported."""
        day = (logical_date.astimezone(NEW_YORK) - timedelta(days=1)).date()
        found = [DATA / "daily" / a / f"{day}.json" for a in AIRPORTS]
        summaries = [json.loads(path.read_text()) for path in found if path.exists()]
        if not summaries:
            raise AirflowSkipException(f"no airport has a daily summary for {day}; nothing to export")
        target = DATA / "exports" / f"{day}.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(summaries[0]))
            writer.writeheader()
            writer.writerows(summaries)
        outlet_events[exports].add_partitions([f"{s['airport'].lower()}::{day}" for s in summaries])
        return str(target.relative_to(DATA))

    export()
