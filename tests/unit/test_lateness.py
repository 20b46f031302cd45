"""
Lateness: ``expected_within`` on our rollups and ExpectedWithinMapper over Airflow's temporal mappers.

Expected times are worked out from calendars, not from the code under test: UTC midnights, the
2026 US and EU daylight-saving changes (8 March in New York, 29 March in Berlin), the New York
Stock Exchange's published 2026 holidays and early closes (nyse.com, "Holidays & Trading Hours"),
a fiscal month from the 26th and the NRF 4-5-4 calendar for 2026 (fiscal 2026 starts 2026-02-01).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pendulum
import pytest
from airflow.sdk import (
    MinimumCount,
    RollupMapper,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfQuarterMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
)
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    BusinessDayWindow,
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    ExchangeCalendar,
    ExpectedWithinMapper,
    FiscalMonth,
    Hour,
    Minutes,
    Month,
    RetailMonth,
    RetailWeek,
    SlidingWindow,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    TradingSession,
)
from airflow_partitions.lateness import late_at

NEW_YORK = "America/New_York"
TWO_HOURS = timedelta(hours=2)

#: The New York Stock Exchange's full-day closures in 2026 (nyse.com): New Year's Day, Martin Luther
#: King Jr. Day, Washington's Birthday, Good Friday, Memorial Day, Juneteenth, Independence Day
#: (observed on Friday 3 July), Labor Day, Thanksgiving, Christmas.
NYSE_HOLIDAYS_2026 = {
    date(2026, 1, 1),
    date(2026, 1, 19),
    date(2026, 2, 16),
    date(2026, 4, 3),
    date(2026, 5, 25),
    date(2026, 6, 19),
    date(2026, 7, 3),
    date(2026, 9, 7),
    date(2026, 11, 26),
    date(2026, 12, 25),
}
#: Its 2026 early closes, at 13:00 New York time: the day after Thanksgiving and Christmas Eve.
NYSE_EARLY_CLOSES_2026 = {date(2026, 11, 27), date(2026, 12, 24)}


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def local_midnight(day: date, zone: str) -> datetime:
    """The instant local midnight starts *day* in *zone*, in UTC (zoneinfo's, not our grains')."""
    return datetime.combine(day, time(), tzinfo=ZoneInfo(zone)).astimezone(UTC)


def hours_of_days(zone: str = "UTC", **options) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=zone)),
        window=TemporalWindow(Hour(timezone=zone)),
        **options,
    )


def nyse_days(**options) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(BusinessDay(BusinessCalendar(market="NYSE"), timezone=NEW_YORK)),
        window=TemporalWindow(Hour(timezone=NEW_YORK)),
        **options,
    )


def nyse_sessions(**options) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(TradingSession(ExchangeCalendar("XNYS"))),
        window=TemporalWindow(Minutes(30, timezone=NEW_YORK)),
        **options,
    )


# -- our rollups: late_at is the period's end in its calendar plus expected_within -------------


def test_a_utc_day_of_hours_is_late_two_hours_after_midnight():
    assert hours_of_days(expected_within=TWO_HOURS).late_at("2026-03-10") == utc(2026, 3, 11, 2)


def test_a_new_york_day_that_springs_forward_ends_at_its_own_midnight():
    # 2026-03-08 has 23 hours in New York; it ends at 2026-03-09T00:00-04:00, 04:00Z.
    assert hours_of_days(NEW_YORK, expected_within=TWO_HOURS).late_at("2026-03-08") == utc(2026, 3, 9, 6)


def test_late_at_is_none_without_expected_within():
    assert hours_of_days().late_at("2026-03-10") is None
    assert late_at(hours_of_days(), "2026-03-10") is None


def test_a_nyse_business_day_is_late_after_its_local_midnight_and_good_friday_never():
    rollup = nyse_days(expected_within=timedelta(hours=9))
    # Thursday 2026-04-02 ends at 2026-04-03T00:00-04:00 (04:00Z): late from 13:00Z.
    assert rollup.late_at("2026-04-02") == utc(2026, 4, 3, 13)
    # Good Friday, 2026-04-03, is not an NYSE trading day: no partition, never late.
    with pytest.raises(ValueError, match=r"2026-04-03.*not a business day"):
        rollup.late_at("2026-04-03")


def test_a_trading_session_is_late_after_its_close_an_early_close_included():
    rollup = nyse_sessions(expected_within=TWO_HOURS)
    # Regular close 16:00 EDT (20:00Z); the day after Thanksgiving closes at 13:00 EST (18:00Z).
    assert rollup.late_at("2026-04-02") == utc(2026, 4, 2, 22)
    assert rollup.late_at("2026-11-27") == utc(2026, 11, 27, 20)
    with pytest.raises(ValueError, match="2026-04-03 is not a session date"):
        rollup.late_at("2026-04-03")


def test_a_fiscal_month_is_late_after_its_last_day():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(FiscalMonth(start_day=26, timezone=NEW_YORK)),
        window=TemporalWindow(Day(timezone=NEW_YORK)),
        expected_within=timedelta(days=1),
    )
    # Fiscal month 2026-03 runs from 2026-02-26 to 2026-03-25; it ends at 2026-03-26T00:00-04:00.
    assert rollup.late_at("2026-03") == utc(2026, 3, 27, 4)


def test_a_retail_month_is_late_after_its_last_week():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(RetailMonth(timezone=NEW_YORK)),
        window=TemporalWindow(RetailWeek(timezone=NEW_YORK)),
        expected_within=timedelta(hours=6),
    )
    # NRF 2026: March (R2026-M02) is five weeks, 2026-03-01 to 2026-04-04; it ends 2026-04-05 local.
    assert rollup.late_at("R2026-M02") == utc(2026, 4, 5, 10)


def test_a_month_of_business_days_ends_at_the_month_end():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(timezone=NEW_YORK)),
        window=BusinessDayWindow(),
        expected_within=TWO_HOURS,
    )
    assert rollup.late_at("2026-03") == utc(2026, 4, 1, 6)


def test_a_t_minus_1_rollup_is_late_after_the_day_whose_keys_it_awaits():
    # offset=-1: the run for 2026-03-10 waits for the hours of 2026-03-11.
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(), offset=-1),
        window=TemporalWindow(Hour()),
        expected_within=TWO_HOURS,
    )
    assert rollup.late_at("2026-03-10") == utc(2026, 3, 12, 2)


def test_a_centred_sliding_window_is_late_after_its_last_member():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()),
        window=SlidingWindow(Day(), 3, align="centred"),
        expected_within=TWO_HOURS,
    )
    # The window of 2026-03-10 is 2026-03-09 to 2026-03-11: complete at 2026-03-12T00:00Z.
    assert rollup.late_at("2026-03-10") == utc(2026, 3, 12, 2)


def test_a_dimension_rollup_is_late_after_its_time_dimension_ends():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["region", "day"], {"day": TemporalMapper(Day(timezone="Europe/Berlin"))}
        ),
        window=DimensionWindow(day=TemporalWindow(Hour(timezone="Europe/Berlin"))),
        expected_within=TWO_HOURS,
    )
    # Berlin's 2026-03-29 springs forward: it ends at 2026-03-30T00:00+02:00, 2026-03-29T22:00Z.
    assert rollup.late_at("eu|2026-03-29") == utc(2026, 3, 30, 0)
    assert late_at(rollup, "eu|2026-03-28") == utc(2026, 3, 29, 1)


def test_a_dimension_rollup_without_a_time_dimension_refuses_expected_within():
    with pytest.raises(ValueError, match="expected_within needs a time dimension"):
        DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["region", "zone"], output=["region"]),
            window=DimensionWindow(zone=["west", "east"]),
            expected_within=TWO_HOURS,
        )


@pytest.mark.parametrize(
    "value", [timedelta(0), timedelta(hours=-1), 7200, 7200.0, "2h", True, timedelta(days=3661)]
)
@pytest.mark.parametrize("build", [hours_of_days, nyse_sessions], ids=["day rollup", "session rollup"])
def test_expected_within_must_be_a_positive_timedelta(build, value):
    with pytest.raises(ValueError, match=r"TemporalRollupMapper: expected_within must be a timedelta longer"):
        build(expected_within=value)


def test_expected_within_keeps_the_rest_of_the_stored_form_and_round_trips():
    plain = hours_of_days(wait_policy=CompletionDeadline(timedelta(hours=1)))
    expecting = hours_of_days(wait_policy=CompletionDeadline(timedelta(hours=1)), expected_within=TWO_HOURS)
    assert expecting.serialize() == {**plain.serialize(), "expected_within_seconds": 7200.0}
    rebuilt = TemporalRollupMapper.deserialize(expecting.serialize())
    assert rebuilt == expecting
    assert rebuilt.late_at("2026-03-10") == utc(2026, 3, 11, 2)
    assert expecting != plain


# -- properties ---------------------------------------------------------------------------------

DAYS_2026 = st.dates(date(2026, 1, 1), date(2026, 12, 31))
WITHIN = st.timedeltas(timedelta(seconds=1), timedelta(days=40))
ZONES = st.sampled_from(["UTC", NEW_YORK, "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu"])


@given(day=st.dates(date(1990, 1, 1), date(2090, 12, 31)), zone=ZONES, within=WITHIN)
def test_late_at_is_the_local_day_end_plus_expected_within(day, zone, within):
    rollup = hours_of_days(zone, expected_within=within)
    end = local_midnight(day + timedelta(days=1), zone)
    assert rollup.period_end(day.isoformat()) == end
    assert rollup.late_at(day.isoformat()) - end == within
    assert rollup.late_at(day.isoformat()).tzinfo is not None


@given(day=DAYS_2026, within=WITHIN)
def test_nyse_holidays_and_weekends_never_get_a_time_to_be_late(day, within):
    rollup = nyse_days(expected_within=within)
    if day.weekday() >= 5 or day in NYSE_HOLIDAYS_2026:
        with pytest.raises(ValueError, match="not a business day"):
            rollup.late_at(day.isoformat())
    else:
        assert rollup.late_at(day.isoformat()) == local_midnight(day + timedelta(days=1), NEW_YORK) + within


@given(day=DAYS_2026, within=WITHIN)
def test_nyse_sessions_are_late_after_their_published_close(day, within):
    rollup = nyse_sessions(expected_within=within)
    if day.weekday() >= 5 or day in NYSE_HOLIDAYS_2026:
        with pytest.raises(ValueError, match="not a session date"):
            rollup.late_at(day.isoformat())
        return
    close = time(13) if day in NYSE_EARLY_CLOSES_2026 else time(16)
    closes_at = datetime.combine(day, close, tzinfo=ZoneInfo(NEW_YORK)).astimezone(UTC)
    assert rollup.late_at(day.isoformat()) == closes_at + within


@given(day=st.dates(date(2000, 1, 1), date(2060, 12, 31)), zone=ZONES)
def test_the_end_read_from_the_key_is_the_end_a_completion_deadline_reads(day, zone):
    # period_end reads a non-sliding key alone; CompletionDeadline reads the listed members' ends.
    for rollup in (
        hours_of_days(zone),
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Month(timezone=zone)), window=BusinessDayWindow()
        ),
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(RetailMonth(timezone=zone)),
            window=TemporalWindow(RetailWeek(timezone=zone)),
        ),
    ):
        key = rollup.upstream_mapper.grain.floor(datetime.combine(day, time(12), tzinfo=UTC)).key
        assert rollup.period_end(key) == rollup.to_upstream(key).closes_at


# -- ExpectedWithinMapper: Airflow's temporal mappers with a time each partition is expected by ----


def test_expected_within_mapper_maps_exactly_as_the_core_mapper():
    core = StartOfDayMapper(timezone="Europe/Berlin")
    wrapped = ExpectedWithinMapper(core, expected_within=TWO_HOURS)
    working = wrapped.mapper  # the core class the scheduler runs (airflow.sdk's is a definition)
    for key in ("2026-03-10T09:00:00", "2026-03-29T01:30:00", "2026-10-25T02:30:00"):
        downstream = wrapped.to_downstream(key)
        assert downstream == working.to_downstream(key)
        assert wrapped.to_partition_date(downstream) == working.to_partition_date(downstream)
    assert wrapped.to_downstream("2026-03-10T09:00:00") == "2026-03-10"
    with pytest.raises(ValueError):
        wrapped.to_downstream("not a time")


@pytest.mark.parametrize(
    ("core", "key", "late"),
    [
        # Berlin's 2026-03-29 has 23 hours: 2026-03-28T23:00Z to 2026-03-29T22:00Z.
        (StartOfDayMapper(timezone="Europe/Berlin"), "2026-03-29", utc(2026, 3, 30, 0)),
        (StartOfDayMapper(), "2026-03-10", utc(2026, 3, 11, 2)),
        (StartOfHourMapper(timezone=NEW_YORK), "2026-03-10T09", utc(2026, 3, 10, 16)),
        # The ISO week of Monday 2026-03-09 ends at Monday 2026-03-16, 00:00 UTC.
        (StartOfWeekMapper(), "2026-03-09 (W11)", utc(2026, 3, 16, 2)),
        (StartOfMonthMapper(timezone=NEW_YORK), "2026-03", utc(2026, 4, 1, 6)),
        (StartOfQuarterMapper(), "2026-Q1", utc(2026, 4, 1, 2)),
        (StartOfYearMapper(timezone="Asia/Tokyo"), "2026", utc(2026, 12, 31, 17)),
    ],
    ids=["day, Berlin DST", "day", "hour", "ISO week", "month", "quarter", "year, Tokyo"],
)
def test_expected_within_mapper_is_late_after_the_period_end(core, key, late):
    assert ExpectedWithinMapper(core, expected_within=TWO_HOURS).late_at(key) == late


@given(day=st.dates(date(1990, 1, 1), date(2090, 12, 31)), zone=ZONES, within=WITHIN)
def test_expected_within_mapper_is_late_after_the_local_day(day, zone, within):
    wrapped = ExpectedWithinMapper(StartOfDayMapper(timezone=zone), expected_within=within)
    key = wrapped.to_downstream(f"{day.isoformat()}T12:00:00")
    assert wrapped.late_at(key) - within == local_midnight(day + timedelta(days=1), zone)


def test_expected_within_mapper_round_trips_through_airflows_serialization():
    from airflow.serialization.decoders import decode_partition_mapper
    from airflow.serialization.encoders import encode_partition_mapper

    wrapped = ExpectedWithinMapper(
        StartOfMonthMapper(timezone="Europe/Berlin"), expected_within=timedelta(days=3)
    )
    rebuilt = decode_partition_mapper(encode_partition_mapper(wrapped))
    assert type(rebuilt) is ExpectedWithinMapper
    assert rebuilt == wrapped
    assert rebuilt.late_at("2026-03") == utc(2026, 4, 3, 22)  # 2026-04-01T00:00+02:00 plus three days


def test_only_the_wrapper_changes_a_stored_form():
    from airflow.serialization.encoders import encode_partition_mapper

    core = StartOfDayMapper(timezone="Europe/Berlin")
    stored = ExpectedWithinMapper(core, expected_within=TWO_HOURS).serialize()
    assert stored["mapper"] == encode_partition_mapper(core)


@pytest.mark.parametrize(
    ("mapper", "message"),
    [
        (TemporalMapper(Day()), "one of Airflow's temporal mappers"),
        (
            RollupMapper(upstream_mapper=StartOfMonthMapper(), window=BusinessDayWindow()),
            "one of Airflow's temporal mappers",
        ),
        (StartOfDayMapper(timezone=pendulum.FixedTimezone(7200)), "IANA time zone name"),
        ("StartOfDayMapper", "one of Airflow's temporal mappers"),
    ],
    ids=["ours", "core rollup", "fixed offset", "a string"],
)
def test_expected_within_mapper_refuses_what_it_cannot_end_periods_of(mapper, message):
    with pytest.raises(ValueError, match=f"ExpectedWithinMapper: .*{message}"):
        ExpectedWithinMapper(mapper, expected_within=TWO_HOURS)


@pytest.mark.parametrize("value", [None, timedelta(0), timedelta(minutes=-5), 3600, MinimumCount(1)])
def test_expected_within_mapper_refuses_a_missing_or_non_positive_expectation(value):
    with pytest.raises(ValueError, match="ExpectedWithinMapper: expected_within must be a timedelta"):
        ExpectedWithinMapper(StartOfDayMapper(), expected_within=value)


def test_late_at_of_airflows_own_mapper_is_none():
    assert late_at(StartOfDayMapper(), "2026-03-10") is None
