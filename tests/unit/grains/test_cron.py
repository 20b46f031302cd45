"""
Cron grains: ticks as croniter and Airflow read them, DST days, and their invariants.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

import pendulum
import pytest
from airflow.timetables.base import DataInterval, TimeRestriction
from airflow.timetables.trigger import CronTriggerTimetable
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from airflow_partitions.grains import (
    Cron,
    Day,
)
from tests.unit.grains.strategies import (
    CRON_EXPRESSIONS,
    DAYS,
    HOUR,
    MOVED_BY_AIRFLOW,
    NEW_YORK_2026_CHANGES,
    ZONES,
    cron_grains,
    grain_and_instant,
    hours_from,
    instants,
    span,
    window,
)
from tests.unit.support import known_bug, utc

WEEKDAY_CRON = Cron("0 9-17 * * 1-5", timezone="America/New_York")


def test_weekday_cron_ticks_nine_times_on_a_weekday():
    ticks = WEEKDAY_CRON.members(Day(timezone="America/New_York").parse("2026-03-10"))  # Tuesday, EDT
    assert [t.key for t in ticks] == [f"2026-03-10T{h:02d}:00-04:00" for h in range(9, 18)]
    assert [span(t)[0] for t in ticks] == hours_from(utc("2026-03-10T13:00Z"), 9)


def test_weekday_cron_ticks_at_local_hours_before_the_dst_change_too():
    ticks = WEEKDAY_CRON.members(Day(timezone="America/New_York").parse("2026-03-06"))  # Friday, EST
    assert [span(t)[0] for t in ticks] == hours_from(utc("2026-03-06T14:00Z"), 9)


def test_weekday_cron_does_not_tick_on_a_saturday():
    assert WEEKDAY_CRON.members(Day(timezone="America/New_York").parse("2026-03-14")) == []


def test_last_cron_tick_of_a_week_runs_to_the_first_of_the_next():
    friday_evening = WEEKDAY_CRON.floor(utc("2026-03-13T23:00Z"))  # Friday 19:00 EDT
    assert friday_evening.key == "2026-03-13T17:00-04:00"
    assert span(friday_evening) == (utc("2026-03-13T21:00Z"), utc("2026-03-16T13:00Z"))
    assert WEEKDAY_CRON.shift(friday_evening, 1).key == "2026-03-16T09:00-04:00"
    assert WEEKDAY_CRON.shift(friday_evening, -9).key == "2026-03-12T17:00-04:00"


def test_utc_cron_keys_carry_no_offset():
    assert Cron("*/20 * * * *").floor(utc("2026-03-10T09:41Z")).key == "2026-03-10T09:40"
    assert span(Cron("@daily").parse("2026-03-10T00:00"))[1] == utc("2026-03-11T00:00Z")


def core_cron_run_times(expression: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    """The run-after instants of Airflow's own CronTriggerTimetable in ``[start, end)``."""
    timetable = CronTriggerTimetable(expression, timezone=zone)
    restriction = TimeRestriction(earliest=pendulum.instance(start), latest=None, catchup=True)
    runs: list[datetime] = []
    interval: DataInterval | None = None
    while info := timetable.next_dagrun_info(last_automated_data_interval=interval, restriction=restriction):
        if info.run_after >= end:
            return runs
        runs.append(datetime.fromtimestamp(info.run_after.timestamp(), UTC))
        interval = info.data_interval


@pytest.mark.parametrize(
    "expression", ["0 9-17 * * 1-5", "30 2 * * *", "30 1 * * *", "*/20 * * * *", "@hourly", "15 */2 * * *"]
)
@pytest.mark.parametrize(
    ("zone", "day"),
    [
        ("America/New_York", "2026-03-08"),
        ("America/New_York", "2026-11-01"),
        ("America/New_York", "2026-11-02"),
        ("Europe/Berlin", "2026-03-29"),
        ("Europe/Berlin", "2026-10-25"),
        ("Australia/Sydney", "2026-04-05"),
        ("Australia/Sydney", "2026-10-04"),
    ],
)
def test_cron_ticks_are_airflows_cron_trigger_timetable_run_times(expression, zone, day):
    period = Day(timezone=zone).parse(day)
    expected = core_cron_run_times(expression, zone, period.start, period.end)
    if (zone, day, expression) in MOVED_BY_AIRFLOW:
        airflows, ours = map(utc, MOVED_BY_AIRFLOW[zone, day, expression])
        expected = sorted({*expected, ours} - {airflows})
    ticks = Cron(expression, timezone=zone).members(period)
    assert [span(t)[0] for t in ticks] == expected
    assert all(span(a)[1] == span(b)[0] for a, b in itertools.pairwise(ticks))


