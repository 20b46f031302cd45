"""
Restarts of every Airflow process: an upgrade keeps pending rollups, a changed rollup is requeued.

Airflow deletes a Dag's pending rollups when its serialized mapper changes; ours must serialize
byte for byte the same after a restart, so a half-filled rollup survives and completes. When the
definition does change (here only ``max_downstream_keys``), ``airflow-partitions requeue`` queues
the stored events of the cleared rollups again, and each period completes once. Runs last for
each backend: it restarts the shared Airflow.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta

from tests.integration.conftest import BROKEN_DAG_FILES, DAG_IDS
from tests.integration.dags.integration_dags import REQUEUE_CAP_VARIABLE
from tests.integration.test_no_silent_holds import _pending, _send
from tests.integration.test_status import _cli
from tests.support.launcher import wait_until

#: The backends this module runs on (tests/integration/conftest.py; --every-backend: both).
#: The oldest Airflow's CI pass runs this module on SQLite (scripts/dev.sh).
BACKENDS = ("postgresql",)


def test_a_restart_keeps_a_half_filled_rollup_and_completes_it(airflow):
    hours = [f"2026-03-10T{h:02d}" for h in range(24)]
    for key in hours[:12]:
        airflow.create_asset_event("it_restart_hours", partition_key=key)

    def pending():
        return airflow.request("GET", "/ui/partitioned_dag_runs", params={"dag_id": "it_restart_day"})[
            "partitioned_dag_runs"
        ]

    [before] = pending()
    assert (before["partition_key"], before["total_received"], before["total_required"]) == (
        "2026-03-10",
        12,
        24,
    )

    airflow.restart()
    airflow.wait_for_dags(DAG_IDS, expected_import_errors=BROKEN_DAG_FILES)
    [after] = pending()
    assert (after["partition_key"], after["total_received"]) == ("2026-03-10", 12)

    for key in hours[12:]:
        airflow.create_asset_event("it_restart_hours", partition_key=key)
    [run] = airflow.wait_for_runs("it_restart_day", 1, timeout=90)
    assert run["partition_key"] == "2026-03-10"


DAG_ID = "it_requeue_new_york_day"
#: Three New York days (EDT, UTC-4), each 24 UTC hours from 04:00: half of each is sent first.
DAYS = ["2026-04-01", "2026-04-02", "2026-04-03"]


def _hours(day: str) -> list[str]:
    """The 24 UTC hour keys of the New York *day*, as the rollup awaits them (``2026-04-01T04`` …)."""
    midnight = datetime.fromisoformat(day).replace(hour=4, tzinfo=UTC)
    return [(midnight + timedelta(hours=h)).strftime("%Y-%m-%dT%H") for h in range(24)]


def _requeue(airflow, start: datetime, *options: str) -> subprocess.CompletedProcess:
    """``airflow-partitions requeue DAG_ID --start START --end now OPTIONS``, which must exit 0."""
    end = datetime.now(UTC).isoformat()
    done = _cli(airflow, "requeue", DAG_ID, "--start", start.isoformat(), "--end", end, *options)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_requeue_after_a_changed_rollup_definition_completes_every_half_filled_day(airflow):
    start = datetime.now(UTC)
    first_halves = [key for day in DAYS for key in _hours(day)[:12]]
    _send(airflow, "it_requeue_hours", first_halves)
    half_filled = [(day, 12) for day in DAYS]
    assert sorted((p["partition_key"], p["total_received"]) for p in _pending(airflow, DAG_ID)) == half_filled

    # Only max_downstream_keys changes: a new stored mapper, so a new rollup fingerprint. Once the
    # dag-processor has stored it, the scheduler clears the pending runs with their keys.
    airflow.env[REQUEUE_CAP_VARIABLE] = "10"
    try:
        airflow.restart()
        airflow.wait_for_dags(DAG_IDS, expected_import_errors=BROKEN_DAG_FILES)
        wait_until(lambda: _pending(airflow, DAG_ID) == [], timeout=120, what="the pending rollups cleared")
    finally:
        del airflow.env[REQUEUE_CAP_VARIABLE]  # for a later restart; running processes keep it
    assert "Cleared provisional partition Dag run(s)" in airflow.log_tail("scheduler", lines=100_000)

    dry = json.loads(_requeue(airflow, start, "--json").stdout)
    assert sorted(e["partition_key"] for e in dry["events"]) == sorted(first_halves)
    assert all(e["refused"] is None and e["asset"] == "it_requeue_hours" for e in dry["events"])
    assert dry["downstream"] == dict(half_filled) and dry["stale_pending"] == 0 and not dry["requeued"]
    assert _pending(airflow, DAG_ID) == []  # a dry run writes nothing

    done = _requeue(airflow, start, "--yes").stdout.splitlines()
    assert [line.split()[:2] for line in done[2:-1]] == [[day, "12"] for day in DAYS]
    assert done[-1] == "re-queued 36 events into 3 partitions"
    assert sorted((p["partition_key"], p["total_received"]) for p in _pending(airflow, DAG_ID)) == half_filled
    again = json.loads(_requeue(airflow, start, "--yes", "--json").stdout)
    assert again["events"] == [] and again["downstream"] == {}  # nothing is orphaned any more

    _send(airflow, "it_requeue_hours", [key for day in DAYS for key in _hours(day)[12:]])
    runs = airflow.wait_for_runs(DAG_ID, len(DAYS), timeout=120)
    assert sorted(r["partition_key"] for r in runs) == DAYS  # one run per day: no duplicate
    for run in runs:
        fed = airflow.xcom(DAG_ID, run["dag_run_id"], "count_hours")
        assert fed == {
            "partition_key": run["partition_key"],
            "keys": _hours(run["partition_key"]),
            "missing": [],
        }
