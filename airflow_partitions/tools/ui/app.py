"""
The Partitions view's FastAPI app, mounted by the plugin at ``/partitions`` in Airflow's api-server.

Read-only (GET only), from the metadata database through :mod:`airflow_partitions.tools.state`,
the reader under ``airflow-partitions status``. Every JSON endpoint resolves the caller with
Airflow's own :func:`~airflow.api_fastapi.core_api.security.get_user` (the ``Authorization:
Bearer`` header, else the ``_token`` cookie Airflow's UI holds) and asks Airflow's auth manager,
as Airflow's Dag and Dag-run endpoints do: no token, 401; a Dag the user may not read, 403.

- ``GET /api/dags``: the partitioned Dags the user may read;
- ``GET /api/dags/{dag_id}?start=&end=&limit=&offset=``: one Dag's partition state, its grid;
- ``GET /api/assets/{asset_name}?start=&end=``: which keys of one asset have events, by day;
- ``GET /``, ``GET /dags/{dag_id}`` and ``GET /assets/{asset_name}``: the page (static; it holds
  no data, it calls the API).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import (
    GetUserDep,
    requires_access_asset,
    requires_access_dag,
)
from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from airflow_partitions.tools.state import asset_coverage, consumer_dags, consumer_state
from airflow_partitions.tools.ui import layout

STATIC = Path(__file__).parent / "static"
#: Partitions per page by default: one Dag's 10,000 render in under a second.
DEFAULT_LIMIT = 10_000
MAX_LIMIT = 50_000

app = FastAPI(title="airflow-partitions: Partitions", docs_url=None, redoc_url=None, openapi_url=None)
app.mount("/static", StaticFiles(directory=STATIC), name="static")


@app.get("/api/dags", dependencies=[Depends(requires_access_dag("GET"))])
def list_dags(user: GetUserDep, session: SessionDep) -> dict[str, Any]:
    """Return the partitioned Dags of the deployment that the caller may read."""
    readable = get_auth_manager().get_authorized_dag_ids(user=user, method="GET")
    dags = [vars(d) for d in consumer_dags(session) if d.dag_id in readable]
    return {"dags": dags, "total_entries": len(dags)}


@app.get(
    "/api/dags/{dag_id}",
    dependencies=[
        Depends(requires_access_dag("GET", DagAccessEntity.RUN)),
        Depends(requires_access_asset("GET")),
    ],
)
def dag_partitions(
    dag_id: str,
    user: GetUserDep,
    session: SessionDep,
    start: str | None = None,
    end: str | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    """
    Return ``consumer_state(dag_id).to_dict()`` for one page of partitions, with its grid.

    *start* and *end* select partitions by the time part of their key (see
    :func:`~airflow_partitions.tools.ui.layout.select`); ``total_entries`` counts the selected ones,
    ``states`` counts them by state, ``grid`` lays out the page. The audit-log rows of refused
    keys are left out for a user who may not read the Dag's audit log.
    """
    try:
        state = consumer_state(dag_id, session=session).to_dict()
    except ValueError as err:
        raise HTTPException(404, str(err)) from err
    chosen = layout.select(state["partitions"], start, end)
    page = chosen[offset : offset + limit]
    if not _reads_audit_log(dag_id, user):
        state["refusals"] = []
    return {
        **state,
        "partitions": page,
        "total_entries": len(chosen),
        "offset": offset,
        "limit": limit,
        "states": layout.summary(chosen),
        "grid": layout.layout(page),
    }


def _reads_audit_log(dag_id: str, user: Any) -> bool:
    """Whether *user* may read the audit log of *dag_id* (where refused keys are recorded)."""
    return get_auth_manager().is_authorized_dag(
        method="GET", access_entity=DagAccessEntity.AUDIT_LOG, details=DagDetails(id=dag_id), user=user
    )


@app.get("/api/assets/{asset_name}", dependencies=[Depends(requires_access_asset("GET"))])
def asset_keys(
    asset_name: str, user: GetUserDep, session: SessionDep, start: str | None = None, end: str | None = None
) -> dict[str, Any]:
    """
    Return ``asset_coverage(asset_name).to_dict()`` with ``coverage``, its keys laid out by day.

    Guarded as Airflow's asset endpoints (``requires_access_asset("GET")``). A refusal is kept
    only if the caller may read its consumer Dag's audit log.
    """
    try:
        answer = asset_coverage(asset_name, start=start, end=end, session=session).to_dict()
    except ValueError as err:
        raise HTTPException(404, str(err)) from err
    dags = {r["dag_id"] for r in answer["refusals"]}
    allowed = {d: d is not None and _reads_audit_log(d, user) for d in dags}
    answer["refusals"] = [r for r in answer["refusals"] if allowed[r["dag_id"]]]
    return {**answer, "coverage": layout.coverage(answer["keys"])}


def _page(request: Request) -> HTMLResponse:
    """Return the page, told where it is mounted (Airflow may itself live under a base path)."""
    root = request.scope.get("root_path", "").rstrip("/")
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    return HTMLResponse(html.replace("__ROOT__", root), headers={"Cache-Control": "no-store"})


@app.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    """Return the Partitions page: the partitioned Dags, then the grid of the chosen one."""
    return _page(request)


@app.get("/dags/{dag_id}", response_class=HTMLResponse)
def dag_page(request: Request, dag_id: str) -> HTMLResponse:
    """Return the Partitions page opened on one Dag's grid."""
    return _page(request)


@app.get("/assets/{asset_name}", response_class=HTMLResponse)
def asset_page(request: Request, asset_name: str) -> HTMLResponse:
    """Return the Partitions page opened on one asset's keys by day."""
    return _page(request)
