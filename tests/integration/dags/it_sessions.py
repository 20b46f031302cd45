"""
Dags of the trading-session integration tests (test_sessions.py): New York Stock Exchange sessions.

Their own file, so that only its parses import exchange_calendars (and pandas): the other Dags'
file parses as before.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, task

from airflow_partitions import (
    ExchangeCalendar,
    GrainPartitionTimetable,
    Minutes,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    TradingSession,
    Week,
)

#: As integration_dags.RETRY_TRANSIENT_FAILURES: tasks retry the SQLite lock waits of a loaded machine.
RETRY_TRANSIENT_FAILURES = {"retries": 2, "retry_delay": timedelta(seconds=5)}
NEW_YORK = "America/New_York"
NYSE_SESSION = TradingSession(ExchangeCalendar("XNYS"))
bars = Asset("it_bars")
session_closes = Asset("it_session_closes")


@task
def record_partition(dag_run=None) -> dict:
    """Return what the run was created for, so the test can read it back as XCom."""
    return {"partition_key": dag_run.partition_key, "partition_date": str(dag_run.partition_date)}


# 30-minute bars, New York time, roll up into their NYSE session: 13 bars, 7 on an early close.
with DAG(
    "it_session_of_bars",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAssetTimetable(
        assets=bars,
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(NYSE_SESSION),
            window=TemporalWindow(Minutes(30, timezone=NEW_YORK)),
        ),
    ),
    catchup=False,
):
    record_partition()

with DAG(
    "it_session_producer",
    default_args=RETRY_TRANSIENT_FAILURES,
    # One partition per NYSE session, run 30 minutes after its close. Scheduled runs only from
    # 2100 (none whose key would depend on when the tests run); backfill walks sessions regardless.
    schedule=GrainPartitionTimetable(NYSE_SESSION, lag=timedelta(minutes=30)),
    start_date=pendulum.datetime(2100, 1, 1, tz="UTC"),
    catchup=False,
):

    @task(outlets=[session_closes])
    def land_session() -> None:
        """Emit one event on it_session_closes; it carries the run's partition key, a session date."""

    land_session()

# The sessions of a New York week: four in the week of Thanksgiving 2026.
with DAG(
    "it_week_of_sessions",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAssetTimetable(
        assets=session_closes,
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Week(timezone=NEW_YORK)), window=TemporalWindow(NYSE_SESSION)
        ),
    ),
    catchup=False,
):
    record_partition()
