"""
The partition state of a running deployment, read from its metadata database.

One reader under ``airflow-partitions status``, ``backfill --missing`` and the Partitions view.

Read-only, through Airflow's own models and session: a partitioned consumer Dag's pending
partitioned Dag runs (``AssetPartitionDagRun`` rows without a Dag run, the keys they received in
``PartitionedAssetKeyLog``), its Dag runs by partition key, the audit-log rows of keys refused on
arrival (``failed to map partition_key``), and the scheduler's queue of pending runs (the 500
oldest are evaluated per scheduler loop). The mappers are the ones the scheduler runs: the Dag's
serialized timetable. One query per table, whatever the number of partitions.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.tools.rollup_view import RollupView

#: Pending partitioned Dag runs the scheduler evaluates per loop, oldest first (Airflow 3.3's
#: ``MAX_PARTITION_DAG_RUNS_PER_LOOP``).
EVALUATED_PER_LOOP = 500
#: The audit-log event Airflow writes for a key a consumer's mapper refused on arrival.
REFUSED_EVENT = "failed to map partition_key"


def time_part(key: str) -> str:
    """Return the part of *key* a time range selects on: after the last ``|`` (``jfk|2026-04-15``)."""
    return key.rsplit("|", 1)[-1]


def in_time_range(key: str, start: str | None, end: str | None) -> bool:
    """
    Return whether the time part of *key* lies in [*start*, *end*].

    Bounds compare as text on the key's own spelling, *end* on its length: ``end="2026-04"`` keeps
    every key of April 2026 (``2026-04-30T23`` too).
    """
    part = time_part(key)
    return (start is None or part >= start) and (end is None or part[: len(end)] <= end)


@dataclass(frozen=True)
class AssetProgress:
    """
    What one upstream asset has given a pending partitioned Dag run.

    Keys are upstream partition keys as producers sent them (``received``), as the rollup awaits
    them (``expected``, ``missing``), and the received keys that will never count, each with why
    (``never_counting``: ``[key, reason]``). ``expected`` is empty for a mapper that is not a
    rollup (one key is enough).
    """

    asset: str
    received: tuple[str, ...]
    expected: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    never_counting: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Partition:
    """
    One downstream partition key of a consumer Dag: its Dag runs and its pending run, if any.

    ``state`` is ``"pending"`` (waiting for upstream keys), ``"past deadline"`` (pending, its
    :class:`~airflow_partitions.CompletionDeadline` time to fire has come: it fires once
    settled), ``"never counting"`` (pending and holding keys that will never count), else the
    state of its latest Dag run (``"success"``, ``"failed"``, ``"running"``, ``"queued"``).
    ``queue_position`` is the pending run's place among all pending partitioned runs of the
    deployment, oldest first (1-based): beyond 500 the scheduler does not evaluate it this loop.
    Times are UTC.
    """

    partition_key: str
    state: str
    runs: tuple[tuple[str, str], ...] = ()
    progress: tuple[AssetProgress, ...] = ()
    opened_at: datetime | None = None
    fires_at: datetime | None = None
    queue_position: int | None = None

    @property
    def starved(self) -> bool:
        """Whether the scheduler's loop does not reach this pending run (over 500 ahead)."""
        return self.queue_position is not None and self.queue_position > EVALUATED_PER_LOOP


@dataclass(frozen=True)
class Refusal:
    """A key refused on arrival (Airflow's audit-log row): when, the key, the asset, the message."""

    when: datetime | None
    message: str


@dataclass(frozen=True)
class ConsumerState:
    """
    The partition state of one partitioned consumer Dag.

    ``pending_total`` counts every pending partitioned run of the deployment; ``blocked_ahead``,
    those ahead of this Dag's oldest pending run that hold only keys that will never count.
    """

    dag_id: str
    assets: tuple[tuple[str, str], ...]
    partitions: tuple[Partition, ...]
    refusals: tuple[Refusal, ...] = ()
    pending_total: int = 0
    blocked_ahead: int = 0
    read_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601 strings)."""
        return jsonable(asdict(self))


def jsonable(value: Any) -> Any:
    """Return *value* (a dataclass as `asdict` gives it) in plain JSON types, datetimes as ISO 8601."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value.isoformat() if isinstance(value, datetime) else value


