"""
Regression tests for keys read wrongly or accepted and failing later.

Every expected value here is worked out from the calendar by hand (noted next to it), not from
the package under test.
"""

from __future__ import annotations

import re
import warnings
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionFanOutMapper,
    DimensionWindow,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
)
from airflow_partitions.business import BusinessCalendar, BusinessDay
from airflow_partitions.grains.fiscal import FiscalQuarter
from airflow_partitions.grains.keys import read_key
from airflow_partitions.grains.retail import RetailWeek
from tests.unit.support import names_key

NEW_YORK = "America/New_York"
#: The 24 UTC hours of 2026-03-09, written out.
HOURS_OF_MARCH_9 = [f"2026-03-09T{hour:02d}" for hour in range(24)]


# -- offsets inside fan-outs -------------------------------------------------------------------


def test_a_fan_out_expands_the_period_its_offset_mapper_names():
    mapper = TemporalMapper(Day(), offset=-1)
    assert mapper.to_downstream("2026-03-10") == "2026-03-09"
    fan = TemporalFanOutMapper(upstream_mapper=mapper, window=TemporalWindow(Hour()))
    assert list(fan.to_downstream("2026-03-10")) == HOURS_OF_MARCH_9


def test_a_fan_out_with_a_forward_offset_expands_the_later_period():
    # Days of March 2026 (31) for the month after February.
    fan = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Month(), offset=1), window=TemporalWindow(Day())
    )
    assert list(fan.to_downstream("2026-02-14")) == [f"2026-03-{day:02d}" for day in range(1, 32)]


def test_a_dimension_fan_out_expands_the_period_its_offset_mapper_names():
    fan = DimensionFanOutMapper(
        upstream_mapper=CompositeKeyMapper(["region", "day"], {"day": TemporalMapper(Day(), offset=-1)}),
        window=DimensionWindow(day=TemporalWindow(Hour())),
    )
    assert list(fan.to_downstream("eu|2026-03-10")) == [f"eu|{hour}" for hour in HOURS_OF_MARCH_9]


def test_a_rollup_with_an_offset_still_waits_for_the_period_before_the_shift():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(), offset=-1), window=TemporalWindow(Hour())
    )
    # 2026-03-10's hours are mapped to the downstream key 2026-03-09 (T-1) ...
    assert rollup.to_downstream("2026-03-10T05") == "2026-03-09"
    # ... so 2026-03-09 waits for the hours of 2026-03-10.
    awaited = [
        rollup.upstream_mapper.encode_upstream(p)
        for p in rollup.window.to_upstream(rollup.upstream_mapper.decode_downstream("2026-03-09"))
    ]
    assert awaited == [f"2026-03-10T{hour:02d}" for hour in range(24)]


# -- date-only keys name the grain's own calendar ----------------------------------------------


@pytest.mark.parametrize(
    ("grain", "key", "period"),
    [
        (Day(timezone=NEW_YORK), "2026-03-10", "2026-03-10"),
        (Day(timezone=NEW_YORK), "20260310", "2026-03-10"),
        (Week(timezone=NEW_YORK), "2026-03-09", "2026-03-09"),  # a Monday
        (Week(timezone=NEW_YORK), "2026-W11", "2026-03-09"),  # ISO week 11 starts Monday 2026-03-09
        (Month(timezone=NEW_YORK), "2026-03", "2026-03"),
        # The day after Thanksgiving (Thursday 2026-11-26) is a US business day.
        (BusinessDay(BusinessCalendar(country="US"), timezone=NEW_YORK), "2026-11-27", "2026-11-27"),
    ],
)
def test_a_date_key_names_the_grains_own_period_whatever_the_input_timezone(grain, key, period):
    for input_timezone in (None, "UTC", "Asia/Tokyo"):
        assert TemporalMapper(grain, input_timezone=input_timezone).to_downstream(key) == period


