"""
Build a real Airflow metadata database (SQLite) and print what the state reader answers from it.

Run by ``tests/unit/tools/test_state_golden.py`` in a process of its own, with ``AIRFLOW_HOME``
(a new temporary folder) and the Dags folder ``dags/`` in its environment, as
``python -m tests.unit.tools.state_golden.build``. It migrates the database (``airflow db
migrate``), serializes the Dag file (``airflow dags reserialize``: Dags, assets), then sends
asset events through Airflow's own :class:`~airflow.assets.manager.AssetManager` (what the REST
API and a producer's task call): it maps each key with the consumer's serialized mapper, writes
the pending partitioned Dag runs, the keys it logged and, for a key a mapper refuses, the
audit-log row. The Dag runs the scheduler would create are written with Airflow's ``DagRun``
model. Times are fixed (in 2013, and one period in 2099) so the answers do not depend on when
the test runs. Then it prints, as one JSON object, ``status --json`` of each Dag and the
Partitions view's API answers (Airflow's own FastAPI app with the plugin, an admin's token), the
metrics endpoint's among them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

#: What separates a composite key's dimensions; run ids may not hold it.
SEPARATOR = "|"
#: When every row below was written: the pending runs, events and audit-log rows get this time
#: plus their id in minutes (Airflow stamps them with the clock; the golden files may not).
WRITTEN = datetime(2013, 3, 20, tzinfo=UTC)

#: The API requests whose answers are pinned, by the golden file's name.
REQUESTS = {
    "api_dags": "/partitions/api/dags",
    "api_dag_ny_day": "/partitions/api/dags/golden_ny_day",
    "api_dag_ny_day_failed": "/partitions/api/dags/golden_ny_day?state=failed&state=ran%20incomplete",
    "api_dag_region_day": "/partitions/api/dags/golden_region_day?start=2013-03-08&end=2013-03-09",
    "api_dag_business_month": "/partitions/api/dags/golden_business_month",
    "api_partition_missing": "/partitions/api/dags/golden_ny_day/partitions/2013-03-09?list=missing",
    "api_partition_received": (
        "/partitions/api/dags/golden_ny_day/partitions/2013-03-12?list=received&limit=5"
    ),
    "api_dag_business_producer": "/partitions/api/dags/golden_business_producer",
    "api_asset_hours": "/partitions/api/assets/golden_utc_hours",
    "api_asset_region_days": "/partitions/api/assets/golden_region_days",
    "api_asset_business_days": "/partitions/api/assets/golden_business_days",
    "api_dag_late_day": "/partitions/api/dags/golden_late_day",
    "api_dag_late_day_failed": "/partitions/api/dags/golden_late_day?state=failed",
    # backfill's plan (issue 50): ran incomplete and stale run again, the hours a day past its
    # deadline misses sent, a day to come waits; a business month's missing days sent.
    "api_backfill_ny_day": "/partitions/api/dags/golden_ny_day/backfill?limit=50",
    "api_backfill_business_month": "/partitions/api/dags/golden_business_month/backfill",
}
#: Answers not pinned by a file (they hold the clock's time): tested by their values.
UNPINNED = {"metrics": "/partitions/metrics"}


def utc_hours(day: str) -> list[str]:
    """The UTC hour keys (``2013-03-09T05``) of the New York day *day*, from zoneinfo."""
    from zoneinfo import ZoneInfo

    zone = ZoneInfo("America/New_York")
    start = datetime.fromisoformat(day).replace(tzinfo=zone)
    end = start + timedelta(days=1)  # wall-clock: 23 or 25 hours on DST days
    first, last = start.astimezone(UTC), end.astimezone(UTC)
    return [f"{first + timedelta(hours=h):%Y-%m-%dT%H}" for h in range((last - first) // timedelta(hours=1))]


def send(asset: str, keys: list[str]) -> None:
    """Send one asset event per key through Airflow's asset manager, as the REST API does."""
    from airflow.assets.manager import AssetManager
    from airflow.models.asset import AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        model = session.scalar(select(AssetModel).where(AssetModel.name == asset))
        for key in keys:
            AssetManager.register_asset_change(
                asset=model, partition_key=key, session=session, source_is_api=True
            )
            session.flush()


