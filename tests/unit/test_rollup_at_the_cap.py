"""
Large windows checked by their bounds and counted out: the same answers as listing them, without listing them.

A ``TemporalRollupMapper`` over more than ``LISTED_MEMBERS`` minutes or hours checks, at Dag parse,
the first and last three member keys without listing the window, on each event whether the key
names a member inside the period (:meth:`TemporalWindowing.awaits`), and gives the scheduler
the window's keys counted out (``to_upstream``: :class:`ExpectedSlots`). These tests hold all three
against the listed window (``listing``: the base rollup's ``to_upstream``, Airflow's list of the
window's members as it was before): the keys counted and refused, the edge keys checked at parse,
and what the scheduler and the wait policies make of the keys received. Speed is measured in
``benchmarks/bench_rollup_cap.py``; here, only that a tick over a year of minutes holds no list of it.
"""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest
from airflow.partition_mappers.wait_policy import MinimumCount, WaitForAll
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions import (
    CompletionDeadline,
    Day,
    Hour,
    Minutes,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
    Year,
)
from airflow_partitions.rollup import CountingRollupMapper
from airflow_partitions.temporal_windowing import LISTED_MEMBERS
from airflow_partitions.windowing import ExpectedKeys, ExpectedSlots

ZONES = ["UTC", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham", "Australia/Lord_Howe"]


def listing(rollup: TemporalRollupMapper, downstream_key: str) -> ExpectedKeys:
    """The window's keys listed, as every rollup's to_upstream gave them before issue 38 (the base's)."""
    return CountingRollupMapper.to_upstream(rollup, downstream_key)


def rollups(zone: str) -> list[TemporalRollupMapper]:
    """Rollups whose windows hold more than LISTED_MEMBERS members of one length, in *zone*."""
    return [
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Month(timezone=zone)),
            window=TemporalWindow(Minutes(15, timezone=zone)),
        ),
        TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Year(timezone=zone)), window=TemporalWindow(Hour(timezone=zone))
        ),
    ]


def spellings(instant: datetime, zone: str) -> list[str]:
    """An instant as producers write it: UTC with Z, with the local offset, naive local time."""
    local = instant.astimezone(Minutes(timezone=zone).tz)
    return [
        instant.strftime("%Y-%m-%dT%H:%M:%SZ"),
        local.isoformat(timespec="minutes"),
        local.strftime("%Y-%m-%dT%H:%M"),
    ]


@settings(max_examples=30)  # each example lists a year of hours to compare with
@given(
    st.sampled_from(ZONES),
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2060, 12, 31), timezones=st.just(UTC)),
    st.integers(-1, 1),
)
def test_a_key_is_counted_by_its_bounds_exactly_when_the_listed_window_counts_it(zone, instant, step):
    for rollup in rollups(zone):
        grain = rollup.upstream_mapper.grain
        period = grain.shift(grain.floor(instant), step)
        # Checked by its bounds wherever the members have one length (not hours in Lord Howe,
        # whose clocks move by 30 minutes, nor in Kathmandu or Chatham, 45 minutes off the hour).
        unlisted = rollup.windowing.unlisted(period) is not None
        assert unlisted == (rollup.window.grain.fixed_length is not None)
        assert unlisted or zone in ("Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham")
        listed = listing(rollup, period.key)
        assert len(listed) > LISTED_MEMBERS
        for key in spellings(instant, zone):
            members = rollup.counts_as(key)
            assert rollup.windowing.awaits(period.key, key) == (
                unlisted and any(member in listed for member in members)
            )
            if step == 0:
                assert rollup.to_downstream(key) == period.key


@pytest.mark.parametrize("zone", ZONES)
def test_the_edge_keys_checked_at_parse_are_the_listed_windows_first_and_last_three(zone):
    for rollup in rollups(zone):
        for downstream in ("2026-03", "2026-11", "2028-02", "2026", "2028"):
            try:
                listed = listing(rollup, downstream)
            except ValueError:
                continue  # a month key under a year mapper, or the reverse
            edges = rollup.windowing.edge_keys(downstream)
            assert edges == [*listed.in_order[:3], *listed.in_order[-3:]] or (
                edges is None and rollup.window.grain.fixed_length is None
            )
            assert edges is not None or zone not in ("UTC", "America/New_York")


