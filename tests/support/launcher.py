"""
Start a real, throwaway Apache Airflow for this project's integration tests, benchmarks and demo.

:class:`AirflowInstance` runs Airflow's processes (``api-server``, as two processes: the REST
API and the tasks' execution API; ``scheduler``; ``dag-processor``) with the LocalExecutor on a
metadata database of your choice, in a fresh ``AIRFLOW_HOME``, bound to ``127.0.0.1`` on free
ports. :class:`PostgresServer` starts a
PostgreSQL cluster from Debian's ``postgresql`` package for it. Both stop everything they
started on :meth:`~AirflowInstance.stop`, on leaving a ``with`` block, and on Ctrl-C.

Only the Python standard library is used here (no Airflow import), so this module can run
in a process that never loads Airflow itself. Not for production: the simple auth manager
makes every user an admin. It lives beside the tests, not in the package: the wheel holds only
what users import (``scripts/dev.sh test`` checks that it is not there).

Example::

    with AirflowInstance(dags_folder="example_dags") as airflow:
        airflow.wait_for_dags(["weather_land_jfk"])
        airflow.trigger("weather_land_jfk", partition_key="jfk::2013-03-11")
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# The REST API and the execution API (what tasks call) run as two api-server processes. In one
# process, on SQLite, Airflow's audit log of a REST write commits synchronously on the event loop;
# when an execution request holding the one write lock waits on that same loop, both freeze until
# the 60 s lock wait runs out, and the scheduler can die with "database is locked". Two REST writes
# at once freeze the REST process the same way: on SQLite, tests send them one at a time
# (benchmarks/sqlite_lockup.py measures all four cases; docs/deployment.md).
_PROCESSES = {
    "api-server": ["api-server", "--apps", "core", "--port", "{port}"],
    "execution-api": ["api-server", "--apps", "execution", "--port", "{execution_port}"],
    # Airflow's default, one api-server serving both apps: only benchmarks/sqlite_lockup.py runs it,
    # to show the freeze above.
    "api-server-both": ["api-server", "--port", "{port}"],
    "scheduler": ["scheduler", "--skip-serve-logs"],
    "dag-processor": ["dag-processor"],
    # CeleryExecutor's worker (apache-airflow-providers-celery), named per worker with -H.
    "celery-worker": ["celery", "worker", "--concurrency", "4", "--skip-serve-logs", "-H", "{name}@%h"],
}


#: Airflow's Dag run states (``airflow.utils.state.DagRunState``), for :meth:`AirflowInstance.count_runs`.
_RUN_STATES = ("queued", "running", "success", "failed")


class AirflowError(RuntimeError):
    """Airflow did not start, did not answer, or did not reach an awaited state in time."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate: Callable[[], T | None], *, timeout: float, what: str, interval: float = 0.2) -> T:
    """
    Call *predicate* until it returns a truthy value, and return that value.

    :param timeout: Seconds to keep trying.
    :param what: What is awaited, for the error message.
    :raises AirflowError: if *timeout* seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AirflowError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def _pg_binary(name: str) -> str:
    """Find a PostgreSQL server binary in Debian's /usr/lib/postgresql/<newest>/bin, else on PATH."""
    folders = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name), reverse=True
    )
    for folder in folders:
        if (folder / name).exists():
            return str(folder / name)
    found = shutil.which(name)
    if found:
        return found
    raise AirflowError(
        f"PostgreSQL's {name!r} was not found; install Debian's package with "
        "'apt-get install -y postgresql' (scripts/dev.sh test does this when run as root)."
    )


