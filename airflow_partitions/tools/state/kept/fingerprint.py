"""
A Dag's fingerprint: what changes whenever its runs or pending runs change in a way the reader sees.

An answer read from all of a Dag's rows is kept with the fingerprint it was read under
(:func:`~airflow_partitions.tools.state.kept.cache.keep`) and used again only while the fingerprint
read from the database is the same.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from airflow_partitions.tools.state.database import engine_of
from airflow_partitions.tools.state.kept.cache import mirror_for
from airflow_partitions.tools.state.sql import driver_rows, placeholder

#: The state most of a Dag's runs end in, whose runs are not read (:func:`fingerprints`).
COMMON_STATE = "success"


def fingerprints(dag_ids: list[str], session: Any) -> dict[str, tuple[Any, ...]]:
    """
    Return, per Dag, what changes whenever its runs or pending runs change in a way the reader sees.

    ``(runs, versions)``. What the reader reads of a run never changes but its state (its key,
    type, times of creation and period are written once), so the runs' part is the set of the
    Dag's runs and their states, in what moves when either does, read from Airflow's indexes alone
    (the scheduler's updates of a running run's other columns keep it):

    - the set: the number of runs, and the run version the mirror keeps
      (:meth:`~airflow_partitions.tools.state.kept.mirror.Mirror.versions`), which moves whenever a
      run of the Dag is added (Airflow gives it an id above every id). A run deleted moves the
      count, one deleted as another is added the run version;
    - the states, the set unchanged: per state but :data:`COMMON_STATE` (``success``), the
      number of its runs and a digest of their ids (BLAKE2b of the sorted ids, 16 bytes): which
      runs are in each state, exactly. The common state's runs are the set's less the others',
      telling nothing more. Any run that changes state leaves or enters one of the states read,
      whatever others do at the same time: runs trading states (two failed runs set to success
      and two successful ones to failed, their counts and sums of ids unchanged) move it. A sum
      of a 32-bit hash of the ids, the fingerprint before, missed about two trades in three.

    At a million runs of a Dag, the count takes 0.04 s on SQLite (a walk of the ``dag_id_state``
    index) and 0.04 to 0.06 s on PostgreSQL (an index-only scan of ``idx_dag_run_dag_id``); the
    ids of the states but the common one a search of the same index by state, on the driver's
    cursor (10,000 failed runs at a million partitions). The Dag's greatest id, which the run
    version replaces, took 0.2 s more on PostgreSQL, whose indexes on ``dag_id`` hold no id in
    order. ``versions`` is the mirror's ``(token, pending version, run version)``: the pending
    version goes up whenever one of the Dag's pending runs changes. Runs: ``()`` for a Dag
    without any.

    On PostgreSQL, on an engine without a pool (the command line's,
    :func:`~airflow_partitions.tools.state.database.read_session`), the runs' part is read on a
    connection of its own while the mirror syncs (:func:`~airflow_partitions.tools.state.kept.cache.
    mirror_for`: 0.12 s and 0.19 s at a million runs, one after the other before), in the
    snapshot of *session*'s transaction (``pg_export_snapshot()``): both parts and the answer
    kept with them are of one moment (:func:`~airflow_partitions.tools.state.database.
    one_moment`). On a pooled engine (Airflow's, in the api-server) the two are read one after
    the other: a second connection per read could empty the pool while every request waits for
    one.
    """
    from sqlalchemy.pool import NullPool

    engine = engine_of(session)
    if engine.dialect.name != "postgresql" or not isinstance(engine.pool, NullPool):
        runs = _runs(dag_ids, session)
        versions = mirror_for(session).versions(dag_ids)
    else:
        moment = driver_rows(session, [("SELECT pg_export_snapshot()", ())])[0][0]
        with ThreadPoolExecutor(1) as pool:
            apart = pool.submit(_runs_apart, dag_ids, engine, moment)
            versions = mirror_for(session).versions(dag_ids)
            runs = apart.result()
    return {dag_id: (runs.get(dag_id, ()), versions[dag_id]) for dag_id in dag_ids}


def _runs_apart(dag_ids: list[str], engine: Any, moment: str) -> dict[str, tuple[Any, ...]]:
    """Return :func:`_runs` read on a connection of *engine*'s own, in the snapshot *moment* (exported)."""
    with engine.connect() as connection:
        connection.execution_options(isolation_level="REPEATABLE READ")
        connection.exec_driver_sql("SET TRANSACTION SNAPSHOT %s", (moment,))
        return _runs(dag_ids, connection)


def _runs(dag_ids: list[str], session: Any) -> dict[str, tuple[Any, ...]]:
    """Return the runs' part of each Dag's fingerprint (:func:`fingerprints`), if it has runs."""
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import dag_run

    counts = {
        dag_id: n
        for dag_id in dag_ids
        if (n := session.scalar(select(func.count()).where(dag_run.c.dag_id == dag_id)))
    }
    mark = placeholder(session)
    query = f"SELECT dag_id, state, id FROM dag_run WHERE dag_id IN ({','.join([mark] * len(dag_ids))}) AND "
    # One search of the index per side of the common state (an OR of them walks the Dag's every
    # run), on the driver's cursor (SQLAlchemy hands rows over one by one, 5 µs each).
    sides = [
        (f"state < {mark}", (COMMON_STATE,)),
        (f"state > {mark}", (COMMON_STATE,)),
        ("state IS NULL", ()),
    ]
    ids: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for dag_id, state, run_id in driver_rows(session, [(query + side, (*dag_ids, *p)) for side, p in sides]):
        ids[dag_id, str(state)].append(run_id)
    by_state: defaultdict[str, list[tuple[str, int, str]]] = defaultdict(list)
    for (dag_id, state), found in sorted(ids.items()):
        ordered = array("q", sorted(found)).tobytes()
        by_state[dag_id].append((state, len(found), hashlib.blake2b(ordered, digest_size=16).hexdigest()))
    return {dag_id: (n, tuple(by_state.get(dag_id, []))) for dag_id, n in counts.items()}


def with_members(prints: dict[str, tuple[Any, ...]], readers: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """
    Return *prints* with, for each Dag whose members are read at run time, what they were read from.

    Its rows alone do not tell everything a Dag's answers depend on when its rollups read members
    from an Airflow Variable: a change of the Variable changes what its partitions await
    (:attr:`~airflow_partitions.tools.state.kept.answers.Answers.members`), so the answers kept by
    print are kept by it too.
    """
    return {
        dag_id: (*found, members) if (members := readers[dag_id].answers.members) != "" else found
        for dag_id, found in prints.items()
    }
