"""
Grain kinds by name: what a stored grain's ``kind`` field names.

A grain serializes as ``{"kind": "day", …}``; :meth:`~airflow_partitions.grains.grain.Grain.
deserialize` rebuilds it with the class this registry gives its kind. Every grain this package
ships is listed here, once, so that rebuilding a stored grain never depends on which modules a
process happened to import. A new grain kind is added here (and to the golden files).
"""

from __future__ import annotations

from airflow_partitions.grains.business import BusinessDay
from airflow_partitions.grains.clock import Day, Hour, IsoWeek, Minutes, Month, Quarter, Week, Year
from airflow_partitions.grains.cron import Cron
from airflow_partitions.grains.fiscal import FiscalMonth, FiscalQuarter, FiscalYear
from airflow_partitions.grains.grain import Grain
from airflow_partitions.grains.retail import RetailMonth, RetailQuarter, RetailWeek, RetailYear
from airflow_partitions.grains.sessions import TradingSession

#: ``kind`` → grain class, for every grain of this package.
GRAIN_KINDS: dict[str, type[Grain]] = {
    grain.kind: grain
    for grain in (
        Minutes,
        Hour,
        Day,
        Week,
        IsoWeek,
        Month,
        Quarter,
        Year,
        Cron,
        BusinessDay,
        FiscalYear,
        FiscalQuarter,
        FiscalMonth,
        RetailYear,
        RetailQuarter,
        RetailMonth,
        RetailWeek,
        TradingSession,
    )
}
