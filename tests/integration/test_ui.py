"""
The Partitions view (docs/ui.md) in the real api-server, on the real scheduler's data: its JSON
API under Airflow's auth, and its page in a real headless Chromium, each key shape's drawing
checked against the database's answer (``airflow-partitions status --json``). The pictures of
docs/ui.md are taken here.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest

from airflow_partitions.tools.state import STATES, attention, bucket_length
from airflow_partitions.tools.ui import layout
from tests.integration.browser import Browser, PageServer, chromium
from tests.integration.conftest import DAG_IDS
from tests.integration.dags.it_repair import UI_FAILING_DAYS
from tests.integration.test_members import _set_variable
from tests.integration.test_no_silent_holds import _send, _settle
from tests.integration.test_status import UNREACHABLE, _api_cli, _cli, _state
from tests.support.launcher import free_port, wait_until

#: The backends this module runs on (tests/integration/conftest.py; --every-backend: both).
#: The view reads through the state reader (test_status.py on both databases) and acts
#: through the commands (test_repair.py on both); here the pages, the browser and the access rules.
BACKENDS = ("sqlite",)


#: The docs' pictures are retaken only on request (AIRFLOW_PARTITIONS_PICTURES=1): every run
#: draws slightly different bytes, and a test run must leave the checkout as it found it.
SCREENSHOTS = (
    Path(__file__).parents[2] / "docs" / "images"
    if os.environ.get("AIRFLOW_PARTITIONS_PICTURES")
    else Path(tempfile.gettempdir()) / "airflow-partitions-pictures"
)
DASH = "\u2013"  # the en dash of the page's ranges (2026-01 to 2026-03)
FULL, PARTIAL, FEW = "2026-05-01", "2026-05-02", "2026-05-03"
GAP, REFUSED_DAY = "2026-05-04", "2026-05-05"  # no key; a day key on the hours asset, refused
#: The Dags of dags/it_shapes.py, one per key shape the page draws.
SHAPES = [dag_id for dag_id in DAG_IDS if dag_id.startswith("it_shape_")]
#: it_shape_deadline_day's days: complete; 20 of 24 hours; 20 of 24 hours, then the 4 late ones.
DEADLINE_DAYS = ("2026-01-20", "2026-01-21", "2026-01-22")
LATE_HOURS = range(6, 10)
AIRPORTS = ("ewr", "jfk", "lga")
#: it_shape_airport_day's days (2026-02-15 to 2026-03-10): one hour each, all 24 for FULL_AIRPORT_DAY.
AIRPORT_DAYS = [(date(2026, 2, 15) + timedelta(days=n)).isoformat() for n in range(24)]
FULL_AIRPORT_DAY = "jfk|2026-02-20"
#: it_shape_store_day's stores (the Variable it_shape_stores) and days: 2025-11-28 from both stores
#: (it runs), four days from one store each (overdue and late), and a key of store-003, which the
#: Variable lists only after it was refused (then re-queued).
STORES = ["store-001", "store-002"]
STORE_DAYS = ["2025-11-28", "2025-11-29", "2025-11-30", "2025-12-01", "2025-12-02"]
REQUEUED_KEY = "store-003|2025-12-01"
#: it_shape_retail_week's days: one in each of the NRF 2025 weeks R2025-W01 to W14 (from Sunday
#: 2 February 2025, a week apart).
RETAIL_DAYS = [(date(2025, 2, 2) + timedelta(weeks=n)).isoformat() for n in range(14)]
#: The window sizes users have, for the pictures and the label checks.
SIZES = [(1280, 800), (1920, 1080)]


def _http(airflow, path: str, token: str | None = None, method: str = "GET") -> tuple[int, object]:
    """Call the view's API and return (status, decoded answer), errors included."""
    request = urllib.request.Request(f"{airflow.url}/partitions{path}", method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


@pytest.fixture(scope="module")
def days(airflow):
    """it_status_day with one day run, one 23 of 24 hours, one 5 of 24 hours (May 2026)."""
    _send(airflow, "it_status_hours", [f"{FULL}T{h:02d}" for h in range(24)])
    _send(airflow, "it_status_hours", [f"{PARTIAL}T{h:02d}" for h in range(24) if h != 17])
    _send(airflow, "it_status_hours", [f"{FEW}T{h:02d}" for h in range(5)])
    _settle(airflow, "ui")
    wait_until(
        lambda: any(
            r["partition_key"] == FULL for r in airflow.wait_for_runs("it_status_day", 1, timeout=120)
        ),
        timeout=120,
        what=f"the run of {FULL}",
    )
    return _state(airflow, "it_status_day")


@pytest.fixture(scope="module")
def refused(airflow, days):
    """A day key sent on it_status_hours, which it_status_day's rollup of hours refuses on arrival."""
    airflow.create_asset_event("it_status_hours", partition_key=REFUSED_DAY)
    wait_until(
        lambda: any(f"'{REFUSED_DAY}'" in r["message"] for r in _state(airflow, "it_status_day")["refusals"]),
        timeout=60,
        what=f"the refusal of {REFUSED_DAY}",
    )


#: Deletes the pending runs of it_shapes.py's Dags (most never complete), after the module.
CLEAN_UP = """
import sys
import tempfile
from sqlalchemy import delete, select
from airflow.models.asset import AssetPartitionDagRun, PartitionedAssetKeyLog
from airflow.utils.session import create_session
with create_session() as session:
    ids = session.scalars(select(AssetPartitionDagRun.id).where(
        AssetPartitionDagRun.target_dag_id.in_(sys.argv[1:]),
        AssetPartitionDagRun.created_dag_run_id.is_(None))).all()
    session.execute(delete(PartitionedAssetKeyLog).where(PartitionedAssetKeyLog.asset_partition_dag_run_id.in_(ids)))
    session.execute(delete(AssetPartitionDagRun).where(AssetPartitionDagRun.id.in_(ids)))
"""


@pytest.fixture(scope="module")
def shapes(airflow):
    """
    The keys of dags/it_shapes.py's Dags, sent through the REST API, and the runs they make.

    Months (2026-02 run; 2026-03 and 2025-11 overdue; 2099-01 pending), fiscal quarters
    (FY2026-Q3 run, FY2026-Q1 overdue), airport-days (one hour each, FULL_AIRPORT_DAY run), hours
    and quarter hours of 2026-04-01, deadline days (DEADLINE_DAYS: complete, ran with 20 of 24,
    ran with 20 then rerun for the late 4), a month of 744 hours with one, business days with a
    Saturday and a misspelled day (refused). The pending runs are deleted after the module.
    """

    def hours(day: str, leave_out: range = range(0)) -> list[str]:
        return [f"{day}T{h:02d}" for h in range(24) if h not in leave_out]

    complete, short, rerun = DEADLINE_DAYS
    _send(
        airflow,
        "it_shape_deadline_hours",
        hours(complete) + hours(short, LATE_HOURS) + hours(rerun, LATE_HOURS),
    )
    february = [(date(2026, 2, 1) + timedelta(days=n)).isoformat() for n in range(28)]
    _send(
        airflow,
        "it_shape_days",
        [*february, "2026-03-02", "2026-03-03", "2026-03-04", "2025-11-15", "2099-01-05"],
    )
    _send(airflow, "it_shape_fiscal_months", ["2026-01", "2026-02", "2026-03", "2025-07"])
    airport, day = FULL_AIRPORT_DAY.split("|")
    _send(
        airflow,
        "it_shape_airport_hours",
        [f"{a}|{d}T05" for d in AIRPORT_DAYS for a in AIRPORTS]
        + [f"{airport}|{k}" for k in hours(day, range(5, 6))],
    )
    quarters = ["2026-04-01T00:15", "2026-04-01T01:30", "2026-04-01T02:45"]
    _send(airflow, "it_shape_quarter_hours", quarters + [f"2026-04-01T06:{m:02d}" for m in (0, 15, 30, 45)])
    five = [
        "2026-04-01T05:00",
        "2026-04-01T05:05",
        "2026-04-01T05:10",
        "2026-04-01T05:15",
        "2026-04-01T05:35",
    ]
    _send(airflow, "it_shape_five_minutes", [*five, "2026-04-01T07:50"])
    _send(airflow, "it_shape_month_hours", ["2026-03-10T05"])
    _send(airflow, "it_shape_business_days", ["2026-08-03", "2026-08-01", "2026-8-3"])  # a Saturday, a typo
    _send(airflow, "it_shape_retail_days", RETAIL_DAYS)  # 14 weeks with a day each: overdue
    runs = {
        "it_shape_month_of_days": 1,
        "it_shape_fiscal_quarter": 1,
        "it_shape_airport_day": 1,
        "it_shape_hour": 1,
        "it_shape_quarter_hour": 1,
        "it_shape_deadline_day": 3,  # the two short days once settled (10 s), at their long-past deadline
    }
    for dag_id, count in runs.items():
        airflow.wait_for_runs(dag_id, count, timeout=180)
    _send(airflow, "it_shape_deadline_hours", [f"{rerun}T{h:02d}" for h in LATE_HOURS])  # late
    airflow.wait_for_runs("it_shape_deadline_day", 4, timeout=180)
    _settle(airflow, "shapes")
    yield
    done = subprocess.run(
        [sys.executable, "-c", CLEAN_UP, *SHAPES], env=airflow.env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def stores(airflow, shapes):
    """
    it_shape_store_day's days (:data:`STORE_DAYS`), the stores listed in the Variable it_shape_stores.

    2025-11-28 from both stores runs; the others, from one store each, are overdue and late (each
    expected within an hour of its end). :data:`REQUEUED_KEY` is refused (store-003 is not listed);
    then the Variable lists store-003, and the watch or ``requeue --yes`` (without ``--end``: until
    now), whichever is first, queues its stored event again for the Dag. Its pending runs are
    deleted with the shapes' after the module.
    """
    _set_variable(airflow, "it_shape_stores", STORES)
    sent_from = datetime.now(UTC)
    first, *others = STORE_DAYS
    _send(airflow, "it_shape_store_days", [f"{store}|{first}" for store in STORES])
    _send(airflow, "it_shape_store_days", [f"{STORES[n % 2]}|{day}" for n, day in enumerate(others)])
    _send(airflow, "it_shape_store_days", [REQUEUED_KEY])
    airflow.wait_for_runs("it_shape_store_day", 1, timeout=180)
    _set_variable(airflow, "it_shape_stores", [*STORES, "store-003"])
    # The api-server's watch takes the refused key back once the Variable lists its store
    # (docs/members.md); requeue --yes does too, by hand: whichever comes first, its event then
    # feeds the Dag once, never twice.
    done = _cli(airflow, "requeue", "it_shape_store_day", "--start", sent_from.isoformat(), "--yes")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] in (
        "re-queued 1 events into 1 partitions",
        "re-queued 0 events into 0 partitions",
    ), done.stdout
    wait_until(
        lambda: (
            airflow.query(
                "SELECT count(*) FROM partitioned_asset_key_log WHERE target_dag_id = 'it_shape_store_day' "
                "AND source_partition_key = :key",
                key=REQUEUED_KEY,
            )
            == [(1,)]
        ),
        timeout=60,
        what=f"{REQUEUED_KEY} taken back once",
    )
    _settle(airflow, "stores")


def canned_answer(partitions: int) -> dict:
    """
    A Dag's answer as ``GET /partitions/api/dags/{dag_id}`` gives it: *partitions* days from 2023-01-01.

    Every tenth pending and overdue, every tenth ran incomplete, failed, running; the rest succeeded.
    Laid out by the view's own functions (``layout.layout``, ``layout.overview``).
    """
    cycle = ["success"] * 6 + ["ran incomplete", "failed", "pending", "overdue"]
    items = []
    for n in range(partitions):
        key = (date(2023, 1, 1) + timedelta(days=n)).isoformat()
        state = cycle[n % len(cycle)]
        hours = [f"{key}T{h:02d}" for h in range(24)]
        waiting = state in ("pending", "overdue")
        progress = {"asset": "hours", "received": hours[:20], "expected": hours, "missing": hours[20:]}
        progress |= {"never_counting": [], "counted": 20, "received_total": 20}
        progress |= {"expected_total": 24, "missing_total": 4}
        short = state == "ran incomplete"
        ran = {"counted": 20 if short else 24, "awaited": 24, "missing": hours[20:] if short else []}
        ran |= {"missing_total": 4 if short else 0}
        run = {"run_id": f"asset_triggered__{key}", "state": "success" if short else state, "ran_with": ran}
        items.append(
            {
                "partition_key": key,
                "state": state,
                "runs": [] if waiting else [[run["run_id"], run["state"]]],
                "progress": [progress] if waiting else [],
                "opened_at": "2026-01-01T00:00:00+00:00" if waiting else None,
                "fires_at": None,
                "queue_position": n if waiting else None,
                "ran_with": None if waiting else ran,
                "history": [] if waiting else [run],
                "closes_at": None,
            }
        )
    first, last = items[0]["partition_key"], items[-1]["partition_key"]
    bucket = bucket_length(first, last)
    by_bucket: dict[str, Counter[str]] = defaultdict(Counter)
    for item in items:
        by_bucket[item["partition_key"][:bucket]][item["state"]] += 1
    strip = [[b, min(c, key=attention), sum(c.values())] for b, c in sorted(by_bucket.items())]
    answer = {
        "dag_id": "bench",
        "assets": [["hours", "hours"]],
        "partitions": items,
        "refusals": [],
        "pending_total": partitions // 5,
        "blocked_ahead": 0,
        "read_at": "2026-01-01T00:00:00+00:00",
        "total": partitions,
        "offset": 0,
        "limit": 1000,
        "states": dict(Counter(i["state"] for i in items)),
        "first": first,
        "last": last,
        "refusals_total": 0,
        "starved": 0,
        "bucket": bucket,
        "overview": [["", strip]],
    }
    return {
        **answer,
        "total_entries": partitions,
        "range": [first, last],
        "overview": layout.overview(answer),
        "grid": layout.layout(items),
    }


def test_the_asset_endpoint_shows_its_keys_by_day_with_gaps_and_refusals(airflow, days, refused):
    status, answer = _http(
        airflow, "/api/assets/it_status_hours?start=2026-05&end=2026-05", airflow._bearer()
    )
    assert status == 200, answer
    assert (answer["asset"], answer["uri"]) == ("it_status_hours", days["assets"][0][1])
    keys = {k["partition_key"]: k for k in answer["keys"]}
    hours = {f"{FULL}T{h:02d}" for h in range(24)} | {f"{FEW}T{h:02d}" for h in range(5)}
    assert hours <= set(keys) and f"{PARTIAL}T17" not in keys and REFUSED_DAY in keys
    assert all(k["events"] >= 1 and k["first"] <= k["last"] for k in answer["keys"])
    [series] = answer["coverage"]["series"]
    by_day = {d["day"]: d for d in series["days"]}
    assert [d["day"] for d in series["days"]][:5] == [FULL, PARTIAL, FEW, GAP, REFUSED_DAY]
    assert by_day[FULL]["missing_hours"] == [] and by_day[PARTIAL]["missing_hours"] == ["17"]
    assert by_day[FEW]["missing_hours"] == [f"{h:02d}" for h in range(5, 24)]
    assert by_day[GAP]["gap"] and not by_day[REFUSED_DAY]["gap"]
    [refusal] = [r for r in answer["refusals"] if f"'{REFUSED_DAY}'" in r["message"]]
    assert refusal["dag_id"] == "it_status_day" and "would never count" in refusal["message"]
    assert all("'2026-04-02'" not in r["message"] for r in answer["refusals"])  # out of the range
    status, everything = _http(airflow, "/api/assets/it_status_hours", airflow._bearer())
    assert len(everything["keys"]) >= len(answer["keys"]) and len(everything["refusals"]) >= 1
    assert _http(airflow, "/api/assets/it_no_such_asset", airflow._bearer())[0] == 404


def test_the_plugin_adds_a_partitions_tab_to_airflows_dag_pages(airflow):
    plugins = airflow.request("GET", "/api/v2/plugins")["plugins"]
    [ours] = [p for p in plugins if p["name"] == "airflow_partitions"]
    views = {v["destination"]: v for v in ours["external_views"]}
    assert views["dag"]["href"] == "/partitions/dags/{DAG_ID}" and views["dag"]["name"] == "Partitions"
    assert views["nav"]["href"] == "/partitions/"


def test_the_dags_endpoint_lists_the_partitioned_dags(airflow, days):
    status, answer = _http(airflow, "/api/dags", airflow._bearer())
    assert status == 200, answer
    listed = {d["dag_id"] for d in answer["dags"]}
    assert {"it_status_day", "it_series_day_by_deadline", "it_backfill_daily"} <= listed
    assert listed <= set(DAG_IDS) and answer["total_entries"] == len(listed)
    assert answer["states"] == [*STATES, "not opened"]
    # Each with its summary, the same as the state reader's: counts by state, range, strip.
    [day] = [d for d in answer["dags"] if d["dag_id"] == "it_status_day"]
    database = _state(airflow, "it_status_day")
    assert day["states"] == database["states"] and (day["first"], day["last"]) == (
        database["first"],
        database["last"],
    )
    assert sum(n for _, _, n in day["strip"]) == sum(day["states"].values())
    assert day["attention"] == min(day["states"], key=attention) == "overdue"
    # What needs attention first; ?state= keeps the Dags with partitions in one of those states.
    ranks = [attention(d["attention"]) if d["attention"] else len(STATES) for d in answer["dags"]]
    assert ranks == sorted(ranks)
    _, overdue = _http(airflow, "/api/dags?state=overdue&state=failed", airflow._bearer())
    assert "it_status_day" in {d["dag_id"] for d in overdue["dags"]}
    assert all(d["states"].get("overdue") or d["states"].get("failed") for d in overdue["dags"])


def test_the_dag_endpoint_is_the_state_reader_with_its_grid(airflow, days):
    status, answer = _http(airflow, "/api/dags/it_status_day", airflow._bearer())
    assert status == 200, answer
    assert answer["partitions"] == days["partitions"]
    assert answer["assets"] == days["assets"] and answer["total_entries"] == len(days["partitions"])
    by_key = {p["partition_key"]: p for p in answer["partitions"]}
    assert by_key[FULL]["state"] in {"queued", "running", "success"}
    assert by_key[PARTIAL]["state"] == "overdue" and by_key[FEW]["state"] == "overdue"  # May 2026 is over
    [may] = [b for b in answer["grid"] if b["title"] == "2026-05"]
    cells = {c["key"]: c for week in may["weeks"] for c in week if c and c["key"]}
    assert (cells[PARTIAL]["count"], cells[FEW]["count"]) == ("23/24", "5/24")
    assert cells[FULL]["state"] == by_key[FULL]["state"]


def test_the_dag_endpoint_pages_and_selects_a_time_range(airflow, days):
    token = airflow._bearer()
    _, may = _http(airflow, "/api/dags/it_status_day?start=2026-05&end=2026-05", token)
    assert [p["partition_key"] for p in may["partitions"]] == [FULL, PARTIAL, FEW]
    _, page = _http(airflow, "/api/dags/it_status_day?start=2026-05&end=2026-05&limit=1&offset=1", token)
    assert [p["partition_key"] for p in page["partitions"]] == [PARTIAL] and page["total_entries"] == 3
    _, every = _http(airflow, "/api/dags/it_status_day?limit=0", token)  # 0: every one, as --limit 0
    assert len(every["partitions"]) == every["total_entries"] >= 3
    assert may["range"] == [days["first"], days["last"]]  # the whole Dag's, whatever the selection
    _, overdue = _http(airflow, "/api/dags/it_status_day?start=2026-05&end=2026-05&state=overdue", token)
    assert [p["partition_key"] for p in overdue["partitions"]] == [PARTIAL, FEW]
    assert overdue["states"] == may["states"]  # counts of the whole selection, whatever the filter


def test_the_detail_endpoint_pages_the_lists_of_a_partition(airflow, days):
    token = airflow._bearer()
    path = f"/api/dags/it_status_day/partitions/{PARTIAL}"
    status, missing = _http(airflow, f"{path}?list=missing", token)
    assert status == 200, missing
    assert missing == {
        "keys": [f"{PARTIAL}T17"],
        "total_entries": 1,
        "offset": 0,
        "limit": 1000,
        "list": "missing",
    }
    _, received = _http(airflow, f"{path}?list=received&offset=20&limit=2", token)
    assert received["keys"] == [f"{PARTIAL}T21", f"{PARTIAL}T22"] and received["total_entries"] == 23
    _, awaited = _http(airflow, f"{path}?list=awaited", token)
    assert awaited["keys"] == [f"{PARTIAL}T{h:02d}" for h in range(24)]
    assert _http(airflow, "/api/dags/it_status_day/partitions/2026-05-29?list=missing", token)[0] == 404
    # A list that is none of the four is bad input, as on every route (it was a 404).
    status, refused = _http(airflow, f"{path}?list=everything", token)
    assert status == 400 and "list 'everything' is not one of" in refused, refused


@pytest.fixture(scope="module")
def signed_in(airflow, tmp_path_factory):
    """
    A second api-server on the session's database where users must sign in (not all admins).

    The session's Airflow makes every request an admin (``SIMPLE_AUTH_MANAGER_ALL_ADMINS``), as
    Airflow's own API then does; this one has one user, ``viewer`` (read-only role). Yields its
    URL and port (``.url``, ``.port`` of a namespace, like the fixture's) and the viewer's token.
    """
    folder = tmp_path_factory.mktemp("signed-in")
    port = free_port()
    env = {
        **airflow.env,
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "viewer:viewer",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(folder / "passwords.json"),
        "AIRFLOW__API__PORT": str(port),
    }
    process = _api_server(env, port, folder / "api-server.log")
    server = SimpleNamespace(url=f"http://127.0.0.1:{port}", port=port)
    try:
        wait_until(lambda: _up(server), timeout=180, what="the signed-in api-server")
        password = json.loads((folder / "passwords.json").read_text())["viewer"]
        yield server, _token(server, "viewer", password)
    finally:
        _stop(process)


def _api_server(env: dict[str, str], port: int, log_path: Path) -> subprocess.Popen:
    """Start ``airflow api-server --apps core`` on *port* with *env*, its output in *log_path*."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "airflow", "api-server", "--apps", "core", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _token(server, username: str, password: str) -> str:
    request = urllib.request.Request(
        f"{server.url}/auth/token",
        data=json.dumps({"username": username, "password": password}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())["access_token"]


def _up(server) -> bool:
    try:
        return _http(server, "/api/dags")[0] in (401, 403)
    except OSError:
        return False


def test_anonymous_and_forged_requests_are_refused_and_nothing_writes(signed_in, days):
    server, viewer = signed_in
    detail = f"/api/dags/it_status_day/partitions/{PARTIAL}?list=missing"
    for path in ("/api/dags", "/api/dags/it_status_day", detail, "/api/assets/it_status_hours"):
        assert _http(server, path)[0] == 401
        assert _http(server, path, "not-a-token")[0] == 403
        status, answer = _http(server, path, viewer)
        assert status == 200, answer
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert _http(server, path, viewer, method=method)[0] == 405
    assert _http(server, "/api/dags/it_status_day", viewer)[1]["partitions"] == days["partitions"]
    assert _http(server, "/api/dags/it_no_such_dag", viewer)[0] == 404
    assert _http(server, "/api/assets/it_no_such_asset", viewer)[0] == 404


#: it_vic_day_from_variable's Variable, as test_members.py leaves it (that module sets it first).
VIC_STORES = ["store-005", "store-006", {"value": "store-009", "start": "2026-04-06"}]


def test_explain_shows_a_variables_members_only_to_who_may_read_the_variable(airflow, signed_in):
    # The simple auth manager lets a viewer read Dags but not Variables (that takes the OP role).
    server, viewer = signed_in
    if not airflow.query("SELECT 1 FROM variable WHERE key = 'it_vic_stores'"):
        _set_variable(airflow, "it_vic_stores", VIC_STORES)
    path = "/api/dags/it_vic_day_from_variable/explain?key=2026-04-06&downstream=true"
    status, admins = _http(airflow, path, airflow._bearer())
    assert status == 200, admins
    [stores] = admins["keys"][0]["members"]
    assert stores["dimension"] == "store" and stores["source"] == "Variable 'it_vic_stores'"
    assert stores["awaited"] == ["store-005", "store-006", "store-009"]
    status, viewers = _http(server, path, viewer)
    assert status == 200, viewers
    assert viewers["keys"][0]["members"] == []
    # The rest is the Dag's, which the viewer may read: the same explanation.
    assert {**viewers, "keys": [{**viewers["keys"][0], "members": None}]} == {
        **admins,
        "keys": [{**admins["keys"][0], "members": None}],
    }


# -- the page in a real headless Chromium, against the database's answer ------------------------

needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="Debian's chromium is not installed (scripts/dev.sh test)"
)


def _browser(airflow, width: int = 1400, height: int = 900) -> Browser:
    """A cold headless Chromium of *width* by *height* px signed in to *airflow* (its ``_token`` cookie)."""
    browser = Browser(width, height)
    browser.set_cookie(airflow.url, "_token", airflow._bearer())
    return browser


def _show(browser: Browser, url: str) -> None:
    """Open *url* and wait until the page has drawn its answer (``data-ready``, set by the page)."""
    with contextlib.suppress(RuntimeError):
        browser.eval("window.stale = true")  # the page navigated from: not the one awaited
    browser.open(url)
    _drawn(browser)


def _drawn(browser: Browser) -> None:
    """Wait until the page has drawn the answer of its latest route (a click, a filter, a zoom)."""
    browser.wait_for("!window.stale && document.body.dataset.ready === '1'", timeout=60)
    assert browser.eval("document.getElementById('message').innerText") == ""


def _cells(browser: Browser, where: str = "#grid") -> dict[str, str]:
    """The partition cells drawn under *where*: key to state."""
    return dict(
        browser.eval(
            f"[...document.querySelectorAll({json.dumps(where + ' .cell[data-key]')})]"
            ".map(c => [c.dataset.key, c.dataset.state])"
        )
    )


def _settled_states(state: dict) -> dict[str, str]:
    """Each partition's state in a state reader's answer, leaving out runs still under way."""
    return {
        p["partition_key"]: p["state"] for p in state["partitions"] if p["state"] not in {"queued", "running"}
    }


def _style(browser: Browser, selector: str, *properties: str) -> list[str]:
    """The computed CSS *properties* of the element *selector*."""
    return browser.eval(
        f"(() => {{ const s = getComputedStyle(document.querySelector({json.dumps(selector)}));"
        f" return {json.dumps(properties)}.map(p => s.getPropertyValue(p)); }})()"
    )


#: For each cell *selector* finds in a grid (.periods, .rows): its key (or zoom), the texts of the
#: row title and of the column head level with it, its left edge: where the page drew it.
PLACES = """
((selector) => {
  const box = (e) => e.getBoundingClientRect();
  const middle = (e) => { const r = box(e); return [r.x + r.width / 2, r.y + r.height / 2]; };
  return [...document.querySelectorAll(selector)].map((c) => {
    const [x, y] = middle(c);
    const area = c.parentElement;
    const row = [...area.querySelectorAll('.rowtitle')].find((t) => Math.abs(middle(t)[1] - y) < 4);
    const head = [...area.querySelectorAll('.colhead')].find((h) => Math.abs(middle(h)[0] - x) < 4);
    const text = (e) => (e ? e.textContent : null);
    return [c.dataset.key || c.dataset.zoom, text(row), text(head), box(c).x];
  });
})
"""
#: The texts of a cell *selector* finds: its label and its count ("n/m"), if any.
TEXTS = """((selector) => [...document.querySelectorAll(selector)].map(
  (c) => [c.firstChild ? c.firstChild.textContent : "", c.querySelector("small")?.textContent ?? null]))"""
#: The boxes of every axis label on the page: [left, right, top, bottom, text].
TICKS = """[...document.querySelectorAll('.tick')].map((t) => {
  const r = t.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom, t.textContent]; })"""


def _overlapping(boxes: list[list]) -> list[tuple]:
    """The pairs of boxes ([left, right, top, bottom, text]) that intersect."""
    return [
        (a[4], b[4])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]
    ]


@needs_chromium
def test_the_page_shows_the_cells_of_the_database_and_a_click_opens_the_detail(airflow, days):
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/")
        browser.click('a[data-dag="it_status_day"]')
        _drawn(browser)
        shown = _cells(browser)
        database = _state(airflow, "it_status_day")
        assert shown.items() >= _settled_states(database).items()
        assert set(shown) == {p["partition_key"] for p in database["partitions"]}
        assert browser.eval("document.querySelectorAll('.cell.s-not-opened').length") > 0
        # From/To show the Dag's own range, not an invented date.
        assert browser.eval("document.forms.range.start.placeholder") == database["first"]
        assert browser.eval("document.forms.range.end.placeholder") == database["last"]

        browser.click(f'.cell[data-key="{PARTIAL}"]')
        detail = browser.wait_for(
            "!document.getElementById('detail').hidden && document.getElementById('detail').innerText"
        )
        assert PARTIAL in detail and f"{PARTIAL}T17" in detail and "23 of 24" in detail
        assert "overdue" in detail and "no completion deadline will fire it" in detail
        assert browser.eval("location.pathname") == "/partitions/dags/it_status_day"

        browser.color_scheme("dark")
        _show(browser, f"{airflow.url}/partitions/dags/it_status_day?key={PARTIAL}")
        assert browser.eval("document.documentElement.dataset.theme") == "dark"
        assert browser.eval("!document.getElementById('detail').hidden")  # the key of the address
        browser.screenshot(SCREENSHOTS / "partitions-view-dark.png")


@needs_chromium
def test_the_overview_shows_each_dags_counts_range_and_strip_as_the_database(airflow, days, shapes):
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/")
        rows = browser.eval(
            """[...document.querySelectorAll('tr[data-dag-row]')].map((r) => [r.dataset.dagRow, {
              states: Object.fromEntries([...r.querySelectorAll('.count')].map(
                (c) => [c.dataset.state, parseInt(c.textContent)])),
              range: r.querySelector('.range').textContent.trim(),
              strip: [...r.querySelectorAll('.segment')].map(
                (s) => [s.dataset.bucket, s.dataset.state, Number(s.dataset.count)]),
            }])"""
        )
        status, answer = _http(airflow, "/api/dags", airflow._bearer())
        assert status == 200, answer
        assert {d for d, _ in rows} == {d["dag_id"] for d in answer["dags"]}
        shown = dict(rows)
        for dag_id in [*SHAPES, "it_status_day"]:  # settled: their runs are over
            [api] = [d for d in answer["dags"] if d["dag_id"] == dag_id]
            if dag_id in ("it_shape_deadline_day", "it_shape_airport_day", "it_status_day"):
                database = _state(airflow, dag_id)  # status --json: a new process, some seconds each
            else:
                database = _http(airflow, f"/api/dags/{dag_id}", airflow._bearer())[1]
            assert shown[dag_id]["states"] == api["states"] == database["states"], dag_id
            assert shown[dag_id]["strip"] == api["strip"], dag_id
            span = {database["first"], database["last"]} - {None}  # none before its keys are sent
            assert shown[dag_id]["range"] == f" {DASH} ".join(sorted(span)), dag_id
        deadline = shown["it_shape_deadline_day"]  # the rerun for its late hours completed 2026-01-22
        assert deadline["states"] == {"success": 2, "ran incomplete": 1}
        assert deadline["strip"] == [["2026-01", "ran incomplete", 3]]
        # What needs attention first: the rows keep the API's order, most urgent state first. The
        # API is read again after the page: Dags of other tests may have moved since (runs
        # finishing, partitions becoming late); those that show the same counts keep their order.
        read = {d["dag_id"]: d["states"] for d in answer["dags"]}
        same = {dag_id for dag_id, row in rows if row["states"] == read[dag_id]}
        assert len(same) >= len(SHAPES)
        api_order = [d["dag_id"] for d in answer["dags"] if d["dag_id"] in same]
        assert [d for d, _ in rows if d in same] == api_order
        ranks = [STATES.index(d["attention"]) if d["attention"] else len(STATES) for d in answer["dags"]]
        assert ranks == sorted(ranks)
        browser.screenshot(SCREENSHOTS / "partitions-overview.png")


@needs_chromium
def test_the_overviews_filters_keep_the_dags_with_partitions_in_those_states(airflow, shapes, days):
    token = airflow._bearer()
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/")
        everything = browser.eval("document.querySelectorAll('tr[data-dag-row]').length")
        browser.click('#dag-filters input[value="ran incomplete"]')
        _drawn(browser)
        assert browser.eval("location.search") == "?state=ran+incomplete"
        shown = browser.eval("[...document.querySelectorAll('tr[data-dag-row]')].map(r => r.dataset.dagRow)")
        _, answer = _http(airflow, "/api/dags?state=ran%20incomplete", token)
        assert shown == [d["dag_id"] for d in answer["dags"]]
        assert "it_shape_deadline_day" in shown and "it_shape_fiscal_quarter" not in shown
        assert all(d["states"].get("ran incomplete") for d in answer["dags"])

        browser.click('#dag-filters input[value="overdue"]')  # either state
        _drawn(browser)
        shown = browser.eval("[...document.querySelectorAll('tr[data-dag-row]')].map(r => r.dataset.dagRow)")
        _, answer = _http(airflow, "/api/dags?state=ran%20incomplete&state=overdue", token)
        assert shown == [d["dag_id"] for d in answer["dags"]]
        assert {"it_shape_deadline_day", "it_shape_fiscal_quarter", "it_status_day"} <= set(shown)

        # One at a time, as a user sees each answer: an answer drawn between finding a chip and
        # clicking it shortens the page, and the click lands where the chip was.
        browser.click('#dag-filters input[value="ran incomplete"]')
        _drawn(browser)
        browser.click('#dag-filters input[value="overdue"]')
        _drawn(browser)
        assert browser.eval("location.search") == ""
        assert browser.eval("document.querySelectorAll('tr[data-dag-row]').length") >= everything


@needs_chromium
def test_a_day_that_ran_incomplete_has_a_colour_of_its_own_and_its_detail_says_what_it_ran_with(
    airflow, shapes
):
    complete, short, rerun = DEADLINE_DAYS
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_deadline_day")
        database = _state(airflow, "it_shape_deadline_day")
        assert _cells(browser) == _settled_states(database)
        assert _cells(browser)[complete] == "success" and _cells(browser)[short] == "ran incomplete"
        assert browser.eval(TEXTS + f"('.cell[data-key=\"{short}\"]')") == [[str(int(short[-2:])), "20/24"]]
        success = _style(browser, f'.cell[data-key="{complete}"]', "background-color")
        incomplete = _style(browser, f'.cell[data-key="{short}"]', "background-color")
        failed = _style(browser, "#legend .swatch.s-failed", "background-color")
        assert len({*success, *incomplete, *failed}) == 3, (success, incomplete, failed)
        # The legend has it, with its count, in the colour of its cells.
        legend = browser.eval(
            "[...document.querySelectorAll('#legend button[data-filter]')]"
            ".map(b => [b.dataset.filter, b.querySelector('.n').textContent])"
        )
        assert dict(legend) == {s: str(database["states"].get(s, 0)) for s in STATES}
        assert _style(browser, "#legend .swatch.s-ran-incomplete", "background-color") == incomplete

        # Keyboard: a cell is a button, the arrows move between cells, Enter opens the detail.
        browser.eval(f"document.querySelector('.cell[data-key=\"{complete}\"]').focus()")
        browser.press("ArrowRight")
        assert browser.eval("document.activeElement.dataset.key") == short
        browser.press("Enter")
        browser.wait_for(f"document.getElementById('detail').dataset.key === '{short}'")
        browser.press("Escape")
        assert browser.eval("document.getElementById('detail').hidden")
        browser.click(f'.cell[data-key="{short}"]')
        detail = browser.wait_for(
            "!document.getElementById('detail').hidden && document.getElementById('detail').innerText"
        )
        by_key = {p["partition_key"]: p for p in database["partitions"]}
        ran = by_key[short]["ran_with"]
        assert (ran["counted"], ran["awaited"]) == (20, 24)
        assert "ran with 20 of 24 upstream keys" in detail and "4 keys missing" in detail
        assert all(key in detail for key in ran["missing"])
        browser.screenshot(SCREENSHOTS / "partitions-view.png")

        browser.click(f'.cell[data-key="{rerun}"]')
        browser.wait_for(f"document.getElementById('detail').dataset.key === '{rerun}'")
        runs = browser.eval("[...document.querySelectorAll('#detail ol.runs li')].map(li => li.innerText)")
        history = by_key[rerun]["history"]
        assert len(history) == len(runs) == 2  # the deadline's run, then the rerun for the late hours
        for run, text in zip(history, runs, strict=True):
            assert run["run_id"] in text and run["state"] in text
            ran = run["ran_with"]
            assert f"ran with {ran['counted']} of {ran['awaited']} upstream keys" in text
        assert [(r["ran_with"]["counted"], r["ran_with"]["awaited"]) for r in history] == [(20, 24), (4, 24)]
        # Together, its runs had every hour: the period is complete.
        together = browser.eval("document.querySelector('#detail .ran-with').innerText")
        assert (
            by_key[rerun]["state"] == "success"
            and "Its 2 runs ran with all 24 of 24 upstream keys" in together
        )


@needs_chromium
def test_months_and_fiscal_quarters_draw_as_years_by_period_and_overdue_apart_from_pending(airflow, shapes):
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_month_of_days")
        database = _state(airflow, "it_shape_month_of_days")
        assert _cells(browser) == _settled_states(database)
        assert _settled_states(database) == {
            "2025-11": "overdue",
            "2026-02": "success",
            "2026-03": "overdue",
            "2099-01": "pending",
        }
        places = browser.eval(PLACES + "('#grid .periods .cell[data-key]')")
        assert {key: (row, head) for key, row, head, _ in places} == {
            key: (key[:4], key[5:]) for key in _settled_states(database)
        }
        overdue = _style(browser, '.cell[data-key="2026-03"]', "background-image", "border-top-color")
        pending = _style(browser, '.cell[data-key="2099-01"]', "background-image", "border-top-color")
        assert "gradient" in overdue[0] and pending[0] == "none" and overdue[1] != pending[1]
        assert browser.eval(TEXTS + "('.cell[data-key=\"2026-03\"]')") == [["03", "3/31"]]
        assert browser.eval("document.querySelector('#legend [data-filter=\"overdue\"]') !== null")
        browser.screenshot(SCREENSHOTS / "partitions-periods.png")

        _show(browser, f"{airflow.url}/partitions/dags/it_shape_fiscal_quarter")
        database = _state(airflow, "it_shape_fiscal_quarter")
        assert (
            _cells(browser) == _settled_states(database) == {"FY2026-Q1": "overdue", "FY2026-Q3": "success"}
        )
        places = browser.eval(PLACES + "('#grid .periods .cell[data-key]')")
        places = {key: (row, head) for key, row, head, _ in places}
        assert places == {"FY2026-Q1": ("FY2026", "Q1"), "FY2026-Q3": ("FY2026", "Q3")}
        assert browser.eval("document.querySelectorAll('#grid .periods .colhead').length") == 4


@needs_chromium
def test_hours_draw_as_their_days_strip_and_minutes_by_hour_zoom_into_one_hour(airflow, shapes):
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_hour")
        database = _state(airflow, "it_shape_hour")
        assert _cells(browser) == _settled_states(database)
        assert set(_cells(browser)) == {f"2026-04-01T{h:02d}" for h in (0, 1, 2, 6)}
        strip = browser.eval(
            "[...document.querySelectorAll('#grid .day-block .cell')]"
            ".map(c => [c.dataset.key || null, c.firstChild.textContent])"
        )
        assert [label for _, label in strip] == [f"{h:02d}" for h in range(24)]  # 00 to 23, in order
        assert [key for key, _ in strip if key] == sorted(_cells(browser))
        assert all(key is None or key.endswith("T" + label) for key, label in strip)

        _show(browser, f"{airflow.url}/partitions/dags/it_shape_quarter_hour")
        database = _state(airflow, "it_shape_quarter_hour")
        keys = {p["partition_key"] for p in database["partitions"]}
        assert keys == {"2026-04-01T05:00", "2026-04-01T05:15", "2026-04-01T05:30", "2026-04-01T07:45"}
        hours = dict(
            browser.eval(
                "[...document.querySelectorAll('#grid .cell[data-zoom]')]"
                ".map(c => [c.dataset.zoom, [c.dataset.state, c.title]])"
            )
        )
        assert set(hours) == {"2026-04-01T05", "2026-04-01T07"}
        worst = min(
            (p["state"] for p in database["partitions"] if "T05" in p["partition_key"]), key=STATES.index
        )
        assert hours["2026-04-01T05"][0] == worst and "3 partitions" in hours["2026-04-01T05"][1]

        browser.click('#grid .cell[data-zoom="2026-04-01T05"]')
        _drawn(browser)
        assert browser.eval("location.search") == "?start=2026-04-01T05&end=2026-04-01T05"
        assert _cells(browser) == {k: v for k, v in _settled_states(database).items() if "T05" in k}
        assert [label for label, _ in browser.eval(TEXTS + "('#grid .hour-block .cell')")] == [
            "00",
            "15",
            "30",
        ]
        browser.click("#zoom-out")  # to the day
        _drawn(browser)
        assert browser.eval("location.search") == "?start=2026-04-01&end=2026-04-01"
        browser.click("#whole")
        _drawn(browser)
        assert browser.eval("location.search") == ""


@needs_chromium
def test_composite_keys_draw_a_row_per_airport_under_a_date_axis_and_the_heatmap_zooms(airflow, shapes):
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_airport_day")
        database = _state(airflow, "it_shape_airport_day")
        settled = _settled_states(database)
        assert _cells(browser) == settled and len(settled) == len(AIRPORTS) * len(AIRPORT_DAYS)
        assert settled[FULL_AIRPORT_DAY] == "success"
        places = browser.eval(PLACES + "('#grid .rows .cell[data-key]')")
        assert all(key.split("|")[0] == row for key, row, _, _ in places)  # each in its airport's row
        for airport in AIRPORTS:  # in time order, left to right
            xs = [x for key, row, _, x in sorted(places) if row == airport]
            assert xs == sorted(xs) and len(xs) == len(AIRPORT_DAYS)
        assert browser.eval(
            "[...document.querySelectorAll('#grid .rows .cell')].every(c => c.innerText === '')"
        )
        # A date axis: labels only where the month changes (and a few days between), none overlapping.
        ticks = browser.eval(TICKS)
        assert ticks and not _overlapping(ticks)
        march = browser.eval(
            """(() => {
              const ticks = [...document.querySelectorAll('#grid .rows .tick')];
              const t = ticks.find(t => t.textContent === '2026-03');
              const c = document.querySelector('#grid .rows .cell[data-key="jfk|2026-03-01"]');
              return [t.getBoundingClientRect().x, c.getBoundingClientRect().x]; })()"""
        )
        assert abs(march[0] - march[1]) < 1.5, march  # the label stands over 2026-03-01
        # The heatmap of every partition: a row per airport, a cell per month in its worst state.
        _, answer = _http(airflow, "/api/dags/it_shape_airport_day", airflow._bearer())
        heat = browser.eval(PLACES + "('#overview .cell[data-zoom]')")
        states = browser.eval(
            "[...document.querySelectorAll('#overview .cell[data-zoom]')].map(c => c.dataset.state)"
        )
        expected = [
            (r["title"], c["zoom"][0], c["state"]) for r in answer["overview"]["rows"] for c in r["cells"]
        ]
        assert sorted(
            (row, zoom, state) for (zoom, row, _, _), state in zip(heat, states, strict=True)
        ) == sorted(expected)
        assert {row for _, row, _, _ in heat} == set(AIRPORTS) and {z for z, *_ in heat} == {
            "2026-02",
            "2026-03",
        }
        browser.screenshot(SCREENSHOTS / "partitions-rows.png")

        browser.click('#overview .cell[data-zoom="2026-03"]')
        _drawn(browser)
        assert browser.eval("location.search") == "?start=2026-03&end=2026-03"
        assert _cells(browser) == {k: v for k, v in settled.items() if "|2026-03" in k}
        days_zoomed = browser.eval(
            "[...document.querySelectorAll('#overview .cell[data-zoom]')].map(c => c.dataset.zoom)"
        )
        assert days_zoomed and all(len(day) == 10 and day.startswith("2026-03") for day in days_zoomed)
        ticks = browser.eval(TICKS)
        assert ticks and not _overlapping(ticks)
        browser.click("#whole")
        _drawn(browser)
        assert browser.eval("location.search") == "" and _cells(browser) == settled


@needs_chromium
def test_the_detail_pages_through_a_list_longer_than_the_answer_holds(airflow, shapes):
    token = airflow._bearer()
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_month_of_hours")
        browser.click('.cell[data-key="2026-03"]')
        browser.wait_for("document.getElementById('detail').dataset.key === '2026-03'")
        pager = '#detail .pager[data-list="missing"]'
        shown = browser.eval(f"[...document.querySelectorAll('{pager} .keys li')].map(li => li.textContent)")
        _, first = _http(
            airflow, "/api/dags/it_shape_month_of_hours/partitions/2026-03?list=missing&limit=100", token
        )
        assert first["total_entries"] == 743 and shown == first["keys"] and len(shown) == 100
        assert browser.eval(f"document.querySelector('{pager} .page-of').textContent") == f"1{DASH}100 of 743"
        browser.click(f'{pager} button[data-page="1"]')
        browser.wait_for(f"document.querySelector('{pager} .page-of').textContent === '101{DASH}200 of 743'")
        shown = browser.eval(f"[...document.querySelectorAll('{pager} .keys li')].map(li => li.textContent)")
        _, second = _http(
            airflow,
            "/api/dags/it_shape_month_of_hours/partitions/2026-03?list=missing&offset=100&limit=100",
            token,
        )
        assert shown == second["keys"] and shown[0] > first["keys"][-1]
        assert browser.eval(f"document.querySelector('{pager} button[data-page=\"-1\"]').disabled") is False


@needs_chromium
def test_refused_keys_lead_with_our_reason_and_the_calendars_rule_apart_from_mistakes(airflow, shapes):
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_business_month")
        _, answer = _http(airflow, "/api/dags/it_shape_business_month", airflow._bearer())
        reasons = {r["partition_key"]: (r["expected"], r["reason"]) for r in answer["refusals"]}
        assert reasons["2026-08-01"][0] is True and reasons["2026-8-3"][0] is False
        listed = browser.eval(
            """[...document.querySelectorAll('#refusals .refused li')].map(li => [
              li.dataset.key, li.closest('.refused').classList.contains('expected'),
              li.querySelector('.reason').textContent, li.querySelector('details').open,
              li.querySelector('details pre').textContent])"""
        )
        assert {key: (expected, reason) for key, expected, reason, _, _ in listed} == reasons
        assert all(not opened for *_, opened, _ in listed)  # Airflow's wording, folded away
        assert all("misconfigured" in message for *_, message in listed)
        assert "not a business day" in reasons["2026-08-01"][1]


@needs_chromium
def test_the_dag_page_links_to_its_asset_page_which_shows_its_keys_and_gaps(airflow, days, refused):
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/it_status_day")
        browser.click('a[data-asset="it_status_hours"]')
        _drawn(browser)
        assert browser.eval("location.pathname") == "/partitions/assets/it_status_hours"
        shown = set(
            browser.eval("[...document.querySelectorAll('#coverage code[data-key]')].map(c => c.dataset.key)")
        )
        assert {f"{FULL}T00", f"{FULL}T23", f"{PARTIAL}T16", f"{FEW}T04", REFUSED_DAY} <= shown
        assert f"{PARTIAL}T17" not in shown
        assert browser.eval(f"document.querySelector('tr.gap[data-day=\"{GAP}\"]') !== null")
        assert browser.eval(f"document.querySelector('tr.partial[data-day=\"{PARTIAL}\"]').innerText").count(
            "17"
        )
        assert "Days are local days in UTC, as it_status_day reads them" in browser.eval(
            "document.getElementById('asset-zone').innerText"
        )
        assert "refused on arrival" in browser.eval("document.getElementById('asset-refusals').innerText")
        browser.click("#asset-refusals details.refusals summary")  # the count, then the keys
        refusals = browser.eval("document.getElementById('asset-refusals').innerText")
        assert REFUSED_DAY in refusals and "it_status_day" in refusals and "would never count" in refusals
        browser.screenshot(SCREENSHOTS / "partitions-asset.png")

        # A feed of UTC hours read as New York days says so (no key needed: the zone is the consumer's).
        _show(browser, f"{airflow.url}/partitions/assets/it_deadline_utc_hours")
        zone = browser.eval("document.getElementById('asset-zone').innerText")
        assert "America/New_York" in zone and "it_new_york_day_by_deadline" in zone


@needs_chromium
def test_a_page_of_1000_partitions_draws_one_element_per_cell():
    """1,000 partitions as the API lays them out (a canned answer, no Airflow): the page's own cost.

    Its speed is measured by benchmarks/bench_ui.py (first paint in a cold browser), not asserted here.
    """
    with PageServer({"/dags/bench": canned_answer(1000)}) as server, Browser() as browser:
        _show(browser, server.url("/dags/bench"))
        cells = browser.eval("document.querySelectorAll('#grid .cell[data-key]').length")
        elements = browser.eval("document.getElementsByTagName('*').length")
    assert cells == 1000 and elements < 2500, (cells, elements)


@needs_chromium
def test_the_page_without_a_session_asks_to_sign_in(signed_in):
    server, _ = signed_in
    with Browser() as browser:
        browser.open(f"{server.url}/partitions/dags/it_status_day")
        message = browser.wait_for("document.getElementById('message').innerText")
        assert "not signed in" in message
        assert browser.eval("document.querySelectorAll('.cell').length") == 0


def test_status_marks_the_refused_key_re_queued_since_and_a_range_leaves_out_the_refusals_outside_it(
    airflow, stores
):
    done = _cli(airflow, "status", "it_shape_store_day")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "  1 key refused on arrival (Airflow's audit log); of the latest 1, 0 by the calendar's rule, 1 for "
        "other members (another Dag's), 0 mistaken; 1 re-queued since (their events feed a run now)\n"
    ) in done.stdout
    assert f"other member    {REQUEUED_KEY} (re-queued since): partition key '{REQUEUED_KEY}'" in done.stdout
    # Its day is 2025-12-01: a range from the next day lists no refusal.
    later = _cli(airflow, "status", "it_shape_store_day", "--start", "2025-12-02", "--all")
    assert later.returncode == 0 and "2025-12-02" in later.stdout and "refused" not in later.stdout, (
        later.stdout
    )
    token = airflow._bearer()
    _, day = _http(airflow, "/api/dags/it_shape_store_day?start=2025-12-01&end=2025-12-01", token)
    assert [(r["partition_key"], r["requeued"]) for r in day["refusals"]] == [(REQUEUED_KEY, True)]
    assert day["refusals_total"] == 1
    _, november = _http(airflow, "/api/dags/it_shape_store_day?end=2025-11", token)
    assert (november["refusals"], november["refusals_total"]) == ([], 0)


#: Every label of the page's grids that must be readable: [left, right, top, bottom, text] of the
#: axis ticks (months over days) and the column heads (each column's day, hour, period).
LABELS = """[...document.querySelectorAll('.tick, .colhead')].map((t) => {
  const r = t.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom, t.textContent]; })"""
#: Each axis tick under *where*: the month (day, year) it names in full, the text it shows, whether
#: that text shows whole (not cut by the tick's room).
TICK_TEXTS = """((where) => [...document.querySelectorAll(where + ' .tick')].map(
  (t) => [t.title, t.textContent, t.scrollWidth <= t.clientWidth + 1]))"""
#: The corner an element *selector* finds draws after itself (``::after``): its content and colour.
CORNER = """((s) => { const a = getComputedStyle(document.querySelector(s), '::after');
  return [a.content, a.borderTopColor]; })"""


def _heads(browser: Browser, where: str) -> dict[str, str]:
    """The head over each cell *where* finds (as :data:`PLACES` reads them): key to head, each one named."""
    places = browser.eval(PLACES + f"({json.dumps(where)})")
    assert places and all(head for _, _, head, _ in places), places
    return {key: head for key, _, head, _ in places}


@needs_chromium
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_view_names_every_month_and_day_it_draws_at_the_sizes_users_have(airflow, shapes, stores, size):
    width, height = size
    with _browser(airflow, width, height) as browser:
        # Airport-days from 27 February to 2 March: two days of each month under one axis.
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_airport_day?start=2026-02-27&end=2026-03-02")
        ticks = browser.eval(TICK_TEXTS + "('#grid .rows')")
        assert [title for title, _, _ in ticks] == ["2026-02", "2026-03"], ticks  # both months
        assert all(text and title.endswith(text) and whole for title, text, whole in ticks), ticks
        heads = _heads(browser, "#grid .rows .cell[data-key]")
        assert {key.split("|")[1]: head for key, head in heads.items()} == {
            "2026-02-27": "27",
            "2026-02-28": "28",
            "2026-03-01": "01",
            "2026-03-02": "02",
        }
        assert not _overlapping(browser.eval(LABELS))
        if size == SIZES[1]:
            browser.screenshot(SCREENSHOTS / "partitions-rows-two-months.png")
        _store_days_are_two_titled_months_late_apart_and_the_refusal_one_click_away(airflow, browser, size)

        # Retail weeks: a heatmap by week, every week of the year numbered over the grid.
        _show(browser, f"{airflow.url}/partitions/dags/it_shape_retail_week")
        heading = browser.eval("document.querySelector('#overview h4').innerText")
        assert heading.startswith("All 14 partitions of the selection by week:"), heading
        overview = browser.eval(
            "[...document.querySelectorAll('#overview .colhead')].map(h => h.textContent)"
        )
        assert overview == [f"{n:02d}" for n in range(1, 15)]
        weeks = _heads(browser, "#grid .periods .cell[data-key]")
        assert weeks == {f"R2025-W{n:02d}": f"{n:02d}" for n in range(1, 15)}
        assert browser.eval("document.querySelectorAll('#grid .periods .colhead').length") == 52
        assert not _overlapping(browser.eval(LABELS))


def _store_days_are_two_titled_months_late_apart_and_the_refusal_one_click_away(
    airflow, browser: Browser, size: tuple[int, int]
) -> None:
    _show(browser, f"{airflow.url}/partitions/dags/it_shape_store_day")
    _, answer = _http(airflow, "/api/dags/it_shape_store_day", airflow._bearer())
    titles = browser.eval("[...document.querySelectorAll('#grid .month-block')].map(b => b.dataset.title)")
    assert titles == ["2025-11", "2025-12"]
    # Late: the days from one store each, ended over an hour ago; marked by a corner of their own.
    late = {p["partition_key"] for p in answer["partitions"] if p["late_since"]}
    assert late == set(STORE_DAYS[1:]) and answer["late"] == len(late)
    marked = browser.eval("[...document.querySelectorAll('#grid .cell.late')].map(c => c.dataset.key)")
    assert set(marked) == late
    content, colour = browser.eval(CORNER + f"('.cell.late[data-key=\"{STORE_DAYS[1]}\"]')")
    assert content != "none" and browser.eval(CORNER + "('#legend .late-key .swatch')") == [content, colour]
    assert browser.eval(CORNER + f"('.cell[data-key=\"{STORE_DAYS[0]}\"]')")[0] == "none"  # it ran: not late
    hatch = _style(browser, f'.cell[data-key="{STORE_DAYS[1]}"]', "background-image")[0]
    assert "gradient" in hatch and colour not in hatch  # overdue's hatch, late's corner over it
    legend = browser.eval("document.querySelector('#legend .late-key').innerText")
    assert legend.split() == ["late", str(len(late))]
    # The refused key: one line with its count, the grid above the fold; a click lists it.
    summary, opened, tall = browser.eval(
        "(() => { const d = document.querySelector('#refusals details.refusals');"
        " return [d.querySelector('summary').innerText, d.open, d.getBoundingClientRect().height]; })()"
    )
    assert summary == "1 key refused on arrival: 1 for other members; 1 re-queued since"
    assert not opened and tall < 40, (opened, tall)
    top = browser.eval("document.querySelector('#grid .cell[data-key]').getBoundingClientRect().top")
    assert top < size[1], top
    if size == SIZES[0]:
        browser.screenshot(SCREENSHOTS / "partitions-late-days.png")
    browser.click("#refusals details.refusals summary")
    shown = f"document.querySelector('#refusals li[data-key=\"{REQUEUED_KEY}\"]')"
    item = browser.wait_for(f"{shown}.offsetHeight && {shown}.innerText")
    assert (
        item.startswith(f"re-queued since {REQUEUED_KEY}") and "not one of ['store-001', 'store-002']" in item
    )


FAB = "airflow.providers.fab.auth_manager.fab_auth_manager.FabAuthManager"
NAMES = ("-f", "One", "-l", "Dag", "-e", "one_dag@example.com")


@pytest.fixture(scope="module")
def fab(airflow, tmp_path_factory):
    """
    An api-server with FAB's auth manager on the session's database, and the token of ``one_dag``.

    FAB keeps its users and roles in its own tables (``airflow fab-db migrate``); ``sync-perm
    --include-dags`` creates the per-Dag resources (``DAG:it_status_day``). ``one_dag``'s role may
    read Dag runs and assets, and of the Dags only ``it_status_day``.
    """
    pytest.importorskip("airflow.providers.fab", reason="apache-airflow-providers-fab (the test extra)")
    if "postgresql" in airflow.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]:
        # Which Dags a user may read is FAB's auth manager's answer, the same on either database,
        # and the view reads it the same way; on SQLite it runs on the newest and the oldest Airflow.
        # On PostgreSQL its set-up (five Airflow commands and an api-server, 66 s) held CI's longest
        # worker.
        pytest.skip("FAB's roles are tested on SQLite (the auth manager decides, not the database)")
    folder = tmp_path_factory.mktemp("fab")
    port = free_port()
    env = {**airflow.env, "AIRFLOW__CORE__AUTH_MANAGER": FAB, "AIRFLOW__API__PORT": str(port)}
    for command in (
        ["fab-db", "migrate"],
        ["sync-perm", "--include-dags"],
        ["roles", "create", "OneDag"],
        ["roles", "add-perms", "OneDag", "-a", "can_read", "-r", "DAG:it_status_day", "DAG Runs", "Assets"],
        ["users", "create", "-u", "one_dag", "-p", "one-dag-pw", "-r", "OneDag", *NAMES],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "airflow", *command], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])
    process = _api_server(env, port, folder / "api-server.log")
    server = SimpleNamespace(url=f"http://127.0.0.1:{port}")
    try:
        wait_until(lambda: _up(server), timeout=180, what="the FAB api-server")
        yield server, _token(server, "one_dag", "one-dag-pw")
    finally:
        _stop(process)


def test_fab_roles_restrict_the_view_to_the_dags_a_user_may_read(fab, days):
    server, one_dag = fab
    status, answer = _http(server, "/api/dags", one_dag)
    assert status == 200, answer
    assert [d["dag_id"] for d in answer["dags"]] == ["it_status_day"]
    status, answer = _http(server, "/api/dags/it_status_day", one_dag)
    assert status == 200, answer
    assert answer["partitions"] == days["partitions"]
    assert answer["refusals"] == []  # no audit-log permission
    assert _http(server, "/api/dags/it_backfill_daily", one_dag)[0] == 403
    status, answer = _http(server, "/api/assets/it_status_hours", one_dag)
    assert status == 200 and answer["refusals"] == [], answer


def test_fab_roles_restrict_the_overviews_summaries_and_the_detail_endpoint(airflow, fab, days, shapes):
    server, one_dag = fab
    _, mine = _http(server, "/api/dags", one_dag)
    _, everything = _http(airflow, "/api/dags", airflow._bearer())  # an admin's
    assert mine["dags"] == [d for d in everything["dags"] if d["dag_id"] == "it_status_day"]
    assert mine["total_entries"] == 1
    # A filter says nothing of the Dags one may not read (it_shape_deadline_day ran incomplete).
    _, filtered = _http(server, "/api/dags?state=ran%20incomplete", one_dag)
    assert filtered["dags"] == [] and filtered["total_entries"] == 0
    _, filtered = _http(server, "/api/dags?state=overdue", one_dag)
    assert [d["dag_id"] for d in filtered["dags"]] == ["it_status_day"]
    status, missing = _http(server, f"/api/dags/it_status_day/partitions/{PARTIAL}?list=missing", one_dag)
    assert status == 200 and missing["keys"] == [f"{PARTIAL}T17"], missing
    for dag_id, key in (("it_shape_deadline_day", DEADLINE_DAYS[1]), ("it_backfill_daily", "2026-03-03")):
        assert _http(server, f"/api/dags/{dag_id}/partitions/{key}?list=missing", one_dag)[0] == 403
        assert _http(server, f"/api/dags/{dag_id}", one_dag)[0] == 403
    # clean's dry run of every Dag: FAB lets anyone who reads Dag runs ask; the answer holds only
    # the Dags one may read, their rows the totals.
    path = "/api/dags/~/clean?before=2100-01-01T00%3A00%3A00%2B00%3A00"
    status, every = _http(airflow, path, airflow._bearer())
    assert status == 200 and len(every["by_dag"]) > 1 and every["by_dag"]["it_status_day"][0] >= 1, every
    status, counted = _http(server, path, one_dag)
    assert status == 200, counted
    mine = every["by_dag"]["it_status_day"]
    assert counted == {
        **every,
        "by_dag": {"it_status_day": mine},
        "pending_rows": mine[0],
        "key_log_rows": mine[1],
    }


# -- writes only the caller's own client can make ----------------------------------------------

#: The Dag the page on another origin tries to write to: a fired run (rows ``clean`` would
#: remove), read by no test after this one (the shapes' runs are deleted after the module).
TARGET = "it_shape_fiscal_quarter"
#: Each write's input, as a body and as the query string the routes once took it from.
WRITES = {
    "backfill": {"state": "failed"},  # re-run its failed partitions
    "discard": {},  # every stray pending run of the Dag
    "requeue": {"start": "2000-01-01T00:00:00+00:00", "end": "2100-01-01T00:00:00+00:00"},
    "clean": {"before": "2100-01-01T00:00:00+00:00"},
}
#: What a page on another origin can make the signed-in user's browser send to each write, with
#: the ``_token`` cookie: a form (url-encoded and text/plain), a no-cors fetch with a text/plain
#: body and with a body of no type (FastAPI reads a body without Content-Type as JSON), and a JSON
#: fetch (CORS asks the api-server first). Each resolves to what the page could tell of it.
ATTACKS = """
async ([base, dag, writes]) => {
  const frame = (name) => new Promise((done) => {
    const f = document.createElement('iframe');
    f.name = name; f.onload = () => done(f); document.body.appendChild(f);
  });
  const post = async (url, enctype, inputs, name) => {
    const target = await frame(name);
    const loaded = new Promise((done) => { target.onload = () => done('answered'); });
    const form = document.createElement('form');
    Object.assign(form, {method: 'POST', action: url, enctype, target: name});
    for (const [k, v] of Object.entries(inputs)) {
      const i = document.createElement('input'); i.name = k; i.value = v; form.appendChild(i);
    }
    document.body.appendChild(form); form.submit();
    return loaded;
  };
  const send = (url, options) => fetch(url, {method: 'POST', credentials: 'include', ...options})
    .then(() => 'answered', (err) => err.name);
  const tried = {};
  for (const [route, input] of Object.entries(writes)) {
    const url = `${base}/partitions/api/dags/${dag}/${route}?${new URLSearchParams(input)}`;
    const body = JSON.stringify(input);
    tried[route] = {
      form: await post(url, 'application/x-www-form-urlencoded', input, route + '-form'),
      text_form: await post(url, 'text/plain', input, route + '-text-form'),
      text_fetch: await send(url, {mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body}),
      untyped_fetch: await send(url, {mode: 'no-cors', body: new Blob([body])}),
      json_fetch: await send(url, {headers: {'Content-Type': 'application/json'}, body}),
    };
  }
  return tried;
}
"""


def _dry_runs(airflow) -> dict[str, object]:
    """Each write's dry run on TARGET (``GET``, an admin's bearer token): what it would change."""
    token = airflow._bearer()
    found = {}
    for route, given in WRITES.items():
        status, answer = _http(airflow, f"/api/dags/{TARGET}/{route}?{urllib.parse.urlencode(given)}", token)
        assert status == 200, answer
        found[route] = answer
    return found


@contextlib.contextmanager
def _another_origin():
    """A blank page on another port of 127.0.0.1: another origin, the same site (the cookie goes along)."""

    class Blank(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            page = b"<!doctype html><title>another origin</title><body></body>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Blank)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def _posts(browser: Browser, base: str) -> dict[str, dict]:
    """The POSTs the page sent to *base*, by request id: url, headers sent, status or failure."""
    posts: dict[str, dict] = {}
    for event in browser.events:
        params = event["params"]
        request = params.get("request", {})
        sent = event["method"] == "Network.requestWillBeSent" and request.get("method") == "POST"
        if sent and request["url"].startswith(base):
            posts[params["requestId"]] = {"url": request["url"], "headers": {}, "status": None}
    for event in browser.events:
        post = posts.get(event["params"].get("requestId"))
        if post is None:
            continue
        if event["method"] == "Network.requestWillBeSentExtraInfo":
            post["headers"] = {k.lower(): v for k, v in event["params"]["headers"].items()}
        elif event["method"] == "Network.responseReceived":
            post["status"] = event["params"]["response"]["status"]
        elif event["method"] == "Network.loadingFailed":
            post["status"] = post["status"] or event["params"].get("corsErrorStatus", {}).get("corsError")
    return posts


@needs_chromium
def test_a_page_on_another_origin_cannot_make_the_browser_write_and_the_command_line_still_can(
    airflow, shapes
):
    before = _dry_runs(airflow)
    assert before["clean"]["pending_rows"] >= 1 and before["clean"]["key_log_rows"] >= 1, before
    base = f"{airflow.url}/partitions/api/"
    with _another_origin() as page, _browser(airflow) as browser:
        browser.send("Network.enable")
        browser.open(page)
        browser.wait_for("document.readyState === 'complete' && document.title === 'another origin'")
        tried = browser.eval(f"({ATTACKS})({json.dumps([airflow.url, TARGET, WRITES])})")
        # The forms' and fetches' answers are in; the JSON fetch never left (CORS: no preflight answer).
        assert tried == {
            route: {
                "form": "answered",
                "text_form": "answered",
                "text_fetch": "answered",
                "untyped_fetch": "answered",
                "json_fetch": "TypeError",
            }
            for route in WRITES
        }
        wait_until(  # the browser's last events (each eval reads those that came before its answer)
            lambda: browser.eval("true") and all(p["status"] for p in _posts(browser, base).values()),
            timeout=30,
            what="every POST's answer or failure",
        )
        posts = _posts(browser, base)
    # Sixteen reached the api-server, each with the user's cookie from a page of the same site,
    # and each was refused; the four JSON fetches failed in the browser.
    reached = [p for p in posts.values() if isinstance(p["status"], int)]
    assert len(reached) == 4 * len(WRITES), posts
    for post in reached:
        assert "_token=" in post["headers"].get("cookie", ""), post
        assert post["headers"].get("sec-fetch-site") == "same-site", post
        assert post["status"] in (403, 415), post
    assert sum(p["status"] is not None and not isinstance(p["status"], int) for p in posts.values()) == len(
        WRITES
    )
    assert _dry_runs(airflow) == before  # nothing removed, nothing queued

    # The command line's --api-url (a bearer token and a JSON body) still writes.
    cleaned = _api_cli(airflow, "clean", "--before", "2100-01-01", "--dag", TARGET, "--yes", "--json")
    assert cleaned.returncode == 0, cleaned.stderr[-3000:]
    assert json.loads(cleaned.stdout) == {**before["clean"], "removed": True}
    assert _dry_runs(airflow)["clean"]["pending_rows"] == 0
    for argv in (["discard", TARGET], ["requeue", TARGET, "--start", "2000-01-01", "--end", "2100-01-01"]):
        done = _api_cli(airflow, *argv, "--yes", "--json")
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout)["dag_id"] == TARGET


# -- actions: choose partitions, see the plan, confirm -------------------------------------------

UI_DAY, UI_HOURS = "it_repair_ui_day", "it_repair_ui_hours"
#: it_repair_ui_day's days: the first runs and then gets an hour again (stale, a stray pending run
#: beside its run), the other two fail (UI_FAILING_DAYS).
UI_DAYS = ("2026-02-02", *UI_FAILING_DAYS)


def _clear_numbers(airflow, dag_id: str) -> dict[str, int]:
    return {
        key: n
        for key, n in airflow.query(
            "SELECT partition_key, clear_number FROM dag_run WHERE dag_id = :d", d=dag_id
        )
    }


def _owners(airflow, event: str, dag_id: str) -> list[str]:
    return [
        o
        for (o,) in airflow.query(
            "SELECT owner FROM log WHERE event = :e AND dag_id = :d ORDER BY id", e=event, d=dag_id
        )
    ]


@pytest.fixture(scope="module")
def repairable(airflow):
    """it_repair_ui_day: a stale day with a stray pending run beside its run, and two failed days."""
    _send(airflow, UI_HOURS, [f"{day}T{h:02d}" for day in UI_DAYS for h in range(24)])
    airflow.wait_for_runs(UI_DAY, 3, timeout=240, states=("success", "failed"))
    _send(airflow, UI_HOURS, [f"{UI_DAYS[0]}T05"])
    wait_until(
        lambda: (
            {p["partition_key"]: p["state"] for p in _state(airflow, UI_DAY)["partitions"]}.get(UI_DAYS[0])
            == "stale"
        ),
        timeout=60,
        what=f"{UI_DAYS[0]} stale",
    )


@needs_chromium
def test_the_view_backfills_and_discards_what_is_chosen_once_the_plan_is_confirmed(airflow, repairable):
    before = _clear_numbers(airflow, UI_DAY)
    with _browser(airflow) as browser:
        _show(browser, f"{airflow.url}/partitions/dags/{UI_DAY}")
        assert _cells(browser)[UI_DAYS[0]] == "stale"
        browser.click('#legend [data-choose="failed"]')  # every failed partition
        assert browser.eval("document.getElementById('backfill').textContent") == "Backfill 2"
        browser.click("#backfill")
        browser.wait_for("document.getElementById('plan').open")
        planned = browser.eval(
            "[...document.querySelectorAll('#plan-body tr[data-key]')].map(r => [r.dataset.key, r.innerText])"
        )
        assert [key for key, _ in planned] == list(UI_FAILING_DAYS)
        assert all("re-run" in text and "its latest run failed" in text for _, text in planned), planned
        assert _clear_numbers(airflow, UI_DAY) == before  # the plan changed nothing
        browser.click("#confirm")
        browser.wait_for("document.getElementById('action-result').innerText.includes('backfill-')")
        _drawn(browser)
        after = _clear_numbers(airflow, UI_DAY)
        assert {k for k in after if after[k] != before[k]} == set(UI_FAILING_DAYS)  # exactly those, cleared
        assert _owners(airflow, "partition-tools backfill", UI_DAY) == ["Anonymous"]

        # The stale day: a click chooses it, its stray pending run is discarded once confirmed.
        browser.click(f'#grid .cell[data-key="{UI_DAYS[0]}"]')
        assert browser.eval("document.getElementById('discard').textContent") == "Discard 1 stray run"
        browser.click("#discard")
        browser.wait_for("document.getElementById('plan').open")
        assert browser.eval(
            "[...document.querySelectorAll('#plan-body tr[data-key]')].map(r => r.dataset.key)"
        ) == [UI_DAYS[0]]
        browser.click("#confirm")
        browser.wait_for("document.getElementById('action-result').innerText.startsWith('Discarded 1')")
    open_runs = airflow.query(
        "SELECT count(*) FROM asset_partition_dag_run WHERE target_dag_id = :d AND partition_key = :k "
        "AND created_dag_run_id IS NULL",
        d=UI_DAY,
        k=UI_DAYS[0],
    )
    assert open_runs == [(0,)]
    assert _owners(airflow, "partition-tools discard", UI_DAY) == ["Anonymous"]


@needs_chromium
def test_a_user_without_the_rights_sees_the_actions_disabled_and_why(airflow, signed_in, repairable):
    server, viewer = signed_in
    with Browser() as browser:
        browser.set_cookie(server.url, "_token", viewer)
        _show(browser, f"{server.url}/partitions/dags/{UI_DAY}")
        browser.click(f'#grid .cell[data-key="{UI_FAILING_DAYS[0]}"]')
        state = browser.eval(
            "['backfill', 'discard'].map(id => document.getElementById(id).disabled)"
            ".concat([document.getElementById('actions-why').innerText])"
        )
    assert state[:2] == [True, True]
    assert f"you may not trigger and clear the runs of {UI_DAY}" in state[2]
    assert f"you may not edit {UI_DAY}" in state[2]
    # The routes refuse it too (the page only says so first).
    body = json.dumps({"state": ["failed"]}).encode()
    request = urllib.request.Request(
        f"{server.url}/partitions/api/dags/{UI_DAY}/backfill",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {viewer}", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 403


# -- any key Airflow accepted: shown on every page, by every command ----------------------------

#: Keys Airflow accepts (any text of at most 250 characters with a non-space): impossible dates,
#: the calendar's ends, periods past a year's, a composite, characters a URL or a terminal acts
#: on. it_any_key (core's IdentityMapper) makes each its own partition.
ANY_KEYS = [
    "2026-13-45",
    "0001-01-01T00",
    "9999-12-31T23:45",
    "9999-12-31",
    "2026-Q5",
    "2026-W54",
    "jfk|2026-13-45",
    "2026-05-01\x1b[2J\x1b]0;pwned\x07",
    "a b/c?d#e%2F&f=g",
    "k" * 250,
]
ANY_DAG, ANY_ASSET = "it_any_key", "it_any_key_keys"


def _grid_keys(blocks: list[dict]) -> list[str]:
    """The keys the grid's blocks show (a cell per key; a group of minutes is none of these keys)."""
    cells = [c for b in blocks for c in b.get("cells", [])]
    cells += [c for b in blocks for row in b.get("rows", []) for c in row["cells"]]
    cells += [c for b in blocks for week in b.get("weeks", []) for c in week if c]
    return [c["key"] for c in cells if c["key"] is not None]


