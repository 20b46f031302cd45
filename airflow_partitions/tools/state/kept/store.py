"""
The SQLite file of answers worked out from Dags' mappers and read from their rows, kept across processes.

One file per metadata database (:class:`Store`), opened by
:func:`~airflow_partitions.tools.state.kept.cache.store_for`; its keys hold the Dag's serialized
version and :func:`environment` (what the answers depend on besides it), its days of use and
pruning are :mod:`~airflow_partitions.tools.state.kept.uses`'.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from airflow_partitions.tools.state.kept.store_faults import (
    damaged,
    elsewhere,
    inode,
    say,
    set_aside,
    unusable,
)
from airflow_partitions.tools.state.kept.uses import Uses, today

#: How many questions of one Dag key :meth:`Store.fetch` reads one by one before reading all its answers.
ONE_BY_ONE = 500

#: The most answers of one Dag key :meth:`Store.fetch` reads at once: a larger key is read one by
#: one for good (the closing time of every key of a Dag of 1,000,000 partitions is 3,000,000
#: answers, 150 MB: a long-lived api-server would have held them all after its 500th question).
LOADED_AT_MOST = 100_000

#: Seconds between two prunings in one process (:meth:`Store.flush`).
PRUNE_EVERY = 3_600

#: The environment variable naming the file of :class:`Store` (a path), or ``off`` for none.
STORE_VARIABLE = "AIRFLOW_PARTITIONS_CACHE"

#: The distributions whose versions mappers' answers depend on (:func:`environment`), as their
#: ``.dist-info`` folders name them: calendars are data, and so is the time-zone database.
DEPENDED_ON = ("apache_airflow_core", "holidays", "exchange_calendars", "tzdata", "pendulum")


#: This package's folder (``airflow_partitions``): :func:`environment` digests every file of it.
PACKAGE = Path(__file__).parents[3]


@functools.lru_cache(maxsize=1)  # worked out once per process
def environment() -> str:
    """
    Return a digest of what mappers' answers depend on besides the serialized Dag.

    This package's files (name, size, modification time: an edited or upgraded mapper), the
    installed versions of Airflow, ``holidays``, ``exchange_calendars``, ``tzdata`` and
    ``pendulum`` (calendars and time zones are data): the names of their ``.dist-info`` folders on
    ``sys.path`` (``holidays-0.60.dist-info``), which every installer writes
    (``importlib.metadata`` would cost a new process 50 ms to import); and the version line of the
    system's time-zone database, which Python's ``zoneinfo`` reads first (``# version 2025b`` of
    ``/usr/share/zoneinfo/tzdata.zi``): a time zone's rules change with it, and so do local periods.
    """
    import zoneinfo

    parts = [
        f"{p.relative_to(PACKAGE)} {p.stat().st_size} {p.stat().st_mtime_ns}" for p in PACKAGE.rglob("*.py")
    ]
    for folder in zoneinfo.TZPATH:
        with contextlib.suppress(OSError), open(Path(folder) / "tzdata.zi", encoding="utf-8") as zones:
            parts.append(f"{folder} {zones.readline().strip()}")
    for folder in dict.fromkeys(sys.path):
        with contextlib.suppress(OSError):
            parts.extend(
                f"{folder} {name}"
                for name in os.listdir(folder or ".")
                if name.endswith(".dist-info") and name.split("-")[0].lower() in DEPENDED_ON
            )
    return digest(parts)


def digest(items: Iterable[Any]) -> str:
    """Return a short, order-free digest of *items* (strings or tuples of strings), for a memo's key."""
    return hashlib.blake2b("\n".join(sorted(map(repr, items))).encode(), digest_size=16).hexdigest()


