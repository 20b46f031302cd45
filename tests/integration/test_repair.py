"""
``airflow-partitions backfill`` repairs what the state shows, on a real scheduler (``it_repair.py``).

A chain fed through the REST API: hours of January 2026 into days (``it_repair_day``: two days
fail, two succeed and then get an hour again, one misses an hour, one misses four, one is whole)
and into a month (``it_repair_month``); beside it, the same hours under a deadline
(``it_repair_day_by_deadline``: the short days run incomplete). The plans say exactly what each
partition needs (worked out here from the days sent); the failed and stale days are run again,
never more than two at once (read from ``dag_run`` while they run); a backfill cancelled starts no
more runs; every write is in the audit log under its caller's name. A week fed by a producer Dag
completes through a backfill of the week.
"""

from __future__ import annotations

import getpass
import json
import time
from datetime import date, timedelta

from tests.integration.dags.it_repair import FAILING
from tests.integration.test_no_silent_holds import _send
from tests.integration.test_status import _api_cli, _cli
from tests.support.launcher import AirflowError, wait_until

HOURS = "it_repair_hours"
DAY = "it_repair_day"
WHOLE, FAILED, STALE = "2026-01-05", ("2026-01-06", "2026-01-07"), ("2026-01-08", "2026-01-09")
#: A day short of one hour (17), and a day short of four (04 to 07).
SHORT_ONE, SHORT_FOUR = "2026-01-12", "2026-01-13"
LOST_ONE, LOST_FOUR = [f"{SHORT_ONE}T17"], [f"{SHORT_FOUR}T{h:02d}" for h in range(4, 8)]
#: Whoever the REST API's token names (the simple auth manager's user when every user is admin).
API_USER = "Anonymous"


def _hours(day: str) -> list[str]:
    return [f"{day}T{h:02d}" for h in range(24)]


def _json(done) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _set_failing(airflow, days: list[str]) -> None:
    body = {"key": FAILING, "value": json.dumps(days)}
    try:
        airflow.request("PATCH", f"/api/v2/variables/{FAILING}", body=body)
    except AirflowError:
        airflow.request("POST", "/api/v2/variables", body=body)


def _steps(plan: dict) -> dict[str, set[tuple]]:
    """Each planned partition's steps: ``(action, Dag, key, asset, keys)``."""
    return {
        p["partition_key"]: {
            (s["action"], s["dag_id"], s["partition_key"], s["asset"], tuple(s["keys"])) for s in p["steps"]
        }
        for p in plan["partitions"]
    }


def _run_ids(airflow, dag_id: str) -> dict[str, str]:
    return {r["partition_key"]: r["dag_run_id"] for r in airflow.dag_runs(dag_id)}


def _feed_the_chain(airflow) -> None:
    """Send the days' hours, let the days run, then send one hour of each stale day again."""
    _set_failing(airflow, list(FAILED))
    whole = [WHOLE, *FAILED, *STALE]
    _send(airflow, HOURS, [h for day in whole for h in _hours(day)])
    _send(airflow, HOURS, [h for h in _hours(SHORT_ONE) if h not in LOST_ONE])
    _send(airflow, HOURS, [h for h in _hours(SHORT_FOUR) if h not in LOST_FOUR])
    runs = airflow.wait_for_runs(DAY, 5, timeout=300, states=("success", "failed"))
    assert sorted(r["partition_key"] for r in runs if r["state"] == "failed") == list(FAILED)
    airflow.wait_for_runs("it_repair_day_by_deadline", 7, timeout=180)
    _send(airflow, HOURS, [f"{day}T05" for day in STALE])

    def stale() -> bool:
        state = _json(_cli(airflow, "status", DAY, "--json", "--all"))
        return {p["partition_key"] for p in state["partitions"] if p["state"] == "stale"} == set(STALE)

    wait_until(stale, timeout=60, what="the days sent again to show stale")


