"""Which partition keys of one asset have asset events, and the keys consumers refused (the asset page)."""

from __future__ import annotations

from typing import Any

from airflow_partitions.grains import Grain
from airflow_partitions.tools.errors import UnknownAsset
from airflow_partitions.tools.state.audit_log import asset_refusals
from airflow_partitions.tools.state.model import AssetCoverage, KeyEvents, in_time_range
from airflow_partitions.tools.state.selection import selected_range
from airflow_partitions.tools.state.sql import as_utc


def asset_coverage(
    asset_name: str,
    *,
    start: str | None = None,
    end: str | None = None,
    grain: Grain | None = None,
    session: Any = None,
) -> AssetCoverage:
    """
    Read which partition keys of the asset *asset_name* have events, and its refused keys.

    One query per table: the asset, its events grouped by partition key, and the audit-log rows
    ``failed to map partition_key`` naming it. *start* and *end* select keys (and refusals) by
    the time part of the key, as the Partitions view's Dag page does: each a key of *grain*
    (the grain the asset's keys are written in, ``None`` if none is known:
    :func:`~airflow_partitions.tools.state.serialized.key_grain`), its leading part or an ISO 8601
    date or time (:func:`~airflow_partitions.tools.state.selection.selected_range`).

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    :raises UnknownAsset: if no active asset is named *asset_name* (404 on the view's asset page).
    :raises UsageError: naming ``--start`` or ``--end``, for a bound the asset's keys cannot
        match, or *start* after *end* (400), once the asset is found.
    """
    if session is None:
        from airflow_partitions.tools.state.database import read_session

        with read_session() as new:
            return _coverage(asset_name, start, end, grain, new)
    return _coverage(asset_name, start, end, grain, session)


def _coverage(
    name: str, start: str | None, end: str | None, grain: Grain | None, session: Any
) -> AssetCoverage:
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import asset, asset_active, asset_event

    found = session.execute(
        select(asset.c.id, asset.c.uri)
        .join(asset_active, (asset_active.c.name == asset.c.name) & (asset_active.c.uri == asset.c.uri))
        .where(asset.c.name == name)
    ).first()
    if found is None:
        raise UnknownAsset(f"No active asset is named {name!r} in this deployment's metadata database.")
    asset_id, uri = found
    start, end = selected_range(name, grain, start, end)
    keys, unkeyed = [], 0
    for key, events, first, last in session.execute(
        select(
            asset_event.c.partition_key,
            func.count(asset_event.c.id),
            func.min(asset_event.c.timestamp),
            func.max(asset_event.c.timestamp),
        )
        .where(asset_event.c.asset_id == asset_id)
        .group_by(asset_event.c.partition_key)
    ):
        if key is None:
            unkeyed = events
        elif in_time_range(key, start, end):
            keys.append(KeyEvents(key, events, as_utc(first), as_utc(last)))
    refusals = asset_refusals(session, name, start, end)
    return AssetCoverage(
        name,
        uri,
        asset_id,
        tuple(sorted(keys, key=lambda k: k.partition_key)),
        tuple(refusals),
        unkeyed,
    )
