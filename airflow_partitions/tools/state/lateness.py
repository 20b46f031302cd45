"""
Which partitions are late: no successful Dag run although their period ended ``expected_within`` ago.

Only Dags whose mappers say when their partitions are expected (our rollups' ``expected_within``,
:class:`~airflow_partitions.ExpectedWithinMapper`) are read. A partition whose latest Dag run
succeeded is never late, so only the others are looked at: pending runs without a Dag run, and
latest Dag runs that are queued, running or failed (two grouped queries for all the Dags); their
keys' times come from the mappers (:meth:`~airflow_partitions.tools.state.reader.Reader.late_at`).
Those keys are kept while the Dag's rows hold (its fingerprint), as the reader's other answers.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.kept.cache import (
    keep,
    keep_until,
    kept,
    kept_until,
    kept_value,
    mirror_for,
)
from airflow_partitions.tools.state.model import is_selected, late_since
from airflow_partitions.tools.state.plain import jsonable, rebuilt_as
from airflow_partitions.tools.state.runs import latest_of, with_runs
from airflow_partitions.tools.state.sql import selected_keys, state_name


def late_keys(
    readers: dict[str, Any],
    session: Any,
    prints: dict[str, tuple[Any, ...]],
    start: str | None = None,
    end: str | None = None,
    only: str | None = None,
) -> dict[str, dict[str, tuple[datetime, str | None]]]:
    """
    Return, per Dag of *readers*, its late partitions: key to (late since, its latest run's state).

    The state is ``None`` for a pending run without a Dag run. Keys selected as
    :func:`~airflow_partitions.tools.state.sql.selected_keys` does (*only*, else the time range
    *start* to *end*); each reader's ``now`` is the time compared with. The keys that may be late
    (those whose latest run has not succeeded) and when each is late (from the mappers) are kept
    while the Dag's fingerprint (*prints*, :func:`~airflow_partitions.tools.state.kept.fingerprint.
    fingerprints`) holds, and so is the answer, until the first candidate not late yet becomes
    late (comparing 30,000 candidates with the clock took 0.1 s of each read at a million).
    """
    expecting = {dag_id: reader for dag_id, reader in readers.items() if reader.expects}
    found: dict[str, dict[str, tuple[datetime, str | None]]] = {}

    def late_memo(dag_id: str) -> tuple[Any, ...]:
        return ("late", dag_id, expecting[dag_id].answers.key, start, end, only)

    for dag_id, reader in expecting.items():
        kept_one = (
            None
            if reader.answers.key is None
            else kept_until(late_memo(dag_id), prints.get(dag_id), reader.now, session)
        )
        if kept_one is not None:
            found[dag_id] = {key: (datetime.fromisoformat(since), state) for key, since, state in kept_one}
    todo = {dag_id: reader for dag_id, reader in expecting.items() if dag_id not in found}
    for dag_id, candidates in _candidates(list(todo), session, prints, start, end, only).items():
        reader = todo[dag_id]

        # When each candidate is late, from the mappers: kept with the candidates (one answer: a
        # JSON text of key to ISO time, read back in C), under the key of the mappers' answers
        # (``None``: members that may change, never kept).
        def work_out(reader: Any = reader, candidates: dict[str, str | None] = candidates) -> str:
            return json.dumps({key: jsonable(reader.late_at(key)) for key in candidates})

        version = reader.answers.key
        memo = ("late at", dag_id, version, start, end, only)
        text = work_out() if version is None else kept(memo, prints.get(dag_id), work_out, session)
        times = json.loads(text)
        found[dag_id], ahead = {}, []
        for key, state in candidates.items():
            late_at = rebuilt_as(datetime, times[key])
            since = late_since(state or "pending", late_at, reader.now)
            if since is not None:
                found[dag_id][key] = (since, state)
            elif late_at is not None and late_at > reader.now:
                ahead.append(late_at)
        if version is not None:  # kept until the first candidate not late yet becomes late
            late = [[key, since.isoformat(), state] for key, (since, state) in found[dag_id].items()]
            until = min(ahead, default=None)
            keep_until(late_memo(dag_id), prints.get(dag_id), late, reader.now, until, session)
    return {dag_id: late for dag_id, late in found.items() if late}


def _candidates(
    dag_ids: list[str],
    session: Any,
    prints: dict[str, tuple[Any, ...]],
    start: str | None,
    end: str | None,
    only: str | None,
) -> dict[str, dict[str, str | None]]:
    """Return, per Dag, its selected keys whose latest run has not succeeded, with that run's state."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import dag_run

    def memo(dag_id: str) -> tuple[Any, ...]:
        return ("late candidates", dag_id, start, end, only)

    answers: dict[str, dict[str, str | None]] = {}
    for dag_id in dag_ids:
        found = kept_value(memo(dag_id), prints, session)
        if found is not None:
            answers[dag_id] = found[1]
    todo = [dag_id for dag_id in dag_ids if dag_id not in answers]
    if not todo:
        return answers
    waiting = [
        (run.dag_id, run.partition_key)
        for run in mirror_for(session).open_runs(todo)
        if is_selected(run.partition_key, start, end, only)
    ]
    ran = with_runs(session, waiting, prints)
    candidates: dict[str, dict[str, str | None]] = {dag_id: {} for dag_id in todo}
    for dag_id, key in waiting:
        if (dag_id, key) not in ran:
            candidates[dag_id][key] = None
    latest = latest_of(todo)
    for dag_id, key, state in session.execute(
        select(dag_run.c.dag_id, dag_run.c.partition_key, dag_run.c.state)
        .join(latest, latest.c.id == dag_run.c.id)
        .where(dag_run.c.state != "success", *selected_keys(dag_run.c.partition_key, start, end, only))
    ):
        candidates[dag_id][key] = state_name(state)
    for dag_id in todo:
        keep(memo(dag_id), prints.get(dag_id), candidates[dag_id], session)
    return {**answers, **candidates}
