"""
Benchmark the Partitions view and the CLI on a real Airflow holding up to 1,000,000 partitions of a Dag.

A real Airflow (api-server with the plugin, dag-processor, scheduler) serializes the Dag files
below; then every process is stopped (so that nothing changes while measuring) and the rows a
live feed leaves are generated in bulk (:class:`BulkWriter`: ``dag_run``,
``asset_partition_dag_run``, ``asset_event``, ``partitioned_asset_key_log`` and the audit log,
column for column as Airflow 3.3.2's scheduler writes them), on SQLite or PostgreSQL (``--db``):

- ``bench_region_day``: 100 regions x N/100 New York days, each rolled up from its 24 UTC hours
  by a ``DimensionRollupMapper`` under ``CompletionDeadline(timedelta(hours=1))``: 96 % of the
  days ran complete a few minutes after the day ended, 1 % ran at the deadline with 20 of their
  24 hours (``ran incomplete``), 1 % failed, the last 2 % of the days wait, 12 to 23 hours in;
  for 0.5 % of the days that ran, an hour sent again two days later waits in a pending run
  beside the run (what ``discard`` lists);
- ``bench_minutes``: N minutes (70 days of them at 100,000), one run per minute key, and N/1,000
  keys in a day-first format its mapper refuses (an audit-log row each, as Airflow writes it);
- ``bench_month_of_minutes``: a month rolled up from its minutes (44,640), pending with all but
  600 of them (what ``status --key`` and the view's detail list page through);
- ``bench_store_region_day``: 10 groups of 5 stores (a ``LookupMapper``), N/10 group-days;
- ``bench_business_month``: months of US business days (``BusinessDayWindow``), N/10,000 (at
  least 12), the last waiting without its last 3 days;
- 195 small partitioned Dags of 30 days each, so that the overview lists 200.

``bench_region_day`` expects each day within ``--expected-within`` hours of its end (default 6,
so its failed days are late; 0: no expectation). Then (no scheduler) it starts the api-server as
after a new install (the store's folder deleted) and times the first answer of each face, then
waits until no Dag is warming (:mod:`airflow_partitions.tools.warming`: ``warmed_install_s``);
then again as after an upgrade (a package file's modification time moved: every answer's key
new, :func:`~airflow_partitions.tools.state.kept.store.environment`), and times ``status`` in a new
process once the Dags are warm. Then each figure *--repeats* times: one scrape of
``GET /partitions/metrics`` (every Dag), one page of ``GET /partitions/api/dags/{id}`` (1,000
partitions, the default), the overview ``GET /partitions/api/dags``, the Dag's page in a cold
headless Chromium (Debian's) to first paint; and in a new process each time (Python's start
included): ``airflow-partitions status bench_region_day`` and ``status --json``, from the
database and through the REST API (``--api-url``, the database unreachable for it), and once
``status --key`` of the month of minutes, ``explain --from-db``, ``discard``, ``requeue`` and
``clean`` (dry runs). Memory: the peak resident set of the api-server (``VmHWM``) and of each
command's process (GNU ``time``). Each limited figure (:data:`LIMITS`: issue 38's, and issue
52's of the first answers and the commands) is printed with its limit; the script exits 1 if
one is over. With ``--clean``, then
``clean --yes`` removes the bookkeeping of every run that fired and the page, the overview and
``status`` are timed again. ``--profile``: where a new ``status`` process spends its time
(imports, cProfile, each SQL statement with its plan) and the reader in-process.

Run: ``python benchmarks/bench_ui.py --partitions 100000 --data /work/bench-data`` (the database
kept in ``/work/bench-data/sqlite-100000`` and reused by the next run), ``--sizes
10000,100000,1000000`` for the trend (a table with each figure's growth per 10x), ``--json``,
``--no-browser``. Not a test: it times, and asserts only the limits.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import itertools
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.launcher import AirflowInstance, PostgresServer, _pg_binary, wait_until  # noqa: E402

NEW_YORK = ZoneInfo("America/New_York")
REGIONS = 100
SMALL_DAGS = 195
SMALL_DAYS = 30
STORE_GROUPS = 10
#: 50 stores, 5 to a group (``s007`` is in ``g01``), as ``bench_store_region_day``'s lookup.
STORES = {f"s{i:03d}": f"g{i // 5:02d}" for i in range(5 * STORE_GROUPS)}

DAG_FILE = (
    textwrap.dedent(
        """
    from datetime import timedelta

    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG, Asset, PartitionedAssetTimetable

    from airflow_partitions import (
        BusinessDayWindow, CompletionDeadline, CompositeKeyMapper, Day, DimensionRollupMapper,
        DimensionWindow, Hour, LookupMapper, Minutes, Month, TemporalMapper, TemporalRollupMapper,
        TemporalWindow,
    )

    STORES = {f"s{i:03d}": f"g{i // 5:02d}" for i in range(5 * STORE_GROUPS)}

    def consumer(dag_id, asset, mapper):
        timetable = PartitionedAssetTimetable(assets=Asset(asset), default_partition_mapper=mapper)
        with DAG(dag_id, schedule=timetable, catchup=False):
            EmptyOperator(task_id="done")

    consumer(
        "bench_region_day",
        "bench_region_hours",
        DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(
                ["region", "time"],
                {"time": TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC")},
            ),
            window=DimensionWindow(time=TemporalWindow(Hour())),
            wait_policy=CompletionDeadline(timedelta(hours=1)),
            expected_within=EXPECTED_WITHIN,
        ),
    )
    consumer("bench_minutes", "bench_minute_feed", TemporalMapper(Minutes(1)))
    consumer(
        "bench_month_of_minutes",
        "bench_month_minute_feed",
        TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Minutes(1))),
    )
    consumer(
        "bench_store_region_day",
        "bench_store_days",
        DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(
                ["store", "day"], {"store": LookupMapper(STORES), "day": TemporalMapper(Day())}
            ),
            window=DimensionWindow(store=list(STORES)),
        ),
    )
    consumer(
        "bench_business_month",
        "bench_business_days",
        TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
    )
    for i in range(SMALL_DAGS):
        consumer(f"bench_small_{i:03d}", f"bench_small_feed_{i:03d}", TemporalMapper(Day()))
    """
    )
    .replace("SMALL_DAGS", str(SMALL_DAGS))
    .replace("STORE_GROUPS", str(STORE_GROUPS))
)


def dag_file(expected_within_hours: float) -> str:
    """The Dag file, ``bench_region_day`` expected within that many hours of each day's end (0: not)."""
    within = f"timedelta(hours={expected_within_hours})" if expected_within_hours else "None"
    return DAG_FILE.replace("EXPECTED_WITHIN", within)


