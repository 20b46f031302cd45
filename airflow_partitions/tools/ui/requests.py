"""
The requests on the api-server: from a query or a JSON body; every route's errors as status codes.

:func:`requested` makes a FastAPI dependency of a request type (a command's
:class:`~airflow_partitions.tools.commands.base.Request`, or one of the view's own,
:mod:`~airflow_partitions.tools.ui.queries`): its path parameters (``IN_PATH``: the route's
``dag_id``) and one query parameter per other field (a read), or one member of a JSON object body
per field (a write), named and typed as :meth:`~airflow_partitions.tools.commands.base.Request.params`
sends them, rebuilt into the request. So the commands' routes and the view take what
``--api-url`` sends, by construction, with the request type's own checks. :func:`answering` is the
one error mapping of every route (the view's and the commands'): each error of the tools'
vocabulary answers the status :data:`~airflow_partitions.tools.errors.ANSWERS` gives it (an
unknown Dag, asset or partition 404; bad input, a ``ValueError``, 400; too little access 403),
with the message the command line prints in its direct mode; a query parameter or body of the
wrong type or shape is bad input too (400, naming it). :func:`from_own_client` refuses a write that
a page on another site could make with the user's cookie.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
import urllib.parse
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import pydantic
from fastapi import Body, FastAPI, HTTPException, Query
from fastapi import Request as HttpRequest
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security.utils import get_authorization_scheme_param

from airflow_partitions.tools.errors import ANSWERS, Forbidden, UsageError, answer_of
from airflow_partitions.tools.state.plain import rebuilt

T = TypeVar("T")


def answering(app: FastAPI) -> None:
    """
    Make *app* answer its routes' errors as :data:`~airflow_partitions.tools.errors.ANSWERS` maps them.

    ``{"detail": message}`` with the error's status: ``UnknownDag`` 404, ``UsageError`` (any
    ``ValueError``) 400, ``Forbidden`` 403; and FastAPI's own ``RequestValidationError`` (a
    parameter of the wrong type, a body member that is no field) 400, naming the parameter,
    where FastAPI answers 422.
    """

    async def mapped(request: HttpRequest, error: Exception) -> JSONResponse:
        status, _ = answer_of(error) or (500, None)
        return JSONResponse({"detail": str(error)}, status_code=status or 500)

    async def invalid(request: HttpRequest, error: Exception) -> JSONResponse:
        return JSONResponse({"detail": _invalid(error)}, status_code=400)

    for kind, (status, _) in ANSWERS.items():
        if status is not None:
            app.add_exception_handler(kind, mapped)
    app.add_exception_handler(RequestValidationError, invalid)


def _invalid(error: Exception) -> str:
    """
    Return what FastAPI's validation *error* says of its first parameter, naming it.

    ``limit 'ten': Input should be a valid integer, unable to parse string as an integer.``;
    ``key is required.``
    """
    found = error.errors()[0] if isinstance(error, RequestValidationError) and error.errors() else {}
    name = found.get("loc", ("input",))[-1]
    if found.get("type") == "json_invalid":
        why = found.get("ctx", {}).get("error", found.get("msg", ""))
        return f"the body is not JSON ({why}): expected a JSON object of the request's fields."
    if found.get("type") == "missing":
        return f"{name} is required."
    return f"{name} {found.get('input')!r}: {found.get('msg', error)}."


def requested(cls: type[T], *, body: bool = False) -> Callable[..., T]:
    """
    Return a FastAPI dependency that builds a *cls* from the route's ``dag_id`` and its query or body.

    ``requested(StatusRequest)`` on ``GET dags/d/status?key=k&state=failed&state=pending`` gives
    ``StatusRequest("d", key="k", states=("failed", "pending"))``. With *body* (a write), the
    fields come from a JSON object instead, the same names and values:
    ``requested(DiscardRequest, body=True)`` on ``POST dags/d/discard`` with ``{"key": ["k"]}``
    gives ``DiscardRequest("d", keys=("k",))``; the body is required and a member that is no
    field is refused (400), so a client that sends its input elsewhere changes nothing. A
    datetime is read as ISO 8601, a tuple from a repeated parameter or a list; the Dag id ``~``
    is ``None`` (every Dag, as Airflow's API spells it). The fields in the route's path are the
    type's ``IN_PATH`` (``("dag_id",)`` unless it says otherwise: the view's
    ``("dag_id", "partition_key")``, ``("asset_name",)``). The request's own checks answer 400
    (:func:`answering`), as do a time no ``datetime`` holds in UTC (``0001-01-01T00:00+14:00``),
    a value of the wrong type (``limit=ten``) and a query parameter no field takes (``stat=failed``;
    on a write, any).
    """
    hints = typing.get_type_hints(cls)
    in_path = getattr(cls, "IN_PATH", ("dag_id",))
    sent = {
        field.name: (
            field.metadata.get("query", field.name),
            _sent_as(hints[field.name]),
            ... if field.default is dataclasses.MISSING else field.default,
        )
        for field in dataclasses.fields(cls)  # type: ignore[arg-type]
        if field.name not in in_path
    }
    path = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=str) for name in in_path]
    path.append(inspect.Parameter("http_request", inspect.Parameter.KEYWORD_ONLY, annotation=HttpRequest))
    # A query parameter none of its fields takes is refused (a misspelt one, stat= for state=,
    # would else be dropped and the answer be of everything); a write takes none.
    taken = set() if body else {alias for alias, _, _ in sent.values()}
    if body:
        fields: Any = {
            name: (Annotated[kind, pydantic.Field(alias=alias)], default)
            for name, (alias, kind, default) in sent.items()
        }
        model = pydantic.create_model(
            f"{cls.__name__}Body", __config__=pydantic.ConfigDict(extra="forbid"), **fields
        )
        given = Annotated[model, Body()]  # type: ignore[valid-type]
        parameters = [*path, inspect.Parameter("sent", inspect.Parameter.KEYWORD_ONLY, annotation=given)]
    else:
        parameters = path + [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[kind, Query(alias=alias)],
                default=inspect.Parameter.empty if default is ... else default,
            )
            for name, (alias, kind, default) in sent.items()
        ]

    def build(**values: Any) -> T:
        unknown = sorted(set(values.pop("http_request").query_params) - taken)
        if unknown:
            takes = (
                f"it takes {', '.join(sorted(taken))}"
                if taken
                else "a write takes its input in its JSON body"
            )
            raise UsageError(f"unknown query parameter {unknown[0]!r}: {takes}.")
        if body:
            values = {**{name: values[name] for name in in_path}, **values["sent"].model_dump()}
        if "dag_id" in values:
            values["dag_id"] = None if values["dag_id"] == "~" else values["dag_id"]
        return _in_utc(rebuilt(cls, values))

    build.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return build


def _in_utc(request: T) -> T:
    """
    Return *request* if each of its times names an instant a ``datetime`` holds in UTC.

    :raises UsageError: naming the parameter and the time (``start '0001-01-01T00:00:00+14:00'``),
        as ``parse_date`` refuses it on the command line.
    """
    for field in dataclasses.fields(request):  # type: ignore[arg-type]
        when = getattr(request, field.name)
        if isinstance(when, datetime):
            try:
                when.astimezone(UTC)
            except OverflowError:
                raise UsageError(
                    f"{field.metadata.get('query', field.name)} {when.isoformat()!r} is outside the times a "
                    "date can name (0001-01-01 to 9999-12-31 UTC)."
                ) from None
    return request


def _sent_as(kind: Any) -> Any:
    """Return the type a field of type *kind* arrives as: a datetime as text, a tuple as a list."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (types.UnionType, typing.Union):
        inner = [a for a in args if a is not type(None)]
        return _sent_as(inner[0]) | None if len(inner) == 1 else kind
    if kind is datetime:
        return str
    if typing.get_origin(kind) is tuple:
        return list[args[0]]  # type: ignore[valid-type]
    return kind


