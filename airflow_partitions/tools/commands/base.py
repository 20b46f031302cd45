"""
What every command shares: exit codes, the request type, ``--api-url``, dates and the quiet load.

A command is a :class:`Command` (its name, help, arguments and handler); what it asks a
:class:`~airflow_partitions.tools.source.Source` is a frozen :class:`Request`, which goes over the
REST API as query parameters, or for a write as its JSON body (:meth:`Request.params`, one per
field, by the field's name or its ``query`` metadata) and is rebuilt on the api-server from them
(:func:`airflow_partitions.tools.ui.requests.requested`). Nothing here imports Airflow.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, ClassVar, NamedTuple

from airflow_partitions.tools.commands.text import terminal
from airflow_partitions.tools.errors import FOUND, OK, USAGE, UsageError  # noqa: F401 (the commands')

#: ``(flags, argparse keyword arguments)``: one argument, as both CLIs (argparse, Airflow's) take it.
Argument = tuple[tuple[str, ...], dict[str, Any]]
#: What a handler calls for the deployment's :class:`~airflow_partitions.tools.source.Source`: the
#: database, or ``--api-url``'s api-server (opened only when the command needs it).
Opener = Callable[[], Any]


class Command(NamedTuple):
    """
    One command: its name, one-line help, description, examples (epilog), arguments and handler.

    *requests* are the types of what it asks a deployment (:class:`Request`), if it asks any
    (``backfill``: a backfill's plan, and the tracked backfills): the api-server's routes for each
    are made from it (:mod:`airflow_partitions.tools.ui.commands`), a ``GET`` that reads and, if
    it writes, a ``POST``.
    """

    name: str
    help: str
    description: str
    epilog: str
    arguments: list[Argument]
    #: Runs the command on the parsed arguments; returns the exit code (:data:`OK`, :data:`FOUND`).
    handler: Callable[[argparse.Namespace, Opener], int]
    requests: tuple[type[Request], ...] = ()


#: ``--json``: the answer's ``to_dict()`` instead of text.
JSON_ARG: Argument = (("--json",), {"action": "store_true", "help": "print JSON instead of text"})
#: ``--api-url`` and ``--token``: the commands that read or write a deployment's partitions do it
#: through its api-server's REST API instead of its metadata database (managed Airflow).
API_ARGS: list[Argument] = [
    (
        ("--api-url",),
        {
            "metavar": "URL",
            "help": "ask this api-server (https://airflow.example.com) instead of the metadata database",
        },
    ),
    (
        ("--token",),
        {"help": "the bearer token for --api-url (default: $AIRFLOW_PARTITIONS_API_TOKEN)"},
    ),
]


@dataclass(frozen=True)
class Request:
    """
    What a command asks a source: a frozen dataclass whose fields are the query's parameters.

    A request names its Dag in its field ``dag_id`` (``None``: every Dag, ``~`` in the path, as
    Airflow's own API spells it) and its route in :attr:`ROUTE`: ``StatusRequest("d", key="k")``
    is ``GET dags/d/status?key=k``. Its other fields (but those of :attr:`IN_PATH`) are query
    parameters (a write's, members of its JSON body): ``None`` left out, a tuple repeated (a
    list), a datetime in ISO 8601, a bool ``true`` or ``false``. A subclass checks its values in
    ``__post_init__`` (a :class:`~airflow_partitions.tools.errors.UsageError` naming the input:
    exit code 2, or 400), and answers itself from the metadata database: ``read(session)``, and
    for a command that writes ``write(session, user)`` (*session* ``None``: the tool opens its
    own, as its function does).
    """

    #: The route under ``dags/{dag_id}/``.
    ROUTE: ClassVar[str] = ""
    #: The fields in the route's path (:meth:`path`), not in its query.
    IN_PATH: ClassVar[tuple[str, ...]] = ("dag_id",)

    @staticmethod
    def answer_type() -> type:
        """Return the type of its answer (what :meth:`read` and :meth:`write` return), rebuilt from JSON."""
        raise NotImplementedError

    def read(self, session: Any) -> Any:
        """Return the answer, read on *session* (an Airflow ORM session; ``None``: one of its own)."""
        raise NotImplementedError

    def write(self, session: Any, user: str | None, may_run: Callable[[str], bool] | None = None) -> Any:
        """
        Do what it asks (``--yes``) under *user*'s name (audit log); return what was done.

        *may_run* (a Dag id): whether *user* may trigger and clear that Dag's runs (``None``: every
        Dag's, the database's owner; the api-server passes its caller's): asked by a write that
        starts runs of Dags its route does not name (a backfill's upstream runs), ignored by others.
        """
        raise NotImplementedError

    @classmethod
    def writes(cls) -> bool:
        """Whether it is a command's that writes (``--yes``): its type defines :meth:`write`."""
        return cls.write is not Request.write

    def path(self) -> str:
        """Return the route: ``dags/{dag_id}/{ROUTE}``, the Dag id quoted (``~``: every Dag)."""
        dag_id = getattr(self, "dag_id", None)
        return f"dags/{path_segment(dag_id or '~')}/{self.ROUTE}"

    def params(self) -> dict[str, Any]:
        """Return the query parameters: ``{"key": "2013-03-10", "state": ["failed"], "offset": 0}``."""
        found = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name not in self.IN_PATH and value is not None:
                found[field.metadata.get("query", field.name)] = _sent(value)
        return found


def _sent(value: Any) -> Any:
    """Return *value* as a query parameter: ISO 8601, ``true``/``false``, a list for a tuple."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_sent(v) for v in value]
    return value


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Send what Airflow prints while loading Dags to stderr, so stdout holds only the answer."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


@contextlib.contextmanager
def session_for(session: Any, *, scoped: bool = True) -> Iterator[Any]:
    """
    Yield *session*, or without one (``None``) an Airflow ORM session of its own, committed and closed after.

    What a request's ``read`` and ``write`` answer on: the api-server's session, or the command
    line's own: the thread's scoped session (Airflow's helpers that open their own with
    ``provide_session`` share it), or with *scoped* false one apart from it (those helpers then
    get the scoped one, and commit it: ``backfill``'s).
    """
    if session is not None:
        yield session
        return
    from airflow.utils.session import create_session

    with create_session(scoped=scoped) as new:
        yield new


@contextlib.contextmanager
def reading(session: Any) -> Iterator[Any]:
    """
    Yield *session*, or without one (``None``) a read-only connection of its own, closed after.

    What a request's ``read`` that needs no Airflow model answers on: the command line's
    connection (:func:`~airflow_partitions.tools.state.database.read_session`) neither imports
    Airflow's models nor configures its ORM (half a second of a new process).
    """
    if session is not None:
        yield session
        return
    from airflow_partitions.tools.state.database import read_session

    with read_session() as new:
        yield new


@contextlib.contextmanager
def without_gc() -> Iterator[None]:
    """
    Run the block with Python's cyclic garbage collector off (as it was after).

    Python collects each time so many objects were made, and each full collection walks every
    object of the process: Airflow's and SQLAlchemy's modules and a read's answers. A ``status``
    at a million partitions spent 0.2 to 0.3 s of its 1.3 s there (Mercurial's ``nogc`` does the
    same for its large reads). A command is a short process: what its cycles hold goes with it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def show(answer: Any, as_text: Callable[[Any], str], *, as_json: bool) -> None:
    """
    Print a command's *answer*: its ``to_dict()`` as indented JSON (``--json``), else ``as_text(answer)``.

    The one place the two outputs part, so that every command's ``--json`` and text describe one
    answer (the tests compare them field by field). The text's control characters are escaped
    (:func:`~airflow_partitions.tools.commands.text.terminal`); the JSON keeps them exact.
    """
    print(json.dumps(answer.to_dict(), indent=2) if as_json else terminal(as_text(answer)))


#: The largest ``limit`` and ``offset``: SQL's LIMIT and OFFSET take a 64-bit integer (SQLite's
#: INTEGER, PostgreSQL's bigint).
MAX_ROWS = 2**63 - 1


def checked_states(states: Iterable[str] | None) -> None:
    """
    Refuse a state that is not one of :data:`~airflow_partitions.tools.state.STATES`, naming it.

    ``status --state`` and the ``state`` of every route (the commands', the view's Dag page and
    its list of Dags).

    :raises UsageError: ``--state 'again' is not a state; states: failed, ran incomplete, …``
    """
    from airflow_partitions.tools.state.model import STATES

    unknown = [s for s in states or () if s not in STATES]
    if unknown:
        raise UsageError(f"--state {unknown[0]!r} is not a state; states: {', '.join(STATES)}.")


def checked_rows(option: str, rows: int | None) -> None:
    """
    Refuse a ``limit`` or ``offset`` outside 0 … :data:`MAX_ROWS`, naming *option* (``limit``).

    A ``limit`` of 0 means no limit: every row (as ``--limit 0`` on the command line).

    :raises UsageError: ``--limit -1 is not a whole number from 0 to 9223372036854775807.``
    """
    if rows is not None and not 0 <= rows <= MAX_ROWS:
        raise UsageError(f"--{option} {rows!r} is not a whole number from 0 to {MAX_ROWS}.")


def in_order(start: datetime, end: datetime) -> None:
    """
    Refuse a range whose *start* is after its *end* (aware datetimes), naming ``--start`` and ``--end``.

    :raises UsageError: ``--start 2026-05-01T00:00:00+00:00 is after --end 2026-04-30T23:59:59+00:00.``
    """
    if start > end:
        raise UsageError(f"--start {start.isoformat()} is after --end {end.isoformat()}.")


def parse_date(option: str, text: str, *, end_of_day: bool = False) -> datetime:
    """
    Parse *option*'s ISO 8601 date or time (naive means UTC): ``"2026-03-01"`` is 2026-03-01T00:00Z.

    *end_of_day*: a bare date means its last instant (2026-03-01T23:59:59.999999Z).

    :raises UsageError: naming *option* (``--before``) and *text*, if it is not one; for an ISO
        week the year does not have (``2021-W53``), saying how many it has; for a time whose UTC
        instant no ``datetime`` holds (``0001-01-01T00:00+14:00``).
    """
    from datetime import UTC, date, time

    from airflow_partitions.grains.keys import no_such_week

    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        week = no_such_week(text)
        expected = "is not an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00+02:00"
        raise UsageError(f"{option} {text!r} {week or expected}.") from None
    if end_of_day and len(text) == len(date.min.isoformat()):
        when = datetime.combine(when.date(), time.max)
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    try:
        when.astimezone(UTC)
    except OverflowError:
        raise UsageError(
            f"{option} {text!r} is outside the times a date can name (0001-01-01 to 9999-12-31 UTC)."
        ) from None
    return when


def in_years(start: datetime, end: datetime) -> None:
    """
    Refuse a range reaching outside the years partitions are made in, naming ``--start`` or ``--end``.

    Only from the year 0003 to 9997 do a grain's periods, their neighbours and members all lie in
    the years 0001 to 9999 a ``datetime`` holds (:data:`~airflow_partitions.grains.keys.FIRST_YEAR`).

    :raises UsageError: ``--end 9999-12-31T23:59:59.999999+00:00 is after the year 9997: partitions
        are made only in the years 0003 to 9997.``
    """
    from airflow_partitions.grains.keys import FIRST_YEAR, LAST_YEAR

    years = f"partitions are made only in the years {FIRST_YEAR:04d} to {LAST_YEAR}"
    if start.year < FIRST_YEAR:
        raise UsageError(f"--start {start.isoformat()} is before the year {FIRST_YEAR:04d}: {years}.")
    if end.year > LAST_YEAR:
        raise UsageError(f"--end {end.isoformat()} is after the year {LAST_YEAR}: {years}.")


def path_segment(text: str) -> str:
    """
    Return *text* as one segment of a URL's path: ``"a b/c"`` is ``a%20b%2Fc``, ``".."`` is ``%2E%2E``.

    A segment of dots only has them quoted too: as they are, a URL drops ``.`` and ``..`` as the
    current and parent folder (RFC 3986, 5.2.4), and a Dag id or partition key may be ``"."``.
    """
    if not text.strip("."):
        return "%2E" * len(text)
    return urllib.parse.quote(text, safe="")
