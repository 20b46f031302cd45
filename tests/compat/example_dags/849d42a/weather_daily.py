"""
Summarize each landed airport-day: one consumer per airport, keyed by the plain day.

``weather_daily_jfk`` listens to ``weather_jfk_landing``, whose keys are namespaced
(``jfk::2013-03-11``). :class:`~airflow_partitions.PrefixStripMapper` strips the namespace, so
the consumer's run has ``partition_key == "2013-03-11"``; the task reads exactly that
partition's file and writes ``daily/JFK/2013-03-11.json``, then emits ``weather_jfk_daily``
with key ``2013-03-11``.
"""

from __future__ import annotations

import csv
import json
import sys
from datetime import date
from pathlib import Path

from airflow.sdk import DAG, PartitionedAssetTimetable, task

# The helper module beside this file, wherever this folder sits in the dags folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from weather_data import (
    AIRPORTS,
    DATA,
    RETRY_TRANSIENT_FAILURES,
    daily_asset,
    landing_asset,
    local_day_hours,
    number,
)

from airflow_partitions import PrefixStripMapper

for airport in AIRPORTS:
    with DAG(
        f"weather_daily_{airport.lower()}",
        schedule=PartitionedAssetTimetable(
            assets=landing_asset(airport),
            default_partition_mapper=PrefixStripMapper(airport.lower()),
        ),
        catchup=False,
        tags=["airflow-partitions", "example"],
        default_args=RETRY_TRANSIENT_FAILURES,
        doc_md=__doc__,
    ):

        @task(outlets=[daily_asset(airport)])
        def summarize(airport: str = airport, dag_run=None) -> str:
            """Write the day's hours observed, temperature range, precipitation and peak wind."""
            day = date.fromisoformat(dag_run.partition_key)
            with (DATA / "landing" / airport / f"{day}.csv").open(newline="") as handle:
                rows = list(csv.DictReader(handle))
            temps = [t for t in (number(r["temp"]) for r in rows) if t is not None]
            summary = {
                "airport": airport,
                "day": str(day),
                "hours_observed": len(rows),
                "hours_in_day": local_day_hours(day),
                "temp_min_f": min(temps),
                "temp_max_f": max(temps),
                "temp_mean_f": round(sum(temps) / len(temps), 2),
                "precip_in": round(sum(number(r["precip"]) or 0.0 for r in rows), 2),
                "wind_max_mph": max((number(r["wind_speed"]) or 0.0) for r in rows),
            }
            target = DATA / "daily" / airport / f"{day}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(summary, indent=2))
            return str(target.relative_to(DATA))

        summarize()
