"""
The commands' routes of the Partitions view's API: ``airflow-partitions ... --api-url`` calls them.

Each route answers one method of :class:`~airflow_partitions.tools.source.Source` by calling a
:class:`~airflow_partitions.tools.source.Database` on the api-server's own session, and returns
the answer's ``to_dict()``: the JSON the command prints with ``--json`` in its direct mode.
Guarded as Airflow's own endpoints (the caller from the ``Authorization: Bearer`` header or
the UI's cookie; no token, 401; too little access, 403):

- ``GET dags/{dag_id}/status``, ``GET dags/{dag_id}/explain``, and the dry runs ``GET
  dags/{dag_id}/backfill``, ``GET dags/{dag_id}/requeue`` and ``GET dags/{dag_id}/discard``:
  read access to the Dag and its runs (the refused keys only with read access to its audit log);
- ``POST dags/{dag_id}/backfill``: creating Dag runs (Airflow's rule for triggering a run);
- ``POST dags/{dag_id}/requeue`` and ``POST dags/{dag_id}/discard``: edit access to the Dag.

Writes are recorded under the caller's name (the audit log's ``owner``, a created run's
``triggering_user_name``). An unknown Dag, or one the command does not apply to, answers 404
(``LookupError``, exit 1) or 400 (``ValueError``, exit 2) with the direct mode's message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep, requires_access_dag
from fastapi import APIRouter, Body, Depends, HTTPException, Query

from airflow_partitions.tools.source import Database, rebuilt

router = APIRouter()
#: The largest limit or offset a database takes (a signed 64-bit integer).
LARGEST = 2**63 - 1
READ = [Depends(requires_access_dag("GET", DagAccessEntity.RUN))]
EDIT = [Depends(requires_access_dag("PUT"))]
TRIGGER = [Depends(requires_access_dag("POST", DagAccessEntity.RUN))]


def answered(call: Callable[[], Any]) -> Any:
    """Return *call*'s answer; its ``LookupError`` as 404, its ``ValueError`` as 400, the message kept."""
    try:
        return call()
    except LookupError as err:
        raise HTTPException(404, str(err.args[0] if err.args else err)) from err
    except ValueError as err:
        raise HTTPException(400, str(err)) from err


def reads_audit_log(dag_id: str, user: Any) -> bool:
    """Whether *user* may read the audit log of *dag_id* (where refused keys are recorded)."""
    return get_auth_manager().is_authorized_dag(
        method="GET", access_entity=DagAccessEntity.AUDIT_LOG, details=DagDetails(id=dag_id), user=user
    )


def _when(text: str, name: str) -> datetime:
    """Return the ISO 8601 time *text* (aware: the CLI sends it so); 400 naming *name* if it is none."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        message = f"{name}={text!r} is not an ISO 8601 time such as 2026-03-01T00:00:00+00:00."
        raise HTTPException(400, message) from None


@router.get("/api/dags/{dag_id}/status", dependencies=READ)
def status(
    dag_id: str,
    user: GetUserDep,
    session: SessionDep,
    key: str | None = None,
    start: str | None = None,
    end: str | None = None,
    state: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int, Query(ge=0, le=LARGEST)] = 1000,
    offset: Annotated[int, Query(ge=0, le=LARGEST)] = 0,
) -> dict[str, Any]:
    """Return ``status DAG_ID --json``'s answer (``limit=0``: every partition)."""
    found = answered(
        lambda: Database(session).status(
            dag_id, partition_key=key, start=start, end=end, states=state, limit=limit or None, offset=offset
        )
    ).to_dict()
    if not reads_audit_log(dag_id, user):
        found["refusals"], found["refusals_total"] = [], 0
    return found


@router.get("/api/dags/{dag_id}/explain", dependencies=READ)
def explain(
    dag_id: str, session: SessionDep, key: str, asset: str | None = None, downstream: bool = False
) -> dict[str, Any]:
    """Return ``explain --dag DAG_ID [--downstream] KEY --json``'s answer, under the stored mapper."""
    return answered(
        lambda: Database(session).explain(dag_id, key, asset=asset, downstream=downstream)
    ).to_dict()


@router.get("/api/dags/{dag_id}/backfill", dependencies=READ)
def backfill_missing(dag_id: str, session: SessionDep, start: str, end: str, now: str) -> dict[str, Any]:
    """Return the partitions ``backfill --missing`` would create runs for: ``{"missing": [...]}``."""
    found = answered(
        lambda: Database(session).missing(
            dag_id, _when(start, "start"), _when(end, "end"), now=_when(now, "now")
        )
    )
    return {"missing": [m.to_dict() for m in found]}


@router.post("/api/dags/{dag_id}/backfill", dependencies=TRIGGER)
def backfill_create(
    dag_id: str,
    user: GetUserDep,
    session: SessionDep,
    partitions: Annotated[list[dict[str, Any]], Body(embed=True)],
) -> dict[str, Any]:
    """Create one Dag run per partition listed (``backfill --missing --yes``): ``{"created_runs": []}``."""
    from airflow_partitions.tools.write.backfill import MissingPartition

    listed = answered(lambda: [rebuilt(MissingPartition, p) for p in partitions])
    return {
        "created_runs": answered(lambda: Database(session, user=user.get_name()).create_runs(dag_id, listed))
    }


def _requeue(dag_id: str, session: Any, user: str | None, start: str, end: str) -> dict[str, Any]:
    """Answer ``requeue``: a dry run without *user*, else queued under *user*'s name."""
    source = Database(session, user=user)
    return answered(
        lambda: source.orphans(dag_id, _when(start, "start"), _when(end, "end"), write=user is not None)
    ).to_dict()


@router.get("/api/dags/{dag_id}/requeue", dependencies=READ)
def requeue_dry_run(dag_id: str, session: SessionDep, start: str, end: str) -> dict[str, Any]:
    """Return ``requeue DAG_ID --start --end --json``'s dry run."""
    return _requeue(dag_id, session, None, start, end)


@router.post("/api/dags/{dag_id}/requeue", dependencies=EDIT)
def requeue(dag_id: str, user: GetUserDep, session: SessionDep, start: str, end: str) -> dict[str, Any]:
    """Queue the events again (``requeue ... --yes``), audit-logged under the caller's name."""
    return _requeue(dag_id, session, user.get_name(), start, end)


def _discard(
    dag_id: str, session: Any, user: str | None, key: list[str] | None, start: str | None, end: str | None
) -> dict[str, Any]:
    """Answer ``discard``: a dry run without *user*, else removed under *user*'s name."""
    source = Database(session, user=user)
    return answered(
        lambda: source.stray(dag_id, keys=key, start=start, end=end, write=user is not None)
    ).to_dict()


@router.get("/api/dags/{dag_id}/discard", dependencies=READ)
def discard_dry_run(
    dag_id: str,
    session: SessionDep,
    key: Annotated[list[str] | None, Query()] = None,
    start: str | None = None,
    end: str | None = None,
) -> dict[str, Any]:
    """Return ``discard DAG_ID --json``'s dry run."""
    return _discard(dag_id, session, None, key, start, end)


@router.post("/api/dags/{dag_id}/discard", dependencies=EDIT)
def discard(
    dag_id: str,
    user: GetUserDep,
    session: SessionDep,
    key: Annotated[list[str] | None, Query()] = None,
    start: str | None = None,
    end: str | None = None,
) -> dict[str, Any]:
    """Remove the stray pending runs (``discard ... --yes``), audit-logged under the caller's name."""
    return _discard(dag_id, session, user.get_name(), key, start, end)
