"""The state reader's pure parts (no database): progress, what a run ran with, states, buckets, refusals."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from airflow_partitions import (
    BusinessDay,
    CompletionDeadline,
    Month,
    OutsideCalendar,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)
from airflow_partitions.tools import RollupView, load_mapper
from airflow_partitions.tools.state import (
    STATES,
    AssetProgress,
    RanWith,
    Refusal,
    attention,
    bucket_label,
    bucket_length,
    in_time_range,
    pending_partition,
    progress_of,
    ran_with,
    time_part,
)
from tests.unit.tools.test_rollup_view import new_york_day, utc_hours_of_new_york_day

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def test_progress_of_a_plain_mapper_lists_only_what_was_received():
    assert progress_of("a", None, "eu", {"eu::x", "eu::y"}) == AssetProgress(
        "a", ("eu::x", "eu::y"), counted=1, received_total=2
    )


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


def test_a_run_that_fired_at_its_deadline_ran_with_what_it_had_and_lists_the_missing_hours():
    rollup = RollupView(new_york_day(wait_policy=CompletionDeadline(timedelta(hours=2))))
    hours = utc_hours_of_new_york_day(date(2026, 3, 10))  # 24 hours: 04Z to 03Z the next day
    received = set(hours[:10]) | set(hours[14:])  # 10 to 13 never came
    progress = (progress_of("hourly", rollup, "2026-03-10", received),)
    ran = ran_with(progress, {"hourly": rollup}, [("hourly", "hourly")])
    assert ran == RanWith(20, 24, ("2026-03-10T14", "2026-03-10T15", "2026-03-10T16", "2026-03-10T17"), 4)
    assert not ran.complete
    everything = (progress_of("hourly", rollup, "2026-03-10", set(hours)),)
    assert ran_with(everything, {"hourly": rollup}, [("hourly", "hourly")]) == RanWith(24, 24)


def test_what_a_run_ran_with_sums_its_assets_and_counts_a_silent_one_as_missing():
    rollup = RollupView(new_york_day())
    hours = utc_hours_of_new_york_day(date(2026, 3, 10))
    progress = (
        progress_of("hourly", rollup, "2026-03-10", set(hours)),
        progress_of("ref", None, "2026-03-10", {"x"}),
    )
    both = [("hourly", "hourly"), ("ref", "ref")]
    assert ran_with(progress, {"hourly": rollup, "ref": None}, both) == RanWith(25, 25)
    # The plain asset sent nothing: 24 of 25; the rollup asset sent nothing: its keys are not known.
    assert ran_with(progress[:1], {"hourly": rollup, "ref": None}, both) == RanWith(24, 25)


def test_a_pending_partition_past_its_period_without_a_deadline_is_overdue():
    rollup = RollupView(new_york_day())  # WaitForAll: it waits for its last hour however long
    hours = utc_hours_of_new_york_day(date(2026, 3, 10))
    progress = (progress_of("hourly", rollup, "2026-03-10", set(hours[:23])),)
    during = pending_partition(
        "2026-03-10", progress, {"hourly": rollup}, now=datetime(2026, 3, 11, 3, tzinfo=UTC)
    )
    after = pending_partition(
        "2026-03-10", progress, {"hourly": rollup}, now=datetime(2026, 3, 11, 4, tzinfo=UTC)
    )
    assert (during.state, after.state) == ("pending", "overdue")
    # Complete but not fired yet (the scheduler has not reached it): pending, not overdue.
    complete = (progress_of("hourly", rollup, "2026-03-10", set(hours)),)
    assert pending_partition("2026-03-10", complete, {"hourly": rollup}, now=NOW).state == "pending"


def test_states_rank_what_needs_attention_first():
    assert STATES[0] == "failed" and STATES[-1] == "success"
    assert attention("ran incomplete") < attention("pending") < attention("success")
    assert attention("upstream_failed") == attention("queued") + 1  # an unknown state: just before success


@pytest.mark.parametrize(
    ("first", "last", "length"),
    [
        ("2013-03-01", "2013-12-31", 7),  # months of days
        ("2013-03-01", "2013-03-31", 10),  # days of one month
        ("2013-03-10T00", "2013-03-10T23", 13),  # hours of one day
        ("2013-03-10T05:00", "2013-03-10T05:59", 13),  # minutes of one hour: still hours
        ("1990-01-01", "2013-12-31", 4),  # years over more than ten years
        ("FY2024-Q1", "FY2026-Q4", 7),  # fiscal quarters: by fiscal year
        ("2026-W01", "2026-W53", 8),  # ISO weeks of one year: each its own
        ("2026-W50", "2027-W02", 4),  # ISO weeks across years: by ISO year
        (None, None, 7),
    ],
)
def test_a_strip_buckets_by_month_day_hour_or_year_of_the_range(first, last, length):
    assert bucket_length(first, last) == length


@pytest.mark.parametrize(
    ("bucket", "label"),
    [
        ("2026-W5", "2026"),  # 7 characters of 2026-W50 to 2026-W53: their year, not a week
        ("2027-W0", "2027"),
        ("2026-W", "2026"),
        ("2026-03", "2026-03"),
        ("2026-Q1", "2026-Q1"),
        ("FY2026-", "FY2026-"),
        ("2026-W53", "2026-W53"),  # a whole week key names its week
    ],
)
def test_a_strip_cell_names_a_real_period(bucket, label):
    assert bucket_label(bucket) == label


def _audit_log_row(key: str, error: Exception) -> str:
    """An audit-log row's extra as Airflow 3.3 writes it (airflow/assets/manager.py), built here by hand."""
    return (
        f"Could not map partition_key '{key}' for asset (name='daily', uri='daily') in target Dag "
        "'monthly'. This likely indicates that the partition mapper in the target Dag is misconfigured "
        f"or does not support this partition key.\n{type(error).__name__}: {error}"
    )


