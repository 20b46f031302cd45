"""Which partition keys of one asset have asset events, and the keys consumers refused (the asset page)."""

from __future__ import annotations

from typing import Any

from airflow_partitions.tools.state.audit_log import asset_refusals
from airflow_partitions.tools.state.model import AssetCoverage, KeyEvents, in_time_range
from airflow_partitions.tools.state.sql import as_utc


def asset_coverage(
    asset_name: str, *, start: str | None = None, end: str | None = None, session: Any = None
) -> AssetCoverage:
    """
    Read which partition keys of the asset *asset_name* have events, and its refused keys.

    One query per table: the asset, its events grouped by partition key, and the audit-log rows
    ``failed to map partition_key`` naming it. *start* and *end* select keys (and refusals) by
    the time part of the key, as the Partitions view's Dag page does.

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    :raises ValueError: if no active asset is named *asset_name*.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return _coverage(asset_name, start, end, new)
    return _coverage(asset_name, start, end, session)


def _coverage(name: str, start: str | None, end: str | None, session: Any) -> AssetCoverage:
    from airflow.models.asset import AssetActive, AssetEvent, AssetModel
    from sqlalchemy import func, select

    found = session.execute(
        select(AssetModel.id, AssetModel.uri)
        .join(AssetActive, (AssetActive.name == AssetModel.name) & (AssetActive.uri == AssetModel.uri))
        .where(AssetModel.name == name)
    ).first()
    if found is None:
        raise ValueError(f"No active asset is named {name!r} in this deployment's metadata database.")
    asset_id, uri = found
    keys, unkeyed = [], 0
    for key, events, first, last in session.execute(
        select(
            AssetEvent.partition_key,
            func.count(AssetEvent.id),
            func.min(AssetEvent.timestamp),
            func.max(AssetEvent.timestamp),
        )
        .where(AssetEvent.asset_id == asset_id)
        .group_by(AssetEvent.partition_key)
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
