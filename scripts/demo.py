"""
The main job: run the example weather pipeline on a real, throwaway Airflow and show what happened.

Starts Airflow's api-server, scheduler and dag-processor on 127.0.0.1 with an SQLite metadata
database in a temporary AIRFLOW_HOME, loads ``example_dags/``, lands a slice of the 2013 NYC
airport weather (a few airport-days around the DST changes, and all of March for JFK), waits
for the consumers, runs the daily export twice, and prints one row per Dag run. Every process
it started is stopped at the end, on Ctrl-C and on failure; ``--keep`` leaves Airflow running
until Ctrl-C so you can explore the UI, on a free port of 127.0.0.1 or the one ``--port N`` names.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import signal
import socket
import sys
import tempfile
import textwrap
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "example_dags")]
from weather_data import local_day_hours, observations  # noqa: E402 - the example Dags' own helpers

from tests.support.launcher import AirflowError, AirflowInstance  # noqa: E402 - the checkout's, found through the path above

AIRPORTS = ("ewr", "jfk", "lga")
# Airport-days to land: the spring-forward day (23 local hours) and the day after at every
# airport, the fall-back day (25 local hours) at two, and every day of March 2013 at JFK so its
# business-day rollup for 2013-03 completes.
LANDINGS = sorted(
    {f"{a}::2013-03-10" for a in AIRPORTS}
    | {f"{a}::2013-03-11" for a in AIRPORTS}
    | {"jfk::2013-11-03", "ewr::2013-11-03"}
    | {f"jfk::{date(2013, 3, 1) + timedelta(days=i)}" for i in range(31)}
)
# Daily export runs, by logical date (06:00 New York): each exports the previous local day.
EXPORTS = ["2013-03-11T06:00:00-04:00", "2013-07-05T06:00:00-04:00"]
COLUMNS = (
    "Dag",
    "run",
    "partition key",
    "partition date",
    "state",
    "output (in the data folder, which --keep keeps)",
)


def _describe(airflow: AirflowInstance, data: Path, run: dict, output: str) -> str:
    """Say what a run wrote: the file, and the fact in it worth seeing."""
    if output.startswith("daily/"):
        day = json.loads((data / output).read_text())
        return f"{output} ({day['hours_observed']} of {day['hours_in_day']} local hours observed)"
    if output.startswith("local_days/"):
        hours = (data / output).read_text().count("\n") - 1
        return f"{output} ({hours} real hours, local times with offsets)"
    if output.startswith("monthly/"):
        month = json.loads((data / output).read_text())
        return f"{output} ({month['business_days']} business days, mean {month['temp_mean_f']} °F)"
    if output.startswith("exports/"):
        events = airflow.request(
            "GET", "/api/v2/assets/events", params={"source_run_id": run["dag_run_id"], "limit": 100}
        )["asset_events"]
        return f"{output} -> events {', '.join(sorted(e['partition_key'] for e in events))}"
    return output


def _run_rows(airflow: AirflowInstance, data: Path, dag_ids: list[str]) -> list[tuple[str, ...]]:
    rows = []
    for dag_id in dag_ids:
        task_id = airflow.request("GET", f"/api/v2/dags/{dag_id}/tasks")["tasks"][0]["task_id"]
        runs = sorted(
            airflow.dag_runs(dag_id), key=lambda r: (r["partition_key"] or "", r["logical_date"] or "")
        )
        for run in runs:
            output = "-"
            if run["state"] == "success":
                try:
                    output = _describe(airflow, data, run, airflow.xcom(dag_id, run["dag_run_id"], task_id))
                except AirflowError:
                    output = "(skipped: no input for that day, no event emitted)"
            rows.append(
                (
                    dag_id,
                    run["dag_run_id"].removesuffix("+00:00"),
                    run["partition_key"] or "-",
                    (run["partition_date"] or "-").replace("T00:00:00Z", ""),
                    run["state"],
                    output,
                )
            )
    return rows


def _write_table(rows: list[tuple[str, ...]], target: Path) -> None:
    widths = [max(len(str(cell)) for cell in column) for column in zip(COLUMNS, *rows, strict=True)]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [line.format(*COLUMNS), line.format(*("-" * w for w in widths))]
    target.write_text("\n".join([*lines, *(line.format(*row).rstrip() for row in rows)]) + "\n")


def _why_waiting(apdr: dict) -> str:
    """Why a rollup still waits at the end of the demo, and whether it ever can fire."""
    dag_id, key = apdr["dag_id"], apdr["partition_key"]
    received, required = apdr["total_received"], apdr["total_required"]
    if dag_id.startswith("weather_local_day_"):
        airport, day = dag_id.rsplit("_", 1)[1].upper(), date.fromisoformat(key)
        missing = local_day_hours(day) - len(observations(airport, day))
        if missing:
            return f"{key}: {received}/{required} hours, can never fire (the data lacks {missing})"
    if dag_id.startswith("weather_monthly_"):
        return f"{key}: {received}/{required} business days (the demo lands a few days only)"
    return f"{key}: {received}/{required} received"


def _print_summary(dag_ids: list[str], rows: list[tuple[str, ...]], pending: list[dict]) -> None:
    """Print, per Dag, its runs and what still waits and why (fits 120 columns)."""
    print(f"{'Dag':<26} {'runs':>5} {'success':>8} {'other':>6}  still waiting (why)")
    for dag_id in dag_ids:
        states = [row[4] for row in rows if row[0] == dag_id]
        waiting = sorted((a for a in pending if a["dag_id"] == dag_id), key=lambda a: a["partition_key"])
        more = f" (+{len(waiting) - 1} more)" if len(waiting) > 1 else ""
        why = (_why_waiting(waiting[0]) + more) if waiting else "-"
        other = len(states) - states.count("success")
        row = f"{dag_id:<26} {len(states):>5} {states.count('success'):>8} {other:>6}  "
        print(row + textwrap.shorten(why, width=120 - len(row), placeholder=" …"))


def _demo(airflow: AirflowInstance, started: float, data: Path, *, keep: bool) -> None:
    print(f"Airflow UI: {airflow.url}  (every user is admin; open it while the demo runs)")
    print(f"Partitions view: {airflow.url}/partitions/  (also under Browse > Partitions in Airflow's UI)")
    # Pipeline order: producers, per-airport consumers, monthly rollups, then the export.
    dag_ids = [f"weather_{kind}_{a}" for kind in ("land", "daily", "local_day", "monthly") for a in AIRPORTS]
    dag_ids += ["weather_airport_day", "weather_daily_export"]
    airflow.wait_for_dags(dag_ids)
    print(f"{len(dag_ids)} Dags parsed after {time.monotonic() - started:.0f} s.")

    print(f"Landing {len(LANDINGS)} airport-days (partition keys like jfk::2013-03-10) …", flush=True)
    for key in LANDINGS:
        airflow.trigger(f"weather_land_{key.split('::')[0]}", partition_key=key)
    for airport in AIRPORTS:
        landed = [date.fromisoformat(key.split("::")[1]) for key in LANDINGS if key.startswith(airport)]
        airflow.wait_for_runs(f"weather_land_{airport}", len(landed), timeout=300)
        airflow.wait_for_runs(f"weather_daily_{airport}", len(landed), timeout=300)
        # A local day completes when every real hour of it was observed (worked out from the data).
        complete = [d for d in landed if len(observations(airport.upper(), d)) == local_day_hours(d)]
        airflow.wait_for_runs(f"weather_local_day_{airport}", len(complete), timeout=300)
    airflow.wait_for_runs("weather_monthly_jfk", 1, timeout=120)
    # One run per airport-day with at least 90 % of its real hours (its deadline passed in 2013).
    enough = [
        key
        for key in LANDINGS
        if len(observations(key[:3].upper(), day := date.fromisoformat(key[5:])))
        >= math.ceil(0.9 * local_day_hours(day))
    ]
    airflow.wait_for_runs("weather_airport_day", len(enough), timeout=300)

    print("Running the daily export for 2013-03-10 (input exists) and 2013-07-04 (none) …", flush=True)
    for logical_date in EXPORTS:
        airflow.trigger("weather_daily_export", logical_date=logical_date)
    airflow.wait_for_runs("weather_daily_export", len(EXPORTS), timeout=120)

    print()
    rows = _run_rows(airflow, data, dag_ids)
    pending = airflow.request("GET", "/ui/partitioned_dag_runs", params={"has_created_dag_run_id": False})
    _print_summary(dag_ids, rows, pending["partitioned_dag_runs"])
    # Where the user finds it: the kept data folder, else the folder the demo was started from.
    table = (data if keep else Path.cwd()) / "airflow-partitions-demo-runs.txt"
    _write_table(rows, table)
    print(f"\nEvery Dag run (Dag, run, partition key, partition date, state, output): {table}")
    refused = airflow.request(
        "GET", "/api/v2/eventLogs", params={"event": "failed to map partition_key", "limit": 1000}
    )["event_logs"]
    by_consumer: dict[str, list[str]] = {}
    for entry in refused:
        consumer = re.search(r"in target Dag '([^']+)'", entry["extra"] or "")
        reason = (entry["extra"] or "").splitlines()[-1].removeprefix("ValueError: ")
        refusal = re.match(r"partition key '([^']+)' would never count towards '([^']+)': (.*)", reason)
        reason = f"{refusal[1]} for {refusal[2]}: {refusal[3]}" if refusal else reason
        by_consumer.setdefault(consumer[1] if consumer else "?", []).append(reason)
    print(f"\nKeys refused on arrival, out loud (audit log 'failed to map partition_key'): {len(refused)}")
    for consumer, reasons in sorted(by_consumer.items()):
        head = f"  {consumer}: {len(reasons)} {'key' if len(reasons) == 1 else 'keys'}, e.g. "
        print(head + textwrap.shorten(reasons[0], width=120 - len(head), placeholder=" …"))
    print(f"\nData folder: {data} ({'kept' if keep else 'deleted when the demo ends; --keep keeps it'})")
    print(f"Done in {time.monotonic() - started:.0f} s.")

    if keep:
        print(f"\nAirflow keeps running at {airflow.url}; press Ctrl-C to stop it.")
        print("The command line, in another terminal, from its database or through its REST API:")
        print(f"  AIRFLOW_HOME={airflow.home} airflow-partitions status weather_local_day_jfk")
        token = airflow.request("GET", "/auth/token", auth=False)["access_token"]
        print(f"  airflow-partitions status weather_local_day_jfk --api-url {airflow.url} --token {token}")
        try:
            while True:
                airflow.check_alive()
                time.sleep(1)
        except KeyboardInterrupt:
            print("\nStopping Airflow …")


def port_number(text: str) -> int:
    """
    Read ``--port``: a TCP port from 1 to 65535 that is free on 127.0.0.1 now.

    :raises argparse.ArgumentTypeError: naming the port, if it is not a number in that range or
        something already listens on it (Airflow's api-server would fail to start on it later).
    """
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number such as 8080") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is not between 1 and 65535")
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as err:
            reason = f"port {port} on 127.0.0.1 is not free ({err.strerror})"
            raise argparse.ArgumentTypeError(reason) from None
    return port


def build_parser() -> argparse.ArgumentParser:
    """Return the demo's command line: ``--keep``, ``--port N``."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep Airflow running after the demo, until Ctrl-C"
    )
    parser.add_argument(
        "--port",
        type=port_number,
        help="the api-server's port on 127.0.0.1 (the UI: http://127.0.0.1:N/); a free one if omitted",
    )
    return parser


def main() -> int:
    args = build_parser().parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop everything on `kill` too

    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C, even when started in the background
    started = time.monotonic()
    data = Path(tempfile.mkdtemp(prefix="airflow-partitions-data-"))
    airflow = AirflowInstance(
        REPO / "example_dags", extra_env={"AIRFLOW_PARTITIONS_DATA": str(data)}, port=args.port
    )
    print(f"Starting Airflow (api-server, scheduler, dag-processor; SQLite) in {airflow.home} …", flush=True)
    try:
        with airflow:
            try:
                _demo(airflow, started, data, keep=args.keep)
            except Exception:
                print(airflow.log_tail(), file=sys.stderr)
                raise
    finally:
        if not args.keep:
            shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\nInterrupted; every Airflow process was stopped.")
        sys.exit(130)
    except Exception as err:  # any failure: say so plainly (the logs were printed above)
        print(f"\nThe demo failed: {type(err).__name__}: {err}", file=sys.stderr)
        sys.exit(1)
