"""
The partition state reader (``airflow_partitions.tools.state``) against the real scheduler's
metadata database: what waits, what is missing, what will never count, and starvation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from tests.integration.test_no_silent_holds import _send, _settle
from tests.support.launcher import wait_until


def _cli(airflow, *args: str) -> subprocess.CompletedProcess:
    """Run ``airflow-partitions ARGS`` against the deployment's database, as an operator would."""
    return subprocess.run(
        [sys.executable, "-m", "airflow_partitions.tools.cli", *args],
        env=airflow.env,
        capture_output=True,
        text=True,
        timeout=120,
    )


#: A metadata database URL no SQLAlchemy dialect reads: a command that opened the database, or
#: imported Airflow, would fail; what a machine outside a managed Airflow (MWAA, Composer,
#: Astronomer) has.
UNREACHABLE = "nosuchdialect://nobody@127.0.0.1:1/none"


def _api_cli(airflow, *args: str, token: str | None = None) -> subprocess.CompletedProcess:
    """Run ``airflow-partitions ARGS --api-url`` through the api-server, the metadata database unreachable."""
    return subprocess.run(
        [sys.executable, "-m", "airflow_partitions.tools.cli", *args, "--api-url", airflow.url],
        env={
            **airflow.env,
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": UNREACHABLE,
            "AIRFLOW_PARTITIONS_API_TOKEN": token
            or airflow.request("GET", "/auth/token", auth=False)["access_token"],
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def _state(airflow, dag_id: str, key: str | None = None) -> dict:
    """``airflow-partitions status DAG [--key KEY] --json``, parsed."""
    done = _cli(airflow, "status", dag_id, *(["--key", key] if key else []), "--json")
    assert done.returncode in (0, 1) and done.stdout, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_rollup_with_23_of_24_hours_shows_the_missing_hour(airflow):
    day = "2026-04-01"
    _send(airflow, "it_status_hours", [f"{day}T{h:02d}:00:00Z" for h in range(24) if h != 17])
    _settle(airflow, "status-23")
    state = _state(airflow, "it_status_day", day)
    [partition] = state["partitions"]
    assert (partition["partition_key"], partition["state"], partition["runs"]) == (day, "overdue", [])
    [progress] = partition["progress"]
    assert progress["asset"] == "it_status_hours"
    assert progress["missing"] == [f"{day}T17"]
    assert len(progress["expected"]) == 24 and len(progress["received"]) == 23
    assert progress["never_counting"] == []
    assert partition["queue_position"] >= 1
    text = _cli(airflow, "status", "it_status_day", "--key", day)
    assert text.returncode == 0, text.stderr[-3000:]
    assert f"{day}" in text.stdout and "23/24" in text.stdout and f"{day}T17" in text.stdout

    _send(airflow, "it_status_hours", [f"{day}T17"])
    airflow.wait_for_runs("it_status_day", 1, timeout=60)
    [partition] = _state(airflow, "it_status_day", day)["partitions"]
    assert partition["state"] in {"queued", "running", "success"}
    assert partition["progress"] == [] and len(partition["runs"]) == 1


def test_a_key_refused_on_arrival_shows_with_its_message(airflow):
    airflow.create_asset_event("it_status_hours", partition_key="2026-04-02")  # a day: hours awaited

    def refused() -> dict | None:
        state = _state(airflow, "it_status_day")
        return state if state["refusals"] else None

    state = wait_until(refused, timeout=30, what="the refusal in the state")
    assert any(
        "'2026-04-02' would never count towards '2026-04-02'" in r["message"] for r in state["refusals"]
    )


def test_a_wrongly_spelled_key_in_cores_rollup_shows_as_never_counting(airflow):
    airflow.create_asset_event("it_core_hours", partition_key="2026-04-03T5")  # core awaits "…T05"
    _settle(airflow, "core-spelling")
    [partition] = _state(airflow, "it_core_day_of_hours", "2026-04-03")["partitions"]
    assert partition["state"] == "never counting"
    [progress] = partition["progress"]
    why = "not one of the awaited keys (compared by spelling)"
    assert progress["never_counting"] == [["2026-04-03T5", why]]
    assert len(progress["missing"]) == 24


def _backfill(airflow, *, create: bool) -> dict:
    """``airflow-partitions backfill --missing it_backfill_daily`` over 2026-03-01 … 07 as JSON, parsed."""
    args = ["backfill", "--missing", "it_backfill_daily", "--start", "2026-03-01", "--end", "2026-03-07"]
    done = _cli(airflow, *args, *(["--yes"] if create else []), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_backfill_missing_over_a_week_with_two_failed_days_runs_exactly_those_two_again(airflow):
    days = [f"2026-03-{d:02d}" for d in range(1, 8)]
    for day in days:
        airflow.trigger("it_backfill_daily", partition_key=day)
    runs = airflow.wait_for_runs("it_backfill_daily", 7, timeout=240, states=("success", "failed"))
    failed = {r["partition_key"]: r["dag_run_id"] for r in runs if r["state"] != "success"}
    assert {"2026-03-03", "2026-03-05"} <= set(failed)  # the Dag fails those two days

    text = _cli(
        airflow, "backfill", "--missing", "it_backfill_daily", "--start", "2026-03-01", "--end", "2026-03-07"
    )
    assert text.returncode == 0, text.stderr[-3000:]
    lines = text.stdout.splitlines()
    n = len(failed)
    assert lines[0] == (
        f"it_backfill_daily: {n} partitions failed or missing, from 2026-03-01 to 2026-03-07: {n} failed"
    )
    for day, run_id in failed.items():
        at = lines.index(f"  {day:<28}{'failed':<16}".rstrip())
        assert lines[at + 1].split() == ["re-run", run_id, "(its", "latest", "run", "failed)"]
    assert lines[-2:] == [f"runs to start: {n} ({n} re-run)", "dry run: pass --yes to start them"]
    dry = _backfill(airflow, create=False)
    assert {p["partition_key"]: [s["run_id"] for s in p["steps"]] for p in dry["partitions"]} == {
        day: [run_id] for day, run_id in failed.items()
    }
    assert (
        dry["backfill"] is None and len(airflow.dag_runs("it_backfill_daily")) == 7
    )  # a dry run changes nothing

    done = _backfill(airflow, create=True)
    assert sorted(r["run_id"] for r in done["backfill"]["runs"]) == sorted(failed.values())
    cleared = dict(
        airflow.query("SELECT run_id, clear_number FROM dag_run WHERE dag_id = 'it_backfill_daily'")
    )
    assert {run_id for run_id, n in cleared.items() if n} == set(failed.values())  # run again, no new run
    assert len(airflow.dag_runs("it_backfill_daily")) == 7


def test_backfill_missing_over_a_range_ending_next_week_creates_runs_only_for_ended_days(airflow):
    # UTC days, no lag: a day is due at its end. From three days ago to a week ahead, only the three
    # days before today have ended; today and the next seven are left out (worked out from the date).
    today = datetime.now(UTC).date()
    start, end = today - timedelta(days=3), today + timedelta(days=7)
    ended = [(start + timedelta(days=n)).isoformat() for n in range(3)]
    args = [
        "backfill",
        "--missing",
        "it_backfill_open",
        "--start",
        start.isoformat(),
        "--end",
        end.isoformat(),
    ]
    text = _cli(airflow, *args)
    assert text.returncode == 0, text.stderr[-3000:]
    lines = text.stdout.splitlines()
    assert lines[0] == f"it_backfill_open: 3 partitions failed or missing, from {start} to {end}: 3 missing"
    assert lines[2:5] == [f"  {day:<28}{'missing':<16}run (no run of it yet)" for day in ended]
    assert "  left out 8 periods not due yet (not ended): --include-open plans them" in lines
    done = _cli(airflow, *args, "--yes", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout)
    assert [p["partition_key"] for p in answer["partitions"]] == ended
    assert answer["left_out_open"] == 8 and len(answer["backfill"]["runs"]) == 3
    created = {r["partition_key"]: r["dag_run_id"] for r in airflow.dag_runs("it_backfill_open")}
    name = answer["backfill"]["name"]
    assert created == {day: f"{name}__{n}" for n, day in enumerate(ended, 1)}
