"""
Remove the bookkeeping Airflow keeps forever for partitioned runs that fired: ``clean --before``.

Airflow writes an ``asset_partition_dag_run`` row per pending partitioned run and a
``partitioned_asset_key_log`` row per key it receives; when the run fires, the row stays (it
points at its Dag run) and so do its key-log rows. Nothing deletes them, and ``airflow db clean``
does not cover them: a deployment with hourly partitions gains millions of rows a year, which the
scheduler's loop and the state reader scan (Airflow indexes none of the table's columns but the
id). :func:`fired_rows` counts those of runs that fired, opened before a date; :func:`clean`
deletes them in batches, each its own transaction, while Airflow runs. A pending run's rows (no
Dag run yet) are never touched, nor are Dag runs or asset events. What a cleaned run ran with is
no longer kept: ``status`` and the view then say so (``ran_with_kept`` false), never a guess.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.tools.state.model import CLEANED_EVENT
from airflow_partitions.tools.write import audit, remove_pending_rows

#: Pending-run rows deleted per transaction (with their key-log rows): short locks, steady progress.
BATCH = 1000


@dataclass(frozen=True)
class Cleaned:
    """
    What :func:`fired_rows` found (or :func:`clean` removed) before *before*: rows, per Dag.

    ``by_dag`` maps each Dag to ``[pending-run rows, key-log rows]``; ``removed`` tells a removal
    from a dry run.
    """

    before: datetime
    pending_rows: int
    key_log_rows: int
    by_dag: dict[str, list[int]]
    removed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (``before`` as ISO 8601)."""
        return {**asdict(self), "before": self.before.isoformat()}


def fired_rows(before: datetime, *, dag_id: str | None = None, session: Any = None) -> Cleaned:
    """
    Count the rows of partitioned runs that fired, opened before *before* (aware, or naive UTC).

    Read-only: per Dag (only *dag_id* if given), its ``asset_partition_dag_run`` rows with a Dag
    run and ``created_at`` before *before*, and their ``partitioned_asset_key_log`` rows. Airflow
    indexes no column of the first table but its id, and its rows are large (each holds its Dag's
    rollup fingerprint): they are found in the mirror of the pending runs (:func:`fired_spans`,
    spans of consecutive ids), and their key-log rows counted on Airflow's index of the pending
    run id (``idx_pakl_apdr_id``), one range per span. When the mirror holds rows the table no longer
    has (the fired rows of Dag runs deleted since it was copied: more rows than the table), the
    table is read instead, one scan (:func:`_scanned`; 23 s at a million partitions on SQLite).

    :raises UnknownDag: naming *dag_id*, if the deployment has no such Dag and no rows of it (a
        deleted Dag's rows are still counted).
    """
    if session is None:
        from airflow_partitions.tools.state.database import read_session

        with read_session() as new:
            return fired_rows(before, dag_id=dag_id, session=new)
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.kept.cache import at_one_moment, mirror_for
    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending

    before = _utc(before)
    at_one_moment(session)  # the mirror in step, then the table's rows counted at one moment
    mirror = mirror_for(session)
    with mirror.lock:
        held = mirror.connection.execute("SELECT count(*) FROM pending_runs WHERE db = ?", (mirror.db,))
        trusted = held.fetchone()[0] == session.scalar(select(func.count()).select_from(pending))
    if trusted:  # else it holds fired rows of Dag runs deleted since it was copied
        by_dag = _spanned(fired_spans(mirror, before, dag_id), session)
    else:
        by_dag = _scanned(before, dag_id, session)
    if dag_id is not None and not by_dag:
        from airflow_partitions.tools.state.serialized import known_dag

        known_dag(dag_id, session)  # a deleted Dag's rows are counted: only a Dag with none is unknown
    return _tally(before, by_dag)


def fired_spans(mirror: Any, before: datetime, dag_id: str | None) -> list[tuple[str, int, int, int]]:
    """
    Return the fired rows *mirror* holds opened before *before* (of *dag_id*) as spans of consecutive ids.

    ``(dag_id, first id, last id, rows)``: every id from the first to the last is a fired row of
    that Dag opened before *before* (a span ends at an id the mirror does not hold, or holds
    open, later, or of another Dag). Worked out in the mirror's file
    (:class:`~airflow_partitions.tools.state.kept.mirror.Mirror`), in id order, whatever the
    number of rows (1,100,000 at a million partitions).
    """
    from airflow_partitions.tools.state.kept.gaps import stamp

    only = "AND dag = ?" if dag_id is not None else ""
    query = (
        "SELECT dag, min(id), max(id), count(*) FROM (SELECT id, dag, "
        "sum(new) OVER (ORDER BY id) AS span FROM (SELECT id, dag, "
        "CASE WHEN lag(id) OVER w = id - 1 AND lag(dag) OVER w = dag THEN 0 ELSE 1 END AS new "
        f"FROM pending_runs WHERE db = ? AND fired IS NOT NULL AND created < ? {only} "
        "WINDOW w AS (ORDER BY id))) GROUP BY span ORDER BY span"
    )
    parameters = (mirror.db, stamp(before), *([dag_id] if dag_id is not None else []))
    with mirror.lock:
        return [tuple(row) for row in mirror.connection.execute(query, parameters)]


#: Spans of pending-run ids counted per query by :func:`_spanned` (three parameters each).
SPANS = 100