def test_a_key_with_a_time_of_day_is_still_read_in_the_input_timezone():
    # 02:00 UTC on 2026-03-10 is 21:00 EST on 2026-03-09.
    mapper = TemporalMapper(Day(timezone=NEW_YORK), input_timezone="UTC")
    assert mapper.to_downstream("2026-03-10T02:00") == "2026-03-09"
    assert mapper.to_downstream("2026-03-10T05:00") == "2026-03-10"  # 00:00 EST
    # 2026-W10 starts Monday 2026-03-02; 02:00 UTC that day is 21:00 EST on Sunday 2026-03-01.
    assert mapper.to_downstream("2026W10T02") == "2026-03-01"
    assert mapper.to_downstream("2026W101T02") == "2026-03-01"


def test_a_date_only_input_format_names_the_grains_own_day():
    mapper = TemporalMapper(Day(timezone=NEW_YORK), input_timezone="UTC", input_format="%d.%m.%Y")
    assert mapper.to_downstream("10.03.2026") == "2026-03-10"


@pytest.mark.parametrize("key", ["2026-W10-3", "2026W103", "2026-03-04", "20260304"])
def test_every_date_only_spelling_names_its_own_day_under_a_day_start(key):
    # ISO 2026-W01 starts Monday 2025-12-29 (1 January 2026 is a Thursday); W10 starts 63 days
    # later, Monday 2026-03-02; its third day is Wednesday 2026-03-04.
    assert TemporalMapper(Day(start_hour=6)).to_downstream(key) == "2026-03-04"


def test_a_date_only_strptime_key_names_its_own_day_under_a_day_start():
    assert TemporalMapper(Day(start_hour=6), input_format="%Y%m%d").to_downstream("20260304") == "2026-03-04"


def test_a_time_on_a_date_still_falls_in_the_operations_day_before_its_start():
    # 05:59 is before the 06:00 start: the operations day of 2026-03-03.
    assert TemporalMapper(Day(start_hour=6)).to_downstream("2026-03-04T05:59") == "2026-03-03"


# -- keys that could not be evaluated later ----------------------------------------------------


def utc_hours_to_new_york_days() -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    )


@pytest.mark.parametrize(
    "key", ["9999-12-31T23:00:00+00:00", "9999-12-31", "9998-06-01T00", "0001-01-01", "0002-12-31T23"]
)
def test_a_key_too_close_to_the_ends_of_the_calendar_is_refused_at_mapping(key):
    with pytest.raises(ValueError, match=names_key(key) + r".*years 0003 to 9997"):
        utc_hours_to_new_york_days().to_downstream(key)


def test_a_key_of_a_day_awaiting_hours_past_the_supported_range_is_refused_at_mapping():
    # New York's 9997-12-31 ends at 9998-01-01T05Z: its last five UTC hours are keys of 9998,
    # refused on arrival, so the day could never complete and no key may open it.
    with pytest.raises(ValueError, match=names_key("9997-12-31T23") + r".*awaits '9998-01-01T00'"):
        utc_hours_to_new_york_days().to_downstream("9997-12-31T23")


@pytest.mark.parametrize(
    ("rollup", "key", "day"),
    [
        # 9997-12-30T23Z is 18:00 EST on 9997-12-30, whose hours end at 9997-12-31T04Z.
        (utc_hours_to_new_york_days(), "9997-12-30T23", "9997-12-30"),
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())),
            "0003-01-01T00",
            "0003-01-01",
        ),
    ],
)
def test_a_key_inside_the_supported_range_can_be_evaluated(rollup, key, day):
    assert rollup.to_downstream(key) == day
    assert len(rollup.window.to_upstream(rollup.upstream_mapper.decode_downstream(day))) == 24


@pytest.mark.parametrize(
    "key",
    [
        "\uff12\uff10\uff11\uff13-01-20T07:00:00+00:00",  # fullwidth digits
        "\u0662\u0660\u0662\u0666-03-10",  # Arabic-Indic digits
        "\u0662\u0660\u0662\u0666-03",
    ],
)
def test_digits_outside_ascii_are_refused_naming_the_key(key):
    with pytest.raises(ValueError, match=names_key(key) + r".*only ASCII digits"):
        TemporalMapper(Day()).to_downstream(key)