def _check_the_plans(airflow, runs: dict[str, str]) -> None:
    """The plans of the days, the days under a deadline and the month: exactly what each needs."""
    plan = _json(_cli(airflow, "backfill", DAY, "--json"))
    assert plan["states"] == {"failed": 2, "stale": 2, "overdue": 2}
    assert _steps(plan) == {
        **{day: {("re-run", DAY, day, None, ())} for day in (*FAILED, *STALE)},
        SHORT_ONE: {("send", DAY, SHORT_ONE, HOURS, tuple(LOST_ONE))},
        SHORT_FOUR: {("send", DAY, SHORT_FOUR, HOURS, tuple(LOST_FOUR))},
    }
    reruns = {
        p["partition_key"]: p["steps"][0]["run_id"] for p in plan["partitions"] if p["state"] != "overdue"
    }
    assert reruns == {day: runs[day] for day in (*FAILED, *STALE)}
    [feed] = plan["feeds"]
    assert feed["keys"] == LOST_ONE + LOST_FOUR
    asset_id = airflow.asset_id(HOURS)
    assert feed["events"] == [{"asset_id": asset_id, "partition_key": k, "extra": {}} for k in feed["keys"]]

    deadline = _json(
        _cli(airflow, "backfill", "it_repair_day_by_deadline", "--state", "ran incomplete", "--json")
    )
    assert {p["partition_key"]: p["steps"][0]["why"] for p in deadline["partitions"]} == {
        SHORT_ONE: "its runs ran without 1 of its 24 upstream keys",
        SHORT_FOUR: "its runs ran without 4 of its 24 upstream keys",
    }

    month = _json(_cli(airflow, "backfill", "it_repair_month", "--json"))
    [(key, steps)] = _steps(month).items()
    january = [(date(2026, 1, 1) + timedelta(days=n)).isoformat() for n in range(31)]
    counted = {WHOLE, *STALE}
    never_opened = [d for d in january if d not in {*counted, *FAILED, SHORT_ONE, SHORT_FOUR}]
    assert (key, month["partitions"][0]["state"]) == ("2026-01", "overdue")
    assert steps == {
        *{("re-run", DAY, day, None, ()) for day in FAILED},
        ("send", DAY, SHORT_ONE, HOURS, tuple(LOST_ONE)),
        ("send", DAY, SHORT_FOUR, HOURS, tuple(LOST_FOUR)),
        *{("send", DAY, day, HOURS, tuple(_hours(day))) for day in never_opened},
    }


