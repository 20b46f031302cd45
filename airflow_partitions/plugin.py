"""
The one Airflow plugin that registers every class this package ships.

Airflow finds it through the ``airflow.plugins`` entry point declared in ``pyproject.toml``;
nothing is copied into a plugins folder. It must be importable in every Airflow process
(scheduler, dag-processor and api-server): Airflow resolves our classes by qualname in each.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from airflow_partitions.business import BusinessDayWindow
from airflow_partitions.composite import (
    CompositeKeyMapper,
    DimensionFanOutMapper,
    DimensionRollupMapper,
    DimensionWindow,
)
from airflow_partitions.keyshape import LookupMapper, RegexMapper
from airflow_partitions.namespace import PrefixAddMapper, PrefixReplaceMapper, PrefixStripMapper
from airflow_partitions.temporal import (
    SlidingWindow,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)
from airflow_partitions.timetables import (
    ExplicitPartitionTimetable,
    GrainPartitionTimetable,
    IntervalRuntimePartitionTimetable,
    ScheduledRuntimePartitionTimetable,
)


class AirflowPartitionsPlugin(AirflowPlugin):
    """Register airflow-partitions' partition mappers, windows and timetables with Airflow."""

    name = "airflow_partitions"
    partition_mappers = [
        CompositeKeyMapper,
        DimensionFanOutMapper,
        DimensionRollupMapper,
        LookupMapper,
        PrefixAddMapper,
        PrefixReplaceMapper,
        PrefixStripMapper,
        RegexMapper,
        TemporalFanOutMapper,
        TemporalMapper,
        TemporalRollupMapper,
    ]
    windows = [BusinessDayWindow, DimensionWindow, SlidingWindow, TemporalWindow]
    timetables = [
        ExplicitPartitionTimetable,
        GrainPartitionTimetable,
        IntervalRuntimePartitionTimetable,
        ScheduledRuntimePartitionTimetable,
    ]
