"""
First reads in the background: the api-server answers at once while a large Dag is read for the first time.

After an install or an upgrade (of this package, Airflow, a calendar library: the store's keys
hold them, :func:`~airflow_partitions.tools.state.kept.store.environment`), or a new serialized version
of a Dag, the store holds no answer under the Dag's new key
(:meth:`~airflow_partitions.tools.state.kept.store.Store.dag_key`), and the first read of a Dag of a
million partitions works out every answer from its mappers: 23 s for its page, 98 s for a metrics
scrape of five such Dags (SQLite, 2 cores). So the view's routes and the metrics first ask
:func:`warming_dags` which Dags are not *ready*:

- a Dag is ready when the store holds its mark (:data:`MARK`, put under the key of its serialized
  version and the environment once one first read of it in the background finished: its summary
  and its first pages), or when the store is off (every answer is then worked out in the
  request, as always);
- the Dags not ready with the fewest runs, while their runs together (plus :data:`PER_DAG` each)
  stay within :data:`INLINE_AT_MOST`, are read in the request: their first read is short;
- the others are read by one thread of the api-server (:class:`Warmer`), one Dag at a time, a
  Dag a request waits for first; the request waits up to :data:`WAIT` seconds for those of at
  most :data:`INLINE_AT_MOST` runs (a larger one takes longer to read than that), then
  answers without them: the overview and the metrics list them as warming (``warming`` true,
  ``airflow_partitions_warming{dag_id}`` 1, no other series of the Dag), a Dag's page says it is
  warming and holds no partition. Nothing of such a Dag is shown until it is read in full.

When the store holds no copy of the pending runs yet (a new store: its first read copies
``asset_partition_dag_run`` whole, :mod:`~airflow_partitions.tools.state.kept.mirror`) and the table
holds more than :data:`INLINE_AT_MOST` rows, the copy is made in the background first and every
Dag is warming meanwhile (:data:`EVERY`).

At the api-server's start (:func:`start`) the thread reads every partitioned Dag not ready, the
fewest runs first, so the Dags are ready before anyone asks. ``AIRFLOW_PARTITIONS_WARMING=off``
turns it off: every read is then made in the request, however long. ``airflow-partitions``
commands never answer partly: they read everything in their process.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Future, wait
from typing import Any

log = logging.getLogger(__name__)

#: The environment variable that turns the background reads off (``off``).
WARMING_ENV = "AIRFLOW_PARTITIONS_WARMING"

#: Seconds a request waits for the background reads of the Dags it asks about before answering
#: without them (``AIRFLOW_PARTITIONS_WARMING_WAIT``).
WAIT = float(os.environ.get("AIRFLOW_PARTITIONS_WARMING_WAIT") or 0.5)

#: The most runs (of the Dags not ready, together) a request reads itself: a first read costs
#: about 40 µs per run at a million partitions (98 s for the metrics' 2.2 million), so 0.4 s.
INLINE_AT_MOST = 10_000

#: What a Dag's first read costs besides its runs, in runs (:data:`INLINE_AT_MOST`): its
#: serialized Dag deserialized and its mappers' facts worked out, 10 to 20 ms.
PER_DAG = 500

#: The question whose stored answer marks a Dag's answers as read once in full (under its key).
MARK = ["warm"]

#: The most Dags read together in the background (:class:`Warmer`): one summary of all of them.
#: Each read of a million partitions' deployment costs a second or two whatever the Dag (the
#: pending runs' copy synced, the scheduler's queue), so 200 small Dags one by one took 20 minutes.
BATCH = 50

#: The name of the background read that copies the pending runs (:func:`~.state.cache.mirror_for`).
MIRROR = "\x00pending runs"


class Every(frozenset):
    """Every Dag is warming: the store's copy of the pending runs is being made (:data:`EVERY`)."""

    def __contains__(self, dag_id: object) -> bool:
        return True


#: What :func:`warming_dags` returns while the pending runs are copied: every Dag is warming.
EVERY = Every()