class Store:
    """
    Answers worked out from a Dag's mappers, kept in a SQLite file across processes.

    A new ``airflow-partitions status`` process would otherwise import Airflow and deserialize the
    Dag's mappers (2 to 3 s) to learn what a pending run's keys give it, when a key is late, or what
    a run ran with. Each answer is stored under its Dag's key (:meth:`dag_key`: the Dag id, its
    latest serialized version's ``dag_hash``, :func:`environment` and the database) and its
    question (the partition key and a digest of the keys it was worked out from), so an answer is
    only found again for the same mappers asked the same question: a new serialized version of the
    Dag, an upgrade of this package, Airflow or the calendars' libraries make new keys. The file is
    ``$AIRFLOW_HOME/partitions-cache/<digest of the database URL>.sqlite`` (WAL), or
    ``$AIRFLOW_PARTITIONS_CACHE``; ``AIRFLOW_PARTITIONS_CACHE=off`` keeps none. A damaged file is
    built anew, one this user cannot use kept elsewhere (:meth:`open`); any other SQLite error
    turns the store off for the process: answers are then worked out, never wrong.
    """

    def __init__(self, connection: sqlite3.Connection, database: str, uses: Uses) -> None:
        self.connection: sqlite3.Connection | None = connection
        self.database = database
        #: The day each key was last used, and the pruning of those unused for a week.
        self.uses = uses
        #: The keys asked about, written or found in this process's memory since the last
        #: :meth:`flush`, and when this process last looked at the pruning (:data:`PRUNE_EVERY`).
        self.touched: set[str] = set()
        self.pruned: float | None = None
        self.lock = threading.Lock()
        #: The answers stored for each Dag key asked about, read at once (a read asks thousands).
        self.loaded: dict[str, dict[str, str]] = {}
        #: Answers worked out since the last :meth:`flush`, written together.
        self.unwritten: dict[tuple[str, str], str] = {}
        #: The key of the keys logged for pending runs (:func:`~airflow_partitions.tools.state.
        #: pending.received_keys`): one answer per pending run ever read, fetched by run
        #: (:meth:`fetch_each`), never loaded whole (at a million partitions, 27,000 answers and
        #: more, while a read needs those of the few runs whose key-log rows moved).
        self.received = digest([database, "received"])
        #: How many answers this process found stored (``"found"``) and worked out (``"worked out"``).
        self.asked: Counter[str] = Counter()
        #: How many questions of each Dag key were read one by one (:meth:`fetch`).
        self.one_by_one: Counter[str] = Counter()
        #: The answers read ahead for each Dag key (:meth:`read_ahead`), ``None`` for a question
        #: without one.
        self.ahead: dict[str, dict[str, str | None]] = {}
        #: The number of answers of each Dag key asked about past :data:`ONE_BY_ONE`, up to
        #: :data:`LOADED_AT_MOST` plus one.
        self.sizes: dict[str, int] = {}
        #: The file and its file number when opened (:meth:`open`); whether it was found damaged
        #: since, and moved aside for :func:`~airflow_partitions.tools.state.kept.cache.store_for` to
        #: open anew (:meth:`lost`).
        self.path: Path | None = None
        self.inode: int | None = None
        self.damaged = False

    @classmethod
    def open(cls, database: str) -> Store | None:
        """
        Open or create the store of the metadata database *database* (a URL); ``None``: off, or failing.

        A damaged file is moved aside and built anew; one this user cannot use is replaced by one
        of its own elsewhere; each said once (:mod:`~airflow_partitions.tools.state.kept.store_faults`).
        """
        from airflow_partitions.tools.state.database import airflow_home

        setting = os.environ.get(STORE_VARIABLE, "")
        if setting.lower() == "off":
            return None
        path = (
            Path(setting) if setting else airflow_home() / "partitions-cache" / f"{digest([database])}.sqlite"
        )
        found = inode(path)
        try:
            return cls._at(path, database)
        except (sqlite3.Error, OSError) as err:
            if damaged(err) and set_aside(path, found, err):
                with contextlib.suppress(sqlite3.Error, OSError):
                    return cls._at(path, database)
            return cls._instead(path, database, err)

    @classmethod
    def _at(cls, path: Path, database: str) -> Store:
        """Open or create the store's file *path* (raises SQLite's or the system's error)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        opened = inode(path)
        connection = sqlite3.connect(path, timeout=5, isolation_level=None, check_same_thread=False)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            for table in (
                "answers (dag TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL, "
                "PRIMARY KEY (dag, question)) WITHOUT ROWID",
                "said (what TEXT PRIMARY KEY)",  # what :meth:`_instead` said of another file
            ):
                connection.execute(f"CREATE TABLE IF NOT EXISTS {table}")
            store = cls(connection, database, Uses(connection))
        except BaseException:
            connection.close()
            raise
        store.path, store.inode = path, opened or inode(path)
        return store

    @classmethod
    def _instead(cls, path: Path, database: str, err: BaseException) -> Store | None:
        """Return a store of this user's own for *path*, which it cannot use (*err*): said once per reason."""
        instead = elsewhere(path)
        try:
            if instead == path:
                raise OSError("the store's own place")
            store = cls._at(instead, database)
            assert store.connection is not None
            first = store.connection.execute(
                "INSERT OR IGNORE INTO said VALUES (?)", (f"{path} {err}",)
            ).rowcount
        except (sqlite3.Error, OSError):
            say(unusable(path, err, None))
            return None
        if first:
            say(unusable(path, err, instead))
        return store

    def rows(self, dag_id: str) -> str:
        """
        Return the key of the answers read from the Dag *dag_id*'s rows (:func:`keep`).

        They hold the Dag's fingerprint, checked when read; one key per Dag, so that a read of one
        Dag loads its own answers, not those of the deployment's every Dag, and per
        :func:`environment`, so that an upgrade's new key leaves the old one to be pruned.
        """
        return digest([self.database, "rows", dag_id, environment()])

    def dag_key(self, dag_id: str, dag_hash: str) -> str:
        """Return the key of a Dag's answers: its id, serialized version, the environment and database."""
        return digest([self.database, dag_id, dag_hash, environment()])

    def answer(
        self,
        dag: str,
        question: Any,
        work_out: Callable[[], Any],
        plain: Callable[[Any], Any],
        rebuilt: Callable[[Any], Any],
    ) -> Any:
        """
        Return the answer to *question* (plain JSON) of the Dag keyed *dag*: stored, else worked out.

        *work_out* () works it out; *plain* turns it into plain JSON types, *rebuilt* back.
        """
        found = self.fetch(dag, question)
        if found is not None:
            self.asked["found"] += 1
            return rebuilt(found)
        self.asked["worked out"] += 1
        value = work_out()
        self.put(dag, question, plain(value))
        return value

    def fetch(self, dag: str, question: Any) -> Any:
        """
        Return the plain JSON stored for *question* of the Dag keyed *dag* (``None``: none).

        The first :data:`ONE_BY_ONE` questions of a Dag key are read one by one, then its every
        answer at once (a read of every pending run asks thousands; a ``status`` about 150, of a
        Dag key holding 60,000 answers at a million partitions: 0.11 s to read them all), unless
        it holds more than :data:`LOADED_AT_MOST`.
        """
        asked = json.dumps(question)
        with self.lock:
            self.touched.add(dag)
            text = self.unwritten.get((dag, asked))
            ahead = self.ahead.get(dag, {})
            if text is None and asked in ahead:
                text = ahead[asked]
            elif text is None and dag not in self.loaded and not self._to_load(dag):
                self.one_by_one[dag] += 1
                text = self._read(dag, [asked]).get(asked)
            elif text is None:
                text = self._loaded(dag).get(asked)
        return None if text is None else json.loads(text)

    def read_ahead(self, dag: str, questions: list[Any]) -> None:
        """
        Read the answers to *questions* of the Dag keyed *dag* in one query, for :meth:`fetch` to find.

        A page of 1,000 partitions asks three questions of each: one query, not 500 one by one and
        then the Dag key's every answer (60,000 at a million partitions).
        """
        asked = [json.dumps(question) for question in questions]
        with self.lock:
            self.touched.add(dag)
            if dag in self.loaded:
                return
            known = self.ahead.setdefault(dag, {})
            unknown = [text for text in asked if text not in known]
            found = self._read(dag, unknown)
            known.update((text, found.get(text)) for text in unknown)

    def fetch_each(self, dag: str, questions: list[Any]) -> dict[str, Any]:
        """
        Return the plain JSON stored for each of *questions* of the Dag keyed *dag*, by its JSON text.

        Read by question, not the Dag's every answer (:meth:`fetch`); a question with no answer is
        left out.
        """
        asked = [json.dumps(question) for question in questions]
        found: dict[str, str] = {}
        with self.lock:
            self.touched.add(dag)
            known = self.loaded.get(dag, {})
            for text in asked:
                answer = self.unwritten.get((dag, text), known.get(text))
                if answer is not None:
                    found[text] = answer
            found.update(self._read(dag, [text for text in asked if text not in found]))
        return {text: json.loads(answer) for text, answer in found.items()}

    def _read(self, dag: str, asked: list[str]) -> dict[str, str]:
        """Read the answers to *asked* (questions as JSON texts) of the Dag keyed *dag* (lock held)."""
        from airflow_partitions.tools.state.sql import rows_among

        found: dict[str, str] = {}
        if self.connection is not None:
            query = "SELECT question, answer FROM answers WHERE dag = ? AND question IN ({})"
            try:
                found.update(
                    rows_among(self.connection, query, (dag,), asked)
                )  # what was read before an error
            except sqlite3.Error as err:
                self.lost(err)
        return found

    def _to_load(self, dag: str) -> bool:
        """Whether to read every answer of the Dag keyed *dag* now, not one by one (lock held)."""
        if self.one_by_one[dag] < ONE_BY_ONE:
            return False
        if dag not in self.sizes and self.connection is not None:
            query = "SELECT count(*) FROM (SELECT 1 FROM answers WHERE dag = ? LIMIT ?)"
            try:
                self.sizes[dag] = self.connection.execute(query, (dag, LOADED_AT_MOST + 1)).fetchone()[0]
            except sqlite3.Error as err:
                self.lost(err)
        return self.sizes.get(dag, 0) <= LOADED_AT_MOST

    def _loaded(self, dag: str) -> dict[str, str]:
        """Return every answer stored for the Dag keyed *dag*, read in one query on first use (lock held)."""
        if dag not in self.loaded:
            rows: list[tuple[str, str]] = []
            if self.connection is not None:
                try:
                    rows = self.connection.execute(
                        "SELECT question, answer FROM answers WHERE dag = ?", (dag,)
                    ).fetchall()
                except sqlite3.Error as err:
                    self.lost(err)
            self.loaded[dag] = dict(rows)
        return self.loaded[dag]

    def put(self, dag: str, question: Any, answer: Any) -> None:
        """Store *answer* (plain JSON, not ``None``) to *question* of the Dag *dag*: at :meth:`flush`."""
        with self.lock:
            self.touched.add(dag)
            self.unwritten[dag, json.dumps(question)] = json.dumps(answer)

    def flush(self) -> None:
        """
        Write the answers worked out since the last flush and the keys' day of use, in one transaction.

        Then, at most once per :data:`PRUNE_EVERY` seconds of this process (a command prunes once,
        a long-lived api-server each hour), it prunes the keys unused for a week
        (:meth:`Uses.prune`). An error rolls back and turns the store off.
        """
        with self.lock:
            rows, self.unwritten = [(*k, v) for k, v in self.unwritten.items()], {}
            touched, self.touched = self.touched, set()
            for dag, asked, text in rows:
                for kept in (self.loaded, self.ahead):
                    if dag in kept:
                        kept[dag][asked] = text
            if self.connection is None:
                return
            day = today()
            try:
                unrecorded = self.uses.unrecorded(touched, day)
                clock = time.monotonic()
                looked = self.pruned is None or clock - self.pruned >= PRUNE_EVERY
                if looked:
                    self.pruned = clock
                prune = looked and self.uses.due(day)
                if not (rows or unrecorded or prune):
                    return
                self.connection.execute("BEGIN IMMEDIATE")
                self.connection.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)", rows)
                self.uses.record(unrecorded, day)
                if prune:
                    self.uses.prune(day)
                self.connection.execute("COMMIT")
            except sqlite3.Error as err:
                with contextlib.suppress(sqlite3.Error):  # no write lock left held for other processes
                    self.connection.execute("ROLLBACK")
                self.lost(err)

    def lost(self, err: sqlite3.Error) -> None:
        """
        Stop using the file after *err* (answers are then worked out, never wrong).

        A damaged file is moved aside (unless another process built it anew already): the next
        :func:`~airflow_partitions.tools.state.kept.cache.store_for` opens it anew.
        """
        self.connection = None
        if damaged(err) and self.path is not None:
            self.damaged = set_aside(self.path, self.inode, err)

    def used(self, dag: str) -> None:
        """Note the key *dag* as used: an answer of it was found in this process's memory."""
        with self.lock:
            self.touched.add(dag)
