"""
Queries on Airflow's serialized Dags: a partitioned consumer's timetable, assets, grain and zones.

The timetable is the one the scheduler runs (the latest serialized Dag), deserialized once per
serialized version and kept (:data:`~airflow_partitions.tools.state.kept.cache.TIMETABLES`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Literal

from airflow_partitions.grains import Grain
from airflow_partitions.tools.errors import NotAConsumer, UnknownDag
from airflow_partitions.tools.state.database import orm_session
from airflow_partitions.tools.state.kept import cache


def consumer_grain(dag_id: str, session: Any) -> Grain | None:
    """
    Return the grain of the periods *dag_id*'s partition keys name, if all its assets' mappers agree.

    A rollup's upstream mapper's grain (``TradingSession(ExchangeCalendar("XNYS"))`` for a
    session's 30-minute bars), a temporal mapper's own; for a Dag without upstream assets, its
    timetable's (``GrainPartitionTimetable(TradingSession(…))``: a producer's sessions); ``None``
    for a Dag whose mappers name no one grain. The Partitions view lays a month of its keys out by
    it: a date without a period (a weekend of business days, a day without a session) is a closed
    place, not an unopened one.

    :raises UnknownDag: as :func:`consumer_timetable`.
    """
    return timetable_grain(*consumer_timetable(dag_id, session))


def timetable_grain(timetable: Any, assets: list[tuple[str, str]]) -> Grain | None:
    """Return :func:`consumer_grain` of the *timetable* and *assets* :func:`consumer_timetable` returned."""
    from airflow_partitions.tools.rollup_view import period_grain

    if not assets:  # a producer partitioned by its own timetable (GrainPartitionTimetable)
        grain = getattr(timetable, "grain", None)
        return grain if isinstance(grain, Grain) else None
    grains = set()
    for name, uri in assets:
        mapper = timetable.get_partition_mapper(name=name, uri=uri)
        grains.add(period_grain(getattr(mapper, "upstream_mapper", None) or mapper))
    return grains.pop() if len(grains) == 1 else None


def has_period_on(grain: Grain, day: str) -> bool:
    """
    Whether *grain* has a period keyed by the date *day* (``2026-11-26`` under NYSE sessions: no).

    A grain whose periods tile time (days, hours) has one on every date; a business day or a
    trading session only on its calendar's days (a date it refuses, or moves to another key, has
    none).
    """
    if grain.tiles:
        return True
    try:
        return grain.parse(day).key == day
    except ValueError:
        return False


def awaited_by_date(mapper: Any) -> Callable[[str], tuple[str, ...] | None] | None:
    """
    Return what the period of each date awaits under *mapper*, for a grain that does not tile time.

    For a rollup of 30-minute bars into NYSE sessions, ``awaited("2026-11-27")`` is its 7 bars in
    time order (``2026-11-27T09:30-05:00`` … ``T12:30-05:00``), ``awaited("2026-11-26")`` is
    ``None`` (no session); for a mapper that is no rollup, ``()`` on a date with a period. The
    whole function is ``None`` for mappers whose grain tiles time (every date has a period: the
    view's hours of a day say what is missing) or that have no grain.
    """
    from airflow_partitions.tools.rollup_view import RollupView

    rollup = RollupView.of(mapper)
    grain = getattr(getattr(mapper, "upstream_mapper", None) if rollup else mapper, "grain", None)
    if not isinstance(grain, Grain) or grain.tiles:  # plain keys only: no composite's dimensions
        return None

    def awaited(day: str) -> tuple[str, ...] | None:
        if not has_period_on(grain, day):
            return None
        if rollup is None:
            return ()
        try:
            return rollup.in_order(rollup.awaited(day))
        except ValueError:
            return None

    return awaited


def key_grain(mapper: Any) -> Grain | None:
    """
    Return the grain the keys *mapper* reads from its asset are written in, if it names one.

    A rollup's window's members' (``TemporalWindow(Hour())``: hours, ``2026-03-08T05``); ``None``
    for any other mapper (a temporal mapper reads any instant, a composite its dimensions): the
    asset page's ``start`` and ``end`` are then compared as written.
    """
    grain = getattr(getattr(mapper, "window", None), "grain", None)
    return grain if isinstance(grain, Grain) else None


def zones_of(mapper: Any) -> tuple[str, str] | None:
    """Return ``(grain zone, input zone)`` of the first of our temporal mappers in *mapper*, else ``None``."""
    grain = getattr(mapper, "grain", None)
    if isinstance(grain, Grain):
        return grain.timezone, getattr(mapper, "input_timezone", None) or grain.timezone
    for inner in (getattr(mapper, "upstream_mapper", None), *getattr(mapper, "mappers", {}).values()):
        if inner is not None and (found := zones_of(inner)):
            return found
    return None


#: What a command needs of the Dag it names (:func:`consumer_timetable`): a partitioned schedule
#: (``status``, ``discard``, ``backfill``, the view); one that reads assets (``requeue``, ``explain``).
Needs = Literal["partitioned", "assets"]


def known_dag(dag_id: str, session: Any) -> None:
    """
    Check that the deployment has a Dag *dag_id* (a serialized Dag of any schedule).

    :raises UnknownDag: ``no Dag 'nope' in this deployment's metadata database (is the
        dag-processor running?).``
    """
    if dag_version(dag_id, session) is None:
        raise UnknownDag(
            f"no Dag {dag_id!r} in this deployment's metadata database (is the dag-processor running?)."
        )


def consumer_timetable(
    dag_id: str, session: Any, *, needs: Needs = "partitioned"
) -> tuple[Any, list[tuple[str, str]]]:
    """
    Return the serialized timetable of the partitioned Dag *dag_id* and the assets it reads.

    The one place a Dag a request names is resolved (every reader and writer, ``explain``, the
    view): an unknown Dag, or one that is not what the command *needs* (:data:`Needs`), is an
    error here, in the same words for every command and face.

    The timetable is the one the scheduler runs (the latest serialized Dag); the assets are
    ``(name, uri)`` pairs, ``[("weather_jfk_hourly", "weather_jfk_hourly")]``, in the order of its
    asset condition (none: a Dag partitioned by its own timetable);
    ``timetable.get_partition_mapper(name=…, uri=…)`` gives each one's mapper. Deserialized once
    per serialized version (its row id and hash), then kept: the overview reads every partitioned
    Dag's (:func:`consumer_timetables`, one query for them all).

    :raises UnknownDag: if *dag_id* has no serialized Dag (:func:`known_dag`).
    :raises NotAConsumer: naming the Dag, if its timetable is not partitioned; with *needs*
        ``"assets"``, if it reads no assets.
    """
    found = consumer_timetables([dag_id], session).get(dag_id)
    if found is None:
        known_dag(dag_id, session)
        raise NotAConsumer(
            f"{dag_id!r} is not a partitioned consumer Dag: its schedule is partitioned neither by assets "
            "(PartitionedAssetTimetable) nor by its own timetable (GrainPartitionTimetable)."
        )
    if needs == "assets" and not found[1]:
        raise NotAConsumer(
            f"{dag_id!r} reads no assets: its partitions come from its timetable "
            "(see `airflow-partitions backfill`)."
        )
    return found


def dag_version(dag_id: str, session: Any, found: Any = None) -> str | None:
    """
    Return the ``dag_hash`` of *dag_id*'s latest serialized version (``None``: it has none).

    The one :func:`consumer_timetables` kept when *found* (its answer) is given, so that the
    version is the one deserialized; else read (one query).
    """
    kept = cache.TIMETABLES.get(dag_id)
    if found is not None and kept is not None:
        return str(kept[0][1])
    from airflow_partitions.tools.state.tables import latest_serialized

    row = session.execute(latest_serialized([dag_id])).first()
    return None if row is None else str(row[2])


def asset_rows(assets: Collection[tuple[str, str]], session: Any) -> list[tuple[int, str, str]]:
    """Return ``(id, name, uri)`` of the assets *assets* names (``(name, uri)`` pairs), in id order."""
    from sqlalchemy import and_, or_, select

    from airflow_partitions.tools.state.tables import asset

    if not assets:
        return []
    return [
        tuple(row)
        for row in session.execute(
            select(asset.c.id, asset.c.name, asset.c.uri)
            .where(or_(*(and_(asset.c.name == name, asset.c.uri == uri) for name, uri in assets)))
            .order_by(asset.c.id)
        )
    ]


def consumer_timetables(
    dag_ids: Collection[str], session: Any
) -> dict[str, tuple[Any, list[tuple[str, str]]]]:
    """
    Return :func:`consumer_timetable` of each of *dag_ids* that is a partitioned consumer Dag.

    One query for the latest serialized version of them all; a version seen before is not
    deserialized again.
    """
    from airflow_partitions.tools.state.tables import latest_serialized

    versions = {
        dag_id: (row_id, dag_hash)
        for dag_id, row_id, dag_hash in session.execute(latest_serialized(list(dag_ids)))
    }
    found = {}
    for dag_id in dag_ids:
        version = versions.get(dag_id)
        cached = cache.TIMETABLES.get(dag_id)
        if version is not None and cached is not None and cached[0] == version:
            found[dag_id] = (cached[1], list(cached[2]))
            continue
        from airflow.models.serialized_dag import SerializedDagModel

        dag = SerializedDagModel.get_dag(dag_id, session=orm_session(session))
        timetable = getattr(dag, "timetable", None)
        if timetable is None or not getattr(timetable, "partitioned", False):
            continue
        condition = getattr(timetable, "asset_condition", None)
        assets = [(key.name, key.uri) for key, _ in condition.iter_assets()] if condition is not None else []
        if version is not None:
            cache.TIMETABLES[dag_id] = (version, timetable, tuple(assets))
        found[dag_id] = (timetable, assets)
    return found
