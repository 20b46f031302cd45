"""
The Partitions view (docs/ui.md) in the real api-server, on the real scheduler's data: its JSON
API under Airflow's auth, and its page in a real headless Chromium.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from airflow_partitions.testing import free_port, wait_until
from tests.integration.browser import Browser, chromium
from tests.integration.conftest import DAG_IDS
from tests.integration.test_no_silent_holds import _send, _settle
from tests.integration.test_status import _state

SCREENSHOTS = Path(__file__).parents[2] / "docs" / "images"
FULL, PARTIAL, FEW = "2026-05-01", "2026-05-02", "2026-05-03"
GAP, REFUSED_DAY = "2026-05-04", "2026-05-05"  # no key; a day key on the hours asset, refused


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
    assert _http(airflow, "/api/dags/it_status_day?limit=0", token)[0] == 422


@pytest.fixture(scope="module")
def signed_in(airflow, tmp_path_factory):
    """
    A second api-server on the session's database where users must sign in (not all admins).

    The session's Airflow makes every request an admin (``SIMPLE_AUTH_MANAGER_ALL_ADMINS``), as
    Airflow's own API then does; this one has one user, ``viewer`` (read-only role). Yields its
    URL (as ``.url`` of a namespace, like the fixture's) and the viewer's token.
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
    server = SimpleNamespace(url=f"http://127.0.0.1:{port}")
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
    for path in ("/api/dags", "/api/dags/it_status_day", "/api/assets/it_status_hours"):
        assert _http(server, path)[0] == 401
        assert _http(server, path, "not-a-token")[0] == 403
        status, answer = _http(server, path, viewer)
        assert status == 200, answer
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert _http(server, path, viewer, method=method)[0] == 405
    assert _http(server, "/api/dags/it_status_day", viewer)[1]["partitions"] == days["partitions"]
    assert _http(server, "/api/dags/it_no_such_dag", viewer)[0] == 404
    assert _http(server, "/api/assets/it_no_such_asset", viewer)[0] == 404


@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (scripts/dev.sh test)")
def test_the_page_shows_the_cells_of_the_database_and_a_click_opens_the_detail(airflow, days):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with Browser() as browser:
        browser.set_cookie(airflow.url, "_token", airflow._bearer())  # Airflow's UI session cookie
        browser.open(f"{airflow.url}/partitions/")
        assert browser.wait_for("document.querySelector('a[data-dag=\"it_status_day\"]') !== null")
        browser.click('a[data-dag="it_status_day"]')
        browser.wait_for("document.querySelectorAll('.cell[data-key]').length > 0")
        shown = dict(
            browser.eval(
                "[...document.querySelectorAll('.cell[data-key]')].map(c => [c.dataset.key, c.dataset.state])"
            )
        )
        database = _state(airflow, "it_status_day")
        assert (
            shown.items()
            >= {
                p["partition_key"]: p["state"]
                for p in database["partitions"]
                if p["state"] not in {"queued", "running"}
            }.items()
        )
        assert set(shown) == {p["partition_key"] for p in database["partitions"]}
        assert browser.eval("document.querySelectorAll('.cell.s-not-opened').length") > 0

        browser.click(f'.cell[data-key="{PARTIAL}"]')
        detail = browser.wait_for(
            "!document.getElementById('detail').hidden && document.getElementById('detail').innerText"
        )
        assert PARTIAL in detail and f"{PARTIAL}T17" in detail and "23 of 24" in detail
        assert browser.eval("location.pathname") == "/partitions/dags/it_status_day"
        browser.screenshot(SCREENSHOTS / "partitions-view.png")

        browser.color_scheme("dark")
        browser.open(f"{airflow.url}/partitions/dags/it_status_day")
        browser.wait_for("document.querySelectorAll('.cell[data-key]').length > 0")
        assert browser.eval("document.documentElement.dataset.theme") == "dark"
        browser.click(f'.cell[data-key="{PARTIAL}"]')
        browser.wait_for("!document.getElementById('detail').hidden")
        browser.screenshot(SCREENSHOTS / "partitions-view-dark.png")


@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (scripts/dev.sh test)")
def test_the_dag_page_links_to_its_asset_page_which_shows_its_keys_and_gaps(airflow, days, refused):
    with Browser() as browser:
        browser.set_cookie(airflow.url, "_token", airflow._bearer())
        browser.open(f"{airflow.url}/partitions/dags/it_status_day")
        browser.wait_for("document.querySelector('a[data-asset=\"it_status_hours\"]') !== null")
        browser.click('a[data-asset="it_status_hours"]')
        browser.wait_for("document.querySelectorAll('#coverage code[data-key]').length > 0")
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
        refusals = browser.eval("document.getElementById('asset-refusals').innerText")
        assert f"'{REFUSED_DAY}'" in refusals and "it_status_day" in refusals
        browser.screenshot(SCREENSHOTS / "partitions-asset.png")


@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (scripts/dev.sh test)")
def test_the_page_without_a_session_asks_to_sign_in(signed_in):
    server, _ = signed_in
    with Browser() as browser:
        browser.open(f"{server.url}/partitions/dags/it_status_day")
        message = browser.wait_for("document.getElementById('message').innerText")
        assert "not signed in" in message
        assert browser.eval("document.querySelectorAll('.cell').length") == 0


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
