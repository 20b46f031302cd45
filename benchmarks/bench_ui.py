"""
Benchmark the Partitions view and ``status`` on a real Airflow holding 100,000 partitions of a Dag.

Builds a metadata database (SQLite) through Airflow's own models: a real Airflow (api-server with
the plugin, dag-processor) serializes the Dag files below, then its scheduler is stopped (so that
nothing changes while measuring) and the rows a live feed leaves are written with Airflow's ORM
models (``DagRun``, ``AssetPartitionDagRun``, ``AssetEvent``, ``PartitionedAssetKeyLog``):

- ``bench_region_day``: 100 regions x N/100 New York days, each rolled up from its 24 UTC hours
  by a ``DimensionRollupMapper`` under ``CompletionDeadline(timedelta(hours=1))``: 96 % of the
  days ran complete a few minutes after the day ended, 1 % ran at the deadline with 20 of their
  24 hours (``ran incomplete``), 1 % failed, the last 2 % of the days wait, 12 to 23 hours in;
- ``bench_minutes``: N minutes (70 days of them at 100,000), one run per minute key;
- ``bench_month_of_minutes``: a month rolled up from its minutes (44,640), pending with all but
  600 of them (what ``status --key`` and the view's detail list page through);
- 197 small partitioned Dags of 30 days each, so that the overview lists 200.

``bench_region_day`` expects each day within ``--expected-within`` hours of its end (default 6,
so its failed days are late; 0: no expectation). Then times, through the api-server's HTTP API,
each figure *--repeats* times (the first, cold answer apart): one scrape of
``GET /partitions/metrics`` (every Dag), one page of ``GET /partitions/api/dags/{id}`` (1,000
partitions, the default), the overview ``GET /partitions/api/dags``, the Dag's page in a cold
headless Chromium (Debian's) to first paint, and ``airflow-partitions status bench_region_day``
(a new process each time, Python's start included), from the database and through the REST API
(``--api-url``, the database unreachable for it). With ``--clean``, then ``airflow-partitions
clean --yes`` removes the bookkeeping of every run that fired (pending-run and key-log rows) and
the page, the overview and ``status`` are timed again. Memory: the api-server's peak resident set
(``VmHWM``) and the status process's (``ru_maxrss``).

Run: ``python benchmarks/bench_ui.py --partitions 100000 --json`` (one JSON object on stdout),
``--sizes 1000,10000,100000`` for the trend (a table; a database per size), ``--no-browser``.
Prints numbers, asserts none: a plain script.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.launcher import AirflowInstance  # noqa: E402

NEW_YORK = ZoneInfo("America/New_York")
REGIONS = 100
SMALL_DAGS = 197
SMALL_DAYS = 30

DAG_FILE = textwrap.dedent(
    """
    from datetime import timedelta

    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG, Asset, PartitionedAssetTimetable

    from airflow_partitions import (
        CompletionDeadline, CompositeKeyMapper, Day, DimensionRollupMapper, DimensionWindow, Hour,
        Minutes, Month, TemporalMapper, TemporalRollupMapper, TemporalWindow,
    )

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
    for i in range(SMALL_DAGS):
        consumer(f"bench_small_{i:03d}", f"bench_small_feed_{i:03d}", TemporalMapper(Day()))
    """
).replace("SMALL_DAGS", str(SMALL_DAGS))


def dag_file(expected_within_hours: float) -> str:
    """The Dag file, ``bench_region_day`` expected within that many hours of each day's end (0: not)."""
    within = f"timedelta(hours={expected_within_hours})" if expected_within_hours else "None"
    return DAG_FILE.replace("EXPECTED_WITHIN", within)


