"""
The partition state of a running deployment, read from its metadata database.

One reader under ``airflow-partitions status``, ``backfill --missing``, ``discard`` and the
Partitions view.

Read-only, through Airflow's own models and session: a partitioned consumer Dag's pending
partitioned Dag runs (``AssetPartitionDagRun`` rows without a Dag run, the keys they received in
``PartitionedAssetKeyLog``), its Dag runs by partition key, the audit-log rows of keys refused on
arrival (``failed to map partition_key``), and the scheduler's queue of pending runs (the 500
oldest are evaluated per scheduler loop). The mappers are the ones the scheduler runs: the Dag's
serialized timetable. One query per table, whatever the number of partitions.

By role:

- :mod:`~airflow_partitions.tools.state.model`: what the view's API returns (partition, run,
  what a run ran with, refusal, consumer state), the states, keys' time parts and buckets;
- the queries, one module per family of Airflow tables: :mod:`~airflow_partitions.tools.state.runs`
  (``dag_run``), :mod:`~airflow_partitions.tools.state.pending` (pending runs, their logged keys,
  the scheduler's queue), :mod:`~airflow_partitions.tools.state.audit_log` (refused keys),
  :mod:`~airflow_partitions.tools.state.serialized` (serialized Dags), on the shared SQL of
  :mod:`~airflow_partitions.tools.state.sql`;
- :mod:`~airflow_partitions.tools.state.cache`: fingerprints of a Dag's rows and what is kept
  while they hold;
- :mod:`~airflow_partitions.tools.state.progress` (pure): what a pending run's keys give it;
- :mod:`~airflow_partitions.tools.state.reader` (one Dag's page) and
  :mod:`~airflow_partitions.tools.state.tally` (counts and strips) combine them;
- :mod:`~airflow_partitions.tools.state.lateness`: which partitions are late (``expected_within``);
- :mod:`~airflow_partitions.tools.state.consumers`: what the faces ask for;
  :mod:`~airflow_partitions.tools.state.coverage`: an asset's keys.

Every name is importable from this package, as it was from the one module it replaces.
"""

from __future__ import annotations

from airflow_partitions.tools.state.consumers import (
    consumer_dags,
    consumer_range,
    consumer_reader,
    consumer_state,
    consumer_zone,
    partition_keys,
)
from airflow_partitions.tools.state.coverage import asset_coverage
from airflow_partitions.tools.state.lateness import late_keys
from airflow_partitions.tools.state.model import (
    BUCKET,
    EVALUATED_PER_LOOP,
    LISTED,
    PENDING_STATES,
    REFUSED_EVENT,
    SEPARATOR,
    STATES,
    AssetCoverage,
    AssetProgress,
    ConsumerDag,
    ConsumerState,
    KeyEvents,
    Partition,
    RanWith,
    Refusal,
    Run,
    attention,
    bucket_label,
    bucket_length,
    in_time_range,
    jsonable,
    late_since,
    time_part,
)
from airflow_partitions.tools.state.pending import received_keys
from airflow_partitions.tools.state.progress import pending_partition, pending_times, progress_of, ran_with
from airflow_partitions.tools.state.runs import ASSET_TRIGGERED, run_states
from airflow_partitions.tools.state.serialized import (
    asset_rows,
    awaited_by_date,
    consumer_grain,
    consumer_timetable,
    consumer_timetables,
    has_period_on,
    zones_of,
)
from airflow_partitions.tools.state.sql import selected_keys, time_part_sql

__all__ = [
    "ASSET_TRIGGERED",
    "BUCKET",
    "EVALUATED_PER_LOOP",
    "LISTED",
    "PENDING_STATES",
    "REFUSED_EVENT",
    "SEPARATOR",
    "STATES",
    "AssetCoverage",
    "AssetProgress",
    "ConsumerDag",
    "ConsumerState",
    "KeyEvents",
    "Partition",
    "RanWith",
    "Refusal",
    "Run",
    "asset_coverage",
    "asset_rows",
    "attention",
    "awaited_by_date",
    "bucket_label",
    "bucket_length",
    "consumer_dags",
    "consumer_grain",
    "consumer_range",
    "consumer_reader",
    "consumer_state",
    "consumer_timetable",
    "consumer_timetables",
    "consumer_zone",
    "has_period_on",
    "in_time_range",
    "jsonable",
    "late_keys",
    "late_since",
    "partition_keys",
    "pending_partition",
    "pending_times",
    "progress_of",
    "ran_with",
    "received_keys",
    "run_states",
    "selected_keys",
    "time_part",
    "time_part_sql",
    "zones_of",
]
