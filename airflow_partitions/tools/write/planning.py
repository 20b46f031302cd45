"""
A backfill's plan (:func:`plan`: each selected partition's steps) and carrying it out (:func:`carry_out`).

It reads the selected partitions (:mod:`~airflow_partitions.tools.write.selected`), then works
out each partition's steps (what its state takes) level by level upstream: the keys a partition
misses are asked of the Dag that produces their asset (its tasks' outlets,
``task_outlet_asset_reference``), all the keys asked of one Dag read together, up to
:data:`~airflow_partitions.tools.write.backfill.DEPTH` Dags upstream. A producer's partition whose
key a consumer misses is taken as the producer's run of that key: a partitioned run's asset events
carry its partition key (Airflow's default).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.tools.errors import UnknownDag
from airflow_partitions.tools.state.model import SEPARATOR, Partition
from airflow_partitions.tools.write.backfill import (
    DEPTH,
    IN_FLIGHT,
    MISSING,
    NO_DAG,
    RERUN,
    Feed,
    Plan,
    PlannedPartition,
    Selection,
    Step,
    once_each,
)
from airflow_partitions.tools.write.selected import Item, PlannedDag, Selected, state_of

#: ``(asset name, asset uri, upstream keys)``: keys a partition awaits of one asset.
Upstream = tuple[str, str, tuple[str, ...]]


def plan(selection: Selection, session: Any) -> Plan:
    """
    Return the plan of one page of *selection* (a dry run: nothing is written).

    :raises UnknownDag: for an unknown Dag, or one that is not partitioned (``NotAConsumer``).
    :raises ValueError: naming the option, for a key or range the Dag's keys cannot match, or
        ``missing`` over a range :func:`Planner` cannot walk (more than :data:`MOST_PERIODS`
        periods, or keys that are no periods).
    """
    return Planner(selection, session).plan()


def carry_out(
    selection: Selection,
    session: Any,
    user: str | None,
    *,
    max_active: int,
    order: str,
    may_run: Callable[[str], bool] | None = None,
) -> Plan:
    """
    Plan every selected partition and hand the runs to a new paced backfill; return the plan with it.

    The backfill (:func:`~airflow_partitions.tools.write.paced.create`) starts the first
    *max_active* runs at once, in *order* (``oldest`` or ``newest`` partitions first), under
    *user*'s name (the audit log's owner; default the operating-system user). ``could_not`` lists
    the steps no run takes, and the runs of the Dags *user* may not start (*may_run*, ``None``:
    every Dag's). Nothing is created when no run is to start. The plan answered holds the
    selection's page of partitions (``limit``, ``offset``), the keys to send of all of them.

    :raises UnknownDag: as :func:`plan`, and :class:`NotAConsumer`.
    :raises ValueError: as :func:`plan`.
    """
    from airflow_partitions.tools.state.database import moment_over
    from airflow_partitions.tools.write import paced

    whole = Planner(replace(selection, limit=None, offset=0), session).plan()
    moment_over(session)  # the plan was read at one moment; its runs start in a transaction of their own
    ordered = sorted(
        whole.partitions, key=lambda p: (p.partition_key.rsplit(SEPARATOR, 1)[-1], p.partition_key)
    )
    if order == "newest":
        ordered.reverse()
    runs = once_each(s for p in ordered for s in p.steps if s.runs)
    refused = [s for s in runs if may_run is not None and not may_run(s.dag_id)]
    runs = [s for s in runs if s not in refused]
    could_not = once_each(s for p in whole.partitions for s in p.steps if s.action in ("send", "cannot"))
    could_not += [
        replace(s, action="cannot", why=f"you may not trigger and clear the runs of {s.dag_id} ({s.action})")
        for s in refused
    ]
    tracked = (
        paced.create(whole.dag_id, whole.selection, runs, user, max_active, order, session) if runs else None
    )
    end = None if selection.limit is None else selection.offset + selection.limit
    return replace(
        whole,
        partitions=whole.partitions[selection.offset : end],
        offset=selection.offset,
        limit=selection.limit,
        backfill=tracked,
        could_not=tuple(could_not),
    )


class Planner:
    """One plan of a :class:`~airflow_partitions.tools.write.backfill.Selection`, in one session."""

    def __init__(self, selection: Selection, session: Any) -> None:
        self.selection = selection
        self.session = session
        self.now = selection.now or datetime.now(UTC)
        self._dags: dict[str, PlannedDag | None] = {}
        self._producers: dict[tuple[str, str], list[str]] = {}
        #: What the selection selects (and when the periods it walked are due).
        self.chosen = Selected(selection, session, self.now)

    def plan(self) -> Plan:
        """Return the plan of the selection's page (see the module's docstring)."""
        selection = self.selection
        root = self.dag(selection.dag_id, required=True)
        assert root is not None
        page, total, counts, left_out = (
            self.chosen.keys_selected(root) if selection.keys else self.chosen.range_selected(root)
        )
        steps = self._steps(page)
        planned = tuple(PlannedPartition(key, state, tuple(steps[key])) for _, _, key, _, state in page)
        return Plan(
            dag_id=root.dag_id,
            selection=selection.words(),
            partitions=planned,
            total=total,
            states=counts,
            offset=selection.offset,
            limit=selection.limit,
            feeds=self._feeds(planned),
            left_out_open=left_out,
        )

    # -- the Dags ----------------------------------------------------------------------------

    def dag(self, dag_id: str, *, required: bool = False) -> PlannedDag | None:
        """
        Return the partitioned Dag *dag_id* as the planner reads it, ``None`` if it is not partitioned.

        :raises UnknownDag: or :class:`NotAConsumer` with *required*, for such a Dag.
        """
        if dag_id not in self._dags:
            from airflow_partitions.tools.state.reader import Reader
            from airflow_partitions.tools.state.serialized import consumer_timetable

            try:
                timetable, assets = consumer_timetable(dag_id, self.session)
            except UnknownDag:
                if required:
                    raise
                self._dags[dag_id] = None
            else:
                reader = Reader(dag_id, self.session, (timetable, assets))
                self._dags[dag_id] = PlannedDag(dag_id, timetable, assets, reader)
        return self._dags[dag_id]

    def producers(self, name: str, uri: str) -> list[str]:
        """Return the ids of the Dags whose tasks update the asset *name* (its outlets), sorted."""
        if (name, uri) not in self._producers:
            from sqlalchemy import select

            from airflow_partitions.tools.state.tables import asset
            from airflow_partitions.tools.state.tables import task_outlet_asset_reference as outlet

            query = (
                select(outlet.c.dag_id)
                .join(asset, asset.c.id == outlet.c.asset_id)
                .where(asset.c.name == name, asset.c.uri == uri)
                .distinct()
            )
            self._producers[name, uri] = sorted(self.session.scalars(query))
        return self._producers[name, uri]

    # -- the steps, level by level upstream --------------------------------------------------

    def _steps(self, page: list[Item]) -> dict[str, list[Step]]:
        """
        Return the steps of each selected partition of *page*, by its key (see the module).

        Level by level: the keys the partitions of one level miss are asked of their producers, all
        of one producer's read together for the next level; a key asked before is not asked again
        (a loop of Dags ends).
        """
        found: dict[str, list[Step]] = {key: [] for key, *_ in page}
        level: list[Item] = list(page)
        asked: set[tuple[str, str]] = {(dag.dag_id, key) for _, dag, key, _, _ in page}
        for depth in range(DEPTH + 1):
            asks: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
            for served, dag, key, part, state in level:
                steps, upstream = self._local(dag, key, part, state, producer=depth > 0)
                found[served].extend(steps)
                for name, uri, keys in upstream:
                    routed, producer = self._route(dag, key, name, uri, keys, depth)
                    found[served].extend(routed)
                    if producer is None:
                        continue
                    for wanted in keys:
                        if (producer, wanted) not in asked:
                            asks[producer][wanted].append(served)
            asked |= {(producer, key) for producer, keys in asks.items() for key in keys}
            level = [item for producer, keys in asks.items() for item in self._asked(producer, keys)]
        return found

    def _asked(self, producer: str, keys: dict[str, list[str]]) -> list[Item]:
        """Return the partitions of *producer* asked for (*keys*, each with the partitions it serves)."""
        pdag = self.dag(producer)
        assert pdag is not None
        return [
            (served, pdag, part.partition_key, part, state_of(part))
            for part in pdag.reader.partitions_of(sorted(keys))
            for served in dict.fromkeys(keys[part.partition_key])
        ]

    def _route(
        self, dag: PlannedDag, key: str, name: str, uri: str, keys: tuple[str, ...], depth: int
    ) -> tuple[list[Step], str | None]:
        """Return the steps for keys *dag*'s partition *key* awaits of an asset, or the Dag to ask them of."""
        producers = [p for p in self.producers(name, uri) if p != dag.dag_id]
        plannable = [p for p in producers if self.dag(p) is not None]
        if plannable and depth < DEPTH:
            return [], plannable[0]
        if plannable:
            why = f"made by {plannable[0]}, more than {DEPTH} Dags upstream: backfill {plannable[0]} for them"
            return [Step("cannot", dag.dag_id, key, asset=name, keys=keys, why=why)], None
        why = (
            f"made by {', '.join(producers)}, whose runs are not partitioned: a feed (or a run of it) must "
            "send them"
            if producers
            else f"{NO_DAG} {name}: a feed must send them"
        )
        return [Step("send", dag.dag_id, key, asset=name, keys=keys, why=why)], None

    def _local(
        self, dag: PlannedDag, key: str, part: Partition | None, state: str, *, producer: bool
    ) -> tuple[list[Step], list[Upstream]]:
        """Return what partition *key* of *dag* takes itself, and the upstream keys to ask of others."""
        if state in IN_FLIGHT:
            return [Step("wait", dag.dag_id, key, why=f"its run is {state}")], []
        if state in RERUN or (state == "success" and part is not None and part.runs):
            assert part is not None
            return [
                Step("re-run", dag.dag_id, key, run_id=part.runs[-1][0], why=_rerun_why(part, producer))
            ], []
        if state == MISSING and dag.keyed_ahead:
            if dag.due(key) is None and (dag.dag_id, key) not in self.chosen.walked:
                why = f"its timetable makes no partition {key!r}: trigger a run of it by hand"
                return [Step("cannot", dag.dag_id, key, why=why)], []
            if not self.chosen.due_enough(dag, key):
                return [Step("wait", dag.dag_id, key, why=_not_due(self.chosen.period_end(dag, key)))], []
            return [Step("run", dag.dag_id, key, why="no run of it yet")], []
        if not dag.assets:
            why = "its Dag names its keys at run time: run it, and its tasks say which keys it makes"
            return [Step("cannot", dag.dag_id, key, why=why)], []
        closes = part.closes_at if part is not None else self.chosen.period_end(dag, key)
        if state in ("pending", MISSING) and closes and closes > self.now and not self.selection.include_open:
            return [Step("wait", dag.dag_id, key, why=_not_due(closes))], []
        steps = []
        if state == "never counting":
            why = "it holds keys that never count (explain says why; discard removes its pending run)"
            steps.append(Step("cannot", dag.dag_id, key, why=why))
        upstream, unnamed = self._upstream(dag, key)
        steps += [Step("cannot", dag.dag_id, key, asset=name, why=why) for name, why in unnamed]
        if not steps and not upstream:
            steps.append(
                Step("wait", dag.dag_id, key, why="it has every key it awaits: the scheduler runs it")
            )
        return steps, upstream

    def _upstream(self, dag: PlannedDag, key: str) -> tuple[list[Upstream], list[tuple[str, str]]]:
        """
        Return the keys partition *key* of *dag* still awaits per asset, and assets whose keys have no name.

        What its open pending run received (none for a period never opened) counted out of what each
        rollup awaits; under a mapper that is no rollup, one key: *key* itself if the mapper maps it
        to *key* (an identity), else it cannot be named.
        """
        from airflow_partitions.tools.state.kept.cache import mirror_for
        from airflow_partitions.tools.state.pending import received_keys

        apdr = next(
            (r.id for r in mirror_for(self.session).open_runs([dag.dag_id]) if r.partition_key == key), None
        )
        received = received_keys(self.session, [apdr]).get(apdr, {}) if apdr is not None else {}
        found: list[Upstream] = []
        unnamed: list[tuple[str, str]] = []
        for name, uri in dag.assets:
            rollup = dag.reader.rollups.get(name)
            got = received.get(name, frozenset())
            try:
                keys = rollup.missing(key, got) if rollup else () if got else _identity(dag, name, uri, key)
            except ValueError as err:
                unnamed.append((name, f"its keys of {name} cannot be known now: {err}"))
                continue
            if keys is None:
                unnamed.append(
                    (name, f"any key of {name} its mapper maps to {key!r} would do: it names none")
                )
            elif keys:
                found.append((name, uri, tuple(keys)))
        return found, unnamed

    def _feeds(self, planned: tuple[PlannedPartition, ...]) -> tuple[Feed, ...]:
        """Return the page's ``send`` steps as the keys each asset needs sent, with the asset's id."""
        from airflow_partitions.tools.state.serialized import asset_rows

        keys: dict[tuple[str, str], set[str]] = defaultdict(set)
        uris = {name: uri for dag in self._dags.values() if dag for name, uri in dag.assets}
        for partition in planned:
            for step in partition.steps:
                if step.action == "send" and step.asset is not None:
                    keys[step.asset, uris.get(step.asset, step.asset)].update(step.keys)
        ids = {(name, uri): i for i, name, uri in asset_rows(list(keys), self.session)}
        return tuple(
            Feed(name, uri, ids.get((name, uri)), tuple(sorted(found)))
            for (name, uri), found in sorted(keys.items())
        )


def _identity(dag: PlannedDag, name: str, uri: str, key: str) -> tuple[str, ...] | None:
    """Return ``(key,)`` if the mapper of asset *name* maps *key* to *key*, else ``None`` (no key to name)."""
    mapper = dag.timetable.get_partition_mapper(name=name, uri=uri)
    try:
        mapped = mapper.to_downstream(key)
    except ValueError:
        return None
    return (key,) if key in ([mapped] if isinstance(mapped, str) else list(mapped)) else None


def _rerun_why(part: Partition, producer: bool) -> str:
    """Say why a partition's run is run again: ``"its latest run failed"``."""
    if part.state == "failed":
        return "its latest run failed"
    if part.state == "ran incomplete" and part.ran_with is not None:
        missing = part.ran_with.awaited - part.ran_with.counted
        return f"its runs ran without {missing} of its {part.ran_with.awaited} upstream keys"
    if part.state == "stale":
        return "a key it counted came again after its run started"
    return "its run makes the keys asked for" if producer else f"its latest run is {part.state}"


def _not_due(when: datetime | None) -> str:
    """Say that a partition is not due yet, and until when."""
    return f"its period ends at {when.isoformat()}: --include-open plans it now" if when else ""
