"""Business calendars and the business-day grain: published holiday lists, roll and shift, numpy as oracle."""

from __future__ import annotations

import functools
import itertools
import json
import re
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import holidays
import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    FiscalMonth,
    FiscalQuarter,
    Grain,
    IsoWeek,
    Month,
    Quarter,
    RetailMonth,
    TemporalMapper,
    TemporalWindow,
    Week,
)
from airflow_partitions.business import ROLLS

NEW_YORK = ZoneInfo("America/New_York")

# == Business calendars ==========================================================================
#
# The holiday lists below are worked out from the published rules, not read off the package or the
# holidays library: US federal holidays (5 U.S.C. 6103 and OPM's observed-date rule: a Saturday
# holiday is observed on the Friday before, a Sunday one on the Monday after), bank holidays in
# England and Wales (gov.uk: substitute days on the next weekday), NYSE closures (NYSE Rule 7.2:
# no Saturday New Year's Day closure on 31 December, Good Friday closed, the 2025-01-09 national
# day of mourning for President Carter). Easter Sunday: 2025-04-20, 2026-04-05, 2027-03-28,
# 2028-04-16. Only the holidays on weekdays are listed (weekends are closed anyway).

US_FEDERAL = {
    2025: ["2025-01-01", "2025-01-20", "2025-02-17", "2025-05-26", "2025-06-19", "2025-07-04",
           "2025-09-01", "2025-10-13", "2025-11-11", "2025-11-27", "2025-12-25"],
    # Independence Day on Saturday 4 July: observed on Friday 3 July.
    2026: ["2026-01-01", "2026-01-19", "2026-02-16", "2026-05-25", "2026-06-19", "2026-07-03",
           "2026-09-07", "2026-10-12", "2026-11-11", "2026-11-26", "2026-12-25"],
    # Juneteenth and Christmas on Saturdays, Independence Day on a Sunday; New Year's Day 2028 is
    # a Saturday, observed on Friday 2027-12-31.
    2027: ["2027-01-01", "2027-01-18", "2027-02-15", "2027-05-31", "2027-06-18", "2027-07-05",
           "2027-09-06", "2027-10-11", "2027-11-11", "2027-11-25", "2027-12-24", "2027-12-31"],
    # Veterans Day on Saturday 11 November: observed on Friday 10 November.
    2028: ["2028-01-17", "2028-02-21", "2028-05-29", "2028-06-19", "2028-07-04", "2028-09-04",
           "2028-10-09", "2028-11-10", "2028-11-23", "2028-12-25"],
}  # fmt: skip


ENGLAND_BANK_HOLIDAYS = {
    2025: ["2025-01-01", "2025-04-18", "2025-04-21", "2025-05-05", "2025-05-26", "2025-08-25",
           "2025-12-25", "2025-12-26"],
    # Boxing Day on Saturday 26 December: substitute Monday 28 December.
    2026: ["2026-01-01", "2026-04-03", "2026-04-06", "2026-05-04", "2026-05-25", "2026-08-31",
           "2026-12-25", "2026-12-28"],
    # Christmas on a Saturday, Boxing Day on a Sunday: substitutes 27 and 28 December.
    2027: ["2027-01-01", "2027-03-26", "2027-03-29", "2027-05-03", "2027-05-31", "2027-08-30",
           "2027-12-27", "2027-12-28"],
    # New Year's Day on a Saturday: substitute Monday 3 January.
    2028: ["2028-01-03", "2028-04-14", "2028-04-17", "2028-05-01", "2028-05-29", "2028-08-28",
           "2028-12-25", "2028-12-26"],
}  # fmt: skip


