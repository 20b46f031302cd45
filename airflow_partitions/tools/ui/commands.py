"""
The commands' routes of the Partitions view's API: ``airflow-partitions ... --api-url`` calls them.

Each route takes its command's request, built from the query parameters ``--api-url`` sends (a
write's from its JSON body: :func:`~airflow_partitions.tools.ui.requests.requested`), answers it
with a :class:`~airflow_partitions.tools.source.Database` on the api-server's own session, returns
the answer's ``to_dict()``: the JSON the command prints with ``--json`` in its direct mode.
Guarded as Airflow's own endpoints (the caller from the ``Authorization: Bearer`` header or
the UI's cookie; no token, 401; too little access, 403). A write from a browser's cookie must
come from the api-server's own origin, with a JSON body
(:func:`~airflow_partitions.tools.ui.requests.from_own_client`, on every route of the view):

- ``GET dags/{dag_id}/status``, ``GET dags/{dag_id}/explain``, the dry runs ``GET
  dags/{dag_id}/backfill``, ``GET dags/{dag_id}/requeue``, ``GET dags/{dag_id}/discard`` and
  ``GET dags/{dag_id}/clean``, and ``GET dags/{dag_id}/backfills`` (the tracked backfills; ``~``:
  of the Dags the caller may read): read access to the Dag and its runs (``status`` also to assets;
  the refused keys only with read access to its audit log; ``clean`` of every Dag counts only the
  Dags the caller may read; ``explain`` leaves out the members of a Variable the caller may not
  read: :mod:`~airflow_partitions.tools.ui.access`);
- ``POST dags/{dag_id}/backfill``: Airflow's rules for triggering and clearing a run, on the Dag
  and on each Dag upstream whose runs it starts (those it may not are left undone, said so);
  ``POST dags/{dag_id}/backfills`` (pause, resume, cancel): the same on the backfill's Dag;
- ``POST dags/{dag_id}/requeue``, ``POST dags/{dag_id}/discard`` and ``POST dags/{dag_id}/clean``:
  edit access to the Dag.

``clean`` without ``--dag`` is ``dags/~/clean``: Airflow's auth manager is then asked about the
Dags as a whole (no Dag id, as Airflow's own ``dags/~/dagRuns`` asks): the simple auth manager
answers by role, FAB by its permission on all Dags. That is the honest question for a command
that removes rows of every Dag, deleted ones too.

Writes are recorded under the caller's name (the audit log's ``owner``, a created run's
``triggering_user_name``). Errors: :func:`~airflow_partitions.tools.ui.requests.answered` (an
unknown Dag 404, exit 1; bad input 400, exit 2), with the direct mode's message.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import APIRouter, Depends, HTTPException

from airflow_partitions.tools.commands.backfill import BackfillRequest, BackfillsRequest
from airflow_partitions.tools.commands.clean import CleanRequest
from airflow_partitions.tools.commands.discard import DiscardRequest
from airflow_partitions.tools.commands.explain import ExplainRequest
from airflow_partitions.tools.commands.requeue import RequeueRequest
from airflow_partitions.tools.commands.status import StatusRequest
from airflow_partitions.tools.explanation import explain as explained
from airflow_partitions.tools.source import Database
from airflow_partitions.tools.ui.access import (
    EDIT,
    READ,
    READ_STATE,
    RUN,
    may_run,
    only_readable,
    readable_dags,
    redacted,
    without_unreadable_members,
)
from airflow_partitions.tools.ui.requests import answered, requested

router = APIRouter()


@router.get("/api/dags/{dag_id}/status", dependencies=READ_STATE)
def status(
    request: Annotated[StatusRequest, Depends(requested(StatusRequest))],
    user: GetUserDep,
    session: SessionDep,
) -> dict[str, Any]:
    """Return ``status DAG_ID --json``'s answer (without ``limit``: every partition)."""
    return redacted(answered(lambda: Database(session).status(request)).to_dict(), request.dag_id, user)


@router.get("/api/dags/{dag_id}/explain", dependencies=READ)
def explain(
    request: Annotated[ExplainRequest, Depends(requested(ExplainRequest))],
    user: GetUserDep,
    session: SessionDep,
) -> dict[str, Any]:
    """
    Return ``explain --dag DAG_ID [--downstream] KEY --json``'s answer, under the stored mapper.

    Without the members of a Variable the caller may not read (:func:`without_unreadable_members`).
    """
    mapper = answered(lambda: request.mapper(session))
    answer = answered(lambda: explained(mapper, request.key, downstream=request.downstream)).to_dict()
    return without_unreadable_members(answer, mapper, user)


@router.get("/api/dags/{dag_id}/backfill", dependencies=READ)
def backfill_plan(
    request: Annotated[BackfillRequest, Depends(requested(BackfillRequest))], session: SessionDep
) -> dict[str, Any]:
    """Return ``backfill DAG_ID --json``'s plan (a dry run: what each selected partition takes)."""
    return answered(lambda: Database(session).plan(request)).to_dict()


