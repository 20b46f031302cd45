"""BusinessDayWindow: a month's business days, in Airflow's RollupMapper and FanOutMapper and in ours."""

from __future__ import annotations

import itertools
import json
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy
import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import FanOutMapper, StartOfDayMapper, StartOfMonthMapper
from airflow.partition_mappers.wait_policy import WaitForAll
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    BusinessDayWindow,
    Day,
    FiscalMonth,
    FiscalQuarter,
    Grain,
    Hour,
    IsoWeek,
    Month,
    Quarter,
    RetailWeek,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
)
from tests.unit.grains.test_business import ENGLAND, NEW_YORK_BUSINESS_DAYS, NYSE, US, US_NY
from tests.unit.support import run_python

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


def daily_into_monthly_rollup() -> TemporalRollupMapper:
    return TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow())


def test_rollup_maps_a_day_to_its_month():
    assert daily_into_monthly_rollup().to_downstream("2026-03-10") == "2026-03"


def test_rollup_waits_for_the_22_weekdays_of_march():
    assert daily_into_monthly_rollup().to_upstream("2026-03") == frozenset(MARCH_2026)


def test_rollup_waits_for_the_leap_day():
    assert daily_into_monthly_rollup().to_upstream("2028-02") == frozenset(FEBRUARY_2028)


def test_rollup_refuses_a_weekend_key_on_arrival_naming_it():
    with pytest.raises(ValueError, match=r"'2026-03-07'.*not a business day"):
        daily_into_monthly_rollup().to_downstream("2026-03-07")


@pytest.mark.parametrize("spelling", ["2026-03-10T00:00:00", "20260310", "2026-03-10T15:00Z"])
def test_rollup_counts_other_spellings_of_a_business_day_as_that_day(spelling):
    rollup = daily_into_monthly_rollup()
    assert rollup.to_downstream(spelling) == "2026-03"
    counted, never = rollup.count(rollup.to_upstream("2026-03"), [spelling, "2026-03-10"])
    assert (counted, never) == ({"2026-03-10"}, [])


def test_core_fan_out_writes_one_key_per_weekday_in_order():
    mapper = FanOutMapper(
        upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"),
        window=BusinessDayWindow(),
        downstream_mapper=StartOfDayMapper(),
    )
    assert list(mapper.to_downstream("2026-03")) == MARCH_2026


def test_airflows_rollup_takes_the_window_as_airflows_docs_pair_them_comparing_keys_by_spelling():
    # Airflow's docs ("Custom partition mappers, windows, and timetables in plugins") pair it with
    # StartOfMonthMapper in core's RollupMapper; a Dag file written from them parses (sdk and core).
    from airflow.sdk import RollupMapper as SdkRollupMapper
    from airflow.sdk import StartOfMonthMapper as SdkStartOfMonthMapper

    SdkRollupMapper(
        upstream_mapper=SdkStartOfMonthMapper(input_format="%Y-%m-%d"), window=BusinessDayWindow()
    )
    core = RollupMapper(
        upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=BusinessDayWindow()
    )
    assert core.to_downstream("2026-03-10") == "2026-03"
    assert sorted(core.to_upstream("2026-03")) == MARCH_2026  # the 22 weekdays, spelled %Y-%m-%d
    assert core.wait_policy.is_satisfied_by_keys(
        matched=set(MARCH_2026), expected=core.to_upstream("2026-03")
    )
    # Core compares spellings: a weekend key maps to the month (held, never counted), another
    # spelling of a weekday does not count for it.
    assert core.to_downstream("2026-03-07") == "2026-03" and "2026-03-07" not in core.to_upstream("2026-03")
    with pytest.raises(ValueError):  # core's strptime refuses a spelling its input_format does not read
        core.to_downstream("2026-03-10T00:00:00")


def test_airflows_rollup_with_the_window_survives_airflows_serialization():
    core = RollupMapper(
        upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=BusinessDayWindow()
    )
    rebuilt = decode_partition_mapper(encode_partition_mapper(core))
    assert (
        isinstance(rebuilt.window, BusinessDayWindow) and sorted(rebuilt.to_upstream("2026-03")) == MARCH_2026
    )


def test_rollup_survives_airflows_serialization():
    encoded = encode_partition_mapper(daily_into_monthly_rollup())
    scheduler_mapper = decode_partition_mapper(encoded)
    assert isinstance(scheduler_mapper, TemporalRollupMapper)
    assert scheduler_mapper.to_upstream("2026-03") == frozenset(MARCH_2026)
    assert scheduler_mapper.to_downstream("2026-03-10") == "2026-03"
    assert encode_partition_mapper(scheduler_mapper) == encoded


@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31)))
def test_a_day_is_awaited_by_its_months_rollup_exactly_when_it_is_a_weekday(day):
    rollup = daily_into_monthly_rollup()
    key = day.isoformat()
    month = f"{day.year:04d}-{day.month:02d}"
    assert (key in rollup.to_upstream(month)) == (day.weekday() < 5)
    if day.weekday() < 5:
        assert rollup.to_downstream(key) == month
    else:
        with pytest.raises(ValueError, match=f"'{key}' would never count towards '{month}'"):
            rollup.to_downstream(key)


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
        mapper.encode_upstream(m)
        for m in BusinessDayWindow().to_upstream(mapper.decode_downstream("2026-11-0400"))
    )
    assert (len(expected), expected[0], expected[-1]) == (21, "2026-11-02", "2026-11-30")


