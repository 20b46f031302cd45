"""
One real Airflow per metadata database for the whole test session.

The Airflow processes are started once per backend (SQLite, and PostgreSQL from Debian's
``postgresql`` package on loopback) and shared by the tests of that backend; the two backends
run side by side on two pytest-xdist workers. On a failure,
the scheduler's, dag-processor's and api-server's logs are printed.

A module that sets ``BACKENDS`` (``BACKENDS = ("postgresql",)``) runs on those only, unless
``--every-backend`` is given: CI runs each such module once on each backend across its two
passes (the newest Airflow on the one named, the oldest on SQLite), which kept it under 30
minutes; every module runs on both backends on some Airflow. The tests left out are listed as
deselected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.launcher import AirflowInstance, PostgresServer

DAGS = Path(__file__).parent / "dags"
DAG_IDS = [
    "it_prefix_producer",
    "it_prefix_consumer",
    "it_business_month",
    "it_runtime_producer",
    "it_new_york_day_from_utc_hours",
    "it_hour_from_quarter_hours",
    "it_six_hour_slots_from_day",
    "it_business_week",
    "it_previous_business_day",
    "it_fiscal_quarter",
    "it_runtime_consumer",
    "it_business_day_producer",
    "it_business_week_of_produced_days",
    "it_region_day_from_hours",
    "it_trailing_seven_days",
    "it_minute_of_all_regions_by_deadline",
    "it_minute_of_all_regions_by_later_deadline",
    "it_exports_by_dataset",
    "it_day_of_spelled_hours",
    "it_month_of_formatted_days",
    "it_restart_day",
    "it_requeue_new_york_day",
    "it_series_day_by_deadline",
    "it_status_day",
    "it_core_day_of_hours",
    "it_any_key",
    "it_backfill_daily",
    "it_documented_business_month",
    "it_berlin_naive_day",
    "it_backfill_open",
    "it_again_day",
    "it_sydney_replay_day",
    "it_not_partitioned",
    "it_new_york_day_by_deadline",
    "it_produce_bulk_hours",
    "it_produce_fault_hours",
    "it_produce_local_hours",
    "it_produce_region_local_hours",
    "it_produce_local_minutes",
    "it_new_york_day_of_minutes",
    "it_bulk_new_york_day",
    "it_bulk_utc_day",
    "it_bulk_core_utc_day",
    "it_fault_new_york_day",
    "it_fault_utc_day",
    "it_produce_lockup_hours",
    "it_lockup_day",
    "it_local_day",
    "it_local_iso_week",
    "it_region_local_day",
    "it_shape_month_of_days",
    "it_shape_fiscal_quarter",
    "it_shape_airport_day",
    "it_shape_hour",
    "it_shape_quarter_hour",
    "it_shape_deadline_day",
    "it_shape_month_of_hours",
    "it_shape_business_month",
    "it_shape_store_day",
    "it_shape_retail_week",
    # it_sessions.py: trading sessions (test_sessions.py)
    "it_session_of_bars",
    "it_session_producer",
    "it_week_of_sessions",
    # it_members.py: stores into regions, dated and Variable members (test_members.py)
    "it_produce_store_days",
    "it_region_day_by_lookup",
    "it_vic_day_from_variable",
    "it_region_day_from_variable",
    # it_expectations.py: a rollup whose expected_within changes (test_member_changes.py)
    "it_expect_day",
    # it_differential.py: region days from a Variable, whose faces are compared (test_differential.py)
    "it_diff_region_day",
    # it_repair.py: chains repaired by backfill (test_repair.py)
    "it_repair_day",
    "it_repair_day_by_deadline",
    "it_repair_month",
    "it_repair_day_producer",
    "it_repair_week",
    "it_repair_ui_day",
]
#: Each process reads a members Variable every 5 s (not every minute) and the api-server's watch
#: looks every 2 s: test_members.py and test_member_changes.py change Variables many times.
QUICK_TO_CHANGE = {"AIRFLOW_PARTITIONS_VARIABLE_TTL": "5", "AIRFLOW_PARTITIONS_WATCH_INTERVAL": "2"}
#: Dag files meant to fail to import (test_no_silent_holds.py checks they fail alone).
BROKEN_DAG_FILES = ["it_core_rollup_with_deadline.py"]


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def airflow(request):
    postgres = None
    conn = None
    if request.param == "postgresql":
        postgres = PostgresServer()
        conn = postgres.start()
    instance = AirflowInstance(DAGS, sql_alchemy_conn=conn, extra_env=QUICK_TO_CHANGE)
    try:
        instance.start()
        instance.wait_for_dags(DAG_IDS, expected_import_errors=BROKEN_DAG_FILES)
        yield instance
    finally:
        instance.stop()
        if postgres:
            postgres.stop()


def pytest_collection_modifyitems(config, items):
    """Deselect the tests on a backend their module's ``BACKENDS`` leaves out (``--every-backend``: none)."""
    if config.getoption("every_backend"):
        return
    kept, left = [], []
    for item in items:
        backends = getattr(item.module, "BACKENDS", None)
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("airflow") if callspec is not None else None
        (left if backends is not None and backend is not None and backend not in backends else kept).append(
            item
        )
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    instance = item.funcargs.get("airflow") if hasattr(item, "funcargs") else None
    if report.failed and isinstance(instance, AirflowInstance):
        report.sections.append(("Airflow logs", instance.log_tail(lines=120)))
