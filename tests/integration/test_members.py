"""
Stores into regions through the real Airflow scheduler: one Dag through a lookup, dated members, a Variable.

Eight stores report daily (``store-042|2026-04-05``): store-001 to store-004 are in nsw, store-005
to store-008 in vic, and store-009 (vic) opens on 2026-04-06. The keys each region's day awaits
are written out here from that table.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.integration.test_scheduler import (
    _let_the_scheduler_evaluate_pending_rollups,
    _run_with_key,
    _upstream_keys,
)
from tests.support.launcher import AirflowError, wait_until

pytestmark = pytest.mark.integration

NSW = ["store-001", "store-002", "store-003", "store-004"]
VIC = ["store-005", "store-006", "store-007", "store-008"]


def _refusals(airflow, dag_id: str, key: str) -> list[str]:
    """The audit-log rows of *key* refused on arrival for *dag_id*."""
    return [
        text
        for text in airflow.audit_log("failed to map partition_key")
        if f"'{key}'" in text and f"'{dag_id}'" in text
    ]


def test_one_dag_runs_each_regions_day_from_its_stores_and_awaits_store_009_from_its_first_day(airflow):
    dag_id = "it_region_day_by_lookup"
    for store in NSW + VIC:  # one key at a time
        airflow.create_asset_event("it_store_days", partition_key=f"{store}|2026-04-04")
    runs = airflow.wait_for_runs(dag_id, 2, timeout=180)
    assert sorted(r["partition_key"] for r in runs) == ["nsw|2026-04-04", "vic|2026-04-04"]
    by_key = {r["partition_key"]: r for r in runs}
    assert _upstream_keys(airflow, dag_id, by_key["nsw|2026-04-04"]["dag_run_id"]) == [
        f"{s}|2026-04-04" for s in NSW
    ]
    # store-009 is not awaited on 2026-04-04: vic ran from its four stores.
    assert _upstream_keys(airflow, dag_id, by_key["vic|2026-04-04"]["dag_run_id"]) == [
        f"{s}|2026-04-04" for s in VIC
    ]
    assert by_key["vic|2026-04-04"]["partition_date"] == "2026-04-03T13:00:00Z"  # midnight in Sydney (AEDT)
    assert all(_refusals(airflow, dag_id, f"{s}|2026-04-04") == [] for s in NSW + VIC)  # none refused

    # Its key of 2026-04-04 is refused out loud, naming its dates.
    airflow.create_asset_event("it_store_days", partition_key="store-009|2026-04-04")
    [refused] = _refusals(airflow, dag_id, "store-009|2026-04-04")
    assert "OutsideCalendar: " in refused and "'store-009' is a member from 2026-04-06" in refused

    # On 2026-04-06 vic awaits store-009 too: the eight stores, in one batch, complete nsw only.
    airflow.trigger("it_produce_store_days", conf={"keys": [f"{s}|2026-04-06" for s in NSW + VIC]})
    wait_until(lambda: _run_with_key(airflow, dag_id, "nsw|2026-04-06"), timeout=120, what="nsw's day")
    _let_the_scheduler_evaluate_pending_rollups(airflow, "before-store-009")
    assert _run_with_key(airflow, dag_id, "vic|2026-04-06") is None
    airflow.create_asset_event("it_store_days", partition_key="store-009|2026-04-06")
    run = wait_until(lambda: _run_with_key(airflow, dag_id, "vic|2026-04-06"), timeout=120, what="vic's day")
    assert _upstream_keys(airflow, dag_id, run["dag_run_id"]) == [
        f"{s}|2026-04-06" for s in [*VIC, "store-009"]
    ]
    assert all(_refusals(airflow, dag_id, f"{s}|2026-04-06") == [] for s in [*NSW, *VIC, "store-009"])


def _set_variable(airflow, key: str, value: list) -> None:
    """Set the Variable through the REST API; return once every process reads the new value."""
    body = {"key": key, "value": json.dumps(value)}
    try:
        airflow.request("PATCH", f"/api/v2/variables/{key}", body=body)
    except AirflowError:  # not there yet
        airflow.request("POST", "/api/v2/variables", body=body)
    # Each process reads a Variable again at most its TTL after its last read (docs/members.md).
    time.sleep(float(airflow.env["AIRFLOW_PARTITIONS_VARIABLE_TTL"]) + 1)


def _pending_run(airflow, dag_id: str, key: str) -> tuple[int, int | None] | None:
    rows = airflow.query(
        "SELECT id, created_dag_run_id FROM asset_partition_dag_run "
        "WHERE target_dag_id = :dag AND partition_key = :key",
        dag=dag_id,
        key=key,
    )
    return rows[0] if rows else None


def test_a_variable_backed_region_gains_store_009_while_its_day_is_pending_and_the_run_waits_for_it(airflow):
    dag_id = "it_vic_day_from_variable"
    _set_variable(airflow, "it_vic_stores", ["store-005", "store-006"])
    airflow.create_asset_event("it_vic_store_days", partition_key="store-005|2026-04-06")
    pending, _ = wait_until(
        lambda: _pending_run(airflow, dag_id, "2026-04-06"), timeout=60, what="the pending run of 2026-04-06"
    )
    # Another region's store is a key for another member, refused as such (not a mistake).
    airflow.create_asset_event("it_vic_store_days", partition_key="store-001|2026-04-06")
    [refused] = _refusals(airflow, dag_id, "store-001|2026-04-06")
    assert "OtherMember: " in refused and "dimension 'store' is 'store-001'" in refused

    # store-009 opens on 2026-04-06: only the Variable changes, not the stored Dag.
    _set_variable(
        airflow, "it_vic_stores", ["store-005", "store-006", {"value": "store-009", "start": "2026-04-06"}]
    )
    # Each process reads the Variable again at most its TTL after its last read: a pending run
    # evaluated with the old list would fire on store-006 alone, failing below.
    time.sleep(float(airflow.env["AIRFLOW_PARTITIONS_VARIABLE_TTL"]) + 5)
    airflow.create_asset_event("it_vic_store_days", partition_key="store-006|2026-04-06")
    _let_the_scheduler_evaluate_pending_rollups(airflow, "vic-without-store-009")
    assert _run_with_key(airflow, dag_id, "2026-04-06") is None
    assert _pending_run(airflow, dag_id, "2026-04-06") == (pending, None)  # kept, not cleared

    airflow.create_asset_event("it_vic_store_days", partition_key="store-009|2026-04-06")
    run = wait_until(lambda: _run_with_key(airflow, dag_id, "2026-04-06"), timeout=120, what="vic's day")
    assert _upstream_keys(airflow, dag_id, run["dag_run_id"]) == [
        "store-005|2026-04-06",
        "store-006|2026-04-06",
        "store-009|2026-04-06",
    ]
    assert _pending_run(airflow, dag_id, "2026-04-06")[0] == pending  # the run opened by store-005's key
