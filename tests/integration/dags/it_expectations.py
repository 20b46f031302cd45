"""
A Dag whose expected_within the test changes (test_member_changes.py): it is read at Dag parse from
``$AIRFLOW_HOME/it_expect_hours.json`` (absent: no expectation), so that a new value makes a new
serialized version of the Dag without editing this file.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, task

from airflow_partitions import Day, Hour, TemporalMapper, TemporalRollupMapper, TemporalWindow

#: As integration_dags.RETRY_TRANSIENT_FAILURES: tasks retry the SQLite lock waits of a loaded machine.
RETRY_TRANSIENT_FAILURES = {"retries": 2, "retry_delay": timedelta(seconds=5)}
SETTING = Path(os.environ.get("AIRFLOW_HOME", ".")) / "it_expect_hours.json"
hours = json.loads(SETTING.read_text()) if SETTING.exists() else None

with DAG(
    "it_expect_day",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAssetTimetable(
        assets=Asset("it_expect_hours"),
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()),
            window=TemporalWindow(Hour()),
            expected_within=None if hours is None else timedelta(hours=hours),
        ),
    ),
    catchup=False,
):

    @task
    def record_partition(dag_run=None) -> str:
        """Return the run's partition key."""
        return dag_run.partition_key

    record_partition()