def run(
    dag_id: str, key: str, state: str, created: datetime, *, manual: bool = False, day: bool = False
) -> None:
    """
    Write the Dag run the scheduler creates for *key*'s pending run (created at *created*, UTC).

    *manual*: a run a user triggered for the key (no pending run fired it); *day*: a run of a Dag
    without upstream assets, whose key is a UTC day.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType
    from sqlalchemy import select

    kind = DagRunType.MANUAL if manual else DagRunType.ASSET_TRIGGERED
    with create_session() as session:
        timetable = SerializedDagModel.get_dag(dag_id, session=session).timetable
        anchor = (
            datetime.fromisoformat(key).replace(tzinfo=UTC)
            if day
            else timetable.get_partition_mapper(name="x", uri="x").to_partition_date(key)
        )
        dag_run = DagRun(
            dag_id=dag_id,
            run_id=f"{kind.value}__{created.isoformat()}_{key.replace(SEPARATOR, '.')}",  # not random
            run_type=kind,
            state=DagRunState(state),
            run_after=created,
            start_date=created,
            triggered_by=DagRunTriggeredByType.UI if manual else DagRunTriggeredByType.ASSET,
            partition_key=key,
            partition_date=anchor,
        )
        dag_run.created_at = dag_run.queued_at = created
        dag_run.end_date = created + timedelta(seconds=30)
        session.add(dag_run)
        session.flush()
        if not manual:
            pending = session.scalar(
                select(AssetPartitionDagRun).where(
                    AssetPartitionDagRun.target_dag_id == dag_id,
                    AssetPartitionDagRun.partition_key == key,
                    AssetPartitionDagRun.created_dag_run_id.is_(None),
                )
            )
            pending.created_dag_run_id = dag_run.id


def fix_times() -> None:
    """Stamp the rows Airflow stamped with the clock at :data:`WRITTEN` plus their id in minutes."""
    from airflow.utils.session import create_session
    from sqlalchemy import text

    with create_session() as session:
        for table, columns in (
            ("asset_partition_dag_run", ("created_at", "updated_at")),
            ("partitioned_asset_key_log", ("created_at",)),
            ("asset_event", ("timestamp",)),
            ("log", ("dttm",)),
        ):
            for row_id in session.execute(text(f"SELECT id FROM {table}")).scalars():
                when = WRITTEN + timedelta(minutes=row_id)
                sets = ", ".join(f"{c} = :when" for c in columns)
                update = text(f"UPDATE {table} SET {sets} WHERE id = :id")
                session.execute(update, {"when": when, "id": row_id})


def write() -> None:
    """The partitions of the golden Dags (what each one shows is said beside it)."""

    def ended(day: str, **later: float) -> datetime:
        """When the New York *day* ends (UTC: EST until 2013-03-10, then EDT), plus *later*."""
        end = datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(days=1)
        return end + timedelta(hours=4 if day >= "2013-03-10" else 5) + timedelta(**later)

    # golden_ny_day: New York days of UTC hours under a deadline of an hour.
    send("golden_utc_hours", utc_hours("2013-03-07"))
    run("golden_ny_day", "2013-03-07", "success", ended("2013-03-07", minutes=3))  # complete
    hours = utc_hours("2013-03-08")
    send("golden_utc_hours", hours[:10] + hours[14:])  # 20 of 24: fired at its deadline
    run("golden_ny_day", "2013-03-08", "success", ended("2013-03-08", hours=1, seconds=40))
    send("golden_utc_hours", utc_hours("2013-03-09"))  # failed, then a user's rerun succeeded
    run("golden_ny_day", "2013-03-09", "failed", ended("2013-03-09", minutes=3))
    run("golden_ny_day", "2013-03-09", "success", ended("2013-03-09", hours=2), manual=True)
    hours = utc_hours("2013-03-10")  # the 23-hour spring-forward day, then a key sent again
    send("golden_utc_hours", hours)
    run("golden_ny_day", "2013-03-10", "success", ended("2013-03-10", minutes=3))
    send("golden_utc_hours", hours[5:6])
    send("golden_utc_hours", utc_hours("2013-03-12")[:12])  # 12 of 24, its deadline long past
    send("golden_utc_hours", ["2013-03-13T99"])  # refused: no such hour
    send("golden_utc_hours", utc_hours("2099-01-01")[:3])  # a day to come: pending
    # golden_region_day: airports and days; jfk sends again in September (a long gap).
    send("golden_region_days", ["jfk|2013-03-08", "jfk|2013-03-09", "lga|2013-03-08", "lga|2013-03-10"])
    run("golden_region_day", "jfk|2013-03-08", "success", datetime(2013, 3, 9, 0, 5, tzinfo=UTC))
    run("golden_region_day", "jfk|2013-03-09", "success", datetime(2013, 3, 10, 0, 5, tzinfo=UTC))
    run("golden_region_day", "lga|2013-03-08", "failed", datetime(2013, 3, 9, 0, 5, tzinfo=UTC))
    send("golden_region_days", ["jfk|2013-09-01", "jfk"])  # the second is refused: no time part
    run("golden_region_day", "jfk|2013-09-01", "running", datetime(2013, 9, 2, 0, 5, tzinfo=UTC))
    # golden_business_month: March 2013's business days, a Saturday refused by the calendar.
    send("golden_business_days", ["2013-03-01", "2013-03-04", "2013-03-05", "2013-03-09"])
    # golden_late_day: 2013-03-04 whole but its run failed (late since 2013-03-05T02:00Z),
    # 2013-03-05 whole and succeeded, 2013-03-06 with 20 of 24 hours (pending, late since
    # 2013-03-07T02:00Z), 2099-01-01 with 3 hours (pending, not due yet).
    whole = [f"2013-03-0{d}T{h:02d}" for d in (4, 5) for h in range(24)]
    send("golden_late_hours", whole + [f"2013-03-06T{h:02d}" for h in range(24) if h not in (3, 9, 15, 21)])
    run("golden_late_day", "2013-03-04", "failed", datetime(2013, 3, 5, 0, 5, tzinfo=UTC))
    run("golden_late_day", "2013-03-05", "success", datetime(2013, 3, 6, 0, 5, tzinfo=UTC))
    send("golden_late_hours", ["2099-01-01T00", "2099-01-01T01", "2099-01-01T02"])
    # golden_business_producer: Friday 2013-03-08 and Monday 2013-03-11 landed.
    for key in ("2013-03-08", "2013-03-11"):
        run(
            "golden_business_producer",
            key,
            "success",
            datetime(2013, 3, 12, tzinfo=UTC),
            manual=True,
            day=True,
        )
    fix_times()


def answers() -> dict[str, object]:
    """``status --json`` of each Dag and the API's answers, by golden file name."""
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    from airflow_partitions.tools.cli import main

    found: dict[str, object] = {}
    dag_ids = ("golden_ny_day", "golden_region_day", "golden_business_month", "golden_business_producer")
    for dag_id in (*dag_ids, "golden_late_day"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["status", dag_id, "--json"])
        found[f"status_{dag_id.removeprefix('golden_')}"] = {"exit": code, "json": json.loads(out.getvalue())}
    with TestClient(create_app("core"), raise_server_exceptions=False) as client:
        token = client.get("/auth/token").json()["access_token"]
        for name, path in REQUESTS.items():
            answer = client.get(path, headers={"Authorization": f"Bearer {token}"})
            is_json = answer.headers.get("content-type", "").startswith("application/json")
            body = answer.json() if is_json else None
            found[name] = {"status": answer.status_code, "json": body}
        for name, path in UNPINNED.items():
            answer = client.get(path, headers={"Authorization": f"Bearer {token}"})
            found[name] = {
                "status": answer.status_code,
                "content_type": answer.headers.get("content-type"),
                "text": answer.text,
            }
    return found


