"""
The state reader's Core tables match the installed Airflow's ORM models, column by column.

``tools/state/tables.py`` declares only the columns the reader reads; if an Airflow upgrade renames
or retypes one, this test fails (not a user's ``status``). Types are compared as the SQLite and
PostgreSQL dialects write them in DDL, with nullability and primary keys.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

from airflow_partitions.tools.state import tables

TABLES = [t for t in vars(tables).values() if isinstance(t, Table)]


def _airflow_tables() -> dict[str, Table]:
    import airflow.models.asset
    import airflow.models.dag
    import airflow.models.dag_version
    import airflow.models.dagrun
    import airflow.models.log
    import airflow.models.serialized_dag
    import airflow.models.variable  # noqa: F401  (each registers its tables)
    from airflow.models.base import Base

    return dict(Base.metadata.tables)


def described(table: Table) -> dict[str, tuple[str, str, bool, bool]]:
    """Return each column of *table*: its DDL type on SQLite and PostgreSQL, nullable, primary key."""
    return {
        c.name: (
            str(c.type.compile(dialect=sqlite.dialect())),
            str(c.type.compile(dialect=postgresql.dialect())),
            bool(c.nullable),
            bool(c.primary_key),
        )
        for c in table.columns
    }


def test_every_table_the_reader_reads_is_declared() -> None:
    assert sorted(t.name for t in TABLES) == [
        "asset",
        "asset_active",
        "asset_event",
        "asset_partition_dag_run",
        "dag",
        "dag_run",
        "dag_version",
        "log",
        "partitioned_asset_key_log",
        "serialized_dag",
        "task_outlet_asset_reference",
        "variable",
    ]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_columns_match_airflows_models(table: Table) -> None:
    theirs = _airflow_tables()[table.name]
    ours = described(table)
    assert ours == {name: described(theirs)[name] for name in ours}


def test_a_renamed_or_retyped_column_is_caught() -> None:
    """The comparison fails on a deliberate mistake: a wrong width, a wrong name."""
    from sqlalchemy import Column, Integer, MetaData, String

    wrong_width = Table("dag_run", MetaData(), Column("partition_key", String(200), nullable=True))
    wrong_name = Table("dag_run", MetaData(), Column("partition", Integer))
    theirs = described(_airflow_tables()["dag_run"])
    assert described(wrong_width)["partition_key"] != theirs["partition_key"]
    assert not set(described(wrong_name)) <= set(theirs)


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        (datetime(2026, 3, 10, 4), datetime(2026, 3, 10, 4, tzinfo=UTC)),
        (
            datetime(2026, 3, 10, 0, tzinfo=timezone(timedelta(hours=-4))),
            datetime(2026, 3, 10, 4, tzinfo=UTC),
        ),
        (None, None),
    ],
)
def test_times_are_read_as_aware_utc(stored: datetime | None, read: datetime | None) -> None:
    value = tables.UtcDateTime().process_result_value(stored, sqlite.dialect())
    assert value == read
    assert value is None or value.utcoffset() == timedelta(0)


def test_a_naive_time_is_refused_when_bound() -> None:
    with pytest.raises(ValueError, match="aware datetime"):
        tables.UtcDateTime().process_bind_param(datetime(2026, 3, 10, 4), sqlite.dialect())