def test_every_key_airflow_accepted_is_shown_on_every_page_and_by_every_command(airflow):
    for key in ANY_KEYS:
        airflow.create_asset_event(ANY_ASSET, partition_key=key)
    wait_until(
        lambda: (
            sorted(p["partition_key"] for p in _state(airflow, ANY_DAG)["partitions"]) == sorted(ANY_KEYS)
        ),
        timeout=120,
        what="every key's partition",
    )
    token = airflow._bearer()
    status, page = _http(airflow, f"/api/dags/{ANY_DAG}", token)
    assert status == 200, page
    assert sorted(p["partition_key"] for p in page["partitions"]) == sorted(ANY_KEYS)
    assert sorted(_grid_keys(page["grid"])) == sorted(ANY_KEYS)  # each drawn once
    status, asset = _http(airflow, f"/api/assets/{ANY_ASSET}", token)
    assert status == 200, asset
    placed = [k for s in asset["coverage"]["series"] for d in s["days"] for k in d["keys"]]
    assert sorted(placed + asset["coverage"]["other"]) == sorted(ANY_KEYS)
    # Every route, every key: an answer or a refusal naming the input, never a 500.
    quote = lambda text: urllib.parse.quote(text, safe="")  # noqa: E731
    range_ = "start=0001-01-01T00%3A00%3A00%2B00%3A00&end=9999-12-31T23%3A59%3A59%2B00%3A00"
    paths = [
        "/api/dags",
        f"/api/dags/{ANY_DAG}?start=0001&end=9999",
        f"/api/dags/{ANY_DAG}/status",
        f"/api/dags/{ANY_DAG}/requeue?{range_}",
        f"/api/dags/{ANY_DAG}/backfill?{range_}&now=2026-01-01T00%3A00%3A00%2B00%3A00",
        f"/api/dags/{ANY_DAG}/clean?before=9999-12-31T00%3A00%3A00%2B00%3A00",
        f"/api/assets/{ANY_ASSET}?start=0001&end=9999",
    ]
    for key in ANY_KEYS:
        paths += [
            f"/api/dags/{ANY_DAG}/partitions/{quote(key)}?list=received",
            f"/api/dags/{ANY_DAG}?key={quote(key)}&start={quote(key)}&end={quote(key)}",
            f"/api/dags/{ANY_DAG}/explain?key={quote(key)}",
            f"/api/dags/{ANY_DAG}/explain?key={quote(key)}&downstream=true",
            f"/api/dags/{ANY_DAG}/discard?key={quote(key)}",
        ]
    answers = {path: _http(airflow, path, token)[0] for path in paths}
    assert all(status in (200, 400, 404) for status in answers.values()), answers
    assert (
        answers[f"/api/dags/{ANY_DAG}/status"]
        == answers[f"/api/dags/{ANY_DAG}/explain?key=2026-13-45"]
        == 200
    )
    # The command line's text escapes what a terminal acts on (its JSON, read above, kept every key exact).
    text = _cli(airflow, "status", ANY_DAG, "--all")
    assert text.returncode in (0, 1) and "Traceback" not in text.stderr, text.stderr[-3000:]
    assert "2026-05-01\\x1b[2J\\x1b]0;pwned\\x07" in text.stdout and "\x1b" not in text.stdout


