"""
Where the tools read and write a deployment's partitions: its metadata database, or its REST API.

``status``, ``explain``, ``backfill``, ``requeue``, ``discard`` and ``clean`` are each
written once (:mod:`airflow_partitions.tools.commands`), against :class:`Source`, whose methods
take the command's frozen request. Two sources answer it:

- :class:`Database` reads and writes the metadata database directly, through Airflow's models
  (:mod:`airflow_partitions.tools.state` and :mod:`airflow_partitions.tools.write`): what a
  machine with the database's URL (``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN``) uses.
- :class:`Api` asks an api-server's Partitions view (``{url}/partitions/api/...``), sending the
  request as query parameters, or for a write as its JSON body (one per field,
  :meth:`~airflow_partitions.tools.commands.base.Request.params`);
  the routes build the same request back and call a :class:`Database` inside the api-server. It
  only moves the requests and the answers, as JSON, and rebuilds the same value types
  (:func:`~airflow_partitions.tools.state.plain.rebuilt`), so that every command prints the same
  text and JSON in both modes. Managed Airflow (Amazon MWAA, Google Cloud Composer, Astronomer) gives
  no access to its database: there, this is the only way. It opens no database and imports no
  Airflow for ``status``.

The API's routes are guarded as Airflow's own: reading needs read access to the Dag (and its
runs), ``backfill --yes`` and its ``--pause``, ``--resume``, ``--cancel`` Airflow's access to
trigger and clear its runs, ``requeue``, ``discard`` and ``clean`` with ``--yes`` edit access; each
write is recorded under the caller's name.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any, Protocol

from airflow_partitions.tools.commands.base import Request
from airflow_partitions.tools.errors import ApiError, Forbidden, NotFound, UsageError
from airflow_partitions.tools.state.plain import rebuilt

#: The environment variable ``--api-url`` takes its token from when ``--token`` is not given.
TOKEN_VARIABLE = "AIRFLOW_PARTITIONS_API_TOKEN"
#: Seconds to wait for the api-server's answer.
TIMEOUT = 120.0
#: The longest URL a read sends (``backfill --keys-from`` of many keys): Airflow's api-server
#: (uvicorn, h11) refuses a request line over 16 KiB with headers.
MAX_URL = 8_000


class Source(Protocol):
    """
    What the commands read and write, from either the database or the REST API.

    :meth:`read` answers a command's frozen request (:mod:`airflow_partitions.tools.commands`),
    :meth:`write` does what it asks (``--yes``): one pair for every command, so that a new command
    is its module and nothing here.
    """

    def read(self, request: Request) -> Any:
        """Return the request's answer (read-only): a value of its ``answer_type()``."""

    def write(self, request: Request) -> Any:
        """Do what the request asks (``--yes``); return what was done, a value of its ``answer_type()``."""


class Database:
    """
    The metadata database, read and written through Airflow's models; one session per call.

    Each request reads (``request.read(session)``) or writes (``request.write(session, user, may_run)``)
    itself through :mod:`airflow_partitions.tools.state` and :mod:`airflow_partitions.tools.write`.
    *user* names who writes in the audit log and on created Dag runs (default: the operating
    system's user); the api-server passes its caller's name, and *may_run*: whether the caller may
    trigger and clear runs of a Dag (a backfill's runs of Dags upstream; ``None``: of every Dag).
    """

    def __init__(
        self, session: Any = None, *, user: str | None = None, may_run: Callable[[str], bool] | None = None
    ) -> None:
        self.session = session
        self.user = user
        #: Whether *user* may start runs of a Dag (``None``: of every Dag, the database's owner).
        self.may_run = may_run

    def read(self, request: Request) -> Any:
        """Return ``request.read(session)`` (``StatusRequest``'s: the Dag's ``ConsumerState``)."""
        return request.read(self.session)

    def write(self, request: Request) -> Any:
        """Return ``request.write(session, user, may_run)`` (``DiscardRequest``'s: the stray runs removed)."""
        return request.write(self.session, self.user, self.may_run)


