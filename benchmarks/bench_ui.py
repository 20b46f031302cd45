"""
Benchmark the Partitions view at one Dag's 10,000 partitions: the grid's layout, and the page.

Part 1 times :func:`airflow_partitions.tools.ui.layout.layout` (and ``select``, the time range) on a
``ConsumerState.to_dict()``-like answer: 10,000 daily partitions (27 years of days, a tenth of
them pending on 24 hourly keys), 10,000 hourly partitions, and 10,000 composite keys (10
airports x 1,000 days). Part 2, if Debian's chromium is installed, serves the page and a canned
API answer of the 10,000 days from a throwaway local server (no Airflow) and times, in headless
Chromium, from the call to the grid drawn (``document.body.dataset.rendered``, set by the page)
and to the first paint after it. Prints numbers, asserts none.

Run: ``python benchmarks/bench_ui.py`` (``--repeats N``; ``--no-browser``).
"""

from __future__ import annotations

import argparse
import gc
import json
import threading
import time
from datetime import date, timedelta
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from airflow_partitions.tools.ui import layout

STATES = ("success", "success", "success", "failed", "running", "past deadline", "never counting")


def partition(key: str, i: int) -> dict:
    """One partition as ``ConsumerState.to_dict()`` writes it; every tenth pending on 24 hours."""
    if i % 10:
        state = STATES[i % len(STATES)]
        return {"partition_key": key, "state": state, "runs": [[f"run_{i}", state]], "progress": []}
    hours = [f"{key[-10:]}T{h:02d}" for h in range(24)]
    progress = {
        "asset": "hours",
        "received": hours[:20],
        "expected": hours,
        "missing": hours[20:],
        "never_counting": [],
    }
    return {"partition_key": key, "state": "pending", "runs": [], "progress": [progress], "opened_at": None}


def days(n: int) -> list[dict]:
    return [partition((date(2000, 1, 1) + timedelta(days=i)).isoformat(), i) for i in range(n)]


def hours(n: int) -> list[dict]:
    return [partition(f"{date(2020, 1, 1) + timedelta(days=i // 24)}T{i % 24:02d}", i) for i in range(n)]


def composite(n: int) -> list[dict]:
    airports = [f"a{j:02d}" for j in range(10)]
    return [
        partition(f"{airports[i % 10]}|{date(2020, 1, 1) + timedelta(days=i // 10)}", i) for i in range(n)
    ]


def best(function, repeats: int) -> float:
    """Best wall time of *repeats* calls, in milliseconds, garbage collector off."""
    times = []
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            function()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return min(times) * 1000


def part1(repeats: int) -> None:
    print("Part 1: the grid's layout (Python, in the api-server), best of", repeats)
    print(f"  {'10,000 partitions':<32}{'select ms':>10}{'layout ms':>11}{'cells':>8}")
    for name, partitions in (
        ("days (month calendars)", days(10_000)),
        ("hours (day strips)", hours(10_000)),
        ("10 airports x 1,000 days (rows)", composite(10_000)),
    ):
        chosen = layout.select(partitions)
        blocks = layout.layout(chosen)
        cells = sum(
            len(b.get("cells", []))
            + sum(len(w) for w in b.get("weeks", []))
            + sum(len(r["cells"]) for r in b.get("rows", []))
            for b in blocks
        )
        print(
            f"  {name:<32}{best(lambda p=partitions: layout.select(p), repeats):>10.1f}"
            f"{best(lambda c=chosen: layout.layout(c), repeats):>11.1f}{cells:>8}"
        )


def part2(repeats: int) -> None:
    from tests.integration.browser import Browser, chromium

    if chromium() is None:
        print("Part 2: skipped (Debian's chromium is not installed)")
        return
    partitions = days(10_000)
    answer = {
        "dag_id": "bench",
        "assets": [["hours", "hours"]],
        "partitions": partitions,
        "refusals": [],
        "pending_total": 1000,
        "blocked_ahead": 0,
        "total_entries": len(partitions),
        "offset": 0,
        "limit": 10_000,
        "states": layout.summary(partitions),
        "grid": layout.layout(partitions),
    }
    body = json.dumps(answer).encode()
    static = Path(layout.__file__).parent / "static"
    page = (static / "index.html").read_text().replace("__ROOT__", "/partitions").encode()

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path.startswith("/partitions/api/dags/bench"):
                self._send(body, "application/json")
            elif self.path.startswith("/partitions/static/"):
                self.path = self.path.removeprefix("/partitions/static")
                super().do_GET()
            else:
                self._send(page, "text/html")

        def _send(self, data, kind):
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(static)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/partitions/dags/bench"
    print(
        f"\nPart 2: the page in headless Chromium, 10,000 daily partitions ({len(body) / 1e6:.1f} MB of JSON)"
    )
    try:
        with Browser() as browser:
            for attempt in range(1, repeats + 1):
                started = time.perf_counter()
                browser.open(url)
                browser.wait_for("document.body.dataset.rendered !== undefined", timeout=60)
                browser.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                painted = (time.perf_counter() - started) * 1000
                rendered = float(browser.eval("document.body.dataset.rendered"))
                cells = browser.eval("document.querySelectorAll('.cell[data-key]').length")
                print(
                    f"  load {attempt}: API call to grid drawn {rendered:.0f} ms (fetch, parse, DOM);"
                    f" navigation to first paint {painted:.0f} ms; {cells} cells"
                )
    finally:
        server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    part1(args.repeats)
    if not args.no_browser:
        part2(min(args.repeats, 3))


if __name__ == "__main__":
    main()
