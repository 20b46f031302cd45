"""
IncompleteRunNotifier: an Airflow notifier called for partitioned runs that ran without all their keys.

The context is built as Airflow builds a Dag callback's (the Dag, its run, the run's triggering
asset events); the notifier wrapped is a real ``BaseNotifier`` with a templated field, rendered
by Airflow's templating. End to end, with the SMTP notifier on a real scheduler:
tests/integration/test_monitoring.py.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from airflow.sdk import DAG, Asset, BaseNotifier, PartitionedAssetTimetable
from airflow.sdk.definitions.asset import AssetAll

from airflow_partitions import CompletionDeadline, IncompleteRunNotifier
from airflow_partitions.notifications import incomplete_run
from tests.unit.test_deadlines import TWO_HOURS, day_of_hours, hours

DAY = "2026-03-10"


class Recorder(BaseNotifier):
    """A notifier whose one templated field is rendered against the context, then kept."""

    template_fields = ("text",)

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.sent: list[str] = []

    def notify(self, context) -> None:
        self.sent.append(self.text)


def callback_context(schedule, mappers: dict, partition_key: str | None, received: dict) -> dict:
    """A Dag callback's context: the Dag (its timetable), its run, the run's triggering events."""
    timetable = PartitionedAssetTimetable(assets=schedule, partition_mapper_config=mappers)
    return {
        "dag": DAG("daily_sales", schedule=timetable),
        "dag_run": SimpleNamespace(partition_key=partition_key, run_id="asset_triggered__1"),
        "triggering_asset_events": {
            asset: [SimpleNamespace(partition_key=key) for key in keys] for asset, keys in received.items()
        },
    }


def test_a_run_fired_without_two_hours_calls_the_notifier_with_them():
    hourly = Asset("hourly")
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS))
    context = callback_context(hourly, {hourly: rollup}, DAY, {hourly: sorted(hours(DAY, (3, 17)))})
    recorder = Recorder(
        "{{ incomplete_run.partition_key }}: {{ incomplete_run.missing['hourly'] | join(' ') }}"
    )
    IncompleteRunNotifier(recorder)(context)
    # The wrapped notifier is rendered and called as a (shallow) copy: the Dag file's stays a
    # template, for the next run.
    assert recorder.sent == ["2026-03-10: 2026-03-10T03 2026-03-10T17"]
    assert recorder.text.startswith("{{ incomplete_run.partition_key }}")
    found = context["incomplete_run"]
    assert found.partition_key == DAY
    assert found.missing == {"hourly": ("2026-03-10T03", "2026-03-10T17")}
    assert found.ran_with_total == 22 and found.missing_total == 2
    assert str(found) == (
        "daily_sales 2026-03-10 ran with 22 of 24 keys; missing from hourly: 2026-03-10T03, 2026-03-10T17"
    )


def test_the_rendered_notifier_receives_the_partition_and_missing_keys():
    hourly = Asset("hourly")
    sent: list[str] = []

    class Kept(Recorder):
        def notify(self, context) -> None:
            sent.append(self.text)

    context = callback_context(
        hourly, {hourly: day_of_hours(CompletionDeadline(TWO_HOURS))}, DAY, {hourly: sorted(hours(DAY, (3,)))}
    )
    IncompleteRunNotifier(Kept("{{ incomplete_run.partition_key }} lacks {{ incomplete_run.missing }}"))(
        context
    )
    IncompleteRunNotifier(Kept("{{ dag.dag_id }} {{ incomplete_run.ran_with_total }}"))(context)
    assert sent == ["2026-03-10 lacks {'hourly': ('2026-03-10T03',)}", "daily_sales 23"]


def test_complete_manual_and_unpartitioned_runs_call_nothing():
    hourly = Asset("hourly")
    calls: list[object] = []
    notifier = IncompleteRunNotifier(calls.append)
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS))
    complete = callback_context(hourly, {hourly: rollup}, DAY, {hourly: sorted(hours(DAY))})
    manual = callback_context(hourly, {hourly: rollup}, DAY, {})  # triggered by hand: no events
    unpartitioned = callback_context(hourly, {hourly: rollup}, None, {hourly: ["2026-03-10T00"]})
    for context in (complete, manual, unpartitioned):
        notifier(context)
        assert incomplete_run(context) is None
    assert calls == []


def test_every_rollup_asset_of_the_schedule_is_read_and_only_those_missing_keys_are_listed():
    hourly, other = Asset("hourly"), Asset("other")
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS))
    context = callback_context(
        AssetAll(hourly, other),
        {hourly: rollup, other: rollup},
        DAY,
        {hourly: sorted(hours(DAY)), other: sorted(hours(DAY, (0, 1, 2)))},
    )
    found = incomplete_run(context)
    assert found.missing == {"other": ("2026-03-10T00", "2026-03-10T01", "2026-03-10T02")}
    assert {asset: len(keys) for asset, keys in found.ran_with.items()} == {"hourly": 24, "other": 21}


@pytest.mark.parametrize("notifier", [None, "mail me", 42])
def test_a_notifier_that_cannot_be_called_is_refused_at_parse(notifier):
    with pytest.raises(ValueError, match="IncompleteRunNotifier: notifier must be an Airflow notifier"):
        IncompleteRunNotifier(notifier)


def test_a_context_without_the_run_is_a_value_error_naming_it():
    hourly = Asset("hourly")
    context = callback_context(hourly, {hourly: day_of_hours()}, DAY, {hourly: []})
    del context["dag_run"]
    with pytest.raises(ValueError, match="IncompleteRunNotifier: the task's context has no 'dag_run'"):
        incomplete_run(context)
