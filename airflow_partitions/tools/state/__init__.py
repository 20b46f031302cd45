"""
The partition state of a running deployment, read from its metadata database.

One reader under ``airflow-partitions status``, ``backfill``, ``discard`` and the Partitions view.

Read-only, through SQLAlchemy Core tables of the columns it reads
(:mod:`~airflow_partitions.tools.state.tables`, checked against Airflow's models by a test): a
partitioned consumer Dag's pending
partitioned Dag runs (``AssetPartitionDagRun`` rows without a Dag run, the keys they received in
``PartitionedAssetKeyLog``), its Dag runs by partition key, the audit-log rows of keys refused on
arrival (``failed to map partition_key``), and the scheduler's queue of pending runs (the 500
oldest are evaluated per scheduler loop). The mappers are the ones the scheduler runs: the Dag's
serialized timetable. One query per table, whatever the number of partitions; the pending runs
from a copy kept in step (:mod:`~airflow_partitions.tools.state.kept.mirror`).

By role:

- :mod:`~airflow_partitions.tools.state.model`: what the view's API returns (partition, run,
  what a run ran with, refusal, consumer state), the states, keys' time parts and buckets;
- the queries, one module per family of Airflow tables: :mod:`~airflow_partitions.tools.state.runs`
  (``dag_run``), :mod:`~airflow_partitions.tools.state.pending` (pending runs, their logged keys,
  the scheduler's queue), :mod:`~airflow_partitions.tools.state.audit_log` (refused keys),
  :mod:`~airflow_partitions.tools.state.serialized` (serialized Dags), on the shared SQL of
  :mod:`~airflow_partitions.tools.state.sql` and the tables of :mod:`~airflow_partitions.tools.state.tables`;
- :mod:`~airflow_partitions.tools.state.kept`, a folder of its own: what is kept between reads
  (the cache, the store, the mirror of the pending runs) and the fingerprints that say while it
  holds;
- :mod:`~airflow_partitions.tools.state.progress` (pure): what a pending run's keys give it;
- :mod:`~airflow_partitions.tools.state.reader` (one Dag's read),
  :mod:`~airflow_partitions.tools.state.page` (its page in full) and
  :mod:`~airflow_partitions.tools.state.tally` (counts and strips) combine them;
- :mod:`~airflow_partitions.tools.state.lateness`: which partitions are late (``expected_within``);
- :mod:`~airflow_partitions.tools.state.consumers`: what the faces ask for;
  :mod:`~airflow_partitions.tools.state.coverage`: an asset's keys.

Every name is importable from this package, so the faces need not know which module holds it,
each loaded on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: Where each name lives: imported on first use, so that reading the value types (:mod:`.model`)
#: loads no Airflow (``airflow-partitions status --api-url`` answers without Airflow's start).
_HOME = {
    "consumer_dags": "consumers",
    "consumer_range": "consumers",
    "consumer_reader": "consumers",
    "consumer_state": "consumers",
    "consumer_zone": "consumers",
    "partition_keys": "consumers",
    "checked_list": "consumers",
    "LISTS": "consumers",
    "asset_coverage": "coverage",
    "late_keys": "lateness",
    "AssetCoverage": "model",
    "AssetProgress": "model",
    "BUCKET": "model",
    "ConsumerDag": "model",
    "ConsumerState": "model",
    "EVALUATED_PER_LOOP": "model",
    "KeyEvents": "model",
    "LISTED": "model",
    "PENDING_STATES": "model",
    "Partition": "model",
    "REFUSED_EVENT": "model",
    "RanWith": "model",
    "Refusal": "model",
    "Run": "model",
    "SEPARATOR": "model",
    "STATES": "model",
    "attention": "model",
    "bucket_label": "model",
    "bucket_length": "model",
    "in_time_range": "model",
    "jsonable": "plain",
    "late_since": "model",
    "time_part": "model",
    "received_keys": "pending",
    "pending_partition": "progress",
    "pending_times": "progress",
    "progress_of": "progress",
    "ran_with": "progress",
    "ASSET_TRIGGERED": "runs",
    "run_states": "runs",
    "asset_rows": "serialized",
    "awaited_by_date": "serialized",
    "consumer_grain": "serialized",
    "consumer_timetable": "serialized",
    "consumer_timetables": "serialized",
    "has_period_on": "serialized",
    "key_grain": "serialized",
    "known_dag": "serialized",
    "zones_of": "serialized",
    "selected_keys": "sql",
    "time_part_sql": "sql",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    """Return *name* from the module of this package that holds it (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
