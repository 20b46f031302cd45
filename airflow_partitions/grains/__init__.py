"""
Time, pure: grains cut time into periods, each period with exactly one canonical partition key.

The bottom layer of airflow-partitions. Nothing here imports Airflow (a test imports this package
in a fresh interpreter and fails if ``airflow`` appears in ``sys.modules``): the Airflow classes
(mappers, windows, timetables) are thin views over these values.

A :class:`Grain` cuts the time line of an IANA time zone into :class:`Period` values, half-open
intervals ``[start, end)`` of aware instants. A mapper writes the key of the period that contains
an upstream key's instant, a window lists the periods of a finer grain inside a coarser period, an
offset shifts a period.

- :mod:`~airflow_partitions.grains.keys`: reading keys (ISO 8601 spellings, period keys, formats);
- :mod:`~airflow_partitions.grains.zones`: time zones, DST gaps and folds;
- :mod:`~airflow_partitions.grains.grain`: :class:`Period`, :class:`Grain`, wall-clock grains,
  and ``GRAIN_KINDS``: grain kinds by their stored name (each grain registers itself; importing
  any module of this package imports every grain first, here);
- :mod:`~airflow_partitions.grains.clock`, :mod:`~airflow_partitions.grains.cron`,
  :mod:`~airflow_partitions.grains.business`, :mod:`~airflow_partitions.grains.fiscal`,
  :mod:`~airflow_partitions.grains.retail`, :mod:`~airflow_partitions.grains.sessions`: the grains
  (trading sessions need the ``exchanges`` extra, imported when an ``ExchangeCalendar`` is built);
- :mod:`~airflow_partitions.grains.stored`: the versioned JSON every class writes.

Every grain is importable from here (``from airflow_partitions.grains import Day``) and from
``airflow_partitions``.
"""

from __future__ import annotations

from airflow_partitions.grains.business import BusinessCalendar, BusinessDay
from airflow_partitions.grains.clock import Day, Hour, IsoWeek, Minutes, Month, Quarter, Week, Year
from airflow_partitions.grains.cron import Cron
from airflow_partitions.grains.fiscal import FiscalMonth, FiscalQuarter, FiscalYear
from airflow_partitions.grains.grain import (
    Grain,
    Period,
    most_members,
    shorter_periods,
    shortest_period,
    typical_period,
)
from airflow_partitions.grains.keys import OtherMember, OutsideCalendar
from airflow_partitions.grains.retail import (
    RetailCalendar,
    RetailMonth,
    RetailQuarter,
    RetailWeek,
    RetailYear,
)
from airflow_partitions.grains.sessions import ExchangeCalendar, TradingSession

__all__ = [
    "BusinessCalendar",
    "BusinessDay",
    "Cron",
    "Day",
    "ExchangeCalendar",
    "FiscalMonth",
    "FiscalQuarter",
    "FiscalYear",
    "Grain",
    "Hour",
    "IsoWeek",
    "Minutes",
    "Month",
    "OtherMember",
    "OutsideCalendar",
    "Period",
    "Quarter",
    "RetailCalendar",
    "RetailMonth",
    "RetailQuarter",
    "RetailWeek",
    "RetailYear",
    "TradingSession",
    "Week",
    "Year",
    "most_members",
    "shorter_periods",
    "shortest_period",
    "typical_period",
]
