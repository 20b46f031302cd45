"""RollupView, the one reader of a rollup: awaited, counted, missing, never counting and why, fires at."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from airflow_partitions import (
    CompletionDeadline,
    Day,
    Hour,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)
from airflow_partitions.tools import RollupView, load_mapper

NEW_YORK = ZoneInfo("America/New_York")


def utc_hours_of_new_york_day(day: date) -> list[str]:
    """The UTC hour keys of a New York local day, worked out with zoneinfo (not the package)."""
    start = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK).astimezone(UTC)
    following = day + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=NEW_YORK).astimezone(UTC)
    return [
        (start + timedelta(hours=h)).strftime("%Y-%m-%dT%H")
        for h in range((end - start) // timedelta(hours=1))
    ]


def new_york_day(**policy) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
        **policy,
    )


def test_a_mapper_that_is_no_rollup_has_no_view():
    assert RollupView.of(TemporalMapper(Day())) is None
    assert RollupView.of(load_mapper("StartOfDayMapper()")) is None


def test_ours_counts_every_spelling_of_a_member_once_and_lists_what_is_missing():
    hours = utc_hours_of_new_york_day(date(2026, 3, 8))  # the 23-hour spring-forward day
    assert len(hours) == 23
    received = [f"{hours[0]}:00:00Z", hours[0], f"{hours[1]}:00:00+00:00", *hours[3:]]
    progress = RollupView(new_york_day()).progress("2026-03-08", received)
    assert progress.awaited == tuple(hours)
    assert progress.counted == 22
    assert progress.missing == (hours[2],)
    assert progress.never_counting == ()
    assert progress.fires_at is None  # WaitForAll: no deadline


def test_airflows_rollup_counts_spellings_and_holds_another_spelling_without_counting_it():
    core = load_mapper(
        'RollupMapper(upstream_mapper=StartOfDayMapper(input_format="%Y-%m-%dT%H"), window=DayWindow())'
    )
    view = RollupView(core)
    assert not view.ours
    progress = view.progress("2026-03-10", ["2026-03-10T00", "2026-03-10T01:00:00"])
    assert progress.counted == 1 and len(progress.awaited) == 24
    why = "not one of the awaited keys (compared by spelling)"
    assert progress.never_counting == (("2026-03-10T01:00:00", why),)
    assert view.counts_as("2026-03-10T05") == ("2026-03-10T05",)


def test_a_key_of_another_day_never_counts_and_says_where_it_goes():
    view = RollupView(new_york_day())
    why = view.never_counts("2026-03-10T12", "2026-03-08")
    assert why == "it counts towards other partitions, not '2026-03-08'"
    assert view.never_counts("2026-03-08T12", "2026-03-08") is None


def test_a_deadline_fires_at_the_period_end_plus_grace_with_the_minimum_and_one_grace_later_below_it():
    view = RollupView(new_york_day(wait_policy=CompletionDeadline(timedelta(hours=2), min_count=20)))
    # New York's 2026-03-10 ends at 2026-03-11T04:00Z (EDT, UTC-4).
    wait = view.wait("2026-03-10")
    assert wait.closes_at == datetime(2026, 3, 11, 4, tzinfo=UTC)
    assert wait.needed == 20
    assert wait.fires_at == datetime(2026, 3, 11, 6, tzinfo=UTC)
    assert wait.fires_at_below_minimum == datetime(2026, 3, 11, 8, tzinfo=UTC)
    awaited = view.awaited("2026-03-10")
    assert view.fires_at(awaited, 19) == wait.fires_at_below_minimum
    assert view.fires_at(awaited, 20) == wait.fires_at


def test_awaited_of_a_key_the_rollup_does_not_write_is_the_mappers_error():
    with pytest.raises(ValueError, match="2026-13-01"):
        RollupView(new_york_day()).awaited("2026-13-01")


def test_a_deadline_over_one_grain_lets_a_runs_creation_time_prove_it_fired_complete():
    # A CompletionDeadline fires without all keys only from its period's end plus the grace.
    deadline = RollupView(new_york_day(wait_policy=CompletionDeadline(timedelta(hours=1))))
    assert deadline.may_fire_incomplete
    assert deadline.deadline == (Day(timezone="America/New_York"), timedelta(hours=1))
    waiting = RollupView(new_york_day())  # WaitForAll: every run fired complete, nothing to prove
    assert not waiting.may_fire_incomplete and waiting.deadline is None
    regions = load_mapper(
        "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['region', 'time'], {'time': "
        "TemporalMapper(Month(timezone='Europe/Berlin'))}), window=DimensionWindow(time=TemporalWindow(Day("
        "timezone='Europe/Berlin'))), wait_policy=CompletionDeadline(timedelta(days=2)))"
    )
    assert RollupView(regions).deadline == (
        Month(timezone="Europe/Berlin"),
        timedelta(days=2),
    )  # the time dimension's
    core = RollupView(
        load_mapper(
            "RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow(), "
            "wait_policy=MinimumCount(20))"
        )
    )
    assert core.may_fire_incomplete and core.deadline is None  # MinimumCount fires at any time


def test_the_shortest_and_typical_periods_of_a_grain_and_its_shorter_ones():
    from airflow_partitions.grains import shorter_periods, shortest_period, typical_period

    assert shortest_period(Day(timezone="America/New_York")) == timedelta(hours=23)
    assert shortest_period(Day()) == timedelta(hours=24)
    assert shortest_period(Month()) == timedelta(days=28)  # a common year's February
    assert shortest_period(Hour(timezone="Australia/Lord_Howe")) == timedelta(
        minutes=30
    )  # its DST is 30 minutes
    assert typical_period(Day(timezone="America/New_York")) == timedelta(hours=24)
    assert typical_period(Month()) == timedelta(days=31)
    # New York's 23-hour days of 2025 and 2026 (the US rules: the second Sunday of March, 05:00Z).
    new_york = Day(timezone="America/New_York")
    year_and_a_half = shorter_periods(
        new_york, datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 6, 30, tzinfo=UTC)
    )
    assert year_and_a_half == [datetime(2025, 3, 9, 5, tzinfo=UTC), datetime(2026, 3, 8, 5, tzinfo=UTC)]
    assert shorter_periods(Day(), datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)) == []
    months = shorter_periods(Month(), datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    assert [m.month for m in months] == [2, 4, 6, 9, 11]  # the months of fewer than 31 days
    lord_howe = Hour(timezone="Australia/Lord_Howe")  # half-hour slots at its changes: too many hours to walk
    assert (
        shorter_periods(lord_howe, datetime(2000, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)) is None
    )