NYSE_CLOSURES = {
    2025: ["2025-01-01", "2025-01-09", "2025-01-20", "2025-02-17", "2025-04-18", "2025-05-26",
           "2025-06-19", "2025-07-04", "2025-09-01", "2025-11-27", "2025-12-25"],
    2026: ["2026-01-01", "2026-01-19", "2026-02-16", "2026-04-03", "2026-05-25", "2026-06-19",
           "2026-07-03", "2026-09-07", "2026-11-26", "2026-12-25"],
    # Friday 2027-12-31 is a trading day: NYSE does not observe a Saturday New Year's Day.
    2027: ["2027-01-01", "2027-01-18", "2027-02-15", "2027-03-26", "2027-05-31", "2027-06-18",
           "2027-07-05", "2027-09-06", "2027-11-25", "2027-12-24"],
    2028: ["2028-01-17", "2028-02-21", "2028-04-14", "2028-05-29", "2028-06-19", "2028-07-04",
           "2028-09-04", "2028-11-23", "2028-12-25"],
}  # fmt: skip


US = BusinessCalendar(country="US")


US_NY = BusinessCalendar(country="US", subdiv="NY")


ENGLAND = BusinessCalendar(country="GB", subdiv="ENG")


NYSE = BusinessCalendar(market="NYSE")


def days_of(year: int) -> list[date]:
    first = date(year, 1, 1)
    return [first + timedelta(days=i) for i in range((date(year + 1, 1, 1) - first).days)]


def closed_weekdays(calendar: BusinessCalendar, year: int) -> list[str]:
    return [d.isoformat() for d in days_of(year) if d.weekday() < 5 and not calendar.is_business_day(d)]


@pytest.mark.parametrize(
    ("calendar", "published"),
    [(US, US_FEDERAL), (ENGLAND, ENGLAND_BANK_HOLIDAYS), (NYSE, NYSE_CLOSURES)],
    ids=["US", "GB-ENG", "NYSE"],
)
@pytest.mark.parametrize("year", [2025, 2026, 2027, 2028])
def test_closed_weekdays_are_the_published_holidays(calendar, published, year):
    assert closed_weekdays(calendar, year) == published[year]
    assert not any(calendar.is_business_day(d) for d in days_of(year) if d.weekday() >= 5)


def test_business_days_of_a_year_are_its_weekdays_less_its_holidays():
    # 2026 has 261 weekdays; 2028, a leap year starting on a Saturday, has 260.
    assert len(US.business_days(date(2026, 1, 1), date(2027, 1, 1))) == 261 - 11
    assert len(NYSE.business_days(date(2028, 1, 1), date(2029, 1, 1))) == 260 - 9


def test_new_york_state_adds_its_own_holidays_to_the_federal_ones():
    # Lincoln's Birthday (12 February) and Election Day (3 November 2026) are New York holidays.
    assert closed_weekdays(US_NY, 2026) == sorted([*US_FEDERAL[2026], "2026-02-12", "2026-11-03"])


def test_country_and_market_holidays_add_up():
    both = BusinessCalendar(country="GB", subdiv="ENG", market="NYSE")
    assert closed_weekdays(both, 2026) == sorted(set(ENGLAND_BANK_HOLIDAYS[2026]) | set(NYSE_CLOSURES[2026]))


def test_leap_day_2028_is_a_business_day_and_is_counted_by_shifts():
    assert US.is_business_day(date(2028, 2, 29))
    assert US.shift(date(2028, 2, 28), 1) == date(2028, 2, 29)
    assert US.shift(date(2028, 3, 1), -1) == date(2028, 2, 29)
    # Presidents' Day 2028 is Monday 21 February: 20 business days in February 2028, not 21.
    assert len(US.business_days(date(2028, 2, 1), date(2028, 3, 1))) == 20


def test_weekmask_names_extra_holidays_and_extra_workdays():
    calendar = BusinessCalendar(
        weekmask=("sunday", "monday", "tuesday", "wednesday", "thursday"),
        extra_holidays=["2026-12-24", date(2026, 12, 20)],
        extra_workdays=["2026-12-26"],  # a working Saturday
    )
    assert calendar.weekmask == "1111001"
    assert calendar.extra_holidays == ("2026-12-20", "2026-12-24")
    week = calendar.business_days(date(2026, 12, 19), date(2026, 12, 27))
    assert [d.isoformat() for d in week] == ["2026-12-21", "2026-12-22", "2026-12-23", "2026-12-26"]


