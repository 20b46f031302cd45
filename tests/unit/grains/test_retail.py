"""
NRF retail grains: RetailYear, RetailQuarter, RetailMonth and RetailWeek (4-5-4, 4-4-5, 5-4-4).

Expected periods are the NRF's published 4-5-4 calendars written out literally (fiscal 2023 is
the 53-week year ending 3 February 2024; fiscal 2025 begins 2 February 2025), never copied
from running the code. Property tests check the NRF rule itself against the calendar: a year
ends on the Saturday nearest 31 January.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    Day,
    Grain,
    Month,
    RetailMonth,
    RetailQuarter,
    RetailWeek,
    RetailYear,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)
from tests.unit.support import (
    assert_every_instant_maps_back,
    assert_period_contract,
    assert_serialized_alike_in_fresh_processes,
    at,
)

NEW_YORK = "America/New_York"
DAY = timedelta(days=1)


def days(grain: Grain, key: str) -> tuple[date, date]:
    """The first and last local dates of the period *key* names."""
    period = grain.parse(key)
    return period.start.date(), (period.end - DAY).date()


# -- the NRF's published years ------------------------------------------------------------------

# (first day, last day, weeks) of NRF fiscal years 2023-2028.
NRF_YEARS = {
    "R2023": ("2023-01-29", "2024-02-03", 53),
    "R2024": ("2024-02-04", "2025-02-01", 52),
    "R2025": ("2025-02-02", "2026-01-31", 52),
    "R2026": ("2026-02-01", "2027-01-30", 52),
    "R2027": ("2027-01-31", "2028-01-29", 52),
    "R2028": ("2028-01-30", "2029-02-03", 53),
}


@pytest.mark.parametrize(("key", "year"), NRF_YEARS.items())
def test_retail_years_2023_to_2028_match_the_nrf_calendar(key, year):
    first, last, weeks = year
    grain = RetailYear()
    assert days(grain, key) == (date.fromisoformat(first), date.fromisoformat(last))
    assert grain.parse(key).duration == timedelta(weeks=weeks)
    assert len(RetailWeek().members(grain.parse(key))) == weeks
    assert TemporalMapper(grain).to_downstream(first) == key
    assert TemporalMapper(grain).to_downstream(f"{last}T23:59:59") == key


# NRF fiscal 2025, 4-5-4: (first day, last day) of each month, February (M01) to January (M12).
NRF_2025_MONTHS = [
    ("2025-02-02", "2025-03-01"),
    ("2025-03-02", "2025-04-05"),
    ("2025-04-06", "2025-05-03"),
    ("2025-05-04", "2025-05-31"),
    ("2025-06-01", "2025-07-05"),
    ("2025-07-06", "2025-08-02"),
    ("2025-08-03", "2025-08-30"),
    ("2025-08-31", "2025-10-04"),
    ("2025-10-05", "2025-11-01"),
    ("2025-11-02", "2025-11-29"),
    ("2025-11-30", "2026-01-03"),
    ("2026-01-04", "2026-01-31"),
]


@pytest.mark.parametrize(("number", "span"), enumerate(NRF_2025_MONTHS, start=1))
def test_the_months_of_nrf_fiscal_2025(number, span):
    key = f"R2025-M{number:02d}"
    assert days(RetailMonth(), key) == tuple(map(date.fromisoformat, span))
    assert TemporalMapper(RetailMonth()).to_downstream(span[0]) == key
    assert TemporalMapper(RetailMonth()).to_downstream(span[1]) == key


def test_the_quarters_of_nrf_fiscal_2025_and_of_the_53_week_2023():
    grain = RetailQuarter()
    assert [days(grain, f"R2025-Q{q}") for q in range(1, 5)] == [
        (date(2025, 2, 2), date(2025, 5, 3)),
        (date(2025, 5, 4), date(2025, 8, 2)),
        (date(2025, 8, 3), date(2025, 11, 1)),
        (date(2025, 11, 2), date(2026, 1, 31)),
    ]
    assert days(grain, "R2023-Q4") == (date(2023, 10, 29), date(2024, 2, 3))
    assert grain.parse("R2023-Q4").duration == timedelta(weeks=14)


def test_in_the_53_week_2023_january_takes_the_extra_week():
    month = RetailMonth().parse("R2023-M12")
    assert (month.start.date(), (month.end - DAY).date()) == (date(2023, 12, 31), date(2024, 2, 3))
    assert [w.key for w in RetailWeek().members(month)] == [f"R2023-W{w}" for w in range(49, 54)]
    assert days(RetailWeek(), "R2023-W53") == (date(2024, 1, 28), date(2024, 2, 3))


@pytest.mark.parametrize(
    ("pattern", "weeks_2025", "last_month_2023"),
    [
        ("4-5-4", [4, 5, 4] * 4, 5),
        ("4-4-5", [4, 4, 5] * 4, 6),
        ("5-4-4", [5, 4, 4] * 4, 5),
    ],
)
def test_each_pattern_cuts_its_quarters_and_gives_the_53rd_week_to_the_last_month(
    pattern, weeks_2025, last_month_2023
):
    months = RetailMonth(pattern=pattern)
    in_2025 = months.members(RetailYear().parse("R2025"))
    assert [len(RetailWeek().members(m)) for m in in_2025] == weeks_2025
    assert len(RetailWeek().members(months.parse("R2023-M12"))) == last_month_2023


def test_the_other_patterns_first_months_of_2025():
    assert days(RetailMonth(pattern="4-4-5"), "R2025-M03") == (date(2025, 3, 30), date(2025, 5, 3))
    assert days(RetailMonth(pattern="5-4-4"), "R2025-M01") == (date(2025, 2, 2), date(2025, 3, 8))
    assert days(RetailMonth(pattern="5-4-4"), "R2025-M02") == (date(2025, 3, 9), date(2025, 4, 5))


@pytest.mark.parametrize(
    ("day", "week", "month"),
    [
        ("2024-02-03", "R2023-W53", "R2023-M12"),  # the last Saturday of the 53-week year
        ("2024-02-04", "R2024-W01", "R2024-M01"),
        ("2025-02-01", "R2024-W52", "R2024-M12"),
        ("2025-02-02", "R2025-W01", "R2025-M01"),
        ("2026-01-01", "R2025-W48", "R2025-M11"),  # New Year's Day is in retail December
        ("2026-01-31", "R2025-W52", "R2025-M12"),
        ("2026-02-01", "R2026-W01", "R2026-M01"),
        ("2028-02-29", "R2028-W05", "R2028-M02"),  # the leap day: week 5 starts Sunday 27 February
        ("2029-02-03", "R2028-W53", "R2028-M12"),
    ],
)
def test_dates_near_year_ends_and_the_leap_day_fall_in_their_retail_weeks_and_months(day, week, month):
    assert TemporalMapper(RetailWeek()).to_downstream(f"{day}T12:00") == week
    assert TemporalMapper(RetailMonth()).to_downstream(f"{day}T12:00") == month


def test_the_leap_month_of_2028_has_its_five_weeks_and_29_february():
    march = RetailMonth().parse("R2028-M02")
    assert (march.start.date(), (march.end - DAY).date()) == (date(2028, 2, 27), date(2028, 4, 1))
    assert "2028-02-29" in [d.key for d in Day().members(march)]


# -- mappers, rollups and fan-outs --------------------------------------------------------------


def test_a_retail_month_rolls_up_its_4_or_5_weeks():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(RetailMonth()), window=TemporalWindow(RetailWeek())
    )
    assert rollup.to_upstream("R2025-M01") == {f"R2025-W{w:02d}" for w in range(1, 5)}
    assert rollup.to_upstream("R2025-M02") == {f"R2025-W{w:02d}" for w in range(5, 10)}
    assert rollup.to_downstream("R2025-W09") == "R2025-M02"
    assert rollup.to_downstream("R2025-W10") == "R2025-M03"
    assert rollup.to_partition_date("R2025-M02") == at("2025-03-02")


def test_a_retail_year_reads_week_month_and_quarter_keys_of_its_pattern():
    assert TemporalMapper(RetailYear()).to_downstream("R2023-W53") == "R2023"
    assert TemporalMapper(RetailQuarter()).to_downstream("R2025-M04") == "R2025-Q2"
    # week 5 is February's last week under 5-4-4, March's first under 4-5-4
    assert TemporalMapper(RetailMonth(pattern="5-4-4")).to_downstream("R2025-W05") == "R2025-M01"
    assert TemporalMapper(RetailMonth()).to_downstream("R2025-W05") == "R2025-M02"
    assert TemporalMapper(RetailWeek(pattern="5-4-4")).to_downstream("R2025-M02") == "R2025-W06"


def test_a_retail_year_rolls_up_its_12_months_and_a_quarter_its_3():
    year = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(RetailYear()), window=TemporalWindow(RetailMonth())
    )
    assert year.to_upstream("R2023") == {f"R2023-M{m:02d}" for m in range(1, 13)}
    quarter = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(RetailQuarter()), window=TemporalWindow(RetailMonth(pattern="4-4-5"))
    )
    assert quarter.to_upstream("R2025-Q4") == {"R2025-M10", "R2025-M11", "R2025-M12"}


def test_a_retail_week_fans_out_to_its_days_sunday_to_saturday():
    fan_out = TemporalFanOutMapper(upstream_mapper=TemporalMapper(RetailWeek()), window=TemporalWindow(Day()))
    assert list(fan_out.to_downstream("R2025-W01")) == [f"2025-02-{d:02d}" for d in range(2, 9)]


def test_offsets_shift_by_whole_retail_periods_across_53_week_years():
    assert TemporalMapper(RetailWeek(), offset=1).to_downstream("R2023-W53") == "R2024-W01"
    assert TemporalMapper(RetailWeek(), offset=-1).to_downstream("R2024-W01") == "R2023-W53"
    assert TemporalMapper(RetailMonth(), offset=-1).to_downstream("R2025-W01") == "R2024-M12"
    assert TemporalMapper(RetailQuarter(), offset=-4).to_downstream("2025-03-01") == "R2024-Q1"


def test_retail_weeks_run_from_local_midnight_on_sunday():
    grain = RetailWeek(timezone=NEW_YORK)
    assert TemporalMapper(grain).to_downstream("2025-02-02T04:59:59Z") == "R2024-W52"  # Saturday 23:59 EST
    assert TemporalMapper(grain).to_downstream("2025-02-02T05:00:00Z") == "R2025-W01"
    dst = grain.floor(at("2026-03-10T12:00Z"))  # Sunday 8 March 2026: clocks spring forward
    assert (dst.start, dst.end) == (at("2026-03-08T00:00-05:00"), at("2026-03-15T00:00-04:00"))
    assert dst.duration == timedelta(hours=167)


def test_a_retail_rollup_survives_airflows_serialization():
    dag_file = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(RetailQuarter(timezone=NEW_YORK)),
        window=TemporalWindow(RetailWeek(timezone=NEW_YORK)),
    )
    encoded = encode_partition_mapper(dag_file)
    scheduler = decode_partition_mapper(json.loads(json.dumps(encoded)))
    assert scheduler.to_upstream("R2023-Q4") == {f"R2023-W{w}" for w in range(40, 54)}
    assert scheduler.to_partition_date("R2023-Q4") == at("2023-10-29T00:00-04:00")
    assert encode_partition_mapper(scheduler) == encoded


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["4-5-5", "454", "4-4-4", "", None, (4, 5, 4), [4, 5, 4]])
@pytest.mark.parametrize("cls", [RetailYear, RetailQuarter, RetailMonth, RetailWeek])
def test_an_unknown_pattern_is_refused_naming_it(cls, pattern):
    with pytest.raises(ValueError, match=rf"{cls.__name__}: pattern .*got {re.escape(repr(pattern))}"):
        cls(pattern=pattern)


@pytest.mark.parametrize("prefix", ["", "R-", "R1", 7])
def test_a_prefix_that_is_not_ascii_letters_is_refused_naming_it(prefix):
    with pytest.raises(ValueError, match=rf"RetailMonth: prefix .*got {prefix!r}"):
        RetailMonth(prefix=prefix)


@pytest.mark.parametrize(
    "key",
    ["R2025-W53", "R2023-W54", "R2025-W00", "R2025-M13", "R2025-Q5", "FY2025", "r2025", "R0000", "R9999-W53"],
)
def test_a_labelled_key_of_no_period_of_the_calendar_is_refused_naming_it(key):
    with pytest.raises(ValueError, match=rf"'{key}'.*'R2026', 'R2026-Q1', 'R2026-M01', 'R2026-W01'"):
        TemporalMapper(RetailWeek()).to_downstream(key)


@pytest.mark.parametrize("key", ["R2025-W1", "R2025-M1", "R2025-Q01", "R25", "R2025W01"])
def test_a_retail_key_with_the_wrong_digits_is_refused_naming_it(key):
    with pytest.raises(ValueError, match=repr(key)):
        TemporalMapper(RetailYear()).to_downstream(key)


def test_other_grains_refuse_retail_keys_naming_the_key():
    with pytest.raises(ValueError, match=r"'R2025-M01'.*Month"):
        TemporalMapper(Month()).to_downstream("R2025-M01")


@pytest.mark.parametrize(
    ("grain", "key", "canonical"),
    [
        (RetailYear(), "R2025-Q2", "R2025"),
        (RetailMonth(), "R2025-W09", "R2025-M02"),
        (RetailWeek(), "2025-02-05", "R2025-W01"),
        (RetailQuarter(), "R2025", "R2025-Q1"),
    ],
)
def test_parse_refuses_a_key_that_is_not_canonical_naming_the_canonical_one(grain, key, canonical):
    with pytest.raises(ValueError, match=f"'{key}'.*'{canonical}'"):
        grain.parse(key)


def test_a_rollup_of_calendar_months_over_retail_weeks_is_refused_at_parse():
    with pytest.raises(ValueError, match="do not tile"):
        TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(RetailWeek()))


# -- properties ---------------------------------------------------------------------------------

ZONES = ["UTC", NEW_YORK, "America/Santiago", "Australia/Lord_Howe", "Asia/Kolkata", "Europe/London"]
instants = st.datetimes(
    min_value=datetime(1901, 1, 1), max_value=datetime(2199, 12, 31), timezones=st.just(UTC)
)
calendars = st.fixed_dictionaries(
    {
        "pattern": st.sampled_from(["4-5-4", "4-4-5", "5-4-4"]),
        "prefix": st.sampled_from(["R", "FY", "Ret"]),
        "timezone": st.sampled_from(ZONES),
    }
)


def family(calendar: dict) -> tuple[RetailWeek, RetailMonth, RetailQuarter, RetailYear]:
    """The four grains of one retail calendar, finest first."""
    return RetailWeek(**calendar), RetailMonth(**calendar), RetailQuarter(**calendar), RetailYear(**calendar)


@given(calendars, instants)
def test_the_period_containing_an_instant_contains_it_and_its_key_maps_back(calendar, instant):
    for grain in family(calendar):
        assert_period_contract(grain, instant, steps=7)


@given(calendars, instants, st.integers(0, 999_999))
def test_every_instant_of_a_period_maps_back_to_its_key(calendar, instant, millionths):
    for grain in family(calendar):
        assert_every_instant_maps_back(grain, instant, millionths)


@given(calendars, instants)
def test_finer_retail_periods_tile_coarser_ones_exactly(calendar, instant):
    week, month, quarter, year = family(calendar)
    pairs = [(week, month), (week, quarter), (week, year), (month, quarter), (month, year), (quarter, year)]
    for fine, coarse in pairs:
        period = coarse.floor(instant)
        members = fine.members(period)
        assert members[0].start == period.start
        assert members[-1].end == period.end
        assert all(a.end == b.start for a, b in pairwise(members))
        # a rollup's upstream mapper reads each member's key back to the coarse period
        assert {TemporalMapper(coarse).to_downstream(m.key) for m in members} == {period.key}


@given(calendars, instants)
def test_weeks_follow_the_pattern_and_the_53rd_goes_to_the_last_month_and_quarter(calendar, instant):
    week, month, quarter, year = family(calendar)
    in_year = year.floor(instant)
    extra = len(week.members(in_year)) - 52
    assert extra in (0, 1)
    per_month = [int(n) for n in calendar["pattern"].split("-")] * 4
    per_month[-1] += extra
    assert [len(week.members(m)) for m in month.members(in_year)] == per_month
    assert [len(week.members(q)) for q in quarter.members(in_year)] == [13, 13, 13, 13 + extra]


@given(calendars, instants)
def test_a_retail_year_runs_sunday_to_the_saturday_nearest_31_january(calendar, instant):
    year = RetailYear(**calendar).floor(instant)
    first, last = year.start.date(), (year.end - DAY).date()
    assert first.weekday() == 6  # Sunday
    assert last.weekday() == 5  # Saturday
    assert abs((last - date(last.year, 1, 31)).days) <= 3
    assert abs((first - DAY - date(first.year, 1, 31)).days) <= 3
    assert year.key == f"{calendar['prefix']}{first.year}"
    assert (last - first).days + 1 in (364, 371)


@given(calendars)
def test_serialize_round_trips(calendar):
    for grain in family(calendar):
        data = grain.serialize()
        assert json.loads(json.dumps(data)) == data
        rebuilt = Grain.deserialize(json.loads(json.dumps(data)))
        assert rebuilt == grain
        assert rebuilt.serialize() == data


# Configured away from the defaults; their reprs are rebuilt and serialized in fresh interpreters.
CONFIGURED = [
    RetailYear(pattern="5-4-4", prefix="FY", timezone=NEW_YORK),
    RetailQuarter(pattern="4-4-5", timezone="Australia/Sydney"),
    RetailMonth(pattern="4-4-5", prefix="Ret", timezone="Asia/Tokyo"),
    RetailWeek(timezone="Europe/London"),
]


def test_serialize_is_byte_identical_across_processes_and_hash_seeds():
    assert_serialized_alike_in_fresh_processes(
        CONFIGURED, "from airflow_partitions import RetailMonth, RetailQuarter, RetailWeek, RetailYear"
    )


@pytest.mark.parametrize("grain", CONFIGURED, ids=lambda grain: type(grain).__name__)
def test_deserialize_of_serialize_is_an_equal_grain(grain):
    rebuilt = Grain.deserialize(json.loads(json.dumps(grain.serialize())))
    assert rebuilt == grain
    assert json.dumps(rebuilt.serialize()) == json.dumps(grain.serialize())
    assert rebuilt.key_at(at("2024-02-03T12:00")) == grain.key_at(at("2024-02-03T12:00"))
