"""
The day each key of the store's answers was last used, and the pruning of the keys unused for a week.

The answers of :class:`~airflow_partitions.tools.state.kept.store.Store` are kept under keys that are
never asked again once what they were worked out under changes: a Dag's answers are under its
serialized version and :func:`~airflow_partitions.tools.state.kept.store.environment` (this package's
files, Airflow's and the calendars' libraries' versions), the answers read from its rows under
the environment too. Without pruning, the file grows by a Dag's every answer at each upgrade (in
the benchmark, 1.8 GB after a dozen code changes at a million partitions). Each key's last day of
use is kept in the table ``used`` (``day``: days since 1970-01-01, UTC); once a day the answers of
the keys unused for :data:`KEEP_DAYS` days are deleted, at most :data:`PRUNED_AT_ONCE` per
process, the rest by the next. A pruned answer is worked out again if asked: slower, never wrong.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection

from airflow_partitions.tools.state.sql import rows_among

#: Days a key of the store is kept unused (a week: a Dag read on working days keeps its answers).
KEEP_DAYS = 7

#: The most answers one process deletes (about 0.1 s of SQLite): a large stale key is deleted over
#: several processes, so that no command waits seconds on the pruning.
PRUNED_AT_ONCE = 50_000

#: The key of ``used`` holding the day of the last pruning that deleted every stale key.
PRUNED = ""

SCHEMA = "CREATE TABLE IF NOT EXISTS used (dag TEXT PRIMARY KEY, day INTEGER NOT NULL) WITHOUT ROWID"


def today() -> int:
    """Return today's day number: days since 1970-01-01, UTC (2026-12-06 is 20,793)."""
    return int(time.time() // 86_400)


class Uses:
    """
    The days of last use of the keys of the store's table ``answers``, on its SQLite *connection*.

    Its methods run in the caller's transaction; a SQLite error goes to the caller (the store then
    turns itself off).
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        connection.execute(SCHEMA)

    def unrecorded(self, keys: Collection[str], day: int) -> list[str]:
        """Return those of *keys* whose day of last use is not yet *day* (a read: no lock taken)."""
        query = "SELECT dag FROM used WHERE day >= ? AND dag IN ({})"
        recorded = {dag for (dag,) in rows_among(self.connection, query, (day,), keys)}
        return sorted(set(keys) - recorded)

    def record(self, keys: Collection[str], day: int) -> None:
        """Set the day of last use of *keys* to *day*."""
        self.connection.executemany("INSERT OR REPLACE INTO used VALUES (?, ?)", [(key, day) for key in keys])

    def due(self, day: int) -> bool:
        """Whether the keys unused for a week may be left: no pruning deleted them all on *day* yet."""
        last = self.connection.execute("SELECT day FROM used WHERE dag = ?", (PRUNED,)).fetchone()
        return last is None or last[0] < day

    def prune(self, day: int) -> int:
        """
        Delete the answers of the keys unused since :data:`KEEP_DAYS` days before *day*; return how many.

        At most :data:`PRUNED_AT_ONCE`; once every stale key is gone, :meth:`due` is false until
        the next day. A key of answers with no day of use (stored before this table, or by an older version of
        this package) is given *day* first, so it is deleted only after a week unused.
        """
        self.connection.executemany(
            "INSERT OR IGNORE INTO used VALUES (?, ?)", [(key, day) for key in self._keys()]
        )
        deleted = 0
        stale = self.connection.execute(
            "SELECT dag FROM used WHERE day < ? AND dag != ?", (day - KEEP_DAYS, PRUNED)
        ).fetchall()
        for (key,) in stale:
            deleted += self.connection.execute(
                "DELETE FROM answers WHERE dag = ? AND question IN "
                "(SELECT question FROM answers WHERE dag = ? LIMIT ?)",
                (key, key, PRUNED_AT_ONCE - deleted),
            ).rowcount
            if self.connection.execute("SELECT 1 FROM answers WHERE dag = ? LIMIT 1", (key,)).fetchone():
                return deleted  # this process's share is deleted: the next goes on
            self.connection.execute("DELETE FROM used WHERE dag = ?", (key,))
        self.connection.execute("INSERT OR REPLACE INTO used VALUES (?, ?)", (PRUNED, day))
        return deleted

    def _keys(self) -> list[str]:
        """Return every key of ``answers``: one index seek per key, not a scan of every answer."""
        return [
            key
            for (key,) in self.connection.execute(
                "WITH RECURSIVE keys(dag) AS (SELECT min(dag) FROM answers UNION ALL "
                "SELECT (SELECT min(dag) FROM answers WHERE dag > keys.dag) FROM keys WHERE dag IS NOT NULL) "
                "SELECT dag FROM keys WHERE dag IS NOT NULL"
            )
        ]
