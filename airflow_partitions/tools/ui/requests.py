"""
The commands' requests on the api-server: built from query parameters, their errors as status codes.

:func:`requested` makes a FastAPI dependency of a request type
(:class:`~airflow_partitions.tools.commands.base.Request`): the route's ``dag_id`` and one query
parameter per field, named and typed as :meth:`~airflow_partitions.tools.commands.base.Request.params`
sends them, rebuilt into the request. So the commands' routes and the view's ``dags/{dag_id}``
take what ``--api-url`` sends, by construction. :func:`answered` is the one error mapping of the
routes that answer a request: a ``LookupError`` (an unknown Dag, or one that is not a partitioned
consumer) is 404, a ``ValueError`` (input the request or the tools refuse: a state that is not
one, ``start`` after ``end``) is 400, each with the message the CLI prints in its direct mode.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

from fastapi import HTTPException, Query

from airflow_partitions.tools.state.plain import rebuilt

T = TypeVar("T")


def answered(call: Callable[[], T]) -> T:
    """Return *call*'s answer; its ``LookupError`` as 404, its ``ValueError`` as 400, the message kept."""
    try:
        return call()
    except LookupError as err:
        raise HTTPException(404, str(err.args[0] if err.args else err)) from err
    except ValueError as err:
        raise HTTPException(400, str(err)) from err


def requested(cls: type[T]) -> Callable[..., T]:
    """
    Return a FastAPI dependency that builds a *cls* from the route's ``dag_id`` and query parameters.

    ``requested(StatusRequest)`` on ``GET dags/d/status?key=k&state=failed&state=pending`` gives
    ``StatusRequest("d", key="k", states=("failed", "pending"))``. A datetime is read as ISO
    8601, a tuple from a repeated parameter; the Dag id ``~`` is ``None`` (every Dag, as
    Airflow's API spells it). The request's own checks answer 400 (:func:`answered`), a value of
    the wrong type (``limit=ten``) 422 as FastAPI does.
    """
    hints = typing.get_type_hints(cls)
    parameters = [inspect.Parameter("dag_id", inspect.Parameter.KEYWORD_ONLY, annotation=str)]
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.name == "dag_id":
            continue
        default = inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
        alias = field.metadata.get("query", field.name)
        annotation = Annotated[_sent_as(hints[field.name]), Query(alias=alias)]  # type: ignore[valid-type]
        parameters.append(
            inspect.Parameter(
                field.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
            )
        )

    def build(**values: Any) -> T:
        values["dag_id"] = None if values["dag_id"] == "~" else values["dag_id"]
        return answered(lambda: rebuilt(cls, values))

    build.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return build


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
