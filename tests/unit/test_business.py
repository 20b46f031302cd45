from __future__ import annotations

import itertools
import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy
import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import FanOutMapper, StartOfDayMapper, StartOfMonthMapper
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import BusinessDayWindow

# Read off a calendar: 1 March 2026 is a Sunday, 31 March a Tuesday.
MARCH_2026 = [
    "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06",
    "2026-03-09", "2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13",
    "2026-03-16", "2026-03-17", "2026-03-18", "2026-03-19", "2026-03-20",
    "2026-03-23", "2026-03-24", "2026-03-25", "2026-03-26", "2026-03-27",
    "2026-03-30", "2026-03-31",
]  # fmt: skip

# 2028 is a leap year; 1 and 29 February 2028 are Tuesdays.
FEBRUARY_2028 = [
    "2028-02-01", "2028-02-02", "2028-02-03", "2028-02-04",
    "2028-02-07", "2028-02-08", "2028-02-09", "2028-02-10", "2028-02-11",
    "2028-02-14", "2028-02-15", "2028-02-16", "2028-02-17", "2028-02-18",
    "2028-02-21", "2028-02-22", "2028-02-23", "2028-02-24", "2028-02-25",
    "2028-02-28", "2028-02-29",
]  # fmt: skip

NEW_YORK = ZoneInfo("America/New_York")


def member_days(period_start: datetime) -> list[str]:
    return [member.date().isoformat() for member in BusinessDayWindow().to_upstream(period_start)]


def test_march_2026_members_are_its_22_weekdays():
    assert len(MARCH_2026) == 22
    assert member_days(datetime(2026, 3, 1)) == MARCH_2026


def test_february_2028_has_21_members_including_the_leap_day():
    assert len(FEBRUARY_2028) == 21
    assert member_days(datetime(2028, 2, 1)) == FEBRUARY_2028


def test_members_are_day_starts():
    assert all(
        (m.hour, m.minute, m.second, m.microsecond, m.tzinfo) == (0, 0, 0, 0, None)
        for m in BusinessDayWindow().to_upstream(datetime(2026, 3, 1))
    )


@pytest.mark.parametrize(
    "start",
    [
        datetime(2026, 3, 2),
        datetime(2026, 3, 31),
        datetime(2026, 3, 1, 6),
        datetime(2026, 3, 1, 0, 30),
        datetime(2026, 3, 1, 0, 0, 1),
        datetime(2026, 3, 1, 0, 0, 0, 1),
        datetime(2026, 3, 2, tzinfo=NEW_YORK),
    ],
)
def test_period_start_that_is_not_a_month_start_is_refused(start):
    with pytest.raises(ValueError, match=re.escape(start.isoformat())):
        list(BusinessDayWindow().to_upstream(start))


def test_serialized_form_is_versioned_and_round_trips():
    window = BusinessDayWindow()
    assert window.serialize() == {"format_version": 1}
    rebuilt = BusinessDayWindow.deserialize(window.serialize())
    assert isinstance(rebuilt, BusinessDayWindow)
    assert rebuilt.serialize() == {"format_version": 1}
    assert [m.date().isoformat() for m in rebuilt.to_upstream(datetime(2026, 3, 1))] == MARCH_2026


# -- composed with Airflow's own mappers ------------------------------------------------------


def daily_into_monthly_rollup() -> RollupMapper:
    return RollupMapper(
        upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"),
        window=BusinessDayWindow(),
    )


def test_core_rollup_maps_a_day_to_its_month():
    assert daily_into_monthly_rollup().to_downstream("2026-03-10") == "2026-03"


def test_core_rollup_waits_for_the_22_weekdays_of_march():
    assert daily_into_monthly_rollup().to_upstream("2026-03") == frozenset(MARCH_2026)


def test_core_rollup_waits_for_the_leap_day():
    assert daily_into_monthly_rollup().to_upstream("2028-02") == frozenset(FEBRUARY_2028)


def test_core_fan_out_writes_one_key_per_weekday_in_order():
    mapper = FanOutMapper(
        upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"),
        window=BusinessDayWindow(),
        downstream_mapper=StartOfDayMapper(),
    )
    assert list(mapper.to_downstream("2026-03")) == MARCH_2026


