"""Our classes through the real Airflow scheduler, dag-processor and api-server."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
from datetime import UTC, date, datetime, timedelta

import pytest

from tests.support.launcher import AirflowError, wait_until

pytestmark = pytest.mark.integration


def _march_2026_weekdays() -> list[str]:
    # Worked out from the calendar, not from BusinessDayWindow: 2026-03-01 is a Sunday.
    days = [date(2026, 3, 1) + timedelta(days=i) for i in range(31)]
    return [d.isoformat() for d in days if d.isoweekday() <= 5]


def _run_with_key(airflow, dag_id: str, key: str):
    return next((r for r in airflow.dag_runs(dag_id) if r["partition_key"] == key), None)


def _let_the_scheduler_evaluate_pending_rollups(airflow, name: str) -> None:
    """
    #: The backends this module runs on (tests/integration/conftest.py; --every-backend: both).
    #: The oldest Airflow's CI pass runs this module on SQLite (scripts/dev.sh).
    BACKENDS = ("postgresql",)


        Send a key to another consumer and wait for its run.

        Once that run exists, the scheduler has evaluated every older pending rollup with all the
        keys sent before it in view (pending partition runs are evaluated oldest first, each tick):
        a rollup still without a run was held, not merely not yet looked at. No fixed sleep.
    """
    airflow.create_asset_event("it_regional_sales", partition_key=f"eu::sentinel-{name}")
    wait_until(
        lambda: _run_with_key(airflow, "it_prefix_consumer", f"sentinel-{name}"),
        timeout=60,
        what=f"the sentinel run {name}",
    )


def test_prefix_strip_consumer_runs_with_the_stripped_key(airflow):
    airflow.trigger("it_prefix_producer", partition_key="eu::daily-sales")

    run = wait_until(
        lambda: _run_with_key(airflow, "it_prefix_consumer", "daily-sales"),
        timeout=60,
        what="the consumer run for daily-sales",
    )
    done = wait_until(
        lambda: (
            (r := _run_with_key(airflow, "it_prefix_consumer", "daily-sales"))["state"] == "success" and r
        ),
        timeout=60,
        what="the consumer run to succeed",
    )
    assert run["dag_run_id"] == done["dag_run_id"]
    seen = airflow.xcom("it_prefix_consumer", done["dag_run_id"], "record_partition")
    assert seen["partition_key"] == "daily-sales"


def test_unmappable_key_is_logged_and_the_next_key_still_runs(airflow):
    airflow.create_asset_event("it_regional_sales", partition_key="eu::")
    airflow.create_asset_event("it_regional_sales", partition_key="eu::after-the-bad-one")

    wait_until(
        lambda: _run_with_key(airflow, "it_prefix_consumer", "after-the-bad-one"),
        timeout=60,
        what="the run for the valid key sent after the bad one",
    )
    texts = airflow.audit_log("failed to map partition_key")
    assert any("'eu::'" in text and "PrefixStripMapper" in text for text in texts), texts
    assert _run_with_key(airflow, "it_prefix_consumer", "") is None
    assert all(r["partition_key"] for r in airflow.dag_runs("it_prefix_consumer"))


def test_business_day_rollup_fires_once_after_the_last_weekday(airflow):
    weekdays = _march_2026_weekdays()
    assert len(weekdays) == 22
    for key in [*weekdays[:-1], "2026-03-07", "2026-03-08"]:  # 21 weekdays and a weekend
        airflow.create_asset_event("it_daily_sales", partition_key=key)

    pending = airflow.request("GET", "/ui/partitioned_dag_runs", params={"dag_id": "it_business_month"})
    [apdr] = pending["partitioned_dag_runs"]
    assert (apdr["partition_key"], apdr["total_required"], apdr["total_received"]) == ("2026-03", 22, 21)
    # The weekend's keys were refused when they arrived, out loud: one audit row each.
    refused = [
        e
        for e in airflow.audit_log("failed to map partition_key")
        if "would never count towards '2026-03'" in e
    ]
    assert sorted(k for k in ("2026-03-07", "2026-03-08") for text in refused if f"'{k}'" in text) == [
        "2026-03-07",
        "2026-03-08",
    ], refused

    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-21-weekdays")
    assert airflow.dag_runs("it_business_month") == []

    airflow.create_asset_event("it_daily_sales", partition_key=weekdays[-1])
    [run] = airflow.wait_for_runs("it_business_month", 1, timeout=60)
    assert run["partition_key"] == "2026-03"
    assert run["partition_date"] == "2026-03-01T00:00:00Z"
    assert (
        airflow.xcom("it_business_month", run["dag_run_id"], "record_partition")["partition_key"] == "2026-03"
    )


def test_scheduled_runtime_partition_timetable_runs_and_emits_each_added_key(airflow):
    details = airflow.request("GET", "/api/v2/dags/it_runtime_producer/details")
    assert details["timetable_summary"] == "0 * * * *"

    def first_scheduled_success():
        runs = [r for r in airflow.dag_runs("it_runtime_producer") if r["run_type"] == "scheduled"]
        return next((r for r in runs if r["state"] == "success"), None)

    run = wait_until(first_scheduled_success, timeout=120, what="a scheduled run to succeed")
    keys = airflow.xcom("it_runtime_producer", run["dag_run_id"], "produce")
    events = airflow.request(
        "GET",
        "/api/v2/assets/events",
        params={"source_dag_id": "it_runtime_producer", "source_run_id": run["dag_run_id"]},
    )["asset_events"]
    assert sorted(e["partition_key"] for e in events) == sorted(keys)
    assert len(events) == 2
    assert {k.split("::")[0] for k in keys} == {"eu", "us"}
    # ... and the consumer of the eu namespace runs for its key.
    eu_key = next(k for k in keys if k.startswith("eu::")).removeprefix("eu::")
    consumer_run = wait_until(
        lambda: _run_with_key(airflow, "it_runtime_consumer", eu_key), timeout=60, what="the consumer run"
    )
    assert consumer_run["partition_key"] == eu_key


def test_new_york_day_on_dst_start_fires_once_after_its_23rd_utc_hour(airflow):
    # US DST starts on 2026-03-08 at 02:00 EST (07:00 UTC): the New York day runs from
    # 05:00 UTC that day to 04:00 UTC the next, 23 real hours, written as UTC hour keys.
    hours = [f"2026-03-08T{h:02d}" for h in range(5, 24)] + [f"2026-03-09T{h:02d}" for h in range(4)]
    assert len(hours) == 23
    airflow.create_asset_event("it_utc_hours", partition_key="2026-03-08T04")  # 23:00 EST, 7 March
    for key in hours[:-1]:
        airflow.create_asset_event("it_utc_hours", partition_key=key)
    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-22-hours")
    assert airflow.dag_runs("it_new_york_day_from_utc_hours") == []

    airflow.create_asset_event("it_utc_hours", partition_key=hours[-1])
    [run] = airflow.wait_for_runs("it_new_york_day_from_utc_hours", 1, timeout=60)
    assert run["partition_key"] == "2026-03-08"
    assert run["partition_date"] == "2026-03-08T05:00:00Z"  # local midnight, EST
    pending = airflow.request(
        "GET", "/ui/partitioned_dag_runs", params={"dag_id": "it_new_york_day_from_utc_hours"}
    )["partitioned_dag_runs"]
    assert sorted(p["partition_key"] for p in pending) == ["2026-03-07", "2026-03-08"]


def test_quarter_hour_slots_roll_up_into_each_complete_hour(airflow):
    for key in ["2026-03-10T09:00", "2026-03-10T09:15", "2026-03-10T09:30", "2026-03-10T09:45"]:
        airflow.create_asset_event("it_quarter_hours", partition_key=key)
    for key in ["2026-03-10T10:00", "2026-03-10T10:15", "2026-03-10T10:30"]:
        airflow.create_asset_event("it_quarter_hours", partition_key=key)
    [first] = airflow.wait_for_runs("it_hour_from_quarter_hours", 1, timeout=60)
    assert first["partition_key"] == "2026-03-10T09"
    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-three-slots-of-10")
    assert [r["partition_key"] for r in airflow.dag_runs("it_hour_from_quarter_hours")] == ["2026-03-10T09"]

    airflow.create_asset_event("it_quarter_hours", partition_key="2026-03-10T10:45")
    runs = airflow.wait_for_runs("it_hour_from_quarter_hours", 2, timeout=60)
    assert [r["partition_key"] for r in runs] == ["2026-03-10T09", "2026-03-10T10"]
    assert runs[1]["partition_date"] == "2026-03-10T10:00:00Z"


def test_day_fans_out_to_one_run_per_six_hour_slot(airflow):
    airflow.create_asset_event("it_days", partition_key="2026-03-10T13:45:00+00:00")  # any key in the day
    runs = airflow.wait_for_runs("it_six_hour_slots_from_day", 4, timeout=90)
    assert sorted((r["partition_key"], r["partition_date"]) for r in runs) == [
        ("2026-03-10T00:00", "2026-03-10T00:00:00Z"),
        ("2026-03-10T06:00", "2026-03-10T06:00:00Z"),
        ("2026-03-10T12:00", "2026-03-10T12:00:00Z"),
        ("2026-03-10T18:00", "2026-03-10T18:00:00Z"),
    ]


def test_business_week_with_thanksgiving_fires_on_its_four_working_days(airflow):
    # Worked out from the calendar: Thanksgiving is Thursday 2026-11-26, a US federal holiday.
    working_days = ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27"]
    for key in [*working_days[:-1], "2026-11-28"]:  # three working days and the Saturday
        airflow.create_asset_event("it_daily_orders", partition_key=key)
    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-three-working-days")
    assert airflow.dag_runs("it_business_week") == []

    airflow.create_asset_event("it_daily_orders", partition_key=working_days[-1])
    [run] = airflow.wait_for_runs("it_business_week", 1, timeout=60)
    assert (run["partition_key"], run["partition_date"]) == ("2026-11-23", "2026-11-23T00:00:00Z")
    # The holiday's key, if a producer sends one, maps to the week and is not needed.
    airflow.create_asset_event("it_daily_orders", partition_key="2026-11-26")
    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-the-holiday")
    assert [r["partition_key"] for r in airflow.dag_runs("it_business_week")] == ["2026-11-23"]


def test_previous_business_day_skips_thanksgiving_and_refuses_a_saturday(airflow):
    airflow.create_asset_event("it_landed_files", partition_key="2026-11-28")  # a Saturday
    airflow.create_asset_event("it_landed_files", partition_key="2026-11-27")
    [run] = airflow.wait_for_runs("it_previous_business_day", 1, timeout=60)
    assert (run["partition_key"], run["partition_date"]) == ("2026-11-25", "2026-11-25T05:00:00Z")
    texts = airflow.audit_log("failed to map partition_key")
    assert any("'2026-11-28'" in text and "not a business day" in text for text in texts), texts


def test_fiscal_quarter_fires_once_when_its_third_month_arrives(airflow):
    # A July fiscal year named by its end year: FY2026-Q1 is July to September 2025.
    for key in ["2025-07", "2025-08"]:
        airflow.create_asset_event("it_fiscal_months", partition_key=key)
    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-two-fiscal-months")
    assert airflow.dag_runs("it_fiscal_quarter") == []

    airflow.create_asset_event("it_fiscal_months", partition_key="2025-09")
    [run] = airflow.wait_for_runs("it_fiscal_quarter", 1, timeout=60)
    assert run["partition_key"] == "FY2026-Q1"
    assert run["partition_date"] == "2025-07-01T00:00:00Z"


def test_business_day_backfill_runs_exactly_the_business_days_and_completes_their_week(airflow):
    # 2026-11-23 … 2026-11-30: Thanksgiving (Thursday 26th) and the weekend are not US business days.
    airflow.request(
        "POST",
        "/api/v2/backfills",
        body={
            "dag_id": "it_business_day_producer",
            "from_date": "2026-11-23T00:00:00Z",
            "to_date": "2026-11-30T12:00:00Z",
        },
    )
    runs = airflow.wait_for_runs("it_business_day_producer", 5, timeout=120)
    assert sorted(r["partition_key"] for r in runs) == [
        "2026-11-23",
        "2026-11-24",
        "2026-11-25",
        "2026-11-27",
        "2026-11-30",
    ]
    assert {r["run_type"] for r in runs} == {"backfill"}
    # The week of Monday 2026-11-23 holds 4 business days, all produced: one run, keyed by its Monday.
    [week] = airflow.wait_for_runs("it_business_week_of_produced_days", 1, timeout=60)
    assert week["partition_key"] == "2026-11-23"
    assert week["partition_date"] == "2026-11-23T05:00:00Z"  # New York midnight, EST


def _pending_rollups(airflow, dag_id: str, *, also_fired: bool = False) -> dict[str, tuple[int, int]]:
    """Return ``{partition key: (received, required)}`` of the rollups of *dag_id* still waiting."""
    rows = airflow.request("GET", "/ui/partitioned_dag_runs", params={"dag_id": dag_id})
    return {
        row["partition_key"]: (row["total_received"], row["total_required"])
        for row in rows["partitioned_dag_runs"]
        if also_fired or row["state"] == "pending"
    }


def _upstream_keys(airflow, dag_id: str, run_id: str) -> list[str]:
    """Return, sorted, the partition keys of the asset events that triggered a run."""
    quoted = urllib.parse.quote(run_id, safe="")
    events = airflow.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/upstreamAssetEvents")
    return sorted(event["partition_key"] for event in events["asset_events"])


def test_region_hours_roll_up_into_each_complete_region_day(airflow):
    hours = [f"2026-03-10T{h:02d}" for h in range(24)]
    for hour in hours:  # both regions, hour by hour; us never sends 13:00
        airflow.create_asset_event("it_regional_hours", partition_key=f"eu|{hour}")
        if hour != "2026-03-10T13":
            airflow.create_asset_event("it_regional_hours", partition_key=f"us|{hour}")

    [run] = airflow.wait_for_runs("it_region_day_from_hours", 1, timeout=120)
    assert (run["partition_key"], run["partition_date"]) == ("eu|2026-03-10", "2026-03-10T00:00:00Z")
    received = _upstream_keys(airflow, "it_region_day_from_hours", run["dag_run_id"])
    assert received == [f"eu|{hour}" for hour in hours]
    seen = airflow.xcom("it_region_day_from_hours", run["dag_run_id"], "record_partition")
    assert seen["partition_key"] == "eu|2026-03-10"

    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-region-hours")
    assert [r["partition_key"] for r in airflow.dag_runs("it_region_day_from_hours")] == ["eu|2026-03-10"]
    assert _pending_rollups(airflow, "it_region_day_from_hours") == {"us|2026-03-10": (23, 24)}


def test_trailing_seven_day_window_fires_once_per_complete_window(airflow):
    days = [(date(2026, 3, 1) + timedelta(days=i)).isoformat() for i in range(10)]  # 03-01 … 03-10
    for day in days[:6]:
        airflow.create_asset_event("it_daily_metrics", partition_key=day)
    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-six-days")
    assert airflow.dag_runs("it_trailing_seven_days") == []  # no window of 7 days is complete yet

    for i, day in enumerate(days[6:], start=6):
        # Each new day completes exactly one window, the one ending that day.
        airflow.create_asset_event("it_daily_metrics", partition_key=day)
        runs = airflow.wait_for_runs("it_trailing_seven_days", i - 5, timeout=120)
        assert [r["partition_key"] for r in runs] == days[6 : i + 1]
        window = _upstream_keys(airflow, "it_trailing_seven_days", runs[-1]["dag_run_id"])
        assert window == days[i - 6 : i + 1]

    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-ten-days")
    runs = airflow.wait_for_runs("it_trailing_seven_days", 4, timeout=120)
    assert sorted((r["partition_key"], r["partition_date"]) for r in runs) == [
        (day, f"{day}T00:00:00Z") for day in days[6:]
    ]
    # Every day fed all seven windows it belongs to: those before 03-07 lack their early days,
    # those after 03-10 their late ones, and wait.
    later = [(date(2026, 3, 11) + timedelta(days=i)).isoformat() for i in range(6)]
    assert _pending_rollups(airflow, "it_trailing_seven_days") == {
        **{day: (n, 7) for n, day in enumerate(days[:6], start=1)},
        **{day: (6 - n, 7) for n, day in enumerate(later)},
    }


#: As in integration_dags.py: the deadline rollups wait for three regions' keys of each UTC
#: minute, and, once the minute has ended plus their grace, fire with two of the three.
DEADLINE_GRACES = {
    "it_minute_of_all_regions_by_deadline": timedelta(seconds=5),
    "it_minute_of_all_regions_by_later_deadline": timedelta(seconds=35),
}


def test_deadline_rollup_fires_after_its_grace_and_reports_the_missing_key(airflow):
    # The first deadline at least 20 s away (time to send the keys and see the rollup held),
    # among the last, this and the next minute of either rollup: at most about 50 s to wait.
    now = datetime.now(UTC)
    this_minute = now.replace(second=0, microsecond=0)
    deadline, minute, dag_id = min(
        (minute + timedelta(minutes=1) + grace, minute, dag_id)
        for dag_id, grace in DEADLINE_GRACES.items()
        for minute in (this_minute + timedelta(minutes=n) for n in (-1, 0, 1))
        if minute + timedelta(minutes=1) + grace - now >= timedelta(seconds=20)
    )
    key = minute.strftime("%Y-%m-%dT%H:%M")
    asset = f"it_regional_minutes_{DEADLINE_GRACES[dag_id].seconds}s"
    for region in ("eu", "us"):  # apac never comes
        airflow.create_asset_event(asset, partition_key=f"{region}|{key}")
    assert _pending_rollups(airflow, dag_id, also_fired=True) == {key: (2, 3)}

    _let_the_scheduler_evaluate_pending_rollups(airflow, f"deadline-{key}")
    runs = airflow.dag_runs(dag_id)
    if datetime.now(UTC) < deadline:  # nearly always: the rollup was evaluated, and held
        assert runs == []

    wait = (deadline - datetime.now(UTC)).total_seconds()
    [run] = airflow.wait_for_runs(dag_id, 1, timeout=max(wait, 0) + 90)
    assert (run["partition_key"], run["partition_date"]) == (key, minute.strftime("%Y-%m-%dT%H:%M:00Z"))
    # Created by the deadline, not before: the scheduler and this test read the same clock.
    assert datetime.fromisoformat(run["run_after"]) >= deadline, (run["run_after"], deadline)
    assert datetime.fromisoformat(run["queued_at"]) >= deadline, (run["queued_at"], deadline)
    assert _upstream_keys(airflow, dag_id, run["dag_run_id"]) == [f"eu|{key}", f"us|{key}"]
    report = airflow.xcom(dag_id, run["dag_run_id"], "report_missing")
    assert report == {"partition_key": key, "missing": [f"apac|{key}"]}


# Run by a separate Airflow process with the instance's configuration: the stored (serialized)
# consumer Dag is loaded and its mapper called exactly as Airflow's AssetManager does when an
# asset event is registered (SerializedDagModel.get, get_partition_mapper, to_downstream).
_MAP_WITH_THE_STORED_DAG = """
import json, sys, time
from airflow.models.serialized_dag import SerializedDagModel
from airflow.utils.session import create_session