def test_a_rest_fed_chain_is_planned_and_its_failed_and_stale_days_run_again_two_at_a_time(airflow):
    _feed_the_chain(airflow)
    runs = _run_ids(airflow, DAY)
    _check_the_plans(airflow, runs)
    untouched = {key: run_id for key, run_id in runs.items() if key not in {*FAILED, *STALE}}
    cleared_before = dict(airflow.query("SELECT run_id, clear_number FROM dag_run WHERE dag_id = :d", d=DAY))

    _set_failing(airflow, [])
    done = _json(
        _cli(
            airflow,
            "backfill",
            DAY,
            "--state",
            "failed",
            "--state",
            "stale",
            "--max-active",
            "2",
            "--yes",
            "--json",
        )
    )
    backfill = done["backfill"]
    mine = sorted(runs[day] for day in (*FAILED, *STALE))
    assert sorted(r["run_id"] for r in backfill["runs"]) == mine and backfill["max_active"] == 2
    most, seen = 0, set()
    deadline = time.monotonic() + 240
    while True:  # dag_run while the backfill runs: its runs queued or running, never more than 2
        every = airflow.query("SELECT run_id, state FROM dag_run WHERE dag_id = :d", d=DAY)
        states = {run_id: state for run_id, state in every if run_id in mine}
        active = [r for r, s in states.items() if s in ("queued", "running")]
        most = max(most, len(active))
        seen |= set(active)
        if set(seen) == set(mine) and not active and all(s == "success" for s in states.values()):
            break
        assert time.monotonic() < deadline, (states, most)
        time.sleep(0.2)
    assert most == 2
    cleared = dict(airflow.query("SELECT run_id, clear_number FROM dag_run WHERE dag_id = :d", d=DAY))
    assert {r for r, n in cleared.items() if n != cleared_before.get(r)} == set(mine)  # exactly those
    assert all(cleared[r] == cleared_before[r] for r in untouched.values())
    state = _json(_cli(airflow, "status", DAY, "--json", "--all"))
    shown = {p["partition_key"]: p["state"] for p in state["partitions"]}
    assert all(shown[day] == "success" for day in (*FAILED, *STALE)), shown

    name = backfill["name"]
    wait_until(
        lambda: _state_of(_json(_cli(airflow, "backfill", "--list", "--json")), name) == "done",
        timeout=60,
        what=f"{name} done",
    )
    owners = airflow.query(
        "SELECT event, owner FROM log WHERE event LIKE 'partition-tools backfill%' AND extra LIKE :like "
        "OR id = :id ORDER BY id",
        like=f'%"backfill": {name.removeprefix("backfill-")}%',
        id=int(name.removeprefix("backfill-")),
    )
    assert owners[0] == ("partition-tools backfill", getpass.getuser())
    assert {event for event, _ in owners} == {
        "partition-tools backfill",
        "partition-tools backfill started",
        "partition-tools backfill done",
    }
    assert {owner for _, owner in owners} == {getpass.getuser()}

    # A backfill cancelled through the REST API starts no more runs.
    again = _json(
        _api_cli(
            airflow,
            "backfill",
            DAY,
            "--key",
            STALE[0],
            "--key",
            STALE[1],
            "--state",
            "success",
            "--max-active",
            "1",
            "--yes",
            "--json",
        )
    )
    cancelled = again["backfill"]["name"]
    told = _json(_api_cli(airflow, "backfill", "--cancel", cancelled, "--json"))["backfills"][0]
    first, second = (runs[day] for day in STALE)
    time.sleep(3 * float(airflow.env["AIRFLOW_PARTITIONS_WATCH_INTERVAL"]) + 6)
    listed = _json(_api_cli(airflow, "backfill", "--list", DAY, "--json"))["backfills"][0]
    assert (listed["name"], listed["state"]) == (cancelled, "cancelled")
    assert [r["state"] for r in listed["runs"]][1] is None  # the second never started
    after = dict(airflow.query("SELECT run_id, clear_number FROM dag_run WHERE dag_id = :d", d=DAY))
    assert after[second] == cleared[second] and after[first] == cleared[first] + 1
    [(owner, extra)] = [
        (owner, json.loads(extra))
        for owner, extra in airflow.query(
            "SELECT owner, extra FROM log WHERE event = 'partition-tools backfill cancel'"
        )
        if json.loads(extra)["backfill"] == int(cancelled.removeprefix("backfill-"))
    ]
    assert owner == API_USER
    # It records the runs it failed (still queued when it wrote), as it said.
    assert [again["backfill"]["runs"][i]["run_id"] for i in extra["failed"]] == told["cancel_failed"]


def test_a_producer_fed_week_completes_through_a_backfill_of_the_week(airflow):
    week = [(date(2026, 6, 8) + timedelta(days=n)).isoformat() for n in range(7)]  # Monday to Sunday
    for day in week[:5]:
        airflow.trigger("it_repair_day_producer", partition_key=day)
    airflow.wait_for_runs("it_repair_day_producer", 5, timeout=180)
    plan = _json(_cli(airflow, "backfill", "it_repair_week", "--json"))
    assert _steps(plan) == {week[0]: {("run", "it_repair_day_producer", day, None, ()) for day in week[5:]}}
    done = _json(_cli(airflow, "backfill", "it_repair_week", "--yes", "--json"))
    assert [r["partition_key"] for r in done["backfill"]["runs"]] == week[5:]
    [run] = airflow.wait_for_runs("it_repair_week", 1, timeout=180)
    assert run["partition_key"] == week[0]
    produced = {r["partition_key"]: r["dag_run_id"] for r in airflow.dag_runs("it_repair_day_producer")}
    assert [produced[day] for day in week[5:]] == [f"{done['backfill']['name']}__{n}" for n in (1, 2)]


def _state_of(listed: dict, name: str) -> str | None:
    """The state of the backfill *name* in ``backfill --list --json`` (other tests' backfills too)."""
    return next((b["state"] for b in listed["backfills"] if b["name"] == name), None)
