"""
Roll each airport's daily summaries up into a business-day monthly report.

``weather_monthly_jfk`` waits until the daily summary of every business day (Monday to Friday)
of a month has arrived, then runs once with ``partition_key == "2013-03"``:
``RollupMapper(StartOfMonthMapper(input_format="%Y-%m-%d"), BusinessDayWindow())`` maps each
daily key (``2013-03-11``) to its month and waits for the month's 21 weekdays, not for its
weekends. The month is New York's, so ``partition_date`` is 2013-03-01T00:00-05:00. The report
goes to ``monthly/JFK/2013-03.json``.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG, PartitionedAssetTimetable, RollupMapper, StartOfMonthMapper, task

# The helper module beside this file, wherever this folder sits in the dags folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from weather_data import AIRPORTS, DATA, RETRY_TRANSIENT_FAILURES, daily_asset

from airflow_partitions import BusinessDayWindow

for airport in AIRPORTS:
    with DAG(
        f"weather_monthly_{airport.lower()}",
        schedule=PartitionedAssetTimetable(
            assets=daily_asset(airport),
            default_partition_mapper=RollupMapper(
                # New York months, like the New York local days they roll up.
                upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d", timezone="America/New_York"),
                window=BusinessDayWindow(),
            ),
        ),
        catchup=False,
        tags=["airflow-partitions", "example"],
        default_args=RETRY_TRANSIENT_FAILURES,
        doc_md=__doc__,
    ):

        @task
        def report(airport: str = airport, dag_run=None) -> str:
            """Write the month's business-day mean temperature, rain total and wettest day."""
            month_start = datetime.strptime(dag_run.partition_key, "%Y-%m")
            days = [d.date() for d in BusinessDayWindow().to_upstream(month_start)]
            summaries = [json.loads((DATA / "daily" / airport / f"{d}.json").read_text()) for d in days]
            wettest = max(summaries, key=lambda s: s["precip_in"])
            monthly = {
                "airport": airport,
                "month": dag_run.partition_key,
                "business_days": len(summaries),
                "temp_mean_f": round(sum(s["temp_mean_f"] for s in summaries) / len(summaries), 2),
                "precip_in": round(sum(s["precip_in"] for s in summaries), 2),
                "wettest_business_day": wettest["day"],
            }
            target = DATA / "monthly" / airport / f"{dag_run.partition_key}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(monthly, indent=2))
            return str(target.relative_to(DATA))

        report()
