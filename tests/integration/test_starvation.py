"""
Airflow evaluates only the 500 oldest pending partitioned runs per scheduler loop: 501 that can
never complete starve a complete one behind them, in any Dag. The state reader shows it.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import date, timedelta

from tests.integration.test_no_silent_holds import _send
from tests.integration.test_status import _cli, _state
from tests.support.launcher import wait_until

#: Deletes the test's never-completing pending runs, so the session's later tests are not starved.
CLEAN_UP = """
from sqlalchemy import delete, select
from airflow.models.asset import AssetPartitionDagRun, PartitionedAssetKeyLog
from airflow.utils.session import create_session
with create_session() as session:
    ids = session.scalars(select(AssetPartitionDagRun.id).where(
        AssetPartitionDagRun.target_dag_id == "it_core_day_of_hours",
        AssetPartitionDagRun.created_dag_run_id.is_(None))).all()
    session.execute(delete(PartitionedAssetKeyLog).where(PartitionedAssetKeyLog.asset_partition_dag_run_id.in_(ids)))
    session.execute(delete(AssetPartitionDagRun).where(AssetPartitionDagRun.id.in_(ids)))
"""


def test_501_pending_runs_that_never_complete_starve_a_complete_one_and_status_shows_it(airflow):
    first = date(2030, 1, 1)
    # Core's rollup awaits "2030-01-01T05"; "2030-01-01T5" maps to the day but never counts.
    stuck = [f"{first + timedelta(days=i)}T5" for i in range(501)]
    day = "2026-06-01"
    try:
        _send(airflow, "it_core_hours", stuck)
        _send(airflow, "it_status_hours", [f"{day}T{h:02d}" for h in range(24)])  # complete

        [partition] = _state(airflow, "it_status_day", day)["partitions"]
        assert partition["state"] == "pending" and partition["progress"][0]["missing"] == []
        assert partition["queue_position"] > 500  # beyond what the scheduler evaluates a loop
        state = _state(airflow, "it_status_day", day)
        # The 500 evaluated per loop are the stuck runs and what earlier tests left pending (at
        # most pending_total - 502 of them); this Dag's run is beyond them.
        others = state["pending_total"] - 502
        assert others >= 0 and state["starved"] >= 1
        assert 500 - others <= state["blocked_ahead"] <= 500
        starved = _cli(airflow, "status", "it_status_day", "--key", day)
        assert starved.returncode == 1 and "hold only keys that never count" in starved.stdout
        assert all(r["partition_key"] != day for r in airflow.dag_runs("it_status_day"))  # starved
    finally:
        done = subprocess.run(
            [sys.executable, "-c", CLEAN_UP], env=airflow.env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-3000:]
    wait_until(
        lambda: any(r["partition_key"] == day for r in airflow.dag_runs("it_status_day")),
        timeout=90,
        what="the complete day's run once the stuck rows are gone",
    )