def test_an_extra_workday_overrides_a_public_holiday():
    calendar = BusinessCalendar(country="US", extra_workdays=["2026-11-27", "2026-11-26"])
    assert calendar.is_business_day(date(2026, 11, 26))


def test_calendars_are_values_equal_by_configuration():
    a = BusinessCalendar(country="US", extra_holidays=["2026-12-24", "2026-12-31"])
    b = BusinessCalendar(country="US", extra_holidays=("2026-12-31", date(2026, 12, 24), "2026-12-24"))
    assert a == b and hash(a) == hash(b)
    assert BusinessCalendar(weekmask="1111100") == BusinessCalendar(
        weekmask=["friday", "thursday", "wednesday", "tuesday", "monday"]
    )
    assert a != BusinessCalendar(country="US")
    with pytest.raises(AttributeError):
        a.country = "GB"  # type: ignore[misc]


def test_repr_shows_what_differs_from_the_default():
    assert repr(US_NY) == "BusinessCalendar(country='US', subdiv='NY')"
    assert repr(BusinessCalendar()) == "BusinessCalendar()"


def test_holiday_years_are_cached_per_calendar_value_across_instances():
    from airflow_partitions.grains.business import _business_ordinals

    BusinessCalendar(country="GB", subdiv="SCT").is_business_day(date(2031, 5, 5))
    before = _business_ordinals.cache_info()
    rebuilt = BusinessCalendar.deserialize(BusinessCalendar(country="GB", subdiv="SCT").serialize())
    rebuilt.is_business_day(date(2031, 8, 4))
    after = _business_ordinals.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 0)
    assert after.maxsize is not None


@pytest.mark.parametrize(
    ("day", "convention", "expected"),
    [
        ("2026-11-25", "raise", "2026-11-25"),
        ("2026-11-28", "following", "2026-11-30"),
        ("2026-11-28", "preceding", "2026-11-27"),
        ("2026-11-26", "following", "2026-11-27"),
        ("2026-11-26", "preceding", "2026-11-25"),
        # Saturday 30 May 2026: the next business day is in June, so "modified" rolls back.
        ("2026-05-30", "following", "2026-06-01"),
        ("2026-05-30", "modifiedfollowing", "2026-05-29"),
        # Sunday 1 November 2026: the previous business day is in October, so it rolls forward.
        ("2026-11-01", "preceding", "2026-10-30"),
        ("2026-11-01", "modifiedpreceding", "2026-11-02"),
        # Across the year end: New Year's Day 2027 is a Friday.
        ("2027-01-01", "following", "2027-01-04"),
        ("2027-01-03", "preceding", "2026-12-31"),
    ],
)
def test_roll_conventions(day, convention, expected):
    assert US.roll(date.fromisoformat(day), convention) == date.fromisoformat(expected)


def test_roll_raise_names_the_day_and_its_neighbouring_business_days():
    with pytest.raises(ValueError, match=r"2026-11-26 is not a business day .*2026-11-25.*2026-11-27"):
        US.roll(date(2026, 11, 26))


@pytest.mark.parametrize(
    ("day", "n", "roll", "expected"),
    [
        # Issue 6: New York, US holidays: T-1 business day skips Thanksgiving.
        ("2026-11-27", -1, "raise", "2026-11-25"),
        ("2026-11-30", -1, "raise", "2026-11-27"),
        ("2026-11-25", 1, "raise", "2026-11-27"),
        ("2026-11-28", -1, "following", "2026-11-27"),
        ("2026-11-28", -1, "preceding", "2026-11-25"),
        ("2026-12-31", 1, "raise", "2027-01-04"),
        ("2027-01-04", -1, "raise", "2026-12-31"),
        # Good Friday is not a US federal holiday.
        ("2026-04-02", 1, "raise", "2026-04-03"),
        ("2026-11-25", 0, "raise", "2026-11-25"),
    ],
)
def test_shift_by_business_days(day, n, roll, expected):
    assert US_NY.shift(date.fromisoformat(day), n, roll) == date.fromisoformat(expected)


