"""
Who may see and do what on the Partitions view's routes: one access rule for the commands and the view.

Airflow's auth manager decides, as it does for Airflow's own endpoints (the caller from
:func:`~airflow.api_fastapi.core_api.security.get_user`: no token, 401; too little access, 403):

- :data:`READ`: read access to a Dag and its runs (a command's dry run, ``explain``);
  :data:`READ_STATE`: and to assets, for an answer that shows a Dag's partitions by asset
  (``status``, the view's Dag page and partition lists); :data:`READ_ASSETS`: an asset's page;
- :data:`EDIT`: edit access to the Dag (``requeue``, ``discard``, ``clean --yes``);
  :data:`RUN`: Airflow's rules for triggering a run and for clearing one (``backfill --yes``, and
  :func:`may_run` for each Dag upstream whose runs it starts, and for ``--pause``, ``--resume``,
  ``--cancel`` of a backfill); :func:`needed` says which a command's route takes; what the
  view's page lets a user do (:func:`actions`);
- what an answer leaves out for whom: the refused keys without read access to the Dag's audit
  log (:func:`redacted`); in an answer about every Dag, the Dags the caller may not read
  (:func:`readable_dags`, :func:`only_readable`); the members of a Variable the caller may not
  read (:func:`without_unreadable_members`); :func:`shown` applies them to a command's answer.
"""

from __future__ import annotations

from typing import Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.resource_details import (
    DagAccessEntity,
    DagDetails,
    VariableDetails,
)
from airflow.api_fastapi.core_api.security import requires_access_asset, requires_access_dag
from fastapi import Depends

READ = [Depends(requires_access_dag("GET", DagAccessEntity.RUN))]
#: An asset's page: read access to assets (as Airflow's asset endpoints).
READ_ASSETS = [Depends(requires_access_asset("GET"))]
READ_STATE = [*READ, *READ_ASSETS]
EDIT = [Depends(requires_access_dag("PUT"))]
#: Starting runs and running them again (a backfill): Airflow's rules for triggering a Dag run
#: (``POST`` on its runs) and for clearing one (``PUT``).
RUN = [
    Depends(requires_access_dag("POST", DagAccessEntity.RUN)),
    Depends(requires_access_dag("PUT", DagAccessEntity.RUN)),
]
#: Every Dag's summary (the overview, the metrics): read access to Dags; each answer then holds
#: only :func:`readable_dags`.
READ_DAGS = [Depends(requires_access_dag("GET"))]


#: What a command's read needs besides :data:`READ` (by its route: ``status`` shows assets), and
#: its write besides :data:`EDIT` (``backfill --yes`` starts runs; an action on a tracked backfill
#: asks :func:`may_run` of the backfill's Dag, which its path may not name: ``~``).
_READS = {"status": READ_STATE}
_WRITES = {"backfill": RUN, "backfills": READ}


def needed(route: str, *, write: bool) -> list[Any]:
    """
    Return what guards the commands' route ``dags/{dag_id}/{route}``: its ``GET`` (*write*: ``POST``).

    ``needed("status", write=False)`` is :data:`READ_STATE`; any other read :data:`READ`; a write
    :data:`EDIT` (``backfill``'s :data:`RUN`; ``backfills``' :data:`READ`, its write asking
    :func:`may_run` of the backfill's own Dag).
    """
    return _WRITES.get(route, EDIT) if write else _READS.get(route, READ)


def shown(request: Any, answer: dict[str, Any], user: Any, session: Any) -> dict[str, Any]:
    """
    Return a command's *answer* (its ``to_dict()``) as *user* may see it: what it leaves out, by its route.

    ``status``: :func:`redacted`; ``explain``: :func:`without_unreadable_members` (of the mapper
    the request names, read on *session*); ``clean`` of every Dag: :func:`only_readable`; the
    tracked backfills of every Dag: those of the Dags *user* may read; any other, as it is.
    """
    if request.ROUTE == "status":
        return redacted(answer, request.dag_id, user)
    if request.ROUTE == "explain":
        return without_unreadable_members(answer, request.mapper(session), user)
    if request.ROUTE == "clean" and request.dag_id is None:
        return only_readable(answer, user)
    if request.ROUTE == "backfills" and request.dag_id is None:
        readable = readable_dags(user)
        return {**answer, "backfills": [b for b in answer["backfills"] if b["dag_id"] in readable]}
    return answer