class Warmer:
    """
    One thread that reads the Dags asked of it (:meth:`submit`), in their order, :data:`BATCH` at a time.

    *read* (names) makes one background read of them: their first read, or :data:`MIRROR`'s copy;
    the thread starts on the first :meth:`submit`. A read that fails is logged and its futures hold
    the error; asked again, it is tried again.
    """

    def __init__(self, read: Callable[[list[str]], None]) -> None:
        self.read = read
        self.lock = threading.Condition()
        #: The reads asked and not begun, in the order they are made, each with its future.
        self.queue: OrderedDict[str, Future[None]] = OrderedDict()
        #: The reads under way, with their futures.
        self.current: list[tuple[str, Future[None]]] = []
        self.thread: threading.Thread | None = None

    def submit(self, names: Iterable[str], *, first: bool = False) -> list[Future[None]]:
        """
        Ask for the reads of *names* (Dag ids, or :data:`MIRROR`); return their futures.

        A read asked already is not asked twice (its future is returned). *first*: before the
        reads asked earlier (a request waits for them), in the order given.
        """
        names, futures = list(names), []
        with self.lock:
            for name in names:
                found = dict(self.current).get(name) or self.queue.get(name)
                if found is None:
                    found = self.queue[name] = Future()
                futures.append(found)
            if first:
                for name in reversed(names):
                    if name in self.queue:
                        self.queue.move_to_end(name, last=False)
            if self.thread is None:
                self.thread = threading.Thread(
                    target=self._run, name="airflow-partitions-warming", daemon=True
                )
                self.thread.start()
            self.lock.notify()
        return futures

    def _run(self) -> None:
        while True:
            with self.lock:
                while not self.queue:
                    self.lock.wait()
                batch = [self.queue.popitem(last=False) for _ in range(min(BATCH, len(self.queue)))]
                self.current = batch
            try:
                self.read([name for name, _ in batch])
            except Exception as error:
                log.exception("airflow-partitions could not read %s in the background.", list(dict(batch)))
                for _, future in batch:
                    future.set_exception(error)
            else:
                for _, future in batch:
                    future.set_result(None)
            finally:
                with self.lock:
                    self.current = []


def ready_or_not(dag_ids: Collection[str], session: Any) -> tuple[dict[str, str], bool]:
    """
    Return the Dags of *dag_ids* not ready, each with its mark's key, and whether to copy the pending runs.

    A Dag is ready (left out) with its mark (:data:`MARK`) stored under its key
    (:meth:`~airflow_partitions.tools.state.kept.store.Store.dag_key`: its latest serialized version
    and the environment), read without deserializing it (20 ms a Dag: 4 s for 200 in a new
    api-server); with the store off, none is not ready. The second value is true when the store
    holds no copy of the pending runs and ``asset_partition_dag_run`` holds more than
    :data:`INLINE_AT_MOST` rows.
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.kept.cache import mirror_copied, store_for
    from airflow_partitions.tools.state.tables import asset_partition_dag_run

    store = store_for(session)
    if store is None:
        return {}, False
    if not mirror_copied(session):
        top = session.scalar(select(func.max(asset_partition_dag_run.c.id))) or 0
        if top > INLINE_AT_MOST:
            return dict.fromkeys(dag_ids, ""), True
    keys = _dag_keys(store, dag_ids, session)
    return {dag_id: key for dag_id, key in keys.items() if store.fetch(key, MARK) is None}, False


def _dag_keys(store: Any, dag_ids: Collection[str], session: Any) -> dict[str, str]:
    """Return each Dag's key in *store* (its latest serialized version and the environment), by Dag id."""
    from airflow_partitions.tools.state.tables import latest_serialized

    versions = session.execute(latest_serialized(list(dag_ids))).all()
    return {dag_id: store.dag_key(dag_id, str(version)) for dag_id, _, version in versions}


def run_counts(dag_ids: Collection[str], session: Any) -> dict[str, int]:
    """Return the number of Dag runs of each of *dag_ids* (a walk of Airflow's ``dag_id_state`` index)."""
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import dag_run

    query = select(dag_run.c.dag_id, func.count()).where(dag_run.c.dag_id.in_(list(dag_ids)))
    found = dict(session.execute(query.group_by(dag_run.c.dag_id)).all())
    return {dag_id: int(found.get(dag_id, 0)) for dag_id in dag_ids}


def too_large(counts: dict[str, int]) -> list[str]:
    """
    Return the Dags of *counts* (Dag id to runs) left to the background, the fewest runs first.

    The others, the fewest runs first while their runs together, plus :data:`PER_DAG` for each,
    stay within :data:`INLINE_AT_MOST`, are read in the request.
    """
    ordered = sorted(counts, key=lambda dag_id: (counts[dag_id], dag_id))
    total, inline = 0, 0
    for dag_id in ordered:
        if total + counts[dag_id] + PER_DAG > INLINE_AT_MOST:
            break
        total += counts[dag_id] + PER_DAG
        inline += 1
    return ordered[inline:]