#: Commands run in both modes, the metadata database and ``--api-url`` (a real api-server).
BOTH_MODES = {
    **{
        f"status_{dag}": ["status", f"golden_{dag}", "--json"]
        for dag in ("ny_day", "region_day", "business_month", "business_producer")
    },
    "status_ny_day_text": ["status", "golden_ny_day", "--all"],
    "status_ny_day_key": ["status", "golden_ny_day", "--key", "2013-03-09", "--json"],
    "explain_ny_day": ["explain", "--dag", "golden_ny_day", "--downstream", "2013-03-09", "--json"],
    "explain_region_day_text": ["explain", "--dag", "golden_region_day", "nsw|2013-03-08"],
    "explain_unknown_asset": ["explain", "--dag", "golden_ny_day", "--asset", "nope", "2013-03-09T05"],
    "discard_ny_day": ["discard", "golden_ny_day", "--json"],
    "requeue_ny_day": ["requeue", "golden_ny_day", "--start", "2013-03-01", "--end", "2013-03-31", "--json"],
    "backfill_business_producer": [
        *(
            "backfill",
            "golden_business_producer",
            "--missing",
            "--start",
            "2013-03-01",
            "--end",
            "2013-03-15",
        ),
        "--json",
    ],
    "backfill_ny_day_text": ["backfill", "golden_ny_day"],
    "status_unknown": ["status", "no_such_dag"],
    "discard_unknown": ["discard", "no_such_dag"],
    "requeue_unknown": ["requeue", "no_such_dag", "--start", "2013-03-01", "--end", "2013-03-31"],
    "clean_ny_day": ["clean", "--before", "2013-04-01", "--dag", "golden_ny_day", "--json"],
    "clean_all_text": ["clean", "--before", "2013-04-01"],
    "clean_unknown": ["clean", "--before", "2013-04-01", "--dag", "no_such_dag"],
}