def test_a_month_of_minutes_counts_every_spelling_and_refuses_keys_of_other_months_as_before():
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Minutes(1)))
    assert rollup.to_downstream("2026-06-10T09:15") == "2026-06"
    assert rollup.to_downstream("2026-06-10T09:15:00Z") == "2026-06"
    assert rollup.to_downstream("2026-06-30T23:59:59.999999+00:00") == "2026-06"
    assert rollup.windowing.awaits("2026-06", "2026-06-30T23:59")
    assert not rollup.windowing.awaits("2026-06", "2026-07-01T00:00")
    assert not rollup.windowing.awaits("2026-06", "2026-06-10")  # a day is no minute: listed, then refused
    awaited = r"it awaits 43200 keys: '2026-06-01T00:00' … '2026-06-30T23:59'\)"
    with pytest.raises(ValueError, match=r"would never count towards '2026-06'.*" + awaited):
        rollup.to_downstream("2026-06-10")


def test_small_windows_and_input_formats_are_listed_as_before():
    day_of_hours = TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))
    assert day_of_hours.windowing.edge_keys("2026-03-10") is None
    assert not day_of_hours.windowing.awaits("2026-03-10", "2026-03-10T05")
    formatted = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(), input_format="%Y%m%dT%H%M"), window=TemporalWindow(Minutes(1))
    )
    assert formatted.windowing.edge_keys("2026-06") is None
    assert formatted.to_downstream("20260610T0915") == "2026-06"
    with pytest.raises(
        ValueError, match="waits for 44640 members, but its upstream mapper writes them as 744"
    ):
        TemporalRollupMapper(  # hours for minutes: 60 minutes a key
            upstream_mapper=TemporalMapper(Month(), input_format="%Y-%m-%dT%H"),
            window=TemporalWindow(Minutes(1)),
        )


def test_a_year_of_minutes_under_a_raised_cap_builds_without_listing_a_year():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Minutes(1)), max_upstream_keys=600_000
    )
    assert rollup.windowing.edge_keys("2027") == [
        "2027-01-01T00:00",
        "2027-01-01T00:01",
        "2027-01-01T00:02",
        "2027-12-31T23:57",
        "2027-12-31T23:58",
        "2027-12-31T23:59",
    ]
    assert rollup.to_downstream("2027-06-10T09:15") == "2027"
    assert rollup.to_downstream("2027-12-31T23:59:59Z") == "2027"
    assert not rollup.windowing.awaits("2027", "2028-01-01T00:00")


#: Rollups whose windows are counted out, each with the zones of its periods and members: a New
#: York fall-back day of minutes (1,500, its other days are listed), weeks of 5 minutes, months of
#: 15 minutes, years of hours, and New York weeks of UTC minutes (partial UTC days at both ends).
COUNTED_OUT = [
    (lambda zone: Day(timezone=zone), lambda zone: Minutes(1, timezone=zone)),
    (lambda zone: Week(timezone=zone), lambda zone: Minutes(5, timezone=zone)),
    (lambda zone: Month(timezone=zone), lambda zone: Minutes(15, timezone=zone)),
    (lambda zone: Year(timezone=zone), lambda zone: Hour(timezone=zone)),
    (lambda zone: Week(timezone="America/New_York"), lambda zone: Minutes(5)),
]
SLOT_ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "America/Santiago"]
POLICIES = [
    WaitForAll(),
    MinimumCount(3),
    MinimumCount(-2),
    CompletionDeadline(timedelta(0), settle=timedelta(0)),
    CompletionDeadline(timedelta(0), min_fraction=0.5, settle=timedelta(0)),
]


def rollup_of(period_grain, member_grain, policy) -> TemporalRollupMapper:
    zone = member_grain.timezone
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(period_grain, input_timezone=zone),
        window=TemporalWindow(member_grain),
        wait_policy=policy,
        max_upstream_keys=10_000,
    )


def verdict(result) -> tuple:
    return result.satisfied, result.unreachable, result.unreachable_reason