# -- one error vocabulary: every command, both modes, every route ------------------------------

#: What each case is answered with everywhere (tools/errors.py): the route's status, the exit code.
ANSWER = {"unknown Dag": (404, 1), "bad range": (400, 2), "bad option": (400, 2), "forbidden": (403, 1)}
#: A rollup of UTC days (it_status_day) whose keys the range language reads by its grain, and
#: core's IdentityMapper (it_any_key), which is no rollup.
DAY, NO_ROLLUP, TIMETABLE, NO_DAG = "it_status_day", ANY_DAG, "it_backfill_daily", "it_no_such_dag"
BACKFILL = ["backfill", "--missing"]
#: Every command's arguments in each case it has (explain has no range, clean no --end): the same in
#: both modes, ``--yes`` the writes of a command that writes.
COMMAND_CASES = {
    "status": {
        "unknown Dag": ["status", NO_DAG],
        "bad range": ["status", DAY, "--start", "2026-06", "--end", "2026-05"],
        "bad option": ["status", DAY, "--state", "again"],
    },
    "explain": {
        "unknown Dag": ["explain", "--dag", NO_DAG, "2026-05-01"],
        "bad option": ["explain", "--dag", NO_ROLLUP, "--downstream", "2026-05-01"],
    },
    "backfill": {
        "unknown Dag": [*BACKFILL, NO_DAG, "--start", "2026-03-01", "--end", "2026-03-02"],
        "bad range": [*BACKFILL, TIMETABLE, "--start", "2026-03-07", "--end", "2026-03-01"],
        "bad option": [*BACKFILL, TIMETABLE, "--start", "yesterday", "--end", "2026-03-01"],
    },
    "requeue": {
        "unknown Dag": ["requeue", NO_DAG, "--start", "2026-05-01"],
        "bad range": ["requeue", DAY, "--start", "2026-06", "--end", "2026-05"],
        # A year's four digits, so only the Dag's grain (days) can tell it is none of its keys.
        "bad option": ["requeue", DAY, "--start", "2026-Q9"],
    },
    "discard": {
        "unknown Dag": ["discard", NO_DAG],
        "bad range": ["discard", DAY, "--start", "2026-06", "--end", "2026-05"],
        "bad option": ["discard", DAY, "--key", "garbage"],
    },
    "clean": {
        "unknown Dag": ["clean", "--before", "2026-01-01", "--dag", NO_DAG],
        "bad option": ["clean", "--before", "2026-Q9", "--dag", DAY],
    },
}
WRITING = ("backfill", "requeue", "discard", "clean")
RANGE = {"start": "2026-06", "end": "2026-05"}
#: Every route of the view in each case it has: ``(method, path, query or JSON body)``.
ROUTE_CASES = {
    "unknown Dag": [
        *(("GET", f"/api/dags/{NO_DAG}/{route}", {}) for route in ("status", "discard")),
        ("GET", f"/api/dags/{NO_DAG}/explain", {"key": "2026-05-01"}),
        ("GET", f"/api/dags/{NO_DAG}/requeue", {"start": "2026-05-01"}),
        ("GET", f"/api/dags/{NO_DAG}/clean", {"before": "2026-01-01"}),
        (
            "GET",
            f"/api/dags/{NO_DAG}/backfill",
            {"start": "2026-03-01", "end": "2026-03-02", "now": "2026-12-01"},
        ),
        ("POST", f"/api/dags/{NO_DAG}/discard", {}),
        ("POST", f"/api/dags/{NO_DAG}/requeue", {"start": "2026-05-01"}),
        ("POST", f"/api/dags/{NO_DAG}/clean", {"before": "2026-01-01"}),
        ("POST", f"/api/dags/{NO_DAG}/backfill", {"start": "2026-03-01", "end": "2026-03-02"}),
        ("POST", f"/api/dags/{NO_DAG}/backfills", {"name": "backfill-1", "action": "cancel"}),
        ("GET", f"/api/dags/{NO_DAG}", {}),
        ("GET", f"/api/dags/{NO_DAG}/partitions/2026-05-01", {}),
        ("GET", "/api/assets/it_no_such_asset", {}),
    ],
    "bad range": [
        *(("GET", f"/api/dags/{DAY}/{route}", RANGE) for route in ("status", "requeue", "discard")),
        (
            "GET",
            f"/api/dags/{TIMETABLE}/backfill",
            {"start": "2026-03-07", "end": "2026-03-01", "now": "2026-12-01"},
        ),
        ("POST", f"/api/dags/{DAY}/requeue", RANGE),
        ("POST", f"/api/dags/{DAY}/discard", RANGE),
        ("POST", f"/api/dags/{DAY}/backfill", RANGE),
        ("GET", f"/api/dags/{DAY}", RANGE),
        ("GET", "/api/assets/it_status_hours", RANGE),
    ],
    "bad option": [
        ("GET", f"/api/dags/{DAY}/status", {"state": "again"}),
        ("GET", f"/api/dags/{DAY}/status", {"limit": "ten"}),
        ("GET", f"/api/dags/{NO_ROLLUP}/explain", {"key": "2026-05-01", "downstream": "true"}),
        ("GET", f"/api/dags/{DAY}/explain", {}),  # no key
        (
            "GET",
            f"/api/dags/{TIMETABLE}/backfill",
            {"start": "yesterday", "end": "2026-03-01", "now": "2026-12-01"},
        ),
        ("GET", f"/api/dags/{DAY}/requeue", {"start": "2026-Q9"}),
        ("GET", f"/api/dags/{DAY}/discard", {"key": "garbage"}),
        ("GET", f"/api/dags/{DAY}/clean", {"before": "2026-Q9"}),
        ("POST", f"/api/dags/{DAY}/requeue", {"start": "2026-Q9"}),
        ("POST", f"/api/dags/{DAY}/discard", {"key": ["garbage"]}),
        ("POST", f"/api/dags/{DAY}/clean", {"before": "2026-Q9"}),
        ("POST", f"/api/dags/{TIMETABLE}/backfill", {"state": ["again"]}),
        ("POST", f"/api/dags/{TIMETABLE}/backfill", {"max_active": 0}),
        ("POST", "/api/dags/~/backfills", {"name": "backfill-1", "action": "again"}),
        ("GET", f"/api/dags/{DAY}", {"state": "again"}),
        ("GET", f"/api/dags/{DAY}", {"limit": "-1"}),
        ("GET", f"/api/dags/{DAY}/partitions/{PARTIAL}", {"list": "nope"}),
        ("GET", f"/api/dags/{DAY}/partitions/{PARTIAL}", {"limit": "-1"}),
        ("GET", "/api/dags", {"state": "again"}),
        ("GET", "/api/assets/it_status_hours", {"start": "03/2026"}),
    ],
}
#: Runs ``airflow-partitions`` once per argv given as JSON on stdin, in one process (Airflow
#: imported once); prints each one's exit code, stdout and stderr as JSON.
MANY = """
import contextlib, io, json, sys
from airflow_partitions.tools.cli import main
found = []
for argv in json.load(sys.stdin):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as done:
            code = done.code
    found.append({"exit": code, "out": out.getvalue(), "err": err.getvalue()})
print(json.dumps(found))
"""