#: ``status``'s requests every face answers: the CLI's text and ``--json`` (both modes), the
#: commands' route and the view's ``dags/{dag_id}`` (the view takes 1 to 10,000 partitions a page).
STATUS_REQUESTS = {
    "ny_day": {"dag_id": "golden_ny_day", "limit": 1000},
    "ny_day_failed": {"dag_id": "golden_ny_day", "states": ("failed", "ran incomplete"), "limit": 1000},
    "region_day_range": {
        "dag_id": "golden_region_day",
        "start": "2013-03-08",
        "end": "2013-03-09",
        "limit": 1000,
    },
    "late_day_key": {"dag_id": "golden_late_day", "key": "2013-03-06", "limit": 1000},
    "ny_day_page": {"dag_id": "golden_ny_day", "limit": 2, "offset": 1},
}
#: What every face must refuse alike: ``(status's arguments, the query string of both routes)``.
STATUS_ERRORS = {
    "unknown_dag": (["status", "no_such_dag"], "no_such_dag", ""),
    "bad_state": (["status", "golden_ny_day", "--state", "again"], "golden_ny_day", "state=again"),
    "bad_range": (
        ["status", "golden_ny_day", "--start", "2013-04", "--end", "2013-03"],
        "golden_ny_day",
        "start=2013-04&end=2013-03",
    ),
    "bad_start": (["status", "golden_ny_day", "--start", "03/2013"], "golden_ny_day", "start=03%2F2013"),
    "bad_end": (["status", "golden_ny_day", "--end", "2013-02-30"], "golden_ny_day", "end=2013-02-30"),
    "bad_key": (["status", "golden_ny_day", "--key", "garbage"], "golden_ny_day", "key=garbage"),
}
#: ``discard --yes`` with a selection the Dag's keys cannot match: refused (exit code 2) in both
#: modes before anything is removed (:func:`pending_runs_of` counts the Dag's pending runs around).
BAD_DISCARDS = {
    "start": ["discard", "golden_ny_day", "--start", "03/2013", "--yes"],
    "end": ["discard", "golden_ny_day", "--end", "garbage", "--yes"],
    "key": ["discard", "golden_ny_day", "--key", "2013-03-09T05", "--yes"],
}