def test_a_weekend_day_refused_by_a_business_day_month_is_an_expected_refusal_led_by_our_reason():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(BusinessDay())
    )
    with pytest.raises(OutsideCalendar) as saturday:  # 2026-03-07 was a Saturday
        rollup.to_downstream("2026-03-07")
    refusal = Refusal.read(NOW, _audit_log_row("2026-03-07", saturday.value))
    assert (refusal.partition_key, refusal.asset, refusal.dag_id) == ("2026-03-07", "daily", "monthly")
    assert refusal.expected and refusal.reason == str(saturday.value)
    assert "would never count towards '2026-03'" in refusal.reason
    with pytest.raises(ValueError) as garbage:
        rollup.to_downstream("2026-13-40")
    assert not isinstance(garbage.value, OutsideCalendar)
    mistake = Refusal.read(NOW, _audit_log_row("2026-13-40", garbage.value))
    assert not mistake.expected and mistake.reason == str(garbage.value)
    assert Refusal.read(NOW, "some other wording") == Refusal(
        NOW, "some other wording", reason="some other wording"
    )


def test_another_regions_store_refused_by_a_per_region_dag_is_a_key_for_another_member():
    from airflow_partitions import CompositeKeyMapper, Day, DimensionRollupMapper, DimensionWindow

    nsw = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}, output=["day"]),
        window=DimensionWindow(store=["store-001", "store-002"]),
    )
    with pytest.raises(ValueError) as vic_store:
        nsw.to_downstream("store-005|2026-04-05")
    refusal = Refusal.read(NOW, _audit_log_row("store-005|2026-04-05", vic_store.value))
    assert refusal.other_member and refusal.expected  # by design, not a mistake
    assert "dimension 'store' is 'store-005', not one of ['store-001', 'store-002']" in refusal.reason
    with pytest.raises(OutsideCalendar) as saturday:  # 2026-03-07 was a Saturday
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(BusinessDay())
        ).to_downstream("2026-03-07")
    assert not Refusal.read(NOW, _audit_log_row("2026-03-07", saturday.value)).other_member


def test_what_each_date_awaits_is_known_only_under_a_grain_with_days_off():
    from airflow_partitions import CompositeKeyMapper, Day, ExchangeCalendar, Hour, TradingSession
    from airflow_partitions.tools.state import awaited_by_date, has_period_on

    nyse = TradingSession(ExchangeCalendar("XNYS"))  # NYSE 2026: closed 26 Nov, 13:00 close on 27 Nov
    assert [has_period_on(nyse, f"2026-11-{d}") for d in (25, 26, 27, 28)] == [True, False, True, False]
    assert has_period_on(BusinessDay(), "2026-11-26") and not has_period_on(BusinessDay(), "2026-11-28")
    assert has_period_on(Day(), "2026-11-28")
    sessions = awaited_by_date(TemporalMapper(nyse))  # one key is enough: no list, but days off
    assert (sessions("2026-11-27"), sessions("2026-11-26")) == ((), None)
    hours = awaited_by_date(
        TemporalRollupMapper(upstream_mapper=TemporalMapper(BusinessDay()), window=TemporalWindow(Hour()))
    )
    assert len(hours("2026-11-27")) == 24 and hours("2026-11-28") is None
    assert awaited_by_date(TemporalMapper(Day())) is None  # every date has a period
    assert awaited_by_date(CompositeKeyMapper(["airport", "day"], {"day": TemporalMapper(nyse)})) is None


def test_bars_refused_by_a_session_rollup_are_expected_refusals_of_the_exchanges_calendar():
    from airflow_partitions import ExchangeCalendar, Minutes, TradingSession

    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(TradingSession(ExchangeCalendar("XNYS"))),
        window=TemporalWindow(Minutes(30, timezone="America/New_York")),
    )
    # NYSE 2026: closed on Thanksgiving (26 Nov); on 27 Nov it closes at 13:00 (18:00Z).
    for bar in ("2026-11-26T15:00Z", "2026-11-27T18:30Z"):
        with pytest.raises(OutsideCalendar) as refused:
            rollup.to_downstream(bar)
        refusal = Refusal.read(NOW, _audit_log_row(bar, refused.value))
        assert refusal.expected and "outside the trading sessions of XNYS" in refusal.reason
