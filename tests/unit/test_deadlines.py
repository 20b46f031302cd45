"""
CompletionDeadline, ExpectedKeys, CountingRollupMapper's deadline plumbing and missing_upstream_keys.

The deadline's one clock read (``deadlines._now``) is set by the ``clock`` fixture, to
2026-12-01T12:00Z unless a test moves it: periods in 2026 are past, periods in 2036 ahead, a
grace of ten years has not run out. Counts (22 of 24 for 90 %) are worked out by hand.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import StartOfDayMapper
from airflow.partition_mappers.wait_policy import MinimumCount, WaitForAll
from airflow.partition_mappers.window import DayWindow
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from airflow.serialization.helpers import WaitPolicyNotSupported
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    Hour,
    SlidingWindow,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    deadlines,
)
from airflow_partitions.windowing import ExpectedKeys
from tests.unit.support import utc

NEW_YORK = "America/New_York"
TWO_HOURS = timedelta(hours=2)
DECADE = timedelta(days=3660)  # the longest grace accepted


def day_of_hours(policy=None, zone: str = "UTC") -> TemporalRollupMapper:
    """Hours of a day rolled up into the day, under *policy*."""
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=zone)),
        window=TemporalWindow(Hour(timezone=zone)),
        wait_policy=policy,
    )


def hours(day: str, missing: tuple[int, ...] = ()) -> frozenset[str]:
    """The UTC hour keys of *day* except the hours *missing*."""
    return frozenset(f"{day}T{h:02d}" for h in range(24) if h not in missing)


class Clock:
    """The time the deadline reads, moved by the tests."""

    def __init__(self) -> None:
        self.now = utc("2026-12-01T12:00Z")

    def __call__(self):
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(deadlines, "_now", fake)
    deadlines._last_change.clear()
    return fake


def evaluate(rollup, day: str, arrived: frozenset[str]):
    """What the scheduler's wait-policy call returns for *rollup*'s run for *day* with *arrived*."""
    return rollup.wait_policy.is_satisfied_by_keys(matched=arrived, expected=rollup.to_upstream(day))


def fires(rollup: TemporalRollupMapper, day: str, arrived: frozenset[str]) -> bool:
    """Whether the scheduler fires *rollup*'s run for *day* once *arrived* has settled (two ticks)."""
    evaluate(rollup, day, arrived)
    policy = rollup.policy
    if isinstance(policy, CompletionDeadline):
        deadlines._now.now += policy.settle
    result = evaluate(rollup, day, arrived)
    if isinstance(policy, CompletionDeadline):
        deadlines._now.now -= policy.settle
    assert result.unreachable is False
    assert result.unreachable_reason is None
    return result.satisfied


# -- when it fires ---------------------------------------------------------------------------------


@pytest.mark.parametrize("day", ["2026-03-10", "2036-03-10"])
def test_a_complete_window_fires_before_or_after_its_deadline(day):
    assert fires(day_of_hours(CompletionDeadline(DECADE, min_fraction=0.9)), day, hours(day))


def test_past_the_deadline_a_window_with_enough_keys_fires():
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_fraction=0.9))
    assert fires(rollup, "2026-03-10", hours("2026-03-10", missing=(3,)))
    assert fires(rollup, "2026-03-10", hours("2026-03-10", missing=(3, 17)))  # 22 of 24


def test_below_the_minimum_it_waits_one_more_grace_then_fires_all_the_same(clock):
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_fraction=0.9))
    few = hours("2026-03-10", missing=(3, 17, 18))  # 21 of 24
    clock.now = utc("2026-03-11T02:30Z")  # past the deadline (02:00), not past the second grace (04:00)
    assert not fires(rollup, "2026-03-10", few)
    clock.now = utc("2026-03-11T04:00Z")
    assert fires(rollup, "2026-03-10", few)
    assert not fires(rollup, "2026-03-10", frozenset())  # nothing to run on: never


def test_a_replay_of_history_fires_each_period_once_complete_not_at_its_minimum(clock):
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_count=20))
    day = "2026-03-10"  # ended long ago: its deadline has passed
    for arrived in range(20, 24):  # hours streaming in, one a tick, a second apart
        assert not evaluate(rollup, day, hours(day, missing=tuple(range(arrived, 24)))).satisfied
        clock.now += timedelta(seconds=1)
    assert evaluate(rollup, day, hours(day)).satisfied  # complete: at once


