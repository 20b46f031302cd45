"""
Trading sessions through the real Airflow scheduler: bars into NYSE sessions, a session producer's backfill.

Session hours are the NYSE's published ones ("Holidays and Trading Hours", nyse.com): 09:30 to
16:00 New York time, closed on Thanksgiving (Thursday 2026-11-26), closing at 13:00 the day after.
Bar keys are worked out here with zoneinfo from those hours, not with the package.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.integration.test_scheduler import _let_the_scheduler_evaluate_pending_rollups, _upstream_keys

pytestmark = pytest.mark.integration

NEW_YORK = ZoneInfo("America/New_York")
THANKSGIVING_WEEK = ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27"]


def bars(day: str, *, utc: bool = False) -> list[str]:
    """The 13 bars a producer of 09:30 to 16:00 New York bars writes on *day*, local or in UTC ('Z')."""
    start = datetime.fromisoformat(f"{day}T09:30").replace(tzinfo=NEW_YORK)
    instants = [start + timedelta(minutes=30 * n) for n in range(13)]
    if utc:
        return [f"{i.astimezone(ZoneInfo('UTC')):%Y-%m-%dT%H:%M}Z" for i in instants]
    return [f"{i:%Y-%m-%dT%H:%M}-05:00" for i in instants]  # EST all week


def test_a_week_of_bars_over_thanksgiving_rolls_up_into_its_four_sessions(airflow):
    dag_id = "it_session_of_bars"
    week = {day: bars(day, utc=day == "2026-11-23") for day in THANKSGIVING_WEEK}
    for day in THANKSGIVING_WEEK:
        for key in week[day]:
            airflow.create_asset_event("it_bars", partition_key=key)

    runs = airflow.wait_for_runs(dag_id, 4, timeout=240)
    assert [r["partition_key"] for r in runs] == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27"]
    by_key = {r["partition_key"]: r for r in runs}
    assert by_key["2026-11-27"]["partition_date"] == "2026-11-27T14:30:00Z"  # the open, 09:30 EST
    # The early close: the 7 bars from 09:30 to 12:30 counted; 13:00 … 15:30 were refused.
    early = week["2026-11-27"][:7]
    assert early[-1] == "2026-11-27T12:30-05:00"
    assert _upstream_keys(airflow, dag_id, by_key["2026-11-27"]["dag_run_id"]) == sorted(early)
    assert len(_upstream_keys(airflow, dag_id, by_key["2026-11-23"]["dag_run_id"])) == 13  # UTC spellings
    seen = airflow.xcom(dag_id, by_key["2026-11-27"]["dag_run_id"], "record_partition")
    assert seen["partition_key"] == "2026-11-27"

    # Thanksgiving's 13 bars and the 6 after the early close were refused out loud, one row each.
    refused = [*week["2026-11-26"], *week["2026-11-27"][7:]]
    texts = airflow.audit_log("failed to map partition_key")
    audited = [t for t in texts if "outside the trading sessions of XNYS" in t]
    missing = [key for key in refused if not any(f"'{key}'" in text for text in audited)]
    assert missing == [], texts[-5:]

    _let_the_scheduler_evaluate_pending_rollups(airflow, "after-the-thanksgiving-bars")
    assert len(airflow.dag_runs(dag_id)) == 4
    rows = airflow.request("GET", "/ui/partitioned_dag_runs", params={"dag_id": dag_id})
    # No refused bar opened a pending run.
    assert [row for row in rows["partitioned_dag_runs"] if row["state"] == "pending"] == []

    # The Partitions view: the sessions on a calendar (Thanksgiving and the weekend are days off,
    # not places waiting to open), the bars as day strips of each session's hours.
    view = airflow.request("GET", f"/partitions/api/dags/{dag_id}")
    [month] = [block for block in view["grid"] if block["kind"] == "month"]
    places = {c["label"]: c for week in month["weeks"] for c in week if c is not None}
    assert [places[d]["key"] for d in ("23", "24", "25", "27")] == [
        "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27",
    ]  # fmt: skip
    assert [places[d]["state"] for d in ("26", "28", "29", "30")] == [
        "closed",
        "closed",
        "closed",
        "not opened",
    ]
    coverage = airflow.request("GET", "/partitions/api/assets/it_bars")["coverage"]
    assert (coverage["zone"], coverage["dag_id"]) == ("America/New_York", dag_id)
    [series] = coverage["series"]
    days = {d["day"]: d for d in series["days"]}
    assert [len(days[d]["strip"]) for d in THANKSGIVING_WEEK] == [13, 13, 13, 0, 7]
    assert [days[d]["missing_hours"] for d in THANKSGIVING_WEEK] == [[]] * 5
    assert (days["2026-11-26"]["closed"], days["2026-11-26"]["gap"], len(days["2026-11-26"]["keys"])) == (
        True, False, 13,
    )  # fmt: skip


def test_a_session_producer_backfills_each_session_and_completes_its_week(airflow):
    airflow.request(
        "POST",
        "/api/v2/backfills",
        body={
            "dag_id": "it_session_producer",
            "from_date": "2026-11-23T00:00:00Z",
            "to_date": "2026-11-27T23:00:00Z",
        },
    )
    runs = airflow.wait_for_runs("it_session_producer", 4, timeout=180)
    assert sorted((r["partition_key"], r["partition_date"]) for r in runs) == [
        ("2026-11-23", "2026-11-23T14:30:00Z"),
        ("2026-11-24", "2026-11-24T14:30:00Z"),
        ("2026-11-25", "2026-11-25T14:30:00Z"),
        ("2026-11-27", "2026-11-27T14:30:00Z"),
    ]
    assert {r["run_type"] for r in runs} == {"backfill"}
    [week] = airflow.wait_for_runs("it_week_of_sessions", 1, timeout=120)
    assert (week["partition_key"], week["partition_date"]) == ("2026-11-23", "2026-11-23T05:00:00Z")
    assert _upstream_keys(airflow, "it_week_of_sessions", week["dag_run_id"]) == [
        "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27",
    ]  # fmt: skip
    details = airflow.request("GET", "/api/v2/dags/it_session_producer/details")
    assert details["timetable_summary"] == "TradingSession T-1 +0:30:00 (America/New_York)"