def test_nyse_shift_skips_good_friday():
    assert NYSE.shift(date(2026, 4, 2), 1) == date(2026, 4, 6)


def test_shift_of_a_non_business_day_needs_a_roll():
    with pytest.raises(ValueError, match="2026-11-28 is not a business day"):
        US.shift(date(2026, 11, 28), 1)


def test_shift_crosses_many_years_and_a_sparse_weekmask():
    sundays = BusinessCalendar(weekmask="0000001", extra_holidays=["2027-01-03"])
    assert sundays.shift(date(2026, 12, 27), 1) == date(2027, 1, 10)
    assert sundays.shift(date(2027, 1, 10), -1) == date(2026, 12, 27)
    assert US.shift(date(2026, 1, 2), 2500) == date.fromisoformat(
        str(numpy.busday_offset("2026-01-02", 2500, holidays=_us_dates(2020, 2040)))
    )


def test_datetimes_count_by_their_date():
    assert US.is_business_day(datetime(2026, 11, 25, 23, 59))
    assert US.roll(datetime(2026, 11, 28, 9), "following") == date(2026, 11, 30)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: US.roll(date(2026, 11, 28), "forward"), "roll must be one of 'raise', 'following'"),
        (lambda: US.is_business_day("2026-11-28"), "expected a datetime.date"),
        (lambda: US.shift(date(2026, 11, 27), 1.0), "n must be a whole number"),
        (lambda: US.shift(date(2026, 11, 27), True), "n must be a whole number"),
        (lambda: US.shift(date(9999, 12, 30), 5), "years 1 to 9999"),
    ],
)
def test_bad_calls_are_refused_naming_the_input(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"country": "XX"}, "country 'XX' is not a country code of the holidays library"),
        ({"country": "us"}, "country 'us'"),
        ({"country": "US", "subdiv": "ZZ"}, "subdiv 'ZZ' is not a subdivision of country 'US'"),
        ({"country": "GB", "subdiv": "NY"}, "expected one of its codes: ENG, NIR, SCT, WLS"),
        ({"subdiv": "NY"}, "subdiv 'NY' needs a country"),
        ({"market": "NASDAQ"}, "market 'NASDAQ' is not a market code of the holidays library"),
        ({"market": "NASDAQ"}, "XNYS"),
        ({"weekmask": "0000000"}, "has no working day"),
        ({"weekmask": ()}, "has no working day"),
        ({"weekmask": "11111"}, "weekmask must be 7 characters"),
        ({"weekmask": "MTWTFSS"}, "weekmask must be 7 characters"),
        ({"weekmask": ("Monday",)}, "got ('Monday',)"),
        ({"extra_holidays": "2026-12-24"}, "extra_holidays must be a list of ISO 8601 dates"),
        ({"extra_holidays": ["2026-2-3"]}, "extra_holidays entry '2026-2-3' is not an ISO 8601"),
        ({"extra_workdays": ["20261224"]}, "extra_workdays entry '20261224'"),
        ({"extra_workdays": [datetime(2026, 12, 24)]}, "extra_workdays entry datetime.datetime"),
        ({"extra_holidays": ["2026-12-24"], "extra_workdays": ["2026-12-24"]}, "2026-12-24 listed both"),
    ],
)
def test_bad_calendar_is_refused_at_construction_naming_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        BusinessCalendar(**kwargs)


def test_calendar_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        BusinessCalendar("1111100")  # type: ignore[misc]


def test_alpha3_country_codes_and_mic_market_codes_are_accepted():
    assert closed_weekdays(BusinessCalendar(country="USA"), 2026) == US_FEDERAL[2026]
    assert closed_weekdays(BusinessCalendar(market="XNYS"), 2026) == NYSE_CLOSURES[2026]