class PostgresServer:
    """
    A throwaway PostgreSQL cluster on 127.0.0.1 and a free port, with a database ``airflow``.

    Made with ``initdb`` and ``pg_ctl`` from Debian's ``postgresql`` package in a temporary
    folder, trusting local connections. Run as root, the server runs as the ``postgres`` user
    (PostgreSQL refuses to run as root).

    :param root: The cluster's folder; a new temporary one if omitted.
    :param keep: Keep the folder (data and ``pg.log``) on :meth:`stop`, for inspection: start
        it again with ``pg_ctl -D <root>/data -o "-p <port> -k <root>" start``.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, keep: bool = False) -> None:
        self.root = Path(root or tempfile.mkdtemp(prefix="airflow-partitions-pg-"))
        self.port = free_port()
        self.data = self.root / "data"
        self.keep = keep
        self._as_postgres = os.geteuid() == 0

    @property
    def url(self) -> str:
        """The SQLAlchemy URL of the ``airflow`` database."""
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/airflow"

    def _run(self, *args: str) -> None:
        command = list(args)
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise AirflowError(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")

    def start(self) -> str:
        """Create and start the cluster and the ``airflow`` database; return :attr:`url`."""
        self.root.mkdir(parents=True, exist_ok=True)
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(_pg_binary("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off"
        self._run(
            _pg_binary("pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "pg.log"),
            "-w",
            "start",
        )
        self._run(
            _pg_binary("createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "airflow"
        )
        return self.url

    def stop(self) -> None:
        """Stop the server and delete its folder (unless *keep* was given)."""
        with contextlib.suppress(AirflowError):
            self._run(_pg_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def scratch_database(backend: str, folder: Path) -> Iterator[str]:
    """
    Yield the SQLAlchemy URL of an empty database: a SQLite file in *folder*, or a new PostgreSQL server.

    *backend*: ``"sqlite"`` or ``"postgresql"`` (a :class:`PostgresServer`, stopped after).
    """
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'airflow.db'}"
        return
    with PostgresServer() as server:
        yield server.url


class RedisServer:
    """
    A throwaway Redis server on 127.0.0.1 and a free port, without persistence: a Celery broker.

    Debian's ``redis-server`` (``apt-get install -y redis-server``; ``scripts/dev.sh test`` installs
    it when run as root), started in the foreground in a temporary folder.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="airflow-partitions-redis-"))
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The broker URL, ``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> str:
        """Start the server, wait until it answers ``PING``, and return :attr:`url`."""
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            raise AirflowError(
                "Redis's 'redis-server' was not found; install Debian's package 'redis-server'."
            )
        log = open(self.root / "redis.log", "wb")  # noqa: SIM115 - closed with the process
        self._process = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.root),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_until(self._answers, timeout=30, what=f"redis-server on port {self.port}")
        return self.url

    def _answers(self) -> bool:
        if self._process is not None and self._process.poll() is not None:
            raise AirflowError(
                f"redis-server exited:\n{(self.root / 'redis.log').read_text(errors='replace')}"
            )
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server and delete its folder."""
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
            self._process = None
        shutil.rmtree(self.root, ignore_errors=True)


class AirflowInstance:
    """
    A real Airflow: api-server (REST and execution APIs), scheduler and dag-processor, one database.

    :param dags_folder: The Dag files to load.
    :param home: ``AIRFLOW_HOME``; a new temporary folder (deleted on :meth:`stop`) if omitted.
    :param sql_alchemy_conn: Metadata database URL; SQLite in *home* if omitted.
    :param extra_env: More environment for all the processes (and so for the tasks).
    :param port: The api-server's port on 127.0.0.1; a free one if omitted.
    :param execution_api_apart: Serve the execution API from an api-server process of its own
        (``--apps execution``, the default); ``False`` runs Airflow's default, one api-server
        serving both (which can freeze on SQLite: ``benchmarks/sqlite_lockup.py``).
    """

    def __init__(
        self,
        dags_folder: str | os.PathLike[str],
        *,
        home: str | os.PathLike[str] | None = None,
        sql_alchemy_conn: str | None = None,
        extra_env: dict[str, str] | None = None,
        port: int | None = None,
        execution_api_apart: bool = True,
    ) -> None:
        self._own_home = home is None
        self.home = Path(home or tempfile.mkdtemp(prefix="airflow-partitions-home-"))
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.execution_port = free_port() if execution_api_apart else self.port
        self.execution_url = f"http://127.0.0.1:{self.execution_port}/execution/"
        #: The api-server processes to start, by name and kind (see start_process).
        self._apis = {"api-server": "api-server", "execution-api": "execution-api"}
        if not execution_api_apart:
            self._apis = {"api-server": "api-server-both"}
        self.env = {
            **os.environ,
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(Path(dags_folder).resolve()),
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": self.execution_url,
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__API__WORKERS": "1",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
            "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.1",
            # A task's calls to the execution API time out after 5 s by default; a task adding
            # thousands of partitions in one add_partitions() call (a replay) takes longer.
            "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "300",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": sql_alchemy_conn or self._sqlite_url(60),
            # A request waits up to 60 s for a Dag the api-server reads for the first time in the
            # background (airflow_partitions.tools.warming; 0.5 s by default, then it answers it
            # as warming): the tests compare whole answers. bench_ui times the default.
            "AIRFLOW_PARTITIONS_WARMING_WAIT": "60",
            **(extra_env or {}),
        }
        # SQLite (in WAL mode, see _use_sqlite_wal) has one writer; every process waits up to
        # 60 s for it (the default 5 s is too short on a loaded 2-core machine: the scheduler
        # dies with "database is locked"). request() waits 120 s for an answer, so a request
        # held that long still gets one, and retries the 500 of a write that lost the race.
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        #: What in an exited scheduler's log has :meth:`check_alive` start it again (``None``: raise).
        self.restart_on: str | None = None
        self._token: str | None = None
        self._asset_ids: dict[str, int] = {}
        self._engine: Any = None

    # -- lifecycle -------------------------------------------------------------------------

    def _sqlite_url(self, lock_wait: int) -> str:
        return f"sqlite:///{self.home / 'airflow.db'}?timeout={lock_wait}"

    def _airflow(self, *args: str, **kwargs: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", "airflow", *args], env=self.env, **kwargs)

    def start(self, timeout: float = 180) -> AirflowInstance:
        """
        Migrate the database, start the api-server, wait until it answers, then start the rest.

        :raises AirflowError: if the migration fails, a process exits, or the API is not
            healthy within *timeout* seconds; everything started is stopped first.
        """
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            with open(self.home / "db-migrate.log", "wb") as log:
                # Tracked like the services, so stop() ends it too if we are interrupted here.
                migrate = self._airflow(
                    "db", "migrate", stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
                self._processes["db-migrate"] = migrate
                if migrate.wait() != 0:
                    raise AirflowError(f"airflow db migrate failed:\n{self.log_tail('db-migrate')}")
                del self._processes["db-migrate"]
            self._use_sqlite_wal()
            # The api-server first: tasks call its execution API from their first second, and
            # a task the scheduler starts before it listens fails ("Connection refused"), e.g. a
            # run a timetable schedules as soon as its Dag is parsed.
            for name, kind in self._apis.items():
                self.start_process(name, kind=kind)
            wait_until(self._healthy, timeout=timeout, what=f"the api-servers at {self.url}")
            for name in ("scheduler", "dag-processor"):
                self.start_process(name)
        except BaseException:
            self.stop()
            raise
        return self

    def start_process(self, name: str, *, kind: str | None = None) -> int:
        """
        Start one Airflow process (again, after :meth:`kill`) and return its process id.

        :param name: What to call it (its log is ``<home>/<name>.log``, appended to).
        :param kind: One of ``api-server``, ``execution-api``, ``api-server-both``, ``scheduler``,
            ``dag-processor``, ``celery-worker`` (CeleryExecutor's, with
            ``AIRFLOW__CORE__EXECUTOR=CeleryExecutor`` and a broker in *extra_env*); *name* if
            omitted. ``start_process("scheduler-2", kind="scheduler")`` runs a second scheduler
            (high availability, on PostgreSQL).
        :raises ValueError: if the kind is unknown or a process of that name is running.
        """
        args = _PROCESSES.get(kind or name)
        if args is None:
            known = ", ".join(_PROCESSES)
            raise ValueError(f"unknown Airflow process kind {kind or name!r}; expected one of {known}")
        if name in self._processes and self._processes[name].poll() is None:
            raise ValueError(f"airflow {name} is already running (pid {self._processes[name].pid})")
        log = open(self.home / f"{name}.log", "ab")  # noqa: SIM115 - closed with the process
        self._processes[name] = self._airflow(
            *(a.format(port=self.port, execution_port=self.execution_port, name=name) for a in args),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self._processes[name].pid

    @property
    def pids(self) -> dict[str, int]:
        """The process id of each process started (``{"scheduler": 4242, ...}``), to watch or signal."""
        return {name: process.pid for name, process in self._processes.items()}

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """
        Send *sig* (SIGKILL by default) to the process *name* and its children, and reap it.

        A process that has not ended a minute after *sig* is killed (SIGKILL).

        With SIGKILL the process gets no chance to clean up, as in a crash or an out-of-memory kill;
        :meth:`start_process` starts it again.

        :raises ValueError: if no process of that name was started (or it was killed already).
        """
        if name not in self._processes:
            raise ValueError(
                f"no Airflow process named {name!r} is running; running: {', '.join(self._processes)}"
            )
        process = self._processes.pop(name)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # seen: a scheduler on PostgreSQL ignoring SIGTERM for minutes
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def _use_sqlite_wal(self) -> None:
        """
        Switch an SQLite metadata database to write-ahead logging (it stays so in the file).

        With WAL, readers no longer block the one writer, which is what keeps the scheduler,
        the api-server and four running tasks from locking each other out.
        """
        url = self.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
        if url.startswith("sqlite:///"):
            with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///").split("?")[0])) as db:
                db.execute("PRAGMA journal_mode=WAL")

    def _healthy(self) -> bool:
        self.check_alive()
        try:
            # The execution API builds its routes on first use: pay for it before any task does.
            for url in (f"{self.url}/api/v2/monitor/health", f"{self.execution_url}health"):
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status != 200:
                        return False
            return True
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def check_alive(self, *, restart_on: str | None = None) -> list[str]:
        """
        Raise :class:`AirflowError`, with its log, if any of the processes has exited.

        :param restart_on: Start a scheduler again, as a supervisor (Kubernetes, systemd) would, if
            it exited with this text in its log's tail, rather than raise: Airflow's schedulers
            exit on a PostgreSQL ``deadlock detected`` between two of them (apache/airflow
            #23361, #25765, #27473) and rely on being restarted. Default :attr:`restart_on`
            (``None``: never).
        :returns: The names of the schedulers started again.
        """
        restart_on = restart_on or self.restart_on
        restarted = []
        for name, process in list(self._processes.items()):
            if process.poll() is None:
                continue
            tail = self.log_tail(name)
            if restart_on is not None and restart_on in tail and "scheduler" in name:
                self.start_process(name, kind="scheduler")
                restarted.append(name)
                continue
            raise AirflowError(f"airflow {name} exited with {process.returncode}:\n{tail}")
        return restarted

    def restart(self, timeout: float = 180) -> AirflowInstance:
        """Stop every process and start them again on the same home and database (an upgrade)."""
        self._stop_processes()
        return self.start(timeout)

    def stop(self) -> None:
        """Stop the processes (SIGTERM, then SIGKILL to each process group after 10 s)."""
        self._stop_processes()
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        if self._own_home:
            shutil.rmtree(self.home, ignore_errors=True)

    def _stop_processes(self) -> None:
        for process in self._processes.values():
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in self._processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        self._processes.clear()

    def __enter__(self) -> AirflowInstance:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_tail(self, *names: str, lines: int = 60) -> str:
        """Return the last *lines* lines of each named process log (all if none named)."""
        parts = []
        for name in names or list(self._processes) or list(_PROCESSES):
            path = self.home / f"{name}.log"
            text = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() else ["(no log)"]
            parts.append(f"----- {name} ({path}) -----\n" + "\n".join(text))
        return "\n".join(parts)

    # -- REST API --------------------------------------------------------------------------

    def _get(self, path: str, *, auth: bool = True, **params: Any) -> Any:
        return self.request("GET", path, params=params, auth=auth)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        auth: bool = True,
        timeout: float = 120,
        attempts: int = 5,
    ) -> Any:
        """
        Call the REST API and return the decoded JSON answer.

        A 500 (SQLite's lock wait ran out) is tried again, and so is a GET that got no answer,
        up to *attempts* calls in all; each call waits *timeout* seconds for its answer.

        :raises AirflowError: on an HTTP error, with the status and Airflow's answer, or when a
            call got no answer within *timeout* seconds (and is not tried again).
        """
        query = urllib.parse.urlencode({k: v for k, v in (params or {}).items() if v is not None}, doseq=True)
        request = urllib.request.Request(
            f"{self.url}{path}{'?' + query if query else ''}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        if auth:
            request.add_header("Authorization", f"Bearer {self._bearer()}")
        for attempt in itertools.count(1):
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    payload = response.read()
                return json.loads(payload) if payload else None
            except urllib.error.HTTPError as err:
                answer = err.read().decode(errors="replace")
                # SQLite allows one writer: a write that waited too long for the lock fails with
                # a "Database error" (500) after its transaction was rolled back. Try again.
                if err.code < 500 or attempt >= attempts:
                    raise AirflowError(f"{method} {path} answered {err.code}: {answer}") from err
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                # A lost answer may hide a write that happened: only reads are tried again.
                if method != "GET" or attempt >= attempts:
                    raise AirflowError(f"{method} {path} got no answer from {self.url}: {err}") from err
            time.sleep(0.5 * attempt)

    def _bearer(self) -> str:
        if self._token is None:
            self._token = self._get("/auth/token", auth=False)["access_token"]
        return self._token

    def wait_for_dags(
        self, dag_ids: Iterable[str], timeout: float = 120, *, expected_import_errors: Iterable[str] = ()
    ) -> None:
        """
        Wait until every Dag in *dag_ids* is parsed, serialized, active and unpaused.

        :param expected_import_errors: Names of Dag files (``broken.py``) meant to fail to import.
        :raises AirflowError: at once if any other Dag file has an import error, or after *timeout*.
        """
        pending = set(dag_ids)
        allowed = set(expected_import_errors)

        def ready() -> bool:
            self.check_alive()
            errors = self._get("/api/v2/importErrors")["import_errors"]
            if errors := [e for e in errors if Path(e["filename"]).name not in allowed]:
                raise AirflowError("Dag import errors:\n" + "\n".join(e["stack_trace"] for e in errors))
            for dag_id in sorted(pending):
                try:
                    dag = self._get(f"/api/v2/dags/{dag_id}/details")
                except AirflowError:
                    continue  # not serialized yet
                if dag["is_paused"]:
                    self.request("PATCH", f"/api/v2/dags/{dag_id}", body={"is_paused": False})
                elif not dag["is_stale"]:
                    pending.discard(dag_id)
            return not pending

        wait_until(
            ready,
            timeout=timeout,
            what=f"Dags {sorted(pending)} to be parsed (are the ids right and their files in the folder?)",
            interval=0.5,
        )

    def trigger(
        self,
        dag_id: str,
        *,
        partition_key: str | None = None,
        logical_date: str | None = None,
        conf: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Trigger a manual Dag run and return it as the REST API describes it."""
        body: dict[str, Any] = {"logical_date": logical_date, "conf": conf or {}}
        if partition_key is not None:
            body["partition_key"] = partition_key
        return self.request("POST", f"/api/v2/dags/{dag_id}/dagRuns", body=body)

    def asset_id(self, name: str) -> int:
        """Return the id of the asset called *name* (looked up once)."""
        if name not in self._asset_ids:
            for asset in self._get("/api/v2/assets", name_pattern=name, limit=100)["assets"]:
                if asset["name"] == name:
                    self._asset_ids[name] = asset["id"]
                    break
            else:
                raise AirflowError(f"no asset named {name!r}")
        return self._asset_ids[name]

    def create_asset_event(self, asset_name: str, *, partition_key: str | None = None, **extra: Any) -> dict:
        """Create an asset event through the REST API, as an external producer would."""
        body = {"asset_id": self.asset_id(asset_name), "partition_key": partition_key, "extra": extra}
        return self.request("POST", "/api/v2/assets/events", body=body)

    def dag_runs(self, dag_id: str) -> list[dict[str, Any]]:
        """Return every run of *dag_id*, oldest first."""
        runs: list[dict[str, Any]] = []
        while True:
            page = self._get(f"/api/v2/dags/{dag_id}/dagRuns", limit=100, offset=len(runs), order_by="id")
            runs.extend(page["dag_runs"])
            if len(runs) >= page["total_entries"] or not page["dag_runs"]:
                return runs

    def query(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        """
        Run one SQL statement on the metadata database and return its rows (read directly, no REST).

        ``airflow.query("SELECT count(*) FROM dag_run WHERE dag_id = :dag", dag="daily")``. Uses
        SQLAlchemy (installed with Airflow) on the instance's database URL, SQLite or PostgreSQL.
        """
        import sqlalchemy

        if self._engine is None:
            self._engine = sqlalchemy.create_engine(self.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
        with self._engine.connect() as connection:
            return [tuple(row) for row in connection.execute(sqlalchemy.text(sql), params)]

    def count_runs(self, dag_id: str, *, state: str | None = None) -> int:
        """
        Return how many runs *dag_id* has (in *state*, such as ``"success"``, if given), read directly.

        :raises ValueError: if *state* is not a Dag run state (queued, running, success, failed).
        """
        if state not in (None, *_RUN_STATES):
            raise ValueError(f"state must be one of {', '.join(_RUN_STATES)}; got {state!r}")
        sql = "SELECT count(*) FROM dag_run WHERE dag_id = :dag_id"
        [(count,)] = self.query(sql + (" AND state = :state" if state else ""), dag_id=dag_id, state=state)
        return count

    def audit_log(self, event: str, dag_id: str | None = None) -> list[str]:
        """
        Return the ``extra`` text of every audit-log row of *event* (of *dag_id*, if given), oldest first.

        ``airflow.audit_log("failed to map partition_key")`` lists each key refused on arrival, with
        the consumer and the mapper's message, however many there are (REST pages them); read
        directly. Tests sharing one Airflow write rows of their own Dags: *dag_id* keeps a test's.
        """
        query = "SELECT extra FROM log WHERE event = :event" + (" AND dag_id = :dag" if dag_id else "")
        rows = self.query(query + " ORDER BY id", event=event, dag=dag_id)
        return [extra or "" for (extra,) in rows]

    def wait_for_runs(
        self, dag_id: str, count: int, *, timeout: float = 120, states: Iterable[str] = ("success",)
    ) -> list[dict[str, Any]]:
        """
        Wait until *dag_id* has at least *count* runs, all finished, and return them.

        :raises AirflowError: if a run ends in a state not in *states* (with the logs), or on timeout.
        """
        allowed = set(states)

        def finished() -> list[dict[str, Any]] | None:
            self.check_alive()
            runs = self.dag_runs(dag_id)
            if len(runs) < count or any(r["state"] in ("queued", "running") for r in runs):
                return None
            bad = [r for r in runs if r["state"] not in allowed]
            if bad:
                details = "\n".join(self.failure_report(dag_id, r["dag_run_id"]) for r in bad)
                raise AirflowError(f"{dag_id}: {len(bad)} runs ended outside {sorted(allowed)}:\n{details}")
            return runs

        return wait_until(finished, timeout=timeout, what=f"{count} finished runs of {dag_id}", interval=0.5)

    def xcom(self, dag_id: str, run_id: str, task_id: str, key: str = "return_value") -> Any:
        """Return the XCom *key* a task pushed (its return value by default)."""
        quoted = urllib.parse.quote(run_id, safe="")
        path = f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances/{task_id}/xcomEntries/{key}"
        return self._get(path, deserialize=True)["value"]

    def failure_report(self, dag_id: str, run_id: str, lines: int = 40) -> str:
        """Return the state of each task of a run, with the log tail of each failed task."""
        quoted = urllib.parse.quote(run_id, safe="")
        report = [f"{dag_id} {run_id}:"]
        for ti in self._get(f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances")["task_instances"]:
            report.append(f"  {ti['task_id']}: {ti['state']}")
            if ti["state"] in ("failed", "upstream_failed", "up_for_retry"):
                ti_path = f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances/{ti['task_id']}"
                content = self._get(f"{ti_path}/logs/{ti['try_number']}").get("content", [])
                text = [
                    " ".join(str(entry.get(k, "")) for k in ("event", "error_detail") if entry.get(k))
                    if isinstance(entry, dict)
                    else str(entry)
                    for entry in content
                ]
                report.extend(f"    {line}" for line in text[-lines:])
        return "\n".join(report)
