"""
A consumer Dag's partitions counted by state and laid out in strips, in grouped queries.

For all the Dags of the overview at once, or one Dag's selected range: their latest Dag runs
counted by (Dag, key prefix, bucket, state) in the database, their pending runs' states from
their keys (through each Dag's :class:`~airflow_partitions.tools.state.reader.Reader`, passed in),
the runs that ran incomplete, and the range of keys; answers kept while the Dag's rows hold.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Collection
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.database import engine_of
from airflow_partitions.tools.state.kept.cache import keep, keep_until, kept_until, kept_value, mirror_for
from airflow_partitions.tools.state.kept.fingerprint import fingerprints, with_members
from airflow_partitions.tools.state.lateness import late_keys
from airflow_partitions.tools.state.model import (
    BUCKET,
    SEPARATOR,
    attention,
    bucket_label,
    is_selected,
    prefix_and_bucket,
    time_part,
)
from airflow_partitions.tools.state.pending import log_stamps, received_keys
from airflow_partitions.tools.state.plain import jsonable, rebuilt_as
from airflow_partitions.tools.state.progress import never_counting, pending_state
from airflow_partitions.tools.state.runs import ASSET_TRIGGERED, latest_of, unproven, with_runs
from airflow_partitions.tools.state.sql import prefix_and_bucket_sql, selected_keys, state_name, time_part_sql

#: A tally of one Dag's selected partitions: counts by state, the keys whose state only the mappers
#: tell (key to state), the strips of states (prefix, ((bucket, worst state, partitions), …)), and
#: how many have a pending run beside their Dag runs (counted by their runs' state).
Tally = tuple[dict[str, int], dict[str, str], tuple[tuple[str, tuple[tuple[str, str, int], ...]], ...], int]


def tally_of(
    readers: dict[str, Any],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    length: int,
    by_prefix: bool,
    prints: dict[str, tuple[Any, ...]],
) -> dict[str, Tally]:
    """
    Return, per Dag of *readers*, its partitions' counts by state, overrides and strips (:func:`_tallies`).

    A Dag's tally is kept while its fingerprint (*prints*) and the keys logged for its pending runs
    (:meth:`~airflow_partitions.tools.state.kept.mirror.Mirror.key_versions`) stay as they are, until
    the clock moves a pending run's state (the earliest instant a run's deadline passes or its
    period ends, :func:`~airflow_partitions.tools.state.progress.pending_state`), under the key of
    the mappers' answers (never for members that may change): at a million partitions it took
    0.45 s of Python over 25,000 pending runs on every read (:func:`~.cache.keep_until`).
    """
    asked = (start, end, only, length, by_prefix)
    versions = mirror_for(session).key_versions(list(readers))
    found: dict[str, Tally] = {}
    for dag_id, reader in readers.items():
        memo = _memo(reader, asked)
        kept_one = (
            None
            if memo is None
            else kept_until(memo, (prints.get(dag_id), versions[dag_id]), reader.now, session)
        )
        if kept_one is not None:
            counts, overrides, strips, again = kept_one
            found[dag_id] = (  # copies: what kept_until returns is shared by this process's reads
                dict(counts),
                dict(overrides),
                tuple((p, tuple(map(tuple, strip))) for p, strip in strips),
                again,
            )
    todo = {dag_id: reader for dag_id, reader in readers.items() if dag_id not in found}
    if todo:
        tallies, untils = _tallies(todo, session, asked, prints)
        for dag_id, tally in tallies.items():
            found[dag_id] = tally
            memo = _memo(todo[dag_id], asked)
            if memo is not None:
                fingerprint = (prints.get(dag_id), versions[dag_id])
                keep_until(memo, fingerprint, tally, todo[dag_id].now, untils.get(dag_id), session)
    return _with_stale(readers, session, found, asked, prints)


def _with_stale(
    readers: dict[str, Any],
    session: Any,
    found: dict[str, Tally],
    asked: tuple[Any, ...],
    prints: dict[str, tuple[Any, ...]],
) -> dict[str, Tally]:
    """
    Return *found* with each Dag's stale partitions (:func:`~.stale.stale_keys`) counted as ``"stale"``.

    Worked out on every read, outside what is kept: a run cleared and run again to ``success``
    leaves the Dag's fingerprint as it was, not its start. A stale partition leaves ``success``
    for ``"stale"`` in the counts, the overrides and its strip's cell (whose worst state it may be).
    """
    from airflow_partitions.tools.state.stale import stale_keys

    length, by_prefix = asked[3:]
    rows, ran = _open_rows(list(readers), session, asked, prints)
    beside = [(dag_id, apdr_id, key) for dag_id, apdr_id, key, *_ in rows if (dag_id, key) in ran]
    overridden = {dag_id: tally[1] for dag_id, tally in found.items()}
    stale = stale_keys(readers, session, beside, overridden, prints)
    for dag_id, keys in stale.items():
        counts, overrides, strips, again = found[dag_id]
        counts = {**counts, "success": counts.get("success", 0) - len(keys), "stale": len(keys)}
        overrides = {**overrides, **dict.fromkeys(keys, "stale")}
        cells = {prefix_and_bucket(key, length, by_prefix) for key in keys}
        worse = {(p.rstrip(SEPARATOR), bucket_label(b)) for p, b in cells}
        strips = tuple(
            (p, tuple((b, min(w, "stale", key=attention) if (p, b) in worse else w, n) for b, w, n in strip))
            for p, strip in strips
        )
        found[dag_id] = ({s: n for s, n in counts.items() if n > 0}, overrides, strips, again)
    return found


def _memo(reader: Any, asked: tuple[Any, ...]) -> Any:
    """Return the memo of a Dag's tally of *asked*, ``None`` under members that may change (never kept)."""
    version = reader.answers.key
    if version is None:
        return None
    return ("tally", reader.dag_id, reader.identity, version, *asked)