def test_calendar_stored_form_is_sorted_plain_json_without_empty_fields():
    calendar = BusinessCalendar(
        weekmask="1111110", country="US", subdiv="NY", extra_holidays={"2026-12-31", "2026-12-24"}
    )
    assert json.dumps(calendar.serialize()) == (
        '{"country": "US", "extra_holidays": ["2026-12-24", "2026-12-31"], "format_version": 1, '
        '"subdiv": "NY", "weekmask": "1111110"}'
    )
    assert BusinessCalendar().serialize() == {"format_version": 1, "weekmask": "1111100"}
    assert BusinessCalendar.deserialize(json.loads(json.dumps(calendar.serialize()))) == calendar


def test_calendar_of_a_newer_format_is_refused():
    with pytest.raises(ValueError, match="format_version"):
        BusinessCalendar.deserialize({"format_version": 2, "weekmask": "1111100"})


# == The BusinessDay grain ======================================================================

NEW_YORK_BUSINESS_DAYS = BusinessDay(US_NY, timezone="America/New_York")


def test_t_minus_one_business_day_in_new_york_skips_thanksgiving():
    mapper = TemporalMapper(NEW_YORK_BUSINESS_DAYS, offset=-1)
    assert mapper.to_downstream("2026-11-27") == "2026-11-25"
    assert mapper.to_downstream("2026-11-30") == "2026-11-27"
    assert mapper.to_downstream("2026-11-30T08:00:00-05:00") == "2026-11-27"
    # 02:00 UTC on the 27th is still Thanksgiving evening in New York.
    with pytest.raises(
        ValueError, match=r"partition key '2026-11-27T02:00:00Z'.*2026-11-26 .*not a business day"
    ):
        mapper.to_downstream("2026-11-27T02:00:00Z")


def test_t_minus_one_decodes_back_to_the_day_it_came_from():
    mapper = TemporalMapper(NEW_YORK_BUSINESS_DAYS, offset=-1)
    assert mapper.decode_downstream("2026-11-25").key == "2026-11-27"
    assert mapper.to_partition_date("2026-11-25") == datetime(2026, 11, 25, tzinfo=NEW_YORK)


def test_business_day_keys_map_to_themselves_and_carry_their_partition_date():
    mapper = TemporalMapper(NEW_YORK_BUSINESS_DAYS)
    assert mapper.to_downstream("2026-11-25T23:59:59-05:00") == "2026-11-25"
    assert mapper.to_downstream("20261125") == "2026-11-25"
    date_ = mapper.to_partition_date("2026-11-25")
    assert date_ == datetime(2026, 11, 25, tzinfo=NEW_YORK) and date_.utcoffset() == timedelta(hours=-5)


@pytest.mark.parametrize("key", ["2026-11-28", "2026-11-26", "2026-11-26T12:00", "2026-W48-6"])
def test_a_key_on_a_non_business_day_is_refused_naming_the_key(key):
    with pytest.raises(ValueError, match=re.escape(f"partition key {key!r}") + ".*not a business day"):
        TemporalMapper(NEW_YORK_BUSINESS_DAYS).to_downstream(key)


@pytest.mark.parametrize(
    ("roll", "offset", "key", "expected"),
    [
        ("following", 0, "2026-11-28", "2026-11-30"),
        ("preceding", 0, "2026-11-28", "2026-11-27"),
        ("following", 0, "2026-11-26T10:00", "2026-11-27"),
        ("preceding", 0, "2026-11-26T10:00", "2026-11-25"),
        ("following", -1, "2026-11-28", "2026-11-27"),
        ("preceding", -1, "2026-11-28", "2026-11-25"),
        ("following", 1, "2026-11-26", "2026-11-30"),
        ("modifiedfollowing", 0, "2026-10-31", "2026-10-30"),
        ("following", 0, "2026-11-25", "2026-11-25"),
    ],
)
def test_roll_moves_keys_on_non_business_days_before_the_offset(roll, offset, key, expected):
    grain = BusinessDay(US_NY, roll=roll, timezone="America/New_York")
    assert TemporalMapper(grain, offset=offset).to_downstream(key) == expected


