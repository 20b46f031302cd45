"""Queries on Airflow's Dag runs (``dag_run``) of partitioned consumers, by partition key."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from datetime import timedelta
from typing import Any

from airflow_partitions.tools.state.kept.cache import kept
from airflow_partitions.tools.state.kept.store import digest
from airflow_partitions.tools.state.sql import chunks, state_name


def run_states(dag_id: str, keys: Iterable[str], session: Any) -> dict[str, list[str]]:
    """
    Return the states of *dag_id*'s runs of each of *keys* that has runs, oldest run first.

    ``{"2026-03-03": ["failed", "success"]}``: 2026-03-03 failed, then its rerun succeeded; keys
    without a run are left out. One query on ``dag_run`` per 5,000 keys (:data:`.sql.CHUNK`).
    """
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import dag_run

    states: dict[str, list[str]] = defaultdict(list)
    for chunk in chunks(sorted(set(keys))):
        for key, state in session.execute(
            select(dag_run.c.partition_key, dag_run.c.state)
            .where(dag_run.c.dag_id == dag_id, dag_run.c.partition_key.in_(chunk))
            .order_by(dag_run.c.id)
        ):
            states[key].append(state_name(state))
    return dict(states)


def latest_runs(
    dag_id: str, keys: Iterable[str], session: Any, prints: dict[str, tuple[Any, ...]]
) -> dict[str, int]:
    """
    Return the id of the latest Dag run of each of *keys* that has one: ``{"2026-03-03": 41}``.

    The latest is the greatest id (Airflow gives a new run an id above every other). Kept while
    the Dag's fingerprint (*prints*) holds: Airflow indexes no run by its key, so this reads the
    Dag's runs (one query per 5,000 keys); a run cleared and run again keeps its id.
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import dag_run

    wanted = sorted(set(keys))

    def read() -> dict[str, int]:
        found: dict[str, int] = {}
        for chunk in chunks(wanted):
            found.update(
                session.execute(
                    select(dag_run.c.partition_key, func.max(dag_run.c.id))
                    .where(dag_run.c.dag_id == dag_id, dag_run.c.partition_key.in_(chunk))
                    .group_by(dag_run.c.partition_key)
                ).all()
            )
        return found

    return dict(kept(("latest runs", dag_id, digest(wanted)), prints.get(dag_id), read, session))


def latest_of(dag_ids: Collection[str]) -> Any:
    """Select the id of each partition key's latest Dag run of the Dags *dag_ids* (a subquery)."""
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import dag_run

    return (
        select(func.max(dag_run.c.id).label("id"))
        .where(dag_run.c.dag_id.in_(dag_ids), dag_run.c.partition_key.is_not(None))
        .group_by(dag_run.c.dag_id, dag_run.c.partition_key)
        .subquery()
    )


def with_runs(
    session: Any, pending: Iterable[tuple[str, str]], prints: dict[str, tuple[Any, ...]]
) -> set[tuple[str, str]]:
    """
    Return those of the *pending* ``(dag_id, partition_key)`` pairs that have a Dag run.

    Kept per Dag while its fingerprint (*prints*) holds: a Dag run or pending run added or
    changed moves it.
    """
    by_dag: dict[str, list[str]] = defaultdict(list)
    for dag_id, key in pending:
        by_dag[dag_id].append(key)
    return {
        (dag_id, key)
        for dag_id, keys in by_dag.items()
        for key in kept(
            ("with runs", dag_id, digest(keys)),
            prints.get(dag_id),
            lambda dag_id=dag_id, keys=keys: set(run_states(dag_id, keys, session)),
            session,
        )
    }


#: The run type of the Dag runs the scheduler creates from asset events (``DagRunType.ASSET_TRIGGERED``).
ASSET_TRIGGERED = "asset_triggered"


def fired_query(dag_id: str) -> Any:
    """
    Select the fired pending runs of *dag_id* with their Dag run's key: ``(partition_key, id)``, oldest first.

    Read from ``asset_partition_dag_run`` (one scan: Airflow indexes none of its columns but the
    id), each joined to its Dag run by that run's primary key; add columns of ``DagRun`` to it.
    """
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run, dag_run

    return (
        select(dag_run.c.partition_key, asset_partition_dag_run.c.id)
        .select_from(asset_partition_dag_run)
        .join(dag_run, dag_run.c.id == asset_partition_dag_run.c.created_dag_run_id)
        .where(asset_partition_dag_run.c.target_dag_id == dag_id)
        .order_by(asset_partition_dag_run.c.id)
    )


def unproven(readers: dict[str, Any], dialect: str) -> Any:
    """
    Return SQL: whether a Dag run of one of *readers*' Dags may have fired without all its keys.

    ``None`` if no Dag's rollups can fire incomplete. A run is proven complete when its Dag
    waits for all keys, or when Airflow created it before its ``partition_date`` plus the Dag's
    :meth:`Reader.bounds` (the comparison is the database's: no row is read for it);
    an unknown database or a missing date proves nothing.
    """
    from sqlalchemy import and_, false, func, literal, or_, text

    from airflow_partitions.tools.state.tables import dag_run

    created, anchor = func.coalesce(dag_run.c.created_at, dag_run.c.run_after), dag_run.c.partition_date
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
            cases.append(dag_run.c.dag_id == dag_id)
            continue
        shortest, typical, shorter = bounds
        proven = before(shortest)
        if shorter is not None:
            proven = or_(proven, and_(before(typical), dag_run.c.partition_date.not_in(shorter)))
        cases.append(and_(dag_run.c.dag_id == dag_id, ~func.coalesce(proven, false())))
    return or_(*cases) if cases else None
