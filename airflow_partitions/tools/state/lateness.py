"""
Which partitions are late: no successful Dag run although their period ended ``expected_within`` ago.

Only Dags whose mappers say when their partitions are expected (our rollups' ``expected_within``,
:class:`~airflow_partitions.ExpectedWithinMapper`) are read. A partition whose latest Dag run
succeeded is never late, so only the others are looked at: pending runs without a Dag run, and
latest Dag runs that are queued, running or failed (two grouped queries for all the Dags); their
keys' times come from the mappers (:meth:`~airflow_partitions.tools.state.reader.Reader.late_at`).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.model import late_since
from airflow_partitions.tools.state.runs import latest_of, with_runs
from airflow_partitions.tools.state.sql import selected_keys, state_name


def late_keys(
    readers: dict[str, Any],
    session: Any,
    start: str | None = None,
    end: str | None = None,
    only: str | None = None,
) -> dict[str, dict[str, tuple[datetime, str | None]]]:
    """
    Return, per Dag of *readers*, its late partitions: key to (late since, its latest run's state).

    The state is ``None`` for a pending run without a Dag run. Keys selected as
    :func:`~airflow_partitions.tools.state.sql.selected_keys` does (*only*, else the time range
    *start* to *end*); each reader's ``now`` is the time compared with.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    expecting = {dag_id: reader for dag_id, reader in readers.items() if reader.expects}
    if not expecting:
        return {}
    dag_ids = list(expecting)
    waiting = session.execute(
        select(AssetPartitionDagRun.target_dag_id, AssetPartitionDagRun.partition_key).where(
            AssetPartitionDagRun.target_dag_id.in_(dag_ids),
            AssetPartitionDagRun.created_dag_run_id.is_(None),
            *selected_keys(AssetPartitionDagRun.partition_key, start, end, only),
        )
    ).all()
    ran = with_runs(session, waiting)
    candidates: dict[tuple[str, str], str | None] = {(d, k): None for d, k in waiting if (d, k) not in ran}
    latest = latest_of(dag_ids)
    for dag_id, key, state in session.execute(
        select(DagRun.dag_id, DagRun.partition_key, DagRun.state)
        .join(latest, latest.c.id == DagRun.id)
        .where(DagRun.state != "success", *selected_keys(DagRun.partition_key, start, end, only))
    ):
        candidates[dag_id, key] = state_name(state)
    found: dict[str, dict[str, tuple[datetime, str | None]]] = defaultdict(dict)
    for (dag_id, key), state in candidates.items():
        reader = expecting[dag_id]
        since = late_since(state or "pending", reader.late_at(key), reader.now)
        if since is not None:
            found[dag_id][key] = (since, state)
    return dict(found)
