"""
A backfill as one named object: its runs started a few at a time, in order, paused, resumed or cancelled.

``backfill --yes`` hands its plan's runs (:class:`~airflow_partitions.tools.write.backfill.Step`:
re-run a Dag's run, or create one) to a backfill named ``backfill-<id>``, kept in Airflow's
audit log (the ``log`` table, which every process reads and no restart loses): one row when it is
created (event ``partition-tools backfill``: its Dag, its owner, its runs in order, how many may
be queued or running at once), one per batch of runs started (``… started``), one per
``--pause``, ``--resume`` and ``--cancel`` (under the caller's name) and one when it is done.
Its state is read back from those rows and from the runs' own states in ``dag_run``; the rows
of ``--cancel`` and done keep the states its runs ended in (a later re-run of one of its runs,
by another backfill, does not rewrite its history) and which runs the cancel failed.

:func:`advance` starts its next runs while fewer than ``max_active`` of those it started are
queued or running: ``backfill --yes`` calls it once (the first runs start at once), the
api-server's watch on every look (:mod:`~airflow_partitions.tools.watch`), ``--resume`` once. A
run is re-run as ``airflow dags clear`` does (Airflow's ``SerializedDAG.clear``: its task
instances cleared, the run queued; it keeps its id and the asset events that triggered it), or
created through Airflow's ``trigger_dag`` (run id ``backfill-<id>__<n>``, triggered by
``backfill``). Each run carries the backfill's name in its note. Each step is started in a nested
transaction: one that fails (its Dag or run is gone) is recorded as not started, with why.

Airflow's own ``Backfill`` (``airflow backfill create``, its UI's pause and cancel) is not used:
it creates every run at once, queued (its ``max_active_runs`` bounds those running, not those
queued), marks a backfill complete as soon as none of its runs is queued or running (so it
cannot hold runs released a few at a time), and takes only Dags whose timetable is periodic
(not asset-triggered ones). Two processes advancing one backfill take turns: each first updates
the backfill's row (its ``dttm`` to itself), which locks the row on PostgreSQL and MySQL and the
database on SQLite until it commits.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from airflow_partitions.tools.errors import NotFound, UnknownDag
from airflow_partitions.tools.state.plain import jsonable
from airflow_partitions.tools.state.sql import chunks, state_name
from airflow_partitions.tools.write import audit

#: The audit-log events of a backfill: created, a batch of runs started, paused, resumed,
#: cancelled, done (all its runs started and finished).
CREATED = "partition-tools backfill"
STARTED = "partition-tools backfill started"
PAUSED = "partition-tools backfill pause"
RESUMED = "partition-tools backfill resume"
CANCELLED = "partition-tools backfill cancel"
DONE = "partition-tools backfill done"
EVENTS = (CREATED, STARTED, PAUSED, RESUMED, CANCELLED, DONE)
#: What ``--pause``, ``--resume`` and ``--cancel`` write, by action.
CONTROLS = {"pause": PAUSED, "resume": RESUMED, "cancel": CANCELLED}
#: The name of backfill *n* (its creating audit-log row's id).
PREFIX = "backfill-"
#: The states of a run a backfill waits for before it starts another.
ACTIVE = ("queued", "running")


@dataclass(frozen=True)
class BackfillRun:
    """
    One run of a backfill: ``BackfillRun("re-run", "it_days", "2026-03-03", "asset_triggered__…")``.

    ``run_id`` and ``state`` are ``None`` until it is started; ``state`` is ``"not started"`` with
    ``why`` for a run that could not be (its Dag or run gone, Airflow refused it).
    """

    action: str
    dag_id: str
    partition_key: str
    run_id: str | None = None
    state: str | None = None
    why: str = ""


@dataclass(frozen=True)
class Backfill:
    """
    A tracked backfill (see the module): its name, Dag, owner, pace, order, state and runs.

    ``state`` is ``"running"`` (its runs start as others finish), ``"paused"``, ``"cancelled"`` or
    ``"done"``; ``counts`` its runs by state (``"waiting"``: not started yet). A run's state is the
    one it ended in when the backfill was done or cancelled (kept in that audit-log row: a later
    re-run of the same run does not rewrite it), else its current one in ``dag_run`` (a run still
    queued or running when cancelled: it goes on). ``cancel_failed``: the ids of the runs its
    cancel failed, those still queued when it wrote. Times UTC.
    """

    name: str
    dag_id: str
    owner: str | None
    created_at: datetime | None
    selection: str
    max_active: int
    order: str
    state: str
    runs: tuple[BackfillRun, ...]
    counts: dict[str, int]
    cancel_failed: tuple[str, ...] = ()

    @property
    def active(self) -> int:
        """How many of its runs are queued or running now."""
        return sum(self.counts.get(state, 0) for state in ACTIVE)

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601)."""
        return jsonable(self)


