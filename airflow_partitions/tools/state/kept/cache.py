"""
What the tools keep between reads, the only process-wide mutable state of :mod:`airflow_partitions.tools`.

A Dag's fingerprint (:mod:`~airflow_partitions.tools.state.kept.fingerprint`) changes whenever its
runs or pending runs do; an answer read from all of a Dag's rows (its range, a page of its keys,
its strip) is kept with the fingerprint it was read under. What a fired run ran with, what a
pending run's keys give it and the keys logged for it, and a Dag's deserialized timetable are
memoized per process (each is checked against what changes it, or never changes); the metrics'
count of refused keys goes on from the last audit-log row it read. One module, so that what
outlives a request is in one place.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections import Counter, OrderedDict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from airflow_partitions.tools.state.database import engine_of, one_moment
from airflow_partitions.tools.state.kept.store import Store, digest
from airflow_partitions.tools.state.model import AssetProgress, RanWith
from airflow_partitions.tools.state.plain import jsonable, packed, unpacked

if TYPE_CHECKING:
    from airflow_partitions.tools.state.kept.mirror import Mirror

#: What the runs a rollup fired ran with, by (rollup identity, the runs' pending-run ids): the keys
#: Airflow logged for a pending run never change once it fired, so each is worked out once per
#: process. Bounded; the scheduler-side mappers are rebuilt per process too.
RAN_WITH: OrderedDict[tuple[str, tuple[int, ...]], RanWith] = OrderedDict()
RAN_WITH_SIZE = 200_000

#: What a pending run's received keys give it, by (its Dag's mappers, its key, the keys): its
#: progress and the times its state turns on (:func:`pending_times`, which depend on the keys, not
#: the clock). The overview counts every pending run of a Dag each time it is read, and building
#: their awaited sets again (thousands, more than the rollups' own cache holds) was most of it.
PENDING: OrderedDict[
    tuple[Any, ...], tuple[tuple[AssetProgress, ...], datetime | None, datetime | None, bool]
] = OrderedDict()
PENDING_SIZE = 10_000

#: The keys logged for a pending run, by its id, with the stamp of its key-log rows when read (their
#: count and greatest id, and the run's creation: SQLite gives a deleted run's id again): Airflow
#: only adds a pending run's key-log rows (``clean`` and ``discard`` remove them all), so an
#: unchanged stamp means unchanged keys (:func:`~airflow_partitions.tools.state.pending.
#: received_keys`). Bounded.
RECEIVED: OrderedDict[int, tuple[tuple[int, int, int], dict[str, frozenset[str]]]] = OrderedDict()
RECEIVED_SIZE = 50_000

#: Deserialized timetables by Dag id, with the serialized version (row id, hash) they were read from
#: and their assets (:func:`~airflow_partitions.tools.state.serialized.consumer_timetables`): one
#: per Dag of the deployment.
TIMETABLES: dict[str, tuple[tuple[Any, ...], Any, tuple[tuple[str, str], ...]]] = {}

#: Per metadata database (its URL): the last audit-log row of a refused key the metrics counted,
#: and the refusals counted so far by (Dag id, reason)
#: (:func:`~airflow_partitions.tools.metrics.refused_counts`): a counter read on from where it
#: stopped, so each scrape reads only the rows written since.
REFUSED: dict[str, tuple[int, Counter[tuple[str, str]]]] = {}


#: Answers read from all of a Dag's rows (its range, a page of its keys), by what was asked, with
#: the Dag's fingerprint when read (:mod:`~.fingerprint`): kept while the fingerprint holds. Bounded.
KEPT: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
KEPT_SIZE = 4096

#: What :func:`kept_until` decoded, by memo, with the text it was decoded from (not decoded again: late
#: keys of a million partitions are 1.7 MB, 0.09 s per request of an api-server). Dropped with KEPT's.
DECODED: dict[tuple[Any, ...], tuple[str, Any, datetime | None, datetime | None]] = {}


def keep(memo: tuple[Any, ...], fingerprint: Any, value: Any, session: Any = None) -> None:
    """
    Keep *value*, read from a Dag's rows, while the Dag's *fingerprint* holds (*memo*: the Dag id second).

    In this process (:data:`KEPT`), and with *session* in the store of its database too
    (:class:`Store`), for the next process to find while the rows stay as they are.
    """
    KEPT[memo] = (fingerprint, value)
    KEPT.move_to_end(memo)
    if len(KEPT) > KEPT_SIZE:
        DECODED.pop(KEPT.popitem(last=False)[0], None)
    store = None if session is None else store_for(session)
    if store is not None:
        with contextlib.suppress(TypeError):  # a print or value of no stored type: this process only
            store.put(
                store.rows(memo[1]), jsonable(memo), {"print": packed(fingerprint), "value": packed(value)}
            )


def kept_value(
    memo: tuple[Any, ...], prints: dict[str, tuple[Any, ...]], session: Any = None
) -> tuple[Any, Any] | None:
    """Return the kept ``(fingerprint, value)`` of *memo* (the Dag id second) while its Dag's print holds."""
    return _kept(memo, prints.get(memo[1]), session)


