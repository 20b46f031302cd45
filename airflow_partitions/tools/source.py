"""
Where the tools read and write a deployment's partitions: its metadata database, or its REST API.

``status``, ``explain``, ``backfill --missing``, ``requeue`` and ``discard`` are each written
once, against :class:`Source`. Two sources answer it:

- :class:`Database` reads and writes the metadata database directly, through Airflow's models
  (:mod:`airflow_partitions.tools.state` and :mod:`airflow_partitions.tools.write`): what a
  machine with the database's URL (``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN``) uses.
- :class:`Api` asks an api-server's Partitions view (``{url}/partitions/api/...``), whose
  routes call a :class:`Database` inside the api-server; it only moves the answers, as JSON, and
  rebuilds the same value types (:func:`rebuilt`), so that every command prints the same text
  and JSON in both modes. Managed Airflow (Amazon MWAA, Google Cloud Composer, Astronomer) gives
  no access to its database: there, this is the only way. It opens no database and imports no
  Airflow for ``status``.

The API's routes are guarded as Airflow's own: reading needs read access to the Dag (and its
runs), ``backfill``, ``requeue`` and ``discard`` with ``--yes`` need edit access; each write is
recorded under the caller's name.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import types
import typing
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

#: The environment variable ``--api-url`` takes its token from when ``--token`` is not given.
TOKEN_VARIABLE = "AIRFLOW_PARTITIONS_API_TOKEN"
#: Seconds to wait for the api-server's answer.
TIMEOUT = 120.0


class Source(Protocol):
    """What every command reads and writes, from either the database or the REST API."""

    def status(
        self,
        dag_id: str,
        *,
        partition_key: str | None = None,
        start: str | None = None,
        end: str | None = None,
        states: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> Any:
        """Return the Dag's :class:`~airflow_partitions.tools.state.ConsumerState`."""

    def explain(self, dag_id: str, key: str, *, asset: str | None, downstream: bool) -> Any:
        """Return the :class:`~airflow_partitions.tools.explanation.Explanation` of *key*, Dag's mapper."""

    def missing(self, dag_id: str, start: datetime, end: datetime, *, now: datetime) -> list[Any]:
        """Return the Dag's partitions in ``[start, end]`` without a successful run, due or not."""

    def create_runs(self, dag_id: str, partitions: list[Any]) -> list[str]:
        """Create one Dag run per :class:`~airflow_partitions.tools.write.backfill.MissingPartition`."""

    def orphans(self, dag_id: str, start: datetime, end: datetime, *, write: bool) -> Any:
        """Return (``write``: and queue again) the stored events that feed none of the Dag's runs."""

    def stray(
        self, dag_id: str, *, keys: list[str] | None, start: str | None, end: str | None, write: bool
    ) -> Any:
        """Return (``write``: and remove) the Dag's stray pending partitioned runs."""


