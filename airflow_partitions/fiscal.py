"""Deprecated: the fiscal grains: :mod:`airflow_partitions.grains.fiscal` and ``airflow_partitions``."""

from __future__ import annotations

import warnings

from airflow_partitions.grains.fiscal import FiscalMonth, FiscalQuarter, FiscalYear

__all__ = ["FiscalMonth", "FiscalQuarter", "FiscalYear"]

warnings.warn(
    "airflow_partitions.fiscal moved to airflow_partitions.grains.fiscal; import the grains from "
    "airflow_partitions. The old module will be removed in a later release.",
    DeprecationWarning,
    stacklevel=2,
)
