"""
Large windows checked by their bounds: the same answers as listing them, without listing them.

A ``TemporalRollupMapper`` over more than ``LISTED_MEMBERS`` minutes or hours checks, at Dag parse,
the first and last three member keys without listing the window, and on each event whether the key
names a member inside the period (:meth:`TemporalRollupMapper.awaits`). These tests hold both
against the listed window (``to_upstream``, the scheduler's list): the keys counted and refused,
and the edge keys checked at parse. Speed is measured in ``benchmarks/bench_rollup_cap.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions import (
    Day,
    Hour,
    Minutes,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Year,
)
from airflow_partitions.temporal import LISTED_MEMBERS

ZONES = ["UTC", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham", "Australia/Lord_Howe"]


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
        unlisted = rollup._unlisted(period) is not None
        assert unlisted == (rollup.window.grain.fixed_length is not None)
        assert unlisted or zone in ("Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham")
        listed = rollup.to_upstream(period.key)
        assert len(listed) > LISTED_MEMBERS
        for key in spellings(instant, zone):
            members = rollup.counts_as(key)
            assert rollup.awaits(period.key, key) == (
                unlisted and any(member in listed for member in members)
            )
            if step == 0:
                assert rollup.to_downstream(key) == period.key


@pytest.mark.parametrize("zone", ZONES)
def test_the_edge_keys_checked_at_parse_are_the_listed_windows_first_and_last_three(zone):
    for rollup in rollups(zone):
        for downstream in ("2026-03", "2026-11", "2028-02", "2026", "2028"):
            try:
                listed = rollup.to_upstream(downstream)
            except ValueError:
                continue  # a month key under a year mapper, or the reverse
            edges = rollup.edge_keys(downstream)
            assert edges == [*listed.in_order[:3], *listed.in_order[-3:]] or (
                edges is None and rollup.window.grain.fixed_length is None
            )
            assert edges is not None or zone not in ("UTC", "America/New_York")


def test_a_month_of_minutes_counts_every_spelling_and_refuses_keys_of_other_months_as_before():
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Minutes(1)))
    assert rollup.to_downstream("2026-06-10T09:15") == "2026-06"
    assert rollup.to_downstream("2026-06-10T09:15:00Z") == "2026-06"
    assert rollup.to_downstream("2026-06-30T23:59:59.999999+00:00") == "2026-06"
    assert rollup.awaits("2026-06", "2026-06-30T23:59")
    assert not rollup.awaits("2026-06", "2026-07-01T00:00")
    assert not rollup.awaits("2026-06", "2026-06-10")  # a day is no minute: listed, then refused
    with pytest.raises(ValueError, match=r"would never count towards '2026-06'.*it awaits 43200 keys"):
        rollup.to_downstream("2026-06-10")


def test_small_windows_and_input_formats_are_listed_as_before():
    day_of_hours = TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))
    assert day_of_hours.edge_keys("2026-03-10") is None
    assert not day_of_hours.awaits("2026-03-10", "2026-03-10T05")
    formatted = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(), input_format="%Y%m%dT%H%M"), window=TemporalWindow(Minutes(1))
    )
    assert formatted.edge_keys("2026-06") is None
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
    assert rollup.edge_keys("2027") == [
        "2027-01-01T00:00",
        "2027-01-01T00:01",
        "2027-01-01T00:02",
        "2027-12-31T23:57",
        "2027-12-31T23:58",
        "2027-12-31T23:59",
    ]
    assert rollup.to_downstream("2027-06-10T09:15") == "2027"
    assert rollup.to_downstream("2027-12-31T23:59:59Z") == "2027"
    assert not rollup.awaits("2027", "2028-01-01T00:00")