@router.post("/api/dags/{dag_id}/backfill", dependencies=RUN)
def backfill(
    request: Annotated[BackfillRequest, Depends(requested(BackfillRequest, body=True))],
    user: GetUserDep,
    session: SessionDep,
) -> dict[str, Any]:
    """
    Start the backfill (``backfill ... --yes``) under the caller's name; return the plan with it.

    The runs of a Dag upstream the caller may not trigger and clear (:func:`may_run`) are left to
    ``could_not``, saying so.
    """
    deployment = Database(session, user=user.get_name(), may_run=lambda dag_id: may_run(dag_id, user))
    return answered(lambda: deployment.carry_out(request)).to_dict()


@router.get("/api/dags/{dag_id}/backfills", dependencies=READ)
def backfills(
    request: Annotated[BackfillsRequest, Depends(requested(BackfillsRequest))],
    user: GetUserDep,
    session: SessionDep,
) -> dict[str, Any]:
    """Return ``backfill --list [DAG_ID] --json`` (``~``: of the Dags the caller may read)."""
    answer = answered(lambda: Database(session).backfills(request))
    readable = readable_dags(user) if request.dag_id is None else {request.dag_id}
    return replace(answer, backfills=tuple(b for b in answer.backfills if b.dag_id in readable)).to_dict()


@router.post("/api/dags/{dag_id}/backfills", dependencies=READ)
def backfill_control(
    request: Annotated[BackfillsRequest, Depends(requested(BackfillsRequest, body=True))],
    user: GetUserDep,
    session: SessionDep,
) -> dict[str, Any]:
    """
    Pause, resume or cancel a backfill (``backfill --pause NAME`` …) under the caller's name.

    Only a caller who may trigger and clear the runs of the backfill's Dag (:func:`may_run`;
    else 403), of the Dag in the path if one is named there (else 404 for another Dag's).
    """
    found = answered(lambda: Database(session).backfills(replace(request, action=None))).backfills
    if not found or (request.dag_id is not None and found[0].dag_id != request.dag_id):
        raise HTTPException(404, f"no backfill {request.name!r} of {request.dag_id!r}.")
    if not may_run(found[0].dag_id, user):
        raise HTTPException(403, f"you may not trigger and clear the runs of {found[0].dag_id!r}.")
    return answered(lambda: Database(session, user=user.get_name()).control(request)).to_dict()


@router.get("/api/dags/{dag_id}/requeue", dependencies=READ)
def requeue_dry_run(
    request: Annotated[RequeueRequest, Depends(requested(RequeueRequest))], session: SessionDep
) -> dict[str, Any]:
    """Return ``requeue DAG_ID --start --end --json``'s dry run."""
    return answered(lambda: Database(session).orphans(request)).to_dict()


@router.post("/api/dags/{dag_id}/requeue", dependencies=EDIT)
def requeue(
    request: Annotated[RequeueRequest, Depends(requested(RequeueRequest, body=True))],
    user: GetUserDep,
    session: SessionDep,
) -> dict[str, Any]:
    """Queue the events again (``requeue ... --yes``), audit-logged under the caller's name."""
    return answered(lambda: Database(session, user=user.get_name()).requeue(request)).to_dict()


@router.get("/api/dags/{dag_id}/discard", dependencies=READ)
def discard_dry_run(
    request: Annotated[DiscardRequest, Depends(requested(DiscardRequest))], session: SessionDep
) -> dict[str, Any]:
    """Return ``discard DAG_ID --json``'s dry run."""
    return answered(lambda: Database(session).stray(request)).to_dict()


@router.post("/api/dags/{dag_id}/discard", dependencies=EDIT)
def discard(
    request: Annotated[DiscardRequest, Depends(requested(DiscardRequest, body=True))],
    user: GetUserDep,
    session: SessionDep,
) -> dict[str, Any]:
    """Remove the stray pending runs (``discard ... --yes``), audit-logged under the caller's name."""
    return answered(lambda: Database(session, user=user.get_name()).discard(request)).to_dict()


@router.get("/api/dags/{dag_id}/clean", dependencies=READ)
def clean_dry_run(
    request: Annotated[CleanRequest, Depends(requested(CleanRequest))], user: GetUserDep, session: SessionDep
) -> dict[str, Any]:
    """
    Return ``clean --before DATE [--dag DAG_ID] --json``'s count (``~``: every Dag).

    Of every Dag, only those the caller may read (:func:`only_readable`).
    """
    answer = answered(lambda: Database(session).fired_rows(request)).to_dict()
    return answer if request.dag_id is not None else only_readable(answer, user)


@router.post("/api/dags/{dag_id}/clean", dependencies=EDIT)
def clean(
    request: Annotated[CleanRequest, Depends(requested(CleanRequest, body=True))], user: GetUserDep
) -> dict[str, Any]:
    """Remove the rows (``clean ... --yes``) in batches, audit-logged under the caller's name."""
    return answered(lambda: Database(user=user.get_name()).clean(request)).to_dict()