def status_argv(fields: dict[str, object]) -> list[str]:
    """Return ``status``'s arguments for a request's *fields* (``--all`` for every state)."""
    argv = ["status", str(fields["dag_id"])]
    for name in ("key", "start", "end", "limit", "offset"):
        if fields.get(name) is not None:
            argv += [f"--{name}", str(fields[name])]
    states = fields.get("states")
    return argv + ([f"--state={s}" for s in states] if states else ["--all"])


#: The metadata database of the ``--api-url`` runs: a URL no SQLAlchemy dialect reads, so that a
#: command that opened the database, or only imported Airflow (whose settings build the engine
#: when imported), would fail: what a laptop outside a managed Airflow, with no database driver
#: or configuration, has.
UNREACHABLE = "nosuchdialect://nobody@127.0.0.1:1/none"


def run_cli(argv: list[str], *, database: str | None = None) -> dict[str, object]:
    """Run ``airflow-partitions *argv*`` in a new process: its exit code, stdout (JSON if so), stderr."""
    env = {**os.environ, **({"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": database} if database else {})}
    ran = subprocess.run(
        [sys.executable, "-m", "airflow_partitions.tools.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        printed: object = json.loads(ran.stdout)
    except ValueError:
        printed = ran.stdout
    return {"exit": ran.returncode, "out": printed, "err": ran.stderr.strip()}


#: The commands that only read run three processes at a time (a process starting Airflow spends
#: seconds importing it; each waits on its own imports, not on the others').
_READERS = ThreadPoolExecutor(max_workers=3)


def run_cli_later(argv: list[str], *, database: str | None = None) -> Future[dict[str, object]]:
    """:func:`run_cli` for a command that writes nothing, started now, its answer read by :func:`settled`."""
    return _READERS.submit(run_cli, argv, database=database)


def settled(value: Any) -> Any:
    """*value* with each :class:`Future` in it (in dicts, at any depth) replaced by its result."""
    if isinstance(value, Future):
        return value.result()
    if isinstance(value, dict):
        return {k: settled(v) for k, v in value.items()}
    return value


def both_modes() -> dict[str, object]:
    """
    Each of :data:`BOTH_MODES` read from the database and through a real api-server's REST API.

    The api-server is Airflow's app with the plugin, served by uvicorn on loopback in this process,
    with Airflow's simple auth manager and its roles (not everyone an admin); each command runs in
    a process of its own, the ``--api-url`` ones with :data:`UNREACHABLE`. Then what a viewer may
    not do, and a discard written through the API under the admin's name.
    """
    import threading

    import uvicorn
    from airflow.api_fastapi.app import create_app, get_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from airflow.configuration import conf

    from tests.support.launcher import free_port, wait_until

    conf.set("core", "simple_auth_manager_all_admins", "False")
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app("core"), host="127.0.0.1", port=port, log_level="error")
    )
    threading.Thread(target=server.run, daemon=True).start()
    wait_until(lambda: server.started or None, timeout=60, what="the api-server")
    url = f"http://127.0.0.1:{port}"
    manager = get_auth_manager()
    token = manager.generate_jwt(SimpleAuthManagerUser(username="golden-admin", role="ADMIN"))
    viewer = manager.generate_jwt(SimpleAuthManagerUser(username="golden-viewer", role="VIEWER"))
    found: dict[str, object] = {}
    for name, argv in BOTH_MODES.items():
        found[name] = {
            "database": run_cli_later(argv if argv[0] != "explain" else [*argv, "--from-db"]),
            "api": run_cli_later([*argv, "--api-url", url, "--token", token], database=UNREACHABLE),
        }
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    silent = f"http://127.0.0.1:{free_port()}"
    as_viewer = ["--api-url", url, "--token", viewer]
    found["refused"] = {
        "forged": run_cli_later(["status", "golden_ny_day", "--api-url", url, "--token", forged]),
        "no_token": run_cli_later(["status", "golden_ny_day", "--api-url", url]),
        "no_answer": run_cli_later(["status", "golden_ny_day", "--api-url", silent, "--token", token]),
        "viewer_reads": run_cli_later(
            ["discard", "golden_ny_day", "--json", *as_viewer], database=UNREACHABLE
        ),
        # Refused (a viewer): it writes nothing, whatever runs beside it.
        "viewer_discards": run_cli_later(
            ["discard", "golden_ny_day", "--yes", *as_viewer], database=UNREACHABLE
        ),
    }
    clean = ["clean", "--before", "2013-04-01", "--dag", "golden_ny_day"]
    found["refused"]["viewer_counts"] = run_cli_later([*clean, "--json", *as_viewer], database=UNREACHABLE)
    found["refused"]["viewer_cleans"] = run_cli_later([*clean, "--yes", *as_viewer], database=UNREACHABLE)
    found["refused"]["viewer_cleans_every_dag"] = run_cli_later(
        ["clean", "--before", "2013-04-01", "--yes", *as_viewer], database=UNREACHABLE
    )
    found["status_faces"] = status_faces(url, token)
    found = settled(found)  # every read answered before the writes below
    # Refused before anything is removed, one after the other: a discard that did remove would
    # show in the count of pending runs around them, not in a read beside it.
    pending_before = pending_runs_of("golden_ny_day")
    found["bad_discards"] = {
        name: {
            "database": run_cli(argv),
            "api": run_cli([*argv, "--api-url", url, "--token", token], database=UNREACHABLE),
        }
        for name, argv in BAD_DISCARDS.items()
    }
    found["bad_discards_pending"] = [pending_before, pending_runs_of("golden_ny_day")]
    found["written"] = {
        "discard": run_cli(
            ["discard", "golden_ny_day", "--yes", "--json", "--api-url", url, "--token", token]
        ),
        "audit_owners": audit_owners("partition-tools discard"),
        "fired_before": fired_rows_of("golden_ny_day", datetime(2013, 4, 1, tzinfo=UTC)),
        "clean": run_cli(
            [*clean, "--yes", "--json", "--api-url", url, "--token", token], database=UNREACHABLE
        ),
        "fired_after": fired_rows_of("golden_ny_day", datetime(2013, 4, 1, tzinfo=UTC)),
        "clean_owners": audit_owners("partition-tools clean"),
    }
    server.should_exit = True
    return found


