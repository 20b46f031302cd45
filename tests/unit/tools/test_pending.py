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


def _run(run_id: int, key: str) -> dict[str, object]:
    return {
        "id": run_id,
        "target_dag_id": "my_region_day",
        "created_dag_run_id": None,
        "partition_key": key,
        "created_at": AT,
        "updated_at": AT,
    }


def _logged(log_id: int, run_id: int, key: str, target: str) -> dict[str, object]:
    return {**_log(log_id, key, "my_region_day", target), "asset_partition_dag_run_id": run_id}


def _store_off(session: Session, ids: list[int]) -> dict[int, dict[str, frozenset[str]]]:
    """The keys read from the log itself: nothing kept, the store off (``AIRFLOW_PARTITIONS_CACHE=off``)."""
    saved = (cache.RECEIVED.copy(), cache.STORES.copy(), cache.MIRRORS.copy())
    cache.RECEIVED.clear()
    cache.STORES.clear()
    cache.MIRRORS.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(store_file.STORE_VARIABLE, "off")
        found = received_keys(session, ids)
    cache.RECEIVED.clear()
    cache.STORES.clear()
    cache.MIRRORS.clear()
    cache.RECEIVED.update(saved[0])
    cache.STORES.update(saved[1])
    cache.MIRRORS.update(saved[2])
    return found


@pytest.mark.parametrize(
    ("process", "late"), [("same", False), ("new", False), ("same", True)], ids=["same", "new", "late"]
)
def test_a_key_the_watch_moves_out_of_a_pending_run_leaves_its_kept_keys(
    session: Session, process: str, late: bool
) -> None:
    """
    The trial of a region-day rollup whose s003 moved north to south: ``reroute`` deletes s003's
    key-log row from north's pending run (not its newest) and logs it in south's, with one audit-log
    row. North's kept keys must lose s003 at once, as read with the store off. *late*: another
    Dag's reroute row, id 10, was read first; this one's id is 5 (PostgreSQL commits a
    transaction's ids in any order): the count of reroute rows tells it.
    """
    from sqlalchemy import delete

    from airflow_partitions.tools.state.tables import log
    from airflow_partitions.tools.write.reroute import REROUTED_EVENT

    session.execute(insert(asset), [{"id": 1, "name": "store_days", "uri": "store_days"}])
    session.execute(
        insert(asset_partition_dag_run), [_run(1, "north|2026-12-06"), _run(2, "south|2026-12-06")]
    )
    session.execute(
        insert(partitioned_asset_key_log),
        [
            _logged(1, 1, "s001|2026-12-06", "north|2026-12-06"),
            _logged(2, 1, "s003|2026-12-06", "north|2026-12-06"),
            _logged(3, 2, "s005|2026-12-06", "south|2026-12-06"),
            _logged(4, 1, "s002|2026-12-06", "north|2026-12-06"),
        ],
    )
    if late:
        session.execute(insert(log).values(id=10, event=REROUTED_EVENT, dag_id="other_dag", dttm=AT))
    session.commit()
    before = {
        1: {"store_days": frozenset({"s001|2026-12-06", "s002|2026-12-06", "s003|2026-12-06"})},
        2: {"store_days": frozenset({"s005|2026-12-06"})},
    }
    assert received_keys(session, [1, 2]) == before
    session.commit()
    # What reroute writes in one transaction: s003's row of north's run deleted, one in south's.
    session.execute(delete(partitioned_asset_key_log).where(partitioned_asset_key_log.c.id == 2))
    session.execute(insert(partitioned_asset_key_log), [_logged(5, 2, "s003|2026-12-06", "south|2026-12-06")])
    session.execute(insert(log).values(id=5, event=REROUTED_EVENT, dag_id="my_region_day", dttm=AT))
    session.commit()
    if process == "new":
        _new_process()
    after = {
        1: {"store_days": frozenset({"s001|2026-12-06", "s002|2026-12-06"})},
        2: {"store_days": frozenset({"s003|2026-12-06", "s005|2026-12-06"})},
    }
    assert _store_off(session, [1, 2]) == after
    assert received_keys(session, [1, 2]) == after
