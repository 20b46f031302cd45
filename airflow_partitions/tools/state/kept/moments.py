"""
When the snapshot a process syncs the mirror of the pending runs from was taken, on PostgreSQL.

A reader reads at one moment (:func:`~airflow_partitions.tools.state.database.one_moment`: one
snapshot per answer). Another process may sync the mirror (:class:`~airflow_partitions.tools.
state.mirror.Mirror`) from a later snapshot meanwhile: the older rows would take the copy back
(a Dag run it saw above the newest the older snapshot holds: a start over, 90 s at a million
partitions). The mirror keeps the moment of the newest snapshot it synced from, and is read as
it is by a snapshot older than that: it holds everything that snapshot holds.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from airflow_partitions.tools.state.database import engine_of


def moment_of(session: Any) -> int | None:
    """
    Return when the snapshot *session* reads was taken, comparable across processes; ``None``: unknown.

    On PostgreSQL, the first transaction id not yet given then (``xmax`` of
    ``pg_current_snapshot()``, ``1234``): a snapshot with a smaller one was taken before, and
    every transaction it sees committed the later one sees too. SQLite tells none: a reader there
    syncs before its snapshot begins (:func:`~airflow_partitions.tools.state.kept.cache.at_one_moment`).
    """
    if engine_of(session).dialect.name != "postgresql":
        return None
    from sqlalchemy import text

    return int(session.scalar(text("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint")))


class Moments:
    """The moment of the newest snapshot the mirror of one metadata database (``db``) synced from."""

    def __init__(self, connection: sqlite3.Connection, db: str) -> None:
        self.connection, self.db = connection, db
        connection.execute(
            "CREATE TABLE IF NOT EXISTS pending_moments (db TEXT PRIMARY KEY, moment INTEGER NOT NULL)"
        )

    def not_behind(self, moment: int | None) -> bool:
        """
        Whether a snapshot taken at *moment* (:func:`moment_of`) is no older than the newest synced from.

        If so, *moment* is kept as the newest (the mirror's lock held, in its transaction).
        """
        if moment is None:
            return True
        held = self.connection.execute(
            "SELECT moment FROM pending_moments WHERE db = ?", (self.db,)
        ).fetchone()
        if held is not None and moment < held[0]:
            return False
        self.connection.execute("INSERT OR REPLACE INTO pending_moments VALUES (?, ?)", (self.db, moment))
        return True