@pytest.mark.parametrize(
    ("key", "year", "weeks"),
    [
        # 2021 began on a Friday and was no leap year: its 28 December, a Tuesday, is in week 52.
        ("2021-W53", 2021, 52),
        ("2021W53", 2021, 52),
        ("2021-W53-1", 2021, 52),
        # 2026 begins on a Thursday: 53 weeks (its 28 December, a Monday, starts week 53).
        ("2026-W54", 2026, 53),
        ("2026-W00", 2026, 53),
    ],
)
def test_a_week_the_year_does_not_have_is_refused_saying_how_many_weeks_it_has(key, year, weeks):
    with pytest.raises(ValueError) as refused:
        IsoWeek().parse(key)
    assert str(refused.value) == (
        f"partition key {key!r} names no week: {year} has {weeks} ISO weeks ({year}-W01 … {year}-W{weeks})."
    )


def test_digits_outside_ascii_are_refused_under_an_input_format():
    key = "\u0662\u0660\u0662\u0666\u0660\u0663\u0661\u0660"  # 20260310 in Arabic-Indic digits
    with pytest.raises(ValueError, match=names_key(key) + r".*only ASCII digits"):
        TemporalMapper(Day(), input_format="%Y%m%d").to_downstream(key)


# -- RFC 3339 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["2026-03-10T09:15:00z", "2026-03-10t09:15:00z", "2026-03-10T09:15:00Z"])
def test_lowercase_z_and_t_are_read_as_rfc_3339_allows(key):
    assert TemporalMapper(Hour(timezone=NEW_YORK)).to_downstream(key) == "2026-03-10T05-04:00"


# -- ISO 8601 decimal fractions of the hour and the minute -------------------------------------


@pytest.mark.parametrize(
    ("key", "minute"),
    [
        ("2026-04-01T04.5", "2026-04-01T04:30"),  # half an hour past 04
        ("2026-04-01T04,5", "2026-04-01T04:30"),  # ISO's decimal comma
        ("2026-04-01T04.25Z", "2026-04-01T04:15"),
        ("2026-04-01T04:30.5", "2026-04-01T04:30"),  # 04:30:30
        ("2026-04-01T04:59.99", "2026-04-01T04:59"),  # 04:59:59.4
        ("20260401T0459,99Z", "2026-04-01T04:59"),  # the same, basic format
        ("2026-04-01T04.999+02:00", "2026-04-01T02:59"),  # 04:59:56.4+02:00 is 02:59:56.4Z
        ("2026-04-01T23.99Z", "2026-04-01T23:59"),  # 23:59:24, still the 1st
        ("2026-04-01T04:30:15.5Z", "2026-04-01T04:30"),  # a fraction of the second, as before
    ],
)
def test_a_decimal_fraction_of_the_hour_or_minute_is_read_as_iso_8601_does(key, minute):
    assert TemporalMapper(Minutes(1)).to_downstream(key) == minute


@settings(max_examples=300)
@given(
    hour=st.integers(0, 23),
    nine_seconds=st.integers(0, 399),
    minute=st.integers(0, 59),
    three=st.integers(0, 19),
)
def test_an_exact_decimal_fraction_names_the_same_instant_as_the_full_spelling(
    hour, nine_seconds, minute, three
):
    # s seconds are s / 3600 of an hour: four decimals exactly when s is a multiple of 9
    # (3600 = 9 x 400); s / 60 of a minute, when s is a multiple of 3.
    seconds = 9 * nine_seconds
    day = datetime(2026, 4, 1, hour)
    assert read_key(f"2026-04-01T{hour:02d}.{seconds * 10_000 // 3600:04d}") == day + timedelta(
        seconds=seconds
    )
    seconds = 3 * three
    of_minute = f"2026-04-01T{hour:02d}:{minute:02d},{seconds * 10_000 // 60:04d}Z"
    assert read_key(of_minute) == day.replace(minute=minute, second=seconds, tzinfo=UTC)


