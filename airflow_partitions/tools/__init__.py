"""
The tools that see: what the scheduler will do with a mapper, a Dag folder, a running deployment.

The top layer, under the ``airflow-partitions`` commands (:mod:`~airflow_partitions.tools.cli`) and
the Partitions view (:mod:`~airflow_partitions.tools.ui`). Read-only but for the two tools of
:mod:`~airflow_partitions.tools.write`. One reader of a rollup
(:class:`~airflow_partitions.tools.rollup_view.RollupView`) answers what a period awaits, what
counts and when it fires, for every tool.

- :func:`load_mapper`, :func:`consumer_mappers`, :func:`stored_dag`: where a mapper comes from
  (an expression, a Dag folder loaded as the dag-processor does, the metadata database);
- :func:`explain`: what a mapper does with one key;
- :func:`check`: mistakes in a Dag folder's partitioned producers and consumers;
- :func:`consumer_state` (:mod:`~airflow_partitions.tools.state`): a running deployment's
  partitions of one consumer Dag, read from its metadata database; :func:`consumer_dags`, its
  partitioned Dags; :func:`asset_coverage`, which keys of one asset have events;
- :func:`missing_partitions`, :func:`create_runs` (:mod:`~airflow_partitions.tools.write.backfill`):
  the partitions of a range without a successful run, and runs for exactly those;
- :func:`orphaned_events`, :func:`requeue` (:mod:`~airflow_partitions.tools.write.requeue`): after a
  consumer's rollup definition changed, the stored asset events its cleared pending runs had
  received, and queueing them again.

No command-line code here (that is :mod:`airflow_partitions.tools.cli`).
"""

from __future__ import annotations

from airflow_partitions.tools.check import Finding, check
from airflow_partitions.tools.explain import Explanation, KeyExplanation, explain
from airflow_partitions.tools.loading import (
    Consumer,
    DagFolder,
    Producer,
    consumer_mappers,
    load_mapper,
    stored_dag,
)
from airflow_partitions.tools.rollup_view import Progress, RollupView, Wait
from airflow_partitions.tools.state import (
    AssetCoverage,
    ConsumerDag,
    ConsumerState,
    Partition,
    asset_coverage,
    consumer_dags,
    consumer_state,
)
from airflow_partitions.tools.write.backfill import MissingPartition, create_runs, missing_partitions
from airflow_partitions.tools.write.requeue import OrphanedEvent, Orphans, orphaned_events, requeue

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
    "Producer",
    "Progress",
    "RollupView",
    "Wait",
    "asset_coverage",
    "check",
    "consumer_dags",
    "consumer_mappers",
    "consumer_state",
    "create_runs",
    "explain",
    "load_mapper",
    "missing_partitions",
    "orphaned_events",
    "requeue",
    "stored_dag",
]