@pytest.mark.parametrize(
    "expression",
    ["not a cron", "* * *", "0 0 * * * *", "61 * * * *", "0 25 * * *", "0 0 30 2 *", "@once", "", None, 5],
)
def test_bad_cron_expression_is_refused_and_named(expression):
    with pytest.raises(ValueError, match=re.escape(repr(expression))):
        Cron(expression)


@pytest.mark.parametrize(
    ("expression", "instant", "tick", "key", "next_tick"),
    [
        # New York skips 02:00-03:00 on 2026-03-08 (02:00 EST = 07:00Z becomes 03:00 EDT): 02:30
        # does not exist and stands for the first real instant after the gap, 03:00 EDT (07:00Z);
        # 03:10 EDT is in its period, which ends at 02:30 EDT on the 9th (06:30Z).
        (
            "30 2 * * *",
            "2026-03-08T07:10Z",
            "2026-03-08T07:00Z",
            "2026-03-08T03:00-04:00",
            "2026-03-09T06:30Z",
        ),
        # New York repeats 01:00-02:00 on 2026-11-01 (06:00Z, 02:00 EDT, becomes 01:00 EST): 01:30
        # ticks once, at its first occurrence, 01:30 EDT (05:30Z); 01:40 EDT and 01:40 EST are in
        # its period, to 01:30 EST on the 2nd (06:30Z).
        (
            "30 1 * * *",
            "2026-11-01T05:40Z",
            "2026-11-01T05:30Z",
            "2026-11-01T01:30-04:00",
            "2026-11-02T06:30Z",
        ),
        (
            "30 1 * * *",
            "2026-11-01T06:40Z",
            "2026-11-01T05:30Z",
            "2026-11-01T01:30-04:00",
            "2026-11-02T06:30Z",
        ),
        # Ticking every hour, 01:30 ticks at both occurrences (05:30Z and 06:30Z), like Hour.
        (
            "30 * * * *",
            "2026-11-01T06:40Z",
            "2026-11-01T06:30Z",
            "2026-11-01T01:30-05:00",
            "2026-11-01T07:30Z",
        ),
        # 01:00 EST (06:00Z) is the second occurrence of 01:00, after 01:40 EDT (05:40Z).
        (
            "*/20 * * * *",
            "2026-11-01T06:00Z",
            "2026-11-01T06:00Z",
            "2026-11-01T01:00-05:00",
            "2026-11-01T06:20Z",
        ),
        # ... and has no tick for the skipped 02:30: 01:30 EST (06:30Z) runs to 03:30 EDT (07:30Z).
        (
            "30 * * * *",
            "2026-03-08T07:10Z",
            "2026-03-08T06:30Z",
            "2026-03-08T01:30-05:00",
            "2026-03-08T07:30Z",
        ),
        # Lord Howe goes back 02:00 +11:00 -> 01:30 +10:30 at 15:00Z on 2026-04-04: the hourly
        # ticks are 01:00 +11:00 (14:00Z) and 02:00 +10:30 (15:30Z), 90 minutes apart.
        ("@hourly", "2026-04-04T15:10Z", "2026-04-04T14:00Z", "2026-04-05T01:00+11:00", "2026-04-04T15:30Z"),
    ],
)
def test_dst_moved_cron_tick_period_of_an_instant_contains_it(expression, instant, tick, key, next_tick):
    zone = "Australia/Lord_Howe" if expression == "@hourly" else "America/New_York"
    cron = Cron(expression, timezone=zone)
    period = cron.floor(utc(instant))
    assert utc(instant) in period
    assert span(period) == (utc(tick), utc(next_tick))
    assert period.key == key
    assert span(cron.parse(key)) == span(period)