def test_canonical_keys_are_business_days_whatever_the_roll():
    grain = BusinessDay(US, roll="following")
    assert grain.parse("2026-11-27").key == "2026-11-27"
    with pytest.raises(ValueError, match=r"2026-11-28 .*not a business day"):
        grain.parse("2026-11-28")
    with pytest.raises(ValueError, match="not a canonical"):
        grain.parse("2026-11-27T00:00")


def test_business_day_periods_are_whole_local_days_dst_included():
    every_day = BusinessDay(BusinessCalendar(weekmask="1111111"), timezone="America/New_York")
    assert every_day.parse("2026-03-08").duration == timedelta(hours=23)
    assert every_day.parse("2026-11-01").duration == timedelta(hours=25)
    assert every_day.shift(every_day.parse("2026-03-07"), 1).key == "2026-03-08"


def test_business_days_from_six_in_the_morning():
    grain = BusinessDay(US, start_hour=6, timezone="America/New_York")
    assert TemporalMapper(grain).to_downstream("2026-11-27T06:00") == "2026-11-27"
    with pytest.raises(ValueError, match=r"2026-11-26 .*not a business day"):
        TemporalMapper(grain).to_downstream("2026-11-27T05:59")
    assert grain.parse("2026-11-27").start == datetime(2026, 11, 27, 6, tzinfo=NEW_YORK)
    assert grain.shift(grain.parse("2026-11-27"), -1).start == datetime(2026, 11, 25, 6, tzinfo=NEW_YORK)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"calendar": "US"}, "calendar must be a BusinessCalendar"),
        ({"roll": "sideways"}, "roll must be one of"),
        ({"timezone": "America/Nowhere"}, "not an IANA time zone name"),
        ({"start_hour": 24}, "start_hour must be an hour from 0 to 23"),
    ],
)
def test_bad_business_day_grain_is_refused_at_construction(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        BusinessDay(**kwargs)


def test_default_business_day_grain_is_monday_to_friday():
    assert BusinessDay().calendar == BusinessCalendar()
    assert TemporalMapper(BusinessDay(), offset=1).to_downstream("2026-11-27") == "2026-11-30"


def test_business_day_grain_stored_form_nests_its_calendar():
    grain = BusinessDay(US_NY, roll="preceding", timezone="America/New_York")
    assert grain.serialize() == {
        "calendar": {"country": "US", "format_version": 1, "subdiv": "NY", "weekmask": "1111100"},
        "format_version": 1,
        "kind": "business_day",
        "roll": "preceding",
        "start_hour": 0,
        "timezone": "America/New_York",
    }
    assert Grain.deserialize(json.loads(json.dumps(grain.serialize()))) == grain


# == Properties ==================================================================================
#
# Oracle: numpy's business-day functions, fed the weekmask and the holiday dates straight from the
# holidays library (not through the package), over 1990 to 2050.

ORACLE_YEARS = range(1990, 2051)
PROPERTY_CALENDARS = {
    "mon-fri": BusinessCalendar(),
    "US-NY": US_NY,
    "GB-ENG": ENGLAND,
    "NYSE": NYSE,
    "sun-thu": BusinessCalendar(weekmask="1111001", extra_holidays=["2026-12-24", "2030-01-02"]),
    "sundays-US": BusinessCalendar(weekmask="0000001", country="US"),
}


def _us_dates(first: int, last: int) -> list[str]:
    return sorted(str(d) for d in holidays.country_holidays("US", years=range(first, last + 1)))


@functools.cache
def oracle(name: str) -> numpy.busdaycalendar:
    calendar = PROPERTY_CALENDARS[name]
    closed = set(calendar.extra_holidays)
    if calendar.country:
        closed |= {
            str(d)
            for d in holidays.country_holidays(calendar.country, subdiv=calendar.subdiv, years=ORACLE_YEARS)
        }
    if calendar.market:
        closed |= {str(d) for d in holidays.financial_holidays(calendar.market, years=ORACLE_YEARS)}
    return numpy.busdaycalendar(weekmask=calendar.weekmask, holidays=sorted(closed))


calendar_names = st.sampled_from(sorted(PROPERTY_CALENDARS))


days = st.dates(min_value=date(2000, 1, 1), max_value=date(2040, 12, 31))


zones = st.sampled_from(
    ["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Santiago"]
)


@settings(max_examples=150)
@given(calendar_names, days)
def test_is_business_day_agrees_with_numpy(name, day):
    assert PROPERTY_CALENDARS[name].is_business_day(day) == bool(numpy.is_busday(day, busdaycal=oracle(name)))


@settings(max_examples=150)
@given(calendar_names, days, st.integers(-400, 400), st.sampled_from(ROLLS[1:]))
def test_shift_and_roll_agree_with_numpy_busday_offset(name, day, n, roll):
    calendar = PROPERTY_CALENDARS[name]
    expected = numpy.busday_offset(day, n, roll=roll, busdaycal=oracle(name)).astype(date)
    assert calendar.shift(day, n, roll) == expected
    assert calendar.roll(day, roll) == numpy.busday_offset(day, 0, roll=roll, busdaycal=oracle(name)).astype(
        date
    )


@settings(max_examples=100)
@given(calendar_names, days, st.integers(-300, 300), st.integers(-300, 300))
def test_business_day_shifts_add_up(name, day, a, b):
    grain = BusinessDay(PROPERTY_CALENDARS[name], roll="following")
    period = grain.floor(datetime.combine(day, datetime.min.time(), UTC))
    assert grain.shift(grain.shift(period, a), b) == grain.shift(period, a + b)
    assert grain.shift(grain.shift(period, a), -a) == period


@settings(max_examples=60)
@given(
    calendar_names,
    days,
    zones,
    st.sampled_from(
        [
            Week(),
            Week(start="sunday"),
            IsoWeek(),
            Month(),
            Quarter(),
            FiscalQuarter(start_month=7),
            FiscalMonth(start_day=26),
            RetailMonth(),
        ]
    ),
)
def test_members_are_exactly_the_working_days_in_order_and_map_back(name, day, zone, coarse):
    calendar = PROPERTY_CALENDARS[name]
    coarse = replace(coarse, timezone=zone)
    grain = BusinessDay(calendar, timezone=zone)
    period = coarse.floor(datetime.combine(day, datetime.min.time(), ZoneInfo(zone)))
    members = TemporalWindow(grain).to_upstream(period)

    first, end = period.start.date(), period.end.date()
    span = [first + timedelta(days=i) for i in range((end - first).days)]
    assert [m.key for m in members] == [
        d.isoformat() for d in span if numpy.is_busday(d, busdaycal=oracle(name))
    ]
    assert all(a.end <= b.start for a, b in itertools.pairwise(members))
    assert all(period.start <= m.start and m.end <= period.end for m in members)
    coarse_mapper, business_mapper = TemporalMapper(coarse), TemporalMapper(grain)
    for member in members:
        assert coarse_mapper.to_downstream(member.key) == period.key
        assert business_mapper.to_downstream(member.key) == member.key
        assert grain.parse(member.key) == member
        assert business_mapper.to_partition_date(member.key) == member.start


@settings(max_examples=100)
@given(calendar_names, days, zones)
def test_keys_round_trip_and_non_business_keys_are_refused(name, day, zone):
    grain = BusinessDay(PROPERTY_CALENDARS[name], timezone=zone)
    key = day.isoformat()
    if numpy.is_busday(day, busdaycal=oracle(name)):
        period = grain.parse(key)
        assert period.key == key and grain.key(grain.floor(period.start)) == key
        assert grain.floor(period.end - timedelta(microseconds=1)) == period
    else:
        with pytest.raises(ValueError, match=f"{key} .*not a business day"):
            grain.parse(key)
