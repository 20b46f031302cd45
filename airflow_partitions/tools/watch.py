"""
The api-server's watch: keys follow their members, and monitoring changes keep pending runs.

A thread of the api-server that hosts the Partitions view (started by the plugin when the
api-server reads its apps; ``AIRFLOW_PARTITIONS_WATCH=off`` turns it off). Every
:data:`WATCH_INTERVAL` seconds it looks at each partitioned consumer Dag, and:

- **a member list read at run time changed** (a :class:`~airflow_partitions.VariableMembers`
  Variable's value, read fresh): it re-routes the Dag's received keys to where they count now
  (:func:`~airflow_partitions.tools.write.reroute.reroute`) at once, and again after every
  process has read the new value (:data:`~airflow_partitions.members.VARIABLE_TTL` seconds, plus a
  margin) for the keys routed by the old one meanwhile;
- **such a Variable was broken and is fixed**: it queues again the keys the Dag refused while it
  was broken (:func:`~airflow_partitions.tools.write.requeue.requeue` over the time it was broken,
  from a minute before this process first read it broken), once every process reads the fix;
- **the Dag's rollup definition changed in ``expected_within`` only** (when partitions are late,
  not what they await): Airflow's scheduler clears the Dag's pending runs, as for any change of a
  mapper's stored form; once it has, the watch queues their keys again (``requeue`` from when the
  previous definition was first stored).

Each action that changes something writes one audit-log row (``partition-tools reroute`` or
``partition-tools requeue``, owner ``airflow-partitions``) and one log line. A failure is logged
once and tried again at the next look.

On every look it also starts the next runs of each running backfill (``backfill --yes``: at most
its ``--max-active`` queued or running at once, :mod:`~airflow_partitions.tools.write.paced`).
"""

from __future__ import annotations

import heapq
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow_partitions.members import VARIABLE_TTL

log = logging.getLogger(__name__)

#: Seconds between two looks at the Dags and their Variables (``AIRFLOW_PARTITIONS_WATCH_INTERVAL``).
WATCH_INTERVAL = float(os.environ.get("AIRFLOW_PARTITIONS_WATCH_INTERVAL") or 15.0)
#: Seconds after a change when the keys routed meanwhile by processes still holding the old
#: value are re-routed again: each process reads a Variable at most once a minute.
SETTLED = VARIABLE_TTL + WATCH_INTERVAL
#: The environment variable that turns the watch off (``off``).
WATCH_ENV = "AIRFLOW_PARTITIONS_WATCH"


@dataclass
class _Seen:
    """What the watch last saw of one Dag."""

    version: Any = None
    fingerprint: dict[str, Any] | None = None
    members: tuple[str, ...] | None = None
    #: When this process first read the Dag's members broken (UTC), while they are.
    broken_since: datetime | None = None


@dataclass(order=True)
class _Due:
    """An action due at *at* (the watch's clock); *run* returns seconds to try again after, or ``None``."""

    at: float
    what: str = field(compare=False)
    dag_id: str = field(compare=False)
    run: Callable[[], float | None] = field(compare=False)


class Watch:
    """
    One api-server's watch (see the module's docstring); :meth:`look` is one look, for tests and the thread.

    :param clock: Seconds, monotonic (``time.monotonic``).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.seen: dict[str, _Seen] = {}
        self.due: list[_Due] = []
        self._failed: set[str] = set()

    def look(self) -> None:
        """Look at every partitioned consumer Dag once, then do what is due."""
        from airflow.utils.session import create_session

        from airflow_partitions.tools.state.consumers import consumer_dags
        from airflow_partitions.tools.state.serialized import consumer_timetables

        with create_session(scoped=False) as session:
            dag_ids = [d.dag_id for d in consumer_dags(session)]
            for dag_id, (timetable, assets) in consumer_timetables(dag_ids, session).items():
                try:
                    self._look_at(dag_id, timetable, assets, session)
                except Exception:  # one Dag's failure does not stop the others
                    self._failure(f"look at {dag_id}")
                else:
                    self._failed.discard(f"look at {dag_id}")
        self._attempt("start the next runs of the backfills", _advance_backfills)
        self.run_due()

    def run_due(self) -> None:
        """Do every action whose time has come."""
        now = self.clock()
        while self.due and self.due[0].at <= now:
            due = heapq.heappop(self.due)
            again = self._attempt(f"{due.what} of {due.dag_id}", due.run)
            if again is not None:
                self._schedule(again, due.what, due.dag_id, due.run)

    def _attempt(self, what: str, action: Callable[[], Any]) -> Any:
        """
        Return what *action* returns; on a failure, log it once (until it succeeds) and try it again later.

        A failed action is tried again after :data:`WATCH_INTERVAL` seconds.
        """
        try:
            result = action()
        except Exception:
            self._failure(what)
            return WATCH_INTERVAL
        self._failed.discard(what)
        return result

    def _failure(self, what: str) -> None:
        """Log the exception being handled, unless *what* failed the last time too (logged then)."""
        if what not in self._failed:
            log.exception("airflow-partitions' watch could not %s; it tries again.", what)
        self._failed.add(what)

    def _look_at(self, dag_id: str, timetable: Any, assets: list[tuple[str, str]], session: Any) -> None:
        from airflow.timetables.base import compute_rollup_fingerprint

        from airflow_partitions.lateness import expectation_changed_only

        seen = self.seen.setdefault(dag_id, _Seen())
        fingerprint = compute_rollup_fingerprint(timetable)
        if seen.fingerprint is not None and expectation_changed_only(seen.fingerprint, fingerprint):
            since = _first_stored(dag_id, seen.fingerprint, session)
            self._schedule(
                0, "requeue after expected_within changed", dag_id, lambda: _restore(dag_id, since)
            )
        seen.fingerprint = fingerprint
        mappers = [timetable.get_partition_mapper(name=name, uri=uri) for name, uri in assets]
        members, broken = _members_now(mappers)
        if members and members != seen.members:
            self._schedule(0, "re-route", dag_id, lambda: _reroute(dag_id))
            self._schedule(SETTLED, "re-route", dag_id, lambda: _reroute(dag_id))
        if broken and seen.broken_since is None:
            seen.broken_since = datetime.now(UTC)
        elif not broken and seen.broken_since is not None:
            since = seen.broken_since - timedelta(seconds=VARIABLE_TTL)
            self._schedule(
                SETTLED, "requeue after its members were fixed", dag_id, lambda: _restore(dag_id, since)
            )
            seen.broken_since = None
        seen.members = members

    def _schedule(self, after: float, what: str, dag_id: str, run: Callable[[], Any]) -> None:
        heapq.heappush(self.due, _Due(self.clock() + after, what, dag_id, run))


def _advance_backfills() -> None:
    """Start the next runs of the running backfills (:func:`~.write.paced.advance`)."""
    from airflow.utils.session import create_session

    from airflow_partitions.tools.write.paced import advance

    with create_session(scoped=False) as session:
        advance(session)


def _members_now(mappers: list[Any]) -> tuple[tuple[str, ...], bool]:
    """
    Return the member lists *mappers* read at run time, read fresh, and whether one cannot be known.

    ``(("Variable 'retail_stores': [...]",), False)``: each Variable's text as read (or its error);
    empty for mappers without such lists.
    """
    from airflow_partitions.composite import runtime_variables
    from airflow_partitions.members import Unavailable

    variables = [v for mapper in mappers for v in runtime_variables(mapper)]
    for variable in variables:
        variable.read_now()
    texts = tuple(f"{v.name}: {v.read_digest()}" for v in variables)
    broken = any(isinstance(getattr(m, "members_read", lambda: None)(), Unavailable) for m in mappers)
    return texts, broken


def _reroute(dag_id: str) -> None:
    """Re-route the Dag's keys to where their members count now (one log line if it changed anything)."""
    from airflow_partitions.tools.write.reroute import reroute

    done = reroute(dag_id)
    if done.changed:
        log.info(
            "airflow-partitions re-routed the keys of %r to where their members count now: %d moved, %d "
            "logged for the pending runs that await them, %d pending runs opened, %d emptied ones removed.",
            dag_id,
            len(done.moved),
            len(done.copied),
            len(done.opened),
            len(done.removed),
        )


