"""
The metadata database a command reads, opened without starting Airflow when its URL is plain.

``import airflow`` reads the configuration, initializes its settings and secrets masking: 2 to 3 s
of a new ``airflow-partitions status`` process, before any row is read. A read-only command needs
only the database's URL, which :func:`plain_url` finds as Airflow would when it is written out:

1. the environment variable ``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN``;
2. ``[database] sql_alchemy_conn`` of the configuration file (``$AIRFLOW_CONFIG``, else
   ``$AIRFLOW_HOME/airflow.cfg``; ``AIRFLOW_HOME`` defaults to ``~/airflow``);
3. Airflow's default, ``sqlite:///$AIRFLOW_HOME/airflow.db``.

Anything Airflow would resolve in a way of its own (a ``_cmd`` or ``_secret`` form, the
deprecated ``[core]`` spelling, a schema, engine or connect arguments, ``%`` interpolation in the
file) leaves the URL to Airflow: :func:`read_session` then opens Airflow's own session.
"""

from __future__ import annotations

import configparser
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SECTION = "database"
KEY = "sql_alchemy_conn"
#: Options that change how Airflow connects beyond the URL: if set, Airflow opens the session.
ENGINE_OPTIONS = ("sql_alchemy_schema", "sql_alchemy_connect_args", "sql_alchemy_engine_args")
#: Options whose value only Airflow resolves (a command, a secret, the deprecated ``[core]`` spelling).
AIRFLOWS_ONLY = [(SECTION, f"{KEY}_cmd"), (SECTION, f"{KEY}_secret"), ("core", KEY), ("core", f"{KEY}_cmd")]


def _env(section: str, key: str) -> str | None:
    return os.environ.get(f"AIRFLOW__{section.upper()}__{key.upper()}")


def _expanded(value: str) -> str:
    return os.path.expanduser(os.path.expandvars(value))


def airflow_home() -> Path:
    """Return ``$AIRFLOW_HOME`` (``~`` and variables expanded), or ``~/airflow`` as Airflow does."""
    return Path(_expanded(os.environ.get("AIRFLOW_HOME", "~/airflow")))


def config_file() -> Path:
    """Return ``$AIRFLOW_CONFIG``, else ``$AIRFLOW_HOME/airflow.cfg`` (which may not exist)."""
    named = os.environ.get("AIRFLOW_CONFIG")
    return Path(_expanded(named)) if named else airflow_home() / "airflow.cfg"


def plain_url() -> str | None:
    """
    Return the metadata database's URL as Airflow would resolve it, or ``None`` to leave it to Airflow.

    ``postgresql+psycopg2://airflow:airflow@localhost/airflow`` from the environment or the
    configuration file, else ``sqlite:////home/me/airflow/airflow.db`` (Airflow's default).
    ``None`` when Airflow would resolve it in a way of its own (see the module's docstring).
    """
    parser = configparser.RawConfigParser()
    try:
        parser.read(config_file())
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    if _own_options(parser):
        return None
    if (url := _env(SECTION, KEY)) is not None:
        return _expanded(url)
    if any(_env(s, k) is not None or parser.has_option(s, k) for s, k in AIRFLOWS_ONLY):
        return None
    if parser.has_option(SECTION, KEY):
        url = parser.get(SECTION, KEY)
        return None if "%" in url else _expanded(url)
    return f"sqlite:///{airflow_home()}/airflow.db"


def _own_options(parser: configparser.RawConfigParser) -> bool:
    """Whether the environment or the file *parser* read sets an option of :data:`ENGINE_OPTIONS`."""
    return any(_env(SECTION, o) or parser.get(SECTION, o, fallback="") for o in ENGINE_OPTIONS)


