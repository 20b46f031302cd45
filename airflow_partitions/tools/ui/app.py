"""
The Partitions view's FastAPI app, mounted by the plugin at ``/partitions`` in Airflow's api-server.

The view reads from the metadata database through :mod:`airflow_partitions.tools.state`, the reader
under ``airflow-partitions status``; its page's actions (a backfill, a discard of stray runs: their
plan first, then the user's confirmation) call the commands' routes
(:mod:`~airflow_partitions.tools.ui.commands`), the ones ``--api-url`` calls. Every JSON endpoint
resolves the caller with Airflow's own :func:`~airflow.api_fastapi.core_api.security.get_user` (the
``Authorization: Bearer`` header, else the ``_token`` cookie Airflow's UI holds) and asks Airflow's
auth manager, as Airflow's Dag and Dag-run endpoints do, through the rule the commands' routes use
too (:mod:`~airflow_partitions.tools.ui.access`): no token, 401; a Dag the user may not read, 403. A
request that could change something (any method but GET, HEAD, OPTIONS) must come with a JSON body,
and from a browser's cookie only from the api-server's own origin
(:func:`~airflow_partitions.tools.ui.requests.from_own_client`): a page on another site cannot make
the user's browser write.

- ``GET /api/dags?state=``: the partitioned Dags the user may read, what needs attention first,
  each with its counts by state, range of keys and strip of states over time;
- ``GET /api/dags/{dag_id}?start=&end=&state=&limit=&offset=``: one page of one Dag's
  partitions (what each run ran with), the counts and overview of all, the page's grid;
- ``GET /api/dags/{dag_id}/partitions/{key}?list=&offset=&limit=``: one page of a partition's
  awaited, missing, received or never-counting keys;
- ``GET /api/assets/{asset_name}?start=&end=``: which keys of one asset have events, by local day;
- the commands' routes (``airflow-partitions ... --api-url``): :mod:`~airflow_partitions.tools.ui.commands`;
- ``GET /metrics``: the partition metrics of the Dags the caller may read, in Prometheus' text
  format (:mod:`airflow_partitions.tools.metrics`);
- ``GET /``, ``GET /dags/{dag_id}`` and ``GET /assets/{asset_name}``: the page (static; it holds
  no data, it calls the API).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from airflow_partitions.tools.commands.base import without_gc
from airflow_partitions.tools.commands.status import StatusRequest
from airflow_partitions.tools.metrics import CONTENT_TYPE, metrics_text
from airflow_partitions.tools.source import Database
from airflow_partitions.tools.state import (
    STATES,
    awaited_by_date,
    consumer_grain,
    consumer_range,
    consumer_reader,
    jsonable,
    zones_of,
)
from airflow_partitions.tools.ui import commands, layout
from airflow_partitions.tools.ui.access import (
    READ_ASSETS,
    READ_DAGS,
    READ_STATE,
    actions,
    readable_dags,
    reads_audit_log,
    redacted,
)
from airflow_partitions.tools.ui.layout import VIEW_STATES
from airflow_partitions.tools.ui.queries import AssetRequest, DagsRequest, PartitionListRequest, page_limit
from airflow_partitions.tools.ui.requests import answering, from_own_client, requested
from airflow_partitions.tools.warming import summed_dags, warming_dags

STATIC = Path(__file__).parent / "static"

app = FastAPI(
    title="airflow-partitions: Partitions",
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
    dependencies=[Depends(from_own_client)],
)


@app.middleware("http")
async def collector_paused(request: Request, call_next: Any) -> Response:
    """
    Answer each request with Python's cyclic garbage collector paused (:func:`without_gc`).

    A page's answer is hundreds of thousands of objects: collections during the request move
    them into the oldest generation, and every few requests Python then walks all the
    api-server's objects (Airflow's too). That full collection added 0.45 s to one request in
    eight at a million partitions. Paused, the answer's objects are freed when the request ends
    and are never moved.
    """
    with without_gc():
        return await call_next(request)


class PlainJSON(Response):
    """
    The answers, plain JSON already (:func:`~airflow_partitions.tools.state.jsonable`), dumped as they are.

    FastAPI's default walks every value again (``jsonable_encoder``): 0.1 s of a 1,000-partition page.
    """

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":")).encode()


app.mount("/static", StaticFiles(directory=STATIC), name="static")
app.include_router(commands.router)
answering(app)


@app.get("/api/dags", dependencies=READ_DAGS, response_class=PlainJSON)
def list_dags(
    request: Annotated[DagsRequest, Depends(requested(DagsRequest))], user: GetUserDep, session: SessionDep
) -> PlainJSON:
    """
    Return the partitioned Dags the caller may read, with their counts by state, range and strip.

    What needs attention first, then by Dag id; ``state`` (repeatable) keeps the Dags with
    partitions in one of those states (:class:`~airflow_partitions.tools.ui.queries.DagsRequest`:
    a state that is not one is 400, as ``status --state``).
    """
    dags = request.read(session, readable_dags(user))
    return PlainJSON(
        {
            "dags": [{**jsonable(d), "attention": STATES[d.attention] if d.states else None} for d in dags],
            "total_entries": len(dags),
            "states": list(VIEW_STATES),
        }
    )


@app.get(
    "/api/dags/{dag_id}",
    dependencies=READ_STATE,
    response_class=PlainJSON,
)
def dag_partitions(
    request: Annotated[StatusRequest, Depends(requested(StatusRequest))],
    user: GetUserDep,
    session: SessionDep,
) -> PlainJSON:
    """
    Return one page of ``consumer_state(dag_id)``: its partitions, counts, overview and grid.

    The query is ``status``'s (:class:`~airflow_partitions.tools.commands.status.StatusRequest`,
    the commands' route's, with its checks): *start* and *end* select partitions by the time part
    of their key (``end="2026-04"`` keeps all of April), *state* (repeatable) by state; *limit*
    (default :data:`~airflow_partitions.tools.ui.queries.DEFAULT_LIMIT`; 0: every one) and
    *offset* page them, worked out in the database with the range and the counts.
    ``total_entries`` counts the selected partitions, ``states`` counts them by state
    (``"success"`` and ``"ran incomplete"`` apart), every partition with a run carries
    ``ran_with`` (``{"counted", "awaited", "missing", "missing_total"}``) for its latest run,
    ``overview`` lays every selected partition out in buckets, ``grid`` the page, ``range`` is
    the Dag's whole range (``[first, last]`` time parts), and ``actions`` what the caller may do
    from the page (backfill, discard: allowed, and why not;
    :func:`~airflow_partitions.tools.ui.access.actions`). The refused keys are left out for a user
    who may not read the Dag's audit log (:func:`~airflow_partitions.tools.ui.access.redacted`);
    errors as every route's (:func:`~airflow_partitions.tools.ui.requests.answering`: an unknown
    Dag 404, bad input 400). The grid knows the Dag's grain
    (:func:`~airflow_partitions.tools.state.consumer_grain`): a month of trading sessions has no
    places on weekends and holidays. While the Dag is read for the first time in the background
    (:func:`~airflow_partitions.tools.warming.warming_dags`), only ``{"dag_id", "warming": true,
    "detail"}``: no partition is known yet.
    """
    dag_id = request.dag_id
    if dag_id in warming_dags({dag_id}, first=True):
        return PlainJSON({"dag_id": dag_id, "warming": True, "detail": warming_note(dag_id)})
    request = replace(request, limit=page_limit(request.limit) or 0)
    answer = Database(session).read(request).to_dict()
    selected = request.start or request.end or request.states
    whole = consumer_range(dag_id, session=session) if selected else (answer["first"], answer["last"])
    return PlainJSON(
        {
            **redacted(answer, dag_id, user),
            "warming": False,
            "actions": actions(dag_id, user),
            "total_entries": answer["total"],
            "range": list(whole),
            "overview": layout.overview(answer),
            "grid": layout.layout(answer["partitions"], consumer_grain(dag_id, session)),
        }
    )


@app.get(
    "/api/dags/{dag_id}/partitions/{partition_key:path}",
    dependencies=READ_STATE,
)
def partition_list(
    request: Annotated[PartitionListRequest, Depends(requested(PartitionListRequest))], session: SessionDep
) -> dict[str, Any]:
    """
    Return one page of one list of a partition: ``awaited``, ``missing``, ``received`` or ``never counting``.

    For its pending run, or what its latest run ran with: ``{"keys": [...], "total_entries": N,
    "offset", "limit", "list"}`` (:class:`~airflow_partitions.tools.ui.queries.PartitionListRequest`);
    the detail panel pages through the lists the partition's answer cuts at
    :data:`~airflow_partitions.tools.state.LISTED` keys. Errors as every route's: a list that is
    none of these 400, an unknown Dag or a partition without a run 404.
    """
    return request.read(session)


@app.get("/metrics", dependencies=READ_DAGS)
def metrics(user: GetUserDep, session: SessionDep) -> Response:
    """
    Return the partition metrics of the Dags the caller may read, in Prometheus' text format.

    :func:`~airflow_partitions.tools.metrics.metrics_text`: per partitioned Dag, its partitions by
    state, late ones, the age of its oldest pending run, runs that ran incomplete, keys refused
    on arrival by reason (a counter) and pending runs beyond the scheduler's 500 per loop; a Dag read
    for the first time in the background only ``airflow_partitions_warming`` 1.
    Guarded as the other routes: a Prometheus scrape sends an Airflow token (``Authorization:
    Bearer``).
    """
    only = readable_dags(user)
    text = metrics_text(session, only=only, dags=summed_dags(session, only))
    return Response(text, media_type=CONTENT_TYPE)


@app.get("/api/assets/{asset_name}", dependencies=READ_ASSETS)
def asset_keys(
    request: Annotated[AssetRequest, Depends(requested(AssetRequest))], user: GetUserDep, session: SessionDep
) -> dict[str, Any]:
    """
    Return ``asset_coverage(asset_name).to_dict()`` with ``coverage``, its keys laid out by day.

    Days are local days of the zone of a partitioned Dag that reads the asset (``coverage.zone``
    names it, ``coverage.dag_id`` the Dag), else UTC; ``start`` and ``end`` are read by the grain
    of that Dag's keys of the asset (:class:`~airflow_partitions.tools.ui.queries.AssetRequest`).
    Under a Dag whose grain has days off (trading sessions, business days) each day also says what
    its period awaits (:func:`~airflow_partitions.tools.state.awaited_by_date`): a session's bars
    as a strip of its hours, a day without a session closed rather than a gap. Guarded as
    Airflow's asset endpoints (``requires_access_asset("GET")``). A refusal is kept only if the
    caller may read its consumer Dag's audit log.
    """
    found = consumer_reader(request.asset_name, session=session, only=readable_dags(user))
    mapper, reader = found if found else (None, None)
    answer = request.read(session, mapper).to_dict()
    dags = {r["dag_id"] for r in answer["refusals"]}
    allowed = {d: d is not None and reads_audit_log(d, user) for d in dags}
    answer["refusals"] = [r for r in answer["refusals"] if allowed[r["dag_id"]]]
    zone, input_zone = zones_of(mapper) or ("UTC", "UTC")
    laid = layout.coverage(answer["keys"], zone, input_zone, awaited_by_date(mapper) if mapper else None)
    return {**answer, "coverage": {**laid, "dag_id": reader}}


def first_page(dag_id: str, session: Any) -> None:
    """
    Read the Dag's first pages: the view's (:func:`dag_partitions` without a query) and ``status``'s.

    The warmer's read (:mod:`~airflow_partitions.tools.warming`): their answers are kept in the
    store, for the view and for a ``status DAG_ID`` in a new process (its partitions not
    successful, 50 of them); the answers themselves are dropped.
    """
    from airflow_partitions.tools.cli import build_parser
    from airflow_partitions.tools.commands.status import request_of

    answer = Database(session).read(StatusRequest(dag_id, limit=page_limit(None))).to_dict()
    layout.layout(answer["partitions"], consumer_grain(dag_id, session))
    Database(session).read(request_of(build_parser().parse_args(["status", dag_id])))


def warming_note(dag_id: str) -> str:
    """Return what the view says of a Dag read for the first time in the background."""
    return (
        f"{dag_id} is being read for the first time since airflow-partitions, Airflow or the Dag "
        "changed (its answers are worked out once, in the background): its partitions show here "
        "when the read is done."
    )


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