def utc_hours(day: date) -> list[datetime]:
    """The UTC hours of a New York day, from zoneinfo."""
    start = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK).astimezone(UTC)
    end = (datetime(day.year, day.month, day.day, tzinfo=NEW_YORK) + timedelta(days=1)).astimezone(UTC)
    return [start + timedelta(hours=h) for h in range((end - start) // timedelta(hours=1))]


Partition = tuple[str, datetime | None, str, list[str], datetime]
"""A downstream key, its run's ``partition_date``, its state (``pending``: no run yet), the upstream
keys it received and when its run was created (UTC)."""

#: Airflow 3.3's audit-log text for a key a consumer's mapper refuses (airflow/assets/manager.py).
REFUSED = (
    "Could not map partition_key '{key}' for asset (name='{asset}', uri='{asset}') in target Dag "
    "'{dag_id}'. This likely indicates that the partition mapper in the target Dag is misconfigured "
    "or does not support this partition key.\n{error}"
)
MS, SECOND = timedelta(milliseconds=1), timedelta(seconds=1)
FROM_REST_API: dict = {"from_rest_api": True}  # an asset event's extra, as the REST API adds it
NO_CONF: dict = {}


def _bound(rows: list[dict], columns: list, dialect) -> list[tuple]:
    """Each row's values as its column's SQLAlchemy type binds them for *dialect*, a tuple per row."""
    binds = [column.type._cached_bind_processor(dialect) for column in columns]
    constants: dict[int, object] = {}  # the rows hold every dict while we run: ids stay unique

    def bind(value, processor):
        if processor is None or value is None:
            return value
        if isinstance(value, dict):  # a constant (a fingerprint, an extra) is dumped once
            if id(value) not in constants:
                constants[id(value)] = processor(value)
            return constants[id(value)]
        return processor(value)

    names = [column.name for column in columns]
    return [tuple(bind(row[c], b) for c, b in zip(names, binds, strict=True)) for row in rows]


class BulkWriter:
    """
    Writes the rows Airflow's scheduler leaves for a partitioned feed, in bulk (SQLAlchemy Core).

    Column for column as Airflow 3.3.2 writes them for events posted through its REST API
    (compared with rows a real scheduler wrote: benchmarks/README.md): a pending run
    (``asset_partition_dag_run``) stamped with the Dag's ``rollup_fingerprint``, one asset event
    and one ``partitioned_asset_key_log`` row per upstream key, and for each partition that ran a
    ``dag_run`` as ``create_dagrun`` makes it (``asset_triggered__<run_after>_<8 letters>``, the
    scheduler's job, the Dag's version, a trace context) and ended 30 s later. Ids are given
    explicitly (nothing else writes: the scheduler is stopped), so one ``executemany`` per table
    and batch. Not written: task instances and ``dagrun_asset_event`` (the readers read neither)
    nor the REST API's own ``create_asset_event`` audit rows.
    """

    def __init__(self) -> None:
        from airflow import settings
        from airflow.jobs.job import Job
        from airflow.models.asset import AssetModel
        from airflow.models.dag_version import DagVersion
        from airflow.models.serialized_dag import SerializedDagModel
        from airflow.models.tasklog import LogTemplate
        from airflow.utils.session import create_session
        from sqlalchemy import func, select

        self.engine = settings.engine
        with create_session() as session:
            self.assets = dict(session.execute(select(AssetModel.name, AssetModel.id)).all())
            versions = select(DagVersion.dag_id, DagVersion.id).order_by(DagVersion.version_number)
            self.versions = dict(session.execute(versions).all())
            self.timetables = {d.dag_id: d.dag.timetable for d in session.scalars(select(SerializedDagModel))}
            self.job_id = session.scalar(select(func.max(Job.id)).where(Job.job_type == "SchedulerJob"))
            self.log_template_id = session.scalar(select(func.max(LogTemplate.id)))
            self.next_ids = {
                table.name: (session.scalar(select(func.max(table.c.id))) or 0) + 1
                for table in self._tables()
            }

    @staticmethod
    def _tables():
        from airflow.models.asset import AssetEvent, AssetPartitionDagRun, PartitionedAssetKeyLog
        from airflow.models.dagrun import DagRun
        from airflow.models.log import Log

        return [m.__table__ for m in (DagRun, AssetPartitionDagRun, AssetEvent, PartitionedAssetKeyLog, Log)]

    def _ids(self, table: str, count: int) -> range:
        first = self.next_ids[table]
        self.next_ids[table] = first + count
        return range(first, first + count)

    def mapper(self, dag_id: str, asset: str):
        """The Dag's partition mapper for *asset*, as the scheduler deserializes it."""
        return self.timetables[dag_id].get_partition_mapper(name=asset, uri=asset)

    def _insert(self, rows: dict[str, list[dict]]) -> None:
        """
        Insert the rows of each table, each value as the column's SQLAlchemy type binds it.

        One ``executemany`` per table on SQLite, one ``COPY`` (CSV) on PostgreSQL: SQLAlchemy's
        own executemany spends most of its time building parameters (4 of 5 s per 100,000 rows).
        """
        dialect = self.engine.dialect
        with self.engine.begin() as connection:
            cursor = connection.connection.driver_connection.cursor()
            for table in self._tables():
                if not (batch := rows.get(table.name)):
                    continue
                columns = list(batch[0])
                values = _bound(batch, [table.c[c] for c in columns], dialect)
                names = ", ".join(columns)
                if dialect.name == "postgresql":
                    text = io.StringIO()
                    csv.writer(text).writerows(values)  # None: an empty field, NULL to COPY
                    text.seek(0)
                    cursor.copy_expert(f"COPY {table.name} ({names}) FROM STDIN WITH (FORMAT csv)", text)
                else:
                    marks = ", ".join("?" * len(columns))
                    cursor.executemany(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", values)

    def finish(self) -> None:
        """Move PostgreSQL's id sequences past the ids given (SQLite takes the greatest id + 1)."""
        if self.engine.dialect.name == "postgresql":
            with self.engine.begin() as connection:
                for table in self._tables():
                    connection.exec_driver_sql(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"(SELECT max(id) FROM {table.name}))"
                    )

    def _event(self, asset_id: int, key: str, at: datetime) -> dict:
        [event_id] = self._ids("asset_event", 1)
        return {
            "id": event_id,
            "asset_id": asset_id,
            "extra": FROM_REST_API,
            "source_map_index": -1,
            "timestamp": at,
            "partition_key": key,
        }

    def runs(self, dag_id: str, asset: str, partitions: Iterable[Partition]) -> None:
        """Write each partition's pending run, asset events, key logs and (unless pending) Dag run."""
        from airflow.models.dagrun import DagRun
        from airflow.timetables.base import compute_rollup_fingerprint
        from airflow.utils.state import DagRunState
        from airflow.utils.types import DagRunTriggeredByType, DagRunType

        asset_id, fingerprint = self.assets[asset], compute_rollup_fingerprint(self.timetables[dag_id])
        partitions = iter(partitions)
        while batch := list(itertools.islice(partitions, 5000)):
            rows: dict[str, list[dict]] = {t.name: [] for t in self._tables()}
            for key, partition_date, state, upstreams, at in batch:
                created = at + timedelta(microseconds=random.randrange(1, 1_000_000))  # as utcnow()
                run_id = None
                if state != "pending":
                    [run_id] = self._ids("dag_run", 1)
                    ended = created + timedelta(seconds=30)
                    trace = f"00-{random.getrandbits(128):032x}-{random.getrandbits(64):016x}-00"
                    rows["dag_run"].append(
                        {
                            "id": run_id,
                            "dag_id": dag_id,
                            "run_id": DagRun.generate_run_id(
                                run_type=DagRunType.ASSET_TRIGGERED, logical_date=None, run_after=created
                            ),
                            "run_type": DagRunType.ASSET_TRIGGERED,
                            "triggered_by": DagRunTriggeredByType.ASSET,
                            "state": DagRunState(state),
                            "run_after": created,
                            "queued_at": created + 2 * MS,
                            "created_at": created + 3 * MS,
                            "start_date": created + 700 * MS,
                            "end_date": ended,
                            "last_scheduling_decision": ended - 2 * MS,
                            "updated_at": ended + MS,
                            "creating_job_id": self.job_id,
                            "scheduled_by_job_id": self.job_id,
                            "log_template_id": self.log_template_id,
                            "created_dag_version_id": self.versions[dag_id],
                            "conf": NO_CONF,
                            "context_carrier": {"traceparent": trace},  # its column type adds __var
                            "span_status": "not_started",
                            "clear_number": 0,
                            "partition_key": key,
                            "partition_date": partition_date,
                        }
                    )
                # The keys arrive 5 s apart, the last 5 s before the run (or the pending run's update).
                first = created - len(upstreams) * 5 * SECOND
                [pending_id] = self._ids("asset_partition_dag_run", 1)
                rows["asset_partition_dag_run"].append(
                    {
                        "id": pending_id,
                        "target_dag_id": dag_id,
                        "created_dag_run_id": run_id,
                        "partition_key": key,
                        "partition_date": None,  # temporal and composite mappers carry none
                        "rollup_fingerprint": fingerprint,
                        "created_at": first + MS,
                        "updated_at": created + 3 * MS if run_id else first + MS,
                    }
                )
                for j, upstream in enumerate(upstreams):
                    event = self._event(asset_id, upstream, first + j * 5 * SECOND)
                    [log_id] = self._ids("partitioned_asset_key_log", 1)
                    rows["asset_event"].append(event)
                    rows["partitioned_asset_key_log"].append(
                        {
                            "id": log_id,
                            "asset_id": asset_id,
                            "asset_event_id": event["id"],
                            "asset_partition_dag_run_id": pending_id,
                            "source_partition_key": upstream,
                            "target_dag_id": dag_id,
                            "target_partition_key": key,
                            "created_at": event["timestamp"] + 2 * MS,
                        }
                    )
            self._insert(rows)

    def refusals(self, dag_id: str, asset: str, keys: list[tuple[str, datetime]]) -> None:
        """Write each ``(key, when)`` the Dag's mapper refuses: its asset event and audit-log row."""
        mapper, asset_id = self.mapper(dag_id, asset), self.assets[asset]
        rows: dict[str, list[dict]] = {"asset_event": [], "log": []}
        for key, at in keys:
            try:
                mapper.to_downstream(key)
            except Exception as error:  # as Airflow catches it
                message = f"{type(error).__name__}: {error}"
            else:
                raise ValueError(f"{dag_id} maps {key!r}: not a refusal")
            rows["asset_event"].append(self._event(asset_id, key, at))
            [log_id] = self._ids("log", 1)
            extra = REFUSED.format(key=key, asset=asset, dag_id=dag_id, error=message)
            rows["log"].append(
                {"id": log_id, "dttm": at + 4 * MS, "event": "failed to map partition_key", "extra": extra}
            )
        self._insert(rows)


def region_days(n: int, today: date) -> Iterator[Partition]:
    """
    The partitions of ``bench_region_day``: 100 regions x n/100 days ending yesterday.

    Besides 0.5 % of the days that ran, the pending run one of their hours sent again opened.
    """
    days = max(1, n // REGIONS)
    first = today - timedelta(days=days)
    for d in range(days):
        day = first + timedelta(days=d)
        hours = utc_hours(day)
        keys = [f"{h:%Y-%m-%dT%H}" for h in hours]
        anchor = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK).astimezone(UTC)
        closes = hours[-1] + timedelta(hours=1)
        for r in range(REGIONS):
            region = f"r{r:03d}"
            i = d * REGIONS + r
            if d >= days - max(1, days // 50):  # the last 2 % of the days wait
                state, upstream, created = "pending", keys[: 12 + i % 12], closes
            elif i % 100 == 7:  # 1 %: at the deadline with 20 of 24 hours
                state, upstream, created = (
                    "success",
                    keys[:10] + keys[14:],
                    closes + timedelta(hours=1, seconds=40),
                )
            elif i % 100 == 13:
                state, upstream, created = "failed", keys, closes + timedelta(minutes=3)
            else:
                state, upstream, created = "success", keys, closes + timedelta(minutes=3)
            yield (f"{region}|{day}", anchor, state, [f"{region}|{k}" for k in upstream], created)
            if state != "pending" and i % 200 == 51:  # an hour sent again two days later
                yield (
                    f"{region}|{day}",
                    None,
                    "pending",
                    [f"{region}|{keys[5]}"],
                    closes + timedelta(days=2),
                )


def minutes(n: int, today: date) -> Iterator[Partition]:
    """The partitions of ``bench_minutes``: n minutes ending at today's midnight, one key each."""
    end = datetime(today.year, today.month, today.day, tzinfo=UTC)
    for i in range(n):
        start = end - timedelta(minutes=n - i)
        key = f"{start:%Y-%m-%dT%H:%M}"
        yield (
            key,
            start,
            "failed" if i % 500 == 3 else "success",
            [key],
            start + timedelta(minutes=1, seconds=5),
        )


def refused_minutes(n: int, today: date) -> list[tuple[str, datetime]]:
    """n/1,000 keys of ``bench_minute_feed`` in a day-first format its minutes mapper refuses."""
    end = datetime(today.year, today.month, today.day, tzinfo=UTC)
    every = timedelta(minutes=1000)
    return [(f"{end - k * every:%d/%m/%Y %H:%M}", end - k * every) for k in range(max(1, n // 1000), 0, -1)]


def month_of_minutes(today: date) -> list[Partition]:
    """Last month of ``bench_month_of_minutes``, pending with all but its last 600 minutes (44,040 keys)."""
    first = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
    start = datetime(first.year, first.month, 1, tzinfo=UTC)
    end = datetime(today.year, today.month, 1, tzinfo=UTC)
    keys = [
        f"{start + timedelta(minutes=m):%Y-%m-%dT%H:%M}"
        for m in range(int((end - start).total_seconds() // 60))
    ]
    return [(f"{first:%Y-%m}", start, "pending", keys[:-600], end)]


def store_region_days(n: int, today: date) -> Iterator[Partition]:
    """
    The partitions of ``bench_store_region_day``: each group's day from its 5 stores' days, n/10 in all.

    1 % of them failed; the last 2 % of the days wait with 1 to 4 of their stores.
    """
    days = max(1, n // 10 // STORE_GROUPS)
    for d in range(days):
        day = today - timedelta(days=days - d)
        anchor = datetime(day.year, day.month, day.day, tzinfo=UTC)
        for g in range(STORE_GROUPS):
            stores = [f"{store}|{day}" for store, group in STORES.items() if group == f"g{g:02d}"]
            i = d * STORE_GROUPS + g
            created = anchor + timedelta(days=1, minutes=10)
            if d >= days - max(1, days // 50):
                yield f"g{g:02d}|{day}", anchor, "pending", stores[: 1 + i % 4], created
            else:
                yield f"g{g:02d}|{day}", anchor, "failed" if i % 100 == 13 else "success", stores, created


def business_months(n: int, today: date, to_upstream) -> list[Partition]:
    """
    The partitions of ``bench_business_month``: n/10,000 months (at least 12) up to last month.

    Each rolls up its US business days (*to_upstream*: the Dag's own mapper); last month waits
    without its last 3.
    """
    months = max(12, n // 10_000)
    first = today.replace(day=1)
    rows = []
    for m in range(months, 0, -1):
        year, month = divmod(first.year * 12 + first.month - 1 - m, 12)
        start = datetime(year, month + 1, 1, tzinfo=UTC)
        key = f"{start:%Y-%m}"
        keys = sorted(to_upstream(key))
        created = (start + timedelta(days=32)).replace(day=1, hour=6)
        rows.append(
            (key, start, "pending", keys[:-3], created) if m == 1 else (key, start, "success", keys, created)
        )
    return rows


def small(today: date) -> list[Partition]:
    rows = []
    for d in range(SMALL_DAYS):
        day = today - timedelta(days=SMALL_DAYS - d)
        anchor = datetime(day.year, day.month, day.day, tzinfo=UTC)
        rows.append(
            (day.isoformat(), anchor, "success", [day.isoformat()], anchor + timedelta(days=1, minutes=2))
        )
    return rows


def generate(n: int, today: date) -> None:
    """Write every Dag's partitions (the scheduler stopped): see the module's docstring."""
    writer = BulkWriter()
    writer.runs("bench_region_day", "bench_region_hours", region_days(n, today))
    writer.runs("bench_minutes", "bench_minute_feed", minutes(n, today))
    writer.refusals("bench_minutes", "bench_minute_feed", refused_minutes(n, today))
    writer.runs("bench_month_of_minutes", "bench_month_minute_feed", month_of_minutes(today))
    writer.runs("bench_store_region_day", "bench_store_days", store_region_days(n, today))
    months = business_months(
        n, today, writer.mapper("bench_business_month", "bench_business_days").to_upstream
    )
    writer.runs("bench_business_month", "bench_business_days", months)
    for i in range(SMALL_DAGS):
        writer.runs(f"bench_small_{i:03d}", f"bench_small_feed_{i:03d}", small(today))
    writer.finish()


def states_of(url: str, token: str) -> dict[str, int]:
    """Return the counts by state of the Dag page *url* answers (``stale`` among them)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        return dict(sorted(json.loads(answer.read())["states"].items()))


def timed_get(url: str, token: str) -> tuple[float, int, int]:
    """GET *url* as the user of *token*; return (seconds, bytes, Dags in the answer marked warming)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        body = answer.read()
    seconds, text = time.perf_counter() - started, body.decode(errors="replace")
    warming = len(re.findall(r'"warming":true|airflow_partitions_warming\{[^}]*\} 1\n', text))
    return seconds, len(body), warming


def cold_start(airflow: AirflowInstance, how: str, log) -> str:
    """
    Start the api-server again as after a new *how*: ``install`` (no store) or ``upgrade``; return a token.

    An install: the store's folder deleted (no answer, no copy of the pending runs). An upgrade:
    the modification time of a file of the package moved, as an installer writes it, so every
    answer's key is new (:func:`~airflow_partitions.tools.state.kept.store.environment`); the copy of
    the pending runs stays.
    """
    for name in ("api-server", "execution-api"):
        with contextlib.suppress(ValueError):  # not started yet
            airflow.kill(name, 15)
    if how == "install":
        shutil.rmtree(Path(airflow.env["AIRFLOW_HOME"]) / "partitions-cache", ignore_errors=True)
    else:
        os.utime(ROOT / "airflow_partitions" / "__init__.py")
    for name in ("api-server", "execution-api"):
        airflow.start_process(name)
    wait_until(airflow._healthy, timeout=300, what=f"the api-server at {airflow.url}")
    log(f"  the api-server started again as after an {how}")
    return airflow._bearer()


def warmed(base: str, token: str, timeout: float = 3600) -> float:
    """Seconds until a metrics scrape has no Dag warming (read every 5 s)."""
    begun = time.perf_counter()
    while timed_get(base + "/metrics", token)[2]:
        if time.perf_counter() - begun > timeout:
            raise RuntimeError(f"Dags still warming after {timeout:.0f} s")
        time.sleep(5)
    return time.perf_counter() - begun


def peak_rss_mb(pid: int) -> float:
    """The peak resident set of process *pid* and its children so far (``VmHWM``), in MB."""
    total = 0
    for candidate in [pid, *_children(pid)]:
        try:
            status = Path(f"/proc/{candidate}/status").read_text()
        except OSError:
            continue
        total = max(
            total, next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
        )
    return total / 1024


def _children(pid: int) -> list[int]:
    try:
        found = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return found + [c for child in found for c in _children(child)]


def first_paint(url: str, token: str, repeats: int) -> list[float]:
    """Seconds from navigation to the first paint after the grid is drawn, each in a cold Chromium."""
    from tests.integration.browser import Browser, chromium

    if chromium() is None:
        return []
    times = []
    for _ in range(repeats):
        with Browser() as browser:  # a new profile: a cold cache
            browser.set_cookie(url, "_token", token)  # Airflow's UI session
            started = time.perf_counter()
            browser.open(url)
            browser.wait_for("document.body.dataset.rendered !== undefined", timeout=120)
            browser.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            times.append(time.perf_counter() - started)
    return times


def profile(log) -> None:
    """Profile the reader in this process: one page of the large Dag and the overview (cProfile)."""
    import cProfile
    import pstats

    from airflow_partitions.tools.state import consumer_dags, consumer_state

    for what, call in (
        (
            "consumer_state(bench_region_day, limit=1000)",
            lambda: consumer_state("bench_region_day", limit=1000),
        ),
        ("consumer_dags(summary=True)", lambda: consumer_dags(summary=True)),
    ):
        call()  # warm: the timetables deserialized, the memos filled
        profiler = cProfile.Profile()
        profiler.runcall(call)
        log(f"  profile of {what}, warm:")
        stats = pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative")
        stats.print_stats(25)


#: The limits: each figure in seconds, memory in MB (any process). Issue 38's of the answers
#: once the store holds them; issue 52's of the first answers after an install (no store) and an
#: upgrade (every answer's key new), whole or marked warming, and of the commands.
LIMITS = {
    "api_page_s": 1.0,
    "overview_s": 1.0,
    "metrics_s": 1.0,
    "first_paint_s": 1.5,
    "status_s": 1.0,
    "status_json_s": 1.0,
    "status_api_s": 1.0,
    "status_api_json_s": 1.0,
    # issue 50: backfill's dry run at 100,000 partitions, through the route and --api-url
    "backfill_plan_s": 1.0,
    "backfill_plan_api_s": 1.0,
    "peak_rss_mb": 1024,
    **{
        f"{face}_{how}_s": 2.0
        for face in ("metrics", "api_page", "api_page_minutes", "overview", "month_of_minutes_page")
        for how in ("install", "upgrade")
    },
    "status_after_upgrade_s": 1.0,
    "status_month_of_minutes_s": 1.0,
    "explain_s": 1.0,
    "discard_s": 1.0,
    "requeue_s": 1.0,
    "clean_dry_run_s": 2.0,
}

#: Run the CLI with every SQL statement recorded (time to execute, text, parameters), pickled to argv[1].
SQL_TRACE = """
import atexit, pickle, runpy, sys, time
from sqlalchemy import event
from sqlalchemy.engine import Engine

statements, out = [], sys.argv.pop(1)

@event.listens_for(Engine, "before_cursor_execute")
def begin(connection, cursor, statement, parameters, context, executemany):
    connection.info["began"] = time.perf_counter()

@event.listens_for(Engine, "after_cursor_execute")
def end(connection, cursor, statement, parameters, context, executemany):
    statements.append((time.perf_counter() - connection.info.pop("began"), statement, parameters))

atexit.register(lambda: pickle.dump(statements, open(out, "wb")))
sys.argv[0] = "airflow-partitions"
runpy.run_module("airflow_partitions.tools.cli", run_name="__main__")
"""


def run_cli(
    args: list[str], env: dict[str, str], python: list[str] | None = None
) -> tuple[float, float, str]:
    """
    Run ``airflow-partitions ARGS`` in a new process; return (seconds, its peak RSS in MB, stderr).

    :raises RuntimeError: if it exits with neither 0 nor 1 (its documented answers).
    """
    # GNU time reads the peak: a child forked from this (large) process would report ours.
    with tempfile.NamedTemporaryFile("r") as rss, tempfile.TemporaryFile() as err:
        command = ["/usr/bin/time", "-f", "%M", "-o", rss.name, sys.executable]
        command += [*(python or ["-m", "airflow_partitions.tools.cli"]), *args]
        begun = time.perf_counter()
        done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=err, check=False)
        seconds = time.perf_counter() - begun
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        peak_kb = int(rss.read().split()[-1])
    if done.returncode not in (0, 1):
        raise RuntimeError(f"airflow-partitions {' '.join(args[:2])} failed: {stderr[-2000:]}")
    return seconds, peak_kb / 1024, stderr


def timed_cli(name: str, args: list[str], env: dict[str, str], repeats: int, figures: dict, log) -> None:
    """Run ``airflow-partitions ARGS`` *repeats* times, a new process each; record the median and peak RSS."""
    runs = [run_cli(args, env)[:2] for _ in range(repeats)]
    figures[f"{name}_s"] = round(statistics.median(t for t, _ in runs), 3)
    figures[f"{name}_rss_mb"] = round(max(rss for _, rss in runs))
    log(f"  {' '.join(args[:4])}: median {figures[f'{name}_s']:.2f} s, {figures[f'{name}_rss_mb']} MB")


def profile_status(env: dict[str, str], url: str, log) -> None:
    """
    Where a new ``status bench_region_day`` process spends its time, written under a new folder.

    Its imports (``python -X importtime``: the top-level modules by cumulative time), its
    cProfile, and every SQL statement it ran: the time to execute it in the process, then
    replayed here on a new connection (execute and fetch every row) with the database's plan
    (``EXPLAIN QUERY PLAN`` on SQLite, ``EXPLAIN`` on PostgreSQL) and the tables it scans whole
    (or a whole index of).
    """
    import cProfile  # noqa: F401 - run as a module below
    import pickle
    import pstats

    import sqlalchemy

    folder = Path(tempfile.mkdtemp(prefix="bench-ui-profile-"))
    args = ["status", "bench_region_day"]
    seconds, _, stderr = run_cli(args, env, ["-X", "importtime", "-m", "airflow_partitions.tools.cli"])
    imports = [line.split("|") for line in stderr.splitlines() if line.startswith("import time:")][1:]
    top = sorted(
        ((int(c), name.rstrip()) for _, c, name in imports if not name.startswith("  ")), reverse=True
    )
    (folder / "importtime.txt").write_text(stderr)
    log(f"  profile of `status bench_region_day` in a new process ({folder}):")
    log(
        f"    -X importtime: {seconds:.2f} s in all, imports {sum(c for c, _ in top) / 1e6:.2f} s; "
        "the largest:"
    )
    for cumulative, name in top[:12]:
        log(f"      {cumulative / 1e6:6.2f} s {name.strip()}")
    run_cli(
        args, env, ["-m", "cProfile", "-o", str(folder / "status.prof"), "-m", "airflow_partitions.tools.cli"]
    )
    with open(folder / "cprofile.txt", "w") as text:
        pstats.Stats(str(folder / "status.prof"), stream=text).sort_stats("cumulative").print_stats(60)
    log(f"    cProfile: {folder / 'cprofile.txt'} (the first 60 by cumulative time)")
    trace = folder / "sql.pickle"
    seconds, _, _ = run_cli(args, env, ["-c", SQL_TRACE, str(trace)])
    statements = pickle.loads(trace.read_bytes())
    engine = sqlalchemy.create_engine(url)
    explain = "EXPLAIN QUERY PLAN " if url.startswith("sqlite") else "EXPLAIN "
    replayed, tables = [], set(sqlalchemy.inspect(engine).get_table_names())
    with engine.connect() as connection:
        cursor = connection.connection.driver_connection.cursor()
        for executed, statement, parameters in statements:
            if not statement.lstrip().upper().startswith("SELECT"):
                continue
            begun = time.perf_counter()
            cursor.execute(statement, parameters)
            rows = len(cursor.fetchall())
            took = time.perf_counter() - begun
            cursor.execute(explain + statement, parameters)
            plan = [" ".join(str(c) for c in row) for row in cursor.fetchall()]
            # SQLite's SCAN (table or index, whole; SEARCH is a lookup), PostgreSQL's Seq Scan.
            words = [line.replace("Seq Scan on", "SCAN").split() for line in plan]
            whole = sorted({w[w.index("SCAN") + 1] for w in words if "SCAN" in w} & tables)
            replayed.append((took, executed, rows, whole, statement, plan))
    replayed.sort(key=lambda r: r[0], reverse=True)
    with open(folder / "sql.txt", "w") as text:
        for took, executed, rows, whole, statement, plan in replayed:
            text.write(f"-- {took:.3f} s replayed ({executed:.3f} s executed), {rows} rows, scans {whole}\n")
            text.write(statement.strip() + "\n" + "\n".join(plan) + "\n\n")
    log(
        f"    SQL: {len(statements)} statements (SELECT: {len(replayed)}), replayed "
        f"{sum(r[0] for r in replayed):.2f} s, in the process {sum(s[0] for s in statements):.2f} s "
        f"to execute; the slowest ({folder / 'sql.txt'}):"
    )
    for took, _, rows, whole, statement, _ in replayed[:10]:
        first = " ".join(statement.split())[:110]
        log(f"      {took:6.3f} s, {rows:>8} rows, scans {','.join(whole) or '-'}: {first}")


def postgres(root: Path, keep: bool) -> PostgresServer:
    """A PostgreSQL cluster in *root*: the one kept there started again, or a new one."""
    server = PostgresServer(root, keep=keep)
    if not (server.data / "PG_VERSION").exists():
        server.start()
        return server
    # PostgresServer.start makes a new cluster; a kept one only needs pg_ctl (as in its docstring).
    options = f"-c listen_addresses=127.0.0.1 -p {server.port} -k {root} -c fsync=off"
    log = str(root / "pg.log")
    server._run(_pg_binary("pg_ctl"), "-D", str(server.data), "-o", options, "-l", log, "-w", "start")
    return server


@contextlib.contextmanager
def partitioned_airflow(n: int, db: str, data: str | None, expected_within: float, log):
    """
    An api-server (no scheduler) on a metadata database holding *n* partitions per large Dag.

    With *data*, the database lives in ``DATA/<db>-<n>`` and is reused when it was made there
    before (``generated.json`` says when and for what day); else it is made, then deleted.
    Yields the instance and the day the partitions end on.
    """
    home = Path(data) / f"{db}-{n}" if data else Path(tempfile.mkdtemp(prefix="bench-ui-"))
    marker = home / "generated.json"
    if data and not marker.exists() and home.exists() and any(home.iterdir()):
        raise SystemExit(f"{home} holds an unfinished database (no generated.json): delete it first")
    home.mkdir(parents=True, exist_ok=True)
    server = postgres(home / "pg", keep=bool(data)) if db == "postgresql" else None
    extra_env = {
        "AIRFLOW__CORE__MIN_SERIALIZED_DAG_UPDATE_INTERVAL": "30",
        "AIRFLOW_PARTITIONS_WARMING_WAIT": "0.5",
    }
    airflow = AirflowInstance(
        home / "dags", home=home / "airflow", sql_alchemy_conn=server and server.url, extra_env=extra_env
    )
    try:
        os.environ.update({k: v for k, v in airflow.env.items() if k.startswith("AIRFLOW")})
        if not marker.exists():
            (home / "dags").mkdir(exist_ok=True)
            (home / "dags" / "bench_ui_dags.py").write_text(dag_file(expected_within))
            airflow.start()
            airflow.wait_for_dags(
                ["bench_region_day", "bench_business_month", f"bench_small_{SMALL_DAGS - 1:03d}"]
            )
            for name in ("scheduler", "dag-processor", "api-server", "execution-api"):
                airflow.kill(name, 15)  # nothing may change the rows; the api-server starts cold below
            today, started = datetime.now(UTC).date(), time.perf_counter()
            generate(n, today)
            made = {"partitions": n, "db": db, "today": str(today), "expected_within_hours": expected_within}
            made |= {
                "made": datetime.now(UTC).isoformat(timespec="seconds"),
                "seconds": time.perf_counter() - started,
            }
            marker.write_text(json.dumps(made))
            log(f"  {n:,} partitions per large Dag written in {made['seconds']:.0f} s ({home})")
        made = json.loads(marker.read_text())
        if made["expected_within_hours"] != expected_within:
            raise SystemExit(f"{home} was made with --expected-within {made['expected_within_hours']}")
        log(f"  the database of {made['made']} ({db}, partitions ending {made['today']})")
        yield airflow, date.fromisoformat(made["today"])  # the api-server started by measure()
    finally:
        airflow.stop()
        if server:
            server.stop()
        if not data:
            shutil.rmtree(home, ignore_errors=True)


def measure(
    airflow: AirflowInstance,
    n: int,
    today: date,
    repeats: int,
    browser: bool,
    log,
    cleaning: bool = False,
) -> dict:
    """Time every face on *airflow*'s database (see the module's docstring); return the figures."""
    base = f"{airflow.url}/partitions"
    month = month_of_minutes(today)[0][0]
    figures: dict[str, object] = {"partitions": n}
    faces = (
        ("metrics", "/metrics"),
        ("api_page", "/api/dags/bench_region_day"),
        ("api_page_minutes", "/api/dags/bench_minutes"),
        ("overview", "/api/dags"),
        ("month_of_minutes_page", "/api/dags/bench_month_of_minutes"),
        ("month_of_minutes_missing", f"/api/dags/bench_month_of_minutes/partitions/{month}?list=missing"),
        # A state filter of its own (issue 50): the stale days against the failed ones, same Dag.
        ("stale_page", "/api/dags/bench_region_day?state=stale"),
        ("failed_page", "/api/dags/bench_region_day?state=failed"),
        # backfill's dry run (the plan of every partition not success), its first page as the
        # command prints it, and as the view's action asks it.
        ("backfill_plan", "/api/dags/bench_region_day/backfill?limit=50"),
    )
    token = first_answers(airflow, base, faces[:5], figures, log)
    timed_cli("status_after_upgrade", ["status", "bench_region_day"], airflow.env, 1, figures, log)
    for name, path in faces:
        warm = [timed_get(base + path, token)[:2] for _ in range(repeats)]
        figures[f"{name}_s"] = round(statistics.median(t for t, _ in warm), 3)
        figures[f"{name}_kb"] = round(warm[-1][1] / 1024)
        log(f"  {path}: median {figures[f'{name}_s']:.2f} s ({figures[f'{name}_kb']} KB)")
    figures["states"] = states_of(base + "/api/dags/bench_region_day", token)
    log(f"  bench_region_day by state: {figures['states']}")
    if browser:
        paints = first_paint(f"{base}/dags/bench_region_day", token, repeats)
        if paints:
            figures["first_paint_s"] = round(statistics.median(paints), 3)
            log(f"  first paint in a cold browser: median {figures['first_paint_s']:.2f} s of {len(paints)}")
    env = airflow.env
    # Through the REST API, as on managed Airflow: the metadata database unreachable for it.
    unreachable = {**env, "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "nosuchdialect://nobody@127.0.0.1:1/none"}
    by_api = ["--api-url", airflow.url, "--token", token]
    region_hour = f"r000|{today - timedelta(days=3)}T15"
    for name, args, environment, times in (
        ("status", ["status", "bench_region_day"], env, repeats),
        ("status_json", ["status", "bench_region_day", "--json"], env, repeats),
        ("status_api", ["status", "bench_region_day", *by_api], unreachable, repeats),
        ("status_api_json", ["status", "bench_region_day", "--json", *by_api], unreachable, repeats),
        ("status_month_of_minutes", ["status", "bench_month_of_minutes", "--key", month], env, 1),
        ("status_stale", ["status", "bench_region_day", "--state", "stale"], env, repeats),
        ("backfill_plan_api", ["backfill", "bench_region_day", *by_api], unreachable, repeats),
        ("backfill_plan_api_json", ["backfill", "bench_region_day", "--json", *by_api], unreachable, 1),
        ("backfill_plan_cli", ["backfill", "bench_region_day"], env, 1),
        ("explain", ["explain", "--from-db", "--dag", "bench_region_day", region_hour], env, 1),
        ("discard", ["discard", "bench_region_day"], env, 1),
        ("requeue", ["requeue", "bench_region_day", "--start", str(today - timedelta(days=3))], env, 1),
        ("clean_dry_run", ["clean", "--before", "2100-01-01"], env, 1),
    ):
        timed_cli(name, args, environment, times, figures, log)
    api_rss = peak_rss_mb(airflow.pids["api-server"])
    figures["api_server_peak_rss_mb"] = round(api_rss)
    figures["peak_rss_mb"] = max(round(api_rss), *(v for k, v in figures.items() if k.endswith("_rss_mb")))
    log(f"  peak RSS: api-server {api_rss:.0f} MB, any process {figures['peak_rss_mb']} MB")
    if cleaning:
        cleaned = subprocess.run(
            [
                sys.executable,
                "-m",
                "airflow_partitions.tools.cli",
                "clean",
                "--before",
                "2100-01-01",
                "--yes",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        log(f"  clean: {cleaned.stdout.splitlines()[0]}")
        for name, path in (("api_page", "/api/dags/bench_region_day"), ("overview", "/api/dags")):
            cold = timed_get(base + path, token)[0]
            warm = [timed_get(base + path, token)[0] for _ in range(repeats)]
            figures[f"{name}_cleaned_s"] = round(statistics.median(warm), 3)
            figures[f"{name}_cleaned_cold_s"] = round(cold, 3)
            log(f"  after clean {path}: cold {cold:.2f} s, then median {statistics.median(warm):.2f} s")
        timed_cli("status_cleaned", ["status", "bench_region_day"], env, repeats, figures, log)
    return figures


def first_answers(airflow: AirflowInstance, base: str, faces: tuple, figures: dict, log) -> str:
    """
    Time the first answer of each of *faces* after an install, then after an upgrade (:func:`cold_start`).

    Each under 2 s, whole or marked warming; then how long until no Dag is warming
    (``warmed_install_s``, ``warmed_upgrade_s``). Returns a token of the api-server left running.
    """
    token = ""
    for how in ("install", "upgrade"):
        token = cold_start(airflow, how, log)
        for name, path in faces:
            cold, size, warming = timed_get(base + path, token)
            figures[f"{name}_{how}_s"] = round(cold, 3)
            figures[f"{name}_{how}_warming"] = warming
            log(f"  after the {how}, {path}: {cold:.2f} s ({size / 1024:.0f} KB, {warming} Dags warming)")
        figures[f"warmed_{how}_s"] = round(warmed(base, token), 1)
        log(f"  every Dag read in the background {figures[f'warmed_{how}_s']:.0f} s after the {how}")
    return token


def over_limits(figures: dict, log) -> list[str]:
    """Print each limited figure against its limit (:data:`LIMITS`); return those over."""
    over = []
    for key, limit in LIMITS.items():
        if key in figures:
            bad = figures[key] > limit
            over += [key] * bad
            log(f"  {key:<20} {figures[key]:>9} (limit {limit}) {'OVER' if bad else 'ok'}")
    return over


def trend(results: list[dict]) -> None:
    """Print a Markdown table of the figures by size, with each figure's growth factor per 10x."""
    keys = [k for k in results[-1] if k.endswith(("_s", "_mb")) and all(k in r for r in results)]
    sizes = [r["partitions"] for r in results]
    print("\n| figure | " + " | ".join(f"{n:,}" for n in sizes) + " | limit | growth per 10x |")
    print("|---|" + "---:|" * (len(sizes) + 2))
    for key in keys:
        values = [r[key] for r in results]
        growth = [
            f"x{(b / a) ** (1 / math.log10(m / n)):.2f}" if a else ""
            for a, b, n, m in zip(values, values[1:], sizes, sizes[1:], strict=False)
        ]
        print(
            f"| {key} | " + " | ".join(map(str, values)) + f" | {LIMITS.get(key, '')} | {', '.join(growth)} |"
        )


#: Columns whose values differ from run to run (ids, times, keys, random parts): compared by
#: kind only (NULL or not, Python type, a dict's shape, the run id's pattern), the others by value.
VARYING = {
    "id", "run_id", "queued_at", "start_date", "end_date", "run_after", "last_scheduling_decision",
    "created_at", "updated_at", "context_carrier", "partition_key", "partition_date", "timestamp",
    "asset_event_id", "asset_partition_dag_run_id", "created_dag_run_id", "source_partition_key",
    "target_partition_key", "dttm",
}  # fmt: skip
RUN_ID = re.compile(r"asset_triggered__\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00_[A-Za-z0-9]{8}$")


def _shape(value: object) -> object:
    """A value with each leaf replaced by its type's name (``{"a": {"b": "str"}}``)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    return type(value).__name__


def _same(table: str, column: str, airflow: object, ours: object) -> bool:
    """Whether our value of *table.column* is as Airflow's (by kind for the varying columns)."""
    if table == "dag_run" and column == "run_id":
        return bool(RUN_ID.match(str(airflow)) and RUN_ID.match(str(ours)))
    if table == "log" and column == "extra":  # the same text but for its key
        a, b = str(airflow), str(ours)
        return a.replace(a.split("'")[1], "KEY") == b.replace(b.split("'")[1], "KEY")
    if column in VARYING:
        return _shape(airflow) == _shape(ours)
    return airflow == ours


def check_rows(log) -> list[str]:
    """
    Compare the generator's rows with those a real scheduler writes; return the differences.

    A real Airflow (scheduler included) gets, through its REST API, a minute of ``bench_minutes``,
    the 24 hours of a region's day of ``bench_region_day`` and a key the minutes mapper refuses;
    once their runs ended, the scheduler is stopped and :class:`BulkWriter` writes the same
    shapes for other keys. Each table's first row (Airflow's) and last (ours) of each Dag are
    compared column by column.
    """
    from sqlalchemy import select

    folder = Path(tempfile.mkdtemp(prefix="bench-ui-check-"))
    (folder / "bench_ui_dags.py").write_text(dag_file(6))
    airflow = AirflowInstance(folder)
    airflow.start()
    try:
        airflow.wait_for_dags(["bench_region_day", "bench_minutes"], timeout=600)
        day = datetime.now(UTC).date() - timedelta(days=3)
        hours = [f"{h:%Y-%m-%dT%H}" for h in utc_hours(day)]
        airflow.create_asset_event("bench_minute_feed", partition_key=f"{day}T10:00")
        airflow.create_asset_event("bench_minute_feed", partition_key=f"{day:%d/%m/%Y} 10:00")
        for hour in hours:
            airflow.create_asset_event("bench_region_hours", partition_key=f"r001|{hour}")
        airflow.wait_for_runs("bench_minutes", 1, timeout=300)
        airflow.wait_for_runs("bench_region_day", 1, timeout=300)
        airflow.kill("scheduler", 15)
        os.environ.update({k: v for k, v in airflow.env.items() if k.startswith("AIRFLOW")})
        writer, at = BulkWriter(), datetime.now(UTC)
        writer.runs(
            "bench_minutes", "bench_minute_feed", [(f"{day}T11:00", at, "success", [f"{day}T11:00"], at)]
        )
        anchor = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK).astimezone(UTC)
        region = [f"r002|{hour}" for hour in hours]
        writer.runs(
            "bench_region_day", "bench_region_hours", [(f"r002|{day}", anchor, "success", region, at)]
        )
        writer.refusals("bench_minutes", "bench_minute_feed", [(f"{day:%d/%m/%Y} 11:00", at)])
        feeds = {"bench_minutes": "bench_minute_feed", "bench_region_day": "bench_region_hours"}
        differences = []
        with writer.engine.connect() as connection:
            for table in writer._tables():
                for dag_id, asset in feeds.items():
                    where = {
                        "dag_run": table.c.get("dag_id") == dag_id,
                        "asset_event": table.c.get("asset_id") == writer.assets[asset],
                        "log": table.c.get("event") == "failed to map partition_key",
                    }.get(table.name, table.c.get("target_dag_id") == dag_id)
                    rows = connection.execute(select(table).where(where).order_by(table.c.id)).all()
                    real, ours = rows[0]._asdict(), rows[-1]._asdict()
                    differences += [
                        f"{table.name}.{name} ({dag_id}): Airflow {real[name]!r}, ours {ours[name]!r}"
                        for name in real
                        if not _same(table.name, name, real[name], ours[name])
                    ]
                    log(f"  {table.name} ({dag_id}): {len(real)} columns compared")
        return differences
    finally:
        airflow.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions of each large Dag")
    parser.add_argument("--sizes", help="comma-separated sizes for the trend (overrides --partitions)")
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument(
        "--data",
        help="keep each size's database in DATA/<db>-<partitions> and reuse it (default: made and deleted)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object (a list with --sizes)")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument(
        "--profile", action="store_true", help="also profile a new `status` process and the reader in-process"
    )
    parser.add_argument(
        "--expected-within",
        type=float,
        default=6,
        help="bench_region_day's expected_within in hours (default 6: its failed days are late; 0: none)",
    )
    parser.add_argument(
        "--clean",
        action="store_true",
        help="then `clean --yes` every fired run's bookkeeping and measure again (not with --data)",
    )
    parser.add_argument(
        "--check-rows",
        action="store_true",
        help="only compare the generated rows with a real scheduler's (exit 1 if they differ)",
    )
    args = parser.parse_args()
    if args.check_rows:
        differences = check_rows(print)
        print("\n".join(differences) or "the generated rows are as Airflow's scheduler writes them")
        sys.exit(1 if differences else 0)
    if args.clean and args.data:
        parser.error("--clean deletes rows: it would change the kept database (drop --data)")
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.partitions]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the Airflow it started, too

    def log(text: str) -> None:
        print(text, file=sys.stderr if args.json else sys.stdout, flush=True)

    log(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    # Byte-code for the package, as pip writes at install: under PYTHONDONTWRITEBYTECODE (set in
    # some shells and CI images) every new `status` process compiled it again, 0.1 s of each.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "airflow_partitions")], check=True)
    results = []
    if len(sizes) == 1:
        log(f"{sizes[0]:,} partitions, {args.db}:")
        with partitioned_airflow(sizes[0], args.db, args.data, args.expected_within, log) as (airflow, today):
            figures = measure(airflow, sizes[0], today, args.repeats, not args.no_browser, log, args.clean)
            figures |= {"db": args.db, "expected_within_hours": args.expected_within}
            figures["load_average"] = round(os.getloadavg()[0], 1)
            if args.profile:
                profile_status(airflow.env, airflow.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"], log)
                profile(log)
        results.append(figures)
    else:  # a process per size: Airflow's ORM binds this process to the first size's database
        for n in sizes:
            command = [sys.executable, __file__, "--partitions", str(n), "--repeats", str(args.repeats)]
            command += ["--expected-within", str(args.expected_within), "--db", args.db, "--json"]
            command += [*["--no-browser"] * args.no_browser, *["--data", args.data] * bool(args.data)]
            ran = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
            results.append(json.loads(ran.stdout))
    over = []
    for figures in results:
        log(f"{figures['partitions']:,} partitions against the limits:")
        over += over_limits(figures, log)
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results))
    else:
        trend(results)
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