def _spanned(spans: list[tuple[str, int, int, int]], session: Any) -> dict[str, list[int]]:
    """Return ``{dag_id: [pending-run rows, key-log rows]}`` of *spans* ``(dag, first id, last id, rows)``."""
    from sqlalchemy import text

    by_dag: dict[str, list[int]] = {}
    for dag, _, _, n in spans:
        by_dag.setdefault(dag, [0, 0])[0] += n
    one = (
        "SELECT :d{0} AS dag, count(*) AS n FROM partitioned_asset_key_log "
        "WHERE asset_partition_dag_run_id BETWEEN :lo{0} AND :hi{0}"
    )
    for first in range(0, len(spans), SPANS):
        batch = spans[first : first + SPANS]
        query = " UNION ALL ".join(one.format(i) for i in range(len(batch)))
        values = {
            f"{name}{i}": v
            for i, (*span, _) in enumerate(batch)
            for name, v in zip(("d", "lo", "hi"), span, strict=True)
        }
        for dag, n in session.execute(text(query), values):
            by_dag[dag][1] += n
    return by_dag


def _scanned(before: datetime, dag_id: str | None, session: Any) -> dict[str, list[int]]:
    """Return ``{dag_id: [pending-run rows, key-log rows]}`` read from Airflow's table, one scan."""
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending
    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    logged = (
        select(func.count())
        .where(key_log.c.asset_partition_dag_run_id == pending.c.id)
        .correlate(pending)
        .scalar_subquery()
    )
    conditions = [pending.c.created_dag_run_id.is_not(None), pending.c.created_at < before]
    if dag_id is not None:
        conditions.append(pending.c.target_dag_id == dag_id)
    query = select(pending.c.target_dag_id, func.count(), func.sum(logged)).where(*conditions)
    return {
        dag: [n, int(logs or 0)] for dag, n, logs in session.execute(query.group_by(pending.c.target_dag_id))
    }


def clean(
    before: datetime, *, dag_id: str | None = None, user: str | None = None, batch: int = BATCH
) -> Cleaned:
    """
    Delete :func:`fired_rows`' rows in batches of *batch* pending-run rows, each batch committed.

    Counts what it deletes (a run that fires meanwhile and opened before *before* is deleted
    too, and counted).

    A batch selects fired rows (``created_dag_run_id`` set: the scheduler never changes them
    again), deletes their key-log rows, then them. One audit-log row per Dag cleaned (event
    ``partition-tools clean``, *user* as owner, default the operating-system user; ``extra`` the
    counts and *before*).

    :returns: What was removed, with ``removed=True``.
    :raises UnknownDag: as :func:`fired_rows`, before anything is removed.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    if dag_id is not None:
        fired_rows(before, dag_id=dag_id)  # an unknown Dag is named, as in the dry run

    fired = _fired(before, dag_id)
    by_dag: dict[str, list[int]] = {}
    while True:
        with create_session() as session:
            rows = session.execute(
                select(AssetPartitionDagRun.id, AssetPartitionDagRun.target_dag_id).where(*fired).limit(batch)
            ).all()
            if not rows:
                break
            ids = [row_id for row_id, _ in rows]
            for _, dag in rows:
                by_dag.setdefault(dag, [0, 0])[0] += 1
            for dag, n in _logged_by_dag(session, AssetPartitionDagRun.id.in_(ids)):
                by_dag[dag][1] += n
            remove_pending_rows(session, ids)
    found = _tally(before, by_dag, removed=True)
    with create_session() as session:
        for dag, (pending, logged_rows) in found.by_dag.items():
            what = {"before": found.before.isoformat(), "pending_rows": pending, "key_log_rows": logged_rows}
            audit(session, CLEANED_EVENT, dag, user, what)
    return found


def _logged_by_dag(session: Any, *conditions: Any) -> list[tuple[str, int]]:
    """Return ``(dag_id, key-log rows)`` of the pending-run rows *conditions* select, per Dag."""
    from airflow.models.asset import AssetPartitionDagRun, PartitionedAssetKeyLog
    from sqlalchemy import func, select

    return [
        (dag, n)
        for dag, n in session.execute(
            select(AssetPartitionDagRun.target_dag_id, func.count())
            .join(
                PartitionedAssetKeyLog,
                PartitionedAssetKeyLog.asset_partition_dag_run_id == AssetPartitionDagRun.id,
            )
            .where(*conditions)
            .group_by(AssetPartitionDagRun.target_dag_id)
        )
    ]


def _tally(before: datetime, by_dag: dict[str, list[int]], *, removed: bool = False) -> Cleaned:
    """Return the :class:`Cleaned` of *by_dag*'s counts (``{dag_id: [pending rows, key-log rows]}``)."""
    return Cleaned(
        _utc(before),
        sum(n for n, _ in by_dag.values()),
        sum(n for _, n in by_dag.values()),
        dict(sorted(by_dag.items())),
        removed,
    )


def _fired(before: datetime, dag_id: str | None) -> list[Any]:
    """Return SQL conditions: a pending-run row of a run that fired, opened before *before*."""
    from airflow.models.asset import AssetPartitionDagRun

    conditions = [
        AssetPartitionDagRun.created_dag_run_id.is_not(None),
        AssetPartitionDagRun.created_at < _utc(before),
    ]
    if dag_id is not None:
        conditions.append(AssetPartitionDagRun.target_dag_id == dag_id)
    return conditions


def _utc(when: datetime) -> datetime:
    """Return *when* in UTC (naive: UTC already)."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
