"""
A Dag's fingerprint (tools/state/kept/fingerprint.py) on a real SQLite file and a real PostgreSQL server.

On PostgreSQL the runs' part is read on a connection of its own while the mirror syncs; it must be
what the rows say on both databases: the number of runs and, per state but ``success``, the count
and the BLAKE2b digest of the sorted ids (8 bytes each, the machine's order), worked out here in
Python from the rows written.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, insert, update
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept.fingerprint import fingerprints
from airflow_partitions.tools.state.tables import dag_run, metadata
from tests.support.launcher import scratch_database

DAGS = ("store_region_day", "weather_local_day_jfk")
STATES = ("success", "failed", "running", None, "queued")
WHEN = datetime(2026, 3, 10, 4, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def session(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Session]:
    """A session on the reader's tables, 300 runs of the first Dag and 120 of the second; no store."""
    monkeypatch.setenv(store_file.STORE_VARIABLE, "off")
    monkeypatch.setattr(cache, "STORES", {})
    monkeypatch.setattr(cache, "MIRRORS", {})
    with scratch_database(request.param, tmp_path) as url:
        engine = create_engine(url, poolclass=NullPool)  # as the command line's: the runs read apart
        metadata.create_all(engine)
        with Session(engine) as new:
            rows = [(DAGS[0], i) for i in range(300)] + [(DAGS[1], i) for i in range(120)]
            new.execute(
                insert(dag_run),
                [
                    {
                        "dag_id": dag,
                        "run_id": f"r{n}",
                        "state": STATES[n % 5],
                        "run_type": "manual",
                        "run_after": WHEN,
                    }
                    for dag, n in rows
                ],
            )
            new.commit()
            yield new
        engine.dispose()


def expected(session: Session, dag_id: str) -> tuple[object, ...]:
    """The runs' part worked out in Python from the rows: count, then per state but success."""
    rows = session.execute(dag_run.select().where(dag_run.c.dag_id == dag_id)).all()
    by_state: dict[str, list[int]] = {}
    for row in rows:
        if row.state != "success":
            by_state.setdefault(str(row.state), []).append(row.id)
    digests = [
        (
            state,
            len(ids),
            hashlib.blake2b(
                b"".join(i.to_bytes(8, sys.byteorder) for i in sorted(ids)), digest_size=16
            ).hexdigest(),
        )
        for state, ids in by_state.items()
    ]
    return (len(rows), tuple(sorted(digests)))


def test_the_runs_part_is_what_the_rows_say_and_moves_with_a_state(session: Session) -> None:
    prints = fingerprints(list(DAGS), session)
    assert [prints[dag][0] for dag in DAGS] == [expected(session, dag) for dag in DAGS]
    assert prints[DAGS[0]][0][0] == 300 and prints[DAGS[1]][0][0] == 120
    first = session.scalar(
        dag_run.select().with_only_columns(dag_run.c.id).where(dag_run.c.state == "running")
    )
    session.execute(update(dag_run).where(dag_run.c.id == first).values(state="success"))
    session.commit()
    after = fingerprints(list(DAGS), session)
    assert after[DAGS[0]][0] == expected(session, DAGS[0]) != prints[DAGS[0]][0]
    assert after[DAGS[1]] == prints[DAGS[1]]