def warming_dags(
    only: Collection[str] | None, *, first: bool = False, wait_for: float = WAIT
) -> frozenset[str]:
    """
    Return the partitioned Dags (of *only*; ``None``: all) read for the first time in the background.

    Asks the warmer for those too large to read in the request (see the module), and waits up to
    *wait_for* seconds for them (*first*: before the Dags asked earlier). :data:`EVERY` while the
    pending runs are copied. Empty without a warmer (:func:`start` not called, or
    ``AIRFLOW_PARTITIONS_WARMING=off``): every Dag is then read in the request. Reads in a session
    of its own: the caller's reads its answer at one moment
    (:func:`~airflow_partitions.tools.state.database.one_moment`).
    """
    from airflow_partitions.tools.state.kept import cache

    warmer = cache.WARMER
    if warmer is None:
        return frozenset()
    from airflow.utils.session import create_session

    from airflow_partitions.tools.state.consumers import consumer_dags

    with create_session(scoped=False) as session:
        dag_ids = [d.dag_id for d in consumer_dags(session, only=only)]
        cold, copying = ready_or_not(dag_ids, session)
        if copying:
            [copied] = warmer.submit([MIRROR], first=True)
            if wait([copied], timeout=wait_for).not_done:
                return EVERY
            cold, _ = ready_or_not(dag_ids, session)
        counts = run_counts(cold, session) if cold else {}
        large = too_large(counts)
    if not large:
        return frozenset()
    futures = dict(zip(large, warmer.submit(large, first=first), strict=True))
    # Waited for only if it may be read meanwhile: a Dag of more runs than a request reads takes longer.
    wait([f for d, f in futures.items() if counts[d] <= INLINE_AT_MOST], timeout=wait_for)
    # A read that failed is made in the request again, which tells its error as it always did.
    return frozenset(dag_id for dag_id, future in futures.items() if not future.done())


def summed_dags(session: Any, only: Collection[str] | None) -> list[Any]:
    """
    Return the partitioned Dags of *only* (``None``: all) with their summaries, those warming marked.

    :func:`~airflow_partitions.tools.state.consumer_dags` (``summary=True``) with the Dags of
    :func:`warming_dags` left to the background: what the overview and the metrics read.
    """
    from dataclasses import replace

    from airflow_partitions.tools.state.consumers import consumer_dags

    warming = warming_dags(only)
    if warming is EVERY:  # no summary: it would copy the pending runs in the request
        return [replace(dag, warming=True) for dag in consumer_dags(session, only=only)]
    return consumer_dags(session, summary=True, only=only, warming=warming)


def first_read(names: list[str], read_page: Callable[[str, Any], None]) -> None:
    """
    Make the background read of *names*: copy the pending runs (:data:`MIRROR`), or read Dags a first time.

    The Dags' summaries together (what the overview and the metrics read), the first pages
    (*read_page* (dag id, session)) of those of more than :data:`INLINE_AT_MOST` runs (a request
    reads a smaller one's page itself), then each Dag's mark (:data:`MARK`) under its key (its
    serialized version and the environment: :meth:`~airflow_partitions.tools.state.kept.store.
    Store.dag_key`), taken before the reads: a new version meanwhile leaves its own key unmarked.
    """
    from airflow.utils.session import create_session

    from airflow_partitions.tools.state.consumers import consumer_dags
    from airflow_partitions.tools.state.kept.cache import mirror_for, store_for

    with create_session(scoped=False) as session:
        if MIRROR in names:
            mirror_for(session)
        dag_ids = [name for name in names if name != MIRROR]
        if not dag_ids:
            return
        store = store_for(session)
        keys = list(_dag_keys(store, dag_ids, session).values()) if store else []
        large = [dag_id for dag_id, n in run_counts(dag_ids, session).items() if n > INLINE_AT_MOST]
        consumer_dags(session, summary=True, only=set(dag_ids))
    for dag_id in large:
        with create_session(scoped=False) as session:
            read_page(dag_id, session)
    if store is not None:
        for key in keys:
            store.put(key, MARK, True)
        store.flush()


def start(read_page: Callable[[str, Any], None]) -> None:
    """
    Start the api-server's warmer, once, and have it read every partitioned Dag not ready (see the module).

    Unless ``AIRFLOW_PARTITIONS_WARMING=off``. The Dags are looked at once the api-server built
    its app (as the watch waits: :func:`~airflow_partitions.tools.watch.after_the_start`), in a
    thread of their own.
    """
    from airflow_partitions.tools.state.kept import cache

    if os.environ.get(WARMING_ENV, "").lower() == "off" or cache.WARMER is not None:
        return
    cache.WARMER = warmer = Warmer(lambda names: first_read(names, read_page))
    threading.Thread(
        target=_look, args=(warmer,), name="airflow-partitions-warming-start", daemon=True
    ).start()


def _look(warmer: Warmer) -> None:
    """Ask *warmer* for every partitioned Dag not ready, the pending runs' copy first if needed."""
    from airflow.utils.session import create_session

    from airflow_partitions.tools.state.consumers import consumer_dags
    from airflow_partitions.tools.watch import after_the_start

    after_the_start()
    try:
        with create_session(scoped=False) as session:
            cold, copying = ready_or_not([d.dag_id for d in consumer_dags(session)], session)
            large = too_large(run_counts(cold, session)) if cold else []
        warmer.submit([MIRROR] * copying + large)
    except Exception:
        log.exception("airflow-partitions could not look for the Dags to read in the background.")