class Api:
    """
    An api-server's Partitions view, called with a bearer token (Airflow's JWT, from ``/auth/token``).

    *url* is the api-server's base URL (``https://airflow.example.com``, with Airflow's base path
    if it has one); the view's routes are under ``{url}/partitions/api/``: a request's
    ``GET {path()}?{params()}`` reads, ``POST {path()}`` with ``params()`` as its JSON body writes.

    :raises ApiError: naming the cause: no token given, the token refused (401, or 403 "Invalid
        JWT token": forged or expired), the api-server not answering (or not over HTTP), a
        redirect (never followed: urllib would send a ``--yes``'s POST on as a GET, a dry run, and
        the token to wherever it points), or an answer that is not the Partitions view's (the
        plugin not installed, or another version of it).
    :raises Forbidden: the token's user lacking the access the command needs (403).
    :raises NotFound: as the direct mode, for an unknown Dag or asset (404).
    :raises UsageError: as the direct mode, for input the api-server's tools refuse (400); and
        for *url* not an ``http`` or ``https`` URL with a host and a numeric port, if any; and
        for a read whose URL would be longer than :data:`MAX_URL` (many ``--key``).
    """

    def __init__(self, url: str, token: str | None) -> None:
        if not _is_http_url(url):
            raise UsageError(f"--api-url {url!r} is not an http(s) URL such as https://airflow.example.com.")
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
        if len(address) > MAX_URL:
            raise UsageError(
                f"the request is {len(address):,} characters long, more than an api-server takes in a URL "
                f"({MAX_URL:,}): select by --start/--end or --state, or ask the metadata database."
            )
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
            raise _refused(err, method, address, _dag_named(path)) from None
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

    def _ask(self, method: str, request: Request, answer: type) -> Any:
        """
        Send *request* (:meth:`~Request.params`) to its route; rebuild *answer* from the JSON.

        A ``GET`` sends the request as query parameters, a write (``POST``) as its JSON body: the
        api-server takes a write's input from nowhere else.
        """
        query, body = (request.params(), None) if method == "GET" else ({}, request.params())
        return self._call(method, request.path(), query, body, read=lambda a: rebuilt(answer, a))

    def read(self, request: Request) -> Any:
        """Return ``GET /partitions/api/{request.path()}``'s answer, rebuilt as its ``answer_type()``."""
        return self._ask("GET", request, request.answer_type())

    def write(self, request: Request) -> Any:
        """Return ``POST /partitions/api/{request.path()}``'s answer (edit access), rebuilt."""
        return self._ask("POST", request, request.answer_type())


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


def _dag_named(path: str) -> str:
    """
    Return what a route's path asks about, for a message: ``"the Dag 'weather_jfk'"``.

    ``dags/~/clean`` (``clean`` without ``--dag``) and ``dags/~/backfills`` (a backfill by its name
    alone) ask about every Dag.
    """
    dag_id = urllib.parse.unquote(path.split("/")[1])
    if dag_id != "~":
        return f"the Dag {dag_id!r}"
    return "every Dag (clean without --dag)" if path.endswith("/clean") else "the backfill's Dag"


def _refused(err: urllib.error.HTTPError, method: str, address: str, dag: str) -> Exception:
    """
    Return the error an HTTP error answer means, its ``detail`` (FastAPI's) in the message.

    *dag* names what the call asked about (:func:`_dag_named`), which a 403 says the user needs
    more access to.
    """
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
        return Forbidden(f"the token's user may not do this (403: {detail}): it needs more access to {dag}.")
    if err.code == 404 and detail != "Not Found":
        return NotFound(detail)
    if err.code == 404:
        return ApiError(f"{address} was not found: is airflow-partitions installed in the api-server?")
    if err.code in (400, 422):
        return UsageError(detail)
    if 300 <= err.code < 400:
        return ApiError(
            f"{address} redirects ({err.code}) to {err.headers.get('Location')}: pass the api-server's "
            "address it redirects to as --api-url (a redirect is never followed)."
        )
    return ApiError(f"{method} {address} answered {err.code}: {detail}")
