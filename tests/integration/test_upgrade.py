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
from datetime import UTC, datetime, timedelta

from airflow_partitions.testing import wait_until
from tests.integration.conftest import BROKEN_DAG_FILES, DAG_IDS
from tests.integration.dags.integration_dags import REQUEUE_CAP_VARIABLE
from tests.integration.test_no_silent_holds import _pending, _send
from tests.integration.test_status import _cli


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


def _requeue(airflow, start: datetime, *options: str) -> dict:
    """``airflow-partitions requeue DAG_ID --start START --end now … --json``, parsed."""
    end = datetime.now(UTC).isoformat()
    done = _cli(airflow, "requeue", DAG_ID, "--start", start.isoformat(), "--end", end, *options, "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_requeue_after_a_changed_rollup_definition_completes_every_half_filled_day(airflow):
    start = datetime.now(UTC)
    first_halves = [key for day in DAYS for key in _hours(day)[:12]]
    _send(airflow, "it_requeue_hours", first_halves)
    pending = _pending(airflow, DAG_ID)
    assert sorted((p["partition_key"], p["total_received"]) for p in pending) == [(day, 12) for day in DAYS]

    # Only max_downstream_keys changes: a new stored mapper, so a new rollup fingerprint.
    airflow.env[REQUEUE_CAP_VARIABLE] = "10"
    try:
        airflow.restart()
        airflow.wait_for_dags(DAG_IDS, expected_import_errors=BROKEN_DAG_FILES)

        def cleared() -> dict | None:
            # Before the dag-processor stores the new mapper, the events still feed their pending
            # runs; then the runs are stale until the scheduler clears them with their keys.
            found = _requeue(airflow, start)
            return found if found["stale_pending"] == 0 and found["events"] else None

        dry = wait_until(cleared, timeout=120, what="the scheduler to clear the stale pending rollups")
    finally:
        del airflow.env[REQUEUE_CAP_VARIABLE]  # for a later restart; running processes keep it
    assert "Cleared provisional partition Dag run(s)" in airflow.log_tail("scheduler", lines=100_000)
    assert _pending(airflow, DAG_ID) == []
    assert sorted(e["partition_key"] for e in dry["events"]) == sorted(first_halves)
    assert all(e["refused"] is None and e["asset"] == "it_requeue_hours" for e in dry["events"])
    assert dry["downstream"] == {day: 12 for day in DAYS} and not dry["requeued"]
    text = _cli(
        airflow, "requeue", DAG_ID, "--start", start.isoformat(), "--end", datetime.now(UTC).isoformat()
    )
    assert text.returncode == 0, text.stderr[-3000:]
    assert [line.split()[:2] for line in text.stdout.splitlines()[2:5]] == [[day, "12"] for day in DAYS]
    assert text.stdout.splitlines()[-1] == "dry run: pass --yes to re-queue 36 events into 3 partitions"

    done = _requeue(airflow, start, "--yes")
    assert done["requeued"] and done["downstream"] == {day: 12 for day in DAYS}
    pending = _pending(airflow, DAG_ID)
    assert sorted((p["partition_key"], p["total_received"]) for p in pending) == [(day, 12) for day in DAYS]
    again = _requeue(airflow, start, "--yes")
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
