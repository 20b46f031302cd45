"""
One page of a Dag's read in full: its partitions' runs, pending runs, queue places and lateness.

Each partition's Dag runs and what they ran with, its pending run's progress and place in the
scheduler's queue, when its period closes and since when it is late. Over the Dag's
:class:`~airflow_partitions.tools.state.reader.Reader` (passed in: it holds the Dag's mappers and
what is memoized of them). Per 5,000 keys (:data:`~airflow_partitions.tools.state.sql.CHUNK`),
one query of their Dag runs; the pending runs those came from and the open ones from the mirror of
the pending runs (:mod:`~airflow_partitions.tools.state.kept.mirror`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from airflow_partitions.tools.state.kept.cache import kept, mirror_for
from airflow_partitions.tools.state.kept.store import digest
from airflow_partitions.tools.state.model import Partition, RanWith, Run
from airflow_partitions.tools.state.pending import queue_places, received_keys
from airflow_partitions.tools.state.progress import again_state, ran_state
from airflow_partitions.tools.state.runs import ASSET_TRIGGERED
from airflow_partitions.tools.state.sql import chunks, state_name

#: A partition's Dag runs, oldest first: ``(run id, state, pending run id, ran_with kept)``; the
#: pending run id is ``None`` for a run not created from one, or whose bookkeeping ``clean`` removed.
RunRows = dict[str, list[tuple[str, str, int | None, bool]]]


def partitions(reader: Any, keys: list[str]) -> list[Partition]:
    """Return the partitions of *keys* (``2026-03-10``), in that order, in full."""
    if not keys:
        return []
    reader.answers.read_ahead(keys)
    runs, pending, complete = _rows(reader, keys)
    ran = _RanWith(reader, runs, complete)
    received = received_keys(reader.session, [apdr.id for apdr in pending.values()])
    places = queue_places(reader.queue, [apdr.id for apdr in pending.values()])
    found = []
    for key in keys:
        partition = _ran(key, runs.get(key, []), ran)
        closes_at = reader.answers.closes_at(key)
        apdr = pending.get(key)
        if apdr is not None:
            waiting, opened = reader.pending(key, received.get(apdr.id, {}))
            # A period that ran shows its run, the pending run a later key opened beside it.
            if partition.history:
                opened = replace(opened, state=partition.state, pending_again=again_state(waiting))
            partition = replace(
                opened,
                runs=partition.runs,
                history=partition.history,
                ran_with=partition.ran_with,
                opened_at=apdr.created_at,
                queue_position=places.get(apdr.id),
            )
        found.append(
            replace(partition, closes_at=closes_at, late_since=reader.late_since(key, partition.state))
        )
    return found


def _rows(reader: Any, keys: list[str]) -> tuple[RunRows, dict[str, Any], set[int]]:
    """
    Return the Dag runs of *keys* (:data:`RunRows`), their open pending runs by key, complete runs.

    The pending runs are the mirror's (:class:`~.mirror.PendingRun`); the complete runs, the ids of the
    fired pending runs known
    to have run complete without reading their keys
    (:meth:`~airflow_partitions.tools.state.reader.Reader.fired_complete`).
    """
    from sqlalchemy import func, select

    from airflow_partitions.tools.state.tables import dag_run

    runs: RunRows = defaultdict(list)
    mirror = mirror_for(reader.session)
    wanted = set(keys)
    pending = {
        run.partition_key: run for run in mirror.open_runs([reader.dag_id]) if run.partition_key in wanted
    }
    complete: set[int] = set()
    columns = (
        dag_run.c.id,
        dag_run.c.run_id,
        dag_run.c.partition_key,
        dag_run.c.state,
        func.coalesce(dag_run.c.created_at, dag_run.c.run_after),
        dag_run.c.partition_date,
        dag_run.c.run_type,
    )
    # Airflow indexes no Dag run by its key: finding the runs of a page's keys reads every run of
    # the Dag (0.46 s at a million), so their ids are kept while the Dag's fingerprint holds (a
    # run added or deleted moves it), and the runs read again by id.
    ids = kept(
        ("page runs", reader.dag_id, digest(keys)),
        reader.fingerprint,
        lambda: [
            run_id
            for chunk in chunks(keys)
            for run_id in reader.session.scalars(
                select(dag_run.c.id).where(
                    dag_run.c.dag_id == reader.dag_id, dag_run.c.partition_key.in_(chunk)
                )
            )
        ],
        reader.session,
    )
    for chunk in chunks(sorted(ids)):
        found = reader.session.execute(
            select(*columns).where(dag_run.c.id.in_(chunk)).order_by(dag_run.c.id)
        ).all()
        # The pending runs they came from, by Dag run id (from the mirror: Airflow indexes none of
        # the table's columns but the id).
        came_from = mirror.came_from([row[0] for row in found])
        for dag_run_id, run_id, key, state, created, anchor, run_type in found:
            apdr_id = came_from.get(dag_run_id)
            # An asset-triggered run without its pending run: clean removed its bookkeeping.
            bookkept = apdr_id is not None or state_name(run_type) != ASSET_TRIGGERED
            runs[key].append((run_id, state_name(state), apdr_id, bookkept))
            if apdr_id is not None and reader.fired_complete(created, anchor):
                complete.add(apdr_id)
    return runs, pending, complete


class _RanWith:
    """What the page's fired runs ran with: each run's own keys (its history), and each partition's."""

    def __init__(self, reader: Any, runs: RunRows, complete: set[int]) -> None:
        self.complete = complete
        #: Each partition's fired pending runs; a partition's runs ran with all their keys together.
        self.fired = {
            key: tuple(i for *_, i, _ in key_runs if i is not None) for key, key_runs in runs.items()
        }
        #: The partitions a run of which lost its bookkeeping (``clean``): what they ran with is unknown.
        self.lost = {key for key, key_runs in runs.items() if not all(kept for *_, kept in key_runs)}
        self.read = reader.ran_with_of(
            [
                *((i,) for group in self.fired.values() for i in group if i not in complete),
                *(
                    group
                    for key, group in self.fired.items()
                    if group and not complete.intersection(group) and key not in self.lost
                ),
            ]
        )
        self.whole = {
            key: reader.answers.complete_with(key)
            for key, group in self.fired.items()
            if complete.intersection(group)
        }

    def of_run(self, key: str, apdr_id: int | None) -> RanWith | None:
        """Return what the run of partition *key* fired from pending run *apdr_id* ran with."""
        if apdr_id is None:
            return None
        return self.whole.get(key) if apdr_id in self.complete else self.read[(apdr_id,)]

    def of_partition(self, key: str) -> RanWith | None:
        """Return what the runs of partition *key* ran with together (``None``: no run, or unknown)."""
        group = self.fired.get(key, ())
        if self.complete.intersection(group):
            return self.whole.get(key)
        return None if not group or key in self.lost else self.read[group]

    def kept(self, key: str) -> bool:
        """Whether what partition *key*'s runs ran with is known (``clean`` removed none it needs)."""
        return key not in self.lost or bool(self.complete.intersection(self.fired.get(key, ())))


def _ran(key: str, rows: list[tuple[str, str, int | None, bool]], ran: _RanWith) -> Partition:
    """Return partition *key* as its Dag runs (*rows*, oldest first) show it."""
    history = tuple(
        Run(run_id, state, ran.of_run(key, apdr_id), kept) for run_id, state, apdr_id, kept in rows
    )
    latest = ran.of_partition(key)
    return Partition(
        key,
        ran_state(history, latest),
        tuple((run.run_id, run.state) for run in history),
        ran_with=latest,
        history=history,
        ran_with_kept=ran.kept(key),
    )
