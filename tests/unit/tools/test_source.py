"""
``--api-url`` against servers that are not a healthy api-server: exit codes and messages, never a traceback.

Each test runs the console script's ``main`` against a real HTTP (or raw TCP) server on loopback,
in a thread of this process: it stands for a proxy, a load balancer or another service on the
port, which no Airflow can play. What a real api-server answers is in ``test_state_golden.py``.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from airflow_partitions.tools.cli import build_parser, main
from airflow_partitions.tools.commands.status import MAX_ROWS

#: What the fake server answers: ``(status, headers, body)`` for ``(method, path)``.
Answer = Callable[[str, str], tuple[int, dict[str, str], bytes]]


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], tuple[str, list[tuple[str, str, str, str, bytes]]]]]:
    """
    Start an HTTP server answering with the given function; return its URL and the requests it got.

    Each request as ``(method, path, Authorization, Content-Type, body)``.
    """
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Answer) -> tuple[str, list[tuple[str, str, str, str, bytes]]]:
        got: list[tuple[str, str, str, str, bytes]] = []

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = (self.headers.get("Authorization", ""), self.headers.get("Content-Type", ""))
                got.append((self.command, self.path, *headers, body))
                status, headers, body = answer(self.command, self.path)
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{server.server_address[1]}", got

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_redirect_is_not_followed_so_a_yes_never_turns_into_a_dry_run(serve, capsys):
    # urllib would follow a 301/302/303 to a POST with a GET, here the discard's dry run (exit 0,
    # "dry run: pass --yes"), and send the token on. An http:// URL of an https-only service
    # answers so.
    dry_run = {"dag_id": "d", "selection": "of periods that already have a Dag run", "runs": []}

    def answer(method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        if path.startswith("/moved/"):
            return 200, {"Content-Type": "application/json"}, json.dumps(dry_run).encode()
        return 301, {"Location": f"/moved{path}"}, b""

    url, got = serve(answer)
    code, out, err = run(capsys, "discard", "d", "--yes", "--api-url", url, "--token", "t")
    assert code == 1 and out == ""
    assert (
        f"{url}/partitions/api/dags/d/discard redirects (301) to /moved/partitions/api/dags/d/discard" in err
    )
    assert "--api-url" in err and "Traceback" not in err
    assert [(method, path) for method, path, *_ in got] == [("POST", "/partitions/api/dags/d/discard")]


def test_a_server_that_does_not_speak_http_is_named_not_a_traceback(capsys):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def garbage() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"\x15\x03\x01\x00\x02\x02\x46 not HTTP\r\n\r\n")  # a TLS alert, then text

        thread = threading.Thread(target=garbage, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        code, out, err = run(capsys, "status", "d", "--api-url", url, "--token", "t")
        thread.join(timeout=10)
    assert code == 1 and out == ""
    assert f"the api-server at {url} did not answer over HTTP (BadStatusLine:" in err


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"[1, 2]", "did not answer with the Partitions view's JSON"),
        (b'"ok"', "did not answer with the Partitions view's JSON"),
        # Another version's answer: a field this one needs is not in it.
        (b'{"dag_id": "d"}', "answered JSON this airflow-partitions cannot read (TypeError:"),
    ],
)
def test_an_answer_that_is_not_the_views_json_is_named_not_a_traceback(serve, capsys, body, expected):
    url, _ = serve(lambda method, path: (200, {"Content-Type": "application/json"}, body))
    code, out, err = run(capsys, "status", "d", "--api-url", url, "--token", "t")
    assert code == 1 and out == ""
    assert expected in err and "Traceback" not in err


def test_a_backfill_answer_without_its_plan_is_named_not_a_lookup_of_a_dag(serve, capsys):
    url, _ = serve(lambda method, path: (200, {"Content-Type": "application/json"}, b"{}"))
    argv = ["backfill", "--missing", "d", "--start", "2026-03-01", "--end", "2026-03-02"]
    code, out, err = run(capsys, *argv, "--api-url", url, "--token", "t")
    assert code == 1 and out == ""
    assert "answered JSON this airflow-partitions cannot read (TypeError:" in err


@pytest.mark.parametrize(
    ("argv", "path", "body"),
    [
        (
            ["discard", "d", "--key", "a&b=c", "--key", "x|2013-03-10", "--yes"],
            "/partitions/api/dags/d/discard",
            {"key": ["a&b=c", "x|2013-03-10"]},
        ),
        (
            ["requeue", "d", "--start", "2026-04-01", "--end", "2026-04-30", "--yes"],
            "/partitions/api/dags/d/requeue",
            {"start": "2026-04-01", "end": "2026-04-30"},
        ),
        (
            ["clean", "--before", "2026-01-01", "--yes"],
            "/partitions/api/dags/~/clean",
            {"before": "2026-01-01"},
        ),
        (
            ["backfill", "d", "--state", "failed", "--state", "stale", "--max-active", "2", "--yes"],
            "/partitions/api/dags/d/backfill",
            {
                "state": ["failed", "stale"],
                "include_open": "false",
                "limit": 50,
                "offset": 0,
                "max_active": 2,
                "order": "oldest",
            },
        ),
        (
            ["backfill", "--cancel", "backfill-12"],
            "/partitions/api/dags/~/backfills",
            {"name": "backfill-12", "action": "cancel"},
        ),
    ],
)
def test_a_write_sends_its_request_as_a_json_body_with_the_bearer_token(serve, capsys, argv, path, body):
    # The api-server takes a write's input from its JSON body alone (tools/ui/requests.py).
    url, got = serve(lambda method, path: (403, {}, b'{"detail": "Forbidden"}'))
    code, _, _ = run(capsys, *argv, "--api-url", url, "--token", "t")
    assert code == 1
    [(method, sent_to, auth, kind, sent)] = got
    assert (method, sent_to, auth, kind) == ("POST", path, "Bearer t", "application/json")
    assert json.loads(sent) == body


@pytest.mark.parametrize(
    "url", ["127.0.0.1:8080", "http://127.0.0.1:abc", "ftp://airflow.example.com", "", "http://"]
)
def test_an_api_url_that_is_not_an_http_url_is_a_usage_error_naming_it(capsys, url):
    code, out, err = run(capsys, "status", "d", "--api-url", url, "--token", "t")
    assert code == 2 and out == ""
    assert f"error: --api-url {url!r} is not an http(s) URL such as https://airflow.example.com." in err


def test_a_token_with_its_newline_is_sent_without_it(serve, capsys):
    # `--token "$(cat token.txt)"` strips it, but a pasted token or a variable set from a file may
    # keep it: http.client then refused the header, printing the whole token.
    url, got = serve(lambda method, path: (403, {}, b'{"detail": "Invalid JWT token"}'))
    code, _, err = run(capsys, "status", "d", "--api-url", url, "--token", "abc.def.ghi\n")
    assert code == 1 and "refused the token (403: Invalid JWT token)" in err
    assert [auth for _, _, auth, *_ in got] == ["Bearer abc.def.ghi"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["clean", "--before", "2026-01-01", "--yes"], "every Dag (clean without --dag)"),
        (["clean", "--before", "2026-01-01", "--dag", "a/b", "--yes"], "the Dag 'a/b'"),
        (["discard", "weather_jfk", "--yes"], "the Dag 'weather_jfk'"),
    ],
)
def test_too_little_access_names_the_dag_or_every_dag(serve, capsys, argv, named):
    url, _ = serve(lambda method, path: (403, {}, b'{"detail": "Forbidden"}'))
    code, out, err = run(capsys, *argv, "--api-url", url, "--token", "t")
    assert code == 1 and out == ""
    assert err.endswith(f"may not do this (403: Forbidden): it needs more access to {named}.\n")


@pytest.mark.parametrize("flag", ["--limit", "--offset"])
@pytest.mark.parametrize("value", ["-1", str(MAX_ROWS + 1), "ten", "1.5"])
def test_a_limit_or_offset_out_of_range_is_a_usage_error_in_both_modes(capsys, flag, value):
    # The database used to take -1 (every partition) and overflow SQLite on 2**63, the api-server
    # to answer 422 and 500: the same answer for both now, before either is asked.
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["status", "d", flag, value])
    assert exited.value.code == 2
    assert f"argument {flag}: {value!r} is not a whole number from 0 to {MAX_ROWS}" in capsys.readouterr().err


@pytest.mark.parametrize(("value", "expected"), [("0", 0), ("50", 50), (str(MAX_ROWS), MAX_ROWS)])
def test_a_limit_in_range_is_read(value, expected):
    assert build_parser().parse_args(["status", "d", "--limit", value]).limit == expected


def test_a_read_too_long_for_a_url_is_a_usage_error_before_anything_is_sent(serve, capsys, tmp_path):
    # 672 day keys make a URL of some 10,000 characters (15 each: "key=2026-01-01&"): Airflow's
    # api-server (uvicorn's h11) takes a request line of at most 16 KiB with its headers.
    keys = tmp_path / "keys.txt"
    keys.write_text(
        "# the days to redo\n"
        + "\n".join(f"{y}-{m:02d}-{d:02d}" for y in (2025, 2026) for m in range(1, 13) for d in range(1, 29))
    )
    url, got = serve(lambda method, path: (200, {"Content-Type": "application/json"}, b"{}"))
    code, out, err = run(capsys, "backfill", "d", "--keys-from", str(keys), "--api-url", url, "--token", "t")
    assert code == 2 and out == "" and got == []
    assert "characters long, more than an api-server takes in a URL (8,000)" in err
    # Fewer keys go: the file's comment and blank lines are no keys.
    keys.write_text("# two days\n2026-03-03\n\n2026-03-05\n")
    run(capsys, "backfill", "d", "--keys-from", str(keys), "--api-url", url, "--token", "t")
    [(method, path, *_)] = got
    assert (method, path) == (
        "GET",
        "/partitions/api/dags/d/backfill?key=2026-03-03&key=2026-03-05&include_open=false&limit=50&offset=0&max_active=4&order=oldest",
    )