def test_sdk_rollup_survives_airflows_serialization():
    from airflow.sdk import RollupMapper as SdkRollupMapper
    from airflow.sdk import StartOfMonthMapper as SdkStartOfMonthMapper

    dag_file_mapper = SdkRollupMapper(
        upstream_mapper=SdkStartOfMonthMapper(input_format="%Y-%m-%d"),
        window=BusinessDayWindow(),
    )
    encoded = encode_partition_mapper(dag_file_mapper)
    scheduler_mapper = decode_partition_mapper(encoded)

    assert isinstance(scheduler_mapper, RollupMapper)
    assert isinstance(scheduler_mapper.window, BusinessDayWindow)
    assert scheduler_mapper.to_upstream("2026-03") == frozenset(MARCH_2026)
    assert scheduler_mapper.to_downstream("2026-03-10") == "2026-03"
    # The scheduler re-encodes what it decoded; the window's part must not change.
    assert encode_partition_mapper(scheduler_mapper) == encoded


@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31)))
def test_a_day_is_awaited_by_its_months_rollup_exactly_when_it_is_a_weekday(day):
    rollup = daily_into_monthly_rollup()
    key = day.isoformat()
    month = rollup.to_downstream(key)
    assert month == f"{day.year:04d}-{day.month:02d}"
    assert (key in rollup.to_upstream(month)) == (day.weekday() < 5)


# -- time zones -------------------------------------------------------------------------------


def test_local_month_members_are_local_midnights_across_the_dst_start():
    # US daylight saving time starts on Sunday 2026-03-08 at 02:00 local time.
    members = list(BusinessDayWindow().to_upstream(datetime(2026, 3, 1, tzinfo=NEW_YORK)))

    assert [m.date().isoformat() for m in members] == MARCH_2026
    for member in members:
        assert member.tzinfo is NEW_YORK
        assert (member.hour, member.minute) == (0, 0)
        expected = timedelta(hours=-5) if member.date() < date(2026, 3, 8) else timedelta(hours=-4)
        assert member.utcoffset() == expected, member
    friday, monday = members[4], members[5]
    assert (friday.day, monday.day) == (6, 9)
    # Three calendar days, one of them (Sunday 8 March) 23 hours long.
    assert monday.timestamp() - friday.timestamp() == 71 * 3600


# -- against an independent oracle ------------------------------------------------------------


@given(
    year=st.integers(min_value=1900, max_value=2200),
    month=st.integers(min_value=1, max_value=12),
    tz=st.sampled_from([None, ZoneInfo("UTC"), NEW_YORK, ZoneInfo("Australia/Lord_Howe")]),
)
def test_member_count_matches_numpy_busday_count(year, month, tz):
    first = date(year, month, 1)
    next_first = date(year + month // 12, month % 12 + 1, 1)
    members = list(BusinessDayWindow().to_upstream(datetime(year, month, 1, tzinfo=tz)))

    assert len(members) == numpy.busday_count(first, next_first)
    assert 20 <= len(members) <= 23
    days = [m.date() for m in members]
    assert all(a < b for a, b in itertools.pairwise(days))
    assert all(d.weekday() < 5 for d in days)
    assert all(first <= d < next_first for d in days)
    assert all(m.tzinfo is tz and (m.hour, m.minute) == (0, 0) for m in members)


@pytest.mark.parametrize("start", [date(2026, 3, 1), "2026-03", None])
def test_non_datetime_period_start_is_refused_naming_it(start):
    with pytest.raises(ValueError, match="expects the month's start as a datetime"):
        BusinessDayWindow().to_upstream(start)


def test_month_decoded_with_a_fixed_offset_waits_for_the_right_days_after_fall_back():
    # StartOfMonthMapper with '%z' decodes "2026-11-0400" to 2026-11-01 00:00-04:00 (EDT). After
    # the 2026-11-01 fall-back, New York is at -05:00: the expected keys must still be the
    # month's weekdays, 2026-11-02 (Monday) to 2026-11-30 (Monday), 21 of them.
    mapper = StartOfMonthMapper(timezone="America/New_York", input_format="%Y-%m-%d", output_format="%Y-%m%z")
    expected = sorted(
        RollupMapper(upstream_mapper=mapper, window=BusinessDayWindow()).to_upstream("2026-11-0400")
    )
    assert (len(expected), expected[0], expected[-1]) == (21, "2026-11-02", "2026-11-30")
