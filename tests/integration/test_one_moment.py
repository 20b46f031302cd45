"""
One answer is read at one moment (tools/state/database.py's one_moment), on SQLite and PostgreSQL.

A read's counts by state (the tally, kept under the Dag's fingerprint) and its page of partitions
(the runs read by key) come from many queries; runs that change between them once gave
``states`` with 2 running while ``partitions`` had both succeeded. Here two runs of a Dag are
running when a read begins; another connection commits both as succeeded in the middle of it.
Everything the read reads after, the fingerprint's runs (read on a connection of its own on
PostgreSQL) and the mirror of the pending runs included, must be what it read before. And a
reader whose snapshot is older than the one another process synced the mirror from reads the
mirror as it is: it never takes it back (a start over, under a new token).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import create_engine, insert, update
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept.cache import at_one_moment, mirror_for
from airflow_partitions.tools.state.kept.fingerprint import fingerprints
from airflow_partitions.tools.state.runs import run_states
from airflow_partitions.tools.state.tables import dag_run, metadata
from airflow_partitions.tools.state.tally import tally_of
from tests.support.launcher import scratch_database

DAG = "store_region_day"
WHEN = datetime(2026, 3, 10, 4, tzinfo=UTC)
KEYS = ("north|2026-03-09", "south|2026-03-09")


def reader() -> Any:
    """What tally_of asks of a Dag's reader: its mappers' key, identity; no pending runs to answer for."""
    return SimpleNamespace(
        dag_id=DAG, identity=DAG, answers=SimpleNamespace(key="v1"), now=WHEN, may_fire_incomplete=False
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An engine without a pool (the command line's) on the reader's tables, two runs running; a store."""
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "store.sqlite"))
    for memo in ("KEPT", "STORES", "MIRRORS"):
        monkeypatch.setattr(cache, memo, type(getattr(cache, memo))())
    with scratch_database(request.param, tmp_path) as url:
        engine = create_engine(url, poolclass=NullPool)
        if request.param == "sqlite":
            with engine.connect() as connection:
                connection.exec_driver_sql("PRAGMA journal_mode=WAL")  # as Airflow's tests run it
        metadata.create_all(engine)
        with engine.begin() as connection:
            connection.execute(
                insert(dag_run),
                [
                    {"dag_id": DAG, "run_id": key, "partition_key": key, "state": "running"}
                    | {"run_type": "asset_triggered", "run_after": WHEN}
                    for key in KEYS
                ],
            )
        yield engine
        engine.dispose()


def _succeed(engine: Any) -> None:
    """Another process: both runs succeed, committed."""
    with engine.begin() as connection:
        connection.execute(update(dag_run).where(dag_run.c.dag_id == DAG).values(state="success"))


def _read(connection: Any) -> tuple[Any, dict[str, int], dict[str, list[str]]]:
    """The fingerprint, the counts by state (tally_of) and the runs' states by key (the page's query)."""
    prints = fingerprints([DAG], connection)
    counts = tally_of({DAG: reader()}, connection, None, None, None, 10, True, prints)[DAG][0]
    return prints[DAG], counts, run_states(DAG, KEYS, connection)


@pytest.mark.parametrize("kind", ["connection", "orm session"])
def test_a_read_sees_the_runs_as_they_were_when_it_began(engine: Any, kind: str) -> None:
    """On the command line's Core connection, and on an ORM session (Airflow's, in the api-server)."""
    with engine.connect() if kind == "connection" else Session(engine) as connection:
        at_one_moment(connection)
        before = _read(connection)
        _succeed(engine)
        assert _read(connection) == before
        assert before[1:] == ({"running": 2}, {key: ["running"] for key in KEYS})
    with engine.connect() as connection:  # a read begun after: both succeeded
        assert _read(connection)[1:] == ({"success": 2}, {key: ["success"] for key in KEYS})


def test_a_read_begun_before_another_process_synced_never_takes_the_mirror_back(engine: Any) -> None:
    with engine.connect() as connection:
        at_one_moment(connection)
        token = mirror_for(connection).versions([DAG])[DAG][0]
        with engine.begin() as other:
            other.execute(
                insert(dag_run).values(
                    dag_id=DAG, run_id="new", state="queued", run_type="manual", run_after=WHEN
                )
            )
        with engine.connect() as other:  # a later process syncs the shared copy
            assert mirror_for(other).versions([DAG])[DAG][0] == token
        cache.MIRRORS.clear()  # as in another process: the copy is read from the file
        assert mirror_for(connection).versions([DAG])[DAG][0] == token
