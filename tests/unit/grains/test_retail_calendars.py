"""
Retail calendars other than the NRF's: ``RetailCalendar`` passed as ``calendar=`` to the retail grains.

Expected years are worked out by hand from the rule and checked against companies' published
52/53-week years, cited at each table (annual reports and earnings releases state each year's
end date and length), never copied from running the code. Property tests check the rules of
26 CFR 1.441-2 themselves: a year ends on one weekday, the last in a month or the one nearest its
last day, and has 52 or 53 weeks; every day lies in exactly one week, month, quarter and year.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest
from airflow.serialization.decoders import decode_partition_mapper, decode_timetable
from airflow.serialization.encoders import encode_partition_mapper, encode_timetable
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    Grain,
    GrainPartitionTimetable,
    RetailCalendar,
    RetailMonth,
    RetailQuarter,
    RetailWeek,
    RetailYear,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)

DAY = timedelta(days=1)
SYDNEY = "Australia/Sydney"
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

#: An Australian retailer's 4-4-5 year: the Saturday nearest 30 June, named by the year it ends in.
AUSTRALIAN = RetailCalendar(year_end_month=6, named_by="end", prefix="FY")
#: Costco's: the Sunday nearest the end of August, named by the year it ends in.
COSTCO = RetailCalendar(year_end_month=8, weekday="sunday", named_by="end", prefix="FY")
#: Apple's: the last Saturday of September, named by the year it ends in, the 53rd week in Q1.
APPLE = RetailCalendar(year_end_month=9, rule="last", named_by="end", prefix="FY", extra_week="first")


def days(grain: Grain, key: str) -> tuple[date, date]:
    """The first and last local dates of the period *key* names."""
    period = grain.parse(key)
    return period.start.date(), (period.end - DAY).date()


def span(first: str, last: str) -> tuple[date, date]:
    return date.fromisoformat(first), date.fromisoformat(last)


# -- the example: an Australian 4-4-5 year ending on the Saturday nearest 30 June ---------

# 30 June 2025 is a Monday (nearest Saturday 28 June), 2026 a Tuesday (27 June), 2027 a Wednesday
# (3 July), 2028 a Friday (1 July).
AUSTRALIAN_YEARS = {
    "FY2026": ("2025-06-29", "2026-06-27", 52),
    "FY2027": ("2026-06-28", "2027-07-03", 53),
    "FY2028": ("2027-07-04", "2028-07-01", 52),
}


@pytest.mark.parametrize(("key", "year"), AUSTRALIAN_YEARS.items())
def test_an_australian_year_ends_on_the_saturday_nearest_30_june_named_by_its_end(key, year):
    first, last, weeks = year
    grain = RetailYear(calendar=AUSTRALIAN)
    assert days(grain, key) == span(first, last)
    assert len(RetailWeek(calendar=AUSTRALIAN).members(grain.parse(key))) == weeks
    assert TemporalMapper(grain).to_downstream(first) == key
    assert TemporalMapper(grain).to_downstream(f"{last}T23:59:59") == key


def test_the_4_4_5_months_and_quarters_of_the_53_week_fy2027_give_the_last_month_the_extra_week():
    months = RetailMonth("4-4-5", calendar=AUSTRALIAN)
    assert days(months, "FY2027-M01") == span("2026-06-28", "2026-07-25")
    assert days(months, "FY2027-M03") == span("2026-08-23", "2026-09-26")  # 5 weeks
    assert days(months, "FY2027-M11") == span("2027-04-25", "2027-05-22")
    assert days(months, "FY2027-M12") == span("2027-05-23", "2027-07-03")  # 5 + the 53rd
    quarters = RetailQuarter("4-4-5", calendar=AUSTRALIAN)
    assert [days(quarters, f"FY2027-Q{q}") for q in range(1, 5)] == [
        span("2026-06-28", "2026-09-26"),
        span("2026-09-27", "2026-12-26"),
        span("2026-12-27", "2027-03-27"),
        span("2027-03-28", "2027-07-03"),
    ]
    weeks = RetailWeek(calendar=AUSTRALIAN)
    assert days(weeks, "FY2027-W01") == span("2026-06-28", "2026-07-04")
    assert days(weeks, "FY2027-W53") == span("2027-06-27", "2027-07-03")


def test_an_australian_month_rolls_up_its_weeks_and_survives_airflows_serialization():
    dag_file = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(
            RetailMonth("4-4-5", calendar=AUSTRALIAN, timezone="Australia/Sydney")
        ),
        window=TemporalWindow(RetailWeek(calendar=AUSTRALIAN, timezone="Australia/Sydney")),
    )
    encoded = encode_partition_mapper(dag_file)
    scheduler = decode_partition_mapper(json.loads(json.dumps(encoded)))
    assert scheduler.to_upstream("FY2027-M12") == {f"FY2027-W{w}" for w in range(48, 54)}
    assert scheduler.to_downstream("FY2027-W53") == "FY2027-M12"
    assert scheduler.to_downstream("2026-06-28") == "FY2027-M01"
    assert encode_partition_mapper(scheduler) == encoded


def test_a_timetable_of_australian_months_runs_as_each_ends_and_survives_airflows_serialization():
    timetable = GrainPartitionTimetable(RetailMonth("4-4-5", calendar=AUSTRALIAN, timezone=SYDNEY))
    encoded = json.loads(json.dumps(encode_timetable(timetable)))
    scheduler = decode_timetable(encoded)
    # FY2027-M12 ends at midnight starting Sunday 4 July 2027, Sydney time (AEST, UTC+10)
    assert scheduler.due("FY2027-M12") == datetime(2027, 7, 3, 14, tzinfo=UTC)
    assert encode_timetable(scheduler) == encoded
    assert encoded["__var"]["grain"]["calendar"]["year_end_month"] == 6


def test_named_by_start_names_the_same_year_by_the_calendar_year_of_its_first_month():
    grain = RetailYear(calendar=RetailCalendar(year_end_month=6, named_by="start", prefix="FY"))
    assert days(grain, "FY2026") == span("2026-06-28", "2027-07-03")
    assert TemporalMapper(grain).to_downstream("2027-01-15") == "FY2026"


# -- published 52/53-week years of public companies ----------------------------------------------

# Costco Wholesale: "a 52/53-week fiscal year ... ending on the Sunday nearest the end of August";
# fiscal 2019, 2020 and 2021 were 52-week years ended 1 September 2019, 30 August 2020 and
# 29 August 2021 (Form 10-K for fiscal 2021, Item 1); fiscal 2023 the 53 weeks ended 3 September
# 2023, fiscal 2022 the 52 weeks ended 28 August 2022 (fourth-quarter release, Form 8-K exhibit
# 99.1, https://www.sec.gov/Archives/edgar/data/909832/000090983223000038/costex9918-k92623.htm);
# fiscal 2024 ended 1 September 2024 (Form 10-K for fiscal 2024).
COSTCO_YEARS = {
    "FY2020": ("2019-09-02", "2020-08-30", 52),
    "FY2021": ("2020-08-31", "2021-08-29", 52),
    "FY2022": ("2021-08-30", "2022-08-28", 52),
    "FY2023": ("2022-08-29", "2023-09-03", 53),
    "FY2024": ("2023-09-04", "2024-09-01", 52),
}


@pytest.mark.parametrize(("key", "year"), COSTCO_YEARS.items())
def test_costcos_fiscal_years_end_on_the_sunday_nearest_31_august(key, year):
    first, last, weeks = year
    assert days(RetailYear(calendar=COSTCO), key) == span(first, last)
    assert len(RetailWeek(calendar=COSTCO).members(RetailYear(calendar=COSTCO).parse(key))) == weeks
    # weeks end on Sunday, so they run Monday to Sunday
    assert days(RetailWeek(calendar=COSTCO), f"{key}-W01") == (
        date.fromisoformat(first),
        date.fromisoformat(first) + 6 * DAY,
    )
    assert date.fromisoformat(first).weekday() == 0


# Apple Inc.: "The Company's fiscal year is the 52- or 53-week period that ends on the last
# Saturday of September"; fiscal 2023 (ended 30 September 2023) spanned 53 weeks and fiscal 2022
# (ended 24 September 2022) 52, the extra week falling in the first quarter, the 14 weeks ended
# 31 December 2022 (Form 10-K for fiscal 2023, Note 1; Form 10-Q for the quarter ended 31 December
# 2022). Fiscal 2017 (ended 30 September 2017) had 53 weeks and a 14-week first quarter ended
# 31 December 2016 (Form 10-K for fiscal 2017, Note 1).
APPLE_YEARS = {
    "FY2017": ("2016-09-25", "2017-09-30", 53, ("2016-09-25", "2016-12-31")),
    "FY2022": ("2021-09-26", "2022-09-24", 52, ("2021-09-26", "2021-12-25")),
    "FY2023": ("2022-09-25", "2023-09-30", 53, ("2022-09-25", "2022-12-31")),
}


@pytest.mark.parametrize(("key", "year"), APPLE_YEARS.items())
def test_apples_fiscal_years_end_on_the_last_saturday_of_september_the_53rd_week_in_q1(key, year):
    first, last, weeks, q1 = year
    assert days(RetailYear(calendar=APPLE), key) == span(first, last)
    assert RetailYear(calendar=APPLE).parse(key).duration == timedelta(weeks=weeks)
    assert days(RetailQuarter(calendar=APPLE), f"{key}-Q1") == span(*q1)
    # the other quarters keep their 13 weeks
    quarters = RetailQuarter(calendar=APPLE).members(RetailYear(calendar=APPLE).parse(key))
    assert [q.duration // timedelta(weeks=1) for q in quarters] == [weeks - 39, 13, 13, 13]


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parameter", "value", "expected"),
    [
        ("rule", "closest", "'nearest' .*or 'last'"),
        ("year_end_month", 13, "1 \\(January\\) to 12 \\(December\\)"),
        ("year_end_month", 0, "1 \\(January\\) to 12 \\(December\\)"),
        ("year_end_month", "6", "1 \\(January\\) to 12 \\(December\\)"),
        ("weekday", "saturdy", "monday, tuesday, .*sunday"),
        ("weekday", "Saturday", "monday, tuesday, .*sunday"),
        ("named_by", "finish", "'start' .*or 'end'"),
        ("extra_week", "middle", "'first', 'last' or a number from 1 to 12"),
        ("extra_week", 13, "'first', 'last' or a number from 1 to 12"),
        ("extra_week", True, "'first', 'last' or a number from 1 to 12"),
        ("prefix", "F-Y", "ASCII letters"),
    ],
)
def test_a_bad_calendar_value_is_refused_naming_the_parameter_and_the_values_it_takes(
    parameter, value, expected
):
    with pytest.raises(
        ValueError, match=rf"RetailCalendar: {parameter} .*{expected}.*got {re.escape(repr(value))}"
    ):
        RetailCalendar(**{parameter: value})


@pytest.mark.parametrize("cls", [RetailYear, RetailQuarter, RetailMonth, RetailWeek])
def test_a_calendar_that_is_not_a_retail_calendar_is_refused(cls):
    with pytest.raises(ValueError, match=rf"{cls.__name__}: calendar must be a RetailCalendar.*got 'nrf'"):
        cls(calendar="nrf")


def test_two_different_prefixes_are_refused_and_the_calendars_one_is_used():
    with pytest.raises(ValueError, match="RetailWeek: prefix 'W' and the calendar's prefix 'FY' differ"):
        RetailWeek(prefix="W", calendar=AUSTRALIAN)
    assert RetailWeek(calendar=AUSTRALIAN).prefix == "FY"
    assert RetailWeek(prefix="FY", calendar=AUSTRALIAN) == RetailWeek(calendar=AUSTRALIAN)
    assert RetailWeek(prefix="RW", calendar=RetailCalendar(year_end_month=6)).calendar.prefix == "RW"


@pytest.mark.parametrize("key", ["R2025-W01", "R2027", "X2027-M01"])
def test_a_key_of_another_calendars_spelling_is_refused_naming_the_calendar(key):
    with pytest.raises(
        ValueError, match=rf"'{key}' names no period of .*year_end_month=6.*'FY2026', 'FY2026-Q1'"
    ):
        TemporalMapper(RetailWeek(calendar=AUSTRALIAN)).to_downstream(key)


@pytest.mark.parametrize("key", ["FY2026-W53", "FY2027-W54", "FY2027-M13", "FY2027-Q5"])
def test_a_key_of_no_period_of_the_calendar_is_refused_naming_it(key):
    with pytest.raises(ValueError, match=rf"'{key}' names no period"):
        TemporalMapper(RetailMonth(calendar=AUSTRALIAN)).to_downstream(key)


def test_the_nrf_calendar_given_explicitly_stores_as_no_calendar_and_equals_the_default():
    for cls in (RetailYear, RetailQuarter, RetailMonth, RetailWeek):
        assert cls(calendar=RetailCalendar()) == cls()
        assert cls(calendar=RetailCalendar()).serialize() == cls().serialize()
        assert "calendar" not in cls(calendar=RetailCalendar(prefix="FY")).serialize()
        assert repr(cls()) == f"{cls.__name__}(timezone='UTC', pattern='4-5-4', prefix='R')"


def test_extra_week_1_and_12_are_first_and_last():
    assert RetailCalendar(extra_week=12) == RetailCalendar()
    assert RetailCalendar(extra_week=1) == RetailCalendar(extra_week="first")
    assert RetailCalendar(extra_week=1).serialize()["extra_week"] == "first"


# -- properties ---------------------------------------------------------------------------------

ZONES = ["UTC", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Asia/Kolkata"]
instants = st.datetimes(
    min_value=datetime(1901, 1, 1), max_value=datetime(2199, 12, 31), timezones=st.just(UTC)
)
calendars = st.builds(
    RetailCalendar,
    year_end_month=st.integers(1, 12),
    weekday=st.sampled_from(WEEKDAYS),
    rule=st.sampled_from(["nearest", "last"]),
    named_by=st.sampled_from(["start", "end"]),
    prefix=st.sampled_from(["R", "FY"]),
    extra_week=st.sampled_from(["first", "last", *range(2, 12)]),
)
grains = st.fixed_dictionaries(
    {
        "calendar": calendars,
        "pattern": st.sampled_from(["4-5-4", "4-4-5", "5-4-4"]),
        "timezone": st.sampled_from(ZONES),
    }
)


def family(parameters: dict) -> tuple[RetailWeek, RetailMonth, RetailQuarter, RetailYear]:
    """The four grains of one retail calendar, finest first."""
    return (
        RetailWeek(**parameters),
        RetailMonth(**parameters),
        RetailQuarter(**parameters),
        RetailYear(**parameters),
    )


def month_end(year: int, month: int) -> date:
    return date(year + month // 12, month % 12 + 1, 1) - DAY


@given(grains, instants)
def test_a_year_ends_on_its_weekday_by_its_rule_has_52_or_53_weeks_and_is_named_by_its_rule(
    parameters, instant
):
    calendar = parameters["calendar"]
    year = RetailYear(**parameters).floor(instant)
    first, last = year.start.date(), (year.end - DAY).date()
    assert last.weekday() == WEEKDAYS.index(calendar.weekday)
    assert first.weekday() == (last.weekday() + 1) % 7
    assert (last - first).days + 1 in (364, 371)
    # the calendar year of the month the year ends in (or nearest the end of)
    candidates = [
        y for y in (last.year - 1, last.year) if abs((last - month_end(y, calendar.year_end_month)).days) <= 3
    ]
    if calendar.rule == "last":
        assert last.month == calendar.year_end_month
        assert (last + 7 * DAY).month != calendar.year_end_month
        anchor = last.year
    else:
        assert len(candidates) == 1
        anchor = candidates[0]
    name = anchor if calendar.named_by == "end" or calendar.year_end_month == 12 else anchor - 1
    assert year.key == f"{calendar.prefix}{name:04d}"


@given(grains, instants)
def test_every_instant_lies_in_exactly_one_week_month_quarter_and_year_which_nest(parameters, instant):
    week, month, quarter, year = family(parameters)
    periods = [grain.floor(instant) for grain in (week, month, quarter, year)]
    for finer, coarser in pairwise(periods):
        assert coarser.start <= finer.start and finer.end <= coarser.end
        assert instant in finer
        assert TemporalMapper(coarser.grain).to_downstream(finer.key) == coarser.key
    for grain, period in zip((week, month, quarter, year), periods, strict=True):
        # the neighbours touch it and do not hold the instant
        assert grain.shift(period, -1).end == period.start and grain.shift(period, 1).start == period.end
        assert grain.parse(period.key) == period


@given(grains, instants)
def test_weeks_follow_the_pattern_and_the_53rd_goes_to_the_calendars_extra_week_month(parameters, instant):
    week, month, quarter, year = family(parameters)
    in_year = year.floor(instant)
    weeks = week.members(in_year)
    assert len(weeks) in (52, 53)
    assert [w.key for w in weeks] == [f"{in_year.key}-W{n:02d}" for n in range(1, len(weeks) + 1)]
    per_month = [int(n) for n in parameters["pattern"].split("-")] * 4
    extra_month = {"first": 1, "last": 12}.get(
        parameters["calendar"].extra_week, parameters["calendar"].extra_week
    )
    per_month[extra_month - 1] += len(weeks) - 52
    assert [len(week.members(m)) for m in month.members(in_year)] == per_month
    assert [len(week.members(q)) for q in quarter.members(in_year)] == [
        sum(per_month[i : i + 3]) for i in (0, 3, 6, 9)
    ]


@given(grains)
def test_serialize_round_trips_and_stores_the_calendar_only_when_not_the_nrfs(parameters):
    for grain in family(parameters):
        data = grain.serialize()
        rebuilt = Grain.deserialize(json.loads(json.dumps(data)))
        assert rebuilt == grain
        assert rebuilt.serialize() == data
        nrf = RetailCalendar(prefix=parameters["calendar"].prefix)
        assert ("calendar" in data) == (parameters["calendar"] != nrf)
