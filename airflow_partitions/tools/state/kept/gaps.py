"""
Ids a copy of an Airflow table reads again: the gaps below a row read that no row had.

The mirror of the pending runs (:mod:`~airflow_partitions.tools.state.kept.mirror`) and the key-log
stamps (:mod:`~airflow_partitions.tools.state.kept.key_stamps`) read an Airflow table's rows above the
greatest id they hold. An id below a row read may still get its row: PostgreSQL may commit a
transaction's row after a later id's, and on SQLite a deleted newest row's id is given to the next
one. Such ids are kept as gaps, in a table of the store's SQLite file, and read again on each sync
for :data:`GAP_HOURS` (Airflow's transactions that write these rows last milliseconds). Times are
microseconds since 1970-01-01 UTC (:func:`stamp`), which sort as the times do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow_partitions.tools.state.sql import chunks

#: How long an id skipped by a later row is read again: Airflow's transactions last milliseconds.
GAP_HOURS = 1
#: The most ids kept as skipped (the newest), so that a sweep of deleted rows keeps no long list.
MAX_GAPS = 50_000

#: The stored times are microseconds since this instant (UTC), which sort as the times do.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def stamp(value: datetime) -> int:
    """Return *value* (aware; naive is UTC) as microseconds since :data:`EPOCH`."""
    return ((value if value.tzinfo is not None else value.replace(tzinfo=UTC)) - EPOCH) // MICROSECOND


def instant(stamped: int) -> datetime:
    """Return the aware UTC time :func:`stamp` gave *stamped* (microseconds since :data:`EPOCH`)."""
    return EPOCH + stamped * MICROSECOND


def created(session: Any, table: Any, row_id: int) -> int | None:
    """Return when the row *row_id* of *table* was created (:func:`stamp`); ``None``: no such row."""
    from sqlalchemy import select

    at = session.scalar(select(table.c.created_at).where(table.c.id == row_id))
    return None if at is None else stamp(at)


class Gaps:
    """The gaps of one copied table of one metadata database (``db``): the table *table* of *connection*."""

    def __init__(self, connection: sqlite3.Connection, table: str, db: str) -> None:
        self.connection, self.table, self.db = connection, table, db
        connection.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (db TEXT NOT NULL, id INTEGER NOT NULL, "
            "seen INTEGER NOT NULL, PRIMARY KEY (db, id)) WITHOUT ROWID"
        )

    def ids(self) -> list[int]:
        """Return the ids kept as gaps."""
        return [
            row[0] for row in self.connection.execute(f"SELECT id FROM {self.table} WHERE db = ?", (self.db,))
        ]

    def add(self, ids: Iterable[int]) -> None:
        """Keep *ids* as gaps, seen now."""
        now = stamp(datetime.now(UTC))
        self.connection.executemany(
            f"INSERT OR IGNORE INTO {self.table} VALUES (?, ?, ?)", [(self.db, i, now) for i in ids]
        )

    def found(self, ids: Iterable[int]) -> None:
        """Drop *ids*, whose rows were read."""
        self.connection.executemany(
            f"DELETE FROM {self.table} WHERE db = ? AND id = ?", [(self.db, i) for i in ids]
        )

    def expire(self) -> None:
        """Drop the gaps kept for longer than :data:`GAP_HOURS`."""
        expired = stamp(datetime.now(UTC) - timedelta(hours=GAP_HOURS))
        self.connection.execute(f"DELETE FROM {self.table} WHERE db = ? AND seen < ?", (self.db, expired))

    def read(self, session: Any, rows: Any, column: Any, since: int, top: int) -> tuple[list[Any], list[Any]]:
        """
        Return the rows of *rows* (a select, the id *column* first) in a gap, and those above *since*.

        Up to *top*, the greatest id now. The gaps found are dropped, the ids skipped above *since*
        kept, those kept for longer than :data:`GAP_HOURS` dropped.
        """
        found = [row for ids in chunks(self.ids()) for row in session.execute(rows.where(column.in_(ids)))]
        self.found(row[0] for row in found)
        added = session.execute(rows.where(column > since, column <= top)).all()
        self.add(skipped(since, top, {row[0] for row in added}))
        self.expire()
        return found, added

    def clear(self) -> None:
        """Drop every gap (a start over)."""
        self.connection.execute(f"DELETE FROM {self.table} WHERE db = ?", (self.db,))


def skipped(start: int, top: int, present: set[int]) -> list[int]:
    """Return the ids above *start* up to *top* that are not in *present*: the newest :data:`MAX_GAPS`."""
    return [i for i in range(max(start, top - MAX_GAPS) + 1, top + 1) if i not in present]