def utc_hours(day: date) -> list[datetime]:
    """The UTC hours of a New York day, from zoneinfo."""
    start = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK).astimezone(UTC)
    end = (datetime(day.year, day.month, day.day, tzinfo=NEW_YORK) + timedelta(days=1)).astimezone(UTC)
    return [start + timedelta(hours=h) for h in range((end - start) // timedelta(hours=1))]


class Writer:
    """Writes the rows a live feed leaves, with Airflow's models, in one session per batch."""

    def __init__(self) -> None:
        from airflow.models.asset import AssetModel
        from airflow.utils.session import create_session

        with create_session() as session:
            self.assets = dict(session.query(AssetModel.name, AssetModel.id))
        self.now = datetime.now(UTC)

    def runs(
        self, dag_id: str, asset: str, partitions: list[tuple[str, datetime, str, list[str], datetime]]
    ) -> None:
        """
        Write each ``(key, period start, state, upstream keys, created)`` as Airflow would.

        ``state`` ``pending``: a pending partitioned run with its keys logged; else a Dag run of
        that state, created at *created*, with the pending run it came from and its keys.
        """
        from airflow.models.asset import AssetEvent, AssetPartitionDagRun, PartitionedAssetKeyLog
        from airflow.models.dagrun import DagRun
        from airflow.utils.session import create_session
        from airflow.utils.state import DagRunState
        from airflow.utils.types import DagRunTriggeredByType, DagRunType
        from sqlalchemy import insert

        asset_id = self.assets[asset]
        for first in range(0, len(partitions), 2000):
            batch = partitions[first : first + 2000]
            with create_session() as session:
                runs = {}
                for key, anchor, state, _, created in batch:
                    if state == "pending":
                        continue
                    run = DagRun(
                        dag_id=dag_id,
                        run_id=DagRun.generate_run_id(run_type=DagRunType.ASSET_TRIGGERED, run_after=created),
                        run_type=DagRunType.ASSET_TRIGGERED,
                        state=DagRunState(state),
                        run_after=created,
                        start_date=created,
                        triggered_by=DagRunTriggeredByType.ASSET,
                        partition_key=key,
                        partition_date=anchor,
                    )
                    run.created_at = run.queued_at = created
                    run.end_date = created + timedelta(seconds=30)
                    runs[key] = run
                session.add_all(runs.values())
                session.flush()
                pending = [
                    {
                        "target_dag_id": dag_id,
                        "partition_key": key,
                        "partition_date": anchor,
                        "created_dag_run_id": runs[key].id if key in runs else None,
                        "created_at": created - timedelta(hours=1),
                    }
                    for key, anchor, _, _, created in batch
                ]
                ids = session.scalars(
                    insert(AssetPartitionDagRun).returning(AssetPartitionDagRun.id), pending
                ).all()
                events = [
                    {"asset_id": asset_id, "partition_key": upstream, "timestamp": created, "extra": {}}
                    for (_, _, _, upstreams, created) in batch
                    for upstream in upstreams
                ]
                event_ids = iter(session.scalars(insert(AssetEvent).returning(AssetEvent.id), events).all())
                logs = [
                    {
                        "asset_id": asset_id,
                        "asset_event_id": next(event_ids),
                        "asset_partition_dag_run_id": apdr_id,
                        "source_partition_key": upstream,
                        "target_dag_id": dag_id,
                        "target_partition_key": key,
                        "created_at": created,
                    }
                    for apdr_id, (key, _, _, upstreams, created) in zip(ids, batch, strict=True)
                    for upstream in upstreams
                ]
                session.execute(insert(PartitionedAssetKeyLog), logs)


def region_days(n: int, today: date) -> list[tuple[str, datetime, str, list[str], datetime]]:
    """The partitions of ``bench_region_day``: 100 regions x n/100 days ending yesterday."""
    days = max(1, n // REGIONS)
    first = today - timedelta(days=days)
    rows = []
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
            rows.append((f"{region}|{day}", anchor, state, [f"{region}|{k}" for k in upstream], created))
    return rows


def minutes(n: int, today: date) -> list[tuple[str, datetime, str, list[str], datetime]]:
    """The partitions of ``bench_minutes``: n minutes ending at today's midnight, one key each."""
    end = datetime(today.year, today.month, today.day, tzinfo=UTC)
    rows = []
    for i in range(n):
        start = end - timedelta(minutes=n - i)
        key = f"{start:%Y-%m-%dT%H:%M}"
        rows.append(
            (
                key,
                start,
                "failed" if i % 500 == 3 else "success",
                [key],
                start + timedelta(minutes=1, seconds=5),
            )
        )
    return rows


def month_of_minutes(today: date) -> list[tuple[str, datetime, str, list[str], datetime]]:
    """Last month of ``bench_month_of_minutes``, pending with all but its last 600 minutes (44,040 keys)."""
    first = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
    start = datetime(first.year, first.month, 1, tzinfo=UTC)
    end = datetime(today.year, today.month, 1, tzinfo=UTC)
    keys = [
        f"{start + timedelta(minutes=m):%Y-%m-%dT%H:%M}"
        for m in range(int((end - start).total_seconds() // 60))
    ]
    return [(f"{first:%Y-%m}", start, "pending", keys[:-600], end)]


def small(today: date) -> list[tuple[str, datetime, str, list[str], datetime]]:
    rows = []
    for d in range(SMALL_DAYS):
        day = today - timedelta(days=SMALL_DAYS - d)
        anchor = datetime(day.year, day.month, day.day, tzinfo=UTC)
        rows.append(
            (day.isoformat(), anchor, "success", [day.isoformat()], anchor + timedelta(days=1, minutes=2))
        )
    return rows


def timed_get(url: str, token: str) -> tuple[float, int]:
    """GET *url* as the user of *token*; return (seconds, bytes)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        body = answer.read()
    return time.perf_counter() - started, len(body)


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


def timed_cli(args: list[str], env: dict[str, str], repeats: int) -> list[float]:
    """Seconds each of *repeats* runs of ``airflow-partitions ARGS`` took, a new process each."""
    times = []
    for _ in range(repeats):
        begun = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "airflow_partitions.tools.cli", *args],
            env=env,
            capture_output=True,
            check=False,
        )
        times.append(time.perf_counter() - begun)
        if done.returncode not in (0, 1):
            raise RuntimeError(
                f"airflow-partitions {' '.join(args[:2])} failed: {done.stderr.decode()[-2000:]}"
            )
    return times


def measure(
    n: int,
    repeats: int,
    browser: bool,
    log,
    profiling: bool = False,
    keep: str | None = None,
    expected_within: float = 6,
    cleaning: bool = False,
) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="bench-ui-dags-"))
    (folder / "bench_ui_dags.py").write_text(dag_file(expected_within))
    airflow = AirflowInstance(folder, extra_env={"AIRFLOW__CORE__MIN_SERIALIZED_DAG_UPDATE_INTERVAL": "30"})
    airflow.start()
    try:
        airflow.wait_for_dags(["bench_region_day", "bench_minutes", f"bench_small_{SMALL_DAGS - 1:03d}"])
        airflow.kill("scheduler", 15)  # nothing may change the rows while we measure
        os.environ.update({k: v for k, v in airflow.env.items() if k.startswith("AIRFLOW")})
        today = datetime.now(UTC).date()
        started = time.perf_counter()
        writer = Writer()
        writer.runs("bench_region_day", "bench_region_hours", region_days(n, today))
        writer.runs("bench_minutes", "bench_minute_feed", minutes(n, today))
        writer.runs("bench_month_of_minutes", "bench_month_minute_feed", month_of_minutes(today))
        for i in range(SMALL_DAGS):
            writer.runs(f"bench_small_{i:03d}", f"bench_small_feed_{i:03d}", small(today))
        log(f"  {n:,} partitions per Dag written in {time.perf_counter() - started:.0f} s")
        if profiling:
            profile(log)
        base, token = f"{airflow.url}/partitions", airflow._bearer()
        month = month_of_minutes(today)[0][0]
        figures: dict[str, object] = {"partitions": n, "expected_within_hours": expected_within}
        for name, path in (
            ("metrics", "/metrics"),
            ("api_page", "/api/dags/bench_region_day"),
            ("api_page_minutes", "/api/dags/bench_minutes"),
            ("overview", "/api/dags"),
            ("month_of_minutes_page", "/api/dags/bench_month_of_minutes"),
            ("month_of_minutes_missing", f"/api/dags/bench_month_of_minutes/partitions/{month}?list=missing"),
        ):
            cold, size = timed_get(base + path, token)
            warm = [timed_get(base + path, token)[0] for _ in range(repeats)]
            figures[f"{name}_s"] = round(statistics.median(warm), 3)
            figures[f"{name}_cold_s"] = round(cold, 3)
            figures[f"{name}_kb"] = round(size / 1024)
            log(
                f"  {path}: cold {cold:.2f} s, then median {statistics.median(warm):.2f} s "
                f"({size / 1024:.0f} KB)"
            )
        if browser:
            paints = first_paint(f"{base}/dags/bench_region_day", token, repeats)
            if paints:
                figures["first_paint_s"] = round(statistics.median(paints), 3)
                log(
                    f"  first paint in a cold browser: median {statistics.median(paints):.2f} s "
                    f"of {len(paints)}"
                )
        status = timed_cli(["status", "bench_region_day"], airflow.env, repeats)
        figures["status_s"] = round(statistics.median(status), 3)
        # Through the REST API, as on managed Airflow: the metadata database unreachable for it.
        unreachable = {
            **airflow.env,
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "nosuchdialect://nobody@127.0.0.1:1/none",
        }
        by_api = ["status", "bench_region_day", "--api-url", airflow.url, "--token", token]
        api_status = timed_cli(by_api, unreachable, repeats)
        figures["status_api_s"] = round(statistics.median(api_status), 3)
        log(
            f"  status bench_region_day --api-url: median {statistics.median(api_status):.2f} s "
            "(a new process each)"
        )
        begun = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "airflow_partitions.tools.cli",
                "status",
                "bench_month_of_minutes",
                "--key",
                month,
            ],
            env=airflow.env,
            capture_output=True,
            check=False,
        )
        figures["status_month_of_minutes_s"] = round(time.perf_counter() - begun, 3)
        log(f"  status bench_region_day: median {statistics.median(status):.2f} s (a new process each)")
        api_rss = peak_rss_mb(airflow.pids["api-server"])
        status_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        figures["peak_rss_mb"] = round(max(api_rss, status_rss))
        figures["api_server_peak_rss_mb"] = round(api_rss)
        figures["status_peak_rss_mb"] = round(status_rss)
        log(f"  peak RSS: api-server {api_rss:.0f} MB, status {status_rss:.0f} MB")
        if cleaning:
            begun = time.perf_counter()
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
                env=airflow.env,
                capture_output=True,
                text=True,
                check=True,
            )
            figures["clean_s"] = round(time.perf_counter() - begun, 3)
            log(f"  clean: {cleaned.stdout.splitlines()[0]} in {figures['clean_s']:.1f} s")
            for name, path in (("api_page", "/api/dags/bench_region_day"), ("overview", "/api/dags")):
                cold, _ = timed_get(base + path, token)
                warm = [timed_get(base + path, token)[0] for _ in range(repeats)]
                figures[f"{name}_cleaned_s"] = round(statistics.median(warm), 3)
                figures[f"{name}_cleaned_cold_s"] = round(cold, 3)
                log(f"  after clean {path}: cold {cold:.2f} s, then median {statistics.median(warm):.2f} s")
            after = timed_cli(["status", "bench_region_day"], airflow.env, repeats)
            figures["status_cleaned_s"] = round(statistics.median(after), 3)
            log(f"  after clean status bench_region_day: median {statistics.median(after):.2f} s")
        return figures
    finally:
        if keep:  # the database, for a closer look (EXPLAIN QUERY PLAN)
            with sqlite3.connect(airflow.home / "airflow.db") as source, sqlite3.connect(keep) as copy:
                source.backup(copy)
        airflow.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions of each large Dag")
    parser.add_argument("--sizes", help="comma-separated sizes for the trend (overrides --partitions)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object (a list with --sizes)")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--profile", action="store_true", help="also cProfile the reader in-process")
    parser.add_argument("--keep-db", help="copy the metadata database (SQLite) to this file at the end")
    parser.add_argument(
        "--expected-within",
        type=float,
        default=6,
        help="bench_region_day's expected_within in hours (default 6: its failed days are late; 0: none)",
    )
    parser.add_argument(
        "--clean",
        action="store_true",
        help="then `clean --yes` every fired run's bookkeeping and measure again",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.partitions]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the Airflow it started, too

    def log(text: str) -> None:
        print(text, file=sys.stderr if args.json else sys.stdout, flush=True)

    results = []
    if len(sizes) == 1:
        log(f"{sizes[0]:,} partitions:")
        results.append(
            measure(
                sizes[0],
                args.repeats,
                not args.no_browser,
                log,
                args.profile,
                args.keep_db,
                args.expected_within,
                args.clean,
            )
        )
    else:  # a process per size: Airflow's ORM binds this process to the first size's database
        for n in sizes:
            command = [sys.executable, __file__, "--partitions", str(n), "--repeats", str(args.repeats)]
            command += ["--expected-within", str(args.expected_within)]
            command += ["--json", *["--no-browser"] * args.no_browser]
            ran = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
            results.append(json.loads(ran.stdout))
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results))
    else:
        keys = [
            "metrics_s",
            "api_page_s",
            "api_page_cold_s",
            "api_page_minutes_s",
            "overview_s",
            "first_paint_s",
            "status_s",
            "status_api_s",
            "peak_rss_mb",
        ]
        print("\n| partitions | " + " | ".join(keys) + " |")
        print("|---:|" + "---:|" * len(keys))
        for row in results:
            print(f"| {row['partitions']:,} | " + " | ".join(str(row.get(k, "")) for k in keys) + " |")


if __name__ == "__main__":
    main()