# -- roll and shift -----------------------------------------------------------------------------


# -- construction errors ------------------------------------------------------------------------


# -- serialization ------------------------------------------------------------------------------


# -- windows over business days ------------------------------------------------------------------

THANKSGIVING_WEEK = ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27"]


@pytest.mark.parametrize(
    ("mapper_grain", "key", "expected"),
    [
        (Week(), "2026-11-23", THANKSGIVING_WEEK),
        (IsoWeek(), "2026-W48", THANKSGIVING_WEEK),
        (Week(start="sunday"), "2026-11-22", THANKSGIVING_WEEK),
        (Month(), "2026-11", [
            "2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05", "2026-11-06",
            "2026-11-09", "2026-11-10", "2026-11-12", "2026-11-13",
            "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-20",
            "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27", "2026-11-30",
        ]),
        (Day(), "2026-11-26", []),
    ],
)  # fmt: skip
def test_window_waits_for_exactly_the_working_days(mapper_grain, key, expected):
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(mapper_grain), window=TemporalWindow(BusinessDay(US))
    )
    assert rollup.to_upstream(key) == frozenset(expected)
    members = TemporalWindow(BusinessDay(US)).to_upstream(TemporalMapper(mapper_grain).decode_downstream(key))
    assert [m.key for m in members] == expected


def test_quarter_window_holds_the_quarters_working_days():
    members = TemporalWindow(BusinessDay(ENGLAND)).to_upstream(
        TemporalMapper(Quarter()).decode_downstream("2026-Q2")
    )
    # April to June 2026: 22 + 21 + 22 weekdays, less Good Friday, Easter Monday, the early May and
    # the spring bank holidays.
    assert len(members) == 65 - 4
    assert {"2026-04-03", "2026-04-06", "2026-05-04", "2026-05-25"}.isdisjoint(m.key for m in members)
    assert (members[0].key, members[-1].key) == ("2026-04-01", "2026-06-30")


def test_fiscal_quarter_window_holds_its_working_days():
    quarter = TemporalMapper(FiscalQuarter(start_month=10)).decode_downstream("FY2027-Q1")
    members = TemporalWindow(BusinessDay(US)).to_upstream(quarter)
    # October to December 2026: 22 + 21 + 23 weekdays, less Columbus Day, Veterans Day,
    # Thanksgiving and Christmas.
    assert len(members) == 66 - 4
    assert (members[0].key, members[-1].key) == ("2026-10-01", "2026-12-31")


def test_fiscal_month_from_the_26th_waits_for_its_working_days():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(FiscalMonth(start_day=26)), window=TemporalWindow(BusinessDay(US))
    )
    # 26 November (Thanksgiving) to 25 December (Christmas) 2026, both holidays: refused on arrival.
    assert rollup.to_downstream("2026-11-27") == "2026-12"
    with pytest.raises(ValueError, match=r"'2026-11-26'.*not a business day"):
        rollup.to_downstream("2026-11-26")
    expected = sorted(rollup.to_upstream("2026-12"))
    assert (len(expected), expected[0], expected[-1]) == (20, "2026-11-27", "2026-12-24")


def test_retail_week_window_holds_its_working_days():
    week = TemporalMapper(RetailWeek()).decode_downstream("R2026-W43")
    assert [m.key for m in TemporalWindow(BusinessDay(US)).to_upstream(week)] == THANKSGIVING_WEEK


def test_a_week_with_a_holiday_fires_on_its_working_days_and_refuses_the_holidays_key():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Week()), window=TemporalWindow(BusinessDay(US))
    )
    assert {rollup.to_downstream(k) for k in THANKSGIVING_WEEK} == {"2026-11-23"}
    for closed in ("2026-11-26", "2026-11-28"):  # Thanksgiving, a Saturday
        with pytest.raises(ValueError, match=f"'{closed}' would never count towards '2026-11-23'"):
            rollup.to_downstream(closed)
    assert (
        WaitForAll()
        .is_satisfied_by_keys(matched=set(THANKSGIVING_WEEK), expected=rollup.to_upstream("2026-11-23"))
        .satisfied
    )


def test_rollup_of_a_business_days_hours_is_accepted_at_parse():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(NEW_YORK_BUSINESS_DAYS, input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    )
    hours = sorted(rollup.to_upstream("2026-11-25"))
    assert (len(hours), hours[0], hours[-1]) == (24, "2026-11-25T05", "2026-11-26T04")


def test_fan_out_of_a_month_to_its_business_days_with_the_default_mapper():
    fan_out = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(BusinessDay(US))
    )
    runs = list(fan_out.to_downstream("2026-11-15"))
    assert len(runs) == 19 and runs[:2] == ["2026-11-02", "2026-11-03"] and "2026-11-26" not in runs
    assert fan_out.to_partition_date("2026-11-27") == datetime(2026, 11, 27, tzinfo=UTC)


