"""
Keys sent again after their period ran (at-least-once feeds), on a real scheduler: what ran stays
shown, the pending run a key opened again is counted apart, and ``discard`` removes exactly those.

``it_again_day`` rolls UTC hours up into UTC days (``WaitForAll``) and fails on 2026-05-02. A day
is sent whole (24 hours, one REST call each), runs, then gets one of its hours again: Airflow 3.3
opens a pending run beside its Dag run that waits for the whole day again.
"""

from __future__ import annotations

import json
import threading

from airflow_partitions.testing import wait_until
from tests.integration.dags.integration_dags import AGAIN_FAILING_DAY
from tests.integration.test_no_silent_holds import _send, _settle
from tests.integration.test_status import _cli

DAG_ID = "it_again_day"
ASSET = "it_again_hours"
GOOD_DAY = "2026-05-01"
OTHER_DAY = "2026-05-03"  # a period still filling while discard runs: its keys must all be kept


def _hours(day: str) -> list[str]:
    return [f"{day}T{h:02d}" for h in range(24)]


def _view(airflow, **params) -> dict:
    return airflow.request("GET", f"/partitions/api/dags/{DAG_ID}", params=params)


def _pending_keys(airflow) -> dict[str, list[str]]:
    """The Dag's pending runs, read directly: partition key to the keys each holds, sorted."""
    rows = airflow.query(
        "SELECT a.partition_key, l.source_partition_key FROM asset_partition_dag_run a "
        "LEFT JOIN partitioned_asset_key_log l ON l.asset_partition_dag_run_id = a.id "
        "WHERE a.target_dag_id = :dag AND a.created_dag_run_id IS NULL",
        dag=DAG_ID,
    )
    found: dict[str, list[str]] = {}
    for key, source in rows:
        found.setdefault(key, [])
        if source is not None:
            found[key].append(source)
    return {key: sorted(keys) for key, keys in found.items()}


def test_a_key_sent_again_never_hides_what_ran_and_discard_removes_exactly_the_stray_runs(airflow):
    _send(airflow, ASSET, _hours(GOOD_DAY) + _hours(AGAIN_FAILING_DAY))
    runs = airflow.wait_for_runs(DAG_ID, 2, timeout=240, states=("success", "failed"))
    assert {(r["partition_key"], r["state"]) for r in runs} == {
        (GOOD_DAY, "success"),
        (AGAIN_FAILING_DAY, "failed"),
    }

    # Each day gets one hour again (a vendor re-sends a file), another day gets its first 5 hours.
    _send(airflow, ASSET, [f"{GOOD_DAY}T07", f"{AGAIN_FAILING_DAY}T07", *_hours(OTHER_DAY)[:5]])
    _settle(airflow, "again")
    assert _pending_keys(airflow) == {
        GOOD_DAY: [f"{GOOD_DAY}T07"],
        AGAIN_FAILING_DAY: [f"{AGAIN_FAILING_DAY}T07"],
        OTHER_DAY: _hours(OTHER_DAY)[:5],
    }

    view = _view(airflow)
    by_key = {p["partition_key"]: p for p in view["partitions"]}
    assert by_key[GOOD_DAY]["state"] == "success" and by_key[GOOD_DAY]["pending_again"] == "pending"
    assert by_key[AGAIN_FAILING_DAY]["state"] == "failed"  # a failure is never hidden
    assert by_key[AGAIN_FAILING_DAY]["pending_again"] == "pending"  # never "overdue": the day ran
    assert by_key[OTHER_DAY]["state"] == "overdue" and by_key[OTHER_DAY]["pending_again"] is None
    assert view["again"] == 2
    assert view["states"] == {"success": 1, "failed": 1, "overdue": 1}
    [listed] = [d for d in airflow.request("GET", "/partitions/api/dags")["dags"] if d["dag_id"] == DAG_ID]
    assert listed["again"] == 2 and listed["states"] == {"success": 1, "failed": 1, "overdue": 1}
    assert listed["attention"] == "failed"
    # The state filter reads the same: the re-sent day is a success, not pending.
    assert [p["partition_key"] for p in _view(airflow, state="success")["partitions"]] == [GOOD_DAY]

    text = _cli(airflow, "status", DAG_ID, "--all")
    assert text.returncode == 0, text.stderr[-3000:]
    assert "success · 1 key again, pending" in text.stdout and "failed · 1 key again, pending" in text.stdout
    assert f"airflow-partitions discard {DAG_ID}" in text.stdout

    dry = _cli(airflow, "discard", DAG_ID, "--json")
    assert dry.returncode == 0, dry.stderr[-3000:]
    listed = json.loads(dry.stdout)
    assert listed["removed"] is False
    assert [(r["partition_key"], r["received"], r["runs"]) for r in listed["runs"]] == [
        (GOOD_DAY, [f"{GOOD_DAY}T07"], ["success"]),
        (AGAIN_FAILING_DAY, [f"{AGAIN_FAILING_DAY}T07"], ["failed"]),
    ]
    assert all(r["opened_at"] for r in listed["runs"])
    assert len(_pending_keys(airflow)) == 3  # a dry run removes nothing

    # Keys for the other day keep arriving while discard removes the two stray runs.
    later = _hours(OTHER_DAY)[5:15]
    sender = threading.Thread(target=_send, args=(airflow, ASSET, later))
    sender.start()
    done = _cli(airflow, "discard", DAG_ID, "--yes")
    sender.join(timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    selection = "of periods that already have a Dag run"
    assert done.stdout.splitlines()[0] == f"{DAG_ID}: 2 pending partitioned runs {selection}"
    assert "removed 2 pending runs" in done.stdout
    wait_until(
        lambda: _pending_keys(airflow).get(OTHER_DAY) == _hours(OTHER_DAY)[:15],
        timeout=60,
        what="every key of the other day in its pending run",
    )
    assert _pending_keys(airflow) == {OTHER_DAY: _hours(OTHER_DAY)[:15]}
    assert sorted((r["partition_key"], r["state"]) for r in airflow.dag_runs(DAG_ID)) == [
        (GOOD_DAY, "success"),
        (AGAIN_FAILING_DAY, "failed"),
    ]
    audit = [json.loads(extra) for extra in airflow.audit_log("partition-tools discard")]
    assert sorted((a["partition_key"], a["received"]) for a in audit) == [
        (GOOD_DAY, [f"{GOOD_DAY}T07"]),
        (AGAIN_FAILING_DAY, [f"{AGAIN_FAILING_DAY}T07"]),
    ]
    view = _view(airflow)
    assert view["again"] == 0 and view["states"] == {"success": 1, "failed": 1, "overdue": 1}

    again = _cli(airflow, "discard", DAG_ID, "--yes")
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.strip() == f"{DAG_ID}: no pending partitioned run {selection} to remove"


def test_discard_names_an_unknown_dag_and_one_that_is_not_partitioned_with_exit_1(airflow):
    unknown = _cli(airflow, "discard", "it_no_such_dag")
    assert unknown.returncode == 1
    assert "no Dag 'it_no_such_dag' in this deployment's metadata database" in unknown.stderr
    plain = _cli(airflow, "discard", "it_not_partitioned")
    assert plain.returncode == 1
    assert "'it_not_partitioned' is not a partitioned consumer Dag" in plain.stderr
    assert "Traceback" not in unknown.stderr + plain.stderr
