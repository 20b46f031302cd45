"""
The one Airflow plugin that registers every class this package ships, and the Partitions view.

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
from airflow_partitions.lateness import ExpectedWithinMapper
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


class _PartitionsApps:
    """
    ``fastapi_apps``, built on first read: only the api-server reads it.

    Every Airflow process (tasks too) imports this plugin; the view's FastAPI app imports the
    api-server's security modules (0.6 s), which nothing but the api-server needs. The first read
    also starts the api-server's watch (:mod:`airflow_partitions.tools.watch`) and its warmer
    (:mod:`airflow_partitions.tools.warming`).
    """

    def __get__(self, instance: object, owner: type | None = None) -> list[dict]:
        from airflow_partitions.tools import warming, watch
        from airflow_partitions.tools.ui.app import app, first_page

        watch.start()  # keys follow their members (docs/members.md), in the api-server only
        warming.start(first_page)  # large Dags read in the background after an install or upgrade
        return [{"app": app, "url_prefix": "/partitions", "name": "Partitions"}]


class AirflowPartitionsPlugin(AirflowPlugin):
    """Register airflow-partitions' partition mappers, windows and timetables with Airflow."""

    name = "airflow_partitions"
    partition_mappers = [
        CompositeKeyMapper,
        DimensionFanOutMapper,
        DimensionRollupMapper,
        ExpectedWithinMapper,
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
    # The Partitions view (docs/ui.md): its read-only API and page in the api-server, and an
    # entry in Airflow's navigation that shows the page inside Airflow's UI.
    fastapi_apps = _PartitionsApps()
    external_views = [
        {
            "name": "Partitions",
            "href": "/partitions/",
            "icon": "/partitions/static/icon.svg",
            "url_route": "partitions",
            "destination": "nav",
            "category": "browse",
        },
        # A "Partitions" tab on each Dag's page in Airflow's UI: Airflow replaces {DAG_ID}.
        {
            "name": "Partitions",
            "href": "/partitions/dags/{DAG_ID}",
            "icon": "/partitions/static/icon.svg",
            "url_route": "partitions-of-dag",
            "destination": "dag",
        },
    ]