#: The methods that change nothing: a request by one of them is never refused for where it comes from.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: ``Sec-Fetch-Site`` values of a request a browser sends for the page's own origin (``none``: the
#: user typed the address).
OWN_SITE = frozenset({"same-origin", "none"})


def from_own_client(request: HttpRequest) -> None:
    """
    Refuse a write that a page on another site could make with the user's session cookie.

    A FastAPI dependency of the whole view: a ``GET``, ``HEAD`` or ``OPTIONS`` passes; any other
    request must carry a JSON body (``Content-Type: application/json``, which neither a form nor a
    ``fetch`` without a CORS preflight can send; else 415) and no query string (a write takes its
    input from its body, :func:`requested`; else 400). Without an ``Authorization: Bearer`` header,
    Airflow reads the caller from the ``_token`` cookie a browser sends along, so the browser must
    say the request comes from the api-server's own origin: ``Sec-Fetch-Site`` ``same-origin`` (or
    ``none``); from a client that sends no ``Sec-Fetch-Site`` (an older browser), an ``Origin``, if
    sent, whose host and port are the request's ``Host`` (else 403). ``airflow-partitions ...
    --api-url`` sends a bearer token and a JSON body: it always passes.

    :raises HTTPException: 415, as above.
    :raises UsageError: a query string (400).
    :raises Forbidden: from another site (403), the message naming what was refused.
    """
    if request.method in SAFE_METHODS:
        return
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise HTTPException(
            415,
            f"{request.method} takes a JSON body (Content-Type: application/json), not {kind or 'none'!r}.",
        )
    if request.url.query:
        raise UsageError(
            f"{request.method} takes its input from its JSON body, not the query string "
            f"({request.url.query!r}): is the same airflow-partitions installed where the command runs?",
        )
    scheme, token = get_authorization_scheme_param(request.headers.get("authorization"))
    if scheme.lower() == "bearer" and token:
        return
    site, origin = request.headers.get("sec-fetch-site"), request.headers.get("origin")
    if site in OWN_SITE or (site is None and _same_host(origin, request.headers.get("host"))):
        return
    raise Forbidden(
        f"a {request.method} signed in by the session cookie must come from this api-server's own pages, "
        f"not from {origin or site!r} (Sec-Fetch-Site {site!r}); "
        "send an Authorization: Bearer token instead.",
    )


def _same_host(origin: str | None, host: str | None) -> bool:
    """Whether *origin* (``http://127.0.0.1:8080``; ``None``: not sent) names *host* (``127.0.0.1:8080``)."""
    return origin is None or (host is not None and urllib.parse.urlsplit(origin).netloc == host)
