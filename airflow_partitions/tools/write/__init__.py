"""
The tools that write: missing runs, requeued events, stray pending runs, old bookkeeping removed.

- :mod:`~airflow_partitions.tools.write.backfill`: ``backfill`` (what each partition takes, from
  :mod:`~airflow_partitions.tools.write.planning`; its runs started a few at a time by a tracked
  backfill, :mod:`~airflow_partitions.tools.write.paced`);
- :mod:`~airflow_partitions.tools.write.requeue`: ``requeue`` (stored asset events queued again
  through Airflow's own path);
- :mod:`~airflow_partitions.tools.write.discard`: ``discard`` (stray pending runs);
- :mod:`~airflow_partitions.tools.write.clean`: ``clean`` (the rows of runs that fired).

Each lists what it would do first (a dry run), and writes only when told to (``--yes``). The two
that remove rows share :func:`remove_pending_rows` and :func:`audit`.
"""

from __future__ import annotations

import getpass
import json
from typing import Any


def remove_pending_rows(session: Any, ids: list[int]) -> None:
    """Delete the ``asset_partition_dag_run`` rows *ids* and their ``partitioned_asset_key_log`` rows."""
    from sqlalchemy import delete

    from airflow_partitions.tools.state.tables import asset_partition_dag_run as pending_run
    from airflow_partitions.tools.state.tables import partitioned_asset_key_log as key_log

    session.execute(delete(key_log).where(key_log.c.asset_partition_dag_run_id.in_(ids)))
    session.execute(delete(pending_run).where(pending_run.c.id.in_(ids)))


def audit(session: Any, event: str, dag_id: str, user: str | None, what: dict[str, Any]) -> Any:
    """
    Add an audit-log row (Airflow's ``log`` table): *event*, the Dag, *user* (or the OS user), *what*.

    Return the row (its ``id`` once the session is flushed).
    """
    from airflow.models.log import Log

    row = Log(event=event, dag_id=dag_id, owner=user or getpass.getuser(), extra=json.dumps(what))
    session.add(row)
    return row
