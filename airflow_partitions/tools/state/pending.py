"""
Queries on pending partitioned Dag runs, the keys logged for them, and the scheduler's queue of them.

Airflow's ``asset_partition_dag_run`` and ``partitioned_asset_key_log`` tables.
"""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept.cache import mirror_for
from airflow_partitions.tools.state.kept.key_stamps import own_logs, read_stamps
from airflow_partitions.tools.state.model import EVALUATED_PER_LOOP
from airflow_partitions.tools.state.sql import chunks


def log_stamps(session: Any, apdr_ids: list[int]) -> dict[int, tuple[int, int, int]]:
    """
    Return each pending run's key-log stamp: the count and greatest id of its own key-log rows, its creation.

    Airflow only adds a pending run's key-log rows (``clean`` and ``discard`` remove them all), so
    an unchanged stamp means unchanged keys. An open run's from the mirror
    (:meth:`~airflow_partitions.tools.state.kept.mirror.Mirror.stamps`, kept in step with the rows
    added, and read again for a Dag ``reroute`` moved keys of: a row deleted moves the count); a
    fired one's per 5,000 runs (:data:`~airflow_partitions.tools.state.sql.CHUNK`) in
    one grouped count on Airflow's index of the pending run id. A run without rows is left out.
    """
    mirror = mirror_for(session)
    opened, stamps = mirror.open_stamps(apdr_ids)
    for chunk in chunks([apdr_id for apdr_id in apdr_ids if apdr_id not in opened]):
        stamps.update(read_stamps(session, chunk))
    return stamps


def received_keys(
    session: Any, apdr_ids: list[int], stamps: dict[int, tuple[int, int, int]] | None = None
) -> dict[int, dict[str, frozenset[str]]]:
    """
    Return the keys Airflow logged for each pending run, by asset name.

    The keys are read again only for the runs whose :func:`log_stamps` (*stamps* if read
    already) changed (:data:`~airflow_partitions.tools.state.kept.cache.RECEIVED`, and the store of the
    database for the next process: under :attr:`~airflow_partitions.tools.state.kept.store.Store.
    received`, the question the run's id, with the stamp it was read under).
    """
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset, partitioned_asset_key_log

    column = partitioned_asset_key_log.c.asset_partition_dag_run_id
    stamps = log_stamps(session, apdr_ids) if stamps is None else stamps
    stamps = {apdr_id: stamps[apdr_id] for apdr_id in apdr_ids if apdr_id in stamps}
    found: dict[int, dict[str, frozenset[str]]] = {}
    store = cache.store_for(session)
    if store is not None:
        store.used(store.received)
    unknown = [apdr_id for apdr_id in stamps if apdr_id not in cache.RECEIVED]
    stored = {} if store is None or not unknown else store.fetch_each(store.received, unknown)
    for apdr_id, stamp in stamps.items():
        kept = cache.RECEIVED.get(apdr_id)
        answer = stored.get(str(apdr_id))
        if kept is None and answer is not None:
            kept = (
                tuple(answer["stamp"]),
                {name: frozenset(logged) for name, logged in answer["keys"].items()},
            )
        if kept is not None and kept[0] == stamp:
            found[apdr_id] = kept[1]
    stale = [apdr_id for apdr_id in stamps if apdr_id not in found]
    read: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for chunk in chunks(stale):
        for apdr_id, name, key in session.execute(
            own_logs(
                select(column, asset.c.name, partitioned_asset_key_log.c.source_partition_key).join(
                    asset, asset.c.id == partitioned_asset_key_log.c.asset_id
                ),
                chunk,
            )
        ):
            read[apdr_id][name].add(key)
    for apdr_id, by_asset in read.items():
        found[apdr_id] = {name: frozenset(keys) for name, keys in by_asset.items()}
        cache.RECEIVED[apdr_id] = (stamps[apdr_id], found[apdr_id])
        cache.RECEIVED.move_to_end(apdr_id)
        if store is not None:
            plain = {name: sorted(keys) for name, keys in by_asset.items()}
            store.put(store.received, apdr_id, {"stamp": list(stamps[apdr_id]), "keys": plain})
    while len(cache.RECEIVED) > cache.RECEIVED_SIZE:
        cache.RECEIVED.popitem(last=False)
    return found


def apdr_keys(apdr_ids: list[int]) -> Any:
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run

    return select(asset_partition_dag_run.c.id, asset_partition_dag_run.c.partition_key).where(
        asset_partition_dag_run.c.id.in_(apdr_ids)
    )


#: The deployment's pending partitioned runs in the scheduler's order: ``(id, dag_id, key)``,
#: oldest first (:func:`queue`); a run's place is its index plus one.
Queue = list[tuple[int, str, str]]


def queue(session: Any) -> Queue:
    """
    Return the deployment's pending partitioned runs in the order the scheduler evaluates them.

    Oldest first (``created_at``, then id), of Dags that are not stale: 500 per loop
    (:data:`EVALUATED_PER_LOOP`). From the mirror of the pending runs (:func:`~airflow_partitions.
    tools.state.kept.cache.mirror_for`: Airflow indexes none of their columns but the id), read once
    per Dag read: its places, its head and what lies beyond come from the list.
    """
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import dag

    live = set(session.scalars(select(dag.c.dag_id).where(dag.c.is_stale.is_(False))))
    return [
        (run.id, run.dag_id, run.partition_key)
        for run in mirror_for(session).open_runs()
        if run.dag_id in live
    ]


