"""The state reader's assembly of a pending partition (no database): progress, state, deadline, time range."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from airflow_partitions import CompletionDeadline
from airflow_partitions.tools import RollupView, load_mapper
from airflow_partitions.tools.state import (
    AssetProgress,
    in_time_range,
    pending_partition,
    progress_of,
    time_part,
)
from tests.unit.tools.test_rollup_view import new_york_day, utc_hours_of_new_york_day

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def test_progress_of_a_plain_mapper_lists_only_what_was_received():
    assert progress_of("a", None, "eu", {"eu::x", "eu::y"}) == AssetProgress("a", ("eu::x", "eu::y"))


def test_progress_of_a_rollup_counts_members_and_names_the_keys_that_never_count():
    hours = utc_hours_of_new_york_day(date(2026, 11, 1))  # the 25-hour fall-back day
    assert len(hours) == 25
    received = {*hours[:24], "2026-11-03T12"}
    progress = progress_of("hourly", RollupView(new_york_day()), "2026-11-01", received)
    assert progress.expected == tuple(hours) and progress.missing == (hours[24],)
    assert progress.never_counting == (
        ("2026-11-03T12", "it counts towards other partitions, not '2026-11-01'"),
    )


def test_a_pending_partition_is_pending_until_a_deadline_lets_it_fire_and_never_counting_wins():
    rollup = RollupView(new_york_day(wait_policy=CompletionDeadline(timedelta(hours=2))))
    hours = utc_hours_of_new_york_day(date(2026, 3, 10))
    progress = (progress_of("hourly", rollup, "2026-03-10", set(hours[:20])),)
    # 2026-03-10 in New York ends at 2026-03-11T04:00Z; with one key enough, it fires at 06:00Z.
    before = pending_partition(
        "2026-03-10", progress, {"hourly": rollup}, now=datetime(2026, 3, 11, 5, tzinfo=UTC)
    )
    after = pending_partition(
        "2026-03-10", progress, {"hourly": rollup}, now=datetime(2026, 3, 11, 6, tzinfo=UTC)
    )
    assert (before.state, after.state) == ("pending", "past deadline")
    assert before.fires_at == after.fires_at == datetime(2026, 3, 11, 6, tzinfo=UTC)
    holding = (progress_of("hourly", rollup, "2026-03-10", {*hours[:20], "2026-03-12T01"}),)
    assert pending_partition("2026-03-10", holding, {"hourly": rollup}, now=NOW).state == "never counting"


def test_a_pending_partition_without_a_deadline_has_no_time_to_fire():
    core = RollupView(load_mapper("RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())"))
    progress = (progress_of("hourly", core, "2026-03-10", {"2026-03-10T00:00:00"}),)
    partition = pending_partition("2026-03-10", progress, {"hourly": core}, now=NOW, queue_position=501)
    assert (partition.state, partition.fires_at, partition.starved) == ("pending", None, True)


def test_the_time_range_selects_on_the_time_part_of_composite_keys():
    assert time_part("jfk|2026-04-15") == "2026-04-15" and time_part("2026-04-15") == "2026-04-15"
    assert in_time_range("jfk|2026-04-30T23", "2026-04-01", "2026-04")
    assert not in_time_range("jfk|2026-05-01", None, "2026-04")
    assert not in_time_range("2026-03-31", "2026-04-01", None)
