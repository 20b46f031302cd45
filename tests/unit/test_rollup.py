"""
Our rollups count periods, not spellings, and refuse on arrival any key that would never count.

Expected members are worked out here from the calendar (zoneinfo and string formatting), not by
the package: an hour ``h`` of a UTC day is ``f"{day}T{h:02d}"``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from airflow.partition_mappers.wait_policy import MinimumCount, WaitForAll
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
    FiscalYear,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    PrefixStripMapper,
    Quarter,
    SlidingWindow,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
    Year,
)
from airflow_partitions.grains import RetailMonth
from airflow_partitions.rollup import CountingPolicy

NEW_YORK = ZoneInfo("America/New_York")


def day_of_hours(**mapper_options) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(), **mapper_options), window=TemporalWindow(Hour())
    )


#: Ways producers spell the instant *t* (aware, UTC): each names the hour holding it.
SPELLINGS = [
    lambda t: t.strftime("%Y-%m-%dT%H"),
    lambda t: t.strftime("%Y-%m-%dT%H:%M:%S"),
    lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ"),
    lambda t: t.strftime("%Y-%m-%dT%H:%M:%Sz"),
    lambda t: t.strftime("%Y-%m-%dt%H:%M:%S+00:00"),
    lambda t: t.strftime("%Y%m%dT%H%M%SZ"),
    lambda t: t.strftime("%Y%m%dT%H"),
    lambda t: t.astimezone(NEW_YORK).isoformat(),
]


@given(
    minute=st.integers(0, 366 * 24 * 60 - 1),
    spelling=st.sampled_from(range(len(SPELLINGS))),
)
def test_every_spelling_of_an_instant_counts_as_the_utc_hour_holding_it(minute, spelling):
    instant = datetime(2028, 1, 1, tzinfo=UTC) + timedelta(minutes=minute)
    key = SPELLINGS[spelling](instant)
    day, hour = instant.strftime("%Y-%m-%d"), instant.strftime("%Y-%m-%dT%H")
    rollup = day_of_hours()
    assert rollup.to_downstream(key) == day
    assert rollup.count(rollup.to_upstream(day), [key]) == ({hour}, [])


def test_mixed_spellings_of_one_day_fire_it_once_and_count_each_hour_once():
    rollup, day = day_of_hours(), "2026-03-10"
    keys = [f"{day}T{h:02d}:00:00" for h in range(12)] + [f"20260310T{h:02d}" for h in range(12, 24)]
    keys += ["2026-03-10T05Z", "2026-03-10T05:59:59+00:00"]  # hour 05 twice more
    expected = rollup.to_upstream(day)
    policy = rollup.wait_policy
    assert policy.is_satisfied_by_keys(matched=set(keys[:23]), expected=expected).satisfied is False
    result = policy.is_satisfied_by_keys(matched=set(keys), expected=expected)
    assert (result.satisfied, result.unreachable) == (True, False)
    assert rollup.missing_keys(day, keys) == []
    assert rollup.missing_keys(day, keys[:23]) == ["2026-03-10T23"]


def test_minimum_count_counts_members_not_spellings():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), wait_policy=MinimumCount(3)
    )
    expected = rollup.to_upstream("2026-03-10")
    same_hour = {"2026-03-10T05", "2026-03-10T05:00Z", "20260310T0530"}
    assert not rollup.wait_policy.is_satisfied_by_keys(matched=same_hour, expected=expected).satisfied
    three = same_hour | {"2026-03-10T06:00:00", "2026-03-10T07Z"}
    assert rollup.wait_policy.is_satisfied_by_keys(matched=three, expected=expected).satisfied


def test_the_scheduler_sees_a_counted_policy_equal_to_the_configured_one():
    rollup = day_of_hours()
    assert isinstance(rollup.wait_policy, CountingPolicy)
    assert rollup.wait_policy == WaitForAll() and rollup.policy == WaitForAll()
    assert repr(rollup.wait_policy) == repr(WaitForAll())
    assert "wait_policy" in rollup.serialize()  # the configured policy, in core's form


def test_new_york_hours_count_by_instant_across_the_fall_back_night():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York")),
        window=TemporalWindow(Hour(timezone="America/New_York")),
    )
    expected = rollup.to_upstream("2026-11-01")
    assert len(expected) == 25
    # 05:30Z is 01:30 EDT, the first 01:00 hour; 06:30Z is 01:30 EST, the second.
    assert rollup.count(expected, ["2026-11-01T05:30:00Z"]) == ({"2026-11-01T01-04:00"}, [])
    assert rollup.count(expected, ["2026-11-01T06:30:00Z"]) == ({"2026-11-01T01-05:00"}, [])
    assert rollup.count(expected, ["2026-11-01T01:30-05:00"]) == ({"2026-11-01T01-05:00"}, [])


@pytest.mark.parametrize(
    ("rollup", "key", "message"),
    [
        (
            day_of_hours(),
            "2026-03-10",
            "'2026-03-10' would never count towards '2026-03-10': it names a span that no one member",
        ),
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day())),
            "2026-03",
            "'2026-03' would never count towards '2026-03': it names a span that no one member",
        ),
        (
            TemporalRollupMapper(
                upstream_mapper=TemporalMapper(Week()),
                window=TemporalWindow(BusinessDay(BusinessCalendar(country="US"))),
            ),
            "2026-11-26",  # Thanksgiving
            "'2026-11-26' would never count towards '2026-11-23': 2026-11-26 (the local date in UTC) "
            "is not a business day",
        ),
        # An ISO week without its weekday is a week (2027-W01: 2027-01-04 to 01-10, the week
        # of the year's first Thursday), not its Monday, which date.fromisoformat reads it as.
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(IsoWeek()), window=TemporalWindow(Day())),
            "2027-W01",
            "'2027-W01' would never count towards '2027-W01': it names a span that no one member",
        ),
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(IsoWeek()), window=TemporalWindow(Day())),
            "2027W01",
            "'2027W01' would never count towards '2027-W01': it names a span that no one member",
        ),
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day())),
            "2026-W11",  # 2026-03-09 to 03-15
            "'2026-W11' would never count towards '2026-03': it names a span that no one member",
        ),
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
            "2026-W11",
            "'2026-W11' would never count towards '2026-03': it names a span that no one member",
        ),
        # As long as a member, across two: ISO's 2026-W11 is Monday 9th to Sunday 15th March,
        # across the weeks from Sunday the 8th and the 15th.
        (
            TemporalRollupMapper(
                upstream_mapper=TemporalMapper(RetailMonth()), window=TemporalWindow(Week("sunday"))
            ),
            "2026-W11",
            "'2026-W11' would never count towards 'R2026-M02': it names a span that no one member of the "
            "window holds, being longer or across two (such as '2026-03-08')",
        ),
        # A month, whatever its first day: 2026-03-01 is a Sunday, 2026-06-01 a Monday.
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
            "2026-03",
            "'2026-03' would never count towards '2026-03': it names a span that no one member",
        ),
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
            "2026-06",
            "'2026-06' would never count towards '2026-06': it names a span that no one member",
        ),
        # A fiscal quarter (FY2026 from July 2025: its Q3 is 2026-01 to 03) under calendar months.
        (
            TemporalRollupMapper(
                upstream_mapper=TemporalMapper(FiscalYear(start_month=7)), window=TemporalWindow(Month())
            ),
            "FY2026-Q3",
            "'FY2026-Q3' would never count towards 'FY2026': it names a span that no one member",
        ),
    ],
)
def test_a_key_that_names_no_member_is_refused_on_arrival_naming_it(rollup, key, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        rollup.to_downstream(key)


def test_a_date_counts_where_the_members_are_days():
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()))
    expected = rollup.to_upstream("2026-03")
    for spelling in ("2026-03-10", "20260310", "2026-W11-2", "2026-03-10T23:59:59Z"):
        assert rollup.to_downstream(spelling) == "2026-03"
        assert rollup.count(expected, [spelling]) == ({"2026-03-10"}, [])


def test_an_iso_week_date_with_its_weekday_counts_as_that_day():
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(IsoWeek()), window=TemporalWindow(Day()))
    expected = rollup.to_upstream("2027-W01")
    assert sorted(expected) == [f"2027-01-{d:02d}" for d in range(4, 11)]  # Monday 4th to Sunday 10th
    for spelling, day in [
        ("2027-W01-1", "2027-01-04"),
        ("2027W011", "2027-01-04"),
        ("2027-W01-7", "2027-01-10"),
    ]:
        assert rollup.to_downstream(spelling) == "2027-W01"
        assert rollup.count(expected, [spelling]) == ({day}, [])


def test_unpadded_keys_under_an_input_format_count_as_the_day_they_name():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(), input_format="%Y/%m/%d"), window=TemporalWindow(Day())
    )
    expected = rollup.to_upstream("2026-02")
    assert len(expected) == 28 and "2026/02/01" in expected
    keys = [f"2026/2/{d}" for d in range(1, 10)] + [f"2026/02/{d:02d}" for d in range(10, 29)]
    assert {rollup.to_downstream(k) for k in keys} == {"2026-02"}
    counted, never = rollup.count(expected, keys)
    assert (counted, never) == (set(expected), [])


def test_a_sliding_window_counts_a_spelled_day_in_every_window_it_feeds():
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 3))
    windows = rollup.to_downstream("2026-03-05T10:00:00Z")
    assert windows == ["2026-03-05", "2026-03-06", "2026-03-07"]
    for window in windows:
        assert rollup.count(rollup.to_upstream(window), ["20260305"]) == ({"2026-03-05"}, [])


def test_a_dimension_rollup_counts_each_time_segment_as_its_member():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    )
    expected = rollup.to_upstream("eu|2026-03-10")
    assert rollup.to_downstream("eu|2026-03-10T09:15:00Z") == "eu|2026-03-10"
    assert rollup.count(expected, ["eu|2026-03-10T09:15:00Z", "eu|20260310T09"]) == (
        {"eu|2026-03-10T09"},
        [],
    )
    with pytest.raises(ValueError, match=re.escape("dimension 'time': it names a span that no one member")):
        rollup.to_downstream("eu|2026-03-10")


def test_a_pending_run_holding_a_key_that_never_counts_is_reported_unreachable_until_it_fires():
    rollup, day = day_of_hours(), "2026-03-10"
    expected = rollup.to_upstream(day)
    hours = {f"{day}T{h:02d}" for h in range(24)}
    stale = "2026-03-10"  # a date: an older release accepted it
    held = rollup.wait_policy.is_satisfied_by_keys(
        matched=(hours - {f"{day}T03"}) | {stale}, expected=expected
    )
    assert (held.satisfied, held.unreachable) == (False, True)
    assert held.unreachable_reason == (
        "the pending run for partition key '2026-03-10' holds 1 key(s) it will never count ('2026-03-10'); "
        "it counts 23 of 24 keys spelled like '2026-03-10T00' … '2026-03-10T23'"
    )
    done = rollup.wait_policy.is_satisfied_by_keys(matched=hours | {stale}, expected=expected)
    assert (done.satisfied, done.unreachable, done.unreachable_reason) == (True, False, None)


def test_a_key_naming_a_span_inside_one_member_counts_as_that_member():
    months = TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Month()))
    assert months.to_downstream("2026-06-01") == "2026"
    assert months.count(months.to_upstream("2026"), ["2026-06-01", "20260615"]) == ({"2026-06"}, [])
    quarters = TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Quarter()))
    assert quarters.count(quarters.to_upstream("2026"), ["2026-05", "2026-W10"]) == (
        {"2026-Q2", "2026-Q1"},
        [],
    )
    with pytest.raises(
        ValueError, match="'2026' would never count towards '2026': it names a span that no one member"
    ):
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Day())
        ).to_downstream("2026")


@pytest.mark.parametrize(
    ("mapper", "window", "members", "keys"),
    [
        (TemporalMapper(Day(), input_format="%Y-%m-%d"), TemporalWindow(Hour()), 24, 1),
        (TemporalMapper(Hour(), input_format="%Y-%m-%dT%H"), TemporalWindow(Minutes(15)), 4, 1),
        (TemporalMapper(Day(), input_format="%Y-%m-%dT%I"), TemporalWindow(Hour()), 24, 12),
    ],
)
def test_an_input_format_that_writes_members_alike_is_refused_at_parse(mapper, window, members, keys):
    with pytest.raises(
        ValueError, match=f"waits for {members} members, but its upstream mapper writes them as {keys}"
    ):
        TemporalRollupMapper(upstream_mapper=mapper, window=window)


def test_a_deadline_beyond_the_last_datetime_does_not_raise_it_waits():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Year()),
        window=TemporalWindow(Month()),
        wait_policy=CompletionDeadline(timedelta(days=400), settle=timedelta(0)),
    )
    assert rollup.to_downstream("9997-12-31T23:00Z") == "9997"
    result = rollup.wait_policy.is_satisfied_by_keys(
        matched={"9997-12-31T23:00Z"}, expected=rollup.to_upstream("9997")
    )
    assert (result.satisfied, result.unreachable) == (False, False)


def test_a_kept_dimension_counts_as_its_mapper_writes_it():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["store", "time"], {"store": PrefixStripMapper("x"), "time": TemporalMapper(Day())}
        ),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    )
    assert rollup.to_downstream("x::s1|2026-03-10T05") == "s1|2026-03-10"
    expected = rollup.to_upstream("s1|2026-03-10")
    assert "s1|2026-03-10T05" in expected
    assert rollup.count(expected, ["x::s1|2026-03-10T05:00:00Z"]) == ({"s1|2026-03-10T05"}, [])


def test_a_business_day_dimension_counts_other_spellings_and_refuses_weekends():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Month())}),
        window=DimensionWindow(time=BusinessDayWindow()),
    )
    expected = rollup.to_upstream("eu|2026-03")
    assert len(expected) == 22
    assert rollup.count(expected, ["eu|20260309", "eu|2026-03-09T00:00:00"]) == (
        {"eu|2026-03-09"},
        [],
    )
    with pytest.raises(ValueError, match=r"dimension 'time': .*2026-03-07.*not a business day"):
        rollup.to_downstream("eu|2026-03-07")


# -- accepted means evaluable: the scheduler never meets an error for a key we took ------------------

ACCEPTING_ROLLUPS = [
    day_of_hours(),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    ),
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Quarter())),
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()),
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Week(), offset=-1), window=TemporalWindow(Day())),
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7)),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Year()), window=SlidingWindow(Year(), 5, align="leading")
    ),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month()), window=SlidingWindow(Month(), 3, align="centred")
    ),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow(BusinessCalendar(country="US"))
    ),
]
#: Instants from year 1 to 9999, written in spellings producers use (some of them refused).
any_instant = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59))
ANY_SPELLING = [
    lambda t: t.strftime("%Y-%m-%dT%H"),
    lambda t: t.strftime("%Y-%m-%d"),
    lambda t: t.strftime("%Y-%m"),
    lambda t: t.strftime("%Y"),
    lambda t: t.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
    lambda t: t.strftime("%Y-%m-%dT%H:%M:%S-11:00"),
]


@given(
    rollup=st.sampled_from(ACCEPTING_ROLLUPS),
    when=any_instant,
    spelling=st.sampled_from(ANY_SPELLING),
)
def test_every_key_a_rollup_accepts_can_be_evaluated_counts_and_its_windows_can_complete(
    rollup, when, spelling
):
    # What the scheduler calls after accepting a key (to_upstream, then the wait policy with the
    # key received) must not raise: it would on every loop, and the run would never leave the
    # queue (the 9999-12-31T23:00:00+00:00). Refusing it on arrival is fine.
    key = spelling(when)
    try:
        routed = rollup.to_downstream(key)
    except ValueError:
        return
    for downstream in [routed] if isinstance(routed, str) else routed:
        expected = rollup.to_upstream(downstream)
        satisfaction = rollup.wait_policy.is_satisfied_by_keys(matched={key}, expected=expected)
        assert not satisfaction.unreachable
        assert rollup.missing_keys(downstream, [key]) == sorted(set(expected) - set(rollup.counts_as(key)))
        # ...and the window can complete: its first and last members are read on arrival, into it.
        for member in (min(expected), max(expected)):
            routed_member = rollup.to_downstream(member)
            assert downstream in ([routed_member] if isinstance(routed_member, str) else routed_member)


# -- the cap on the keys one period awaits -----------------------------------------------------------------


def test_a_year_of_minutes_is_refused_at_parse_with_the_count_the_cap_and_the_way_out():
    # 2028 is a leap year: 366 days x 1,440 minutes = 527,040 (the sampled year of most_members).
    with pytest.raises(ValueError) as refused:
        TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Minutes(1)))
    message = str(refused.value)
    assert f"{366 * 1440:,} upstream keys" in message and "the default of 50,000" in message
    assert "minutes into hours" in message and f"max_upstream_keys={366 * 1440}" in message


def test_the_default_cap_admits_a_leap_year_of_hours_and_a_month_of_minutes():
    hours = TemporalRollupMapper(upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Hour()))
    assert len(hours.to_upstream("2028")) == 366 * 24 == 8784
    minutes = TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Minutes(1)))
    assert len(minutes.to_upstream("2026-03")) == 31 * 1440 == 44640


def test_the_cap_is_set_per_rollup_and_kept_in_its_stored_form():
    with pytest.raises(ValueError, match=r"24 upstream keys, more than max_upstream_keys of 23"):
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), max_upstream_keys=23
        )
    days = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), max_upstream_keys=24
    )
    assert days.serialize()["max_upstream_keys"] == 24
    assert type(days).deserialize(days.serialize()).max_upstream_keys == 24
    assert (
        "max_upstream_keys"
        not in TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())
        ).serialize()
    )
    with pytest.raises(ValueError, match="max_upstream_keys must be a positive integer"):
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), max_upstream_keys=0
        )


def test_a_dimension_rollup_counts_every_combination_against_the_cap():
    # 31 days x 24 hours of a month, per region kept: 744 keys a period.
    composite = CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Month())})
    window = DimensionWindow(time=TemporalWindow(Hour()))
    with pytest.raises(ValueError, match=r"744 upstream keys, more than max_upstream_keys of 743"):
        DimensionRollupMapper(upstream_mapper=composite, window=window, max_upstream_keys=743)
    assert (
        len(DimensionRollupMapper(upstream_mapper=composite, window=window).to_upstream("eu|2026-03")) == 744
    )