def _tallies(
    readers: dict[str, Any], session: Any, asked: tuple[Any, ...], prints: dict[str, tuple[Any, ...]]
) -> tuple[dict[str, Tally], dict[str, datetime]]:
    """
    Return, per Dag of *readers*, its selected partitions' counts by state, overrides and strips.

    *asked*: ``(start, end, only, length, by_prefix)`` of :func:`tally_of`.

    With, per Dag, the earliest instant after its reader's ``now`` at which a pending run's state
    changes (none: no such instant).

    Grouped queries for all the Dags at once: their latest Dag runs by Dag, key prefix, bucket of
    *length* characters of the key's time part and state (:func:`run_cells`, kept while the
    Dag's runs and pending runs stay as they are), and their pending runs, whose states need the
    mappers (deadline, never-counting keys: their keys are read). *by_prefix*: one strip per key
    prefix (``jfk`` of ``jfk|2013-03-10``), else one (prefix ``""``). ``overrides`` maps the keys
    whose state is not their latest run's to it: the pending ones without a run and the ones that
    ran incomplete. A pending run beside a Dag run (a key sent again) is counted apart, never as a
    state: its partition counts by its runs.
    """
    start, end, only, length, by_prefix = asked
    dag_ids = list(readers)
    cells, overrides = run_cells(readers, session, start, end, only, length, by_prefix, prints)
    pending, ran = _open_rows(dag_ids, session, asked, prints)
    again: Counter[str] = Counter(dag_id for dag_id, _, key, *_ in pending if (dag_id, key) in ran)
    pending = [row for row in pending if (row[0], row[2]) not in ran]
    states, untils = pending_states(
        readers, session, [(dag_id, apdr_id, key) for dag_id, apdr_id, key, *_ in pending]
    )
    for dag_id, apdr_id, key, prefix_, bucket in pending:
        state = overrides[dag_id][key] = states[apdr_id]
        cells[dag_id, prefix_.rstrip(SEPARATOR), bucket][state] += 1
    counts: dict[str, Counter[str]] = {dag_id: Counter() for dag_id in dag_ids}
    strips: dict[str, dict[str, list[tuple[str, str, int]]]] = {
        dag_id: defaultdict(list) for dag_id in dag_ids
    }
    labelled: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for (dag_id, prefix_, bucket_), by_state in cells.items():
        labelled[dag_id, prefix_, bucket_label(bucket_)].update(by_state)
    for (dag_id, prefix_, bucket_), by_state in sorted(labelled.items()):
        counts[dag_id].update(by_state)
        present = [state for state, n in by_state.items() if n > 0]
        if present:
            strips[dag_id][prefix_].append((bucket_, min(present, key=attention), sum(by_state.values())))
    return {
        dag_id: (
            {state: n for state, n in counts[dag_id].items() if n > 0},
            overrides[dag_id],
            tuple((p, tuple(strip)) for p, strip in strips[dag_id].items()),
            again[dag_id],
        )
        for dag_id in dag_ids
    }, untils


