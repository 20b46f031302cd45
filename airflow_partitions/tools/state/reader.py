"""
One read of one consumer Dag's partition state in one session: the reader the faces share.

What the Dag's mappers answer (a pending run's progress, when a key is late, what a run ran with)
comes from :class:`~airflow_partitions.tools.state.kept.answers.Answers`: kept across processes, the
mappers deserialized (importing Airflow) only for an answer not kept.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from airflow_partitions.tools.state.audit_log import refusals_of
from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept.answers import Answers
from airflow_partitions.tools.state.kept.cache import kept, mirror_for
from airflow_partitions.tools.state.kept.fingerprint import fingerprints, with_members
from airflow_partitions.tools.state.kept.store import digest
from airflow_partitions.tools.state.lateness import late_keys
from airflow_partitions.tools.state.model import (
    BUCKET,
    ConsumerState,
    Partition,
    RanWith,
    bucket_length,
    late_since,
)
from airflow_partitions.tools.state.page import partitions
from airflow_partitions.tools.state.pending import Queue, apdr_keys, queue, queue_summary, received_keys
from airflow_partitions.tools.state.progress import never_counting, pending_state
from airflow_partitions.tools.state.runs import ASSET_TRIGGERED
from airflow_partitions.tools.state.sql import as_utc, chunks, in_range_sql, state_name, time_part_sql
from airflow_partitions.tools.state.tally import ranges_of, tally_of


def told(found: Iterable[Partition], overrides: Mapping[str, str]) -> list[Partition]:
    """
    Return the partitions *found* (a page, read in full), those a read of the whole Dag found stale so.

    *overrides* are the tally's (:func:`~.tally.tally_of`): ``"stale"`` is known only there (:mod:`~.stale`).
    """
    return [replace(p, state="stale") if overrides.get(p.partition_key) == "stale" else p for p in found]


class Reader:
    """One read of one consumer Dag's partition state, in one session (see :func:`consumer_state`)."""

    def __init__(
        self,
        dag_id: str,
        session: Any,
        found: tuple[Any, list[tuple[str, str]]] | None = None,
        answers: Answers | None = None,
    ) -> None:
        self.dag_id = dag_id
        self.session = session
        self.now = datetime.now(UTC)
        #: What the Dag's mappers answer (stored across processes; its mappers read on a miss).
        self.answers = answers or Answers(dag_id, session, found)
        self.store = self.answers.store
        self.assets = self.answers.assets
        #: Whether a mapper of this Dag says when its partitions are expected (``expected_within``).
        self.expects = self.answers.expects
        #: Whether a run of this Dag can fire without all its keys (a deadline, a minimum count);
        #: under WaitForAll a run exists only once every key counted.
        self.may_fire_incomplete = self.answers.may_fire_incomplete
        self.identity = self.answers.identity
        self._bounds: tuple[timedelta, timedelta, list[datetime] | None] | None = None  # by :meth:`bounds`
        #: The Dag's fingerprint (:func:`fingerprints`) once a read took it; until then one that
        #: matches nothing kept.
        self.fingerprint: Any = object()

    @cached_property
    def queue(self) -> Queue:
        """The deployment's pending runs in the scheduler's order (:func:`~.pending.queue`), read once."""
        return queue(self.session)

    @property
    def rollups(self) -> dict[str, Any]:
        """Each upstream asset's rollup view, by asset name (deserializes the Dag's mappers)."""
        return self.answers.rollups

    # -- the keys: paging, range and counts in the database ------------------------------------

    def _keys_query(self, start: str | None, end: str | None) -> Any:
        """Select the Dag's partition keys (of its runs and pending runs) with their time part: a subquery."""
        from sqlalchemy import select, union

        from airflow_partitions.tools.state.tables import asset_partition_dag_run, dag_run

        keys = union(
            select(dag_run.c.partition_key.label("key")).where(
                dag_run.c.dag_id == self.dag_id, dag_run.c.partition_key.is_not(None)
            ),
            select(asset_partition_dag_run.c.partition_key.label("key")).where(
                asset_partition_dag_run.c.target_dag_id == self.dag_id,
                asset_partition_dag_run.c.created_dag_run_id.is_(None),
            ),
        ).subquery()
        part = time_part_sql(keys.c.key)
        return (
            select(keys.c.key.label("key"), part.label("part"))
            .where(*in_range_sql(part, start, end))
            .subquery()
        )

    def _ordered(self, start: str | None, end: str | None) -> Any:
        """Select the keys in order of their time part, each with its latest run's state (``None``: none)."""
        from sqlalchemy import func, select

        from airflow_partitions.tools.state.tables import dag_run

        keys = self._keys_query(start, end)
        latest = (
            select(dag_run.c.partition_key.label("key"), func.max(dag_run.c.id).label("id"))
            .where(dag_run.c.dag_id == self.dag_id, dag_run.c.partition_key.is_not(None))
            .group_by(dag_run.c.partition_key)
            .subquery()
        )
        return (
            select(keys.c.key, dag_run.c.state)
            .outerjoin(latest, latest.c.key == keys.c.key)
            .outerjoin(dag_run, dag_run.c.id == latest.c.id)
            .order_by(keys.c.part, keys.c.key)
        )

    def read(
        self,
        only: str | None,
        start: str | None,
        end: str | None,
        wanted: set[str] | None,
        limit: int | None,
        offset: int,
    ) -> ConsumerState:
        """Return the Dag's state: counts and strips of the range, a page in full (:func:`consumer_state`)."""
        prints = with_members(fingerprints([self.dag_id], self.session), {self.dag_id: self})
        self.fingerprint = prints.get(self.dag_id)
        ranges = ranges_of([self.dag_id], self.session, start, end, only, prints)
        first, last = ranges.get(self.dag_id, (None, None))
        bucket = bucket_length(first, last)
        states, overrides, overview, again = tally_of(
            {self.dag_id: self}, self.session, start, end, only, bucket, True, prints
        )[self.dag_id]
        page_keys, total = self._page(only, start, end, wanted, states, overrides, limit, offset)
        late = [
            key
            for key, (_, state) in late_keys({self.dag_id: self}, self.session, prints, start, end, only)
            .get(self.dag_id, {})
            .items()
            if wanted is None or overrides.get(key, state or "pending") in wanted
        ]
        refusals, refusals_total = refusals_of(
            self.session, self.dag_id, only, start, end, self.answers.grain
        )
        pending_total, blocked, starved = queue_summary(self.session, self.queue, self.dag_id, only)
        answer = ConsumerState(
            dag_id=self.dag_id,
            assets=tuple(self.assets),
            partitions=tuple(told(partitions(self, page_keys), overrides)),
            refusals=refusals,
            refusals_total=refusals_total,
            pending_total=pending_total,
            blocked_ahead=blocked,
            starved=starved,
            read_at=self.now,
            total=total,
            offset=offset,
            limit=limit,
            states=states,
            first=first,
            last=last,
            bucket=bucket,
            overview=overview,
            again=again,
            rerun_policies=self.answers.rerun_policies,
            late=len(late),
            members_problems=self.answers.members_problems(),
        )
        if self.store is not None:
            self.store.flush()
        return answer

    def partitions_of(self, keys: list[str]) -> list[Partition]:
        """
        Return the partitions of *keys* in full, in that order, their states as :meth:`read` tells them.

        A key without a run or a pending run comes back ``"pending"`` without runs nor progress.
        """
        prints = with_members(fingerprints([self.dag_id], self.session), {self.dag_id: self})
        self.fingerprint = prints.get(self.dag_id)
        tally = tally_of({self.dag_id: self}, self.session, None, None, None, BUCKET, False, prints)
        found = told(partitions(self, keys), tally[self.dag_id][1])
        if self.store is not None:
            self.store.flush()
        return found

    def _page(
        self,
        only: str | None,
        start: str | None,
        end: str | None,
        wanted: set[str] | None,
        states: dict[str, int],
        overrides: dict[str, str],
        limit: int | None,
        offset: int,
    ) -> tuple[list[str], int]:
        """
        Return the keys of the page asked for, in key order, and how many partitions all its pages hold.

        A page is kept while the Dag's fingerprint holds (:attr:`fingerprint`, taken by :meth:`read`).
        """
        from sqlalchemy import select

        if only is not None:
            return ([only], 1) if states else ([], 0)
        if wanted is None:
            keys = self._keys_query(start, end)
            ordered = select(keys.c.key).order_by(keys.c.part, keys.c.key).offset(offset)
            page_keys = kept(
                ("page", self.dag_id, start, end, limit, offset),
                self.fingerprint,
                lambda: list(self.session.scalars(ordered.limit(limit) if limit is not None else ordered)),
                self.session,
            )
            return page_keys, sum(states.values())
        # A state filter: walk the keys in order until the page is full (only it is kept). The
        # page depends on the rows (the fingerprint) and on the states only the mappers tell
        # (pending runs, runs that ran incomplete), which change with the clock.
        memo = ("filtered", self.dag_id, start, end, digest(wanted), limit, offset, digest(overrides.items()))
        page_keys = kept(
            memo,
            self.fingerprint,
            lambda: self._filtered(start, end, wanted, overrides, limit, offset),
            self.session,
        )
        return page_keys, sum(n for state, n in states.items() if state in wanted)

    def _filtered(
        self,
        start: str | None,
        end: str | None,
        wanted: set[str],
        overrides: dict[str, str],
        limit: int | None,
        offset: int,
    ) -> list[str]:
        """Return the page of keys in a state of *wanted*, in key order: read until the page is full."""
        page_keys: list[str] = []
        seen = 0
        for key, state in self.session.execute(self._ordered(start, end)):
            if limit is not None and len(page_keys) == limit:
                break  # the counts come from the tally: the rest need not be read
            if overrides.get(key, state_name(state)) not in wanted:
                continue
            if seen >= offset:
                page_keys.append(key)
            seen += 1
        return page_keys

    # -- what a pending run has, what a run ran with ------------------------------------------

    def pending(self, key: str, received: Mapping[str, AbstractSet[str]]) -> tuple[str, Partition]:
        """Return a pending run's state and partition (what its keys give it: :data:`cache.PENDING`)."""
        memo = (self.identity, key, frozenset((name, frozenset(keys)) for name, keys in received.items()))
        found = cache.PENDING.get(memo)
        if found is None:
            found = cache.PENDING[memo] = self.answers.pending(key, received)
            if len(cache.PENDING) > cache.PENDING_SIZE:
                cache.PENDING.popitem(last=False)
        progress, fires_at, ends, deadline = found
        state = pending_state(never_counting(progress), fires_at, ends, deadline, self.now)
        return state, Partition(key, state, progress=progress, fires_at=fires_at)

    def ran_with_of(self, groups: Iterable[tuple[int, ...]]) -> dict[tuple[int, ...], RanWith | None]:
        """
        Return what each group of fired pending runs of one partition ran with, together.

        A group of one is what that run ran with; of all the runs of a partition, what they ran
        with together: a rerun for keys that came late (a refresh) completes its period once every
        key came in one run or another. Memoized per process: a fired run's keys never change.
        ``None`` for a group whose Dag's members cannot be known now (not memoized).
        """
        groups = list(dict.fromkeys(groups))
        found: dict[tuple[int, ...], RanWith | None] = {
            g: cache.RAN_WITH[self.identity, g] for g in groups if (self.identity, g) in cache.RAN_WITH
        }
        todo = [g for g in groups if g not in found]
        if not todo:
            return found
        ids = sorted({i for g in todo for i in g})
        keys: dict[int, str] = {}
        for chunk in chunks(ids):
            keys.update(self.session.execute(apdr_keys(chunk)).all())
        received = received_keys(self.session, ids)
        for group in todo:
            together: dict[str, set[str]] = defaultdict(set)
            for apdr_id in group:
                for name, logged in received.get(apdr_id, {}).items():
                    together[name] |= logged
            ran = found[group] = self.answers.ran_with(keys[group[0]], together)
            if ran is None:
                continue
            cache.RAN_WITH[self.identity, group] = ran
            if len(cache.RAN_WITH) > cache.RAN_WITH_SIZE:
                cache.RAN_WITH.popitem(last=False)
        return found

    def fired_runs(
        self, keys: list[str]
    ) -> dict[str, list[tuple[int | None, datetime | None, datetime | None]]]:
        """
        Return the asset-triggered Dag runs of *keys*, oldest first: ``(pending run id, created, date)``.

        ``date`` is the run's ``partition_date``; the pending run's id is ``None`` for a run whose
        bookkeeping ``clean`` removed. The pending runs that fired come from the mirror
        (:mod:`~airflow_partitions.tools.state.kept.mirror`: Airflow indexes no column of
        ``asset_partition_dag_run`` but its id; a join on ``created_dag_run_id`` scanned the table
        once per run, 30 s at 100,000 partitions), then the Dag runs by key.
        """
        from sqlalchemy import func, select

        from airflow_partitions.tools.state.tables import dag_run

        came_from = mirror_for(self.session).fired_of(self.dag_id)
        by_key: dict[str, list[tuple[int | None, datetime | None, datetime | None]]] = defaultdict(list)
        for chunk in chunks(keys):
            query = (
                select(
                    dag_run.c.id,
                    dag_run.c.partition_key,
                    func.coalesce(dag_run.c.created_at, dag_run.c.run_after),
                    dag_run.c.partition_date,
                )
                .where(
                    dag_run.c.dag_id == self.dag_id,
                    dag_run.c.run_type == ASSET_TRIGGERED,
                    dag_run.c.partition_key.in_(chunk),
                )
                .order_by(dag_run.c.id)
            )
            for dag_run_id, key, created, anchor in self.session.execute(query):
                by_key[key].append((came_from.get(dag_run_id), created, anchor))
        return by_key

    def fired_complete(self, created: datetime | None, anchor: datetime | None) -> bool:
        """
        Whether a run Airflow created at *created* for a period starting at *anchor* fired complete.

        Every run of a Dag whose rollups wait for all their keys did; under a deadline, a run
        created before its period's start (``partition_date``) plus its length plus the grace
        (:meth:`bounds`) did.
        """
        if not self.may_fire_incomplete:
            return True
        bounds = self.bounds()
        if bounds is None or created is None or anchor is None:
            return False
        shortest, typical, shorter = bounds
        made, start = as_utc(created) or created, as_utc(anchor) or anchor
        return made < start + shortest or (
            shorter is not None and start not in shorter and made < start + typical
        )

    def bounds(self) -> tuple[timedelta, timedelta, list[datetime] | None] | None:
        """
        Return how long after its period's start a run can only have fired complete, and where not.

        ``(shortest, typical, shorter)``: the grain's :func:`~airflow_partitions.grains.
        shortest_period` and :func:`~airflow_partitions.grains.typical_period` plus the grace, and
        the starts (UTC) of this Dag's periods shorter than typical (:func:`~airflow_partitions.
        grains.shorter_periods` between its runs' first and last ``partition_date``; ``None`` if
        too many to list: then only the shortest bound holds). ``None`` without a deadline.
        """
        if not self.answers.has_deadline:
            return None
        if self._bounds is None:
            from sqlalchemy import func, select

            from airflow_partitions.tools.state.tables import dag_run

            low, high = kept(
                ("dates", self.dag_id),
                self.fingerprint,
                lambda: tuple(
                    self.session.execute(
                        select(func.min(dag_run.c.partition_date), func.max(dag_run.c.partition_date)).where(
                            dag_run.c.dag_id == self.dag_id
                        )
                    ).one()
                ),
                self.session,
            )
            self._bounds = self.answers.bounds(as_utc(low), as_utc(high))
        return self._bounds

    # -- lateness ------------------------------------------------------------------------------

    def late_at(self, key: str) -> datetime | None:
        """
        Return when partition *key* is late without a successful run (UTC): the latest of its mappers'.

        ``None`` if none of the Dag's mappers has an ``expected_within`` (:func:`~airflow_partitions.
        lateness.late_at`), or none reads *key* (a key no mapper writes is never late).
        """
        return self.answers.late_at(key)

    def late_since(self, key: str, state: str) -> datetime | None:
        """Return since when partition *key* in *state* is late (:func:`.model.late_since`), else ``None``."""
        return late_since(state, self.late_at(key), self.now)
