"""
No silent holds, through the real scheduler (SQLite and PostgreSQL): every key one of our rollups
accepts is counted, or refused out loud, and no pending partitioned run is left that can never
complete.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.integration.dags.integration_dags import REPLAY_SERIES
from tests.support.launcher import wait_until

#: The backends this module runs on (tests/integration/conftest.py; --every-backend: both).
#: The oldest Airflow's CI pass runs this module on SQLite (scripts/dev.sh).
BACKENDS = ("postgresql",)


REFUSED = "failed to map partition_key"


def _send(airflow, asset: str, keys: list[str]) -> None:
    """Post one asset event per REST call for each key, in order (one client: SQLite has one writer)."""
    for key in keys:
        airflow.create_asset_event(asset, partition_key=key)


def _pending(airflow, dag_id: str) -> list[dict]:
    """The pending partitioned Dag runs (rollups still waiting) of *dag_id*."""
    return airflow.request(
        "GET", "/ui/partitioned_dag_runs", params={"dag_id": dag_id, "has_created_dag_run_id": False}
    )["partitioned_dag_runs"]


def _refusals(airflow, text: str) -> list[str]:
    """The texts of the audit rows of keys refused on arrival that contain *text*."""
    return [extra for extra in airflow.audit_log(REFUSED) if text in extra]


def _settle(airflow, name: str) -> None:
    """Wait until the scheduler has evaluated every older pending rollup (a sentinel run)."""
    airflow.create_asset_event("it_regional_sales", partition_key=f"eu::sentinel-{name}")
    wait_until(
        lambda: any(r["partition_key"] == f"sentinel-{name}" for r in airflow.dag_runs("it_prefix_consumer")),
        timeout=60,
        what=f"the sentinel run {name}",
    )


def test_hours_spelled_otherwise_fire_their_days_rollup_exactly_once(airflow):
    day = "2026-03-10"
    spellings = (
        [f"{day}T{h:02d}:00:00" for h in range(8)]
        + [f"{day}T{h:02d}:00:00Z" for h in range(8, 14)]
        + [f"{day}T{h:02d}:00+00:00" for h in range(14, 20)]
        + ["2026-03-10T05:30:00z"]  # hour 05 again, another spelling: counted once
        + [f"20260310T{h:02d}" for h in range(20, 24)]
    )
    _send(airflow, "it_spelled_hours", spellings[:-1])
    _settle(airflow, "spelled-23")
    assert airflow.dag_runs("it_day_of_spelled_hours") == []  # 23 of 24 hours: waits

    _send(airflow, "it_spelled_hours", spellings[-1:])
    [run] = airflow.wait_for_runs("it_day_of_spelled_hours", 1, timeout=60)
    assert run["partition_key"] == day
    _settle(airflow, "spelled-done")
    assert [r["partition_key"] for r in airflow.dag_runs("it_day_of_spelled_hours")] == [day]
    assert _pending(airflow, "it_day_of_spelled_hours") == []


def test_a_key_naming_no_member_is_refused_out_loud_and_opens_no_pending_run(airflow):
    airflow.create_asset_event("it_spelled_hours", partition_key="2026-03-12")  # a day, hours awaited
    wait_until(
        lambda: _refusals(airflow, "'2026-03-12' would never count towards '2026-03-12'"),
        timeout=30,
        what="the audit row of the refused key",
    )
    assert [p["partition_key"] for p in _pending(airflow, "it_day_of_spelled_hours")] == []


def test_an_unpadded_key_under_input_format_counts_as_the_day_it_names(airflow):
    keys = [f"2026/2/{d}" for d in range(1, 10)] + [f"2026/02/{d:02d}" for d in range(10, 29)]
    _send(airflow, "it_formatted_days", keys)
    [run] = airflow.wait_for_runs("it_month_of_formatted_days", 1, timeout=60)
    assert run["partition_key"] == "2026-02"
    assert _pending(airflow, "it_month_of_formatted_days") == []


def _new_york_day_hours(day: str) -> list[str]:
    """The UTC hour keys of the New York day *day* (23, 24 or 25), worked out from its midnights."""
    from zoneinfo import ZoneInfo

    start = datetime.fromisoformat(day).replace(tzinfo=ZoneInfo("America/New_York"))
    end = (start + timedelta(days=1)).replace(tzinfo=ZoneInfo("America/New_York"))
    hour, hours = start.astimezone(UTC), []
    while hour < end.astimezone(UTC):
        hours.append(hour.strftime("%Y-%m-%dT%H"))
        hour += timedelta(hours=1)
    return hours


def test_a_replay_of_history_runs_each_day_once_complete_and_late_keys_rerun_their_day(airflow):
    days = [f"2026-03-{d:02d}" for d in range(1, 11)]  # New York days, DST starts on the 8th
    hours = {day: _new_york_day_hours(day) for day in days}
    assert [len(hours[d]) for d in days] == [24] * 7 + [23] + [24] * 2
    dropped = "c|" + hours["2026-03-05"][7]  # one hour that never comes: c's 5th runs with 23
    keys = [f"{s}|{h}" for day in days for h in hours[day] for s in REPLAY_SERIES]
    keys.remove(dropped)
    _send(airflow, "it_series_hours", keys)  # one event per REST call, a replay

    runs = airflow.wait_for_runs("it_series_day_by_deadline", 3 * len(days), timeout=300)
    assert sorted(r["partition_key"] for r in runs) == sorted(f"{s}|{d}" for s in REPLAY_SERIES for d in days)
    for run in runs:
        seen = airflow.xcom("it_series_day_by_deadline", run["dag_run_id"], "count_keys")
        day = run["partition_key"].split("|")[1]
        expected = len(hours[day]) - (run["partition_key"] == "c|2026-03-05")
        assert (seen["events"], len(seen["missing"])) == (expected, len(hours[day]) - expected), seen
    assert _pending(airflow, "it_series_day_by_deadline") == []
    assert _refusals(airflow, "|2026-03-") == []

    # A late key: its day already ran. It reruns the day (a refresh) once settled, holding nothing.
    airflow.create_asset_event("it_series_hours", partition_key="a|" + hours["2026-03-02"][3])
    runs = airflow.wait_for_runs("it_series_day_by_deadline", 3 * len(days) + 1, timeout=120)
    late = [r for r in runs if r["partition_key"] == "a|2026-03-02"]
    assert len(late) == 2
    seen = airflow.xcom("it_series_day_by_deadline", late[-1]["dag_run_id"], "count_keys")
    assert (seen["events"], len(seen["missing"])) == (1, 23)
    assert _pending(airflow, "it_series_day_by_deadline") == []


def test_core_rollup_with_a_completion_deadline_fails_alone(airflow):
    errors = airflow.request("GET", "/api/v2/importErrors")["import_errors"]
    assert [e["filename"].rsplit("/", 1)[-1] for e in errors] == ["it_core_rollup_with_deadline.py"]
    assert "CompletionDeadline" in errors[0]["stack_trace"]
    details = airflow.request("GET", "/api/v2/dags/it_day_of_spelled_hours/details")
    assert (details["is_stale"], details["is_paused"]) == (False, False)
