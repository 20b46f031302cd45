"""
Benchmark rollups at the cap: a Dag's parse, its first events and the scheduler's ticks.

A month of minutes (``TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()),
window=TemporalWindow(Minutes(1)))``, 44,640 awaited keys in a 31-day month, under the default
``max_upstream_keys`` of 50,000) and a year of minutes (527,040, ``max_upstream_keys=600_000``),
each measured in a fresh interpreter, as a dag-processor parsing the Dag file, an api-server
handling an asset event or a scheduler evaluating a pending run meets them (no memo warm). Each
figure is the best of ``--repeats`` fresh processes:

- ``build``: constructing the rollup (what every parse of the Dag file pays, and every process
  rebuilding it from its stored form once), each process having first serialized a small
  rollup (Airflow's serialization and plugins imported, as in a dag-processor);
- ``first to_downstream``, ``next to_downstream``: ``to_downstream`` of a minute of a period no
  parse check sampled (June 2026, 2027), then of the next minute, right after the build;
- ``first to_upstream``: the awaited keys of another pending period (July 2026, 2029), what the
  scheduler asks first for a pending run;
- ``tick``: one scheduler evaluation of a third pending period (August 2026, 2030) holding
  44,000 or 500,000 received keys (its first minutes, canonical spelling), as Airflow 3.3's
  scheduler makes it (``expected = mapper.to_upstream(key)``, then ``mapper.wait_policy.
  is_satisfied_by_keys(matched=received, expected=expected)``, ``WaitForAll``): ``first tick``
  asks for the period first, ``next tick`` is the following loop's;
- each figure's peak of Python's memory above what the process held before it (``tracemalloc``,
  in a separate process, as tracing slows the code down): ``MB``; and the process's CPU time
  (``cpu s``), which a loaded machine stretches less than the wall time (``seconds``).

Limits (issue 38): ``first to_downstream``, ``first to_upstream`` and each tick at most 0.5 s (wall
time, on a quiet machine) and 50 MB; the script prints them and exits with status 1 if a figure
is over its limit.

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
#: The minute keys of the two events, in a period no parse check samples, the period listed, and
#: the period of the tick with the start of its first minute and how many minutes were received.
EVENTS = {
    "month": ("2026-06-10T09:15", "2026-06-10T09:16", "2026-07", "2026-08", "2026-08-01T00:00", "44000"),
    "year": ("2027-06-10T09:15", "2027-06-10T09:16", "2029", "2030", "2030-01-01T00:00", "500000"),
}
#: The limits of issue 38, for first to_downstream, first to_upstream and each tick.
LIMIT_S, LIMIT_MB = 0.5, 50.0
#: The figures measured in each process, in order: (name, what is timed).
STEPS = ("build", "first_to_downstream", "next_to_downstream", "first_to_upstream", "first_tick", "next_tick")

CHILD = """
import json, sys, time, tracemalloc
from datetime import datetime, timedelta
from airflow_partitions import Minutes, Month, TemporalMapper, TemporalRollupMapper, TemporalWindow, Year

expression, trace, first, following, listed, ticked, tick_start, received = (
    sys.argv[1], sys.argv[2] == "trace", *sys.argv[3:]
)
# What the scheduler holds for the pending run before it asks (read from the database): the
# received keys, written out by the calendar here, not by the code measured.
start = datetime.fromisoformat(tick_start)
keys = {(start + timedelta(minutes=i)).isoformat(timespec="minutes") for i in range(int(received))}
# What a dag-processor has loaded before it parses a Dag file: Airflow's serialization and plugins
# (the first serialize() imports them, about 0.5 s, once per process).
TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Month())).serialize()
result = {}
if trace:
    tracemalloc.start()


def measure(name, step):
    if trace:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
    started, cpu = time.perf_counter(), time.process_time()
    value = step()
    result[name] = time.perf_counter() - started
    result[name + "_cpu"] = time.process_time() - cpu
    if trace:
        result[name + "_mb"] = (tracemalloc.get_traced_memory()[1] - before) / 1e6
    return value


def tick():
    expected = rollup.to_upstream(ticked)
    return rollup.wait_policy.is_satisfied_by_keys(matched=keys, expected=expected)


rollup = measure("build", lambda: eval(expression))
for name, key in (("first_to_downstream", first), ("next_to_downstream", following)):
    assert measure(name, lambda: rollup.to_downstream(key)) == rollup.upstream_mapper.to_downstream(key)
result["awaited"] = len(measure("first_to_upstream", lambda: rollup.to_upstream(listed)))
for name in ("first_tick", "next_tick"):
    verdict = measure(name, tick)
    assert not verdict.satisfied and not verdict.unreachable, verdict
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
    print(f"limits: {LIMIT_S} s and {LIMIT_MB:.0f} MB for each figure but build and next to_downstream")
    print(f"{'case':<6} {'figure':<20} {'seconds':>9} {'cpu s':>9} {'MB':>8}  limit")
    over = []
    for case in args.cases.split(","):
        timed = [run(case, trace=False) for _ in range(args.repeats)]
        traced = run(case, trace=True)
        for step in STEPS:
            seconds = min(r[step] for r in timed)
            cpu = min(r[step + "_cpu"] for r in timed)
            megabytes = traced[step + "_mb"]
            limited = step not in ("build", "next_to_downstream")
            verdict = ""
            if limited:
                verdict = "ok" if seconds <= LIMIT_S and megabytes <= LIMIT_MB else "OVER"
                if verdict == "OVER":
                    over.append(f"{case} {step}")
            figure = step.replace("_", " ")
            print(f"{case:<6} {figure:<20} {seconds:>9.4f} {cpu:>9.4f} {megabytes:>8.2f}  {verdict}")
        print(f"{case:<6} {'awaited keys':<20} {timed[0]['awaited']:>9,}")
    if over:
        print(f"over a limit: {', '.join(over)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
