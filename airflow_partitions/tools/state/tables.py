"""
The Airflow tables the tools read, as SQLAlchemy Core tables: only the columns they read.

One definition for the readers (:mod:`airflow_partitions.tools.state`) and the writers
(:mod:`airflow_partitions.tools.write`: what they select, delete and update, and the key-log rows
the watch adds); Airflow's ORM models only where Airflow's own code takes them (the asset events
``requeue`` hands to its ``AssetManager``, a Dag run cleared or created by its functions, an
audit-log row). Reading through these instead of the models spares a process that only reads
(``airflow-partitions status`` from the database) importing them, about a second of its start. Each
column's name, type, nullability and primary key are Airflow 3.3's;
``tests/unit/tools/test_tables.py`` compares them with the installed Airflow's ORM metadata, so a
column renamed or retyped by an Airflow upgrade fails there, not in a user's ``status``.

Times are :class:`UtcDateTime`, as in Airflow's models: aware UTC datetimes on every database
(SQLite gives them back naive; they are UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    TIMESTAMP,
    Boolean,
    Column,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    Uuid,
)

#: Airflow's ``ID_LEN``: the width of Dag ids, run ids and partition keys.
ID_LEN = 250
#: The width of an asset's name and URI.
ASSET_LEN = 1500


class UtcDateTime(TypeDecorator[datetime]):
    """
    A time stored as UTC (Airflow's ``UtcDateTime``): written aware, read back aware in UTC.

    ``2026-03-10 04:00:00`` read from SQLite is ``2026-03-10T04:00:00+00:00``; a PostgreSQL
    ``timestamptz`` is converted to UTC.

    :raises ValueError: if a naive datetime is bound (its zone is unknown).
    """

    impl = TIMESTAMP(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise ValueError(f"expected an aware datetime for a UTC time column, got {value!r}")
        value = value.astimezone(UTC)
        # MySQL before 8.0.19 takes timestamps naive (Airflow's type does the same).
        return value.replace(tzinfo=None) if dialect.name == "mysql" else value

    def process_result_value(self, value: Any, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

dag = Table(
    "dag",
    metadata,
    Column("dag_id", String(ID_LEN), primary_key=True),
    Column("timetable_summary", Text, nullable=True),
    Column("is_paused", Boolean, nullable=False),
    Column("timetable_partitioned", Boolean, nullable=False),
    Column("is_stale", Boolean, nullable=False),
)

dag_run = Table(
    "dag_run",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("dag_id", String(ID_LEN), nullable=False),
    Column("run_id", String(ID_LEN), nullable=False),
    Column("partition_key", String(ID_LEN), nullable=True),
    Column("state", String(50), nullable=True),
    Column("run_type", String(50), nullable=False),
    Column("created_at", UtcDateTime, nullable=True),
    Column("run_after", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=True),
    Column("partition_date", UtcDateTime, nullable=True),
    Column("start_date", UtcDateTime, nullable=True),
)

#: A pending partitioned run (``AssetPartitionDagRun``); fired once ``created_dag_run_id`` is set.
asset_partition_dag_run = Table(
    "asset_partition_dag_run",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("target_dag_id", String(ID_LEN), nullable=False),
    Column("created_dag_run_id", Integer, nullable=True),
    Column("partition_key", String(ID_LEN), nullable=False),
    Column("rollup_fingerprint", JSON, nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

#: The keys a pending run received (``PartitionedAssetKeyLog``): one row per key and event.
partitioned_asset_key_log = Table(
    "partitioned_asset_key_log",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("asset_id", Integer, nullable=False),
    Column("asset_event_id", Integer, nullable=False),
    Column("asset_partition_dag_run_id", Integer, nullable=False),
    Column("source_partition_key", String(ID_LEN), nullable=False),
    Column("target_dag_id", String(ID_LEN), nullable=False),
    Column("target_partition_key", String(ID_LEN), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

asset = Table(
    "asset",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(ASSET_LEN), nullable=False),
    Column("uri", String(ASSET_LEN), nullable=False),
)

#: Which tasks update an asset (their outlets): the Dags that produce it.
task_outlet_asset_reference = Table(
    "task_outlet_asset_reference",
    metadata,
    Column("asset_id", Integer, primary_key=True),
    Column("dag_id", String(ID_LEN), primary_key=True),
    Column("task_id", String(ID_LEN), primary_key=True),
)

asset_active = Table(
    "asset_active",
    metadata,
    Column("name", String(ASSET_LEN), primary_key=True),
    Column("uri", String(ASSET_LEN), primary_key=True),
)

asset_event = Table(
    "asset_event",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("asset_id", Integer, nullable=False),
    Column("partition_key", String(ID_LEN), nullable=True),
    Column("timestamp", UtcDateTime, nullable=False),
)

#: Airflow's audit log (``Log``), where refused keys are written.
log = Table(
    "log",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("dttm", UtcDateTime, nullable=True),
    Column("dag_id", String(ID_LEN), nullable=True),
    Column("event", String(60), nullable=False),
    Column("owner", String(500), nullable=True),
    Column("extra", Text, nullable=True),
)

#: Airflow's Variables (``Variable``): a rollup's members may be read from one (a digest of its
#: stored value keys the answers that depend on them).
variable = Table(
    "variable",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("key", String(ID_LEN), nullable=False),
    Column("val", Text, nullable=False),
    Column("is_encrypted", Boolean, nullable=False),
)

dag_version = Table(
    "dag_version",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("dag_id", String(ID_LEN), nullable=False),
    Column("version_number", Integer, nullable=False),
)

serialized_dag = Table(
    "serialized_dag",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("dag_id", String(ID_LEN), nullable=False),
    Column("dag_hash", String(32), nullable=False),
    Column("dag_version_id", Uuid, nullable=False),
)


def latest_serialized(dag_ids: list[str]) -> Any:
    """
    Select ``(dag_id, id, dag_hash)`` of the latest serialized version of each of *dag_ids*.

    The latest is the greatest ``dag_version.version_number`` of the Dag, as Airflow's
    ``SerializedDagModel._latest_by_version_select`` picks it (unique per Dag, unlike a creation time).
    """
    from sqlalchemy import func, select

    newest = (
        select(dag_version.c.dag_id, func.max(dag_version.c.version_number).label("newest"))
        .join(serialized_dag, serialized_dag.c.dag_version_id == dag_version.c.id)
        .where(dag_version.c.dag_id.in_(dag_ids))
        .group_by(dag_version.c.dag_id)
        .subquery()
    )
    return (
        select(serialized_dag.c.dag_id, serialized_dag.c.id, serialized_dag.c.dag_hash)
        .join(dag_version, serialized_dag.c.dag_version_id == dag_version.c.id)
        .join(
            newest,
            (dag_version.c.dag_id == newest.c.dag_id) & (dag_version.c.version_number == newest.c.newest),
        )
    )