@dataclass(frozen=True)
class Backfills:
    """The tracked backfills asked for (``backfill --list``), newest first; after an action, that one."""

    backfills: tuple[Backfill, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types."""
        return jsonable(self)


def create(
    dag_id: str, selection: str, steps: list[Any], user: str | None, max_active: int, order: str, session: Any
) -> Backfill:
    """
    Record a backfill of *dag_id* running *steps* (re-runs and runs, in order), start its first runs.

    At most *max_active* of its runs are queued or running at once; *user* owns it (the audit log).
    Commits. Returns it as :func:`advance` left it.
    """
    what = {
        "selection": selection,
        "max_active": max_active,
        "order": order,
        "runs": [[s.action, s.dag_id, s.partition_key, s.run_id, s.why] for s in steps],
    }
    row = audit(session, CREATED, dag_id, user, what)
    session.flush()
    session.commit()
    return advance(session, row.id)


def number(name: str) -> int:
    """
    Return the id of the backfill *name* (``backfill-12`` → 12).

    :raises NotFound: naming *name*, if it is not a backfill's name.
    """
    found = name.removeprefix(PREFIX)
    if name == found or not found.isdigit():
        raise NotFound(f"{name!r} is not the name of a backfill (they are named like 'backfill-12').")
    return int(found)


def backfills(session: Any, dag_id: str | None = None, name: str | None = None) -> Backfills:
    """
    Return the backfills of *dag_id* (``None``: of every Dag), or the one named *name*, newest first.

    :raises UnknownDag: for a *dag_id* the deployment has no Dag of (:func:`~airflow_partitions.
        tools.state.serialized.known_dag`).
    :raises NotFound: for a *name* no backfill has.
    """
    if dag_id is not None:
        from airflow_partitions.tools.state.serialized import known_dag

        known_dag(dag_id, session)
    ids = None if name is None else [number(name)]
    found = _read(session, dag_id, ids)
    if name is not None and not found:
        raise NotFound(f"no backfill {name!r} in this deployment's audit log.")
    return Backfills(tuple(sorted(found, key=lambda b: number(b.name), reverse=True)))


def control(session: Any, name: str, action: str, user: str | None) -> Backfill:
    """
    Pause, resume or cancel the backfill *name* under *user*'s name; return it as it is after.

    Pausing stops it starting runs (those started go on); resuming starts its next ones at once;
    cancelling stops it for good and fails its runs still queued when it writes (an update of
    those whose state is ``queued``, as Airflow's own backfill cancel does; those running go on),
    and records which it failed and the states its finished runs ended in (``cancel_failed``).
    Commits.

    :raises NotFound: for an unknown *name*.
    :raises ValueError: for an action that is not one of :data:`CONTROLS`, or that the backfill's
        state does not take (``cancel`` of one done: ``backfill-12 is done: nothing to cancel``).
    """
    if action not in CONTROLS:
        raise ValueError(f"{action!r} is not an action on a backfill; actions: {', '.join(CONTROLS)}.")
    backfill = backfills(session, name=name).backfills[0]
    allowed = {"pause": ("running",), "resume": ("paused",), "cancel": ("running", "paused")}[action]
    if backfill.state not in allowed:
        raise ValueError(f"{name} is {backfill.state}: nothing to {action}.")
    _lock(session, number(name))
    what: dict[str, Any] = {"backfill": number(name)}
    if action == "cancel":
        failed = _fail_queued(session, backfill)
        what |= {"failed": failed, "ended": _ended(backfill, failed)}
    audit(session, CONTROLS[action], backfill.dag_id, user, what)
    session.commit()
    return (
        advance(session, number(name)) if action == "resume" else backfills(session, name=name).backfills[0]
    )


def advance(session: Any, backfill_id: int | None = None) -> Any:
    """
    Start the next runs of each running backfill (or of *backfill_id*) while fewer than its pace are active.

    Returns the backfill *backfill_id* as it is after (``None`` without one). Commits each.
    """
    ids = (
        [backfill_id]
        if backfill_id is not None
        else [b.name for b in _read(session, None, None, running=True)]
    )
    for each in ids:
        number_ = each if isinstance(each, int) else int(each.removeprefix(PREFIX))
        _lock(session, number_)
        found = _read(session, None, [number_])
        if found and found[0].state == "running":
            _start_next(session, number_, found[0])
        session.commit()
    return None if backfill_id is None else _read(session, None, [backfill_id])[0]


def _start_next(session: Any, backfill_id: int, backfill: Backfill) -> None:
    """Start *backfill*'s next runs, as many as its pace leaves room for; record them, or that it is done."""
    free = backfill.max_active - backfill.active
    waiting = [i for i, run in enumerate(backfill.runs) if run.state is None]
    if not waiting and not backfill.active:
        what = {"backfill": backfill_id, "ended": _ended(backfill, [])}
        audit(session, DONE, backfill.dag_id, backfill.owner, what)
        return
    started = [[i, *_started(session, backfill, backfill.runs[i], i)] for i in waiting[: max(0, free)]]
    if started:
        audit(session, STARTED, backfill.dag_id, backfill.owner, {"backfill": backfill_id, "runs": started})


def _started(session: Any, backfill: Backfill, run: BackfillRun, index: int) -> tuple[str | None, str]:
    """Start one run of *backfill*: ``(its run id, "")``, or ``(None, why it could not)``."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    note = f"airflow-partitions {backfill.name}: {run.action}" + (f" ({run.why})" if run.why else "")
    try:
        with session.begin_nested():
            if run.action == "re-run":
                found = session.scalar(
                    select(DagRun).where(DagRun.dag_id == run.dag_id, DagRun.run_id == run.run_id)
                )
                if found is None:
                    return None, f"its run {run.run_id!r} is no longer in the metadata database"
                if state_name(found.state) not in ACTIVE:
                    _clear(session, run.dag_id, found.run_id)
                found.note = note
                return found.run_id, ""
            return _created(session, backfill, run, index, note), ""
    except Exception as err:  # Airflow's refusals are of many types: the run is recorded as not started
        return None, f"{type(err).__name__}: {err}"


def _clear(session: Any, dag_id: str, run_id: str) -> None:
    """Clear the Dag run *run_id* as ``airflow dags clear`` does: its tasks cleared, the run queued."""
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.state import DagRunState

    dag = SerializedDagModel.get_dag(dag_id, session=session)
    if dag is None:
        raise UnknownDag(f"no Dag {dag_id!r} in this deployment's metadata database (deleted?).")
    dag.clear(run_id=run_id, dag_run_state=DagRunState.QUEUED, session=session)


def _created(session: Any, backfill: Backfill, run: BackfillRun, index: int, note: str) -> str:
    """Create the run of *run*'s partition through Airflow's ``trigger_dag``; return its id."""
    from airflow.api.common.trigger_dag import trigger_dag
    from airflow.utils.types import DagRunTriggeredByType

    created = trigger_dag(
        run.dag_id,
        triggered_by=DagRunTriggeredByType.BACKFILL,
        triggering_user_name=backfill.owner,
        run_id=f"{backfill.name}__{index + 1}",
        partition_key=run.partition_key,
        note=note,
        session=session,
    )
    if created is None:
        raise UnknownDag(f"no Dag {run.dag_id!r} in this deployment's metadata database (deleted?).")
    return str(created.run_id)


def _lock(session: Any, backfill_id: int) -> None:
    """Take the backfill's row (an update of it to itself): another process advancing it waits."""
    from sqlalchemy import update

    from airflow_partitions.tools.state.tables import log

    session.execute(update(log).where(log.c.id == backfill_id).values(dttm=log.c.dttm))


def _fail_queued(session: Any, backfill: Backfill) -> list[int]:
    """
    Fail the runs *backfill* started that are still queued when it writes; return their indexes.

    Each is an update of the run whose state is ``queued`` (Airflow's backfill cancel does the
    same): one the scheduler started since it was read is left to run, and not counted. On
    PostgreSQL and MySQL the scheduler locks the runs it starts, so the update waits and then
    finds it running; on SQLite a scheduler that had chosen the run the moment before may still
    write it running over the failure (its current state is what ``--list`` shows).
    """
    from sqlalchemy import update

    from airflow_partitions.tools.state.tables import dag_run

    failed = []
    for index, run in enumerate(backfill.runs):
        if run.state == "queued" and run.run_id is not None:
            changed = session.execute(
                update(dag_run)
                .where(
                    dag_run.c.dag_id == run.dag_id,
                    dag_run.c.run_id == run.run_id,
                    dag_run.c.state == "queued",
                )
                .values(state="failed")
            )
            if changed.rowcount:
                failed.append(index)
    return failed


def _ended(backfill: Backfill, failed: list[int]) -> list[list[Any]]:
    """
    Return ``[[index, state], …]``: the runs of *backfill* that ended, in the state they ended in.

    Those started and neither queued nor running, nor among *failed* (the indexes of those a
    cancel just failed: the scheduler may still start one, so its state is read again).
    """
    return [
        [index, run.state]
        for index, run in enumerate(backfill.runs)
        if run.run_id is not None and run.state not in (*ACTIVE, None) and index not in failed
    ]


def _read(
    session: Any, dag_id: str | None, ids: list[int] | None, *, running: bool = False
) -> list[Backfill]:
    """Return the backfills of *dag_id* (or *ids*), from their audit-log rows and their runs' states."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import log

    query = select(log.c.id, log.c.dttm, log.c.event, log.c.owner, log.c.dag_id, log.c.extra).where(
        log.c.event.in_(EVENTS[1:])
    )
    if dag_id is not None:
        query = query.where(log.c.dag_id == dag_id)
    events: dict[int, list[tuple[str, Any]]] = {}
    for _, _, event, _, _, extra in session.execute(query.order_by(log.c.id)):
        what = json.loads(extra or "{}")
        events.setdefault(what.get("backfill"), []).append((event, what))
    finished = {i for i, found in events.items() if any(e in (CANCELLED, DONE) for e, _ in found)}
    created = select(log.c.id, log.c.dttm, log.c.event, log.c.owner, log.c.dag_id, log.c.extra).where(
        log.c.event == CREATED
    )
    if ids is not None:
        created = created.where(log.c.id.in_(ids))
    if dag_id is not None:
        created = created.where(log.c.dag_id == dag_id)
    found = []
    for row_id, when, _, owner, dag, extra in session.execute(created.order_by(log.c.id)):
        if running and row_id in finished:
            continue
        found.append(_rebuilt(row_id, when, owner, dag, json.loads(extra or "{}"), events.get(row_id, [])))
    return _with_states(session, found)


def _rebuilt(
    row_id: int,
    when: datetime | None,
    owner: str | None,
    dag_id: str,
    what: dict[str, Any],
    events: list[Any],
) -> Backfill:
    """Return the backfill of its creating row and its other rows' *events*, its runs' states not read yet."""
    runs = [
        BackfillRun(action, dag, key, run_id, None, why) for action, dag, key, run_id, why in what["runs"]
    ]
    state = "running"
    cancel_failed: tuple[str, ...] = ()
    for event, found in events:
        if event == STARTED:
            for index, run_id, why in found["runs"]:
                runs[index] = replace(
                    runs[index],
                    run_id=run_id,
                    state="started" if run_id else "not started",
                    why=why or runs[index].why,
                )
        for index, ended in found.get("ended", []):  # done or cancelled: the states its runs ended in
            runs[index] = replace(runs[index], state=ended)
        if event == CANCELLED:
            cancel_failed = tuple(str(runs[index].run_id) for index in found.get("failed", []))
        state = {PAUSED: "paused", RESUMED: "running", CANCELLED: "cancelled", DONE: "done"}.get(event, state)
    return Backfill(
        name=f"{PREFIX}{row_id}",
        dag_id=dag_id,
        owner=owner,
        created_at=when,
        selection=what.get("selection", ""),
        max_active=int(what["max_active"]),
        order=what.get("order", "oldest"),
        state=state,
        runs=tuple(runs),
        counts={},
        cancel_failed=cancel_failed,
    )


def _with_states(session: Any, found: list[Backfill]) -> list[Backfill]:
    """Return *found* with the state of each run they started read from ``dag_run``, and counts."""
    from sqlalchemy import select

    from airflow_partitions.tools.state.tables import dag_run

    wanted: dict[str, set[str]] = {}
    for backfill in found:
        for run in backfill.runs:
            if run.state == "started" and run.run_id is not None:
                wanted.setdefault(run.dag_id, set()).add(run.run_id)
    states: dict[tuple[str, str], str] = {}
    for dag, run_ids in wanted.items():
        for chunk in chunks(sorted(run_ids)):
            query = select(dag_run.c.run_id, dag_run.c.state).where(
                dag_run.c.dag_id == dag, dag_run.c.run_id.in_(chunk)
            )
            states.update(((dag, run_id), state_name(state)) for run_id, state in session.execute(query))
    told = []
    for backfill in found:
        runs = tuple(
            replace(run, state=states.get((run.dag_id, run.run_id or ""), "gone"))
            if run.state == "started"
            else run
            for run in backfill.runs
        )
        counts = Counter(run.state or "waiting" for run in runs)
        told.append(replace(backfill, runs=runs, counts=dict(counts)))
    return told