def test_rollup_over_business_days_survives_airflows_serialization():
    dag_file = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Week(timezone="America/New_York")),
        window=TemporalWindow(NEW_YORK_BUSINESS_DAYS),
    )
    encoded = encode_partition_mapper(dag_file)
    scheduler = decode_partition_mapper(json.loads(json.dumps(encoded)))
    assert scheduler.to_upstream("2026-11-23") == frozenset(THANKSGIVING_WEEK)
    # The fingerprint the scheduler compares every tick is this encoding: it must not move.
    assert encode_partition_mapper(scheduler) == encoded


# -- BusinessDayWindow with a calendar ------------------------------------------------------------


def test_business_day_window_with_a_calendar_skips_the_months_holidays():
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow(US))
    expected = rollup.to_upstream("2026-11")
    assert len(expected) == 19 and {"2026-11-11", "2026-11-26"}.isdisjoint(expected)
    assert rollup.to_upstream("2028-02") == frozenset(FEBRUARY_2028) - {"2028-02-21"}


def test_business_day_window_calendar_round_trips_and_monday_to_friday_keeps_the_old_form():
    assert BusinessDayWindow(BusinessCalendar()).serialize() == {"format_version": 1}
    window = BusinessDayWindow(NYSE)
    assert window.serialize() == {"calendar": NYSE.serialize(), "format_version": 1}
    rebuilt = BusinessDayWindow.deserialize(json.loads(json.dumps(window.serialize())))
    assert rebuilt.calendar == NYSE
    assert date(2026, 4, 3) not in [m.date() for m in rebuilt.to_upstream(datetime(2026, 4, 1))]
    # The form the first release stored reads back to Monday to Friday.
    assert BusinessDayWindow.deserialize({"format_version": 1}).calendar == BusinessCalendar()


def test_business_day_window_with_a_calendar_survives_airflows_serialization():
    dag_file = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(timezone="America/New_York")), window=BusinessDayWindow(US_NY)
    )
    encoded = encode_partition_mapper(dag_file)
    scheduler = decode_partition_mapper(encoded)
    assert scheduler.window.calendar == US_NY
    assert len(scheduler.to_upstream("2026-11")) == 18  # also Election Day, a New York holiday
    assert encode_partition_mapper(scheduler) == encoded


def test_business_day_window_refuses_a_calendar_that_is_not_one():
    with pytest.raises(ValueError, match="calendar must be a BusinessCalendar"):
        BusinessDayWindow("US")  # type: ignore[arg-type]


def test_temporal_fan_out_defaults_business_day_window_members_to_day_keys():
    fan_out = TemporalFanOutMapper(
        upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"), window=BusinessDayWindow(US)
    )
    runs = list(fan_out.to_downstream("2026-11"))
    assert len(runs) == 19 and runs[-1] == "2026-11-30"


# -- stored forms: round trips and byte-identical across processes --------------------------------


def business_instances() -> dict[str, Any]:
    """One configured instance of each business class, away from its defaults where it can be."""
    calendar = BusinessCalendar(
        weekmask=("sunday", "monday", "tuesday", "wednesday", "thursday"),
        country="GB",
        subdiv="ENG",
        market="NYSE",
        extra_holidays={"2026-12-31", "2026-12-24", "2027-01-02"},
        extra_workdays=frozenset({"2026-12-26", "2026-11-28"}),
    )
    grain = BusinessDay(calendar, roll="modifiedpreceding", start_hour=6, timezone="Europe/London")
    return {
        "BusinessCalendar": calendar,
        "BusinessDay": grain,
        "TemporalMapper": TemporalMapper(grain, offset=-1),
        "TemporalWindow": TemporalWindow(grain),
        "BusinessDayWindow": BusinessDayWindow(calendar),
    }


SERIALIZE_IN_CHILD = """
import json
from tests.unit.test_business import business_instances
print(json.dumps({name: json.dumps(obj.serialize()) for name, obj in business_instances().items()}))
"""


def test_stored_forms_are_byte_identical_across_processes_and_hash_seeds():
    in_process = {name: json.dumps(obj.serialize()) for name, obj in business_instances().items()}
    with ThreadPoolExecutor(max_workers=2) as pool:  # two interpreters importing Airflow at once
        outputs = list(pool.map(lambda seed: run_python(SERIALIZE_IN_CHILD, hashseed=seed), ["1", "987654"]))
    assert [json.loads(output) for output in outputs] == [in_process, in_process]


@pytest.mark.parametrize("name", sorted(business_instances()))
def test_stored_forms_round_trip(name):
    instance = business_instances()[name]
    data = json.loads(json.dumps(instance.serialize()))
    rebuilt = Grain.deserialize(data) if name == "BusinessDay" else type(instance).deserialize(data)
    assert json.dumps(rebuilt.serialize()) == json.dumps(instance.serialize())
    assert json.dumps(data, sort_keys=True) == json.dumps(data)
