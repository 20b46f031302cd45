"""Queries on Airflow's audit log (``log``): the keys a consumer's mapper refused on arrival."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import replace
from datetime import datetime
from typing import Any

from airflow_partitions.grains import Grain
from airflow_partitions.tools.state.model import LISTED, REFUSED_EVENT, Refusal, in_time_range, time_part
from airflow_partitions.tools.state.sql import chunks


def first_refused_for(session: Any, dag_id: str, variable: str) -> datetime | None:
    """
    Return when *dag_id* first refused a key for its members Variable *variable* since its newest Dag run.

    The start of a broken members Variable that every face says alike: read from Airflow's audit
    log (the deployment's record, where a process's own first failed read is only its own), the
    first refusal whose message names the Variable (``Airflow Variable 'retail_stores' is not
    JSON …``) after the Dag's newest Dag run was created (while it is broken, no run fires).
    ``requeue --start`` of that time queues again every key refused since. ``None``: no key was
    refused for it yet. UTC.
    """
    from sqlalchemy import func, or_, select

    from airflow_partitions.tools.state.tables import dag_run, log

    newest = select(func.max(dag_run.c.created_at)).where(dag_run.c.dag_id == dag_id).scalar_subquery()
    rows = session.execute(
        select(log.c.dttm, log.c.extra)
        .where(
            *_refused_by(dag_id),
            log.c.extra.contains(variable, autoescape=True),
            or_(newest.is_(None), log.c.dttm > newest),
        )
        .order_by(log.c.id)
    )
    named = f"Variable {variable!r}"
    return next((when for when, extra in rows if named in Refusal.read(when, extra).message), None)


def _refused_by(dag_id: str) -> list[Any]:
    """Return SQL conditions: an audit-log row of a key *dag_id*'s mapper refused on arrival."""
    from airflow_partitions.tools.state.tables import log

    return [log.c.event == REFUSED_EVENT, log.c.extra.contains(f"in target Dag '{dag_id}'")]


def refusals_of(
    session: Any,
    dag_id: str,
    only: str | None,
    start: str | None = None,
    end: str | None = None,
    grain: Grain | None = None,
) -> tuple[tuple[Refusal, ...], int]:
    """
    Return the latest keys refused on arrival for *dag_id* (at most :data:`LISTED`, oldest first), and all.

    Of the partition *only*, if given (``status --key``); else of the time range [*start*, *end*]
    (bounds on the Dag's keys, :func:`in_selected_range`), if given: ``status --start 2026-12-02``
    leaves out a refused ``store-007|2026-11-29``. Each marked :func:`requeued` if it was.
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import log

    conditions = _refused_by(dag_id)
    if only is None and (start is not None or end is not None):
        rows = session.execute(select(log.c.dttm, log.c.extra).where(*conditions).order_by(log.c.id))
        selected = [
            r
            for r in (Refusal.read(when, extra) for when, extra in rows)
            if in_selected_range(r, start, end, grain)
        ]
        return requeued(session, selected[-LISTED:]), len(selected)
    if only is not None:
        conditions.append(log.c.extra.contains(f"'{only}'"))
    total = session.scalar(select(func.count(log.c.id)).where(*conditions)) or 0
    latest = session.execute(
        select(log.c.dttm, log.c.extra).where(*conditions).order_by(log.c.id.desc()).limit(LISTED)
    )
    return requeued(session, reversed([Refusal.read(when, extra) for when, extra in latest])), total


def in_selected_range(refusal: Refusal, start: str | None, end: str | None, grain: Grain | None) -> bool:
    """
    Return whether *refusal*'s key lies in [*start*, *end*], bounds on the time part of the Dag's keys.

    The refused key's time part is read as the Dag's keys are, in its *grain* (the period it falls
    in: ``2026-11-29T05`` is the day ``2026-11-29``, the retail week ``R2026-W44``), and compared as
    :func:`in_time_range` compares keys; as written where *grain* is ``None`` or cannot read it (a
    Saturday under business days). A row not in Airflow 3.3's wording has no key: never in a range.
    """
    if refusal.partition_key is None:
        return False
    part = time_part(refusal.partition_key)
    if grain is not None:
        with suppress(ValueError):
            part = grain.key(grain.floor_key(part))
    return in_time_range(part, start, end)


def requeued(session: Any, refusals: Iterable[Refusal]) -> tuple[Refusal, ...]:
    """
    Return *refusals* with ``requeued`` set on each whose refused asset event now feeds a run of its Dag.

    After ``airflow-partitions requeue --yes`` queued it (once a changed mapper, or a Variable's new
    members, took the key): a ``partitioned_asset_key_log`` row of the Dag for the key and asset,
    written after the refusal, links an asset event sent no later than the refusal (the refused
    one). A key sent again later and counted is a new event: its refusal stays unmarked. One query
    per 1,000 keys.
    """
    from airflow_partitions.tools.state.kept.cache import kept, mirror_for
    from airflow_partitions.tools.state.kept.store import digest

    refusals = tuple(refusals)
    dags = sorted({r.dag_id for r in refusals if r.dag_id is not None})
    if not dags:
        return refusals
    # Kept while the Dags' pending runs and their keys stay as they are (the mirror's versions): a
    # requeue, a key logged or a pending run removed moves them. The key log has no index but the
    # pending run's: each read scanned it whole (23 s at a million partitions on SQLite).
    mirror = mirror_for(session)
    moved = mirror.key_versions(dags)
    versions = [[*mirror.versions(dags)[dag], moved[dag]] for dag in dags]
    asked = digest((r.dag_id or "", r.asset or "", r.partition_key or "", str(r.when)) for r in refusals)
    flags = kept(("requeued", dags[0], asked), versions, lambda: _requeued(session, refusals, dags), session)
    return tuple(replace(r, requeued=True) if flag else r for r, flag in zip(refusals, flags, strict=True))


def _requeued(session: Any, refusals: tuple[Refusal, ...], dags: list[str]) -> list[bool]:
    """Return, for each of *refusals* (of *dags*), whether it was requeued (:func:`requeued`)."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset, asset_event, partitioned_asset_key_log

    keys = sorted({r.partition_key for r in refusals if r.partition_key is not None})
    log = partitioned_asset_key_log
    linked: dict[tuple[str | None, ...], list[tuple[Any, Any]]] = defaultdict(list)
    for some in chunks(keys):
        for dag, name, key, written, sent in session.execute(
            select(
                log.c.target_dag_id,
                asset.c.name,
                log.c.source_partition_key,
                log.c.created_at,
                asset_event.c.timestamp,
            )
            .join(asset, asset.c.id == log.c.asset_id)
            .join(asset_event, asset_event.c.id == log.c.asset_event_id)
            .where(log.c.source_partition_key.in_(some), log.c.target_dag_id.in_(dags))
        ):
            linked[dag, name, key].append((written, sent))

    def taken_again(r: Refusal) -> bool:
        links = linked.get((r.dag_id, r.asset, r.partition_key), ())
        return r.when is not None and any(sent <= r.when < written for written, sent in links)

    return [taken_again(r) for r in refusals]


def asset_refusals(session: Any, asset_name: str, start: str | None, end: str | None) -> list[Refusal]:
    """
    Return the keys of *asset_name* refused on arrival, oldest first, in the time range (start, end).

    Each marked :func:`requeued` if it was.
    """
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
    return list(requeued(session, refusals))


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