@settings(max_examples=60)  # each example lists a window of up to 8,784 keys to compare with
@given(
    st.sampled_from(COUNTED_OUT),
    st.sampled_from(SLOT_ZONES),
    st.sampled_from(POLICIES),
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2060, 12, 31), timezones=st.just(UTC)),
    st.data(),
)
def test_a_window_counted_out_gives_the_scheduler_and_every_wait_policy_the_listed_answers(
    grains, zone, policy, instant, data
):
    make_period, make_member = grains
    period_grain, member_grain = make_period(zone), make_member(zone)
    rollup = rollup_of(period_grain, member_grain, policy)
    if period_grain.timezone != "UTC" and instant.month in (3, 10, 11) and data.draw(st.booleans()):
        # Often a day of an offset change: the first Sunday of November, the last of March or October.
        instant = instant.replace(day=1) + timedelta(days=(6 - instant.replace(day=1).weekday()) % 7)
    period = period_grain.floor(instant)
    key = period.key
    listed = listing(rollup, key)
    counted_out = rollup.to_upstream(key)
    if rollup.windowing.unlisted(period) is None:  # a New York day of 23 or 24 hours of minutes: listed
        assert len(listed) <= LISTED_MEMBERS and counted_out is listed
        return
    assert isinstance(counted_out, ExpectedSlots) and len(listed) > LISTED_MEMBERS
    # The scheduler's value: the keys, their order and the facts a deadline and the tools read.
    assert counted_out == listed and len(counted_out) == len(listed)
    assert list(counted_out) == list(listed.in_order) and counted_out.in_order == listed.in_order
    assert (counted_out.closes_at, counted_out.downstream_key, counted_out.owner, counted_out.unreadable) == (
        listed.closes_at,
        listed.downstream_key,
        listed.owner,
        listed.unreadable,
    )
    assert counted_out.closes_at == period.end.astimezone(UTC)
    # Keys received: members as awaited and spelled otherwise, neighbours' members, other text.
    keys = list(listed.in_order)
    some = data.draw(st.lists(st.sampled_from(keys), max_size=40))
    spelled = [
        s for k in data.draw(st.lists(st.sampled_from(keys), max_size=3)) for s in spellings_of(k, zone)
    ]
    neighbours = [
        listing(rollup, period_grain.shift(period, step).key).in_order[i] for step in (-1, 1) for i in (0, -1)
    ]
    complete = data.draw(st.booleans())
    received = set(
        (keys if complete else some) + spelled + data.draw(st.lists(st.sampled_from(neighbours), max_size=2))
    )
    received |= set(data.draw(st.lists(st.text(max_size=20), max_size=2)))
    assert rollup.count(counted_out, received) == rollup.count(listed, received)
    assert rollup.missing_keys(key, received) == sorted(listed - rollup.count(listed, received)[0])
    assert verdict(
        rollup.wait_policy.is_satisfied_by_keys(matched=received, expected=counted_out)
    ) == verdict(rollup.wait_policy.is_satisfied_by_keys(matched=received, expected=listed))
    # Airflow's own policies reading the value directly, as they would with Airflow's RollupMapper.
    for core in (WaitForAll(), MinimumCount(3), MinimumCount(-2)):
        assert verdict(core.is_satisfied_by_keys(matched=received, expected=counted_out)) == verdict(
            core.is_satisfied_by_keys(matched=received, expected=listed)
        )
    # u in to_upstream(D) <=> D in to_downstream(u), for members, other spellings and neighbours.
    for upstream in [*some[:5], *keys[:2], *keys[-2:], *spelled, *neighbours]:
        try:
            routed = rollup.to_downstream(upstream)
        except ValueError:
            routed = []
        assert (upstream in counted_out) == (upstream in listed)
        if upstream in counted_out:
            assert key in ([routed] if isinstance(routed, str) else routed)


def spellings_of(key: str, zone: str) -> list[str]:
    """A member key as producers may write it: UTC with Z, the local time with its offset, naive local."""
    start = Minutes(1, timezone=zone).floor_key(key).start
    return [
        start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        start.isoformat(timespec="seconds"),
        start.strftime("%Y-%m-%dT%H:%M:%S"),
    ]


def test_a_tick_over_a_year_of_minutes_neither_lists_nor_holds_it():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Minutes(1)), max_upstream_keys=600_000
    )
    received = {f"2031-01-01T{h:02d}:{m:02d}" for h in range(24) for m in range(60)} | {"2031-01-01T00:00Z"}
    tracemalloc.start()
    try:
        expected = rollup.to_upstream("2031")
        result = rollup.wait_policy.is_satisfied_by_keys(matched=received, expected=expected)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(expected, ExpectedSlots) and len(expected) == 365 * 1440
    assert verdict(result) == (False, False, None)
    assert rollup.count(expected, received)[0] == received - {"2031-01-01T00:00Z"}
    # A list of the year's 525,600 keys is over 30 MB; the tables of its days under one.
    assert peak < 5_000_000, peak


@pytest.mark.parametrize(
    ("zone", "sorted_differs"),
    [("Europe/Berlin", True), ("Australia/Sydney", True), ("America/Santiago", False)],
)
def test_a_year_of_hours_counted_out_is_in_time_order_where_it_is_not_sorted_text(zone, sorted_differs):
    rollup = rollup_of(Year(timezone=zone), Hour(timezone=zone), WaitForAll())
    counted_out, listed = rollup.to_upstream("2026"), listing(rollup, "2026")
    assert isinstance(counted_out, ExpectedSlots) and counted_out == listed
    assert list(counted_out) == list(counted_out.in_order) == list(listed.in_order)
    # The repeated hour of fall-back, its first occurrence first: ``T02+02:00`` before ``T02+01:00``
    # in Berlin, unlike sorted text (Santiago's ``T23-03:00`` before ``T23-04:00`` sorts alike).
    assert (list(listed.in_order) != sorted(listed)) is sorted_differs
