"""Queries on Airflow's audit log (``log``): the keys a consumer's mapper refused on arrival."""

from __future__ import annotations

from typing import Any

from airflow_partitions.tools.state.model import LISTED, REFUSED_EVENT, Refusal, in_time_range


def refusals_of(session: Any, dag_id: str, only: str | None) -> tuple[tuple[Refusal, ...], int]:
    """
    Return the latest keys refused on arrival for *dag_id* (at most :data:`LISTED`, oldest first), and all.

    Of the partition *only*, if given (``status --key``).
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import log

    conditions = [log.c.event == REFUSED_EVENT, log.c.extra.contains(f"in target Dag '{dag_id}'")]
    if only is not None:
        conditions.append(log.c.extra.contains(f"'{only}'"))
    total = session.scalar(select(func.count(log.c.id)).where(*conditions)) or 0
    latest = session.execute(
        select(log.c.dttm, log.c.extra).where(*conditions).order_by(log.c.id.desc()).limit(LISTED)
    )
    return tuple(reversed([Refusal.read(when, extra) for when, extra in latest])), total


def asset_refusals(session: Any, asset_name: str, start: str | None, end: str | None) -> list[Refusal]:
    """Return the keys of *asset_name* refused on arrival, oldest first, in the time range (start, end)."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import log

    refusals = []
    for when, extra in session.execute(
        select(log.c.dttm, log.c.extra)
        .where(log.c.event == REFUSED_EVENT, log.c.extra.contains(f"(name='{asset_name}', uri="))
        .order_by(log.c.id)
    ):
        refusal = Refusal.read(when, extra)
        if refusal.partition_key is None or in_time_range(refusal.partition_key, start, end):
            refusals.append(refusal)
    return refusals


def refusals_after(session: Any, last_id: int) -> list[tuple[int, Refusal]]:
    """
    Return the keys refused on arrival in the audit-log rows after row *last_id*, with their row ids.

    Oldest first, of every Dag: what the metrics count on from the last row they read (0: every row).
    """
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import log

    return [
        (row_id, Refusal.read(when, extra))
        for row_id, when, extra in session.execute(
            select(log.c.id, log.c.dttm, log.c.extra)
            .where(log.c.event == REFUSED_EVENT, log.c.id > last_id)
            .order_by(log.c.id)
        )
    ]
