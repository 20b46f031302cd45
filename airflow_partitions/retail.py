"""Deprecated: the retail grains: :mod:`airflow_partitions.grains.retail` and ``airflow_partitions``."""

from __future__ import annotations

import warnings

from airflow_partitions.grains.retail import (
    RetailCalendar,
    RetailMonth,
    RetailQuarter,
    RetailWeek,
    RetailYear,
)

__all__ = ["RetailCalendar", "RetailMonth", "RetailQuarter", "RetailWeek", "RetailYear"]

warnings.warn(
    "airflow_partitions.retail moved to airflow_partitions.grains.retail; import the grains from "
    "airflow_partitions. The old module will be removed in a later release.",
    DeprecationWarning,
    stacklevel=2,
)