@dataclass(frozen=True)
class ConsumerDag:
    """A Dag whose timetable is partitioned: its id, its schedule in words, whether it is paused."""

    dag_id: str
    schedule: str | None
    is_paused: bool


def consumer_dags(session: Any = None) -> list[ConsumerDag]:
    """
    List the partitioned Dags of the deployment (not stale), by Dag id: what :func:`consumer_state` reads.

    One query on ``DagModel.timetable_partitioned``, the flag Airflow sets when it serializes a Dag.

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    """
    from airflow.models.dag import DagModel
    from sqlalchemy import select

    query = (
        select(DagModel.dag_id, DagModel.timetable_summary, DagModel.is_paused)
        .where(DagModel.timetable_partitioned.is_(True), DagModel.is_stale.is_(False))
        .order_by(DagModel.dag_id)
    )
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return [ConsumerDag(*row) for row in new.execute(query)]
    return [ConsumerDag(*row) for row in session.execute(query)]


def consumer_state(dag_id: str, *, partition_key: str | None = None, session: Any = None) -> ConsumerState:
    """
    Read the partition state of the partitioned consumer Dag *dag_id*, or of one of its keys.

    ``consumer_state("weather_local_day_jfk", partition_key="2013-03-10")`` tells whether New
    York's 2013-03-10 ran, or which of its 23 UTC hours (``2013-03-10T05`` …) have arrived and
    which are missing.

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    :raises ValueError: if *dag_id* has no serialized Dag, or its timetable is not partitioned
        by assets.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return _read(dag_id, partition_key, new)
    return _read(dag_id, partition_key, session)


def consumer_timetable(dag_id: str, session: Any) -> tuple[Any, list[tuple[str, str]]]:
    """
    Return the serialized timetable of the partitioned consumer Dag *dag_id* and the assets it reads.

    The timetable is the one the scheduler runs (the latest serialized Dag); the assets are
    ``(name, uri)`` pairs, ``[("weather_jfk_hourly", "weather_jfk_hourly")]``, in the order of its
    asset condition; ``timetable.get_partition_mapper(name=…, uri=…)`` gives each one's mapper.

    :raises ValueError: if *dag_id* has no serialized Dag, or its timetable is not partitioned.
    """
    from airflow.models.serialized_dag import SerializedDagModel

    dag = SerializedDagModel.get_dag(dag_id, session=session)
    timetable = getattr(dag, "timetable", None)
    if timetable is None or not getattr(timetable, "partitioned", False):
        raise ValueError(
            f"{dag_id!r} is not a partitioned consumer Dag in this deployment's metadata database "
            "(no serialized Dag, or its schedule is not partitioned by assets)."
        )
    return timetable, [(key.name, key.uri) for key, _ in timetable.asset_condition.iter_assets()]


def run_states(dag_id: str, keys: Iterable[str], session: Any) -> dict[str, list[str]]:
    """
    Return the states of *dag_id*'s runs of each of *keys* that has runs, oldest run first.

    ``{"2026-03-03": ["failed", "success"]}``: 2026-03-03 failed, then its rerun succeeded; keys
    without a run are left out. One query on ``dag_run``.
    """
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    states: dict[str, list[str]] = defaultdict(list)
    for key, state in session.execute(
        select(DagRun.partition_key, DagRun.state)
        .where(DagRun.dag_id == dag_id, DagRun.partition_key.in_(sorted(set(keys))))
        .order_by(DagRun.id)
    ):
        states[key].append(str(getattr(state, "value", state)))
    return dict(states)


def _read(dag_id: str, only: str | None, session: Any) -> ConsumerState:
    from airflow.models.asset import AssetModel, AssetPartitionDagRun, PartitionedAssetKeyLog
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from sqlalchemy import select

    timetable, assets = consumer_timetable(dag_id, session)
    rollups = {
        name: RollupView.of(timetable.get_partition_mapper(name=name, uri=uri)) for name, uri in assets
    }

    apdrs = select(AssetPartitionDagRun).where(AssetPartitionDagRun.target_dag_id == dag_id)
    runs = select(DagRun.run_id, DagRun.partition_key, DagRun.state).where(
        DagRun.dag_id == dag_id, DagRun.partition_key.is_not(None)
    )
    if only is not None:
        apdrs = apdrs.where(AssetPartitionDagRun.partition_key == only)
        runs = runs.where(DagRun.partition_key == only)
    pending = {a.id: a for a in session.scalars(apdrs) if a.created_dag_run_id is None}
    received: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    if pending:
        for apdr_id, name, key in session.execute(
            select(
                PartitionedAssetKeyLog.asset_partition_dag_run_id,
                AssetModel.name,
                PartitionedAssetKeyLog.source_partition_key,
            )
            .join(AssetModel, AssetModel.id == PartitionedAssetKeyLog.asset_id)
            .where(PartitionedAssetKeyLog.asset_partition_dag_run_id.in_(list(pending)))
        ):
            received[apdr_id][name].add(key)
    runs_by_key: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for run_id, key, state in session.execute(runs.order_by(DagRun.id)):
        runs_by_key[key].append((run_id, str(state.value if hasattr(state, "value") else state)))

    queue = session.execute(
        select(AssetPartitionDagRun.id, AssetPartitionDagRun.target_dag_id)
        .join(DagModel, DagModel.dag_id == AssetPartitionDagRun.target_dag_id)
        .where(AssetPartitionDagRun.created_dag_run_id.is_(None), DagModel.is_stale.is_(False))
        .order_by(AssetPartitionDagRun.created_at, AssetPartitionDagRun.id)
    ).all()
    position = {apdr_id: place for place, (apdr_id, _) in enumerate(queue, 1)}

    partitions: dict[str, Partition] = {}
    for key, key_runs in runs_by_key.items():
        partitions[key] = Partition(key, key_runs[-1][1], runs=tuple(key_runs))
    now = datetime.now(UTC)
    for apdr in sorted(pending.values(), key=lambda a: (a.created_at, a.id)):
        progress = tuple(
            progress_of(name, rollups[name], apdr.partition_key, received[apdr.id].get(name, set()))
            for name, _ in assets
            if name in received[apdr.id]
        )
        partitions[apdr.partition_key] = pending_partition(
            apdr.partition_key,
            progress,
            rollups,
            now=now,
            runs=tuple(runs_by_key.get(apdr.partition_key, ())),
            opened_at=apdr.created_at,
            queue_position=position.get(apdr.id),
        )

    refusals = [
        Refusal(when, extra)
        for when, extra in session.execute(
            select(Log.dttm, Log.extra)
            .where(Log.event == REFUSED_EVENT, Log.extra.contains(f"in target Dag '{dag_id}'"))
            .order_by(Log.id)
        )
        if only is None or f"'{only}'" in (extra or "")
    ]
    first = min((p.queue_position for p in partitions.values() if p.queue_position), default=None)
    return ConsumerState(
        dag_id=dag_id,
        assets=tuple(assets),
        partitions=tuple(sorted(partitions.values(), key=lambda p: p.partition_key)),
        refusals=tuple(refusals),
        pending_total=len(queue),
        blocked_ahead=_blocked(queue[: first - 1], session) if first else 0,
    )


def progress_of(
    asset: str, rollup: RollupView | None, downstream_key: str, received: set[str]
) -> AssetProgress:
    """
    Return what the *received* keys of *asset* give *downstream_key* (a rollup counts members).

    For a mapper that is no rollup (*rollup* ``None``) one key is enough: only ``received`` is set.
    """
    keys = tuple(sorted(received))
    if rollup is None:
        return AssetProgress(asset, keys)
    progress = rollup.progress(downstream_key, received)
    return AssetProgress(asset, keys, progress.awaited, progress.missing, progress.never_counting)


def pending_partition(
    downstream_key: str,
    progress: tuple[AssetProgress, ...],
    rollups: dict[str, RollupView | None],
    *,
    now: datetime,
    runs: tuple[tuple[str, str], ...] = (),
    opened_at: datetime | None = None,
    queue_position: int | None = None,
) -> Partition:
    """
    Return the :class:`Partition` of a pending run from what each asset gave it (pure: no database).

    Its state is ``"never counting"`` if it holds a key that will never count, ``"past deadline"``
    once a :class:`~airflow_partitions.CompletionDeadline` lets it fire (*now*, UTC, at or after
    the latest of its assets' times to fire), else ``"pending"``.
    """
    times = []
    for item in progress:
        rollup = rollups.get(item.asset)
        if rollup is not None and item.expected:
            expected = rollup.awaited(downstream_key)
            times.append(rollup.fires_at(expected, len(item.expected) - len(item.missing)))
    fires_at = max((t for t in times if t is not None), default=None)
    state = (
        "never counting"
        if any(p.never_counting for p in progress)
        else "past deadline"
        if fires_at is not None and fires_at <= now
        else "pending"
    )
    return Partition(
        downstream_key,
        state,
        runs=runs,
        progress=progress,
        opened_at=opened_at,
        fires_at=fires_at,
        queue_position=queue_position,
    )


def _blocked(ahead: list[Any], session: Any) -> int:
    """Return how many pending runs *ahead* hold only keys their rollup will never count."""
    from airflow.models.asset import AssetModel, PartitionedAssetKeyLog
    from airflow.models.serialized_dag import SerializedDagModel
    from sqlalchemy import select

    if not ahead:
        return 0
    dag_of = dict(ahead)
    keys: dict[int, list[tuple[str, str, str, str]]] = defaultdict(list)
    for apdr_id, name, uri, key, target in session.execute(
        select(
            PartitionedAssetKeyLog.asset_partition_dag_run_id,
            AssetModel.name,
            AssetModel.uri,
            PartitionedAssetKeyLog.source_partition_key,
            PartitionedAssetKeyLog.target_partition_key,
        )
        .join(AssetModel, AssetModel.id == PartitionedAssetKeyLog.asset_id)
        .where(PartitionedAssetKeyLog.asset_partition_dag_run_id.in_(list(dag_of)))
    ):
        keys[apdr_id].append((name, uri, key, target))
    timetables = {
        d.dag_id: d.timetable
        for d in (SerializedDagModel.get_dag(dag_id, session=session) for dag_id in set(dag_of.values()))
        if d is not None
    }
    blocked = 0
    for apdr_id, logged in keys.items():
        timetable = timetables.get(dag_of[apdr_id])
        blocked += timetable is not None and not any(
            _counts(RollupView.of(timetable.get_partition_mapper(name=name, uri=uri)), key, target)
            for name, uri, key, target in logged
        )
    return blocked


def _counts(rollup: RollupView | None, key: str, downstream_key: str) -> bool:
    """Whether *key* counts towards *downstream_key* (any key counts for a mapper that is no rollup)."""
    return rollup is None or rollup.never_counts(key, downstream_key) is None


@dataclass(frozen=True)
class KeyEvents:
    """The asset events of one partition key of an asset: how many, the first and last (UTC)."""

    partition_key: str
    events: int
    first: datetime | None
    last: datetime | None


@dataclass(frozen=True)
class AssetRefusal:
    """A key of the asset a consumer's mapper refused on arrival: when, the consumer, the message."""

    when: datetime | None
    dag_id: str | None
    message: str


@dataclass(frozen=True)
class AssetCoverage:
    """
    Which partition keys of one asset have asset events, and the keys consumers refused.

    ``keys`` in key order; ``unkeyed_events`` counts the asset's events without a partition key.
    """

    asset: str
    uri: str
    asset_id: int
    keys: tuple[KeyEvents, ...]
    refusals: tuple[AssetRefusal, ...] = ()
    unkeyed_events: int = 0
    read_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601 strings)."""
        return jsonable(asdict(self))


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


_REFUSED = re.compile(
    r"^Could not map partition_key '(?P<key>.*?)' for asset .*? in target Dag '(?P<dag>[^']*)'"
)


def _coverage(name: str, start: str | None, end: str | None, session: Any) -> AssetCoverage:
    from airflow.models.asset import AssetActive, AssetEvent, AssetModel
    from airflow.models.log import Log
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
            keys.append(KeyEvents(key, events, _utc(first), _utc(last)))
    refusals = []
    for when, extra in session.execute(
        select(Log.dttm, Log.extra)
        .where(Log.event == REFUSED_EVENT, Log.extra.contains(f"(name='{name}', uri="))
        .order_by(Log.id)
    ):
        parsed = _REFUSED.match(extra or "")
        if parsed is None or in_time_range(parsed["key"], start, end):
            refusals.append(AssetRefusal(when, parsed["dag"] if parsed else None, extra or ""))
    return AssetCoverage(
        name,
        uri,
        asset_id,
        tuple(sorted(keys, key=lambda k: k.partition_key)),
        tuple(refusals),
        unkeyed,
    )


def _utc(value: datetime | None) -> datetime | None:
    """SQLite's aggregates return naive datetimes: they are UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value
