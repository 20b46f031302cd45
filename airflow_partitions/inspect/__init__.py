"""
Deprecated: the tools moved to :mod:`airflow_partitions.tools` (``inspect`` shadowed the standard library's).

Every name and submodule of the old package keeps importing (``airflow_partitions.inspect.state``
is :mod:`airflow_partitions.tools.state`), with a ``DeprecationWarning``, for a deprecation period
(CHANGELOG.md); the task helpers are in :mod:`airflow_partitions.task`, ``example_keys`` in
:mod:`airflow_partitions.examples`.
"""

from __future__ import annotations

import importlib
import sys
import warnings

from airflow_partitions.examples import example_keys  # noqa: F401 - in __all__
from airflow_partitions.task import PartitionPeriod, partition_period, period_of  # noqa: F401 - in __all__
from airflow_partitions.tools import *  # noqa: F403 - the old package's names, all of them
from airflow_partitions.tools import __all__ as _tools

warnings.warn(
    "airflow_partitions.inspect is now airflow_partitions.tools (task helpers: airflow_partitions.task); "
    "the old name will be removed in a later release.",
    DeprecationWarning,
    stacklevel=2,
)

# The old submodules, as the modules they became: `from airflow_partitions.inspect.state import …`.
for _old, _new in {
    "backfill": "tools.write.backfill",
    "check": "tools.findings",
    "explain": "tools.explanation",
    "loading": "tools.loading",
    "period": "task",
    "requeue": "tools.write.requeue",
    "samples": "tools.samples",
    "state": "tools.state",
}.items():
    sys.modules[f"{__name__}.{_old}"] = importlib.import_module(f"airflow_partitions.{_new}")

__all__ = sorted([*_tools, "PartitionPeriod", "example_keys", "partition_period", "period_of"])