def _commands(env: dict[str, str], argvs: list[list[str]]) -> list[dict]:
    """Run each of *argvs* (``airflow-partitions ARGV``) in one process with *env*: exit, out, err."""
    done = subprocess.run(
        [sys.executable, "-c", MANY],
        input=json.dumps(argvs),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _both_modes(
    airflow, server_url: str, token: str, argvs: list[list[str]], *, api_only: bool = False
) -> dict:
    """``{"database": [...], "api": [...]}``: each argv from the database and through *server_url*."""
    api_env = {**airflow.env, "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": UNREACHABLE}
    found = {"api": _commands(api_env, [[*a, "--api-url", server_url, "--token", token] for a in argvs])}
    if not api_only:
        local = [[*a, "--from-db"] if a[0] == "explain" else a for a in argvs]
        found["database"] = _commands(airflow.env, local)
    return found


def _call(server, method: str, path: str, token: str, given: dict) -> tuple[int, object]:
    """Call the view's *path*, *given* its query (GET) or JSON body (POST): its status, detail or answer."""
    query = "?" + urllib.parse.urlencode(given, doseq=True) if method == "GET" and given else ""
    request = urllib.request.Request(
        f"{server.url}/partitions{path}{query}",
        method=method,
        data=json.dumps(given).encode() if method == "POST" else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        text = err.read().decode(errors="replace")
        with contextlib.suppress(ValueError):
            return err.code, json.loads(text)["detail"]
        return err.code, text


def _said(result: dict, name: str) -> str:
    """The message a command printed (its stderr's last line), without ``airflow-partitions NAME: error:``."""
    return (
        result["err"]
        .strip()
        .splitlines()[-1]
        .removeprefix(f"airflow-partitions {name}: ")
        .removeprefix("error: ")
    )


def test_every_command_and_route_answers_each_error_alike(airflow, days):
    # Every command (each write with --yes too) in each case, from the database and through
    # --api-url, and every route of the view: one status and exit code per case (tools/errors.py),
    # the same message in both modes and on the route that answers the same request.
    cases = [(name, case, argv) for name, by_case in COMMAND_CASES.items() for case, argv in by_case.items()]
    cases += [(f"{name} --yes", case, [*argv, "--yes"]) for name, case, argv in cases if name in WRITING]
    found = _both_modes(airflow, airflow.url, airflow._bearer(), [argv for _, _, argv in cases])
    said = {}
    for (name, case, argv), local, remote in zip(cases, found["database"], found["api"], strict=True):
        assert local["exit"] == remote["exit"] == ANSWER[case][1], (argv, local, remote)
        said[name, case] = _said(local, argv[0])
        assert said[name, case] == _said(remote, argv[0]), (argv, local["err"], remote["err"])
        assert local["out"] == remote["out"] == "" and "Traceback" not in local["err"] + remote["err"], argv
    token = airflow._bearer()
    for case, routes in ROUTE_CASES.items():
        for method, path, given in routes:
            answered = _call(airflow, method, path, token, given)
            assert answered[0] == ANSWER[case][0], (case, method, path, given, answered)
            assert isinstance(answered[1], str) and answered[1], answered  # a message, never a list
    # The route answers the request the command sent with the message the command printed.
    status_range = _call(airflow, "GET", f"/api/dags/{DAY}/status", token, RANGE)[1]
    assert status_range == said["status", "bad range"] == "--start '2026-06' is after --end '2026-05'."
    requeue_option = _call(airflow, "GET", f"/api/dags/{DAY}/requeue", token, {"start": "2026-Q9"})[1]
    assert requeue_option == said["requeue", "bad option"] == said["requeue --yes", "bad option"]
    assert requeue_option.startswith(f"--start '2026-Q9' is neither a partition key of '{DAY}' (its keys are")
    unknown = _call(airflow, "GET", f"/api/dags/{NO_DAG}/explain", token, {"key": "2026-05-01"})[1]
    assert (
        unknown
        == said["explain", "unknown Dag"]
        == said["backfill", "unknown Dag"]
        == said["status", "unknown Dag"]
    )
    assert (
        unknown
        == f"no Dag {NO_DAG!r} in this deployment's metadata database (is the dag-processor running?)."
    )


def test_what_the_user_may_not_do_is_403_on_every_route_and_exit_1_through_the_api(airflow, fab, days):
    # one_dag may read it_status_day (its runs and assets) and nothing else, and edit nothing.
    server, one_dag = fab
    other = TIMETABLE
    reads = [
        ["status", other],
        ["explain", "--dag", other, "2026-03-01"],
        [*BACKFILL, other, "--start", "2026-03-01", "--end", "2026-03-02"],
        ["requeue", other, "--start", "2026-05-01"],
        ["discard", other],
        ["clean", "--before", "2026-01-01", "--dag", other],
    ]
    writes = [
        [*argv, "--yes"]
        for argv in (
            ["requeue", DAY, "--start", "2026-05-01"],
            ["discard", DAY],
            [*BACKFILL, DAY, "--start", "2026-05-01", "--end", "2026-05-02"],  # to trigger and clear
            ["clean", "--before", "2026-01-01", "--dag", DAY],
            ["clean", "--before", "2026-01-01"],  # every Dag's: edit access to the Dags as a whole
        )
    ]
    found = _both_modes(airflow, server.url, one_dag, reads + writes, api_only=True)["api"]
    for argv, result in zip(reads + writes, found, strict=True):
        assert result["exit"] == ANSWER["forbidden"][1] and result["out"] == "", (argv, result)
        assert "may not do this (403: Forbidden): it needs more access to" in result["err"], result["err"]
    routes = [
        *(("GET", f"/api/dags/{other}/{route}", {}) for route in ("status", "discard")),
        ("GET", f"/api/dags/{other}/explain", {"key": "2026-03-01"}),
        ("GET", f"/api/dags/{other}/requeue", {"start": "2026-05-01"}),
        ("GET", f"/api/dags/{other}/clean", {"before": "2026-01-01"}),
        (
            "GET",
            f"/api/dags/{other}/backfill",
            {"start": "2026-03-01", "end": "2026-03-02", "now": "2026-12-01"},
        ),
        ("GET", f"/api/dags/{other}/backfills", {}),
        *(("POST", f"/api/dags/{DAY}/{route}", {}) for route in ("discard", "backfill")),
        ("POST", f"/api/dags/{DAY}/requeue", {"start": "2026-05-01"}),
        ("POST", f"/api/dags/{DAY}/clean", {"before": "2026-01-01"}),
        ("POST", "/api/dags/~/clean", {"before": "2026-01-01"}),
        ("GET", f"/api/dags/{other}", {}),
        ("GET", f"/api/dags/{other}/partitions/2026-03-01", {}),
    ]
    for method, path, given in routes:
        answered = _call(server, method, path, one_dag, given)
        assert answered[0] == ANSWER["forbidden"][0], (method, path, given, answered)