def test_a_partial_period_fires_only_once_no_key_came_for_the_settle_time(clock):
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_count=20, settle=timedelta(minutes=2)))
    day = "2026-03-10"
    assert not evaluate(rollup, day, hours(day, missing=(1, 2, 3))).satisfied
    clock.now += timedelta(seconds=119)
    assert not evaluate(rollup, day, hours(day, missing=(1, 2, 3))).satisfied
    clock.now += timedelta(seconds=1)
    assert evaluate(rollup, day, hours(day, missing=(1, 2, 3))).satisfied
    clock.now += timedelta(seconds=1)
    assert not evaluate(rollup, day, hours(day, missing=(1, 2))).satisfied  # a new key: settle again


def test_an_incomplete_window_of_a_period_not_yet_over_does_not_fire():
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_count=1))
    assert not fires(rollup, "2036-03-10", hours("2036-03-10", missing=(3,)))


def test_an_incomplete_window_within_its_grace_does_not_fire():
    rollup = day_of_hours(CompletionDeadline(DECADE, min_count=1))
    assert not fires(rollup, "2026-03-10", hours("2026-03-10", missing=(3,)))


def test_keys_the_window_does_not_expect_do_not_count_and_are_reported_unreachable(clock):
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_count=22))
    strangers = frozenset(f"2026-03-11T{h:02d}" for h in range(5))
    clock.now = utc("2026-03-11T02:30Z")
    evaluate(rollup, "2026-03-10", hours("2026-03-10", missing=(1, 2, 3)) | strangers)
    clock.now += timedelta(minutes=1)
    result = evaluate(rollup, "2026-03-10", hours("2026-03-10", missing=(1, 2, 3)) | strangers)
    assert (result.satisfied, result.unreachable) == (False, True)
    assert result.unreachable_reason == (
        "the pending run for partition key '2026-03-10' holds 5 key(s) it will never count "
        "('2026-03-11T00', '2026-03-11T01', '2026-03-11T02'); it counts 21 of 24 keys spelled like "
        "'2026-03-10T00' … '2026-03-10T23'"
    )


@pytest.mark.parametrize(("arrived", "expected"), [(20, True), (19, False)])
def test_min_count_after_the_deadline(arrived, expected, clock):
    clock.now = utc("2026-03-11T03:00Z")  # between the deadline and the second grace
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_count=20))
    assert fires(rollup, "2026-03-10", hours("2026-03-10", missing=tuple(range(arrived, 24)))) is expected


def test_with_neither_minimum_one_key_is_enough_after_the_deadline():
    rollup = day_of_hours(CompletionDeadline(timedelta(0)))
    assert fires(rollup, "2026-03-10", frozenset({"2026-03-10T05"}))
    assert not fires(rollup, "2026-03-10", frozenset())


def test_a_plain_set_of_expected_keys_carries_no_deadline_so_only_completeness_fires():
    policy = CompletionDeadline(timedelta(0), min_count=1)
    expected = set(hours("2026-03-10"))
    assert not policy.is_satisfied_by_keys(
        matched=hours("2026-03-10", missing=(3,)), expected=expected
    ).satisfied
    assert policy.is_satisfied_by_keys(matched=hours("2026-03-10"), expected=expected).satisfied


@pytest.mark.parametrize(
    ("policy", "expected", "needed"),
    [
        (CompletionDeadline(TWO_HOURS, min_fraction=0.9), 24, 22),  # 21.6, rounded up
        (CompletionDeadline(TWO_HOURS, min_fraction=0.9), 23, 21),  # 20.7
        (CompletionDeadline(TWO_HOURS, min_fraction=0.9), 25, 23),  # 22.5
        (CompletionDeadline(TWO_HOURS, min_fraction=0.5), 24, 12),
        (CompletionDeadline(TWO_HOURS, min_fraction=0.1), 30, 3),  # 0.1 * 30 is 3.0000000000000004
        (CompletionDeadline(TWO_HOURS, min_fraction=0.7), 10, 7),  # 0.7 * 10 is 7.000000000000001
        (CompletionDeadline(TWO_HOURS, min_fraction=1), 24, 24),
        (CompletionDeadline(TWO_HOURS, min_fraction=0.01), 24, 1),
        (CompletionDeadline(TWO_HOURS, min_count=30), 24, 24),  # capped at the window's size
        (CompletionDeadline(TWO_HOURS, min_count=20, min_fraction=0.5), 24, 20),  # both must hold
        (CompletionDeadline(TWO_HOURS, min_count=5, min_fraction=0.9), 24, 22),
        (CompletionDeadline(TWO_HOURS), 24, 1),
    ],
)
def test_how_many_keys_are_needed_after_the_deadline(policy, expected, needed):
    assert policy.needed(expected) == needed
    assert policy.is_unreachable(expected) is False