def _open_rows(
    dag_ids: list[str], session: Any, asked: tuple[Any, ...], prints: dict[str, tuple[Any, ...]]
) -> tuple[list[tuple[str, int, str, str, str]], set[tuple[str, str]]]:
    """
    Return the Dags' selected open pending runs, and the ``(dag_id, key)`` of those beside a Dag run.

    Each run ``(dag_id, id, key, prefix, bucket)`` (:func:`~.model.prefix_and_bucket` of *asked*'s
    length); the pairs with a Dag run kept while the Dag's fingerprint holds (:func:`with_runs`).
    """
    start, end, only, length, by_prefix = asked
    pending = [
        (run.dag_id, run.id, run.partition_key, *prefix_and_bucket(run.partition_key, length, by_prefix))
        for run in mirror_for(session).open_runs(dag_ids)
        if is_selected(run.partition_key, start, end, only)
    ]
    return pending, with_runs(session, ((dag_id, key) for dag_id, _, key, *_ in pending), prints)


def pending_states(
    readers: dict[str, Any], session: Any, pending: list[tuple[str, int, str]]
) -> tuple[dict[int, str], dict[str, datetime]]:
    """
    Return the state of each pending run ``(dag_id, id, key)`` of *pending*, by its id.

    And per Dag the earliest instant after its reader's ``now`` at which one of them changes
    state (a Dag without one is left out).

    What each state turns on (whether a key never counts, and :func:`~airflow_partitions.tools.
    state.progress.pending_times`) is kept per Dag as one answer, each run's with its key-log stamp
    (:func:`~airflow_partitions.tools.state.pending.log_stamps`); only the runs whose stamp moved
    have their keys read and their state worked out (a Dag at a million partitions has 20,000
    pending runs: one answer read, not 20,000).
    """
    stamps = log_stamps(session, [apdr_id for _, apdr_id, _ in pending])
    by_dag: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for dag_id, apdr_id, key in pending:
        by_dag[dag_id].append((apdr_id, key))
    states: dict[int, str] = {}
    untils: dict[str, datetime] = {}
    for dag_id, runs in by_dag.items():
        reader = readers[dag_id]
        # Under the key of the mappers' answers (``None``: members that may change, never kept).
        version = reader.answers.key
        memo = ("pending times", dag_id, version)
        found = None if version is None else kept_value(memo, {dag_id: version}, session)
        # Kept as one JSON text of ``[id, stamp, never, fires at, ends, deadline]`` rows: read back
        # in C (the tagged form took 0.4 s at 20,000 pending runs, one call per value).
        times: dict[int, list[Any]] = {row[0]: row[1:] for row in json.loads(found[1])} if found else {}
        # A run's stamp and key: SQLite gives a deleted run's id again, maybe to another partition.
        stale = [(i, key) for i, key in runs if times.get(i, [None])[0] != [*stamps.get(i, (0, 0, 0)), key]]
        received = received_keys(session, [i for i, _ in stale], stamps)
        for apdr_id, key in stale:
            progress, fires_at, ends, deadline = reader.answers.pending(key, received.get(apdr_id, {}))
            at = [jsonable(fires_at), jsonable(ends)]  # ISO 8601 text
            times[apdr_id] = [[*stamps.get(apdr_id, (0, 0, 0)), key], never_counting(progress), *at, deadline]
        if version is not None and (stale or found is None):
            keep(memo, version, json.dumps([[i, *times[i]] for i, _ in runs]), session)
        later: list[datetime] = []
        for apdr_id, _ in runs:
            _, never, fires_at, ends, deadline = times[apdr_id]
            fires_at, ends = rebuilt_as(datetime, fires_at), rebuilt_as(datetime, ends)
            states[apdr_id] = pending_state(never, fires_at, ends, deadline, reader.now)
            if not never:
                later.extend(
                    t for t in (fires_at, None if deadline else ends) if t is not None and t > reader.now
                )
        if later:
            untils[dag_id] = min(later)
    return states, untils


