"""
An upgrade (every Airflow process restarted) with unchanged stored forms keeps pending rollups.

Airflow deletes a Dag's pending rollups when its serialized mapper changes; ours must serialize
byte for byte the same after a restart, so a half-filled rollup survives and completes. Runs
last for each backend: it restarts the shared Airflow.
"""

from __future__ import annotations

from tests.integration.conftest import BROKEN_DAG_FILES, DAG_IDS


def test_a_restart_keeps_a_half_filled_rollup_and_completes_it(airflow):
    hours = [f"2026-03-10T{h:02d}" for h in range(24)]
    for key in hours[:12]:
        airflow.create_asset_event("it_restart_hours", partition_key=key)

    def pending():
        return airflow.request("GET", "/ui/partitioned_dag_runs", params={"dag_id": "it_restart_day"})[
            "partitioned_dag_runs"
        ]

    [before] = pending()
    assert (before["partition_key"], before["total_received"], before["total_required"]) == (
        "2026-03-10",
        12,
        24,
    )

    airflow.restart()
    airflow.wait_for_dags(DAG_IDS, expected_import_errors=BROKEN_DAG_FILES)
    [after] = pending()
    assert (after["partition_key"], after["total_received"]) == ("2026-03-10", 12)

    for key in hours[12:]:
        airflow.create_asset_event("it_restart_hours", partition_key=key)
    [run] = airflow.wait_for_runs("it_restart_day", 1, timeout=90)
    assert run["partition_key"] == "2026-03-10"
