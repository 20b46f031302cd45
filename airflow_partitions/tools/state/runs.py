"""Queries on Airflow's Dag runs (``dag_run``) of partitioned consumers, by partition key."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from datetime import timedelta
from typing import Any

from airflow_partitions.tools.state.sql import chunks, state_name


def run_states(dag_id: str, keys: Iterable[str], session: Any) -> dict[str, list[str]]:
    """
    Return the states of *dag_id*'s runs of each of *keys* that has runs, oldest run first.

    ``{"2026-03-03": ["failed", "success"]}``: 2026-03-03 failed, then its rerun succeeded; keys
    without a run are left out. One query on ``dag_run`` per 500 keys.
    """
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    states: dict[str, list[str]] = defaultdict(list)
    for chunk in chunks(sorted(set(keys))):
        for key, state in session.execute(
            select(DagRun.partition_key, DagRun.state)
            .where(DagRun.dag_id == dag_id, DagRun.partition_key.in_(chunk))
            .order_by(DagRun.id)
        ):
            states[key].append(state_name(state))
    return dict(states)


def latest_of(dag_ids: Collection[str]) -> Any:
    """Select the id of each partition key's latest Dag run of the Dags *dag_ids* (a subquery)."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    return (
        select(func.max(DagRun.id).label("id"))
        .where(DagRun.dag_id.in_(dag_ids), DagRun.partition_key.is_not(None))
        .group_by(DagRun.dag_id, DagRun.partition_key)
        .subquery()
    )


def with_runs(session: Any, pending: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Return those of the *pending* ``(dag_id, partition_key)`` pairs that have a Dag run."""
    by_dag: dict[str, list[str]] = defaultdict(list)
    for dag_id, key in pending:
        by_dag[dag_id].append(key)
    return {(dag_id, key) for dag_id, keys in by_dag.items() for key in run_states(dag_id, keys, session)}


#: The run type of the Dag runs the scheduler creates from asset events (``DagRunType.ASSET_TRIGGERED``).
ASSET_TRIGGERED = "asset_triggered"


def fired_query(dag_id: str) -> Any:
    """
    Select the fired pending runs of *dag_id* with their Dag run's key: ``(partition_key, id)``, oldest first.

    Read from ``asset_partition_dag_run`` (one scan: Airflow indexes none of its columns but the
    id), each joined to its Dag run by that run's primary key; add columns of ``DagRun`` to it.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    return (
        select(DagRun.partition_key, AssetPartitionDagRun.id)
        .select_from(AssetPartitionDagRun)
        .join(DagRun, DagRun.id == AssetPartitionDagRun.created_dag_run_id)
        .where(AssetPartitionDagRun.target_dag_id == dag_id)
        .order_by(AssetPartitionDagRun.id)
    )


def unproven(readers: dict[str, Any], dialect: str) -> Any:
    """
    Return SQL: whether a Dag run of one of *readers*' Dags may have fired without all its keys.

    ``None`` if no Dag's rollups can fire incomplete. A run is proven complete when its Dag
    waits for all keys, or when Airflow created it before its ``partition_date`` plus the Dag's
    :meth:`Reader.bounds` (the comparison is the database's: no row is read for it);
    an unknown database or a missing date proves nothing.
    """
    from airflow.models.dagrun import DagRun
    from sqlalchemy import and_, false, func, literal, or_, text

    created, anchor = func.coalesce(DagRun.created_at, DagRun.run_after), DagRun.partition_date
    cases = []

    def before(bound: timedelta) -> Any:
        """Return SQL: whether the run was created before its ``partition_date`` plus *bound*."""
        if dialect == "sqlite":
            return func.julianday(created) < func.julianday(anchor) + bound.total_seconds() / 86400
        if dialect == "postgresql":
            return created < anchor + literal(bound)
        return created < func.date_add(anchor, text(f"INTERVAL {int(bound.total_seconds())} SECOND"))

    for dag_id, reader in readers.items():
        if not reader.may_fire_incomplete:
            continue
        bounds = reader.bounds()
        if bounds is None or dialect not in ("sqlite", "postgresql", "mysql"):
            cases.append(DagRun.dag_id == dag_id)
            continue
        shortest, typical, shorter = bounds
        proven = before(shortest)
        if shorter is not None:
            proven = or_(proven, and_(before(typical), DagRun.partition_date.not_in(shorter)))
        cases.append(and_(DagRun.dag_id == dag_id, ~func.coalesce(proven, false())))
    return or_(*cases) if cases else None