def test_cron_offset_mapper_shifts_across_spring_forward():
    from airflow_partitions import TemporalMapper

    cron = Cron("30 2 * * *", timezone="America/New_York")
    # 08:00Z on 2026-03-08 is 04:00 EDT, in the 03:00 EDT tick's period; one back is 02:30 EST on
    # the 7th, one forward 02:30 EDT on the 9th.
    assert TemporalMapper(cron).to_downstream("2026-03-08T08:00:00Z") == "2026-03-08T03:00-04:00"
    assert TemporalMapper(cron, offset=-1).to_downstream("2026-03-08T08:00:00Z") == "2026-03-07T02:30-05:00"
    assert TemporalMapper(cron, offset=1).to_downstream("2026-03-08T08:00:00Z") == "2026-03-09T02:30-04:00"


@pytest.mark.parametrize(
    ("zone", "day_before"),
    [("America/New_York", "2026-03-07T12:00Z"), ("Europe/Berlin", "2026-03-28T12:00Z")],
)
def test_cron_shift_back_undoes_shift_forward_over_a_skipped_tick(zone, day_before):
    cron = Cron("30 2 * * *", timezone=zone)  # 02:30 does not exist on the next day
    period = cron.floor(utc(day_before))
    moved = cron.shift(period, 1)
    assert span(moved)[0] > span(period)[0]
    assert span(cron.shift(moved, -1)) == span(period)


@settings(max_examples=30)
@given(grain_and_instant(cron_grains))
def test_cron_period_containing_an_instant_runs_from_a_tick_at_or_before_it_to_the_next(case):
    grain, instant = case
    assume(known_bug(grain, instant - DAYS, instant + DAYS) is None)
    period = grain.floor(instant)
    start, end = span(period)
    assert start <= instant < end
    assert span(grain.shift(period, 1))[0] == end


@settings(max_examples=30)
@given(grain_and_instant(cron_grains))
def test_cron_key_round_trips(case):
    grain, instant = case
    period = grain.floor(instant)
    assume(known_bug(grain, *window([period])) is None)
    assert span(grain.parse(period.key)) == span(period)
    assert grain.key(grain.parse(period.key)) == period.key


@settings(max_examples=30)
@given(grain_and_instant(cron_grains), st.integers(-4, 4), st.integers(-4, 4))
def test_cron_shifts_add_up(case, a, b):
    grain, instant = case
    period = grain.floor(instant)
    shifted = grain.shift(period, a)
    twice, once = grain.shift(shifted, b), grain.shift(period, a + b)
    assume(known_bug(grain, *window([period, shifted, twice, once])) is None)
    assert span(twice) == span(once)


NEW_YORK_CRONS = (
    *CRON_EXPRESSIONS,
    "30 1 * * *",
    "0 2 * * *",
    "*/15 1-3 * * *",
    "59 1 * * *",
    "0,30 2,3 * * *",
)


@settings(max_examples=60)
@given(
    st.sampled_from(NEW_YORK_CRONS),
    st.sampled_from(NEW_YORK_2026_CHANGES),
    st.timedeltas(-30 * HOUR, 30 * HOUR),
    st.integers(-5, 5),
)
def test_new_york_cron_periods_contain_tile_and_shift_back_across_2026_dst(expression, change, delta, n):
    cron = Cron(expression, timezone="America/New_York")
    instant = change + delta
    period = cron.floor(instant)
    assert span(period)[0] <= instant < span(period)[1]
    assert span(cron.shift(period, 1))[0] == span(period)[1]
    assert span(cron.shift(period, -1))[1] == span(period)[0]
    assert span(cron.shift(cron.shift(period, n), -n)) == span(period)
    assert span(cron.parse(period.key)) == span(period)
    assert cron.key_at(instant) == period.key


@settings(max_examples=30)
@given(st.data())
def test_cron_members_are_exactly_the_ticks_inside_the_period(data):
    zone = data.draw(st.sampled_from(ZONES))
    cron = data.draw(cron_grains(zone))
    coarse = Day(timezone=zone)
    period = coarse.floor(data.draw(instants(zone)))
    assume(known_bug(cron, *window([period])) is None)
    start, end = span(period)

    ticks = cron.members(period)
    assert all(start <= span(t)[0] < end for t in ticks)
    assert all(span(a)[1] == span(b)[0] for a, b in itertools.pairwise(ticks))
    first = ticks[0] if ticks else cron.shift(cron.floor(period.start), 1)
    assert span(cron.shift(first, -1))[0] < start
    assert span(ticks[-1] if ticks else first)[1 if ticks else 0] >= end