# -- one clear error ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: Day(timezone="Mars/Olympus_Mons"),
        lambda: Day(timezone="../etc/passwd"),
        lambda: BusinessDay(BusinessCalendar(), timezone="Mars/Olympus_Mons"),
        lambda: FiscalQuarter(start_month=7, timezone="Mars/Olympus_Mons"),
        lambda: RetailWeek(timezone="Mars/Olympus_Mons"),
        lambda: TemporalMapper(Day(), input_timezone="Mars/Olympus_Mons"),
        lambda: BusinessCalendar(country="XX"),
        lambda: BusinessCalendar(extra_holidays=["2026-13-01"]),
    ],
)
def test_time_zone_and_calendar_errors_are_one_value_error_without_a_chained_traceback(build):
    with pytest.raises(ValueError) as caught:
        build()
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None or caught.value.__suppress_context__


# -- fixed-offset legacy zone names ------------------------------------------------------------


@pytest.mark.parametrize(
    ("grain", "zone", "region"),
    [
        (Day, "EST", "America/New_York"),
        (Month, "MST", "America/Denver"),
        (Hour, "HST", "Pacific/Honolulu"),
        (Week, "Etc/GMT+5", "America/New_York"),
    ],
)
def test_a_fixed_offset_legacy_zone_warns_suggesting_a_region_and_is_still_built(grain, zone, region):
    with pytest.warns(UserWarning, match=rf"{re.escape(repr(zone))} is a fixed UTC offset.*'{region}'"):
        built = grain(timezone=zone)
    assert built.timezone == zone


@pytest.mark.parametrize("zone", ["UTC", "Etc/UTC", "Etc/GMT", "Etc/GMT+0", "America/New_York", "EST5EDT"])
def test_a_region_or_utc_zone_builds_without_a_warning(zone):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Day(timezone=zone)


# -- naive input formats that cannot name every hour -------------------------------------------


def test_a_naive_hourly_format_under_new_york_hours_reads_the_repeated_hour_as_its_first_occurrence():
    # Accepted (it was refused until 0.1): a naive key means local wall-clock time; the mapper
    # maps 01:00 of the fall-back night to its first occurrence, 01:00 EDT (05:00 UTC).
    mapper = TemporalMapper(Hour(timezone=NEW_YORK), input_format="%Y-%m-%dT%H")
    assert mapper.to_downstream("2026-11-01T01") == "2026-11-01T01-04:00"
    assert mapper.occurrence_keys("2026-11-01T01") == ["2026-11-01T01-04:00", "2026-11-01T01-05:00"]
    assert mapper.to_downstream("2026-11-01T02") == "2026-11-01T02-05:00"


def test_a_rollup_writing_new_york_hours_in_a_naive_format_completes_on_the_24_keys_a_local_loop_sends():
    # The 25 hours of 2026-11-01 are written in the naive format as 24 keys: both 01:00 hours are
    # "2026-11-01T01", which counts for both. Worked out with zoneinfo: 25 distinct UTC hours.
    start = datetime(2026, 11, 1, tzinfo=ZoneInfo(NEW_YORK)).astimezone(UTC)
    end = datetime(2026, 11, 2, tzinfo=ZoneInfo(NEW_YORK)).astimezone(UTC)
    assert (end - start) // timedelta(hours=1) == 25
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK), input_format="%Y-%m-%dT%H"),
        window=TemporalWindow(Hour(timezone=NEW_YORK)),
    )
    loop = [f"2026-11-01T{hour:02d}" for hour in range(24)]
    expected = rollup.to_upstream("2026-11-01")
    assert expected == frozenset(loop)
    assert rollup.counts_as("2026-11-01T01") == ("2026-11-01T01",)
    assert rollup.wait_policy.is_satisfied_by_keys(matched=set(loop), expected=expected).satisfied
    assert not rollup.wait_policy.is_satisfied_by_keys(
        matched=set(loop) - {"2026-11-01T01"}, expected=expected
    ).satisfied


