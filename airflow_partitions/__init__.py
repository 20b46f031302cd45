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

# Public name -> the module it is imported from. The Airflow classes' modules are part of the
# serialized Dag format (Airflow stores each class by qualname): such a class never changes module.
_EXPORTS: dict[str, str] = {
    # Airflow classes, registered by airflow_partitions.plugin (their module paths are stored forms).
    **dict.fromkeys(
        ["PrefixAddMapper", "PrefixReplaceMapper", "PrefixStripMapper"], "airflow_partitions.namespace"
    ),
    **dict.fromkeys(["LookupMapper", "RegexMapper"], "airflow_partitions.keyshape"),
    **dict.fromkeys(
        ["TemporalFanOutMapper", "TemporalMapper", "TemporalRollupMapper", "TemporalWindow", "SlidingWindow"],
        "airflow_partitions.temporal",
    ),
    **dict.fromkeys(
        ["CompositeKeyMapper", "DimensionFanOutMapper", "DimensionRollupMapper", "DimensionWindow"],
        "airflow_partitions.composite",
    ),
    "BusinessDayWindow": "airflow_partitions.business",
    # Airflow's temporal mappers with a time each partition is expected by (lateness).
    "ExpectedWithinMapper": "airflow_partitions.lateness",
    # A Dag callback calling any Airflow notifier for partitioned runs that ran incomplete.
    **dict.fromkeys(["IncompleteRun", "IncompleteRunNotifier"], "airflow_partitions.notifications"),
    **dict.fromkeys(
        [
            "ExplicitPartitionTimetable",
            "GrainPartitionTimetable",
            "IntervalRuntimePartitionTimetable",
            "ScheduledRuntimePartitionTimetable",
        ],
        "airflow_partitions.timetables",
    ),
    # A wait policy nested in our rollups (stored inside them), the task helpers, and the example keys
    # of a runtime producer for `airflow-partitions check` (Airflow never sees them).
    "CompletionDeadline": "airflow_partitions.deadlines",
    # The members a DimensionWindow lists, stored inside it: dated, or read from an Airflow Variable.
    **dict.fromkeys(["Member", "VariableMembers"], "airflow_partitions.members"),
    **dict.fromkeys(["missing_upstream_keys", "partition_period"], "airflow_partitions.task"),
    "example_keys": "airflow_partitions.examples",
    # Grains and calendars: pure values nested in the classes above (airflow_partitions.grains).
    **dict.fromkeys(
        [
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
        ],
        "airflow_partitions.grains",
    ),
}

__all__ = sorted(_EXPORTS)


def _version() -> str:
    """Return the installed distribution's version (``0.0.0`` from a source tree never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("airflow-partitions")
    except PackageNotFoundError:
        return "0.0.0"


def __getattr__(name: str) -> object:
    """Return a public name, imported from its module on first use; ``__version__`` read then too."""
    if name == "__version__":
        return _version()
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'airflow_partitions' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__, "__version__"])
