"""
Reproduce, without airflow-partitions, the api-server's 60 s freeze on SQLite (issue 48, item 7).

Core Airflow 3.3's REST audit log (``airflow/api_fastapi/logging/decorators.py``,
``action_logging``'s ``log_action``) is an ``async def`` dependency that calls
``session.commit()`` synchronously, on the api-server's event loop. On SQLite that commit waits
(the URL's ``?timeout=60``) for the one write lock. When the lock is held by another request of
the same process whose endpoint runs in the thread pool (a task's
``PATCH /execution/task-instances/{id}/run``, another ``POST /api/v2/assets/events``), that
request can only commit once the event loop runs its session's teardown: neither moves until the
lock wait runs out, the audit log's commit fails (500) and every request of the process waited.
So the execution API in a process of its own is not enough: two REST writes at once in the REST
process freeze it the same way (``--execution-api apart`` without ``--one-write-at-a-time``).

The script starts a throwaway Airflow (``tests/support/launcher.py``: ``db migrate``, api-server,
scheduler, dag-processor, LocalExecutor, 4 slots; SQLite in WAL with ``?timeout=60``, or a
PostgreSQL from Debian's package) with the core-only Dags of ``benchmarks/core_dags/``. For
``--seconds`` it then, at once:

- posts hour keys (``2030-01-01T00``, ``2030-01-01T01``, …) to the asset ``lockup_hours`` with
  ``POST /api/v2/assets/events`` from ``--threads`` client threads; each key starts a task
  (``lockup_hour``) and every 24 a day's (``lockup_day_of_hours``);
- triggers ``lockup_producer`` every ``--trigger-every`` seconds (``POST .../dagRuns``), whose task
  adds a day of keys to another asset, rolled up into days;
- reads ``GET /api/v2/dags/lockup_day_of_hours/dagRuns?limit=1`` twice a second (a read that
  takes no lock: it is slow only if the whole process is).

With ``--one-write-at-a-time`` the client threads take turns for their POSTs (never two REST writes
at once, as one client sending events one after another); reads do not wait for a turn.

Every request is timed by the client (no retry, 300 s client timeout). It prints, per kind of
request, how many, how many failed, the median, p99 and longest duration, and how many took over
10 s, then the requests that did; then the same per route as the api-servers timed them (their
access log's ``duration_us``, which includes the tasks' calls to the execution API); then the task
instances by state and the ``database is locked`` lines in each process's log. Numbers are
printed, never asserted; it exits 0 unless Airflow fails to start.

Run it with the Python of an environment holding Apache Airflow 3.3 (and, for PostgreSQL,
``psycopg2-binary`` and ``asyncpg``); it uses the standard library only, and says whether
airflow-partitions is installed there (a reproduction of core's freeze wants it not)::

    python3 -m venv /tmp/vanilla
    /tmp/vanilla/bin/pip install "apache-airflow==3.3.2" apache-airflow-task-sdk psycopg2-binary asyncpg
    /tmp/vanilla/bin/python benchmarks/sqlite_lockup.py                        # one api-server (default)
    /tmp/vanilla/bin/python benchmarks/sqlite_lockup.py --execution-api apart  # two api-servers
    /tmp/vanilla/bin/python benchmarks/sqlite_lockup.py --execution-api apart --one-write-at-a-time
    /tmp/vanilla/bin/python benchmarks/sqlite_lockup.py --db postgresql
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import itertools
import json
import os
import re
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.support.launcher import AirflowError, AirflowInstance, PostgresServer  # noqa: E402

DAGS = HERE / "core_dags"
DAG_IDS = ["lockup_day_of_hours", "lockup_hour", "lockup_day_of_produced_hours", "lockup_producer"]
#: A request that took longer than this was held by the freeze (a healthy one takes milliseconds).
SLOW = 10.0
#: Seconds a client waits for an answer: longer than several 60 s lock waits in a row (seen: 241 s).
CLIENT_TIMEOUT = 300
#: One line of an api-server's access log (``[http.access]``): what it served, how long it took.
ACCESS = re.compile(
    r"^(?P<at>\S+) .*?request finished .*? duration_us=(?P<us>\d+)"
    r" .*? method=(?P<method>\w+) path=(?P<path>\S+) .*?status_code=(?P<status>\d+)",
    re.MULTILINE,
)
#: Path segments that name one object (a task instance's UUID, a number), written ``{id}``.
ONE_OBJECT = re.compile(r"/(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+)(?=/|$)")
#: A task's XCom (``/execution/xcoms/<dag>/<run>/<task>/<key>``), one route whatever it names.
XCOM = re.compile(r"^/execution/xcoms/.*")
FIRST_HOUR = datetime(2030, 1, 1)
TI_STATES = ("success", "failed", "up_for_retry", "running", "queued", "scheduled")


@dataclass(frozen=True)
class Timed:
    """One request: its kind, when it started (seconds into the run), how long it took, and how it ended."""

    kind: str
    start: float
    seconds: float
    outcome: str  # "ok", or the error (an HTTP status and Airflow's answer, or no answer)


class Load:
    """The client threads of one run, recording every request they make."""

    def __init__(self, airflow: AirflowInstance, seconds: float, *, one_write_at_a_time: bool) -> None:
        self.airflow = airflow
        #: Held around each POST when the clients send one write at a time (``--one-write-at-a-time``).
        self._writing: contextlib.AbstractContextManager[object] = (
            threading.Lock() if one_write_at_a_time else contextlib.nullcontext()
        )
        self.began = time.monotonic()
        self.began_at = datetime.now(UTC)
        self.until = self.began + seconds
        self.timed: list[Timed] = []
        self._lock = threading.Lock()
        self._hours = itertools.count()
        self._days = itertools.count()

    def call(self, kind: str, method: str, path: str, **kwargs: Any) -> None:
        """Make one request, once, and record how long it took (not waiting for a turn) and how it ended."""
        with self._writing if method != "GET" else contextlib.nullcontext():
            start = time.monotonic()
            outcome = "ok"
            try:
                self.airflow.request(method, path, timeout=CLIENT_TIMEOUT, attempts=1, **kwargs)
            except AirflowError as err:
                outcome = str(err).splitlines()[0][:200]
        with self._lock:
            self.timed.append(Timed(kind, start - self.began, time.monotonic() - start, outcome))

    def repeat(self, step: Callable[[], None], pause: float) -> Callable[[], None]:
        """A thread's body: *step*, then *pause* seconds, until the run's time is up."""

        def body() -> None:
            while time.monotonic() < self.until:
                step()
                time.sleep(pause)

        return body

    def post_hour(self, asset_id: int) -> None:
        key = (FIRST_HOUR + timedelta(hours=next(self._hours))).strftime("%Y-%m-%dT%H")
        body = {"asset_id": asset_id, "partition_key": key, "extra": {}}
        self.call("POST /api/v2/assets/events", "POST", "/api/v2/assets/events", body=body)

    def trigger_producer(self) -> None:
        day = FIRST_HOUR + timedelta(days=next(self._days))
        keys = [(day + timedelta(hours=h)).strftime("%Y-%m-%dT%H") for h in range(24)]
        body = {"logical_date": None, "conf": {"keys": keys}}
        self.call("POST /api/v2/dags/{id}/dagRuns", "POST", "/api/v2/dags/lockup_producer/dagRuns", body=body)

    def read_runs(self) -> None:
        path = "/api/v2/dags/lockup_day_of_hours/dagRuns"
        self.call("GET /api/v2/dags/{id}/dagRuns", "GET", path, params={"limit": 1})


def drive(airflow: AirflowInstance, args: argparse.Namespace) -> tuple[list[Timed], datetime]:
    """Run the client threads for ``args.seconds``; return every request they made, and when they began."""
    asset_id = airflow.asset_id("lockup_hours")
    load = Load(airflow, args.seconds, one_write_at_a_time=args.one_write_at_a_time)
    bodies = [load.repeat(lambda: load.post_hour(asset_id), args.pause) for _ in range(args.threads)]
    bodies += [load.repeat(load.trigger_producer, args.trigger_every), load.repeat(load.read_runs, 0.5)]
    threads = [threading.Thread(target=body, daemon=True) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(load.timed, key=lambda t: t.start), load.began_at


def server_timed(airflow: AirflowInstance, began: datetime) -> list[Timed]:
    """Every request the api-servers logged as finished (``[http.access]``) that started after *began*."""
    timed = []
    for name in ("api-server", "execution-api"):
        log = airflow.home / f"{name}.log"
        for m in ACCESS.finditer(log.read_text(errors="replace") if log.exists() else ""):
            seconds = int(m["us"]) / 1e6
            start = (datetime.fromisoformat(m["at"]) - began).total_seconds() - seconds
            if start < 0:  # starting Airflow up (the first /execution/health builds its routes)
                continue
            path = XCOM.sub("/execution/xcoms/{dag_id}/{run_id}/{task_id}/{key}", m["path"])
            route = f"{m['method']} {ONE_OBJECT.sub('/{id}', path)}"
            outcome = "ok" if int(m["status"]) < 500 else f"answered {m['status']}"
            timed.append(Timed(route, start, seconds, outcome))
    return timed


def summary(timed: list[Timed]) -> list[str]:
    """A Markdown table: per kind of request, count, failures, median, p99, max and count over SLOW."""
    lines = [
        "| request | count | failed | median s | p99 s | max s | over 10 s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in sorted({t.kind for t in timed}):
        seconds = sorted(t.seconds for t in timed if t.kind == kind)
        failed = sum(t.outcome != "ok" for t in timed if t.kind == kind)
        p99 = seconds[min(len(seconds) - 1, int(0.99 * len(seconds)))]
        slow = sum(s > SLOW for s in seconds)
        median = statistics.median(seconds)
        lines.append(
            f"| {kind} | {len(seconds)} | {failed} | {median:.3f} | {p99:.3f} | {seconds[-1]:.3f} | {slow} |"
        )
    return lines


def task_states(airflow: AirflowInstance) -> dict[str, int]:
    """How many task instances of the run's Dags are in each state (read through the REST API)."""
    path = "/api/v2/dags/~/dagRuns/~/taskInstances"
    return {
        state: airflow.request("GET", path, params={"state": state, "limit": 1})["total_entries"]
        for state in TI_STATES
    }