def test_a_minimum_above_the_window_size_is_capped_so_the_full_window_still_fires(clock):
    clock.now = utc("2026-03-11T03:00Z")  # between the deadline and the second grace
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_count=30))
    assert fires(rollup, "2026-03-10", hours("2026-03-10"))
    assert not fires(rollup, "2026-03-10", hours("2026-03-10", missing=(0,)))


@given(percent=st.integers(1, 100), expected=st.integers(1, 5000), min_count=st.none() | st.integers(1, 6000))
def test_needed_is_the_fraction_rounded_up_at_least_min_count_at_most_the_window(
    percent, expected, min_count
):
    policy = CompletionDeadline(timedelta(0), min_count=min_count, min_fraction=percent / 100)
    by_fraction = -(-percent * expected // 100)  # exact integer ceiling of percent% of expected
    assert policy.needed(expected) == min(expected, max(min_count or 1, by_fraction))


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"grace": 7200}, "got 7200"),
        ({"grace": timedelta(seconds=-1)}, "timedelta(days=-1, seconds=86399)"),
        ({"grace": None}, "got None"),
        ({"grace": TWO_HOURS, "min_count": 0}, "min_count must be a positive integer; got 0"),
        ({"grace": TWO_HOURS, "min_count": 2.0}, "got 2.0"),
        ({"grace": TWO_HOURS, "min_count": True}, "got True"),
        (
            {"grace": TWO_HOURS, "min_fraction": 0},
            "min_fraction must be a number in (0, 1] such as 0.9; got 0",
        ),
        ({"grace": TWO_HOURS, "min_fraction": 1.5}, "got 1.5"),
        ({"grace": TWO_HOURS, "min_fraction": "90%"}, "got '90%'"),
        ({"grace": TWO_HOURS, "min_fraction": True}, "got True"),
    ],
)
def test_a_bad_deadline_is_refused_at_parse_naming_the_value(kwargs, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        CompletionDeadline(**kwargs)


# -- when a period closes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rollup", "key", "closes_at"),
    [
        (day_of_hours(), "2026-03-10", "2026-03-11T00:00Z"),
        (day_of_hours(zone=NEW_YORK), "2026-03-08", "2026-03-09T04:00Z"),  # midnight EDT
        (day_of_hours(zone=NEW_YORK), "2026-11-01", "2026-11-02T05:00Z"),  # midnight EST
        (
            TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7)),
            "2026-03-09",
            "2026-03-10T00:00Z",  # trailing: the window ends with the day itself
        ),
        (
            TemporalRollupMapper(
                upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7, align="leading")
            ),
            "2026-03-09",
            "2026-03-16T00:00Z",  # leading: its last member, 2026-03-15, ends then
        ),
        (
            TemporalRollupMapper(
                upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7, align="centred")
            ),
            "2026-12-30",
            "2027-01-03T00:00Z",  # centred: 2026-12-27 ... 2027-01-02
        ),
    ],
)
def test_expected_keys_close_at_the_end_of_the_latest_period_involved(rollup, key, closes_at):
    expected = rollup.to_upstream(key)
    assert isinstance(expected, ExpectedKeys)
    assert expected.closes_at == utc(closes_at)


def test_keys_without_time_close_never_and_a_deadline_on_them_is_refused_at_parse():
    categorical = {
        "upstream_mapper": CompositeKeyMapper(["region", "day"], output=["day"]),
        "window": DimensionWindow(region=["eu", "us"]),
    }
    expected = DimensionRollupMapper(**categorical).to_upstream("2026-03-10")
    assert expected == {"eu|2026-03-10", "us|2026-03-10"}
    assert expected.closes_at is None
    matched = frozenset({"eu|2026-03-10"})
    policy = CompletionDeadline(timedelta(0))
    assert not policy.is_satisfied_by_keys(matched=matched, expected=expected).satisfied
    with pytest.raises(ValueError, match=r"needs a time dimension.*\['region', 'day'\]"):
        DimensionRollupMapper(**categorical, wait_policy=policy)


