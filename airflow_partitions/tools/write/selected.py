"""
What a backfill selects of a Dag: keys asked for, or a range's partitions by state and periods unopened.

The periods of a range never opened are ``missing``. The partitions with a run or a pending run
are read as ``status`` reads them (:func:`~airflow_partitions.tools.state.consumer_state`, or the
keys asked for in full:
:meth:`~airflow_partitions.tools.state.reader.Reader.partitions_of`); the periods without one are
walked: a Dag whose timetable makes its partitions by its timetable
(``iter_partition_dagrun_infos``, as Airflow's backfill walks them), an asset-fed Dag by the grain
of its keys.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.model import SEPARATOR, Partition
from airflow_partitions.tools.write.backfill import MISSING, MOST_PERIODS, Selection

#: One partition to plan: ``(the selected partition it serves, its Dag, its key, its partition, state)``.
Item = tuple[str, "PlannedDag", str, Partition | None, str]


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


class Selected:
    """What a :class:`~airflow_partitions.tools.write.backfill.Selection` selects, in one session at *now*."""

    def __init__(self, selection: Selection, session: Any, now: datetime) -> None:
        self.selection = selection
        self.session = session
        self.now = now
        #: When a period a range walk found runs (its timetable's ``run_after``), by (Dag, key).
        self.walked: dict[tuple[str, str], datetime | None] = {}

    def keys_selected(self, root: PlannedDag) -> tuple[list[Item], int, dict[str, int], int]:
        """Return the page of the keys asked for in a selected state, how many, counts, left out."""
        from airflow_partitions.tools.state.selection import checked_key

        keys = list(dict.fromkeys(self.selection.keys or ()))
        for key in keys:
            checked_key(root.dag_id, root.reader.answers.grain, key)
        items: list[Item] = []
        left_out = 0
        for part in root.reader.partitions_of(keys):
            state = state_of(part)
            if state not in self.selection.wanted:
                continue
            if state == MISSING and not self.due_enough(root, part.partition_key):
                left_out += 1
                continue
            items.append((part.partition_key, root, part.partition_key, part, state))
        counts: dict[str, int] = defaultdict(int)
        for *_, state in items:
            counts[state] += 1
        return self._paged(items), len(items), dict(counts), left_out

    def range_selected(self, root: PlannedDag) -> tuple[list[Item], int, dict[str, int], int]:
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
            self.walked[root.dag_id, key] = when
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

        from airflow_partitions.tools.state.kept.cache import mirror_for
        from airflow_partitions.tools.state.tables import dag_run

        query = select(dag_run.c.partition_key).where(
            dag_run.c.dag_id == root.dag_id, dag_run.c.partition_key.is_not(None)
        )
        known = set(self.session.scalars(query.distinct()))
        return known | {run.partition_key for run in mirror_for(self.session).open_runs([root.dag_id])}

    def due_enough(self, dag: PlannedDag, key: str) -> bool:
        """Whether the never-opened partition *key* of *dag* is due, or ``include_open`` plans it anyway."""
        when = self.period_end(dag, key)
        return self.selection.include_open or when is None or when <= self.now

    def period_end(self, dag: PlannedDag, key: str) -> datetime | None:
        """When partition *key* of *dag* can run: its timetable's due time, or its period's end (UTC)."""
        if (dag.dag_id, key) in self.walked:
            return self.walked[dag.dag_id, key]
        if dag.keyed_ahead:
            return dag.due(key)
        grain = dag.reader.answers.grain
        try:
            return None if grain is None else grain.parse(key.rsplit(SEPARATOR, 1)[-1]).utc[1]
        except ValueError:
            return None


def state_of(part: Partition) -> str:
    """Return a partition's state, ``missing`` for one without a run nor a pending run."""
    return MISSING if not part.runs and not part.progress and part.opened_at is None else part.state


def _most(found: list[Any]) -> None:
    """Refuse a range walk longer than :data:`MOST_PERIODS` periods."""
    if len(found) > MOST_PERIODS:
        raise ValueError(
            f"--start/--end hold more than {MOST_PERIODS:,} periods: narrow the range to list those missing."
        )
