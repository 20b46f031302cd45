"""
What a consumer Dag's mappers answer, asked of the answers kept across processes first.

A pending run's progress from its keys, what a run ran with, when a key is late, when a period
closes, whether a pending run holds only keys that never count, the bounds that prove a run fired
complete. Each is looked up in the store of the metadata database
(:class:`~airflow_partitions.tools.state.kept.store.Store`); only an answer not found there
deserializes the Dag's mappers, which imports Airflow (2 to 3 s of a new process).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from airflow_partitions.grains import Grain
from airflow_partitions.members import broken_since
from airflow_partitions.tools.state.database import secrets_backend
from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept.store import digest
from airflow_partitions.tools.state.model import LISTED, AssetProgress, MembersProblem, RanWith
from airflow_partitions.tools.state.plain import jsonable, rebuilt_as
from airflow_partitions.tools.state.progress import pending_times, progress_of, ran_with
from airflow_partitions.tools.state.serialized import consumer_timetable, dag_version, timetable_grain

#: What a pending run's keys give it (:meth:`Answers.pending`): its progress per asset, and
#: :func:`~airflow_partitions.tools.state.progress.pending_times`.
PendingAnswer = tuple[tuple[AssetProgress, ...], datetime | None, datetime | None, bool]


def received_digest(received: Mapping[str, AbstractSet[str]]) -> str:
    """Return a digest of the keys received per asset (an asset with none apart from an absent one)."""
    return digest(
        [(name,) for name in received] + [(name, key) for name, keys in received.items() for key in keys]
    )


def variables_digest(names: list[str], session: Any) -> str | None:
    """
    Return a digest of the stored values of the Airflow Variables *names*, as Airflow would find them.

    Each from the environment variable ``AIRFLOW_VAR_<NAME>`` if set, else from the ``variable``
    table (its stored text, encrypted or not: an unchanged text, the same digest), in one query.
    ``None`` when a secrets backend of its own is configured (``[secrets] backend``): its values
    are read only through Airflow. What the answers of rollups whose members come from a Variable
    are keyed by (:class:`Answers`).
    """
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import variable

    if secrets_backend():
        return None
    parts: list[tuple[str, str, str | None]] = []
    stored = [n for n in names if f"AIRFLOW_VAR_{n.upper()}" not in os.environ]
    parts += [("env", n, os.environ[f"AIRFLOW_VAR_{n.upper()}"]) for n in names if n not in stored]
    found = dict(
        session.execute(select(variable.c.key, variable.c.val).where(variable.c.key.in_(stored))).all()
        if stored
        else []
    )
    parts += [("db", n, found.get(n)) for n in stored]
    return digest([repr(part) for part in parts])


def members_fix(dag_id: str, variable: str, since: datetime) -> str:
    """Return how to fix a broken member Variable, and what becomes of the keys refused meanwhile."""
    return (
        f'set it to a JSON list of members (airflow variables set {variable} \'[{{"value": "store-001", '
        f'"group": "north"}}, …]\'); once it is fixed, the api-server\'s watch queues again the keys '
        f"refused meanwhile (or run: airflow-partitions requeue {dag_id} --start "
        f"{since.isoformat(timespec='seconds')} --yes)"
    )


class Answers:
    """
    What one Dag's mappers answer, for its latest serialized version (see the module's docstring).

    The facts read on creation (:attr:`assets`, :attr:`expects`, …) are answers too. Raises
    :class:`~airflow_partitions.tools.state.serialized.NotAConsumer` as :func:`consumer_timetable`.
    """

    def __init__(
        self, dag_id: str, session: Any, found: tuple[Any, list[tuple[str, str]]] | None = None
    ) -> None:
        self.dag_id = dag_id
        self.session = session
        #: The Dag's timetable and assets when the caller deserialized them already.
        self._found = found
        self.store = cache.store_for(session)
        version = None if self.store is None else dag_version(dag_id, session, found)
        #: The key of this Dag's answers in :attr:`store`; ``None``: each is worked out here.
        self.key = None if self.store is None or version is None else self.store.dag_key(dag_id, version)
        facts = self._answer(["facts"], self._facts, dict)
        #: The Airflow Variables its rollups read members from at run time (sorted names).
        self.variables: tuple[str, ...] = tuple(facts["variables"])
        #: What its answers depend on besides the Dag and its rows: the Variables' stored values
        #: (:func:`~airflow_partitions.tools.state.database.variables_digest`); ``""`` without
        #: Variables, a value equal to no other when they cannot be read without Airflow.
        self.members: Any = ""
        if self.variables:
            self.members = variables_digest(list(self.variables), session) or object()
            if self.key is not None:
                self.key = None if not isinstance(self.members, str) else f"{self.key} {self.members}"
        self.assets: list[tuple[str, str]] = [(name, uri) for name, uri in facts["assets"]]
        #: The assets whose mapper is a rollup (the others need one key).
        self.rollup_assets = frozenset(facts["rollups"])
        #: Whether a mapper of this Dag says when its partitions are expected (``expected_within``).
        self.expects: bool = facts["expects"]
        #: Whether a run of this Dag can lack keys it awaits (a deadline, a minimum count), or its
        #: members are read at run time (what a run ran with is then read from its key log, not
        #: proven by its members); under WaitForAll with members that do not change, a run exists
        #: only once every key counted.
        self.may_fire_incomplete: bool = facts["may_fire_incomplete"] or bool(self.variables)
        #: Whether a run's creation time can prove it fired complete (:attr:`deadline`).
        self.has_deadline: bool = facts["deadline"]
        self.rerun_policies = tuple((name, policy) for name, policy in facts["rerun_policies"])
        #: What identifies the Dag's rollups within this process (memos' keys), with their members.
        self.identity: Any = facts["identity"] if not self.variables else (facts["identity"], self.members)
        #: The grain of the periods its keys name (:func:`~airflow_partitions.tools.state.serialized.
        #: consumer_grain`), ``None`` if its mappers name no one grain.
        self.grain = None if facts.get("grain") is None else Grain.deserialize(facts["grain"])

    def _facts(self) -> dict[str, Any]:
        """Work out what :meth:`__init__` keeps of the Dag's mappers (plain JSON)."""
        from airflow_partitions.composite import runtime_variables

        mappers = json.dumps([r.mapper.serialize() for r in self.rollups.values() if r], sort_keys=True)
        return {
            "assets": [list(a) for a in self.assets_found],
            "rollups": [name for name, rollup in self.rollups.items() if rollup is not None],
            "expects": any(getattr(m, "expected_within", None) is not None for m in self.mappers.values()),
            "may_fire_incomplete": any(
                r is not None and r.may_fire_incomplete for r in self.rollups.values()
            ),
            "deadline": self.deadline is not None,
            "rerun_policies": [[n, str(r.rerun_policy)] for n, r in self.rollups.items() if r is not None],
            "identity": digest([self.dag_id, mappers]),
            "grain": None
            if (grain := timetable_grain(self.timetable, self.assets_found)) is None
            else grain.serialize(),
            "variables": sorted({v.name for m in self.mappers.values() for v in runtime_variables(m)}),
        }

    def members_problems(self) -> tuple[MembersProblem, ...]:
        """
        Return the Variables its rollups read members from that cannot give them now (``()``: none).

        Kept under the Variables' values (:attr:`members`). ``since``: when the Dag first refused a
        key for it (:func:`~airflow_partitions.tools.state.audit_log.first_refused_for`, read from
        the audit log: the same in every face and mode); before any key was refused, when it was
        first worked out on this machine (or this process's first failed read, if earlier).
        """
        if not self.variables:
            return ()
        from airflow_partitions.tools.state.audit_log import first_refused_for

        found = self._answer(["members problems"], self._members_problems, list)
        problems = []
        for name, problem, since in found:
            read = broken_since(name)
            first = first_refused_for(self.session, self.dag_id, name) or min(
                [t for t in (read, datetime.fromisoformat(since)) if t is not None]
            )
            problems.append(MembersProblem(name, problem, first, members_fix(self.dag_id, name, first)))
        return tuple(problems)

    def _members_problems(self) -> list[list[str]]:
        """Work out :meth:`members_problems`: ``[[variable, problem, since], …]`` (plain JSON)."""
        from airflow_partitions.composite import runtime_variables
        from airflow_partitions.members import Unavailable

        now = datetime.now(UTC).isoformat()
        found: dict[str, str] = {}
        for mapper in self.mappers.values():
            read = getattr(mapper, "members_read", lambda: None)()
            for variable in runtime_variables(mapper):
                problem = variable.problem()
                if problem is not None:
                    found.setdefault(variable.name, problem[0])
                elif isinstance(read, Unavailable):  # its members, not its JSON (a group missing)
                    found.setdefault(variable.name, read.reason)
        return [[name, problem, now] for name, problem in sorted(found.items())]

    def read_ahead(self, keys: list[str]) -> None:
        """Read at once the stored answers a page of partitions *keys* asks: late, closing, complete."""
        if self.store is not None and self.key is not None:
            asked = [[question, key] for key in keys for question in ("late", "closes", "complete")]
            self.store.read_ahead(self.key, asked)

    def _answer(self, question: list[Any], work_out: Any, kind: Any) -> Any:
        """Return the answer to *question* (plain values), of type *kind*: stored, else worked out."""
        if self.store is None or self.key is None:
            return work_out()
        return self.store.answer(self.key, question, work_out, jsonable, lambda d: rebuilt_as(kind, d))

    # -- the Dag's mappers, deserialized only when an answer is not in the store -------------------

    @cached_property
    def _timetable_and_assets(self) -> tuple[Any, list[tuple[str, str]]]:
        return self._found or consumer_timetable(self.dag_id, self.session)

    @property
    def timetable(self) -> Any:
        return self._timetable_and_assets[0]

    @property
    def assets_found(self) -> list[tuple[str, str]]:
        return self._timetable_and_assets[1]

    @cached_property
    def mappers(self) -> dict[str, Any]:
        """
        Each upstream asset's mapper, by asset name, as the scheduler runs it.

        Members read at run time are read now (:meth:`~airflow_partitions.VariableMembers.read_now`),
        as the digest that keys the answers was (:attr:`members`).
        """
        mappers = {
            name: self.timetable.get_partition_mapper(name=name, uri=uri) for name, uri in self.assets_found
        }
        from airflow_partitions.composite import runtime_variables

        for variable in {v.name: v for m in mappers.values() for v in runtime_variables(m)}.values():
            variable.read_now()
        return mappers

    @cached_property
    def rollups(self) -> dict[str, Any]:
        """Each upstream asset's :class:`RollupView` (``None``: its mapper is no rollup), by asset name."""
        from airflow_partitions.tools.rollup_view import RollupView

        return {name: RollupView.of(mapper) for name, mapper in self.mappers.items()}

    @cached_property
    def deadline(self) -> tuple[Any, timedelta] | None:
        """
        The grain of this Dag's periods and the least grace of its deadlines, or ``None``.

        Set when every rollup that may fire incomplete has a deadline over that grain
        (:attr:`RollupView.deadline`): then a run's creation time can prove it fired complete.
        Else ``None``: each run is read.
        """
        from airflow_partitions.composite import runtime_variables

        if any(runtime_variables(m) for m in self.mappers.values()):
            return None  # members that change: a run made in time may still lack today's members
        deadlines = [r.deadline for r in self.rollups.values() if r is not None and r.may_fire_incomplete]
        grains = {d[0] for d in deadlines if d is not None}
        if deadlines and None not in deadlines and len(grains) == 1:
            return grains.pop(), min(d[1] for d in deadlines if d is not None)
        return None

    # -- the answers -----------------------------------------------------------------------------

    def progress(self, key: str, received: Mapping[str, AbstractSet[str]]) -> tuple[AssetProgress, ...]:
        """Return what the *received* keys (by asset name) give partition *key*, per asset that sent some."""
        return tuple(
            progress_of(name, self.rollups.get(name), key, received.get(name, set()))
            for name, _ in self.assets
            if name in received
        )

    @cached_property
    def broken(self) -> bool:
        """Whether a Variable its rollups read members from cannot give them (:meth:`members_problems`)."""
        return bool(self.variables) and bool(self.members_problems())

    def pending(self, key: str, received: Mapping[str, AbstractSet[str]]) -> PendingAnswer:
        """
        Return what a pending run of *key* has from its *received* keys, and when its state turns.

        While its members cannot be known (:attr:`broken`), the keys received alone: none is
        counted nor missing, and its state turns on nothing (the scheduler holds it too).
        """
        if self.broken:
            received_only = tuple(
                AssetProgress(
                    name, tuple(sorted(received[name]))[:LISTED], received_total=len(received[name])
                )
                for name, _ in self.assets
                if name in received
            )
            return received_only, None, None, False

        def work_out() -> PendingAnswer:
            progress = self.progress(key, received)
            return (progress, *pending_times(key, progress, self.rollups))

        return self._answer(["pending", key, received_digest(received)], work_out, PendingAnswer)

    def ran_with(self, key: str, together: Mapping[str, AbstractSet[str]]) -> RanWith | None:
        """
        Return what runs of *key* that received *together* (by asset name) ran with.

        Under members read at run time (:attr:`variables`), by the keys the runs had, never
        recomputed from today's members (:func:`~airflow_partitions.tools.state.progress.ran_with`'s
        *members_then*). ``None`` (not known) while its members cannot be known (:attr:`broken`):
        a run is then told by its state alone, never called incomplete for want of members.
        """
        if self.broken:
            return None
        return self._answer(
            ["ran", key, received_digest(together)],
            lambda: ran_with(
                self.progress(key, together), self.rollups, self.assets, members_then=bool(self.variables)
            ),
            RanWith,
        )

    def late_at(self, key: str) -> datetime | None:
        """Return when *key* is late without a successful run: its mappers' latest (``None``: never)."""
        if not self.expects:
            return None
        return self._answer(["late", key], lambda: self._late_at(key), datetime | None)

    def _late_at(self, key: str) -> datetime | None:
        from airflow_partitions.lateness import late_at

        times = []
        for mapper in self.mappers.values():
            with contextlib.suppress(ValueError):
                times.append(late_at(mapper, key))
        return max((t for t in times if t is not None), default=None)

    def complete_with(self, key: str) -> RanWith | None:
        """Return what a run of *key* that fired complete ran with: every awaited key (``None``: unknown)."""
        return self._answer(["complete", key], lambda: self._complete_with(key), RanWith | None)

    def _complete_with(self, key: str) -> RanWith | None:
        awaited = 0
        for name, _ in self.assets:
            rollup = self.rollups.get(name)
            try:
                awaited += len(rollup.awaited(key)) if rollup is not None else 1
            except ValueError:
                return None
        return RanWith(awaited, awaited)

    def closes_at(self, key: str) -> datetime | None:
        """Return the end of partition *key*'s period (UTC), from a rollup's expected keys, else ``None``."""
        if not self.rollup_assets:
            return None
        return self._answer(["closes", key], lambda: self._closes_at(key), datetime | None)

    def _closes_at(self, key: str) -> datetime | None:
        for rollup in self.rollups.values():
            if rollup is not None:
                try:
                    return getattr(rollup.awaited(key), "closes_at", None)
                except ValueError:
                    return None
        return None

    def never_counting_only(self, logged: list[tuple[str, str, str, str]]) -> bool:
        """
        Whether a pending run's logged keys all never count: ``(asset name, uri, key, its target key)``.

        Each under the mapper the timetable gives that asset (:meth:`~airflow_partitions.tools.
        rollup_view.RollupView.never_counts`); any key counts for a mapper that is no rollup.
        """
        if self.broken:  # which keys count cannot be known now
            return False
        return bool(
            self._answer(["never counting", digest(logged)], lambda: self._never_counting_only(logged), bool)
        )

    def _never_counting_only(self, logged: list[tuple[str, str, str, str]]) -> bool:
        from airflow_partitions.tools.rollup_view import RollupView

        for name, uri, key, target in logged:
            rollup = RollupView.of(self.timetable.get_partition_mapper(name=name, uri=uri))
            if rollup is None or rollup.never_counts(key, target) is None:
                return False
        return True

    def bounds(
        self, low: datetime | None, high: datetime | None
    ) -> tuple[timedelta, timedelta, list[datetime] | None]:
        """
        Return how long after a period's start a run can only have fired complete, and where not.

        ``(shortest, typical, shorter)`` for runs whose ``partition_date`` lies from *low* to
        *high* (see :meth:`~airflow_partitions.tools.state.reader.Reader.bounds`). Only for a Dag
        with :attr:`has_deadline`.
        """
        shortest, typical, shorter = self._answer(
            ["bounds", jsonable(low), jsonable(high)], lambda: self._bounds(low, high), list
        )
        starts = None if shorter is None else [datetime.fromisoformat(start) for start in shorter]
        return timedelta(seconds=shortest), timedelta(seconds=typical), starts

    def _bounds(self, low: datetime | None, high: datetime | None) -> list[Any]:
        """Work out :meth:`bounds` from the grain (plain JSON: seconds, ISO 8601 starts or ``None``)."""
        from airflow_partitions.grains import shorter_periods, shortest_period, typical_period

        if self.deadline is None:
            raise ValueError(
                f"{self.dag_id!r} has no deadline over one grain: no bounds prove a run complete."
            )
        grain, grace = self.deadline
        shorter = shorter_periods(grain, low, high) if low and high else []
        return [
            (shortest_period(grain) + grace).total_seconds(),
            (typical_period(grain) + grace).total_seconds(),
            None if shorter is None else [start.isoformat() for start in shorter],
        ]
