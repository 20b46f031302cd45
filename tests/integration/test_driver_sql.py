"""
The mirror's reads on the driver's own cursor (:mod:`airflow_partitions.tools.state.sql`), on a
real SQLite file and a real PostgreSQL server: their placeholders and arrays are the driver's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from airflow_partitions.tools.state.sql import ids_without, rows_by_id
from tests.support.launcher import scratch_database


@pytest.fixture(params=["sqlite", "postgresql"])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Session]:
    """A session on a database holding ``runs``: ids 1 to 12,000, every third one fired (``fired`` set)."""
    with scratch_database(request.param, tmp_path) as url:
        engine = create_engine(url)
        with Session(engine) as new:
            new.execute(text("CREATE TABLE runs (id INTEGER PRIMARY KEY, fired INTEGER)"))
            new.execute(
                text("INSERT INTO runs VALUES (:id, :fired)"),
                [{"id": i, "fired": 500 + i if i % 3 == 0 else None} for i in range(1, 12_001)],
            )
            new.commit()
            yield new
        engine.dispose()


def test_ids_without_returns_the_ids_fired_or_without_a_row(session: Session) -> None:
    asked = [*range(11_990, 12_006), *range(1, 7)]  # 12,001 to 12,005: no row
    found = ids_without(session, "runs", "t.fired IS NULL", asked)
    assert sorted(found) == [3, 6, 11_991, 11_994, 11_997, 12_000, 12_001, 12_002, 12_003, 12_004, 12_005]


def test_ids_without_over_many_ids_in_one_call(session: Session) -> None:
    """More ids than one chunk of an ``IN`` list (5,000): every one compared."""
    found = ids_without(session, "runs", "t.fired IS NULL", list(range(1, 12_001)))
    assert len(found) == 4_000 and set(found) == set(range(3, 12_001, 3))


def test_rows_by_id_reads_each_row_once_across_chunks(session: Session) -> None:
    rows = rows_by_id(session, "SELECT id, fired FROM runs WHERE id IN ({})", list(range(4_990, 10_011)))
    assert len(rows) == 5_021
    assert dict(rows)[9_999] == 10_499 and dict(rows)[10_000] is None
