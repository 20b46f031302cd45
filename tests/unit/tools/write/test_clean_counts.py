"""
clean's dry run on a real SQLite database: its counts equal counts worked out independently,
whatever the rows (hypothesis), and a pending run deleted with its Dag run is not counted though
the mirror of the pending runs still holds it and its key-log rows stay.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, delete, insert
from sqlalchemy.orm import Session

from airflow_partitions.tools.errors import UnknownDag
from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept.cache import mirror_for
from airflow_partitions.tools.state.tables import asset_partition_dag_run, dag_run, metadata
from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log
from airflow_partitions.tools.write.clean import _scanned, fired_rows

START = datetime(2026, 3, 1, tzinfo=UTC)
BEFORE = START + timedelta(days=10)

#: A pending run: its Dag, whether it fired, the day it was opened (0 to 19), its keys (0 to 3), and
#: whether its row is deleted before the mirror copies the table (its key-log rows left behind, as
#: SQLite's cascade from a deleted Dag run leaves them).
RUNS = st.lists(
    st.tuples(
        st.sampled_from(["hourly_into_days", "weekly"]),
        st.booleans(),
        st.integers(0, 19),
        st.integers(0, 3),
        st.booleans(),
    ),
    max_size=40,
)


@pytest.fixture
def fresh() -> Iterator[None]:
    """Nothing of the store or the mirror kept in the process (each example a new database)."""
    saved = (dict(cache.STORES), dict(cache.MIRRORS))
    yield
    for kept, before in zip((cache.STORES, cache.MIRRORS), saved, strict=True):
        kept.clear()
        kept.update(before)


def _database(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(folder / "store.sqlite"))
    cache.STORES.clear()
    cache.MIRRORS.clear()
    engine = create_engine(f"sqlite:///{folder / 'airflow.db'}")
    metadata.create_all(engine)
    return Session(engine)


def _write(session: Session, runs: list[tuple[str, bool, int, int, bool]]) -> list[int]:
    """Write *runs* as Airflow does (a Dag run for each that fired); return the ids of those deleted."""
    deleted = []
    for i, (dag, fired, day, keys, gone) in enumerate(runs, 1):
        opened = START + timedelta(days=day)
        if fired:
            session.execute(
                insert(dag_run).values(
                    id=i, dag_id=dag, run_id=f"run_{i}", partition_key=f"2026-03-{day + 1:02d}",
                    state="success", run_type="asset_triggered", run_after=opened, updated_at=opened,
                )
            )  # fmt: skip
        session.execute(
            insert(asset_partition_dag_run).values(
                id=i, target_dag_id=dag, created_dag_run_id=i if fired else None,
                partition_key=f"2026-03-{day + 1:02d}", created_at=opened, updated_at=opened,
            )
        )  # fmt: skip
        for k in range(keys):
            session.execute(
                insert(key_log).values(
                    asset_id=1, asset_event_id=100 * i + k, asset_partition_dag_run_id=i,
                    source_partition_key=f"2026-03-{day + 1:02d}T{k:02d}", target_dag_id=dag,
                    target_partition_key=f"2026-03-{day + 1:02d}", created_at=opened,
                )
            )  # fmt: skip
        if gone:
            deleted.append(i)
    session.execute(delete(asset_partition_dag_run).where(asset_partition_dag_run.c.id.in_(deleted)))
    session.commit()
    return deleted


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=RUNS, only=st.sampled_from([None, "weekly"]))
def test_the_counts_equal_the_rows_left_fired_before_the_date(
    runs: list[tuple[str, bool, int, int, bool]],
    only: str | None,
    fresh: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with tempfile.TemporaryDirectory() as folder, _database(Path(folder), monkeypatch) as session:
        _write(session, runs)
        # Worked out independently: the rows left, fired, opened before the 11th, of the Dag asked.
        expected: dict[str, list[int]] = {}
        for dag, fired, day, keys, gone in runs:
            if fired and not gone and day < 10 and only in (None, dag):
                counts = expected.setdefault(dag, [0, 0])
                counts[0] += 1
                counts[1] += keys
        assert _scanned(BEFORE, only, session) == expected
        if only is not None and not expected:  # no rows of it, and no serialized Dag of that name
            with pytest.raises(UnknownDag, match="no Dag 'weekly'"):
                fired_rows(BEFORE, dag_id=only, session=session)
        else:
            assert fired_rows(BEFORE, dag_id=only, session=session).by_dag == expected
        session.get_bind().dispose()


def test_a_pending_run_deleted_with_its_dag_run_is_not_counted(
    tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _database(tmp_path, monkeypatch) as session:
        runs = [("weekly", True, 0, 2, False), ("weekly", True, 1, 3, False), ("weekly", True, 2, 1, False)]
        _write(session, runs)
        mirror_for(session)  # copied with the three fired rows
        session.commit()
        # An older Dag run deleted (not the newest, which would start the copy over): its pending
        # run goes with it (Airflow's cascade), its key-log rows stay.
        session.execute(delete(asset_partition_dag_run).where(asset_partition_dag_run.c.id == 2))
        session.execute(delete(dag_run).where(dag_run.c.id == 2))
        session.commit()
        assert fired_rows(BEFORE, session=session).by_dag == {"weekly": [2, 3]}
