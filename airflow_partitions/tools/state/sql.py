"""
SQL shared by the queries of every Airflow table the state reader reads (SQLite and PostgreSQL).

A key column's time part and prefix, a time range or one key selected on it, chunks of ids for
``IN`` lists, a state's name and a naive UTC time as Airflow's models give them back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any


def time_part_sql(column: Any) -> Any:
    """
    Return SQL for :func:`time_part` of a key column: what follows the last ``|`` (SQLite and PostgreSQL).

    ``rtrim(key, replace(key, '|', ''))`` strips every trailing character that is not ``|``, leaving
    the key up to its last ``|``; the time part is what follows.
    """
    from sqlalchemy import func

    return func.substr(column, func.length(func.rtrim(column, func.replace(column, "|", ""))) + 1)


def in_range_sql(part: Any, start: str | None, end: str | None) -> list[Any]:
    """Return SQL conditions for :func:`in_time_range` on a time-part expression."""
    from sqlalchemy import func

    conditions = []
    if start is not None:
        conditions.append(part >= start)
    if end is not None:
        conditions.append(func.substr(part, 1, len(end)) <= end)
    return conditions


#: How many values one ``IN`` list holds (:func:`chunks`): SQLite takes 32,766 query parameters
#: since 3.32 and 999 before it; PostgreSQL's drivers take more. Each statement on ``dag_run`` by
#: partition key reads all of the Dag's runs (Airflow indexes ``dag_id``, not ``partition_key``),
#: so fewer, longer lists read them fewer times: 2,000 keys at 500 a list read a Dag of a million
#: runs four times.
CHUNK = 5_000 if sqlite3.sqlite_version_info >= (3, 32, 0) else 500


def chunks(items: list[Any], size: int = CHUNK) -> Iterator[list[Any]]:
    """Yield *items* in lists of at most *size* (SQLite takes a bounded number of query parameters)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def rows_among(
    connection: sqlite3.Connection, query: str, first: tuple[Any, ...], items: Iterable[Any]
) -> Iterator[tuple[Any, ...]]:
    """
    Yield the rows of *query* (SQLite text ending ``IN ({})``) in the store's file for *items*, per chunk.

    *first*: the parameters before the ``IN`` list (``(db,)``); *items* are read once each, in order.
    A SQLite error goes to the caller.
    """
    for chunk in chunks(sorted(set(items))):
        yield from connection.execute(query.format(",".join("?" * len(chunk))), (*first, *chunk))


def rows_by_id(session: Any, query: str, ids: list[int]) -> list[tuple[Any, ...]]:
    """
    Return the rows of *query* (SQL text ending ``WHERE id IN ({})``) for *ids*, per :data:`CHUNK`.

    Run on the driver's own cursor, in the session's transaction (the placeholders its
    ``paramstyle`` takes): for 27,000 ids (the open pending runs at a million partitions)
    SQLAlchemy took 0.15 s to expand the ``IN`` list and 0.15 s more to hand the rows over one by
    one, the database 0.07 s to answer. *session*: an ORM session or a Core connection.
    """
    mark = placeholder(session)
    return driver_rows(
        session, ((query.format(",".join([mark] * len(chunk))), tuple(chunk)) for chunk in chunks(ids))
    )


def ids_without(session: Any, table: str, condition: str, ids: list[int]) -> list[int]:
    """
    Return those of *ids* that no row of *table* with that id meets *condition* for (SQL on ``t``).

    ``ids_without(session, "asset_partition_dag_run", "t.created_dag_run_id IS NULL", open_ids)``:
    the pending runs fired or deleted since. PostgreSQL compares in one anti-join over the ids
    sent as one array, sending back only the ids it finds (27,000 open pending runs at a million
    partitions: 0.06 s, against 0.08 to 0.14 s reading their rows back); SQLite reads the rows
    that meet it (:func:`rows_by_id`).
    """
    connection = _connection(session)
    if connection.dialect.name != "postgresql":
        meeting = rows_by_id(session, f"SELECT t.id FROM {table} t WHERE {condition} AND t.id IN ({{}})", ids)
        found = {row[0] for row in meeting}
        return [i for i in ids if i not in found]
    statement = (
        f"SELECT i FROM unnest(%s::integer[]) AS i "
        f"WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE t.id = i AND {condition})"
    )
    return [row[0] for row in driver_rows(connection, [(statement, ("{" + ",".join(map(str, ids)) + "}",))])]


def _connection(session: Any) -> Any:
    """Return the Core connection of *session* (an ORM session or a Core connection)."""
    return session.connection() if hasattr(session, "get_bind") else session


def placeholder(session: Any) -> str:
    """Return how SQL for the driver of *session* marks a parameter: ``?`` (SQLite), else ``%s``."""
    return "?" if _connection(session).dialect.paramstyle == "qmark" else "%s"


def driver_rows(session: Any, statements: Iterable[tuple[str, tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """
    Return the rows of *statements* (SQL in the driver's placeholders, parameters), on the driver's cursor.

    In the transaction of *session* (an ORM session or a Core connection): SQLAlchemy hands rows
    over one by one (5 µs each), the driver's cursor in C.
    """
    cursor = _connection(session).connection.cursor()
    try:
        found: list[tuple[Any, ...]] = []
        for statement, parameters in statements:
            cursor.execute(statement, parameters)
            found.extend(cursor.fetchall())
        return found
    finally:
        cursor.close()


def state_name(state: Any) -> str:
    return str(getattr(state, "value", state))


def selected_keys(column: Any, start: str | None, end: str | None, only: str | None) -> list[Any]:
    """
    Return SQL conditions selecting partition keys (a column): *only* that key, else the time range.

    *start* and *end* bound the time part of the key (the part after the last ``|``:
    ``2026-04-01`` of ``vic|2026-04-01``), compared on their own length (``end="2026-04"`` keeps
    all of April); ``None`` leaves that side open.
    """
    return [column == only] if only is not None else in_range_sql(time_part_sql(column), start, end)


def prefix_and_bucket_sql(column: Any, length: int, by_prefix: bool) -> tuple[Any, Any]:
    """
    Select a key's prefix before its time part and the first *length* characters of its time part.

    ``jfk|`` and ``2013-03`` of ``jfk|2013-03-10``; the prefix is ``""`` unless *by_prefix*, an
    expression all the same: PostgreSQL refuses a constant in ``GROUP BY``.
    """
    from sqlalchemy import func

    part = time_part_sql(column)
    cut = func.length(column) - func.length(part) if by_prefix else 0
    return func.substr(column, 1, cut), func.substr(part, 1, length)


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite's aggregates return naive datetimes: they are UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value