with create_session() as session:
    dag = SerializedDagModel.get(dag_id="it_exports_by_dataset", session=session).dag
mapper = dag.timetable.get_partition_mapper(name="it_export_files", uri="it_export_files")
results = {}
for name, key in json.loads(sys.argv[1]).items():
    start = time.perf_counter()
    try:
        outcome = "mapped to " + repr(mapper.to_downstream(key))
    except ValueError as err:
        outcome = f"{type(mapper).__name__} ValueError: {str(err)[-160:]}"
    results[name] = {"outcome": outcome, "seconds": time.perf_counter() - start}
print("RESULTS " + json.dumps(results))
"""


def test_regex_mapper_fails_an_adversarial_key_and_maps_the_next(airflow, record_property):
    # The pattern nests quantifiers, ([a-z]+)+, so Python's backtracking re would take time
    # exponential in the letters before a non-matching end; RegexMapper runs on RE2.
    huge = "exports/" + "a" * 9991 + "!"
    assert len(huge) == 10_000
    # Measured: Airflow refuses partition keys over 250 characters (its database column) at
    # every entry point: the REST API's asset events (422 here), the execution API's outlet
    # events, Dag run triggers and the task SDK's add_partitions. So a 10,000-character key
    # never reaches a mapper through the real system ...
    with pytest.raises(AirflowError, match="answered 422") as refused:
        airflow.create_asset_event("it_export_files", partition_key=huge)
    assert "at most 250 characters" in str(refused.value)
    # ... and the longest one that does is 250 characters, still far beyond what Python's re
    # could ever finish on.
    adversarial = "exports/" + "a" * 241 + "!"
    assert len(adversarial) == 250
    airflow.create_asset_event("it_export_files", partition_key=adversarial)
    airflow.create_asset_event("it_export_files", partition_key="exports/sales/20260310.csv")

    run = wait_until(
        lambda: _run_with_key(airflow, "it_exports_by_dataset", "sales|20260310"),
        timeout=120,
        what="the run for the valid key sent after the adversarial one",
    )
    texts = airflow.audit_log("failed to map partition_key")
    assert any(
        f"'{adversarial}'" in text
        and "'it_exports_by_dataset'" in text
        and "RegexMapper: partition key" in text
        and "does not match the pattern" in text
        for text in texts
    ), texts
    assert [r["partition_key"] for r in airflow.dag_runs("it_exports_by_dataset")] == ["sales|20260310"]
    assert _upstream_keys(airflow, "it_exports_by_dataset", run["dag_run_id"]) == [
        "exports/sales/20260310.csv"
    ]

    # The 10,000-character keys, through the mapper Airflow stored for the consumer, in an
    # Airflow process of this instance: one that does not match, one that matches but maps to
    # a key longer than Airflow stores. Both fail with a ValueError naming the key.
    keys = {"no match": huge, "too long": "exports/" + "a" * 9979 + "/20260310.csv"}
    assert {len(k) for k in keys.values()} == {10_000}
    done = subprocess.run(
        [sys.executable, "-c", _MAP_WITH_THE_STORED_DAG, json.dumps(keys)],
        env=airflow.env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS ")]
    assert done.returncode == 0 and lines, done.stdout + done.stderr
    results = json.loads(lines[-1].removeprefix("RESULTS "))
    assert "RegexMapper ValueError" in results["no match"]["outcome"]
    assert "does not match the pattern" in results["no match"]["outcome"]
    assert "RegexMapper ValueError" in results["too long"]["outcome"]
    assert "expected a non-blank key of at most 250" in results["too long"]["outcome"]
    for name, result in results.items():  # reported, not asserted
        record_property(f"seconds to map the 10,000-character key ({name})", result["seconds"])
        print(f"10,000-character key, {name}: {result['seconds'] * 1000:.3f} ms")


# -- the contract with what users have: Airflow's documented pairing, naive local hours ---------------


def test_airflows_documented_business_day_rollup_fires_march_once_after_its_22_weekdays(airflow):
    # RollupMapper(StartOfMonthMapper(input_format="%Y-%m-%d"), BusinessDayWindow()), written as
    # Airflow's plugin docs write it: keys compared by spelling, a weekend key held without counting.
    weekdays = _march_2026_weekdays()
    for key in [*weekdays[:-1], "2026-03-07"]:
        airflow.create_asset_event("it_documented_daily_sales", partition_key=key)
    _let_the_scheduler_evaluate_pending_rollups(airflow, "documented-21-weekdays")
    assert airflow.dag_runs("it_documented_business_month") == []
    pending = airflow.request(
        "GET", "/ui/partitioned_dag_runs", params={"dag_id": "it_documented_business_month"}
    )
    [apdr] = pending["partitioned_dag_runs"]
    assert (apdr["partition_key"], apdr["total_required"]) == ("2026-03", 22)

    airflow.create_asset_event("it_documented_daily_sales", partition_key=weekdays[-1])
    [run] = airflow.wait_for_runs("it_documented_business_month", 1, timeout=60)
    assert run["partition_key"] == "2026-03"
    _let_the_scheduler_evaluate_pending_rollups(airflow, "documented-after-the-run")
    assert len(airflow.dag_runs("it_documented_business_month")) == 1


def _berlin_hours(day: date) -> list[str]:
    """The UTC instants of a Berlin local day's hours, from zoneinfo (not the package)."""
    from zoneinfo import ZoneInfo

    berlin = ZoneInfo("Europe/Berlin")
    start = datetime(day.year, day.month, day.day, tzinfo=berlin).astimezone(UTC)
    following = day + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=berlin).astimezone(UTC)
    return [start + timedelta(hours=h) for h in range((end - start) // timedelta(hours=1))]


def test_naive_berlin_hours_of_the_fall_back_day_fire_it_once_with_all_25_hours_counted(airflow):
    hours = _berlin_hours(date(2026, 10, 25))
    assert len(hours) == 25  # 02:00 CEST and 02:00 CET
    # A producer looping over the local hours writes 24 distinct naive keys, one per REST call;
    # all but 05:00 first: the day then misses exactly 05:00 CET, so 02:00 counted twice.
    naive = [f"2026-10-25T{hour:02d}" for hour in range(24)]
    for key in naive:
        if key != "2026-10-25T05":
            airflow.create_asset_event("it_berlin_naive_hours", partition_key=key)
    _let_the_scheduler_evaluate_pending_rollups(airflow, "berlin-23-naive-hours")
    assert airflow.dag_runs("it_berlin_naive_day") == []
    done = subprocess.run(
        [sys.executable, "-m", "airflow_partitions.tools.cli", "status", "it_berlin_naive_day", "--json"],
        env=airflow.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [partition] = json.loads(done.stdout)["partitions"]
    [progress] = partition["progress"]
    assert partition["partition_key"] == "2026-10-25" and len(progress["expected"]) == 25
    assert progress["missing"] == ["2026-10-25T05+01:00"] and progress["never_counting"] == []

    airflow.create_asset_event("it_berlin_naive_hours", partition_key="2026-10-25T05")
    [run] = airflow.wait_for_runs("it_berlin_naive_day", 1, timeout=60)
    assert run["partition_key"] == "2026-10-25"
    assert (
        airflow.xcom("it_berlin_naive_day", run["dag_run_id"], "record_partition")["partition_key"]
        == "2026-10-25"
    )


def _utc_hours_of_new_york_day(day: date) -> list[str]:
    """The UTC hour keys of a New York local day, from zoneinfo (not the package)."""
    from zoneinfo import ZoneInfo

    new_york = ZoneInfo("America/New_York")
    start = datetime(day.year, day.month, day.day, tzinfo=new_york).astimezone(UTC)
    following = day + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=new_york).astimezone(UTC)
    return [
        (start + timedelta(hours=h)).strftime("%Y-%m-%dT%H")
        for h in range((end - start) // timedelta(hours=1))
    ]


def test_a_deadline_day_that_ran_with_20_of_its_24_hours_shows_what_it_ran_with(airflow):
    complete, partial = date(2026, 2, 10), date(2026, 2, 11)  # ordinary 24-hour New York days
    complete_hours, partial_hours = _utc_hours_of_new_york_day(complete), _utc_hours_of_new_york_day(partial)
    assert len(complete_hours) == len(partial_hours) == 24
    missing = partial_hours[6:10]  # 11:00Z to 14:00Z: 06:00 to 09:00 in New York
    for key in complete_hours + [k for k in partial_hours if k not in missing]:
        airflow.create_asset_event("it_deadline_utc_hours", partition_key=key)
    runs = airflow.wait_for_runs(
        "it_new_york_day_by_deadline", 2, timeout=120
    )  # the partial one once settled
    assert sorted(r["partition_key"] for r in runs) == [complete.isoformat(), partial.isoformat()]
    wait_until(
        lambda: all(r["state"] == "success" for r in airflow.dag_runs("it_new_york_day_by_deadline")),
        timeout=120,
        what="both runs done",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "airflow_partitions.tools.cli",
            "status",
            "it_new_york_day_by_deadline",
            "--json",
        ],
        env=airflow.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    state = json.loads(done.stdout)
    by_key = {p["partition_key"]: p for p in state["partitions"]}
    whole, short = by_key[complete.isoformat()], by_key[partial.isoformat()]
    assert whole["state"] == "success"
    assert whole["ran_with"] == {"counted": 24, "awaited": 24, "missing": [], "missing_total": 0}
    assert short["state"] == "ran incomplete"
    assert short["ran_with"] == {"counted": 20, "awaited": 24, "missing": missing, "missing_total": 4}
    assert state["states"] == {"success": 1, "ran incomplete": 1}
    # The view's answer: the same, and a cell of its own state (coloured apart by the page).
    view = airflow.request("GET", "/partitions/api/dags/it_new_york_day_by_deadline")
    assert {p["partition_key"]: p["ran_with"] for p in view["partitions"]} == {
        k: p["ran_with"] for k, p in by_key.items()
    }
    assert view["states"] == {"success": 1, "ran incomplete": 1}
    [february] = [b for b in view["grid"] if b["title"] == "2026-02"]
    cells = {c["key"]: c for week in february["weeks"] for c in week if c and c["key"]}
    assert (cells[partial.isoformat()]["state"], cells[partial.isoformat()]["count"]) == (
        "ran incomplete",
        "20/24",
    )
    assert cells[complete.isoformat()]["state"] == "success"


def test_a_new_york_fall_back_day_of_minutes_counted_out_fires_once_with_its_1500th_minute(airflow):
    # 2026-11-01 in New York: 04:00Z to 05:00Z the next day, 25 hours, 1,500 minutes (worked out
    # in UTC), more than the 1,440 a window lists: the scheduler gets them counted out (issue 38).
    start = datetime(2026, 11, 1, 4, tzinfo=UTC)
    minutes = [(start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:00Z") for i in range(25 * 60)]
    airflow.trigger("it_produce_local_minutes", partition_key="all-but-one", conf={"keys": minutes[:-1]})
    airflow.wait_for_runs("it_produce_local_minutes", 1, timeout=600)
    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-1499-minutes")
    assert airflow.dag_runs("it_new_york_day_of_minutes") == []

    last = "2026-11-01T23:59-05:00"  # minutes[-1] (04:59Z on 2 November), as the window spells it
    airflow.trigger("it_produce_local_minutes", partition_key="the-last", conf={"keys": [last]})
    [run] = airflow.wait_for_runs("it_new_york_day_of_minutes", 1, timeout=120)
    assert run["partition_key"] == "2026-11-01"
    assert run["partition_date"] == "2026-11-01T04:00:00Z"  # local midnight, EDT
    ran_with = _upstream_keys(airflow, "it_new_york_day_of_minutes", run["dag_run_id"])
    assert len(ran_with) == 1500
