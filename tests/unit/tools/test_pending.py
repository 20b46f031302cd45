"""
A pending run's keys are its own key-log rows: not those a deleted run left under the id it reuses.

Airflow links ``partitioned_asset_key_log`` rows to their pending run by id only. On SQLite,
deleting a Dag run deletes its pending run (``ON DELETE CASCADE``) but not the pending run's
key-log rows, and the next pending run takes the freed id (the greatest rowid plus one). The
tables are the reader's own Core tables, created on an empty SQLite file.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, insert, update
from sqlalchemy.orm import Session

from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.pending import received_keys
from airflow_partitions.tools.state.tables import (
    asset,
    asset_partition_dag_run,
    metadata,
    partitioned_asset_key_log,
)

AT = datetime(2026, 3, 11, 5, tzinfo=UTC)


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    monkeypatch.setattr(cache, "RECEIVED", OrderedDict())
    monkeypatch.setattr(cache, "STORES", {})
    monkeypatch.setattr(cache, "MIRRORS", {})
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "store.sqlite"))
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    metadata.create_all(engine)
    with Session(engine) as new:
        yield new
    engine.dispose()


def _log(log_id: int, key: str, dag_id: str, target: str) -> dict[str, object]:
    return {
        "id": log_id,
        "asset_id": 1,
        "asset_event_id": log_id,
        "asset_partition_dag_run_id": 7,
        "source_partition_key": key,
        "target_dag_id": dag_id,
        "target_partition_key": target,
        "created_at": AT,
    }


def _pending_run_7(session: Session) -> None:
    """Pending run 7 of New York's 2026-03-10, of the Dag ``ny_day``, fed by the asset ``hourly``."""
    session.execute(insert(asset), [{"id": 1, "name": "hourly", "uri": "hourly"}])
    session.execute(
        insert(asset_partition_dag_run),
        [
            {
                "id": 7,
                "target_dag_id": "ny_day",
                "created_dag_run_id": None,
                "partition_key": "2026-03-10",
                "created_at": AT,
                "updated_at": AT,
            }
        ],
    )


def test_a_pending_run_reusing_a_deleted_runs_id_has_only_its_own_keys(session: Session) -> None:
    _pending_run_7(session)
    # Rows 1 and 2 were logged for the pending run 7 that a deleted Dag run took with it (another
    # day of this Dag, a day of another Dag).
    session.execute(
        insert(partitioned_asset_key_log),
        [
            _log(1, "2026-03-01T05", "ny_day", "2026-03-01"),
            _log(2, "2026-03-10T05", "utc_day", "2026-03-10"),
            _log(3, "2026-03-10T05", "ny_day", "2026-03-10"),
            _log(4, "2026-03-10T06", "ny_day", "2026-03-10"),
        ],
    )
    assert received_keys(session, [7]) == {7: {"hourly": frozenset({"2026-03-10T05", "2026-03-10T06"})}}


def _new_process() -> None:
    """Write what the store was given, then forget all but its file, as a new process starts."""
    for store in cache.STORES.values():
        if store is not None:
            store.flush()
    cache.STORES.clear()
    cache.MIRRORS.clear()
    cache.RECEIVED.clear()


def test_a_new_process_finds_a_runs_keys_stored_while_its_key_log_stamp_holds(session: Session) -> None:
    _pending_run_7(session)
    session.execute(insert(partitioned_asset_key_log), [_log(3, "2026-03-10T05", "ny_day", "2026-03-10")])
    assert received_keys(session, [7]) == {7: {"hourly": frozenset({"2026-03-10T05"})}}
    # The row's key rewritten in place (Airflow never does): the stamp (1 row, greatest id 3) holds,
    # so a new process answers from the store, and the old key shows it did not read the log again.
    session.execute(update(partitioned_asset_key_log).values(source_partition_key="2026-03-10T09"))
    _new_process()
    assert received_keys(session, [7]) == {7: {"hourly": frozenset({"2026-03-10T05"})}}
    # A row added moves the stamp: the keys are read again.
    session.execute(insert(partitioned_asset_key_log), [_log(4, "2026-03-10T06", "ny_day", "2026-03-10")])
    _new_process()
    assert received_keys(session, [7]) == {7: {"hourly": frozenset({"2026-03-10T09", "2026-03-10T06"})}}


def test_a_discarded_run_whose_id_and_key_log_id_are_given_again_has_its_new_keys(session: Session) -> None:
    """
    ``discard`` deletes pending run 7 (the newest) and its key-log row 3 (the newest); SQLite gives
    the next run id 7 and its first key-log row id 3: the same count and greatest id, other keys.
    """
    from sqlalchemy import delete

    _pending_run_7(session)
    session.execute(insert(partitioned_asset_key_log), [_log(3, "2026-03-10T05", "ny_day", "2026-03-10")])
    session.commit()
    assert received_keys(session, [7]) == {7: {"hourly": frozenset({"2026-03-10T05"})}}
    session.commit()
    session.execute(delete(partitioned_asset_key_log))
    session.execute(delete(asset_partition_dag_run))
    later = AT.replace(hour=9)
    session.execute(
        insert(asset_partition_dag_run).values(
            id=7, target_dag_id="ny_day", partition_key="2026-03-12", created_at=later, updated_at=later
        )
    )
    session.execute(
        insert(partitioned_asset_key_log),
        [{**_log(3, "2026-03-12T05", "ny_day", "2026-03-12"), "created_at": later}],
    )
    session.commit()
    assert received_keys(session, [7]) == {7: {"hourly": frozenset({"2026-03-12T05"})}}  # this process
    _new_process()
    assert received_keys(session, [7]) == {7: {"hourly": frozenset({"2026-03-12T05"})}}  # the store