def run_cells(
    readers: dict[str, Any],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    length: int,
    by_prefix: bool,
    prints: dict[str, tuple[Any, ...]],
) -> tuple[dict[tuple[str, str, str], Counter[str]], dict[str, dict[str, str]]]:
    """
    Return the latest Dag runs of the keys, counted by (Dag, prefix, bucket) and state.

    Also the keys whose run succeeded without all its keys (``"ran incomplete"``): a run that
    succeeded, from asset events, and is not proven complete by its creation time
    (:func:`unproven`) has its keys read (once per process). A Dag's answer is kept while its
    runs and pending runs are unchanged (:func:`kept_value`): the overview is read again and
    again, and a Dag of 100,000 runs takes a grouped scan of them all.
    """

    def memo(dag_id: str) -> tuple[Any, ...]:
        return ("cells", dag_id, readers[dag_id].identity, start, end, only, length, by_prefix)

    found = {dag_id: kept_value(memo(dag_id), prints, session) for dag_id in readers}
    answers = {dag_id: kept[1] for dag_id, kept in found.items() if kept is not None}
    todo = {dag_id: reader for dag_id, reader in readers.items() if dag_id not in answers}
    if todo:
        answers.update(read_run_cells(todo, session, start, end, only, length, by_prefix))
        for dag_id in todo:
            keep(memo(dag_id), prints.get(dag_id), answers[dag_id], session)
    cells: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    overrides: dict[str, dict[str, str]] = {}
    for dag_id, (by_bucket, incomplete) in answers.items():
        for (prefix_, bucket_), by_state in by_bucket.items():
            cells[dag_id, prefix_, bucket_].update(by_state)
        overrides[dag_id] = dict(incomplete)
    return cells, overrides


def read_run_cells(
    todo: dict[str, Any],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    length: int,
    by_prefix: bool,
) -> dict[str, tuple[dict[tuple[str, str], Counter[str]], dict[str, str]]]:
    """Read :func:`run_cells`' answer for the Dags of *todo*: cells, and keys that ran incomplete."""
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import dag_run

    dag_ids = list(todo)
    latest = latest_of(dag_ids)
    selected = selected_keys(dag_run.c.partition_key, start, end, only)
    prefix, bucket = prefix_and_bucket_sql(dag_run.c.partition_key, length, by_prefix)
    mine: dict[str, dict[tuple[str, str], Counter[str]]] = {
        dag_id: defaultdict(Counter) for dag_id in dag_ids
    }
    for dag_id, prefix_, bucket_, state, n in session.execute(
        select(dag_run.c.dag_id, prefix, bucket, dag_run.c.state, func.count())
        .join(latest, latest.c.id == dag_run.c.id)
        .where(*selected)
        .group_by(dag_run.c.dag_id, prefix, bucket, dag_run.c.state)
    ):
        mine[dag_id][prefix_.rstrip(SEPARATOR), bucket_][state_name(state)] += n
    incomplete: dict[str, dict[str, str]] = {dag_id: {} for dag_id in dag_ids}
    doubt = unproven(todo, engine_of(session).dialect.name)
    doubted: dict[str, set[str]] = defaultdict(set)
    if doubt is not None:
        for dag_id, key in session.execute(
            select(dag_run.c.dag_id, dag_run.c.partition_key)
            .join(latest, latest.c.id == dag_run.c.id)
            .where(*selected, dag_run.c.state == "success", dag_run.c.run_type == ASSET_TRIGGERED, doubt)
        ):
            doubted[dag_id].add(key)
    for dag_id, keys in doubted.items():
        reader = todo[dag_id]
        by_key = reader.fired_runs(sorted(keys))
        groups = {
            key: tuple(i for i, _, _ in by_key[key] if i is not None)
            for key in keys
            if not any(reader.fired_complete(created, anchor) for _, created, anchor in by_key[key])
            # What a run whose bookkeeping was cleaned ran with is not known: not "ran incomplete".
            and all(i is not None for i, _, _ in by_key[key])
        }
        ran = reader.ran_with_of(groups.values())
        for key, group in groups.items():
            if (told := ran[group]) is not None and not told.complete:
                incomplete[dag_id][key] = "ran incomplete"
                head, _, key_part = key.rpartition(SEPARATOR)
                cell = mine[dag_id][head if by_prefix else "", key_part[:length]]
                cell["success"] -= 1
                cell["ran incomplete"] += 1
    return {dag_id: (dict(mine[dag_id]), incomplete[dag_id]) for dag_id in dag_ids}


