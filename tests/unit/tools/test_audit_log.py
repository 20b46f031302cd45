"""
Keys refused on arrival, read from Airflow's audit log: those a time range selects, and those re-queued since.

The tables are the reader's own Core tables, created on an empty SQLite file; the audit-log rows are
written in Airflow 3.3's wording, the key-log rows as ``requeue --yes`` (Airflow's
``_queue_partitioned_dags``) writes them: a row linking the stored event to the Dag, stamped when.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, insert
from sqlalchemy.orm import Session

from airflow_partitions import Day, RetailWeek
from airflow_partitions.tools.state.audit_log import asset_refusals, refusals_of
from airflow_partitions.tools.state.model import REFUSED_EVENT
from airflow_partitions.tools.state.tables import asset, asset_event, log, metadata, partitioned_asset_key_log

T = datetime(2026, 12, 3, 9, tzinfo=UTC)
#: The stored events of asset 1 (store_days): id, key, when sent (minutes after T).
EVENTS = [
    (10, "store-003|2026-12-01", 0),  # refused, then re-queued at minute 60
    (11, "store-004|2026-11-29", 5),  # refused
    (12, "store-005|2026-12-02", 10),  # refused, then sent again at minute 50 (event 13) and counted
    (13, "store-005|2026-12-02", 50),
]


def _refused(key: str, dag_id: str) -> str:
    """An audit-log row's extra as Airflow 3.3 writes it for a key *dag_id*'s mapper refused."""
    return (
        f"Could not map partition_key '{key}' for asset (name='store_days', uri='store_days') in target Dag "
        f"'{dag_id}'. This likely indicates that the partition mapper in the target Dag is misconfigured "
        f"or does not support this partition key.\nOtherMember: dimension 'store' is {key.split('|')[0]!r}"
    )


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    metadata.create_all(engine)
    with Session(engine) as new:
        new.execute(insert(asset), [{"id": 1, "name": "store_days", "uri": "store_days"}])
        new.execute(
            insert(asset_event),
            [
                {"id": i, "asset_id": 1, "partition_key": key, "timestamp": T + timedelta(minutes=m)}
                for i, key, m in EVENTS
            ],
        )
        # Each refusal a second after its event; other_day refused store-003's event too.
        refusals = [(key, "region_day", m) for i, key, m in EVENTS if i != 13] + [
            ("store-003|2026-12-01", "other_day", 0)
        ]
        new.execute(
            insert(log),
            [
                {
                    "id": n,
                    "dttm": T + timedelta(minutes=m, seconds=1),
                    "event": REFUSED_EVENT,
                    "extra": _refused(key, dag),
                }
                for n, (key, dag, m) in enumerate(refusals, 1)
            ],
        )
        # Event 13 counted on arrival; event 10 re-queued for region_day at minute 60.
        new.execute(
            insert(partitioned_asset_key_log),
            [
                _key_log(1, 13, "store-005|2026-12-02", T + timedelta(minutes=50)),
                _key_log(2, 10, "store-003|2026-12-01", T + timedelta(minutes=60)),
            ],
        )
        yield new
    engine.dispose()


def _key_log(log_id: int, event_id: int, key: str, created: datetime) -> dict[str, object]:
    return {
        "id": log_id,
        "asset_id": 1,
        "asset_event_id": event_id,
        "asset_partition_dag_run_id": log_id,
        "source_partition_key": key,
        "target_dag_id": "region_day",
        "target_partition_key": key.split("|")[1],
        "created_at": created,
    }


def test_a_refusal_whose_event_was_queued_again_is_marked_requeued_and_no_other(session):
    refusals, total = refusals_of(session, "region_day", None)
    assert total == 3
    assert [(r.partition_key, r.requeued) for r in refusals] == [
        ("store-003|2026-12-01", True),  # its own event now feeds a run
        ("store-004|2026-11-29", False),
        ("store-005|2026-12-02", False),  # counted, but from another event sent later
    ]
    # The same event refused by another Dag, whose key log has no row for it: not re-queued there.
    [other], _ = refusals_of(session, "other_day", None)
    assert (other.partition_key, other.requeued) == ("store-003|2026-12-01", False)
    # The asset's page marks them alike.
    marked = [
        (r.dag_id, r.partition_key) for r in asset_refusals(session, "store_days", None, None) if r.requeued
    ]
    assert marked == [("region_day", "store-003|2026-12-01")]


@pytest.mark.parametrize(
    ("start", "end", "keys"),
    [
        ("2026-12-02", None, ["store-005|2026-12-02"]),
        (None, "2026-11-30", ["store-004|2026-11-29"]),
        ("2026-12-01", "2026-12-01", ["store-003|2026-12-01"]),
        ("2026-11", "2026-11", ["store-004|2026-11-29"]),  # bounds are compared on their own length
        (None, None, ["store-003|2026-12-01", "store-004|2026-11-29", "store-005|2026-12-02"]),
    ],
)
def test_a_time_range_selects_the_refusals_whose_key_falls_in_it(session, start, end, keys):
    refusals, total = refusals_of(session, "region_day", None, start, end, Day())
    assert [r.partition_key for r in refusals] == keys and total == len(keys)


def test_a_refused_key_is_placed_in_the_dags_grain_before_it_is_compared():
    from airflow_partitions.tools.state.audit_log import in_selected_range
    from airflow_partitions.tools.state.model import Refusal

    # NRF 2026 began on Sunday 2026-02-01: week 44 is 29 November to 5 December, week 45 from 6 December.
    weeks = RetailWeek()
    assert weeks.key(weeks.floor_key("2026-11-29")) == "R2026-W44"
    refused = Refusal.read(T, _refused("store-003|2026-12-01", "region_week"))
    assert in_selected_range(refused, "R2026-W44", "R2026-W44", weeks)
    assert not in_selected_range(refused, "R2026-W45", None, weeks)
    # As written without a grain: the day's text is no retail week's.
    assert not in_selected_range(refused, "R2026-W44", "R2026-W44", None)


def _broken(key: str, dag_id: str, variable: str) -> str:
    """An audit-log row's extra for a key refused while the members Variable *variable* is broken."""
    return (
        f"Could not map partition_key '{key}' for asset (name='store_days', uri='store_days') in target Dag "
        f"'{dag_id}'. This likely indicates that the partition mapper in the target Dag is misconfigured "
        f"or does not support this partition key.\nValueError: Airflow Variable {variable!r} is not JSON "
        "(Expecting value: line 1 column 1 (char 0)); expected a JSON list of members"
    )


