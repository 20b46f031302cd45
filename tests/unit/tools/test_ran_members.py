"""
A period that ran is judged by the keys its run had, not by the members a Variable lists today.

The trial's region-day rollup over ``VariableMembers("my_stores")``: south's 2026-11-30 ran with
its stores s004, s005 and s006; then s003 moved from north to south. South's day awaits s003 now,
but its run fired complete under the members it had (WaitForAll: the scheduler fires a run only
once every key it awaits is logged), and a re-run keeps its original events: it stays ``success``
with 3 of 3. Read by the state reader (:class:`~airflow_partitions.tools.state.reader.Reader`) on
the reader's own Core tables in an empty SQLite file, the Dag's timetable handed in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow.serialization.decoders import decode_timetable
from airflow.serialization.encoders import encode_timetable
from sqlalchemy import create_engine, insert
from sqlalchemy.orm import Session

from airflow_partitions import (
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    TemporalMapper,
    VariableMembers,
)
from airflow_partitions.members import forget_reads
from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.model import RanWith
from airflow_partitions.tools.state.reader import Reader
from airflow_partitions.tools.state.tables import (
    asset,
    asset_partition_dag_run,
    dag_run,
    metadata,
    partitioned_asset_key_log,
)

DAG, ASSET, DAY = "my_region_day", "store_days", "2026-11-30"
AT = datetime(2026, 12, 1, 9, tzinfo=UTC)
BEFORE = {
    "s001": "north",
    "s002": "north",
    "s003": "north",
    "s004": "south",
    "s005": "south",
    "s006": "south",
}
MOVED = {**BEFORE, "s003": "south"}


def _members(groups: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Set the Variable ``my_stores`` (read from the environment, as Airflow reads it first)."""
    value = [{"value": store, "group": group} for store, group in groups.items()]
    monkeypatch.setenv("AIRFLOW_VAR_MY_STORES", json.dumps(value))
    forget_reads()


def _timetable(policy: Any = None) -> tuple[Any, list[tuple[str, str]]]:
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}),
        window=DimensionWindow(store=VariableMembers("my_stores")),
        wait_policy=policy,
    )
    timetable = PartitionedAssetTimetable(assets=Asset(ASSET), default_partition_mapper=rollup)
    # As the scheduler and the reader have it: deserialized from the stored form.
    return decode_timetable(json.loads(json.dumps(encode_timetable(timetable)))), [(ASSET, ASSET)]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """South's 2026-11-30 fired (pending run 1, Dag run 1, success) with s004, s005 and s006's keys."""
    for memo in ("KEPT", "RECEIVED", "PENDING", "RAN_WITH"):
        monkeypatch.setattr(cache, memo, type(getattr(cache, memo))())
    monkeypatch.setattr(cache, "STORES", {})
    monkeypatch.setattr(cache, "MIRRORS", {})
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "store.sqlite"))
    _members(BEFORE, monkeypatch)
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    metadata.create_all(engine)
    key = f"south|{DAY}"
    with Session(engine) as session, session.begin():
        session.execute(insert(asset), [{"id": 1, "name": ASSET, "uri": ASSET}])
        session.execute(
            insert(dag_run).values(
                id=1,
                dag_id=DAG,
                run_id="asset_triggered__south",
                partition_key=key,
                state="success",
                run_type="asset_triggered",
                created_at=AT,
                run_after=AT,
                start_date=AT,
            )
        )
        session.execute(
            insert(asset_partition_dag_run).values(
                id=1, target_dag_id=DAG, created_dag_run_id=1, partition_key=key, created_at=AT, updated_at=AT
            )
        )
        session.execute(
            insert(partitioned_asset_key_log),
            [
                {
                    "id": n,
                    "asset_id": 1,
                    "asset_event_id": n,
                    "asset_partition_dag_run_id": 1,
                    "source_partition_key": f"{store}|{DAY}",
                    "target_dag_id": DAG,
                    "target_partition_key": key,
                    "created_at": AT,
                }
                for n, store in enumerate(["s004", "s005", "s006"], 1)
            ],
        )
    yield engine
    engine.dispose()


def _south(engine: Any, policy: Any = None) -> tuple[str, RanWith | None]:
    """Read south's 2026-11-30 in a new session: its state and what its runs ran with."""
    with Session(engine) as session:
        [partition] = Reader(DAG, session, _timetable(policy)).partitions_of([f"south|{DAY}"])
    return partition.state, partition.ran_with


def test_a_run_that_fired_complete_stays_complete_after_a_store_moves_into_its_region(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _south(engine) == ("success", RanWith(3, 3))
    _members(MOVED, monkeypatch)
    assert _south(engine) == ("success", RanWith(3, 3))


def test_a_run_keeps_counting_a_key_of_a_store_that_moved_out_of_its_region(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # s004 moves to north after south's day ran with it: it counted then, and still counts for that run.
    _members({**BEFORE, "s004": "north"}, monkeypatch)
    assert _south(engine) == ("success", RanWith(3, 3))


def test_under_a_deadline_a_run_counts_its_keys_and_lacks_todays_members_it_never_had(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A deadline may fire a run without every key: what it awaited then is not kept, so it awaits
    # its own keys and those today's members await that it lacks (s003, moved in since).
    policy = CompletionDeadline(timedelta(hours=1))
    assert _south(engine, policy) == ("success", RanWith(3, 3))
    _members(MOVED, monkeypatch)
    assert _south(engine, policy) == ("ran incomplete", RanWith(3, 4, (f"s003|{DAY}",), 1))
    _members({**BEFORE, "s004": "north"}, monkeypatch)
    assert _south(engine, policy) == ("success", RanWith(3, 3))