def _restore(dag_id: str, since: datetime) -> float | None:
    """
    Queue again the Dag's events since *since* that feed none of its runs (``requeue``).

    While pending runs stamped with an older rollup definition remain (the scheduler clears them
    at its next loop, and only then are their keys free), it returns when to try again.
    """
    from airflow_partitions.tools.write.requeue import orphaned_events, requeue
    from airflow_partitions.tools.write.reroute import WATCH_USER

    now = datetime.now(UTC)
    if orphaned_events(dag_id, since, now).stale_pending:
        return WATCH_INTERVAL
    done = requeue(dag_id, since, now, user=WATCH_USER)
    if done.queueable:
        log.info(
            "airflow-partitions queued again %d asset events of %r since %s that fed none of its runs.",
            len(done.queueable),
            dag_id,
            since.isoformat(timespec="seconds"),
        )
    return None


def _first_stored(dag_id: str, fingerprint: dict[str, Any], session: Any) -> datetime:
    """
    Return when the Dag's rollup definition *fingerprint* was first stored (UTC).

    The creation of its earliest serialized version with that fingerprint, the versions read
    newest first. Airflow updates a version without Dag runs in place: when no version has it any
    more, the creation of the newest version (the one it was updated from).
    """
    from airflow.models.dag_version import DagVersion
    from airflow.timetables.base import compute_rollup_fingerprint
    from sqlalchemy import select

    since = newest = None
    versions = session.scalars(
        select(DagVersion).where(DagVersion.dag_id == dag_id).order_by(DagVersion.version_number.desc())
    )
    for version in versions:
        newest = newest or version.created_at
        serialized = version.serialized_dag
        if serialized is None:
            continue
        if compute_rollup_fingerprint(serialized.dag.timetable) == fingerprint:
            since = version.created_at
        elif since is not None:
            break
    return since or newest or datetime.now(UTC)


_STARTED = threading.Event()

#: The most seconds the watch waits for the api-server's app to be built before its first look.
STARTUP_WAIT = 120.0


def after_the_start() -> None:
    """
    Wait until the api-server built its app (``airflow.api_fastapi.main``), :data:`STARTUP_WAIT` s at most.

    The plugin is read while the api-server's main thread still imports its routes and every
    Airflow model: a query from this thread meanwhile configures SQLAlchemy's mappers, which
    imports models too, and the two threads wait on each other's import locks for ever (seen: an
    api-server that never answered).
    """
    waited = 0.0
    while getattr(sys.modules.get("airflow.api_fastapi.main"), "app", None) is None and waited < STARTUP_WAIT:
        time.sleep(1.0)
        waited += 1.0


def start() -> None:
    """Start the watch in a daemon thread of this process, once (unless ``AIRFLOW_PARTITIONS_WATCH=off``)."""
    if os.environ.get(WATCH_ENV, "").lower() == "off" or _STARTED.is_set():
        return
    _STARTED.set()

    def watch() -> None:
        after_the_start()
        looking = Watch()
        while True:
            looking._attempt("look at the partitioned Dags", looking.look)
            time.sleep(WATCH_INTERVAL)

    threading.Thread(target=watch, name="airflow-partitions-watch", daemon=True).start()
