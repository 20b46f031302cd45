"""
The two tools that write: runs for the partitions of a range that never succeeded, and requeued events.

- :mod:`~airflow_partitions.tools.write.backfill`: ``backfill --missing`` (Dag runs through
  Airflow's own ``trigger_dag``);
- :mod:`~airflow_partitions.tools.write.requeue`: ``requeue`` (stored asset events queued again
  through Airflow's own path).

Both list what they would do first (a dry run), and write only when told to (``--yes``).
"""