def test_a_dimension_rollup_closes_with_its_time_dimension_and_fires_after_the_deadline():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
        window=DimensionWindow(time=TemporalWindow(Hour())),
        wait_policy=CompletionDeadline(TWO_HOURS, min_fraction=0.9),
    )
    expected = rollup.to_upstream("eu|2026-03-10")
    assert expected.closes_at == utc("2026-03-11T00:00Z")
    arrived = frozenset(f"eu|{key}" for key in hours("2026-03-10", missing=(3, 17)))
    assert fires(rollup, "eu|2026-03-10", arrived)


# -- serialization and memo ------------------------------------------------------------------------


def test_deadline_serializes_to_plain_versioned_json_and_back():
    policy = CompletionDeadline(timedelta(hours=2, minutes=30), min_count=3, min_fraction=0.9)
    assert json.dumps(policy.serialize()) == (
        '{"format_version": 1, "grace_seconds": 9000.0, "min_count": 3, "min_fraction": 0.9}'
    )
    rebuilt = CompletionDeadline.deserialize(json.loads(json.dumps(policy.serialize())))
    assert (rebuilt.grace, rebuilt.min_count, rebuilt.min_fraction) == (timedelta(seconds=9000), 3, 0.9)
    assert rebuilt == policy
    assert hash(rebuilt) == hash(policy)
    assert rebuilt != CompletionDeadline(timedelta(hours=2, minutes=30), min_count=3)
    assert CompletionDeadline(timedelta(0)).serialize() == {"format_version": 1, "grace_seconds": 0.0}


def test_cores_rollup_mapper_cannot_serialize_a_completion_deadline():
    core = RollupMapper(
        upstream_mapper=StartOfDayMapper(), window=DayWindow(), wait_policy=CompletionDeadline(TWO_HOURS)
    )
    with pytest.raises(WaitPolicyNotSupported, match="CompletionDeadline"):
        encode_partition_mapper(core)


def test_our_rollup_serializes_the_deadline_itself_and_airflow_round_trips_it():
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS, min_fraction=0.9))
    data = rollup.serialize()
    assert "wait_policy" not in data
    assert data["completion_deadline"] == {"format_version": 1, "grace_seconds": 7200.0, "min_fraction": 0.9}
    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(rollup))))
    assert type(rebuilt) is TemporalRollupMapper
    assert rebuilt.wait_policy == CompletionDeadline(TWO_HOURS, min_fraction=0.9)
    assert rebuilt == rollup
    assert fires(rebuilt, "2026-03-10", hours("2026-03-10", missing=(3, 17)))


@pytest.mark.parametrize("policy", [None, WaitForAll(), MinimumCount(20)])
def test_our_rollup_keeps_cores_wait_policies_in_cores_form(policy):
    rollup = day_of_hours(policy)
    data = rollup.serialize()
    assert "completion_deadline" not in data
    rebuilt = TemporalRollupMapper.deserialize(json.loads(json.dumps(data)))
    assert rebuilt.wait_policy == (policy or WaitForAll())


def test_an_equal_rebuilt_rollup_hits_the_same_memoized_expected_keys():
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS))
    rebuilt = TemporalRollupMapper.deserialize(json.loads(json.dumps(rollup.serialize())))
    assert rebuilt.to_upstream("2026-03-10") is rollup.to_upstream("2026-03-10")
    other = day_of_hours(CompletionDeadline(TWO_HOURS, min_count=3))
    assert other != rollup
    assert other.to_upstream("2026-03-10") == rollup.to_upstream("2026-03-10") == hours("2026-03-10")


# -- what was missing ------------------------------------------------------------------------------


def test_missing_keys_lists_the_hours_that_never_came_sorted():
    rollup = day_of_hours(CompletionDeadline(TWO_HOURS))
    assert rollup.missing_keys("2026-03-10", hours("2026-03-10", missing=(17, 3))) == [
        "2026-03-10T03",
        "2026-03-10T17",
    ]
    assert rollup.missing_keys("2026-03-10", hours("2026-03-10")) == []
    with pytest.raises(ValueError, match=re.escape("'2026-03-10T05'")):
        rollup.missing_keys("2026-03-10T05", [])


def test_a_grace_beyond_ten_years_is_refused_at_parse():
    with pytest.raises(ValueError, match="from 0 to 3660 days"):
        CompletionDeadline(timedelta(days=3661))
    assert CompletionDeadline(timedelta(days=3660)).grace == timedelta(days=3660)
