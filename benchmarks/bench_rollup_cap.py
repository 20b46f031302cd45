"""
Benchmark rollups at the cap: what parsing a Dag with a large rollup and its first events cost.

A month of minutes (``TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()),
window=TemporalWindow(Minutes(1)))``, 44,640 awaited keys in a 31-day month, under the default
``max_upstream_keys`` of 50,000) and a year of minutes (527,040, ``max_upstream_keys=600_000``),
each measured in a fresh interpreter, as a dag-processor parsing the Dag file or an api-server
handling an asset event meets them (no memo warm):

- ``build``: constructing the rollup (what every parse of the Dag file pays, and every process
  rebuilding it from its stored form once), seconds; best of ``--repeats`` fresh processes, each
  having first serialized a small rollup (Airflow's serialization and plugins imported, as in a
  dag-processor);
- ``peak MB``: the most memory Python held while building it (``tracemalloc``, a separate run,
  as tracing slows the build);
- ``first event``, ``next event``: ``to_downstream`` of a minute of a period no parse check
  sampled (June 2026, 2027), then of the next minute, milliseconds, right after the build;
- ``to_upstream``: listing another month's (July 2026) or year's (2029) awaited keys, what the
  scheduler does for a pending run, seconds.

Run: ``python benchmarks/bench_rollup_cap.py [--repeats 3] [--cases month,year]``. Figures in
``benchmarks/README.md``, "Rollups at the cap".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CASES = {
    "month": (
        "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Minutes(1)))"
    ),
    "year": (
        "TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Minutes(1)), "
        "max_upstream_keys=600_000)"
    ),
}
#: The minute keys of the two events, in a period no parse check samples, and the period listed.
EVENTS = {
    "month": ("2026-06-10T09:15", "2026-06-10T09:16", "2026-07"),
    "year": ("2027-06-10T09:15", "2027-06-10T09:16", "2029"),
}

CHILD = """
import json, sys, time, tracemalloc
from airflow_partitions import Minutes, Month, TemporalMapper, TemporalRollupMapper, TemporalWindow, Year

expression, trace, first, following, listed = sys.argv[1], sys.argv[2] == "trace", *sys.argv[3:]
# What a dag-processor has loaded before it parses a Dag file: Airflow's serialization and plugins
# (the first serialize() imports them, about 0.5 s, once per process).
TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Month())).serialize()
if trace:
    tracemalloc.start()
started = time.perf_counter()
rollup = eval(expression)
built = time.perf_counter() - started
result = {"build": built}
if trace:
    result["peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
else:
    events = []
    for key in (first, following):
        started = time.perf_counter()
        assert rollup.to_downstream(key) == rollup.upstream_mapper.to_downstream(key)
        events.append((time.perf_counter() - started) * 1000)
    result["first_event_ms"], result["next_event_ms"] = events
    started = time.perf_counter()
    awaited = len(rollup.to_upstream(listed))
    result["to_upstream"] = time.perf_counter() - started
    result["awaited"] = awaited
print(json.dumps(result))
"""


def run(case: str, trace: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, CASES[case], "trace" if trace else "time", *EVENTS[case]],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default="month,year")
    args = parser.parse_args()
    print(
        f"{'case':<6} {'build s':>8} {'peak MB':>8} {'first event ms':>15} {'next event ms':>14} "
        f"{'to_upstream s':>14} {'awaited':>8}"
    )
    for case in args.cases.split(","):
        timed = [run(case, trace=False) for _ in range(args.repeats)]
        best = min(timed, key=lambda r: r["build"])
        peak = run(case, trace=True)["peak_mb"]
        first = min(r["first_event_ms"] for r in timed)
        following = min(r["next_event_ms"] for r in timed)
        listing = min(r["to_upstream"] for r in timed)
        print(
            f"{case:<6} {best['build']:>8.3f} {peak:>8.2f} {first:>15.3f} {following:>14.3f} "
            f"{listing:>14.3f} {best['awaited']:>8,}"
        )


if __name__ == "__main__":
    main()
