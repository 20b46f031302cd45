"""Our classes through the real Airflow scheduler, dag-processor and api-server."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from airflow_partitions.testing import wait_until

pytestmark = pytest.mark.integration


def _march_2026_weekdays() -> list[str]:
    # Worked out from the calendar, not from BusinessDayWindow: 2026-03-01 is a Sunday.
    days = [date(2026, 3, 1) + timedelta(days=i) for i in range(31)]
    return [d.isoformat() for d in days if d.isoweekday() <= 5]


def _run_with_key(airflow, dag_id: str, key: str):
    return next((r for r in airflow.dag_runs(dag_id) if r["partition_key"] == key), None)


def _let_the_scheduler_evaluate_pending_rollups(airflow, name: str) -> None:
    """
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
    logs = airflow.request("GET", "/api/v2/eventLogs", params={"event": "failed to map partition_key"})
    texts = [entry["extra"] for entry in logs["event_logs"]]
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
    logs = airflow.request("GET", "/api/v2/eventLogs", params={"event": "failed to map partition_key"})
    texts = [entry["extra"] for entry in logs["event_logs"]]
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
