"""Task helpers: missing_upstream_keys and partition_period, in a task context as Airflow builds it."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from types import SimpleNamespace

import pytest
from airflow.sdk import Asset, PartitionedAssetTimetable

from airflow_partitions import (
    CompletionDeadline,
    missing_upstream_keys,
)
from airflow_partitions.task import partition_period, period_of
from airflow_partitions.tools import load_mapper
from tests.unit.test_deadlines import TWO_HOURS, day_of_hours, hours
from tests.unit.tools.test_explain import LOCAL_DAY, NEW_YORK, utc_hours_of_new_york_day


def task_context(asset, mapper, partition_key: str | None, received: list[str]) -> dict:
    """The parts of a task's context :func:`missing_upstream_keys` reads."""

    timetable = PartitionedAssetTimetable(assets=asset, partition_mapper_config={asset: mapper})
    return {
        "dag": SimpleNamespace(timetable=timetable),
        "dag_run": SimpleNamespace(partition_key=partition_key),
        "triggering_asset_events": {asset: [SimpleNamespace(partition_key=key) for key in received]},
    }


def test_missing_upstream_keys_compares_the_runs_events_with_the_rollups_window():

    hourly = Asset("hourly")
    context = task_context(
        hourly, day_of_hours(CompletionDeadline(TWO_HOURS)), "2026-03-10", sorted(hours("2026-03-10", (3,)))
    )
    assert missing_upstream_keys(context, hourly) == ["2026-03-10T03"]
    complete = task_context(hourly, day_of_hours(), "2026-03-10", sorted(hours("2026-03-10")))
    assert missing_upstream_keys(complete, hourly) == []


def test_missing_upstream_keys_refuses_a_run_that_is_not_a_rollups():
    from airflow.partition_mappers.identity import IdentityMapper

    hourly = Asset("hourly")
    with pytest.raises(ValueError, match="IdentityMapper"):
        missing_upstream_keys(task_context(hourly, IdentityMapper(), "2026-03-10", []), hourly)
    with pytest.raises(ValueError, match="partition key None"):
        missing_upstream_keys(task_context(hourly, day_of_hours(), None, []), hourly)


@pytest.mark.parametrize("lacking", ["dag_run", "dag", "triggering_asset_events"])
def test_a_context_without_what_the_helpers_read_is_a_value_error_naming_it(lacking):
    # def consume(dag_run=None, **context): Airflow passes dag_run as the parameter, not in context.
    hourly = Asset("hourly")
    context = task_context(hourly, day_of_hours(), "2026-03-10", [])
    del context[lacking]
    with pytest.raises(ValueError, match=f"missing_upstream_keys: the task's context has no '{lacking}'"):
        missing_upstream_keys(context, hourly)
    if lacking != "triggering_asset_events":
        with pytest.raises(ValueError, match=f"partition_period: the task's context has no '{lacking}'"):
            partition_period(context, hourly)


def test_missing_upstream_keys_works_with_airflows_own_sdk_rollup():
    # A Dag file's airflow.sdk RollupMapper is a definition without to_upstream.
    from airflow.sdk import DayWindow, RollupMapper, StartOfDayMapper

    hourly = Asset("hourly")
    rollup = RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())
    received = [f"2026-03-10T{h:02d}:00:00" for h in range(24) if h != 7]
    assert missing_upstream_keys(task_context(hourly, rollup, "2026-03-10", received), hourly) == [
        "2026-03-10T07:00:00"
    ]


def test_missing_upstream_keys_lists_every_key_when_no_event_came_from_the_asset():

    hourly, other = Asset("hourly"), Asset("other")
    context = task_context(hourly, day_of_hours(), "2026-03-10", [])
    context["triggering_asset_events"] = {other: []}
    assert missing_upstream_keys(context, hourly) == [f"2026-03-10T{h:02d}" for h in range(24)]


def test_missing_upstream_keys_refuses_an_asset_the_dag_is_not_scheduled_on():

    hourly = Asset("hourly")
    context = task_context(hourly, day_of_hours(), "2026-03-10", [])
    with pytest.raises(ValueError, match=r"'elsewhere'.* not among the assets"):
        missing_upstream_keys(context, Asset("elsewhere"))


def test_partition_period_of_a_running_rollup_gives_the_local_day_and_its_members():

    hourly = Asset("hourly")
    timetable = PartitionedAssetTimetable(assets=hourly, default_partition_mapper=load_mapper(LOCAL_DAY))
    context = {
        "dag": SimpleNamespace(timetable=timetable),
        "dag_run": SimpleNamespace(partition_key="2026-03-08"),
    }

    period = partition_period(context)

    assert period.key == "2026-03-08" and period.timezone == "America/New_York"
    assert period.start == datetime(2026, 3, 8, tzinfo=NEW_YORK)
    assert period.end == datetime(2026, 3, 9, tzinfo=NEW_YORK)
    assert period.end.astimezone(UTC) - period.start.astimezone(UTC) == timedelta(hours=23)
    assert list(period.members) == utc_hours_of_new_york_day(date(2026, 3, 8))


def test_period_of_a_core_mapper_has_a_start_only():
    period = period_of(load_mapper("StartOfMonthMapper()"), "2026-03")
    assert (period.start, period.end, period.members) == (datetime(2026, 3, 1, tzinfo=UTC), None, ())