class Database:
    """
    The metadata database, read and written through Airflow's models; one session per call.

    *user* names who writes in the audit log and on created Dag runs (default: the operating
    system's user); the api-server passes its caller's name.
    """

    def __init__(self, session: Any = None, *, user: str | None = None) -> None:
        self.session = session
        self.user = user

    def status(
        self,
        dag_id: str,
        *,
        partition_key: str | None = None,
        start: str | None = None,
        end: str | None = None,
        states: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> Any:
        """Return :func:`~airflow_partitions.tools.state.consumer_state` of *dag_id*."""
        from airflow_partitions.tools.state import consumer_state

        return consumer_state(
            dag_id,
            partition_key=partition_key,
            start=start,
            end=end,
            states=states,
            limit=limit,
            offset=offset,
            session=self.session,
        )

    def explain(self, dag_id: str, key: str, *, asset: str | None, downstream: bool) -> Any:
        """Explain *key* under the mapper *dag_id*'s serialized Dag holds for *asset*."""
        from airflow_partitions.tools import explain, stored_dag

        mapper = stored_dag(dag_id, session=self.session).consumer(dag_id, asset).mapper
        return explain(mapper, key, downstream=downstream)

    def missing(self, dag_id: str, start: datetime, end: datetime, *, now: datetime) -> list[Any]:
        """Return :func:`~airflow_partitions.tools.write.backfill.missing_partitions`, due or not."""
        from airflow_partitions.tools.write.backfill import missing_partitions

        return missing_partitions(dag_id, start, end, include_open=True, now=now, session=self.session)

    def create_runs(self, dag_id: str, partitions: list[Any]) -> list[str]:
        """Create the runs through :func:`~airflow_partitions.tools.write.backfill.create_runs`."""
        from airflow_partitions.tools.write.backfill import create_runs

        return create_runs(dag_id, partitions, user=self.user, session=self.session)

    def orphans(self, dag_id: str, start: datetime, end: datetime, *, write: bool) -> Any:
        """Return :func:`~airflow_partitions.tools.write.requeue.orphaned_events` (``write``: ``requeue``)."""
        from airflow_partitions.tools.write.requeue import orphaned_events, requeue

        if write:
            return requeue(dag_id, start, end, user=self.user, session=self.session)
        return orphaned_events(dag_id, start, end, session=self.session)

    def stray(
        self, dag_id: str, *, keys: list[str] | None, start: str | None, end: str | None, write: bool
    ) -> Any:
        """Return :func:`~airflow_partitions.tools.write.discard.stray_runs` (``write``: ``discard``)."""
        from airflow_partitions.tools.write.discard import discard, stray_runs

        if write:
            return discard(dag_id, keys=keys, start=start, end=end, user=self.user, session=self.session)
        return stray_runs(dag_id, keys=keys, start=start, end=end, session=self.session)


class ApiError(LookupError):
    """The api-server refused the call or did not answer (exit code 1); the message says which."""


class Api:
    """
    An api-server's Partitions view, called with a bearer token (Airflow's JWT, from ``/auth/token``).

    *url* is the api-server's base URL (``https://airflow.example.com``, with Airflow's base path
    if it has one); the view's routes are under ``{url}/partitions/api/``.

    :raises ApiError: naming the cause: no token given, the token refused (401, or 403 "Invalid
        JWT token": forged or expired), the user lacking the access the command needs (403), the
        api-server not answering (or not over HTTP), a redirect (never followed: urllib would
        send a ``--yes``'s POST on as a GET, a dry run, and the token to wherever it points), or
        an answer that is not the Partitions view's (the plugin not installed, or another
        version of it).
    :raises LookupError: as the direct mode, for an unknown Dag or one that is not a partitioned
        consumer (404).
    :raises ValueError: as the direct mode, for input the api-server's tools refuse (400); and
        for *url* not an ``http`` or ``https`` URL with a host and a numeric port, if any.
    """

    def __init__(self, url: str, token: str | None) -> None:
        if not _is_http_url(url):
            raise ValueError(f"--api-url {url!r} is not an http(s) URL such as https://airflow.example.com.")
        if not token or not token.strip():
            raise ApiError(
                f"--api-url {url} needs a token: pass --token, or set {TOKEN_VARIABLE} "
                "(get one from the api-server's /auth/token; see docs/deployment.md)."
            )
        self.url = url.rstrip("/")
        self.token = token.strip()  # a token pasted, or read from a file, with its newline

    def _call(
        self,
        method: str,
        path: str,
        params: dict[str, Any],
        body: Any = None,
        *,
        read: Callable[[dict[str, Any]], Any] = lambda answer: answer,
    ) -> Any:
        """Call ``{url}/partitions/api/{path}``; return *read* of its JSON answer (an object)."""
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
        address = f"{self.url}/partitions/api/{path}{'?' + query if query else ''}"
        request = urllib.request.Request(
            address,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with _OPENER.open(request, timeout=TIMEOUT) as response:
                payload = response.read()
        except urllib.error.HTTPError as err:
            raise _refused(err, method, address) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            reason = getattr(err, "reason", err)
            raise ApiError(f"the api-server at {self.url} did not answer ({reason}).") from None
        except http.client.HTTPException as err:  # a server that does not speak HTTP (BadStatusLine)
            raise ApiError(
                f"the api-server at {self.url} did not answer over HTTP ({type(err).__name__}: {err})."
            ) from None
        try:
            answer = json.loads(payload)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise ApiError(
                f"{address} did not answer with the Partitions view's JSON: is airflow-partitions "
                "installed in the api-server?"
            )
        try:
            return read(answer)
        except (TypeError, KeyError, ValueError, AttributeError) as err:
            raise ApiError(
                f"{address} answered JSON this airflow-partitions cannot read ({type(err).__name__}: {err}): "
                "is the same version installed in the api-server?"
            ) from None

    def status(
        self,
        dag_id: str,
        *,
        partition_key: str | None = None,
        start: str | None = None,
        end: str | None = None,
        states: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> Any:
        """Return the Dag's state as ``GET /partitions/api/dags/{dag_id}/status`` reads it."""
        from airflow_partitions.tools.state.model import ConsumerState

        params = {
            "key": partition_key,
            "start": start,
            "end": end,
            "state": list(states) if states is not None else None,
            "limit": limit or 0,
            "offset": offset,
        }
        return self._call(
            "GET", f"dags/{_quoted(dag_id)}/status", params, read=lambda a: rebuilt(ConsumerState, a)
        )

    def explain(self, dag_id: str, key: str, *, asset: str | None, downstream: bool) -> Any:
        """Return the explanation ``GET /partitions/api/dags/{dag_id}/explain`` works out."""
        from airflow_partitions.tools.explanation import Explanation

        params = {"key": key, "asset": asset, "downstream": str(downstream).lower()}
        return self._call(
            "GET", f"dags/{_quoted(dag_id)}/explain", params, read=lambda a: rebuilt(Explanation, a)
        )

    def missing(self, dag_id: str, start: datetime, end: datetime, *, now: datetime) -> list[Any]:
        """Return what ``GET /partitions/api/dags/{dag_id}/backfill`` lists, due or not."""
        from airflow_partitions.tools.write.backfill import MissingPartition

        params = {"start": start.isoformat(), "end": end.isoformat(), "now": now.isoformat()}
        return self._call(
            "GET",
            f"dags/{_quoted(dag_id)}/backfill",
            params,
            read=lambda a: [rebuilt(MissingPartition, m) for m in a["missing"]],
        )

    def create_runs(self, dag_id: str, partitions: list[Any]) -> list[str]:
        """Create the runs with ``POST /partitions/api/dags/{dag_id}/backfill`` (edit access)."""
        body = {"partitions": [p.to_dict() for p in partitions]}
        path = f"dags/{_quoted(dag_id)}/backfill"
        return self._call("POST", path, {}, body, read=lambda a: list(a["created_runs"]))

    def orphans(self, dag_id: str, start: datetime, end: datetime, *, write: bool) -> Any:
        """Return ``GET`` (``write``: ``POST``, edit access) ``/partitions/api/dags/{dag_id}/requeue``."""
        from airflow_partitions.tools.write.requeue import Orphans

        params = {"start": start.isoformat(), "end": end.isoformat()}
        method = "POST" if write else "GET"
        return self._call(
            method, f"dags/{_quoted(dag_id)}/requeue", params, read=lambda a: rebuilt(Orphans, a)
        )

    def stray(
        self, dag_id: str, *, keys: list[str] | None, start: str | None, end: str | None, write: bool
    ) -> Any:
        """Return ``GET`` (``write``: ``POST``, edit access) ``/partitions/api/dags/{dag_id}/discard``."""
        from airflow_partitions.tools.write.discard import Discarded

        params = {"key": keys, "start": start, "end": end}
        method = "POST" if write else "GET"
        return self._call(
            method, f"dags/{_quoted(dag_id)}/discard", params, read=lambda a: rebuilt(Discarded, a)
        )


def source(api_url: str | None, token: str | None) -> Source:
    """Return :class:`Api` for *api_url* (token: *token*, or the variable), else :class:`Database`."""
    import os

    if api_url is None:
        return Database()
    return Api(api_url, token or os.environ.get(TOKEN_VARIABLE))


def _is_http_url(url: str) -> bool:
    """Whether *url* is ``http://`` or ``https://`` with a host and a numeric port, if any."""
    parts = urllib.parse.urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follow no redirect: the 3xx answer is raised as an ``HTTPError`` (see :func:`_refused`)."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _quoted(dag_id: str) -> str:
    return urllib.parse.quote(dag_id, safe="")


def _refused(err: urllib.error.HTTPError, method: str, address: str) -> Exception:
    """Return the error an HTTP error answer means, its ``detail`` (FastAPI's) in the message."""
    text = err.read().decode(errors="replace")
    try:
        detail = json.loads(text).get("detail", text)
    except (ValueError, AttributeError):
        detail = text
    detail = detail if isinstance(detail, str) else json.dumps(detail)
    # Airflow's get_user: 401 "Not authenticated" or "Token Expired", 403 "Invalid JWT token" (one
    # it did not sign); its auth manager: 403 "Forbidden".
    if err.code == 401 or (err.code == 403 and "JWT" in detail):
        return ApiError(f"the api-server refused the token ({err.code}: {detail}): it is forged or expired.")
    if err.code == 403:
        return ApiError(f"the token's user may not do this (403: {detail}): it needs more access to the Dag.")
    if err.code == 404 and detail != "Not Found":
        return LookupError(detail)
    if err.code == 404:
        return ApiError(f"{address} was not found: is airflow-partitions installed in the api-server?")
    if err.code in (400, 422):
        return ValueError(detail)
    if 300 <= err.code < 400:
        return ApiError(
            f"{address} redirects ({err.code}) to {err.headers.get('Location')}: pass the api-server's "
            "address it redirects to as --api-url (a redirect is never followed)."
        )
    return ApiError(f"{method} {address} answered {err.code}: {detail}")


def rebuilt(cls: type, data: Any) -> Any:
    """
    Return the dataclass *cls* rebuilt from its JSON (``to_dict()``'s plain types).

    Nested dataclasses, tuples, ``X | None`` and ISO 8601 datetimes are rebuilt by the field's
    type; keys that are no field (computed ones, ``ok``, ``downstream``) are left out.
    """
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{name: _as(hints[name], value) for name, value in data.items() if name in names})


def _as(kind: Any, value: Any) -> Any:
    """Return *value* (plain JSON) as the type *kind*."""
    if value is None:
        return None
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (types.UnionType, typing.Union):
        return _as(next(a for a in args if a is not type(None)), value)
    if dataclasses.is_dataclass(kind):
        return rebuilt(kind, value)  # type: ignore[arg-type]
    if kind is datetime:
        return datetime.fromisoformat(value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_as(args[0], v) for v in value)
        return tuple(_as(a, v) for a, v in zip(args, value, strict=True))
    if origin is dict:
        return {k: _as(args[1], v) for k, v in value.items()}
    return value
