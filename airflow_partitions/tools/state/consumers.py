"""
What the faces ask for: the partitioned Dags, one Dag's partitions, a partition's lists of keys.

Also the range of a Dag's keys and the Dag (and mapper) that reads an asset.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import replace
from typing import Any

from airflow_partitions.tools.errors import UnknownDag, UnknownPartition, UsageError
from airflow_partitions.tools.state.kept.answers import Answers
from airflow_partitions.tools.state.kept.cache import at_one_moment
from airflow_partitions.tools.state.kept.fingerprint import fingerprints
from airflow_partitions.tools.state.model import ConsumerDag, ConsumerState
from airflow_partitions.tools.state.pending import received_keys
from airflow_partitions.tools.state.reader import Reader
from airflow_partitions.tools.state.runs import fired_query
from airflow_partitions.tools.state.selection import checked_key, selected_range
from airflow_partitions.tools.state.serialized import (
    consumer_timetable,
    consumer_timetables,
    zones_of,
)
from airflow_partitions.tools.state.tally import ranges_of, summaries

#: The lists of a partition :func:`partition_keys` pages through (the view's ``list``).
LISTS = ("awaited", "missing", "received", "never counting")


def consumer_dags(
    session: Any = None,
    *,
    summary: bool = False,
    only: Collection[str] | None = None,
    warming: Collection[str] = (),
) -> list[ConsumerDag]:
    """
    List the partitioned Dags of the deployment (not stale), by Dag id: what :func:`consumer_state` reads.

    One query on ``dag.c.timetable_partitioned``, the flag Airflow sets when it serializes a Dag.
    With *summary*, each also carries its counts by state (``"ran incomplete"`` apart from
    ``"success"``), range of keys and strip of states over time: a few grouped queries for all
    the Dags together, whatever their number of partitions (:func:`summaries`). *only* keeps
    the Dags of those ids (the ones a user may read). The Dags of *warming* (read for the first
    time in the background: :func:`~airflow_partitions.tools.warming.warming_dags`) carry no
    summary but ``warming``.

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    """
    if session is None:
        from airflow_partitions.tools.state.database import read_session

        with read_session() as new:
            return consumer_dags(new, summary=summary, only=only, warming=warming)
    if summary:
        at_one_moment(session)  # the summaries read at one moment
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import dag

    query = (
        select(dag.c.dag_id, dag.c.timetable_summary, dag.c.is_paused)
        .where(dag.c.timetable_partitioned.is_(True), dag.c.is_stale.is_(False))
        .order_by(dag.c.dag_id)
    )
    dags = [ConsumerDag(*row) for row in session.execute(query) if only is None or row[0] in only]
    if not summary:
        return dags
    timetables = consumer_timetables([d.dag_id for d in dags if d.dag_id not in warming], session)
    # A Dag flagged partitioned without a serialized Dag to read it with (yet) has no summary.
    readers = {dag_id: Reader(dag_id, session, found) for dag_id, found in timetables.items()}
    found = summaries(readers, session) if readers else {}
    return [
        replace(dag, warming=True) if dag.dag_id in warming else replace(dag, **found.get(dag.dag_id, {}))
        for dag in dags
    ]


def consumer_state(
    dag_id: str,
    *,
    partition_key: str | None = None,
    start: str | None = None,
    end: str | None = None,
    states: Iterable[str] | None = None,
    limit: int | None = None,
    offset: int = 0,
    session: Any = None,
) -> ConsumerState:
    """
    Read the partition state of the partitioned consumer Dag *dag_id*: one page of its partitions.

    ``consumer_state("weather_local_day_jfk", partition_key="2013-03-10")`` tells whether New
    York's 2013-03-10 ran and with which of its UTC hours, or which of its 23 hours
    (``2013-03-10T05`` …) have arrived and which are missing. *start* and *end* select partitions
    by the time part of their key (:func:`in_time_range`): each a key of the Dag's grain or an ISO
    8601 date or time (:func:`~airflow_partitions.tools.state.selection.selected_range`); *states*
    by state; *limit* and *offset* page them, in the order of their keys' time part. Paging, the
    time range and the counts by state are worked out in the database; only the page's partitions
    are read in full, so a page of a Dag with 100,000 partitions takes what a page of one with
    1,000 takes.

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    :raises UnknownDag: if *dag_id* has no serialized Dag; :class:`~airflow_partitions.tools.errors.
        NotAConsumer` if its timetable is not partitioned
        (:func:`~airflow_partitions.tools.state.serialized.consumer_timetable`).
    :raises UsageError: before any partition is read, naming the option and the value, for a
        *partition_key* that is not a key of the Dag's grain, a bound that is neither one nor an
        ISO 8601 date or time, or *start* after *end*
        (:mod:`~airflow_partitions.tools.state.selection`).
    """
    if session is None:
        from airflow_partitions.tools.state.database import read_session

        with read_session() as new:
            return consumer_state(
                dag_id,
                partition_key=partition_key,
                start=start,
                end=end,
                states=states,
                limit=limit,
                offset=offset,
                session=new,
            )
    at_one_moment(session)  # its counts, overview and page read at one moment
    # An unknown Dag first (exit code 1), then the selection; the grain is a stored answer too.
    answers = Answers(dag_id, session)
    checked_key(dag_id, answers.grain, partition_key)
    start, end = selected_range(dag_id, answers.grain, start, end)
    reader = Reader(dag_id, session, answers=answers)
    return reader.read(partition_key, start, end, None if states is None else set(states), limit, offset)


def consumer_range(dag_id: str, *, session: Any) -> tuple[str | None, str | None]:
    """
    Return the time parts of the first and last partition keys of *dag_id* (runs and pending runs).

    ``("2013-03-01", "2013-12-31")``; ``(None, None)`` for a Dag without partitions yet. Kept
    while the Dag's runs and pending runs are unchanged (:func:`fingerprints`).

    :raises UnknownDag: as :func:`consumer_state`.
    """
    Reader(dag_id, session)  # the Dag is a partitioned consumer, or UnknownDag
    ranges = ranges_of([dag_id], session, None, None, None, fingerprints([dag_id], session))
    return ranges.get(dag_id, (None, None))


def consumer_zone(
    asset_name: str, *, session: Any, only: Collection[str] | None = None
) -> tuple[str, str, str | None]:
    """
    Return the zone a Dag reading *asset_name* cuts periods in, the zone it reads naive keys in, the Dag.

    ``("America/New_York", "UTC", "weather_local_day_jfk")``: the first such Dag (by Dag id, of
    *only* if given) whose mapper for the asset is one of ours with a grain (a rollup's upstream
    mapper's, a composite's time dimension's); ``("UTC", "UTC", None)`` if none has one.
    """
    found = consumer_reader(asset_name, session=session, only=only)
    if found is None:
        return "UTC", "UTC", None
    mapper, dag_id = found
    zone, input_zone = zones_of(mapper) or ("UTC", "UTC")
    return zone, input_zone, dag_id


def consumer_reader(
    asset_name: str, *, session: Any, only: Collection[str] | None = None
) -> tuple[Any, str] | None:
    """
    Return the mapper of the Dag :func:`consumer_zone` names for *asset_name*, and that Dag's id.

    ``None`` if no partitioned Dag (of *only*, if given) reads the asset with one of our mappers
    with a grain.
    """
    for dag in consumer_dags(session, only=only):
        try:
            timetable, assets = consumer_timetable(dag.dag_id, session)
        except UnknownDag:  # flagged partitioned, without a serialized Dag to read it with (yet)
            continue
        for name, uri in assets:
            if name == asset_name and zones_of(mapper := timetable.get_partition_mapper(name=name, uri=uri)):
                return mapper, dag.dag_id
    return None


def checked_list(which: str) -> None:
    """
    Refuse a list of a partition that is not one of :data:`LISTS` (the view's ``list``), naming it.

    :raises UsageError: ``list 'nope' is not one of 'awaited', 'missing', 'received', 'never counting'.``
    """
    if which not in LISTS:
        raise UsageError(f"list {which!r} is not one of {', '.join(map(repr, LISTS))}.")


def partition_keys(
    dag_id: str,
    partition_key: str,
    which: str,
    *,
    offset: int = 0,
    limit: int | None = 1000,
    session: Any = None,
) -> tuple[list[Any], int]:
    """
    Return one page of one list of a partition, and the list's length: what the detail pages through.

    *which* is ``"awaited"``, ``"missing"``, ``"received"`` or ``"never counting"`` (``[key, why]``
    pairs) for its pending run, or for its latest run when it has no pending one (what it ran with).
    Keys in time order (received: sorted); summed over the Dag's assets in their order. *limit*
    ``None``: every key from *offset* on.

    :raises UsageError: for an unknown *which* (400, as every route answers bad input).
    :raises UnknownDag: for a Dag that is not a partitioned consumer (404).
    :raises UnknownPartition: for a key without a run or pending run whose keys are kept (404).
    """
    checked_list(which)
    if session is None:
        from airflow_partitions.tools.state.database import read_session

        with read_session() as new:
            return partition_keys(dag_id, partition_key, which, offset=offset, limit=limit, session=new)
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import asset_partition_dag_run, dag_run

    reader = Reader(dag_id, session)
    apdr_id = session.scalar(
        select(asset_partition_dag_run.c.id).where(
            asset_partition_dag_run.c.target_dag_id == dag_id,
            asset_partition_dag_run.c.partition_key == partition_key,
            asset_partition_dag_run.c.created_dag_run_id.is_(None),
        )
    ) or session.scalar(
        fired_query(dag_id)
        .with_only_columns(asset_partition_dag_run.c.id)
        .where(dag_run.c.partition_key == partition_key)
        .order_by(dag_run.c.id.desc())
        .limit(1)
    )
    if apdr_id is None:
        raise UnknownPartition(
            f"{dag_id!r} has no run or pending run of partition {partition_key!r} from asset events whose "
            "keys are kept (`airflow-partitions clean` removes those of old runs)."
        )
    received = received_keys(session, [apdr_id]).get(apdr_id, {})
    found: list[Any] = []
    for name, _ in reader.assets:
        rollup, keys = reader.rollups.get(name), received.get(name, frozenset())
        if which == "received":
            found.extend(sorted(keys))
        elif rollup is not None:
            progress = rollup.progress(partition_key, keys)
            found.extend(
                {
                    "awaited": progress.awaited,
                    "missing": progress.missing,
                    "never counting": progress.never_counting,
                }[which]
            )
    page = found[offset:] if limit is None else found[offset : offset + limit]
    return [list(item) if isinstance(item, tuple) else item for item in page], len(found)
