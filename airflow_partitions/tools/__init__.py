"""
The tools that see: what the scheduler will do with a mapper, a Dag folder, a running deployment.

The top layer, under the ``airflow-partitions`` commands (:mod:`~airflow_partitions.tools.cli`) and
the Partitions view (:mod:`~airflow_partitions.tools.ui`). Read-only but for the tools of
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
- :func:`plan`, :func:`carry_out` (:mod:`~airflow_partitions.tools.write.planning`): what each
  selected partition of a Dag takes (re-runs, runs upstream, keys a feed must send), and a paced,
  tracked backfill of its runs (:mod:`~airflow_partitions.tools.write.paced`);
- :func:`orphaned_events`, :func:`requeue` (:mod:`~airflow_partitions.tools.write.requeue`): after a
  consumer's rollup definition changed, the stored asset events its cleared pending runs had
  received, and queueing them again.

No command-line code here (that is :mod:`airflow_partitions.tools.commands`, one module per command,
and :mod:`airflow_partitions.tools.cli`, their parsers).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Public name -> the module defining it, imported on first use: `airflow-partitions --help` and
# the command line's own start import no Airflow module (its log level is set before Airflow's).
_EXPORTS: dict[str, str] = {
    "Finding": "airflow_partitions.tools.findings",
    "check": "airflow_partitions.tools.folder_findings",
    **dict.fromkeys(["Explanation", "KeyExplanation", "explain"], "airflow_partitions.tools.explanation"),
    **dict.fromkeys(
        ["Consumer", "DagFolder", "Producer", "consumer_mappers", "load_mapper", "stored_dag"],
        "airflow_partitions.tools.loading",
    ),
    **dict.fromkeys(["Progress", "RollupView", "Wait"], "airflow_partitions.tools.rollup_view"),
    **dict.fromkeys(
        [
            "AssetCoverage",
            "ConsumerDag",
            "ConsumerState",
            "Partition",
            "asset_coverage",
            "consumer_dags",
            "consumer_state",
        ],
        "airflow_partitions.tools.state",
    ),
    **dict.fromkeys(["Plan", "Selection", "Step"], "airflow_partitions.tools.write.backfill"),
    **dict.fromkeys(["carry_out", "plan"], "airflow_partitions.tools.write.planning"),
    **dict.fromkeys(["Backfill", "backfills"], "airflow_partitions.tools.write.paced"),
    **dict.fromkeys(
        ["OrphanedEvent", "Orphans", "orphaned_events", "requeue"], "airflow_partitions.tools.write.requeue"
    ),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'airflow_partitions.tools' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # over the submodule of the same name (`check`, `explain`) import binds
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
