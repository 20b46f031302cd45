"""
Partition mappers, rollup and fan-out windows and partitioned timetables for Apache Airflow 3.3+.

Every public class is importable from here (``from airflow_partitions import PrefixStripMapper``).
The classes are registered with Airflow by :mod:`airflow_partitions.plugin`, which Airflow finds
through the ``airflow.plugins`` entry point: ``pip install airflow-partitions`` is all a
deployment needs.

Imports are lazy: importing this package does not import Airflow. Airflow loads our provider
metadata (:mod:`airflow_partitions.provider_info`) while its own configuration is still
initialising, and an eager ``import airflow`` here would make that a circular import.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("airflow-partitions")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

# Public name -> defining module. The module path is part of the serialized Dag format
# (Airflow stores each class by qualname): a class listed here never changes module.
_EXPORTS: dict[str, str] = {
    "BusinessDayWindow": "airflow_partitions.business",
    # Business calendars and their grain: values nested in mappers and windows, not registered.
    "BusinessCalendar": "airflow_partitions.business",
    "BusinessDay": "airflow_partitions.business",
    "PrefixAddMapper": "airflow_partitions.namespace",
    "PrefixReplaceMapper": "airflow_partitions.namespace",
    "PrefixStripMapper": "airflow_partitions.namespace",
    "RegexMapper": "airflow_partitions.keyshape",
    "LookupMapper": "airflow_partitions.keyshape",
    "CompositeKeyMapper": "airflow_partitions.composite",
    "DimensionFanOutMapper": "airflow_partitions.composite",
    "DimensionRollupMapper": "airflow_partitions.composite",
    "DimensionWindow": "airflow_partitions.composite",
    "SlidingWindow": "airflow_partitions.temporal",
    # Completion deadlines: a wait policy nested in our rollups, and the task-side helper.
    "CompletionDeadline": "airflow_partitions.deadlines",
    "missing_upstream_keys": "airflow_partitions.deadlines",
    # Example keys of a runtime producer, for `airflow-partitions check` (Airflow never sees them).
    "example_keys": "airflow_partitions.inspect.samples",
    "ExplicitPartitionTimetable": "airflow_partitions.timetables",
    "GrainPartitionTimetable": "airflow_partitions.timetables",
    "IntervalRuntimePartitionTimetable": "airflow_partitions.timetables",
    "ScheduledRuntimePartitionTimetable": "airflow_partitions.timetables",
    "TemporalFanOutMapper": "airflow_partitions.temporal",
    "TemporalMapper": "airflow_partitions.temporal",
    "TemporalRollupMapper": "airflow_partitions.temporal",
    "TemporalWindow": "airflow_partitions.temporal",
    # Grains: values nested in the classes above, not registered with Airflow themselves.
    **{
        name: "airflow_partitions.grains"
        for name in (
            "Cron",
            "Day",
            "Grain",
            "Hour",
            "IsoWeek",
            "Minutes",
            "Month",
            "Period",
            "Quarter",
            "Week",
            "Year",
        )
    },
    # Fiscal and retail calendar grains (values too).
    **{name: "airflow_partitions.fiscal" for name in ("FiscalMonth", "FiscalQuarter", "FiscalYear")},
    **{
        name: "airflow_partitions.retail"
        for name in ("RetailMonth", "RetailQuarter", "RetailWeek", "RetailYear")
    },
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'airflow_partitions' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
