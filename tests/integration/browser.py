"""
A headless Chromium driven through its own DevTools protocol (Debian's ``chromium``, no download).

Just what the Partitions view's tests need: set a cookie, open a page, evaluate JavaScript, click
at an element, save a screenshot. The protocol goes over a WebSocket (``websockets``, which
Airflow's api-server already depends on). :class:`PageServer` serves the view's page with canned
API answers (no Airflow), to time the page alone.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--remote-debugging-port=0",
]


def chromium() -> str | None:
    """Return the path of Debian's chromium, if installed (``scripts/dev.sh test`` installs it)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="airflow-partitions-chromium-"))
        self.process = subprocess.Popen(
            [chromium(), *ARGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
            page = next(t for t in json.load(answer) if t["type"] == "page")
        self.socket = connect(page["webSocketDebuggerUrl"], max_size=None)
        self.ids = itertools.count(1)
        #: The DevTools events received so far (``{"method": "Network.responseReceived", "params":
        #: {...}}``), in order: those of the domains enabled (``send("Network.enable")``).
        self.events: list[dict[str, Any]] = []
        self.send("Page.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a DevTools command and return its result (events in between go to :attr:`events`)."""
        call = next(self.ids)
        self.socket.send(json.dumps({"id": call, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == call:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            if "method" in message:
                self.events.append(message)

    def set_cookie(self, url: str, name: str, value: str) -> None:
        """Set a cookie for *url* (Airflow's UI session is the ``_token`` cookie)."""
        self.send("Network.setCookie", url=url, name=name, value=value, path="/")

    def open(self, url: str) -> None:
        """Navigate to *url*."""
        self.send("Page.navigate", url=url)

    def eval(self, expression: str) -> Any:
        """Evaluate *expression* in the page (awaiting a promise) and return its JSON value."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """Evaluate *expression* until it is truthy, and return it."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(RuntimeError):  # the page may be navigating
                if value := self.eval(expression):
                    return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} s for {expression}")
            time.sleep(0.1)

    def click(self, selector: str) -> None:
        """Scroll the element *selector* into view and click its middle with the mouse, as a user does."""
        box = self.eval(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def press(self, key: str) -> None:
        """Press and release *key* (``"Enter"``, ``"ArrowRight"``) on the focused element, as a user does."""
        code = {"Enter": 13, "Escape": 27, "ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40}[
            key
        ]
        extra = {"text": "\r"} if key == "Enter" else {}
        self.send(
            "Input.dispatchKeyEvent", type="keyDown", key=key, code=key, windowsVirtualKeyCode=code, **extra
        )
        self.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=key, windowsVirtualKeyCode=code)

    def color_scheme(self, scheme: str) -> None:
        """Emulate ``prefers-color-scheme: SCHEME`` (``light`` or ``dark``)."""
        self.send("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}])

    def screenshot(self, path: str | Path) -> Path:
        """Save a PNG of the page as it shows."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))
        return path

    def close(self) -> None:
        """Stop Chromium and delete its profile."""
        with contextlib.suppress(Exception):
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PageServer:
    """
    The Partitions view's page on ``127.0.0.1`` with canned API answers: the page's own cost, no Airflow.

    *answers* maps API paths (``/dags/bench``, after ``/partitions/api``) to the JSON to answer;
    the page (``/partitions/…``) and its static files are served as the plugin serves them. Use
    as a context manager; ``url(path)`` is the address of a page.
    """

    def __init__(self, answers: dict[str, Any]) -> None:
        static = Path(__file__).parents[2] / "airflow_partitions" / "tools" / "ui" / "static"
        page = (static / "index.html").read_text(encoding="utf-8").replace("__ROOT__", "/partitions").encode()
        bodies = {path: json.dumps(answer).encode() for path, answer in answers.items()}
        kinds = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                if path.startswith("/partitions/api/"):
                    body = bodies.get(path.removeprefix("/partitions/api"))
                    self._send(body or b'{"detail": "not canned"}', "application/json", 200 if body else 404)
                elif path.startswith("/partitions/static/"):
                    file = static / path.removeprefix("/partitions/static/")
                    self._send(file.read_bytes(), kinds.get(file.suffix, "application/octet-stream"))
                else:
                    self._send(page, "text/html")

            def _send(self, data: bytes, kind: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        """Return the address of the page *path* (``/dags/bench``) under ``/partitions``."""
        return f"http://127.0.0.1:{self.server.server_port}/partitions{path}"

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> PageServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