def _kept(memo: tuple[Any, ...], fingerprint: Any, session: Any) -> tuple[Any, Any] | None:
    """Return ``(fingerprint, value)`` kept for *memo* under *fingerprint*: in this process, else stored."""
    store = None if session is None else store_for(session)
    found = KEPT.get(memo)
    if found is not None and found[0] == fingerprint:
        if store is not None:
            store.used(store.rows(memo[1]))
        return found
    if store is None:
        return None
    try:
        stored = store.fetch(store.rows(memo[1]), jsonable(memo))
        if stored is None or stored["print"] != packed(fingerprint):
            return None
    except TypeError:  # a print of no stored type
        return None
    KEPT[memo] = found = (fingerprint, unpacked(stored["value"]))
    return found


def keep_until(
    memo: tuple[Any, ...],
    fingerprint: Any,
    value: Any,
    since: datetime,
    until: datetime | None,
    session: Any = None,
) -> None:
    """
    Keep *value* (plain JSON) worked out at *since*, while *fingerprint* holds, the clock before *until*.

    For answers that also turn on the clock (a Dag's counts by state, its late partitions):
    *since* is the instant it was worked out for, *until* the next instant one of them changes
    (aware; ``None``: none ahead). A reader whose clock is before *since* (another machine's, behind
    this one's) works it out again rather than serve what this clock saw. Kept as one JSON text,
    read back in C (:func:`kept_until`).
    """
    stamped = [value, None if until is None else until.isoformat(), since.isoformat()]
    keep(memo, fingerprint, json.dumps(stamped), session)


def kept_until(memo: tuple[Any, ...], fingerprint: Any, now: datetime, session: Any = None) -> Any:
    """Return what :func:`keep_until` kept for *memo* under *fingerprint*, if *now* is in its time."""
    found = _kept(memo, fingerprint, session)
    if found is None:
        return None
    decoded = DECODED.get(memo)
    if decoded is None or decoded[0] is not found[1]:
        value, until, *since = json.loads(found[1])
        decoded = DECODED[memo] = (
            found[1],
            value,
            None if until is None else datetime.fromisoformat(until),
            datetime.fromisoformat(since[0]) if since else None,
        )
    _, value, until, since = decoded
    if since is None or now < since or (until is not None and now >= until):
        return None
    return value


def kept(memo: tuple[Any, ...], fingerprint: Any, read: Any, session: Any = None) -> Any:
    """Return what *read* () returned for *memo* while *fingerprint* holds, else read and :func:`keep` it."""
    found = _kept(memo, fingerprint, session)
    if found is not None:
        return found[1]
    value = read()
    keep(memo, fingerprint, value, session)
    return value