def reads_audit_log(dag_id: str, user: Any) -> bool:
    """Whether *user* may read the audit log of *dag_id* (where refused keys are recorded)."""
    return get_auth_manager().is_authorized_dag(
        method="GET", access_entity=DagAccessEntity.AUDIT_LOG, details=DagDetails(id=dag_id), user=user
    )


def may_run(dag_id: str, user: Any) -> bool:
    """Whether *user* may trigger and clear the runs of *dag_id* (:data:`RUN`, by Airflow's auth manager)."""
    manager = get_auth_manager()
    return all(
        manager.is_authorized_dag(
            method=method, access_entity=DagAccessEntity.RUN, details=DagDetails(id=dag_id), user=user
        )
        for method in ("POST", "PUT")
    )


def may_edit(dag_id: str, user: Any) -> bool:
    """Whether *user* may edit *dag_id* (:data:`EDIT`: ``discard --yes`` of its stray runs)."""
    return get_auth_manager().is_authorized_dag(method="PUT", details=DagDetails(id=dag_id), user=user)


def actions(dag_id: str, user: Any) -> dict[str, dict[str, Any]]:
    """
    Return what the view lets *user* do on *dag_id*, and why not: ``{"backfill": {"allowed": …, "why": …}}``.

    ``backfill`` needs :func:`may_run`, ``discard`` :func:`may_edit`; the page disables a button the
    user may not use and says why (the routes refuse it anyway: 403).
    """
    allowed = {"backfill": may_run(dag_id, user), "discard": may_edit(dag_id, user)}
    why = {
        "backfill": f"you may not trigger and clear the runs of {dag_id} (Airflow's Dag run permissions)",
        "discard": f"you may not edit {dag_id} (Airflow's Dag edit permission)",
    }
    return {name: {"allowed": ok, "why": "" if ok else why[name]} for name, ok in allowed.items()}


def redacted(answer: dict[str, Any], dag_id: str, user: Any) -> dict[str, Any]:
    """
    Return a state's ``to_dict()`` without the refused keys if *user* may not read *dag_id*'s audit log.

    ``refusals`` empty and ``refusals_total`` 0: what both routes that answer ``status`` (the
    commands' ``dags/{dag_id}/status`` and the view's ``dags/{dag_id}``) show such a user.
    """
    if reads_audit_log(dag_id, user):
        return answer
    return {**answer, "refusals": [], "refusals_total": 0}


def readable_dags(user: Any) -> set[str]:
    """Return the ids of the Dags *user* may read (Airflow's ``get_authorized_dag_ids``)."""
    return set(get_auth_manager().get_authorized_dag_ids(user=user, method="GET"))


def only_readable(cleaned: dict[str, Any], user: Any) -> dict[str, Any]:
    """
    Return ``clean``'s answer about every Dag (``Cleaned.to_dict()``) with only the Dags *user* may read.

    ``by_dag`` keeps those Dags (``{"weather_jfk": [pending-run rows, key-log rows]}``) and the
    totals ``pending_rows`` and ``key_log_rows`` are theirs: a user who may read one Dag learns
    nothing of the others, not even their ids (Airflow asks FAB only about Dag runs in general
    for ``dags/~/…``).
    """
    readable = readable_dags(user)
    kept = {dag: rows for dag, rows in cleaned["by_dag"].items() if dag in readable}
    return {
        **cleaned,
        "by_dag": kept,
        "pending_rows": sum(n for n, _ in kept.values()),
        "key_log_rows": sum(n for _, n in kept.values()),
    }


def without_unreadable_members(explained: dict[str, Any], mapper: Any, user: Any) -> dict[str, Any]:
    """
    Return an explanation's ``to_dict()`` without the members of a Variable *user* may not read.

    A rollup whose window lists a dimension's members in a Variable
    (``DimensionWindow(store=VariableMembers("retail_stores"))``) explains a downstream key with
    that Variable's members (its values, groups and dates): each key's ``members`` then leaves out
    the dimensions whose Variable Airflow does not let *user* read (``is_authorized_variable``).
    """
    listings: dict[str, Any] = getattr(getattr(mapper, "window", None), "listings", dict)()
    variables = {dimension: getattr(listing, "name", None) for dimension, listing in listings.items()}
    hidden = {
        dimension
        for dimension, name in variables.items()
        if name is not None
        and not get_auth_manager().is_authorized_variable(
            method="GET", details=VariableDetails(key=name), user=user
        )
    }
    if not hidden:
        return explained
    keys = [
        {**key, "members": [m for m in key["members"] if m["dimension"] not in hidden]}
        if key.get("members")
        else key
        for key in explained["keys"]
    ]
    return {**explained, "keys": keys}
