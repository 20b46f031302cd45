"""
A backfill's plan (:func:`plan`: each selected partition's steps) and carrying it out (:func:`carry_out`).

It reads the selected Dag's partitions as ``status`` does (:func:`~airflow_partitions.tools.state.
consumer_state`, or the keys asked for in full), lists the periods of the range with no run
(``missing``), then works out each partition's steps (what its state takes) level by level
upstream: the keys a partition misses are asked of the Dag that produces their asset (its tasks'
outlets, ``task_outlet_asset_reference``), all the keys asked of one Dag read together, up to
:data:`~airflow_partitions.tools.write.backfill.DEPTH` Dags upstream. A producer's partition whose
key a consumer misses is taken as the producer's run of that key: a partitioned run's asset events
carry its partition key (Airflow's default).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.tools.state.model import SEPARATOR, Partition
from airflow_partitions.tools.write.backfill import (
    DEPTH,
    IN_FLIGHT,
    MISSING,
    MOST_PERIODS,
    RERUN,
    SELECTABLE,
    Feed,
    Plan,
    PlannedPartition,
    Selection,
    Step,
    once_each,
)

#: ``(asset name, asset uri, upstream keys)``: keys a partition awaits of one asset.
Upstream = tuple[str, str, tuple[str, ...]]
#: One partition to plan: ``(the selected partition it serves, its Dag, its key, its partition, state)``.
Item = tuple[str, "PlannedDag", str, Partition | None, str]


def plan(selection: Selection, session: Any) -> Plan:
    """
    Return the plan of one page of *selection* (a dry run: nothing is written).

    :raises LookupError: (``NotAConsumer``) for an unknown Dag or one that is not partitioned.
    :raises ValueError: naming the option, for a key or range the Dag's keys cannot match, a state
        that is none of :data:`SELECTABLE`, both keys and a range, or ``missing`` over a range
        :func:`Planner` cannot walk (more than :data:`MOST_PERIODS` periods, or keys that are no
        periods).
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

    :raises LookupError: as :func:`plan`.
    :raises ValueError: as :func:`plan`.
    """
    from airflow_partitions.tools.write import paced

    whole = Planner(replace(selection, limit=None, offset=0), session).plan()
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


@dataclass
class PlannedDag:
    """A Dag the planner reads: its timetable, upstream assets and reader (what ``status`` reads)."""

    dag_id: str
    timetable: Any
    assets: list[tuple[str, str]]
    reader: Any

    @property
    def keyed_ahead(self) -> bool:
        """Whether its timetable makes its partitions ahead (no upstream assets): a run of a key is made."""
        return not self.assets and hasattr(self.timetable, "iter_partition_dagrun_infos")

    def due(self, key: str) -> datetime | None:
        """Return when its timetable runs partition *key* (UTC), ``None`` if it makes no such key."""
        due = getattr(self.timetable, "due", None)
        if due is None:
            return None
        try:
            return due(key)
        except ValueError:  # InvalidPartitionKeyError: not one of its keys
            return None


class Planner:
    """One plan of a :class:`~airflow_partitions.tools.write.backfill.Selection`, in one session."""

    def __init__(self, selection: Selection, session: Any) -> None:
        self.selection = selection
        self.session = session
        self.now = selection.now or datetime.now(UTC)
        self._dags: dict[str, PlannedDag | None] = {}
        self._producers: dict[tuple[str, str], list[str]] = {}
        #: When a period a range walk found runs (its timetable's ``run_after``), by (Dag, key).
        self._due: dict[tuple[str, str], datetime | None] = {}

    def plan(self) -> Plan:
        """Return the plan of the selection's page (see the module's docstring)."""
        selection = self.selection
        unknown = [s for s in selection.states or () if s not in SELECTABLE]
        if unknown:
            raise ValueError(f"--state {unknown[0]!r} is not a state; states: {', '.join(SELECTABLE)}.")
        if selection.keys and (selection.start or selection.end):
            raise ValueError("give --key (or --keys-from) or --start/--end, not both.")
        root = self.dag(selection.dag_id, required=True)
        assert root is not None
        page, total, counts, left_out = (
            self._keys_selected(root) if selection.keys else self._range_selected(root)
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

        :raises NotAConsumer: (a ``LookupError``) with *required*, for such a Dag.
        """
        if dag_id not in self._dags:
            from airflow_partitions.tools.state.reader import Reader
            from airflow_partitions.tools.state.serialized import consumer_timetable

            try:
                timetable, assets = consumer_timetable(dag_id, self.session)
            except LookupError:
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

    # -- what is selected --------------------------------------------------------------------

    def _keys_selected(self, root: PlannedDag) -> tuple[list[Item], int, dict[str, int], int]:
        """Return the page of the keys asked for in a selected state, how many, counts, left out."""
        from airflow_partitions.tools.state.selection import checked_key

        keys = list(dict.fromkeys(self.selection.keys or ()))
        for key in keys:
            checked_key(root.dag_id, root.reader.answers.grain, key)
        items: list[Item] = []
        left_out = 0
        for part in root.reader.partitions_of(keys):
            state = _state_of(part)
            if state not in self.selection.wanted:
                continue
            if state == MISSING and not self._due_enough(root, part.partition_key):
                left_out += 1
                continue
            items.append((part.partition_key, root, part.partition_key, part, state))
        counts: dict[str, int] = defaultdict(int)
        for *_, state in items:
            counts[state] += 1
        return self._paged(items), len(items), dict(counts), left_out

    def _range_selected(self, root: PlannedDag) -> tuple[list[Item], int, dict[str, int], int]:
        """
        Return the page of the range's partitions in a selected state, how many, counts, left out.

        The partitions with a run or a pending run first, in key order (``status``'s read), then
        the periods without one (``missing``), in key order.
        """
        from airflow_partitions.tools.state.consumers import consumer_state

        selection = self.selection
        states = [s for s in selection.wanted if s != MISSING]
        missing, left_out = self._unopened(root) if MISSING in selection.wanted else ([], 0)
        existing = 0
        items: list[Item] = []
        counts: dict[str, int] = {}
        if states:
            limit = None if selection.limit is None else selection.limit
            read = consumer_state(
                root.dag_id,
                start=selection.start,
                end=selection.end,
                states=states,
                limit=limit,
                offset=selection.offset,
                session=self.session,
            )
            existing = read.total
            counts = {s: n for s, n in read.states.items() if s in states}
            items = [(p.partition_key, root, p.partition_key, p, p.state) for p in read.partitions]
        if missing:
            counts[MISSING] = len(missing)
            first = max(0, selection.offset - existing)
            room = None if selection.limit is None else selection.limit - len(items)
            chosen = missing[first:] if room is None else missing[first : first + max(0, room)]
            items += [(key, root, key, None, MISSING) for key in chosen]
        return items, existing + len(missing), counts, left_out

    def _paged(self, items: list[Item]) -> list[Item]:
        """Return the selection's page of *items*."""
        offset, limit = self.selection.offset, self.selection.limit
        return items[offset:] if limit is None else items[offset : offset + limit]

    def _unopened(self, root: PlannedDag) -> tuple[list[str], int]:
        """
        Return the due periods of the range without a run or pending run of *root*; how many are not due.

        In key order.

        A Dag whose timetable makes its partitions walks them (``iter_partition_dagrun_infos``, as
        Airflow's backfill does); an asset-fed Dag the periods of its grain. Without a range, the
        Dag's own (its first and last keys): the gaps between them.

        :raises ValueError: for a Dag whose keys are no one grain's periods, or a range of more than
            :data:`MOST_PERIODS` periods.
        """
        walked = self._walk(root)
        if walked is None:
            return self._not_walkable(root)
        known = self._known_keys(root)
        if any(SEPARATOR in key for key in known):  # composite keys: their periods are per member
            return self._not_walkable(root)
        due, open_ = [], 0
        for key, when in walked:
            if key in known:
                continue
            self._due[root.dag_id, key] = when
            if when is not None and when > self.now and not self.selection.include_open:
                open_ += 1
            else:
                due.append(key)
        return due, open_

    def _not_walkable(self, root: PlannedDag) -> tuple[list[str], int]:
        """
        Refuse to list *root*'s periods without a run: its keys are not the periods of one grain.

        :raises ValueError: saying to select them by ``--key``.
        """
        raise ValueError(
            f"--state missing: the keys of {root.dag_id!r} are not the periods of one grain (composite keys, "
            "or a mapper without a grain), so the periods without a run cannot be listed: select them by "
            "--key."
        )

    def _walk(self, root: PlannedDag) -> list[tuple[str, datetime | None]] | None:
        """Return the range's periods of *root*, each with when it is due (UTC); ``None``: not walkable."""
        from airflow_partitions.tools.state.consumers import consumer_range
        from airflow_partitions.tools.state.selection import bound_instant, selected_range

        grain = root.reader.answers.grain
        if not root.keyed_ahead and (grain is None or root.timetable is None):
            return None
        start, end = selected_range(root.dag_id, grain, self.selection.start, self.selection.end)
        if start is None or end is None:
            first, last = consumer_range(root.dag_id, session=self.session)
            start, end = start or first, end or last
        if start is None or end is None:
            return []
        low = bound_instant(grain, "--start", start, last=False)
        high = bound_instant(grain, "--end", end, last=True)
        found: list[tuple[str, datetime | None]] = []
        if root.keyed_ahead:
            for info in root.timetable.iter_partition_dagrun_infos(earliest=low, latest=high):
                found.append((info.partition_key, root.due(info.partition_key) or info.run_after))
                _most(found)
            return found
        assert grain is not None
        period = grain.period_at_or_after(low)
        while period.start <= high:
            found.append((period.key, period.utc[1]))
            _most(found)
            period = grain.shift(period, 1)
        return found

    def _known_keys(self, root: PlannedDag) -> set[str]:
        """Return the keys of *root* with a Dag run or an open pending run."""
        from sqlalchemy import select

        from airflow_partitions.tools.state.cache import mirror_for
        from airflow_partitions.tools.state.tables import dag_run

        query = select(dag_run.c.partition_key).where(
            dag_run.c.dag_id == root.dag_id, dag_run.c.partition_key.is_not(None)
        )
        known = set(self.session.scalars(query.distinct()))
        return known | {run.partition_key for run in mirror_for(self.session).open_runs([root.dag_id])}

    def _due_enough(self, dag: PlannedDag, key: str) -> bool:
        """Whether the never-opened partition *key* of *dag* is due, or ``include_open`` plans it anyway."""
        when = self._period_end(dag, key)
        return self.selection.include_open or when is None or when <= self.now

    def _period_end(self, dag: PlannedDag, key: str) -> datetime | None:
        """When partition *key* of *dag* can run: its timetable's due time, or its period's end (UTC)."""
        if (dag.dag_id, key) in self._due:
            return self._due[dag.dag_id, key]
        if dag.keyed_ahead:
            return dag.due(key)
        grain = dag.reader.answers.grain
        try:
            return None if grain is None else grain.parse(key.rsplit(SEPARATOR, 1)[-1]).utc[1]
        except ValueError:
            return None

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
            (served, pdag, part.partition_key, part, _state_of(part))
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
            else f"no Dag makes {name}: a feed must send them"
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
            if dag.due(key) is None and (dag.dag_id, key) not in self._due:
                why = f"its timetable makes no partition {key!r}: trigger a run of it by hand"
                return [Step("cannot", dag.dag_id, key, why=why)], []
            if not self._due_enough(dag, key):
                return [Step("wait", dag.dag_id, key, why=_not_due(self._period_end(dag, key)))], []
            return [Step("run", dag.dag_id, key, why="no run of it yet")], []
        if not dag.assets:
            why = "its Dag names its keys at run time: run it, and its tasks say which keys it makes"
            return [Step("cannot", dag.dag_id, key, why=why)], []
        closes = part.closes_at if part is not None else self._period_end(dag, key)
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
        from airflow_partitions.tools.state.cache import mirror_for
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


def _state_of(part: Partition) -> str:
    """Return a partition's state, ``missing`` for one without a run nor a pending run."""
    return MISSING if not part.runs and not part.progress and part.opened_at is None else part.state


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


def _most(found: list[Any]) -> None:
    """Refuse a range walk longer than :data:`MOST_PERIODS` periods."""
    if len(found) > MOST_PERIODS:
        raise ValueError(
            f"--start/--end hold more than {MOST_PERIODS:,} periods: narrow the range to list those missing."
        )