def locked_lines(airflow: AirflowInstance) -> dict[str, int]:
    """How many ``database is locked`` lines each process's log holds."""
    counts = {}
    for log in sorted(airflow.home.glob("*.log")):
        text = log.read_text(errors="replace")
        counts[log.stem] = text.count("database is locked")
    return counts


def report(
    timed: list[Timed], began: datetime, airflow: AirflowInstance, args: argparse.Namespace
) -> dict[str, object]:
    """Print what the run measured and return it (for ``--json``)."""
    setup = f"{args.db}, execution API {args.execution_api}"
    if args.one_write_at_a_time:
        setup += ", one write at a time"
    print(f"\n## {setup}: {args.seconds:.0f} s, {args.threads} event threads\n")
    print("\n".join(summary(timed)))
    slow = [t for t in timed if t.seconds > SLOW]
    print(f"\nRequests over {SLOW:.0f} s: {len(slow)}")
    for t in slow:
        print(f"  {t.kind}: started at {t.start:.1f} s, took {t.seconds:.1f} s, {t.outcome}")
    served = server_timed(airflow, began)
    print("\nAs the api-servers timed them (access log), every route, from when the clients began:\n")
    print("\n".join(summary(served)))
    states = task_states(airflow)
    print("Task instances by state:", ", ".join(f"{k} {v}" for k, v in states.items()))
    locked = locked_lines(airflow)
    print("'database is locked' lines per log:", ", ".join(f"{k} {v}" for k, v in locked.items()))
    exited = ""
    try:
        airflow.check_alive()
    except AirflowError as err:
        exited = str(err).splitlines()[0]
        print("A process exited:", exited)
    return {
        "setup": setup,
        "requests": [asdict(t) for t in timed],
        "served": [asdict(t) for t in served],
        "task_states": states,
        "locked": locked,
        "exited": exited,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See the module docstring (and benchmarks/README.md) for what it measures.",
    )
    parser.add_argument(
        "--db",
        choices=["sqlite", "postgresql"],
        default="sqlite",
        help="metadata database (default sqlite, in WAL with ?timeout=60)",
    )
    parser.add_argument(
        "--execution-api",
        choices=["together", "apart"],
        default="together",
        help="together: one api-server serving the REST and execution APIs (Airflow's default); "
        "apart: `api-server --apps core` and `api-server --apps execution --port P2` (default together)",
    )
    parser.add_argument(
        "--one-write-at-a-time",
        action="store_true",
        help="the client threads send their POSTs one at a time (never two REST writes at once)",
    )
    parser.add_argument("--seconds", type=float, default=120, help="how long to send requests (default 120)")
    parser.add_argument(
        "--threads", type=int, default=4, help="client threads posting asset events (default 4)"
    )
    parser.add_argument(
        "--pause", type=float, default=0.2, help="seconds each event thread waits between posts (default 0.2)"
    )
    parser.add_argument(
        "--trigger-every",
        type=float,
        default=3,
        help="seconds between triggers of lockup_producer (default 3)",
    )
    parser.add_argument(
        "--home",
        type=Path,
        help="AIRFLOW_HOME to use and keep (logs, SQLite file); a temporary one if omitted",
    )
    parser.add_argument(
        "--json", type=Path, help="also write every request's timing and the counts to this file"
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.threads < 1 or args.pause < 0 or args.trigger_every <= 0:
        parser.error(
            "--seconds and --trigger-every must be positive, --threads at least 1, --pause not negative"
        )
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        ours = f"yes, {importlib.metadata.version('airflow-partitions')}"
    except importlib.metadata.PackageNotFoundError:
        ours = "no"
    print(f"Python {sys.executable}; airflow-partitions installed here: {ours}")
    json_path = args.json and args.json.resolve()
    with contextlib.ExitStack() as stack:
        home = (args.home or stack.enter_context(_temporary_folder())).resolve()
        home.mkdir(parents=True, exist_ok=True)
        # Airflow's processes start in this folder, out of the checkout, whose airflow_partitions
        # folder `python -m airflow` would otherwise find on its path.
        os.chdir(home)
        # SQLite: the launcher's own (a file in home, WAL, ?timeout=60).
        url = stack.enter_context(PostgresServer()).url if args.db == "postgresql" else None
        airflow = AirflowInstance(
            DAGS,
            home=home,
            sql_alchemy_conn=url,
            # Airflow's default: a task's call to the execution API gives up after 5 s and retries.
            extra_env={"AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "5.0"},
            execution_api_apart=args.execution_api == "apart",
        )
        stack.callback(airflow.stop)
        airflow.start()
        airflow.wait_for_dags(DAG_IDS)
        print(f"Airflow ready at {airflow.url} (execution API {airflow.execution_url}), home {home}")
        timed, began = drive(airflow, args)
        result = report(timed, began, airflow, args)
        if json_path:
            json_path.write_text(json.dumps(result, indent=1))
    return 0


@contextlib.contextmanager
def _temporary_folder():
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="sqlite-lockup-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
