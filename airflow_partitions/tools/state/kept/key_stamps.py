"""
The key-log stamps of the open pending runs, kept in step with ``partitioned_asset_key_log``.

A pending run's stamp is the count and greatest id of its own key-log rows and when the run was
created (:func:`read_stamps`): Airflow only adds a pending run's rows, so an unchanged stamp means
unchanged keys, and the reader works out again only the pending runs whose stamp moved. The one
writer that deletes a row of a run that stays, ``reroute`` (a key that moved to another period),
writes an audit-log row of its Dag in the same transaction: each sync then reads again the stamps
of that Dag's open runs (:meth:`KeyStamps._rerouted`). The time
tells a run whose id SQLite gave again from the one it replaced (``discard`` deleted the newest
pending run and its keys, a new run took its id and its first key-log row the deleted row's id:
the same count and greatest id, other keys). Reading every open run's stamp
took a grouped count per 5,000 runs, 0.15 s of a ``status`` at a million partitions (27,000 open
runs); the stamps are kept instead in the mirror's SQLite file, beside the pending runs
(:class:`~airflow_partitions.tools.state.kept.mirror.Mirror`, which syncs them in its transaction),
and each sync reads again only the stamps of the runs a key-log row added since names.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from airflow_partitions.tools.state.kept.gaps import MAX_GAPS, Gaps, created, stamp
from airflow_partitions.tools.state.model import REROUTED_EVENT
from airflow_partitions.tools.state.sql import chunks, rows_among


class KeyStamps:
    """The open pending runs' key-log stamps of one metadata database (``db``), in *connection*'s file."""

    def __init__(self, connection: sqlite3.Connection, db: str) -> None:
        self.connection, self.db = connection, db
        connection.execute(
            "CREATE TABLE IF NOT EXISTS key_stamps (db TEXT NOT NULL, id INTEGER NOT NULL, "
            "n INTEGER NOT NULL, last INTEGER NOT NULL, PRIMARY KEY (db, id)) WITHOUT ROWID"
        )
        connection.execute(
            "CREATE TABLE IF NOT EXISTS key_reroutes (db TEXT PRIMARY KEY, top INTEGER NOT NULL, "
            "n INTEGER NOT NULL)"
        )
        self.gaps = Gaps(connection, "key_log_gaps", db)

    def sync(
        self,
        session: Any,
        mark: tuple[int | None, int | None],
        changed: tuple[set[int], set[int]],
        open_ids: Callable[[set[int] | None], set[int]],
    ) -> tuple[tuple[int | None, int | None], set[int]]:
        """
        Bring the stamps in step; return the new mark (the greatest key-log id, its time), the runs read.

        *mark* is the last sync's (``(None, None)``: start over); *changed* the ids of the rows the
        mirror's sync put open (new, or an id given again) and of the open rows it saw fire or go;
        *open_ids* (ids or ``None`` for all) returns those of them that the mirror holds open.
        A run's stamp is read again when it was put open, its Dag was rerouted (:meth:`_rerouted`),
        or a key-log row above the mark or in a gap names it: Airflow
        deletes a run's rows only with the run (its stale-fingerprint cleanup; ``clean`` and
        ``discard`` write an audit-log row, and the mirror starts over).
        Every open run's is read again at a start over and when the row at the mark is gone:
        SQLite gives a deleted newest row's id to the next one.
        """
        from sqlalchemy import func, select

        from airflow_partitions.tools.state.tables import log
        from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

        rows = select(key_log.c.id, key_log.c.asset_partition_dag_run_id)
        top = session.scalar(select(func.max(key_log.c.id))) or 0
        opened, left = changed
        rerouted = session.execute(
            select(func.max(log.c.id), func.count()).where(log.c.event == REROUTED_EVENT)
        ).one()
        if mark[0] is None or created(session, key_log, mark[0]) != mark[1]:
            self.connection.execute("DELETE FROM key_stamps WHERE db = ?", (self.db,))
            self.gaps.clear()
            since, touched = max(top - MAX_GAPS, 0), open_ids(None)
        else:
            since, touched = (
                mark[0],
                set(opened) | self._rerouted(session, (rerouted[0] or 0, rerouted[1]), open_ids),
            )
        self.connection.execute(
            "INSERT OR REPLACE INTO key_reroutes VALUES (?, ?, ?)", (self.db, rerouted[0] or 0, rerouted[1])
        )
        found, added = self.gaps.read(session, rows, key_log.c.id, since, top)
        touched = open_ids(touched | {row[1] for row in (*found, *added)})
        self.connection.executemany(
            "DELETE FROM key_stamps WHERE db = ? AND id = ?", [(self.db, i) for i in {*left, *touched}]
        )
        for chunk in chunks(sorted(touched)):
            self.connection.executemany(
                "INSERT INTO key_stamps VALUES (?, ?, ?, ?)",
                [(self.db, i, n, last) for i, (n, last, _) in read_stamps(session, chunk).items()],
            )
        return ((top or None), None if not top else created(session, key_log, top)), touched

    def _rerouted(
        self, session: Any, now: tuple[int, int], open_ids: Callable[[set[int] | None], set[int]]
    ) -> set[int]:
        """
        Return the open runs (held by the mirror) of the Dags ``reroute`` changed since the last sync.

        ``reroute`` (:mod:`airflow_partitions.tools.write.reroute`) is the one writer that deletes a
        key-log row of a pending run that stays: a key that moved out leaves the run's count and
        perhaps not its greatest id, and no row added names that run. It writes an audit-log row of
        its Dag (:data:`~airflow_partitions.tools.state.model.REROUTED_EVENT`) in the same
        transaction. *now* is the greatest id of those rows and their count (on Airflow's index of
        ``event``), kept per sync: the rows above the last sync's greatest name the Dags. If they
        are fewer than the count grew by, a row below it committed late (PostgreSQL gives ids at
        insert, not commit), or the file kept no mark yet: every open run's stamp is read again.
        """
        from sqlalchemy import select

        from airflow_partitions.tools.state.tables import log

        held = self.connection.execute("SELECT top, n FROM key_reroutes WHERE db = ?", (self.db,)).fetchone()
        if held is not None and tuple(held) == now:
            return set()
        found = (
            []
            if held is None
            else session.execute(
                select(log.c.id, log.c.dag_id).where(log.c.id > held[0], log.c.event == REROUTED_EVENT)
            ).all()
        )
        if held is None or len(found) < now[1] - held[1]:
            return open_ids(None)
        dags = {dag for _, dag in found if dag is not None}
        query = "SELECT id FROM pending_runs WHERE db = ? AND fired IS NULL AND dag IN ({})"
        return {apdr_id for (apdr_id,) in rows_among(self.connection, query, (self.db,), dags)}

    def stamps(self, apdr_ids: Iterable[int]) -> dict[int, tuple[int, int, int]]:
        """
        Return, as of the last sync, the stamps of those of the runs *apdr_ids* open with key-log rows.

        By id: a page asks for a few of the 27,000 open runs of a million partitions, whose every
        stamp took 0.03 s to read. The run's creation as the mirror holds it (:func:`~.gaps.stamp`).
        """
        query = (
            "SELECT k.id, k.n, k.last, p.created FROM key_stamps k JOIN pending_runs p "
            "ON p.db = k.db AND p.id = k.id WHERE k.db = ? AND k.id IN ({})"
        )
        return {
            i: (n, last, made)
            for i, n, last, made in rows_among(self.connection, query, (self.db,), apdr_ids)
        }


def read_stamps(session: Any, apdr_ids: list[int]) -> dict[int, tuple[int, int, int]]:
    """
    Return the key-log stamp of each of the pending runs *apdr_ids*: its own rows' count and greatest id.

    And when the run was created (:func:`~.gaps.stamp`: microseconds since 1970). One grouped
    count on Airflow's index of the pending run id (*apdr_ids* at most
    :data:`~airflow_partitions.tools.state.sql.CHUNK`); a run without rows is left out.
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as run
    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    column = key_log.c.asset_partition_dag_run_id
    query = own_logs(
        select(column, func.count(), func.max(key_log.c.id), func.max(run.c.created_at)), apdr_ids
    ).group_by(column)
    return {apdr_id: (n, last, stamp(made)) for apdr_id, n, last, made in session.execute(query).all()}


def own_logs(query: Any, apdr_ids: list[int]) -> Any:
    """
    Restrict *query* (on ``partitioned_asset_key_log``) to the rows of the pending runs *apdr_ids* themselves.

    Airflow links a key-log row to its pending run by the run's id alone, without a foreign key:
    on SQLite, deleting a Dag run deletes its pending run (``ON DELETE CASCADE``) but leaves its
    key-log rows, and a new pending run can take the freed id (SQLite reuses the greatest rowid).
    A row is the run's own only if it names the run's Dag and partition key; the others were
    another run's (they made the count of runs that can never complete raise ``ValueError``,
    reading a key of another Dag or period against this run's).
    """
    from airflow_partitions.tools.state.tables import asset_partition_dag_run, partitioned_asset_key_log

    log, run = partitioned_asset_key_log, asset_partition_dag_run
    return query.join(run, run.c.id == log.c.asset_partition_dag_run_id).where(
        log.c.asset_partition_dag_run_id.in_(apdr_ids),
        log.c.target_dag_id == run.c.target_dag_id,
        log.c.target_partition_key == run.c.partition_key,
    )
