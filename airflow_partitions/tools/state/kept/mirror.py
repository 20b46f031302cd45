"""
A copy of Airflow's pending partitioned runs (``asset_partition_dag_run``), kept in step by id.

Airflow indexes none of that table's columns but its id, so each question about pending runs (a
Dag's open ones, the scheduler's queue of all of them, the pending run a Dag run fired from, the
fingerprint) scanned the whole table: four scans of 2,100,000 rows, 3.4 s of a ``status`` at a
million partitions. The mirror holds the columns the reader reads, indexed, in the SQLite file of
the store (:class:`~airflow_partitions.tools.state.kept.store.Store`; in memory for the process when
there is none), and reads from Airflow only what may have changed since the last read:

- rows added: ``id`` above the greatest seen (Airflow's primary key);
- open rows (``created_dag_run_id`` unset), read again by id every time: Airflow fires them,
  its stale-fingerprint cleanup and ``discard`` delete them, and SQLite gives the id of a deleted
  newest row to the next one;
- fired rows, which Airflow never changes again (:class:`~airflow.models.asset.AssetPartitionDagRun`)
  and deletes only with their Dag run (its foreign key's ``ON DELETE CASCADE``) or ``clean``
  does. A fired row whose Dag run was deleted stays in the mirror, harmless: it is only asked
  about by the id of a Dag run read from ``dag_run`` (:meth:`Mirror.came_from`,
  :meth:`Mirror.fired_of`), and no Dag run has that id again unless SQLite gives it to a new one,
  which it does only once the newest Dag run seen is gone: then, or when an audit-log row of
  ``clean`` or ``discard`` was written since, the mirror starts over. (Counting ``dag_run`` to see
  deletions took 0.13 s of every read at a million.) ``clean --yes`` writes its rows when it is
  done: a read while it runs may still see rows it has deleted, never after.

Each Dag's version goes up whenever one of its rows changes, its run version whenever a Dag run
of it is added (read by id above the greatest seen, :meth:`Mirror._runs_added`); with the mirror's
token (new at each start over) they are part of the Dag's fingerprint
(:func:`~airflow_partitions.tools.state.kept.fingerprint.fingerprints`). Times are kept as microseconds
since 1970-01-01 UTC, which sort as the times do.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
import weakref
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any, NamedTuple

from airflow_partitions.tools.state.kept.gaps import MAX_GAPS, Gaps, created, instant, skipped, stamp
from airflow_partitions.tools.state.kept.key_stamps import KeyStamps
from airflow_partitions.tools.state.kept.moments import Moments, moment_of
from airflow_partitions.tools.state.model import CLEANED_EVENT, DISCARDED_EVENT
from airflow_partitions.tools.state.sql import chunks, ids_without, rows_among, rows_by_id

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS pending_runs (db TEXT NOT NULL, id INTEGER NOT NULL, dag TEXT NOT NULL, "
    "key TEXT NOT NULL, fired INTEGER, created INTEGER NOT NULL, "
    "PRIMARY KEY (db, id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS pending_runs_by_fired ON pending_runs (db, fired, created, id)",
    "CREATE INDEX IF NOT EXISTS pending_runs_by_dag ON pending_runs (db, dag, fired)",
    # The open rows alone, with every column :meth:`Mirror.open_runs` reads: 27,000 rows at a
    # million partitions in 0.03 s, against 0.06 s looking each up among the 2,100,000.
    "CREATE INDEX IF NOT EXISTS pending_runs_open ON pending_runs (db, created, id, dag, key, fired) "
    "WHERE fired IS NULL",
    "CREATE TABLE IF NOT EXISTS pending_marks (db TEXT PRIMARY KEY, token TEXT NOT NULL, "
    "newest_run INTEGER, newest_run_id TEXT, "
    "audit INTEGER NOT NULL, witness INTEGER, witness_created INTEGER, "
    "log_mark INTEGER, log_mark_created INTEGER)",
    "CREATE TABLE IF NOT EXISTS pending_versions (db TEXT NOT NULL, dag TEXT NOT NULL, "
    "version INTEGER NOT NULL, PRIMARY KEY (db, dag)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS key_versions (db TEXT NOT NULL, dag TEXT NOT NULL, "
    "version INTEGER NOT NULL, PRIMARY KEY (db, dag)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS run_versions (db TEXT NOT NULL, dag TEXT NOT NULL, "
    "version INTEGER NOT NULL, PRIMARY KEY (db, dag)) WITHOUT ROWID",
)

#: Rows copied per batch (a start over streams the table: 2,100,000 rows at a million partitions).
BATCH = 10_000


class PendingRun(NamedTuple):
    """An open pending run as the mirror holds it: ``created_at`` aware, UTC."""

    id: int
    dag_id: str
    partition_key: str
    created_at: datetime


class Mirror:
    """The pending runs of one metadata database, in step with it after :meth:`sync` (see the module)."""

    def __init__(
        self, connection: sqlite3.Connection, db: str, lock: threading.Lock, received: str | None = None
    ) -> None:
        self.connection = connection
        #: The database's digest: one file may hold the mirrors of several databases.
        self.db = db
        #: In the store's file, the store's key of the keys logged per pending run
        #: (:attr:`~airflow_partitions.tools.state.kept.store.Store.received`): a start over deletes
        #: those of the runs no longer in the database (``clean`` deleted them).
        self.received = received
        self.lock = lock
        with lock:
            columns = {row[1] for row in connection.execute("PRAGMA table_info(pending_marks)")}
            if columns and ("log_mark" not in columns or "runs" in columns):  # an older file's: start over
                connection.execute("DROP TABLE pending_marks")
            for statement in SCHEMA:
                connection.execute(statement)
            self.gaps = Gaps(connection, "pending_gaps", db)
            self.run_gaps = Gaps(connection, "run_gaps", db)
            #: The open runs' key-log stamps, synced with the runs.
            self.key_stamps = KeyStamps(connection, db)
            self.moments = Moments(connection, db)
        #: The transaction the last :meth:`sync` read in: a read syncs once, whatever it asks.
        self._synced: Any = None
        #: Whether a :meth:`sync` of this process finished (the copy is made, in step).
        self.copied = False
        #: The open pending runs, oldest first, and the stamp of the copy they were read from
        #: (:meth:`_open_stamp`): kept across syncs while no run changed (a long-lived api-server
        #: built 27,000 of them again on every request at a million partitions).
        self._open: tuple[tuple[str, float], list[PendingRun]] | None = None
        #: The ids of the rows this sync put as open (new, or an id given again), and of the open
        #: rows it saw fire or go: their key-log stamps are read again, or dropped.
        self._opened: set[int] = set()
        self._left: set[int] = set()

    def sync(self, session: Any) -> None:
        """
        Bring the mirror in step with the database *session* reads (once per transaction of it).

        Once per transaction, not per session: a session Airflow scopes to the thread
        (``create_session()``) is the same object for every read of a long-lived process.
        """
        current = session.get_transaction() if hasattr(session, "get_transaction") else None
        if current is not None and self._synced is not None and self._synced() is current:
            return
        from sqlalchemy import func, select

        from airflow_partitions.tools.state.tables import dag_run, log

        newest = session.scalar(select(func.max(dag_run.c.id)))
        newest_run_id = _newest_run_id(session, newest)
        audit = session.scalar(
            select(func.max(log.c.id)).where(log.c.event.in_([CLEANED_EVENT, DISCARDED_EVENT]))
        )
        moment = moment_of(session)
        with self.lock:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                if self.moments.not_behind(moment):  # else read as it is (:mod:`~.moments`)
                    self._step(session, newest, newest_run_id, audit or 0)
                self.connection.execute("COMMIT")
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.copied = True
        try:
            self._synced = weakref.ref(session.get_transaction())
        except (AttributeError, TypeError):  # no transaction to refer to: sync on every question
            self._synced = None

    def _step(self, session: Any, newest: int | None, newest_run_id: str | None, audit: int) -> None:
        """Read what changed since the marks (or start over), then move them (lock held, in a transaction)."""
        from airflow_partitions.tools.state.tables import asset_partition_dag_run as apdr

        marks = self.connection.execute(
            "SELECT newest_run, newest_run_id, audit, witness, witness_created, log_mark, "
            "log_mark_created FROM pending_marks WHERE db = ?",
            (self.db,),
        ).fetchone()
        self._opened, self._left = set(), set()
        if marks is None or marks[1] != _newest_run_id(session, marks[0]) or marks[2] != audit:
            self._start_over(session)
            log_mark, touched = self.key_stamps.sync(
                session, (None, None), (self._opened, self._left), self._open_ids
            )
        else:
            self._read_changes(session, marks[3], marks[4])
            self._bump("run_versions", self._runs_added(session, marks[0] or 0, newest))
            log_mark, touched = self.key_stamps.sync(
                session, marks[5:7], (self._opened, self._left), self._open_ids
            )
        self._bump("key_versions", {dag for (dag,) in self._held("dag", touched)})
        witness = self.connection.execute(
            "SELECT max(id) FROM pending_runs WHERE db = ?", (self.db,)
        ).fetchone()[0]
        self.connection.execute(
            "UPDATE pending_marks SET newest_run = ?, newest_run_id = ?, audit = ?, "
            "witness = ?, witness_created = ?, log_mark = ?, log_mark_created = ? WHERE db = ?",
            (
                newest,
                newest_run_id,
                audit,
                witness,
                None if witness is None else created(session, apdr, witness),
                *log_mark,
                self.db,
            ),
        )

    def _start_over(self, session: Any) -> None:
        """
        Copy every row again, under a new token (every Dag's fingerprint changes).

        The store's logged keys of the runs not copied are deleted (:attr:`received`).
        """
        self.connection.execute("DELETE FROM pending_runs WHERE db = ?", (self.db,))
        self.connection.execute("DELETE FROM pending_versions WHERE db = ?", (self.db,))
        self.gaps.clear()
        self.run_gaps.clear()
        self._read_added(session, 0, set())
        if self.received is not None:
            self.connection.execute(
                "DELETE FROM answers WHERE dag = ? AND NOT EXISTS (SELECT 1 FROM pending_runs "
                "WHERE db = ? AND id = CAST(answers.question AS INTEGER))",
                (self.received, self.db),
            )
        self.connection.execute(
            "INSERT OR REPLACE INTO pending_marks VALUES (?, ?, NULL, NULL, 0, NULL, NULL, NULL, NULL)",
            (self.db, uuid.uuid4().hex),
        )

    def _read_changes(self, session: Any, witness: int | None, witness_created: int | None) -> None:
        """
        Read the open rows and gaps again and the rows added since; bump the Dags they change.

        An open row can only fire or be deleted (its Dag, key and time are written once), so only
        its id and Dag run are read again, unless an id may have been given to a new row: SQLite
        gives a new row the greatest id plus one, so an id held was given again only if, at that
        moment, every row above it was gone, the greatest held too (the witness, *witness*,
        created at *witness_created*). While the witness is there, created at the same
        microsecond, no id was; else every open row is read again in full.
        """
        from airflow_partitions.tools.state.tables import asset_partition_dag_run as apdr

        changed: set[str] = set()
        whole = witness is not None and created(session, apdr, witness) != witness_created
        opened = self._open_ids(None)
        gaps = self.gaps.ids()
        for chunk in chunks(sorted({*opened, *gaps}) if whole else gaps):
            self._compare(session, chunk, changed)
        if not whole:
            self._fired_or_gone(session, sorted(opened), changed)
        held = self.connection.execute("SELECT max(id) FROM pending_runs WHERE db = ?", (self.db,)).fetchone()
        self._read_added(session, held[0] or 0, changed)
        self._bump("pending_versions", changed)

    def _runs_added(self, session: Any, mark: int, top: int | None) -> set[str]:
        """
        Return the Dags of the Dag runs added since the last sync: above its greatest id *mark*, or in a gap.

        Up to *top*, the greatest id now (the next sync reads above it). Airflow gives a new Dag run
        an id above every id in ``dag_run`` (PostgreSQL's sequence; SQLite's greatest id plus one,
        which is a deleted newest run's id again only when the run at the mark is gone, and then
        the mirror starts over); the ids skipped are gaps, read again for an hour: PostgreSQL may
        commit a run after a later id's.
        """
        from sqlalchemy import select

        from airflow_partitions.tools.state.tables import dag_run

        rows = select(dag_run.c.id, dag_run.c.dag_id)
        found, added = self.run_gaps.read(session, rows, dag_run.c.id, mark, top or mark)
        return {row[1] for row in (*found, *added)}

    def _bump(self, table: str, dags: Iterable[str]) -> None:
        """Move the versions of *dags* one up in *table* (``pending_versions``, ``key_versions``, …)."""
        self.connection.executemany(
            f"INSERT INTO {table} VALUES (?, ?, 1) ON CONFLICT (db, dag) DO UPDATE SET version = version + 1",
            [(self.db, dag) for dag in dags],
        )

    def _held(self, columns: str, ids: Iterable[int], condition: str = "") -> set[tuple[Any, ...]]:
        """Return *columns* (``"id, dag"``) of the rows *ids* held that meet *condition* (``AND …``)."""
        query = f"SELECT DISTINCT {columns} FROM pending_runs WHERE db = ? {condition} AND id IN ({{}})"
        return set(rows_among(self.connection, query, (self.db,), ids))

    def _fired_or_gone(self, session: Any, ids: list[int], changed: set[str]) -> None:
        """Find those of the open rows *ids* no longer open; keep them fired (their Dag run alone) or gone."""
        from airflow_partitions.tools.state.tables import asset_partition_dag_run as apdr

        moved = ids_without(session, apdr.name, "t.created_dag_run_id IS NULL", ids)
        if not moved:
            return
        now = dict(
            rows_by_id(session, f"SELECT id, created_dag_run_id FROM {apdr.name} WHERE id IN ({{}})", moved)
        )
        dags = dict(self._held("id, dag", moved))
        changed.update(dags.values())
        self._left.update(moved)
        for apdr_id in moved:
            if apdr_id in now:  # fired: held as :func:`_plain` holds a fired row (no key, no time)
                self._put([(apdr_id, dags[apdr_id], None, now[apdr_id], None)], changed)
            else:
                self._gone(apdr_id)

    def _compare(self, session: Any, ids: list[int], changed: set[str]) -> None:
        """Read the rows *ids* (open rows, gaps) again: keep what changed, note their Dags in *changed*."""
        from sqlalchemy import select

        from airflow_partitions.tools.state.tables import asset_partition_dag_run as apdr

        marks = ",".join("?" * len(ids))
        held = {
            row[0]: row
            for row in self.connection.execute(
                f"SELECT id, dag, key, fired, created FROM pending_runs WHERE db = ? AND id IN ({marks})",
                (self.db, *ids),
            )
        }
        now = {
            row[0]: row for row in session.execute(select(*_columns(apdr)).where(apdr.c.id.in_(ids))).all()
        }
        self.gaps.found(i for i in now if i not in held)
        for apdr_id in {*held, *now}:
            before, after = held.get(apdr_id), now.get(apdr_id)
            if after is not None and _plain(after) == before:
                continue
            if before is not None:
                changed.add(before[1])
                self._left.add(apdr_id)
            if after is None:
                self._gone(apdr_id)
            else:
                self._put([after], changed)

    def _gone(self, apdr_id: int) -> None:
        """Drop the row *apdr_id*, deleted; on SQLite a new row may take its id again: a gap, read again."""
        self.connection.execute("DELETE FROM pending_runs WHERE db = ? AND id = ?", (self.db, apdr_id))
        self.gaps.add([apdr_id])

    def _read_added(self, session: Any, held: int, changed: set[str]) -> None:
        """
        Read the rows above the greatest id held, *held*; keep the ids skipped as gaps for an hour.

        Above the greatest id held, not the greatest read: SQLite gives a deleted newest row's id
        to the next row (the ids of rows seen deleted are gaps too, :meth:`_compare`). A gap is an
        id below a row read that no row had: on PostgreSQL a transaction may commit its row after
        a later id's (each sync reads the gaps again, for :data:`GAP_HOURS`), or roll back and
        leave the id unused.
        """
        from sqlalchemy import select

        from airflow_partitions.tools.state.tables import asset_partition_dag_run as apdr

        added = session.execute(
            select(*_columns(apdr)).where(apdr.c.id > held).order_by(apdr.c.id),
            execution_options={"yield_per": BATCH},
        )
        gaps: list[int] = []
        expected = held
        for rows in added.partitions():
            self._put(rows, changed)
            for row in rows:  # in id order: the ids between two rows read are gaps
                gaps.extend(skipped(expected, row[0] - 1, set()))
                expected = row[0]
            del gaps[:-MAX_GAPS]
        self.gaps.add(gaps)
        self.gaps.expire()

    def _put(self, rows: Iterable[Any], changed: set[str]) -> None:
        """Insert *rows* (Airflow's columns), noting their Dags in *changed*."""
        batch = [(self.db, *_plain(row)) for row in rows]
        changed.update(row[2] for row in batch)
        self._opened.update(row[1] for row in batch if row[4] is None)
        self.connection.executemany("INSERT OR REPLACE INTO pending_runs VALUES (?, ?, ?, ?, ?, ?)", batch)

    def _open_ids(self, among: set[int] | None) -> set[int]:
        """Return the ids of the open rows held (of those *among*, else all)."""
        if among is None:
            query = "SELECT id FROM pending_runs WHERE db = ? AND fired IS NULL"
            return {row[0] for row in self.connection.execute(query, (self.db,))}
        return {apdr_id for (apdr_id,) in self._held("id", among, "AND fired IS NULL")}

    # -- what the reader asks -------------------------------------------------------------------

    def open_runs(self, dag_ids: Collection[str] | None = None) -> list[PendingRun]:
        """Return the open pending runs (of *dag_ids*, else all), oldest first (``created_at``, id)."""
        with self.lock:
            stamp = self._open_stamp()
            if self._open is None or self._open[0] != stamp:
                rows = self.connection.execute(
                    "SELECT id, dag, key, created FROM pending_runs WHERE db = ? AND fired IS NULL "
                    "ORDER BY created, id",
                    (self.db,),
                ).fetchall()
                self._open = (
                    stamp,
                    [PendingRun(i, dag, key, instant(made)) for i, dag, key, made in rows],
                )
            held = self._open[1]
        if dag_ids is None:
            return list(held)
        wanted = set(dag_ids)
        return [run for run in held if run.dag_id in wanted]

    def _open_stamp(self) -> tuple[str, float]:
        """
        Return the copy's token and the sum of its pending versions (lock held).

        Every change of a pending run moves its Dag's version up, and a start over makes a new
        token, in whichever process synced: equal stamps, equal open runs.
        """
        token, total = self.connection.execute(
            "SELECT (SELECT token FROM pending_marks WHERE db = ?), "
            "(SELECT total(version) FROM pending_versions WHERE db = ?)",
            (self.db, self.db),
        ).fetchone()
        return token or "", total

    def open_stamps(self, apdr_ids: Collection[int]) -> tuple[set[int], dict[int, tuple[int, int, int]]]:
        """
        Return which of the pending runs *apdr_ids* are open, and their key-log stamps (:mod:`~.key_stamps`).

        As the copy holds them, in one read of its file (another process may sync it between two):
        a run without key-log rows has no stamp.
        """
        with self.lock:
            self.connection.execute("BEGIN")
            try:
                return self._open_ids(set(apdr_ids)), self.key_stamps.stamps(apdr_ids)
            finally:
                self.connection.execute("COMMIT")

    def came_from(self, dag_run_ids: Collection[int]) -> dict[int, int]:
        """Return the pending run each of *dag_run_ids* fired from (the newest, if several), by Dag run id."""
        query = "SELECT fired, id FROM pending_runs WHERE db = ? AND fired IN ({})"
        with self.lock:
            rows = list(rows_among(self.connection, query, (self.db,), dag_run_ids))
        return {fired: apdr_id for fired, apdr_id in sorted(rows, key=lambda row: row[1])}  # the newest last

    def fired_of(self, dag_id: str) -> dict[int, int]:
        """
        Return the fired pending runs of *dag_id* by the Dag run each fired (the newest of several).

        Also those of Dag runs deleted since the mirror started (see the module): look up the
        ids of Dag runs read from ``dag_run``.
        """
        with self.lock:
            return dict(
                self.connection.execute(
                    "SELECT fired, id FROM pending_runs WHERE db = ? AND dag = ? AND fired IS NOT NULL "
                    "ORDER BY id",
                    (self.db, dag_id),
                ).fetchall()
            )

    def key_versions(self, dag_ids: Collection[str]) -> dict[str, int]:
        """Return the version of each of *dag_ids*' keys: it moves when a key is logged for an open run."""
        with self.lock:
            counted = dict(
                self.connection.execute("SELECT dag, version FROM key_versions WHERE db = ?", (self.db,))
            )
        return {dag: counted.get(dag, 0) for dag in dag_ids}

    def versions(self, dag_ids: Collection[str]) -> dict[str, tuple[str, int, int]]:
        """
        Return ``(token, pending version, run version)`` of each of *dag_ids*.

        The pending version moves whenever one of the Dag's pending runs changes, the run version
        whenever a Dag run of it is added; the token is new at each start over.
        """
        with self.lock:
            token = self.connection.execute(
                "SELECT token FROM pending_marks WHERE db = ?", (self.db,)
            ).fetchone()
            pending, runs = (
                dict(self.connection.execute(f"SELECT dag, version FROM {table} WHERE db = ?", (self.db,)))
                for table in ("pending_versions", "run_versions")
            )
        return {dag: (token[0] if token else "", pending.get(dag, 0), runs.get(dag, 0)) for dag in dag_ids}


def _columns(apdr: Any) -> tuple[Any, ...]:
    """Return the columns of ``asset_partition_dag_run`` the mirror holds, in its order."""
    return (
        apdr.c.id,
        apdr.c.target_dag_id,
        apdr.c.partition_key,
        apdr.c.created_dag_run_id,
        apdr.c.created_at,
    )


def _plain(row: Any) -> tuple[Any, ...]:
    """
    Return a row of :func:`_columns` as the mirror holds it: its time as :func:`stamp`.

    A fired row keeps only its id, Dag and Dag run (``""`` and 0 for its key and time): nothing
    else of it is read, and a million of them are most of the mirror.
    """
    apdr_id, dag, key, fired, created = row
    return (apdr_id, dag, key, fired, stamp(created)) if fired is None else (apdr_id, dag, "", fired, 0)


def _newest_run_id(session: Any, newest: int | None) -> str | None:
    """Return the run id of the Dag run *newest* (``None``: none, or no such row any more)."""
    if newest is None:
        return None
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import dag_run

    return session.scalar(select(dag_run.c.run_id).where(dag_run.c.id == newest))