def ranges_of(
    dag_ids: Collection[str],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    prints: dict[str, tuple[Any, ...]],
) -> dict[str, tuple[str, str]]:
    """
    Return, per Dag, the time parts of its first and last selected keys (runs and pending runs).

    Kept while the Dag's fingerprint (*prints*, :func:`fingerprints`) holds: a scan of all its keys.
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import dag_run

    ranges: dict[str, tuple[str, str]] = {}
    todo = []
    for dag_id in dag_ids:
        found = kept_value(("range", dag_id, start, end, only), prints, session)
        if found is None:
            todo.append(dag_id)
        elif found[1] is not None:
            ranges[dag_id] = found[1]
    if not todo:
        return ranges
    part = time_part_sql(dag_run.c.partition_key)
    found = session.execute(
        select(dag_run.c.dag_id, func.min(part), func.max(part))
        .where(
            dag_run.c.dag_id.in_(todo),
            dag_run.c.partition_key.is_not(None),
            *selected_keys(dag_run.c.partition_key, start, end, only),
        )
        .group_by(dag_run.c.dag_id)
    ).all()
    # The open pending runs from the mirror (a scan of asset_partition_dag_run: 2 s at a million).
    parts: dict[str, list[str]] = {}
    for run in mirror_for(session).open_runs(todo):
        if is_selected(run.partition_key, start, end, only):
            parts.setdefault(run.dag_id, []).append(time_part(run.partition_key))
    found += [(dag_id, min(times), max(times)) for dag_id, times in parts.items()]
    for dag_id, low, high in found:
        first, last = ranges.get(dag_id, (low, high))
        ranges[dag_id] = (min(first, low), max(last, high))
    for dag_id in todo:
        keep(("range", dag_id, start, end, only), prints.get(dag_id), ranges.get(dag_id), session)
    return ranges


def summaries(readers: dict[str, Any], session: Any) -> dict[str, dict[str, Any]]:
    """
    Return, per Dag, its counts by state, range of keys, strip and late partitions (:class:`ConsumerDag`).

    The strip groups partitions by the first :data:`BUCKET` characters of their key's time part
    (a month of day and hour keys, a year of ``FY2026-Q3``), each bucket with its most urgent
    state (:func:`attention`) and its number of partitions, in time order. A few grouped queries
    for all the Dags together, whatever their number.
    """
    prints = with_members(fingerprints(list(readers), session), readers)
    for dag_id, reader in readers.items():
        reader.fingerprint = prints.get(dag_id)
    tallies = tally_of(readers, session, None, None, None, BUCKET, False, prints)
    ranges = ranges_of(list(readers), session, None, None, None, prints)
    late = late_keys(readers, session, prints)
    for store in {id(r.store): r.store for r in readers.values() if r.store is not None}.values():
        store.flush()
    return {
        dag_id: {
            "states": states,
            "first": ranges.get(dag_id, (None, None))[0],
            "last": ranges.get(dag_id, (None, None))[1],
            "strip": strips[0][1] if strips else (),
            "again": again,
            "late": len(late.get(dag_id, {})),
            "members_problems": readers[dag_id].answers.members_problems(),
        }
        for dag_id, (states, _, strips, again) in tallies.items()
    }