def test_naive_local_hours_without_a_format_count_the_repeated_hour_twice_and_complete_the_25_hour_day():
    berlin = "Europe/Berlin"
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=berlin)), window=TemporalWindow(Hour(timezone=berlin))
    )
    loop = [f"2026-10-25T{hour:02d}" for hour in range(24)]  # a producer looping over local hours
    expected = rollup.to_upstream("2026-10-25")
    assert len(expected) == 25  # 02:00 CEST and 02:00 CET (zoneinfo: the day is 25 hours)
    assert rollup.counts_as("2026-10-25T02") == ("2026-10-25T02+02:00", "2026-10-25T02+01:00")
    counted, never = rollup.count(expected, loop)
    assert counted == expected and never == []
    assert [rollup.to_downstream(key) for key in loop] == ["2026-10-25"] * 24
    # Spring forward: 2026-03-29 has 23 hours; the skipped 02:00 counts as 03:00 CEST, as its T03.
    spring = [f"2026-03-29T{hour:02d}" for hour in range(24)]
    assert rollup.counts_as("2026-03-29T02") == rollup.counts_as("2026-03-29T03") == ("2026-03-29T03+02:00",)
    assert rollup.count(rollup.to_upstream("2026-03-29"), spring) == (
        set(rollup.to_upstream("2026-03-29")),
        [],
    )


def test_a_naive_quarter_hour_on_the_repeated_hour_is_routed_to_both_hours_and_counts_in_each():
    berlin = "Europe/Berlin"
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Hour(timezone=berlin)),
        window=TemporalWindow(Minutes(15, timezone=berlin)),
    )
    assert rollup.to_downstream("2026-10-25T02:15") == ["2026-10-25T02+02:00", "2026-10-25T02+01:00"]
    assert rollup.to_downstream("2026-10-25T01:15") == "2026-10-25T01+02:00"
    for hour in ("2026-10-25T02+02:00", "2026-10-25T02+01:00"):
        assert (
            rollup.missing_keys(
                hour, ["2026-10-25T02:00", "2026-10-25T02:15", "2026-10-25T02:30", "2026-10-25T02:45"]
            )
            == []
        )


def test_an_offset_bearing_format_names_all_25_hours_of_the_fall_back_day():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK), input_format="%Y-%m-%dT%H%z"),
        window=TemporalWindow(Hour(timezone=NEW_YORK)),
    )
    members = rollup.window.to_upstream(rollup.upstream_mapper.decode_downstream("2026-11-01"))
    keys = {rollup.upstream_mapper.encode_upstream(m) for m in members}
    assert len(keys) == 25  # 00 and 01 EDT, 01 to 23 EST
    assert {"2026-11-01T01-0400", "2026-11-01T01-0500"} <= keys


@pytest.mark.parametrize(
    ("grain", "input_format"),
    [
        (Hour(), "%Y-%m-%dT%H"),
        (Hour(timezone="Asia/Tokyo"), "%Y-%m-%dT%H"),
        (Day(timezone=NEW_YORK), "%Y%m%d"),
        (Hour(timezone=NEW_YORK), "%Y-%m-%d"),
    ],
)
def test_naive_formats_that_name_every_period_are_accepted(grain, input_format):
    TemporalMapper(grain, input_format=input_format)


ZONES = ["UTC", NEW_YORK, "America/Santiago", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham"]


@settings(max_examples=80)
@given(
    st.dates(date(1900, 1, 1), date(2200, 12, 31)),
    st.integers(0, 23),
    st.sampled_from(ZONES),
    st.sampled_from([None, *ZONES]),
    st.sampled_from(["%Y-%m-%d", "%Y%m%d", "%G-W%V-%u", "%GW%V%u"]),
)
def test_every_date_only_spelling_names_that_date_whatever_the_day_start_and_input_zone(
    day, start_hour, zone, input_timezone, spelling
):
    # Python's strftime writes the ISO week date (%G, %V, %u) independently of the package.
    mapper = TemporalMapper(Day(start_hour=start_hour, timezone=zone), input_timezone=input_timezone)
    assert mapper.to_downstream(day.strftime(spelling)) == day.isoformat()