#: The answers worked out from Dags' mappers that outlive the process, per metadata database (its
#: URL without password); ``None``: none for it (``off``, or its file failed).
STORES: dict[str, Store | None] = {}


#: The api-server's warmer (:class:`~airflow_partitions.tools.warming.Warmer`, set by
#: :func:`~airflow_partitions.tools.warming.start`); ``None``: every read in the request.
WARMER: Any = None


#: The mirror of each metadata database's pending runs (:mod:`~airflow_partitions.tools.state.
#: mirror`), by its URL without password: in the file of its :class:`Store`, else in memory.
MIRRORS: dict[str, Mirror] = {}


def mirror_for(session: Any) -> Mirror:
    """
    Return the mirror of the pending runs of the database *session* reads, in step with it.

    In the store's file (shared by the processes on this machine), else, with the store off or
    failing, in this process's memory (its first read copies every row).
    """
    from airflow_partitions.tools.state.kept.mirror import Mirror

    url = engine_of(session).url.render_as_string(hide_password=True)

    def in_memory() -> Mirror:
        connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        return Mirror(connection, digest([url])[:8], threading.Lock())

    mirror = MIRRORS.get(url)
    if mirror is None:
        store = store_for(session)
        try:
            if store is not None and store.connection is not None:
                mirror = Mirror(store.connection, digest([url])[:8], store.lock, store.received)
        except sqlite3.Error:
            mirror = None
        mirror = MIRRORS[url] = mirror or in_memory()
    try:
        mirror.sync(session)
    except sqlite3.Error as err:  # the file failed: the process goes on in memory
        store = STORES.get(url)
        if store is not None and mirror.connection is store.connection:
            store.lost(err)
        mirror = MIRRORS[url] = in_memory()
        mirror.sync(session)
    return mirror


def mirror_copied(session: Any) -> bool:
    """
    Whether the store of the database *session* reads holds a copy of its pending runs (:func:`mirror_for`).

    True once a sync of this process finished (:data:`MIRRORS`, in memory if its file failed); else false
    with the store off or failing, or before a first read on this machine made the copy (syncing
    a copy reads only what changed since), or while it is made. Read on a connection of its own:
    the copy holds the store's lock while it is made (minutes at a million partitions).
    """
    url = engine_of(session).url.render_as_string(hide_password=True)
    held = MIRRORS.get(url)
    if held is not None and held.copied:  # this process has synced one (in memory, if its file failed)
        return True
    store = store_for(session)
    if store is None or store.connection is None or store.path is None:
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"file:{store.path}?mode=ro", uri=True, timeout=1)) as own:
            found = own.execute("SELECT 1 FROM pending_marks WHERE db = ?", (digest([url])[:8],)).fetchone()
    except sqlite3.Error:  # no table yet: a new file
        return False
    return found is not None


def at_one_moment(session: Any) -> None:
    """
    Have *session* read the database at one moment from now on (:func:`~.database.one_moment`).

    On SQLite the mirror of the pending runs is brought in step first, then the snapshot begins
    (it syncs once per transaction): SQLite tells no moment of a snapshot, and a snapshot older
    than the copy, synced by another process meanwhile, would take it back (PostgreSQL's are
    compared: :mod:`~airflow_partitions.tools.state.kept.moments`).
    """
    if engine_of(session).dialect.name == "sqlite":
        mirror_for(session)
    one_moment(session)


def store_for(session: Any) -> Store | None:
    """
    Return the :class:`Store` of the metadata database *session* reads, opened on first use.

    Opened anew once its file was found damaged and moved aside (:meth:`Store.lost`), with the
    mirror in it: a long-lived api-server goes on with the file built anew.
    """
    url = engine_of(session).url.render_as_string(hide_password=True)
    found = STORES.get(url)
    if url not in STORES or (found is not None and found.damaged):
        STORES[url] = Store.open(url)
        MIRRORS.pop(url, None)
    return STORES[url]