def test_a_broken_variable_is_broken_since_the_first_key_refused_for_it_after_the_newest_run(session):
    from airflow_partitions.tools.state.audit_log import first_refused_for
    from airflow_partitions.tools.state.tables import dag_run

    def refused(n: int, minute: int, dag_id: str = "region_day", variable: str = "stores") -> dict:
        return {
            "id": n,
            "dttm": T + timedelta(minutes=minute),
            "event": REFUSED_EVENT,
            "extra": _broken(f"store-00{n % 9}|2026-12-0{minute % 9 + 1}", dag_id, variable),
        }

    assert first_refused_for(session, "region_day", "stores") is None  # nothing refused for it yet
    # Broken an hour before its newest run (fixed since: that run fired), broken again after it.
    session.execute(
        insert(log),
        [refused(20, 100), refused(21, 230), refused(22, 231, "other_day"), refused(23, 232, variable="x")],
    )
    session.execute(
        insert(dag_run),
        [
            {
                "id": 1,
                "dag_id": "region_day",
                "run_id": "r1",
                "partition_key": "north|2026-12-03",
                "state": "success",
                "run_type": "asset_triggered",
                "created_at": T + timedelta(minutes=200),
                "run_after": T + timedelta(minutes=200),
            }
        ],
    )
    session.execute(insert(log), [refused(24, 240)])
    assert first_refused_for(session, "region_day", "stores") == T + timedelta(minutes=230)
    assert first_refused_for(session, "other_day", "stores") == T + timedelta(minutes=231)
    assert first_refused_for(session, "region_day", "x") == T + timedelta(minutes=232)
    assert first_refused_for(session, "region_day", "store") is None  # a Variable named apart