def queue_places(pending: Queue, apdr_ids: list[int]) -> dict[int, int]:
    """Return each of the pending runs *apdr_ids*' place in the queue *pending* (1-based)."""
    wanted = set(apdr_ids)
    return {apdr_id: place for place, (apdr_id, _, _) in enumerate(pending, 1) if apdr_id in wanted}


def oldest_pending(session: Any, dag_ids: list[str]) -> dict[str, datetime]:
    """
    Return when each Dag's oldest pending partitioned Dag run was opened (UTC): its ``created_at``.

    From the mirror of the pending runs; a Dag without a pending run is not in the answer.
    """
    found: dict[str, datetime] = {}
    for run in mirror_for(session).open_runs(dag_ids):  # oldest first
        found.setdefault(run.dag_id, run.created_at)
    return found


def starved_counts(session: Any, dag_ids: list[str]) -> Counter[str]:
    """Return each Dag's pending runs beyond the 500 oldest of the deployment (not evaluated this loop)."""
    wanted = set(dag_ids)
    return Counter(dag_id for _, dag_id, _ in queue(session)[EVALUATED_PER_LOOP:] if dag_id in wanted)


def queue_summary(session: Any, pending: Queue, dag_id: str, only: str | None = None) -> tuple[int, int, int]:
    """
    Return the deployment's pending runs, how many hold only keys that never count, *dag_id*'s starved.

    From the queue *pending* (:func:`queue`). The second counts the pending runs among the 500
    evaluated ahead of this Dag's oldest (of the partition *only*'s, if given: ``status --key``);
    the third, this Dag's pending runs (the partition's) beyond the 500 oldest (not evaluated this
    loop).
    """

    def mine(owner: str, key: str) -> bool:
        return owner == dag_id and only in (None, key)

    head = pending[:EVALUATED_PER_LOOP]
    starved = sum(mine(owner, key) for _, owner, key in pending[EVALUATED_PER_LOOP:])
    # This Dag's oldest pending run (of the partition asked for) within the evaluated ones; if
    # it is beyond them (starved), all of them are ahead of it; without a pending run nothing is.
    first = next((place for place, (_, owner, key) in enumerate(head) if mine(owner, key)), None)
    ahead = head[:first] if first is not None else head if starved else []
    return len(pending), blocked([(run, owner) for run, owner, _ in ahead], session), starved


def blocked(ahead: list[Any], session: Any) -> int:
    """Return how many pending runs *ahead* hold only keys their rollup will never count."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset, partitioned_asset_key_log

    if not ahead:
        return 0
    dag_of = dict(ahead)
    keys: dict[int, list[tuple[str, str, str, str]]] = defaultdict(list)
    for chunk in chunks(list(dag_of)):
        for apdr_id, name, uri, key, target in session.execute(
            own_logs(
                select(
                    partitioned_asset_key_log.c.asset_partition_dag_run_id,
                    asset.c.name,
                    asset.c.uri,
                    partitioned_asset_key_log.c.source_partition_key,
                    partitioned_asset_key_log.c.target_partition_key,
                ).join(asset, asset.c.id == partitioned_asset_key_log.c.asset_id),
                chunk,
            )
        ):
            keys[apdr_id].append((name, uri, key, target))
    from airflow_partitions.tools.state.kept.answers import Answers

    readers = {}
    for dag_id in set(dag_of.values()):
        with contextlib.suppress(ValueError):  # no longer a partitioned consumer: none of its runs counts
            readers[dag_id] = Answers(dag_id, session)
    blocked = 0
    for apdr_id, logged in keys.items():
        reader = readers.get(dag_of[apdr_id])
        blocked += reader is not None and reader.never_counting_only(logged)
    return blocked


def open_rows(session: Any, dag_id: str, *columns: Any, where: tuple[Any, ...] = ()) -> list[Any]:
    """
    Return *columns* of *dag_id*'s open pending runs (no Dag run yet) that meet *where*, by id.

    Airflow indexes no column of ``asset_partition_dag_run`` but its id, and its rows are large
    (each holds its Dag's rollup fingerprint): a scan for one Dag's open runs read the whole
    table, 2,100,000 rows and 5 s at a million partitions. The ids come from the mirror
    (:func:`~airflow_partitions.tools.state.kept.cache.mirror_for`, in step with the database), the
    rows from Airflow by primary key, 5,000 ids a query, each checked again (its Dag, no Dag run,
    *where*): as exact as the scan. *columns* and *where* are of
    :data:`~airflow_partitions.tools.state.tables.asset_partition_dag_run`.
    """
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as run

    ids = [pending.id for pending in mirror_for(session).open_runs([dag_id])]
    found: list[Any] = []
    for chunk in chunks(ids):
        query = select(*columns).where(
            run.c.id.in_(chunk), run.c.target_dag_id == dag_id, run.c.created_dag_run_id.is_(None), *where
        )
        found.extend(session.execute(query).all())
    return found