def http_get(address: str, token: str) -> dict[str, object]:
    """``GET`` *address* with the bearer *token*: its status code and JSON answer."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(address, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return {"status": answer.status, "json": json.loads(answer.read())}
    except urllib.error.HTTPError as err:
        return {"status": err.code, "json": json.loads(err.read() or b"null")}


def status_faces(url: str, token: str) -> dict[str, object]:
    """
    Each of :data:`STATUS_REQUESTS` and :data:`STATUS_ERRORS` asked of every face.

    The CLI's text and ``--json`` from the database and through ``--api-url``, the commands'
    route (the request's own path and query parameters) and the view's ``dags/{dag_id}``.
    """
    import urllib.parse

    from airflow_partitions.tools.commands.status import StatusRequest

    api = ["--api-url", url, "--token", token]
    found: dict[str, object] = {}
    for name, fields in STATUS_REQUESTS.items():
        request = StatusRequest(**fields)
        query = urllib.parse.urlencode(request.params(), doseq=True)
        argv = status_argv(fields)
        found[name] = {
            "text": run_cli_later(argv),
            "text_api": run_cli_later([*argv, *api], database=UNREACHABLE),
            "json": run_cli_later([*argv, "--json"]),
            "json_api": run_cli_later([*argv, "--json", *api], database=UNREACHABLE),
            "route": http_get(f"{url}/partitions/api/{request.path()}?{query}", token),
            "view": http_get(f"{url}/partitions/api/dags/{request.dag_id}?{query}", token),
        }
    for name, (argv, dag_id, query) in STATUS_ERRORS.items():
        found[name] = {
            "cli": run_cli_later(argv),
            "cli_api": run_cli_later([*argv, *api], database=UNREACHABLE),
            "route": http_get(f"{url}/partitions/api/dags/{dag_id}/status?{query}", token),
            "view": http_get(f"{url}/partitions/api/dags/{dag_id}?{query}", token),
        }
    return found


def fired_rows_of(dag_id: str, before: datetime) -> list[int]:
    """``[pending-run rows, key-log rows]`` of *dag_id*'s runs that fired before *before*, counted here."""
    from airflow.models.asset import AssetPartitionDagRun, PartitionedAssetKeyLog
    from airflow.utils.session import create_session
    from sqlalchemy import func, select

    fired = (
        AssetPartitionDagRun.target_dag_id == dag_id,
        AssetPartitionDagRun.created_dag_run_id.is_not(None),
        AssetPartitionDagRun.created_at < before,
    )
    with create_session() as session:
        pending = session.scalar(select(func.count()).select_from(AssetPartitionDagRun).where(*fired))
        logged = session.scalar(
            select(func.count())
            .select_from(PartitionedAssetKeyLog)
            .join(
                AssetPartitionDagRun,
                PartitionedAssetKeyLog.asset_partition_dag_run_id == AssetPartitionDagRun.id,
            )
            .where(*fired)
        )
    return [pending, logged]


def pending_runs_of(dag_id: str) -> int:
    """How many pending partitioned runs (no Dag run yet) *dag_id* has, counted here."""
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.utils.session import create_session
    from sqlalchemy import func, select

    with create_session() as session:
        return session.scalar(
            select(func.count())
            .select_from(AssetPartitionDagRun)
            .where(AssetPartitionDagRun.target_dag_id == dag_id)
            .where(AssetPartitionDagRun.created_dag_run_id.is_(None))
        )


def audit_owners(event: str) -> list[str]:
    """The owners of the audit-log rows of *event*, oldest first."""
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return list(session.scalars(select(Log.owner).where(Log.event == event).order_by(Log.id)))


def from_store() -> dict[str, object]:
    """
    The answers again in a process that keeps nothing but the store of the mappers' answers.

    Every memo of the process is emptied (as in a new process) and ``status --json`` of each Dag
    read again: with its mappers' answers from the store :func:`answers` filled, each Dag read
    without deserializing its mappers. Also how many answers were found stored and worked out.
    """
    from airflow_partitions.tools.state.kept import cache

    for memo in (
        cache.PENDING,
        cache.RAN_WITH,
        cache.RECEIVED,
        cache.KEPT,
        cache.TIMETABLES,
        cache.STORES,
        cache.MIRRORS,
    ):
        memo.clear()
    found = answers()
    asked = sum((store.asked for store in cache.STORES.values() if store is not None), Counter())
    return {"answers": found, "asked": dict(asked)}


def main() -> None:
    for command in (["db", "migrate"], ["dags", "reserialize"]):
        subprocess.run([sys.executable, "-m", "airflow", *command], check=True, capture_output=True)
    write()
    golden = answers()
    print(json.dumps({"golden": golden, "from_store": from_store(), "both_modes": both_modes()}))


if __name__ == "__main__":
    main()
