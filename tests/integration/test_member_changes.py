"""
Members that change while days are pending, on a real scheduler: nothing stranded or faked, no flood.

The trial of issue 48, on ``it_region_day_from_variable``: stores report daily
(``s004|2026-12-01``) and each region's day (``north|2026-12-01``) awaits the stores the Airflow
Variable ``it_region_stores`` lists in that region. While days are pending the Variable changes
the way people change it: a store moves from north to south, a member loses its group (a
half-edited JSON), the Variable is not JSON, then empty, and each time it is fixed. Every
region-day must run exactly once, with exactly the stores of its region (worked out here from the
Variable's values), no partition of a lone store must ever open, and the scheduler's log must
stay small. The integration Airflow reads Variables every 5 s and its watch looks every 2 s
(``tests/integration/conftest.py``).
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest

from tests.integration.test_status import _api_cli, _cli
from tests.support.launcher import AirflowError, wait_until

pytestmark = pytest.mark.integration

#: The backends this module runs on (tests/integration/conftest.py; --every-backend: both).
#: The watch and the Variables it reads are the same on either database; its writes'
#: SQL on PostgreSQL is test_repair.py's and test_again.py's (discard, requeue on the Core tables).
BACKENDS = ("sqlite",)


DAG = "it_region_day_from_variable"
ASSET = "it_region_store_days"
VARIABLE = "it_region_stores"
NORTH, SOUTH = ["s001", "s002", "s003", "s004"], ["s005", "s006"]


def _members(north: list[str], south: list[str]) -> list[dict[str, str]]:
    return [{"value": s, "group": "north"} for s in north] + [{"value": s, "group": "south"} for s in south]


def _set(airflow, value) -> None:
    """Set the Variable through the REST API, as a user does; wait until every process has read it."""
    body = {"key": VARIABLE, "value": value if isinstance(value, str) else json.dumps(value)}
    try:
        airflow.request("PATCH", f"/api/v2/variables/{VARIABLE}", body=body)
    except AirflowError:
        airflow.request("POST", "/api/v2/variables", body=body)
    time.sleep(float(airflow.env["AIRFLOW_PARTITIONS_VARIABLE_TTL"]) + 2)


def _send(airflow, day: str, stores: list[str]) -> None:
    for store in stores:  # one key at a time, as a feed sends them
        airflow.create_asset_event(ASSET, partition_key=f"{store}|{day}")


def _logged(airflow, partition: str) -> dict[str, list[str]]:
    """The stores logged for each pending run (``pending``) and fired run (``ran``) of *partition*."""
    rows = airflow.query(
        "SELECT r.created_dag_run_id, l.source_partition_key FROM asset_partition_dag_run r "
        "JOIN partitioned_asset_key_log l ON l.asset_partition_dag_run_id = r.id "
        "WHERE r.target_dag_id = :dag AND r.partition_key = :key",
        dag=DAG,
        key=partition,
    )
    found: dict[str, list[str]] = {"pending": [], "ran": []}
    for fired, key in rows:
        found["ran" if fired else "pending"].append(key.split("|")[0])
    return {kind: sorted(stores) for kind, stores in found.items()}


def _ran(airflow, partition: str) -> dict | None:
    runs = [r for r in airflow.dag_runs(DAG) if r["partition_key"] == partition]
    assert len(runs) <= 1, runs  # never twice
    return runs[0] if runs and runs[0]["state"] in {"success", "failed"} else None


def _text(airflow, path: str) -> str:
    """GET *path* of the api-server with the test's token, as text."""
    request = urllib.request.Request(
        f"{airflow.url}{path}", headers={"Authorization": f"Bearer {airflow._bearer()}"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read().decode()


def _refused(airflow, key: str) -> list[str]:
    return [t for t in airflow.audit_log("failed to map partition_key") if f"'{key}'" in t and DAG in t]


def test_members_that_move_break_and_come_back_strand_no_key_and_fake_no_run(airflow):
    scheduler_log = Path(airflow.home) / "scheduler.log"
    log_before = scheduler_log.stat().st_size
    _set(airflow, _members(NORTH, SOUTH))

    # 2026-11-30: north runs with its four stores (s004 among them); south waits for s006.
    # 2026-12-01: both wait; s004's key is in north's pending run.
    _send(airflow, "2026-11-30", [*NORTH, "s005"])
    wait_until(lambda: _ran(airflow, "north|2026-11-30"), timeout=120, what="north's 2026-11-30")
    _send(airflow, "2026-12-01", ["s001", "s002", "s004", "s005"])
    wait_until(lambda: _logged(airflow, "south|2026-12-01")["pending"], timeout=60, what="south pending")

    # s004 moves to south: its keys follow it. Into south's pending run of 2026-12-01, out of
    # north's; and into south's 2026-11-30, from the run north made with it before the move.
    moved = _members(["s001", "s002", "s003"], ["s004", "s005", "s006"])
    _set(airflow, moved)
    wait_until(
        lambda: _logged(airflow, "south|2026-12-01")["pending"] == ["s004", "s005"],
        timeout=60,
        what="s004's key re-routed to south",
    )
    assert _logged(airflow, "north|2026-12-01")["pending"] == ["s001", "s002"]
    assert _logged(airflow, "south|2026-11-30")["pending"] == ["s004", "s005"]
    assert _logged(airflow, "north|2026-11-30")["ran"] == NORTH  # what it ran with stays told
    [(rerouted, owner), *_] = airflow.query(
        "SELECT extra, owner FROM log WHERE event = 'partition-tools reroute' AND dag_id = :dag ORDER BY id",
        dag=DAG,
    )
    done = json.loads(rerouted)
    assert (done["moved"], done["copied"], done["keys"], owner) == (
        1,  # out of north's pending run of 2026-12-01
        1,  # into south's of 2026-11-30, which awaits it now
        ["s004|2026-11-30", "s004|2026-12-01"],
        "airflow-partitions",
    )

    _send(airflow, "2026-12-01", ["s003", "s006"])
    _send(airflow, "2026-11-30", ["s006"])
    for partition, stores in [
        ("north|2026-12-01", ["s001", "s002", "s003"]),
        ("south|2026-12-01", ["s004", "s005", "s006"]),
        ("south|2026-11-30", ["s004", "s005", "s006"]),
    ]:
        wait_until(lambda p=partition: _ran(airflow, p), timeout=120, what=partition)
        assert _logged(airflow, partition)["ran"] == stores, partition

    # s002 saved without its group: the Variable is broken, said at once and by every face.
    _set(airflow, [{"value": "s002"} if m["value"] == "s002" else m for m in moved])
    _send(airflow, "2026-12-02", ["s001"])
    [refusal] = _refused(airflow, "s001|2026-12-02")
    assert "members ['s002'] have no group while the others have one" in refusal
    _faces_say_broken(airflow, "members ['s002'] have no group")

    _set(airflow, moved)  # fixed: the key refused meanwhile comes back by itself
    wait_until(
        lambda: _logged(airflow, "north|2026-12-02")["pending"] == ["s001"],
        timeout=60,
        what="s001|2026-12-02 queued again",
    )
    assert _faces_say_broken(airflow, None)

    # Not JSON, then empty, while 2026-12-03 is pending; then fixed.
    _send(airflow, "2026-12-03", ["s001", "s004"])
    wait_until(lambda: _logged(airflow, "south|2026-12-03")["pending"], timeout=60, what="south pending")
    _set(airflow, '[{"value": "s001", "group": "north"},')
    _send(airflow, "2026-12-03", ["s002"])
    _faces_say_broken(airflow, "is not JSON")
    _set(airflow, "[]")
    _send(airflow, "2026-12-03", ["s005"])
    assert _refused(airflow, "s002|2026-12-03") and _refused(airflow, "s005|2026-12-03")
    _set(airflow, moved)
    wait_until(
        lambda: (
            _logged(airflow, "north|2026-12-03")["pending"] == ["s001", "s002"]
            and _logged(airflow, "south|2026-12-03")["pending"] == ["s004", "s005"]
        ),
        timeout=60,
        what="the keys refused while broken queued again",
    )
    _send(airflow, "2026-12-02", ["s002", "s003", "s004", "s005", "s006"])
    _send(airflow, "2026-12-03", ["s003", "s006"])

    # Every region-day ran exactly once, with exactly its stores; no lone store's partition opened.
    expected = {
        "north|2026-11-30": NORTH,
        "south|2026-11-30": ["s004", "s005", "s006"],
        **{f"north|{day}": ["s001", "s002", "s003"] for day in ("2026-12-01", "2026-12-02", "2026-12-03")},
        **{f"south|{day}": ["s004", "s005", "s006"] for day in ("2026-12-01", "2026-12-02", "2026-12-03")},
    }
    for partition, stores in expected.items():
        run = wait_until(lambda p=partition: _ran(airflow, p), timeout=120, what=partition)
        assert run["state"] == "success", partition
        assert _logged(airflow, partition) == {"pending": [], "ran": stores}, partition
    opened = {key for (key,) in airflow.query(
        "SELECT DISTINCT partition_key FROM asset_partition_dag_run WHERE target_dag_id = :dag", dag=DAG
    )}  # fmt: skip
    assert opened == set(expected)
    assert sorted(r["partition_key"] for r in airflow.dag_runs(DAG)) == sorted(expected)

    # What each ran with is what its key log holds, never recomputed from today's members: north's
    # 2026-11-30 ran complete with s001 to s004 (s004 counts for south now): 4 of 4.
    state = json.loads(_cli(airflow, "status", DAG, "--all", "--json").stdout)
    by_key = {p["partition_key"]: p for p in state["partitions"]}
    assert {
        k: (p["state"], p["ran_with"]["counted"], p["ran_with"]["awaited"]) for k, p in by_key.items()
    } == {k: ("success", len(stores), len(stores)) for k, stores in expected.items()}
    assert state["members_problems"] == []
    assert scheduler_log.stat().st_size - log_before < 1_000_000


def _faces_say_broken(airflow, problem: str | None) -> bool:
    """Assert that status (database, REST), the view's API and the metrics say it is broken (or not)."""
    from_db = _cli(airflow, "status", DAG, "--json")
    through_api = _api_cli(airflow, "status", DAG, "--json")
    text = _cli(airflow, "status", DAG)
    view = airflow.request("GET", f"/partitions/api/dags/{DAG}")
    metrics = _text(airflow, "/partitions/metrics")
    line = f'airflow_partitions_members_broken{{dag_id="{DAG}",variable="{VARIABLE}"}} 1'
    answers = [json.loads(from_db.stdout), json.loads(through_api.stdout), view]
    if problem is None:
        assert all(a["members_problems"] == [] for a in answers)
        assert line not in metrics and "MEMBERS BROKEN" not in text.stdout
        return True
    for answer in answers:
        [broken] = answer["members_problems"]
        assert broken["variable"] == VARIABLE and problem in broken["problem"], broken
        assert broken["since"] and f"airflow-partitions requeue {DAG} --start" in broken["fix"]
    assert (from_db.returncode, through_api.returncode, text.returncode) == (1, 1, 1)
    assert "MEMBERS BROKEN since" in text.stdout and problem in " ".join(text.stdout.split())
    assert line in metrics
    return True


def test_a_new_expected_within_keeps_the_pending_runs_airflow_clears(airflow):
    # Airflow's scheduler clears a Dag's pending runs whenever its rollup's stored form changes;
    # expected_within says when a partition is late, not what it awaits: the watch queues the
    # cleared keys again, and the day runs once, with all its hours.
    dag, day = "it_expect_day", "2026-12-05"
    _send_hours(airflow, day, range(3))
    wait_until(lambda: _pending_keys(airflow, dag, day) == 3, timeout=60, what="3 hours pending")
    (Path(airflow.home) / "it_expect_hours.json").write_text("2")
    stored = _stored(airflow, dag)
    # The dag-processor parses the file again (every 30 s): a new stored form, and Airflow's
    # scheduler clears the pending run.
    wait_until(lambda: _stored(airflow, dag) != stored, timeout=180, what=f"a new stored form of {dag}")
    wait_until(
        lambda: airflow.query(
            "SELECT extra FROM log WHERE event = 'partition-tools requeue' AND dag_id = :dag", dag=dag
        ),
        timeout=120,
        what="the cleared keys queued again",
    )
    assert _pending_keys(airflow, dag, day) == 3
    _send_hours(airflow, day, range(3, 24))
    run = wait_until(lambda: _ran_in(airflow, dag, day), timeout=120, what=f"{dag} {day}")
    assert run["state"] == "success"
    [(keys,)] = airflow.query(
        "SELECT count(DISTINCT l.source_partition_key) FROM asset_partition_dag_run r JOIN "
        "partitioned_asset_key_log l ON l.asset_partition_dag_run_id = r.id "
        "WHERE r.target_dag_id = :dag AND r.partition_key = :key AND r.created_dag_run_id IS NOT NULL",
        dag=dag,
        key=day,
    )
    assert keys == 24
    assert len([r for r in airflow.dag_runs(dag) if r["partition_key"] == day]) == 1


def _send_hours(airflow, day: str, hours: range) -> None:
    for hour in hours:
        airflow.create_asset_event("it_expect_hours", partition_key=f"{day}T{hour:02d}")


def _pending_keys(airflow, dag: str, key: str) -> int:
    [(count,)] = airflow.query(
        "SELECT count(*) FROM asset_partition_dag_run r JOIN partitioned_asset_key_log l "
        "ON l.asset_partition_dag_run_id = r.id "
        "WHERE r.target_dag_id = :dag AND r.partition_key = :key AND r.created_dag_run_id IS NULL",
        dag=dag,
        key=key,
    )
    return count


def _stored(airflow, dag: str) -> set[str]:
    return {h for (h,) in airflow.query("SELECT dag_hash FROM serialized_dag WHERE dag_id = :dag", dag=dag)}


def _ran_in(airflow, dag: str, key: str) -> dict | None:
    runs = [r for r in airflow.dag_runs(dag) if r["partition_key"] == key]
    return runs[0] if runs and runs[0]["state"] in {"success", "failed"} else None
