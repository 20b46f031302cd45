"""
The commands' routes of the Partitions view's API: ``airflow-partitions ... --api-url`` calls them.

The routes are made from the command list (:data:`~airflow_partitions.tools.cli.COMMANDS`): for
each command with a request type (:class:`~airflow_partitions.tools.commands.base.Request`),
``GET dags/{dag_id}/{ROUTE}`` builds its request from the query parameters ``--api-url`` sends
and answers ``request.read`` (:func:`~airflow_partitions.tools.ui.requests.requested`), and if it
writes, ``POST dags/{dag_id}/{ROUTE}`` builds it from its JSON body and answers ``request.write``;
each with a :class:`~airflow_partitions.tools.source.Database` on the api-server's own session,
returning the answer's ``to_dict()``: the JSON the command prints with ``--json`` in its direct
mode. A new command is its module: its routes follow. Guarded as Airflow's own endpoints (the
caller from the ``Authorization: Bearer`` header or the UI's cookie; no token, 401; too little
access, 403), by :func:`~airflow_partitions.tools.ui.access.needed`:

- ``GET dags/{dag_id}/status``, ``GET dags/{dag_id}/explain``, the dry runs ``GET
  dags/{dag_id}/backfill``, ``GET dags/{dag_id}/requeue``, ``GET dags/{dag_id}/discard`` and
  ``GET dags/{dag_id}/clean``, and ``GET dags/{dag_id}/backfills`` (the tracked backfills; ``~``:
  of the Dags the caller may read): read access to the Dag and its runs (``status`` also to assets;
  the refused keys only with read access to its audit log; ``clean`` of every Dag counts only the
  Dags the caller may read; ``explain`` leaves out the members of a Variable the caller may not
  read: :func:`~airflow_partitions.tools.ui.access.shown`; ``backfills`` of every Dag, those
  the caller may read);
- ``POST dags/{dag_id}/backfill``: Airflow's rules for triggering and clearing a run, on the Dag
  and on each Dag upstream whose runs it starts (those it may not are left undone, said so);
  ``POST dags/{dag_id}/backfills`` (pause, resume, cancel): the same on the backfill's Dag;
- ``POST dags/{dag_id}/requeue``, ``POST dags/{dag_id}/discard`` and ``POST dags/{dag_id}/clean``:
  edit access to the Dag.

A write from a browser's cookie must come from the api-server's own origin, with a JSON body
(:func:`~airflow_partitions.tools.ui.requests.from_own_client`, on every route of the view).

``clean`` without ``--dag`` is ``dags/~/clean``: Airflow's auth manager is then asked about the
Dags as a whole (no Dag id, as Airflow's own ``dags/~/dagRuns`` asks): the simple auth manager
answers by role, FAB by its permission on all Dags. That is the honest question for a command
that removes rows of every Dag, deleted ones too.

Writes are recorded under the caller's name (the audit log's ``owner``, a created run's
``triggering_user_name``). Errors: :func:`~airflow_partitions.tools.ui.requests.answering` (an
unknown Dag 404, exit 1; bad input 400, exit 2; too little access 403, exit 1), with the direct
mode's message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import GetUserDep
from fastapi import APIRouter, Depends

from airflow_partitions.tools.cli import COMMANDS
from airflow_partitions.tools.commands.base import Request
from airflow_partitions.tools.source import Database
from airflow_partitions.tools.ui.access import may_run, needed, shown
from airflow_partitions.tools.ui.requests import requested

router = APIRouter()


def _reader(cls: type[Request]) -> Callable[..., dict[str, Any]]:
    """Return the ``GET`` route of *cls*: what it reads on the api-server's session, as the caller may see."""

    def read(
        user: GetUserDep,
        session: SessionDep,
        request: Any = Depends(requested(cls)),  # noqa: B008 (FastAPI's way)
    ) -> dict[str, Any]:
        return shown(request, Database(session).read(request).to_dict(), user, session)

    return read


def _writer(cls: type[Request]) -> Callable[..., dict[str, Any]]:
    """Return the ``POST`` route of *cls*: what it does, under the caller's name (the audit log's owner)."""

    def write(
        user: GetUserDep,
        session: SessionDep,
        request: Any = Depends(requested(cls, body=True)),  # noqa: B008 (FastAPI's way)
    ) -> dict[str, Any]:
        deployment = Database(session, user=user.get_name(), may_run=lambda dag_id: may_run(dag_id, user))
        return deployment.write(request).to_dict()

    return write


def _add_routes() -> None:
    """Add to :data:`router` the routes of each command with a request type, guarded as it needs."""
    for cls in (cls for command in COMMANDS.values() for cls in command.requests):
        path = f"/api/dags/{{dag_id}}/{cls.ROUTE}"
        router.add_api_route(path, _reader(cls), methods=["GET"], dependencies=needed(cls.ROUTE, write=False))
        if cls.writes():
            router.add_api_route(
                path, _writer(cls), methods=["POST"], dependencies=needed(cls.ROUTE, write=True)
            )


_add_routes()
