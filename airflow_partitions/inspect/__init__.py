"""
Inspecting partitioned Dags without a scheduler: the library under ``airflow-partitions`` commands.

- :func:`load_mapper`, :func:`consumer_mappers`, :func:`stored_dag`: where a mapper comes from
  (an expression, a Dag folder loaded as the dag-processor does, the metadata database);
- :func:`explain`: what a mapper does with one key;
- :func:`check`: mistakes in a Dag folder's partitioned producers and consumers;
- :func:`partition_period`: the period a running task's partition covers.

No CLI code here (that is :mod:`airflow_partitions.cli`); ``status`` and ``backfill --missing``
will add a state reader module beside these.
"""

from __future__ import annotations

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
from airflow_partitions.inspect.samples import example_keys

__all__ = [
    "Consumer",
    "DagFolder",
    "Explanation",
    "Finding",
    "KeyExplanation",
    "PartitionPeriod",
    "Producer",
    "check",
    "consumer_mappers",
    "example_keys",
    "explain",
    "load_mapper",
    "partition_period",
    "period_of",
    "stored_dag",
]
