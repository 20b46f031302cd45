"""
The api-server's watch (airflow_partitions.tools.watch) without a database: its schedule of actions
and what counts as a monitoring-only change. The actions themselves run against a real scheduler in
tests/integration/test_member_changes.py.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from airflow.serialization.encoders import encode_partition_mapper

from airflow_partitions import Day, Hour, TemporalMapper, TemporalRollupMapper, TemporalWindow
from airflow_partitions.lateness import ExpectedWithinMapper, expectation_changed_only
from airflow_partitions.mapping import as_core
from airflow_partitions.tools import watch

TWO_HOURS = timedelta(hours=2)


def fingerprint(mapper) -> dict:
    """A rollup fingerprint as Airflow's compute_rollup_fingerprint makes it: asset to encoded mapper."""
    return {"hours|hours": encode_partition_mapper(mapper)}


def day_of_hours(**kwargs) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), **kwargs
    )


@pytest.mark.parametrize(
    ("before", "after", "only"),
    [
        (day_of_hours(), day_of_hours(expected_within=TWO_HOURS), True),
        (
            day_of_hours(expected_within=timedelta(hours=2)),
            day_of_hours(expected_within=timedelta(hours=3)),
            True,
        ),
        (day_of_hours(expected_within=TWO_HOURS), day_of_hours(), True),
        (day_of_hours(), day_of_hours(), False),  # no change at all
        (day_of_hours(), day_of_hours(max_downstream_keys=3), False),  # routing, not monitoring
        (day_of_hours(), day_of_hours(expected_within=TWO_HOURS, max_upstream_keys=30), False),
    ],
)
def test_only_expected_within_is_a_monitoring_change(before, after, only):
    assert expectation_changed_only(fingerprint(before), fingerprint(after)) is only


def test_wrapping_a_core_mapper_in_expected_within_is_a_monitoring_change():
    from airflow.sdk import StartOfDayMapper

    core = as_core(StartOfDayMapper(), "partition_mapper")
    wrapped = ExpectedWithinMapper(core, expected_within=timedelta(hours=1))
    assert expectation_changed_only(fingerprint(core), fingerprint(wrapped))
    # Read back from the metadata database, as JSON, it is the same.
    stored = json.loads(json.dumps(fingerprint(core))), json.loads(json.dumps(fingerprint(wrapped)))
    assert expectation_changed_only(*stored)


def test_a_failed_action_is_logged_once_and_tried_again_until_it_succeeds(caplog):
    clock = [0.0]
    looking = watch.Watch(clock=lambda: clock[0])
    tries = []

    def flaky() -> None:
        tries.append(clock[0])
        if len(tries) < 3:
            raise RuntimeError("the database is down")

    looking._schedule(0, "re-route", "region_day", flaky)
    with caplog.at_level(logging.ERROR, logger=watch.__name__):
        for _ in range(5):
            looking.run_due()
            clock[0] += watch.WATCH_INTERVAL
    assert tries == [0.0, watch.WATCH_INTERVAL, 2 * watch.WATCH_INTERVAL]
    assert len(caplog.records) == 1 and "re-route of region_day" in caplog.records[0].getMessage()
    assert looking.due == []


def test_an_action_that_must_wait_is_tried_again_after_the_time_it_gives():
    clock = [0.0]
    looking = watch.Watch(clock=lambda: clock[0])
    tries = []

    def waiting() -> float | None:
        tries.append(clock[0])
        return 7.0 if len(tries) == 1 else None  # the scheduler has not cleared the old runs yet

    looking._schedule(watch.SETTLED, "requeue", "expect_day", waiting)
    looking.run_due()
    assert tries == []  # not due yet
    clock[0] = watch.SETTLED
    looking.run_due()
    clock[0] += 6.9
    looking.run_due()
    clock[0] += 0.1
    looking.run_due()
    assert tries == [watch.SETTLED, watch.SETTLED + 7.0] and looking.due == []
