"""
Inspecting partitioned Dags and their state: the library under ``airflow-partitions`` commands.

- :func:`load_mapper`, :func:`consumer_mappers`, :func:`stored_dag`: where a mapper comes from
  (an expression, a Dag folder loaded as the dag-processor does, the metadata database);
- :func:`explain`: what a mapper does with one key;
- :func:`check`: mistakes in a Dag folder's partitioned producers and consumers;
- :func:`partition_period`: the period a running task's partition covers;
- :func:`consumer_state` (:mod:`~airflow_partitions.inspect.state`): a running deployment's
  partitions of one consumer Dag, read from its metadata database; :func:`consumer_dags`, its
  partitioned Dags; :func:`asset_coverage`, which keys of one asset have events;
- :func:`missing_partitions`, :func:`create_runs` (:mod:`~airflow_partitions.inspect.backfill`):
  the partitions of a range without a successful run, and runs for exactly those;
- :func:`orphaned_events`, :func:`requeue` (:mod:`~airflow_partitions.inspect.requeue`): after a
  consumer's rollup definition changed, the stored asset events its cleared pending runs had
  received, and queueing them again.

No CLI code here (that is :mod:`airflow_partitions.cli`).
"""

from __future__ import annotations

from airflow_partitions.inspect.backfill import MissingPartition, create_runs, missing_partitions
from airflow_partitions.inspect.check import Finding, check
from airflow_partitions.inspect.explain import Explanation, KeyExplanation, explain
from airflow_partitions.inspect.loading import (
    Consumer,
    DagFolder,
    Producer,
    consumer_mappers,
    load_mapper,
    stored_dag,
)
from airflow_partitions.inspect.period import PartitionPeriod, partition_period, period_of
from airflow_partitions.inspect.requeue import OrphanedEvent, Orphans, orphaned_events, requeue
from airflow_partitions.inspect.samples import example_keys
from airflow_partitions.inspect.state import (
    AssetCoverage,
    ConsumerDag,
    ConsumerState,
    Partition,
    asset_coverage,
    consumer_dags,
    consumer_state,
)

__all__ = [
    "AssetCoverage",
    "Consumer",
    "ConsumerDag",
    "ConsumerState",
    "DagFolder",
    "Explanation",
    "Finding",
    "KeyExplanation",
    "MissingPartition",
    "OrphanedEvent",
    "Orphans",
    "Partition",
    "PartitionPeriod",
    "Producer",
    "asset_coverage",
    "check",
    "consumer_dags",
    "consumer_mappers",
    "consumer_state",
    "create_runs",
    "example_keys",
    "explain",
    "load_mapper",
    "missing_partitions",
    "orphaned_events",
    "partition_period",
    "period_of",
    "requeue",
    "stored_dag",
]