@contextmanager
def read_session() -> Iterator[Any]:
    """
    Open a connection to the metadata database for reading: on :func:`plain_url` without Airflow.

    A SQLAlchemy Core ``Connection`` (importing SQLAlchemy's ORM is a tenth of a second of a new
    process); through Airflow's own ``create_session`` (an ORM session) when the URL is Airflow's
    to resolve, or when this process has started Airflow already (its configuration, which a test
    or a plugin may have changed in memory, then decides). The readers take either
    (:func:`engine_of`, :func:`orm_session`). Nothing is written: it is rolled back and closed. The
    engine of a plain URL has no pool (``NullPool``): a reader may open a second connection of
    its own (:func:`~airflow_partitions.tools.state.kept.fingerprint.fingerprints`).
    """
    url = None if "airflow.settings" in sys.modules else plain_url()
    if url is None:
        from airflow.utils.session import create_session

        with create_session() as session:
            yield session
        return
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    engine = create_engine(url, poolclass=NullPool)  # no pool to wait on: each connect is its own
    try:
        with engine.connect() as connection:
            yield connection
            connection.rollback()
    finally:
        engine.dispose()


def one_moment(session: Any) -> None:
    """
    Have what *session* reads next in its transaction see the database as it was at one moment.

    An answer (a Dag's counts by state, its overview, a page of its partitions) is read in many
    queries and kept with the Dag's fingerprint (:mod:`~airflow_partitions.tools.state.
    fingerprint`), read first: at one moment they agree with each other, and what is kept is what
    the rows of its fingerprint say. Read at several moments, runs changing meanwhile showed
    ``states`` with 2 running while ``partitions`` had both succeeded, and a value read after a
    change kept under the print before it was served again once the print came back (a run
    cleared and running again).

    PostgreSQL: the transaction reads at REPEATABLE READ, if no statement has run in it yet (else
    each statement reads anew, as before). SQLite: a deferred ``BEGIN`` on the driver's connection
    unless it is in a transaction (in WAL mode every read then sees the database as at the first;
    a writer is never held up). For reads only: a SQLite transaction begun so cannot write once
    another process has written. *session*: an ORM session or a Core connection.
    """
    import warnings

    orm = hasattr(session, "get_bind")
    dialect = engine_of(session).dialect.name
    if dialect == "sqlite":
        driver = (session.connection() if orm else session).connection.driver_connection
        if not driver.in_transaction:
            driver.execute("BEGIN")
    elif dialect == "postgresql" and orm:
        with warnings.catch_warnings():  # a connection under way: "execution_options ignored"
            warnings.simplefilter("ignore")
            session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
    elif dialect == "postgresql" and not session.in_transaction():
        session.execution_options(isolation_level="REPEATABLE READ")


def moment_over(session: Any) -> None:
    """
    End what :func:`one_moment` began on *session*, before it writes: its reads are committed.

    A SQLite transaction begun for reading cannot write once another process has written (the
    write fails at once, ``database is locked``, whatever the lock timeout), and a REPEATABLE READ
    one on PostgreSQL fails on a row changed meanwhile (``could not serialize access``): a write
    that follows a read at one moment (``backfill --yes`` after its plan) goes in a transaction of
    its own. Nothing may have been written on *session* yet. *session*: an ORM session or a Core
    connection.
    """
    session.commit()


def engine_of(session: Any) -> Any:
    """Return the engine an ORM session or a Core connection (:func:`read_session`) reads through."""
    return session.get_bind() if hasattr(session, "get_bind") else session.engine


def orm_session(session: Any) -> Any:
    """Return an ORM session on the connection of *session* (itself if it is one): for Airflow's models."""
    if hasattr(session, "get_bind"):
        return session
    from sqlalchemy.orm import Session

    return Session(bind=session)


def secrets_backend() -> bool:
    """Whether Airflow is configured with a secrets backend of its own (``[secrets] backend``)."""
    if "airflow.configuration" in sys.modules:
        from airflow.configuration import conf

        return bool(conf.get("secrets", "backend", fallback=""))
    if _env("secrets", "backend"):
        return True
    parser = configparser.RawConfigParser()
    try:
        parser.read(config_file())
    except (configparser.Error, OSError, UnicodeDecodeError):
        return True
    return bool(parser.get("secrets", "backend", fallback=""))
