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

    # A key sent after the 21 weekdays to another consumer: once its run exists, the scheduler
    # has evaluated the older, pending rollup with all 21 keys in view, and must have held it.
    airflow.create_asset_event("it_regional_sales", partition_key="eu::sentinel-after-21")
    wait_until(
        lambda: _run_with_key(airflow, "it_prefix_consumer", "sentinel-after-21"),
        timeout=60,
        what="the sentinel run",
    )
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
    assert details["timetable_summary"] == "* * * * *"

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
