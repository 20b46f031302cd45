"""
Which partitions are stale: they succeeded, and a key counted towards them came again after their run started.

Airflow 3.3 (and 3.4 under a rollup's ``RerunPolicy.HOLD``) keeps a key sent for a period that
already has a Dag run in a pending run beside that run (the reader's ``pending_again``): an
upstream key corrected and sent again lands there. A partition is **stale** when its latest Dag
run succeeded with every key it awaits (state ``success``: a run that ran incomplete stays
``ran incomplete``), and the pending run beside it holds a key that counts towards it (not only
keys that never count), logged after that run started (``dag_run.start_date``): the run read the
data before it was corrected. Running the partition again (clearing its run: ``backfill --state
stale``) starts it after the key came, and it is ``success`` again; ``discard`` removes the
pending run beside it, and with it what tells the partition is stale.

Read for every partition a read selects, at the cost of the pending runs beside Dag runs alone: the
latest run of their keys (kept while the Dag's fingerprint holds), the runs' state and start read
by id on every read (a run cleared and run again to the same state keeps its fingerprint, not its
start), and per pending run whether a key counts and when its newest key was logged, kept per Dag
with each run's key-log stamp and worked out again only for the runs whose stamp moved.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.kept.cache import keep, kept_value
from airflow_partitions.tools.state.pending import log_stamps, received_keys
from airflow_partitions.tools.state.plain import jsonable, rebuilt_as
from airflow_partitions.tools.state.runs import latest_runs
from airflow_partitions.tools.state.sql import chunks, state_name

#: One pending run beside a Dag run: ``(dag_id, pending run id, partition key)``.
Beside = tuple[str, int, str]


def stale_keys(
    readers: dict[str, Any],
    session: Any,
    beside: list[Beside],
    overrides: dict[str, dict[str, str]],
    prints: dict[str, tuple[Any, ...]],
) -> dict[str, set[str]]:
    """
    Return, per Dag of *readers*, the keys of its stale partitions among those with a pending run *beside*.

    *overrides* are each Dag's keys whose state only the mappers tell (``"ran incomplete"``: never
    stale); *prints* the Dags' fingerprints. ``{"weather_local_day_jfk": {"2013-03-10"}}``.
    """
    by_dag: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for dag_id, apdr_id, key in beside:
        if key not in overrides.get(dag_id, {}):
            by_dag[dag_id].append((apdr_id, key))
    found: dict[str, set[str]] = {}
    for dag_id, runs in by_dag.items():
        latest = latest_runs(dag_id, [key for _, key in runs], session, prints)
        started = _succeeded_at(session, list(latest.values()))
        candidates = [(i, key) for i, key in runs if latest.get(key) in started]
        facts = beside_facts(readers[dag_id], session, candidates)
        stale = {key for apdr_id, key in candidates if _after(facts[apdr_id], started[latest[key]])}
        if stale:
            found[dag_id] = stale
    return found


def _after(facts: tuple[bool, datetime | None], started: datetime | None) -> bool:
    """Whether a pending run of *facts* holds a key that counts, logged after a run that *started* (UTC)."""
    counts, newest = facts
    return counts and newest is not None and started is not None and newest > started


def _succeeded_at(session: Any, ids: list[int]) -> dict[int, datetime | None]:
    """Return when each of the Dag runs *ids* that succeeded started (UTC; ``None``: not recorded)."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import dag_run

    found: dict[int, datetime | None] = {}
    for chunk in chunks(sorted(ids)):
        for run_id, state, start in session.execute(
            select(dag_run.c.id, dag_run.c.state, dag_run.c.start_date).where(dag_run.c.id.in_(chunk))
        ):
            if state_name(state) == "success":
                found[run_id] = start
    return found


def beside_facts(
    reader: Any, session: Any, runs: list[tuple[int, str]]
) -> dict[int, tuple[bool, datetime | None]]:
    """
    Return, per pending run ``(id, partition key)`` of *runs*, whether a key it holds counts, its newest log.

    ``{41: (True, datetime(2013, 3, 12, 5, tzinfo=UTC))}``. Kept per Dag (under the key of its
    mappers' answers; never for members that may change) as one JSON text of ``[id, stamp, counts,
    newest]`` rows, each run's with its key-log stamp (:func:`~.pending.log_stamps`): only the runs
    whose stamp moved have their keys read.
    """
    if not runs:
        return {}
    version = reader.answers.key
    memo = ("beside facts", reader.dag_id, version)
    kept_one = None if version is None else kept_value(memo, {reader.dag_id: version}, session)
    rows: dict[int, list[Any]] = {row[0]: row[1:] for row in json.loads(kept_one[1])} if kept_one else {}
    stamps = log_stamps(session, [i for i, _ in runs])
    moved = [(i, key) for i, key in runs if rows.get(i, [None])[0] != list(stamps.get(i, (0, 0)))]
    if moved:
        received = received_keys(session, [i for i, _ in moved], stamps)
        logged = _logged_at(session, [stamps[i][1] for i, _ in moved if i in stamps])
        for apdr_id, key in moved:
            progress = reader.answers.pending(key, received.get(apdr_id, {}))[0]
            stamp = stamps.get(apdr_id, (0, 0))
            counts = any(item.counted for item in progress)
            rows[apdr_id] = [list(stamp), counts, jsonable(logged.get(stamp[1]))]
        if version is not None:
            keep(memo, version, json.dumps([[i, *rows[i]] for i, _ in runs]), session)
    return {i: (bool(rows[i][1]), rebuilt_as(datetime, rows[i][2])) for i, _ in runs}


def _logged_at(session: Any, ids: list[int]) -> dict[int, datetime]:
    """Return when each key-log row of *ids* was written (UTC), by its id (Airflow's primary key)."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    found: dict[int, datetime] = {}
    for chunk in chunks(sorted(set(ids))):
        query = select(key_log.c.id, key_log.c.created_at).where(key_log.c.id.in_(chunk))
        found.update((row_id, when) for row_id, when in session.execute(query))
    return found
