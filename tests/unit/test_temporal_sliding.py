"""
SlidingWindow under TemporalRollupMapper, and fan-out caps checked at Dag parse (most_members).

Expected keys come from a calendar (``datetime.date`` arithmetic) or, for New York hours, from
:mod:`zoneinfo` (each real UTC hour written as its local wall hour and offset), never from the
code under test.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import StartOfDayMapper
from airflow.partition_mappers.window import WeekWindow, Window
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    Day,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    Quarter,
    SlidingWindow,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
    Year,
)
from airflow_partitions.grains import OutsideCalendar, most_members
from airflow_partitions.mapping import check_fan_out
from tests.unit.support import assert_maps_alike, configured_instances, names_key, offset_changes

NEW_YORK = "America/New_York"
HOUR = timedelta(hours=1)


def sliding(grain, periods: int, align: str = "trailing", **kwargs) -> TemporalRollupMapper:
    """A rollup of *grain* keys over a sliding window of *periods* of them."""
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(grain), window=SlidingWindow(grain, periods, align=align), **kwargs
    )


def dates(first: str, last: str) -> list[str]:
    """The calendar dates from *first* to *last*, inclusive."""
    start, stop = date.fromisoformat(first), date.fromisoformat(last)
    return [(start + timedelta(days=n)).isoformat() for n in range((stop - start).days + 1)]


def feeds(rollup: TemporalRollupMapper, key: str) -> list[str]:
    """The downstream keys *key* is routed to, as a list."""
    mapped = rollup.to_downstream(key)
    return [mapped] if isinstance(mapped, str) else list(mapped)


# -- by hand ---------------------------------------------------------------------------------------


def test_seven_day_trailing_window_needs_the_last_seven_days_and_a_day_feeds_the_next_seven():
    rollup = sliding(Day(), 7)
    assert rollup.to_upstream("2026-03-09") == frozenset(dates("2026-03-03", "2026-03-09"))
    assert feeds(rollup, "2026-03-05") == dates("2026-03-05", "2026-03-11")
    assert feeds(rollup, "2026-03-05T17:30:00+00:00") == dates("2026-03-05", "2026-03-11")


def test_leading_window_needs_the_next_seven_days_and_a_day_feeds_the_previous_seven():
    rollup = sliding(Day(), 7, "leading")
    assert rollup.to_upstream("2026-03-09") == frozenset(dates("2026-03-09", "2026-03-15"))
    assert feeds(rollup, "2026-03-05") == dates("2026-02-27", "2026-03-05")  # 2026: 28 days in February


def test_centred_window_needs_three_days_either_side():
    rollup = sliding(Day(), 7, "centred")
    assert rollup.to_upstream("2026-03-09") == frozenset(dates("2026-03-06", "2026-03-12"))
    assert feeds(rollup, "2026-03-05") == dates("2026-03-02", "2026-03-08")


@pytest.mark.parametrize(
    ("grain", "periods", "align", "downstream", "members"),
    [
        (Day(), 7, "trailing", "2026-03-02", dates("2026-02-24", "2026-03-02")),
        (Day(), 3, "trailing", "2028-03-01", ["2028-02-28", "2028-02-29", "2028-03-01"]),
        (Day(), 3, "leading", "2026-12-30", ["2026-12-30", "2026-12-31", "2027-01-01"]),
        (Day(), 5, "centred", "2027-01-01", dates("2026-12-30", "2027-01-03")),
        (Month(), 3, "centred", "2026-12", ["2026-11", "2026-12", "2027-01"]),
        (
            Month(),
            12,
            "trailing",
            "2027-02",
            [f"2026-{m:02d}" for m in range(3, 13)] + ["2027-01", "2027-02"],
        ),
        (Quarter(), 2, "leading", "2026-Q4", ["2026-Q4", "2027-Q1"]),
        (IsoWeek(), 2, "trailing", "2027-W01", ["2026-W53", "2027-W01"]),  # 2026 has 53 ISO weeks
        (Hour(), 3, "trailing", "2027-01-01T01", ["2026-12-31T23", "2027-01-01T00", "2027-01-01T01"]),
        (Day(timezone=NEW_YORK), 3, "centred", "2026-03-08", ["2026-03-07", "2026-03-08", "2026-03-09"]),
        (
            Hour(timezone=NEW_YORK),
            3,
            "trailing",
            "2026-11-01T01-05:00",
            ["2026-11-01T00-04:00", "2026-11-01T01-04:00", "2026-11-01T01-05:00"],
        ),
        (
            Hour(timezone=NEW_YORK),
            3,
            "leading",
            "2026-03-08T01-05:00",
            ["2026-03-08T01-05:00", "2026-03-08T03-04:00", "2026-03-08T04-04:00"],
        ),
    ],
)
def test_windows_across_month_and_year_ends_and_dst(grain, periods, align, downstream, members):
    rollup = sliding(grain, periods, align)
    assert rollup.to_upstream(downstream) == frozenset(members)
    for member in members:
        assert downstream in feeds(rollup, member)


def test_a_size_one_window_is_the_period_itself():
    assert feeds(sliding(Day(), 1), "2026-03-05T09:00") == ["2026-03-05"]
    assert sliding(Day(), 1).to_upstream("2026-03-05") == {"2026-03-05"}


def test_an_offset_mapper_shifts_both_directions_alike():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(), offset=-1), window=SlidingWindow(Day(), 3)
    )
    # offset=-1 writes each day's key one day earlier: the run keyed 2026-03-09 stands for 2026-03-10.
    assert rollup.to_upstream("2026-03-09") == frozenset(dates("2026-03-08", "2026-03-10"))
    assert feeds(rollup, "2026-03-05") == dates("2026-03-04", "2026-03-06")


def test_cores_backward_week_window_routes_a_day_only_to_itself_so_its_window_never_fires():
    core = RollupMapper(
        upstream_mapper=StartOfDayMapper(), window=WeekWindow(direction=Window.Direction.BACKWARD)
    )
    assert "2026-03-05T00:00:00" in core.to_upstream("2026-03-09")
    assert core.to_downstream("2026-03-05T00:00:00") == "2026-03-05"  # never "2026-03-09"
    assert "2026-03-09" in feeds(sliding(Day(), 7), "2026-03-05")


@pytest.mark.parametrize(
    ("args", "kwargs", "named"),
    [
        ((Day(), 4), {"align": "centred"}, "odd number of periods; got 4"),
        ((Day(), 0), {}, "got 0"),
        ((Day(), -7), {}, "got -7"),
        ((Day(), 7.0), {}, "got 7.0"),
        ((Day(), True), {}, "got True"),
        ((Day(), 7), {"align": "center"}, "got 'center'"),
        (("day", 7), {}, "got 'day'"),
    ],
)
def test_a_bad_sliding_window_is_refused_at_parse_naming_the_value(args, kwargs, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        SlidingWindow(*args, **kwargs)


def test_the_window_grain_must_be_the_mappers():
    with pytest.raises(ValueError, match=re.escape("got Hour(timezone='UTC', n=60) under Day(")):
        TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Hour(), 24))


def test_a_window_wider_than_the_fan_out_cap_is_refused_at_parse():
    with pytest.raises(ValueError, match="maps to 8 downstream keys, more than max_downstream_keys=7"):
        sliding(Day(), 8, max_downstream_keys=7)
    assert len(feeds(sliding(Day(), 7, max_downstream_keys=7), "2026-03-05")) == 7
    with pytest.raises(ValueError, match="maps to 1000 downstream keys, more than max_downstream_keys=999"):
        sliding(Hour(), 1000, max_downstream_keys=999)
    assert len(feeds(sliding(Hour(), 1000), "2026-03-05T09")) == 1000
    with pytest.raises(ValueError, match=r"periods must be a whole number from 1 to 1000 .* got 1001"):
        SlidingWindow(Hour(), 1001)


@pytest.mark.parametrize(
    ("method", "key"),
    [("to_downstream", "2026-02-30"), ("to_downstream", "soon"), ("to_upstream", "2026-03-10T05")],
)
def test_sliding_errors_at_mapping_time_name_the_key(method, key):
    with pytest.raises(ValueError, match=names_key(key)):
        getattr(sliding(Day(), 7), method)(key)


def test_sliding_window_serializes_and_compares_by_value():
    window = SlidingWindow(Day(timezone=NEW_YORK), 7, align="centred")
    assert window.serialize() == {
        "align": "centred",
        "format_version": 1,
        "grain": {"format_version": 1, "kind": "day", "start_hour": 0, "timezone": NEW_YORK},
        "periods": 7,
    }
    rebuilt = SlidingWindow.deserialize(json.loads(json.dumps(window.serialize())))
    assert rebuilt == window
    assert hash(rebuilt) == hash(window)
    assert rebuilt != SlidingWindow(Day(timezone=NEW_YORK), 7)


def test_sliding_rollup_round_trips_through_airflows_serialization():
    from airflow.serialization.decoders import decode_partition_mapper
    from airflow.serialization.encoders import encode_partition_mapper

    rollup = sliding(Day(timezone=NEW_YORK), 7)
    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(rollup))))
    assert type(rebuilt.window) is SlidingWindow
    assert rebuilt.to_upstream("2026-03-09") == frozenset(dates("2026-03-03", "2026-03-09"))
    assert feeds(rebuilt, "2026-03-05") == dates("2026-03-05", "2026-03-11")


# -- properties ------------------------------------------------------------------------------------

ALIGNS = ["trailing", "leading", "centred"]
DAY_ZONES = ["UTC", NEW_YORK, "Europe/Berlin", "Australia/Sydney"]


def first_member(align: str, periods: int) -> int:
    """Offset, in periods, of a window's first member from its downstream period (by definition)."""
    return {"trailing": 1 - periods, "leading": 0, "centred": -(periods // 2)}[align]


@st.composite
def window_shapes(draw) -> tuple[str, int]:
    align = draw(st.sampled_from(ALIGNS))
    periods = draw(st.integers(1, 40))
    return align, periods + 1 if align == "centred" and periods % 2 == 0 else periods


@st.composite
def days_near_dst(draw, zone: str) -> date:
    """A date from 1990 to 2060, half of the time one around an offset change of *zone*."""
    day = draw(st.dates(date(1990, 1, 1), date(2060, 12, 31)))
    changes = offset_changes(
        zone, datetime(day.year, 1, 1, tzinfo=UTC), datetime(day.year, 12, 31, tzinfo=UTC)
    )
    if changes and draw(st.booleans()):
        at = draw(st.sampled_from(changes))[0].astimezone(ZoneInfo(zone)).date()
        day = at + timedelta(days=draw(st.integers(-3, 3)))
    return day


@given(data=st.data(), shape=window_shapes())
def test_day_windows_are_calendar_days_in_both_directions(data, shape):
    align, periods = shape
    zone = data.draw(st.sampled_from(DAY_ZONES))
    day = data.draw(days_near_dst(zone))
    rollup = sliding(Day(timezone=zone), periods, align)
    first = first_member(align, periods)
    members = [(day + timedelta(days=first + n)).isoformat() for n in range(periods)]
    windows = [(day - timedelta(days=first + periods - 1 - n)).isoformat() for n in range(periods)]
    assert rollup.to_upstream(day.isoformat()) == frozenset(members)
    assert feeds(rollup, day.isoformat()) == windows


def new_york_hour_key(instant: datetime) -> str:
    """The Hour(timezone=New York) key of the real hour starting at the UTC *instant*, by zoneinfo."""
    local = instant.astimezone(ZoneInfo(NEW_YORK))
    minutes = int(local.utcoffset().total_seconds()) // 60
    return f"{local:%Y-%m-%dT%H}-{-minutes // 60:02d}:{-minutes % 60:02d}"


@st.composite
def utc_hours_near_dst(draw) -> datetime:
    """The UTC start of an hour from 1990 to 2060, half of the time within a day of a New York change."""
    year = draw(st.integers(1990, 2060))
    changes = offset_changes(NEW_YORK, datetime(year, 1, 1, tzinfo=UTC), datetime(year, 12, 31, tzinfo=UTC))
    if changes and draw(st.booleans()):
        return draw(st.sampled_from(changes))[0] + draw(st.integers(-30, 30)) * HOUR
    return datetime(year, 1, 1, tzinfo=UTC) + draw(st.integers(0, 364 * 24)) * HOUR


@given(hour=utc_hours_near_dst(), shape=window_shapes())
def test_new_york_hour_windows_are_real_consecutive_hours_in_both_directions(hour, shape):
    align, periods = shape
    rollup = sliding(Hour(timezone=NEW_YORK), periods, align)
    first = first_member(align, periods)
    key = new_york_hour_key(hour)
    members = [new_york_hour_key(hour + (first + n) * HOUR) for n in range(periods)]
    windows = [new_york_hour_key(hour - (first + periods - 1 - n) * HOUR) for n in range(periods)]
    assert rollup.to_upstream(key) == frozenset(members)
    assert feeds(rollup, key) == windows


@given(data=st.data(), shape=window_shapes())
def test_a_key_is_awaited_by_exactly_the_windows_it_is_routed_to(data, shape):
    align, periods = shape
    if data.draw(st.booleans()):
        zone = data.draw(st.sampled_from(DAY_ZONES))
        grain, key = Day(timezone=zone), data.draw(days_near_dst(zone)).isoformat()
    else:
        grain, key = Hour(timezone=NEW_YORK), new_york_hour_key(data.draw(utc_hours_near_dst()))
    rollup = sliding(grain, periods, align)

    routed = feeds(rollup, key)
    assert len(set(routed)) == periods
    for downstream in routed:  # D in to_downstream(u)  =>  u in to_upstream(D)
        assert key in rollup.to_upstream(downstream)
    # ... and no other window awaits it: the periods just outside the routed run do not.
    for outside in (grain.shift(grain.parse(routed[0]), -1), grain.shift(grain.parse(routed[-1]), 1)):
        assert key not in rollup.to_upstream(outside.key)
    for member in rollup.to_upstream(key):  # u in to_upstream(D)  =>  D in to_downstream(u)
        assert key in feeds(rollup, member)


@given(day=days_near_dst(NEW_YORK), hour=st.integers(0, 23))
def test_rebuilt_sliding_rollup_maps_and_awaits_every_key_like_the_original(day, hour):
    rollup = configured_instances()["TemporalRollupMapper:sliding"]  # New York, leading, offset -1
    rebuilt = type(rollup).deserialize(json.loads(json.dumps(rollup.serialize())))
    assert_maps_alike(rollup, rebuilt, f"{day.isoformat()}T{hour:02d}:30")
    assert rebuilt.to_upstream(day.isoformat()) == rollup.to_upstream(day.isoformat())


# -- fan-out caps at parse -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grain", "member", "most"),
    [
        (Month(), Day(), 31),
        (Quarter(), Month(), 3),
        (Year(), Month(), 12),
        (Year(), Day(), 366),  # 2028 is a leap year
        (Year(), Hour(), 8784),  # 366 * 24
        (Week(), Day(), 7),
        (IsoWeek(), Day(), 7),
        (Day(), Hour(), 24),
        (Day(), Minutes(15), 96),
        (Day(timezone=NEW_YORK), Hour(timezone=NEW_YORK), 25),  # the fall-back day
        (Day(timezone=NEW_YORK), Hour(), 25),  # UTC hours tile New York days too
        (Day(timezone=NEW_YORK), Minutes(15, timezone=NEW_YORK), 100),
        (Month(timezone=NEW_YORK), Hour(timezone=NEW_YORK), 744),  # 31 * 24; November has 30 * 24 + 1
    ],
)
def test_most_members_is_the_widest_periods_count(grain, member, most):
    count, widest = most_members(grain, member)
    assert count == most
    assert len(member.members(widest)) == most


def test_most_members_refuses_members_that_do_not_tile():
    with pytest.raises(ValueError, match="do not tile"):
        most_members(Month(), IsoWeek())


def test_check_fan_out_names_the_owner_the_example_the_count_and_the_cap():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Owner: period '2026-01' maps to 31 downstream keys, more than max_downstream_keys=30"
        ),
    ):
        check_fan_out("Owner", 31, "period '2026-01'", 30)
    check_fan_out("Owner", 31, "period '2026-01'", 31)
    with pytest.raises(
        ValueError, match=re.escape("[scheduler] partition_mapper_max_downstream_keys (1000)")
    ):
        check_fan_out("Owner", 1001, "key 'x'", None)
    check_fan_out("Owner", 1000, "key 'x'", None)


def fan_out(grain, member, **kwargs) -> TemporalFanOutMapper:
    return TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(grain), window=TemporalWindow(member), **kwargs
    )


def test_a_year_of_hours_is_refused_at_parse_under_the_default_cap():
    with pytest.raises(
        ValueError, match=re.escape("period '2028' maps to 8784 downstream keys, more than [scheduler]")
    ):
        fan_out(Year(), Hour())


def test_a_month_of_days_needs_a_cap_of_31_not_the_first_31_day_month():
    with pytest.raises(ValueError, match="31 downstream keys, more than max_downstream_keys=30"):
        fan_out(Month(), Day(), max_downstream_keys=30)
    january = list(fan_out(Month(), Day(), max_downstream_keys=31).to_downstream("2026-01"))
    assert january == dates("2026-01-01", "2026-01-31")


def test_a_new_york_day_of_hours_needs_a_cap_of_25():
    with pytest.raises(ValueError, match="25 downstream keys, more than max_downstream_keys=24"):
        fan_out(Day(timezone=NEW_YORK), Hour(timezone=NEW_YORK), max_downstream_keys=24)
    keys = fan_out(Day(timezone=NEW_YORK), Hour(timezone=NEW_YORK), max_downstream_keys=25).to_downstream(
        "2026-11-01"
    )
    assert len(list(keys)) == 25


def test_a_fan_out_whose_members_do_not_tile_every_day_is_still_accepted_at_parse():
    # Lord Howe moves its clocks by 30 minutes, so hours do not tile its two DST days a year; the
    # cap cannot be worked out, and an ordinary day still fans out into its 24 hours.
    lord_howe = "Australia/Lord_Howe"
    keys = list(fan_out(Day(timezone=lord_howe), Hour(timezone=lord_howe)).to_downstream("2026-06-15"))
    assert keys[0] == "2026-06-15T00+10:30"
    assert len(keys) == 24


def test_cores_rollup_mapper_refuses_a_sliding_window_at_parse():
    # It would route each day to one window only, so the window would never fire.
    with pytest.raises(
        TypeError, match=r"works in airflow_partitions. TemporalRollupMapper, not in Airflow.s RollupMapper"
    ):
        RollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7))


@pytest.mark.parametrize(("method", "key"), [("to_downstream", "9999-12-31"), ("to_upstream", "0001-01-01")])
def test_windows_past_the_ends_of_the_calendar_are_refused_naming_the_key(method, key):
    with pytest.raises(ValueError, match=names_key(key)):
        getattr(sliding(Day(), 7), method)(key)


@given(
    year=st.sampled_from([3, 4, 5, 6, 7, 9, 2026, 9991, 9993, 9994, 9995, 9996, 9997]),
    periods=st.sampled_from([1, 3, 7]),
    align=st.sampled_from(["trailing", "leading", "centred"]),
)
def test_near_the_ends_of_the_calendar_a_key_feeds_exactly_the_windows_that_can_complete(
    year, periods, align
):
    # No silent hold: a window awaiting a key outside the years 0003 to 9997 (refused on arrival)
    # could never complete, so no key opens it; the key feeds its other windows, or is refused
    # if it has none (a 7-year leading window on 9997 once reached 10003, and the scheduler's
    # to_upstream raised on every loop).
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Year()), window=SlidingWindow(Year(), periods, align=align)
    )
    key = f"{year:04d}-06-01T00"
    first = {"trailing": 1 - periods, "leading": 0, "centred": -(periods // 2)}[align]
    # The window named D awaits the years D + first … D + first + periods - 1.
    feeds = range(year - first - periods + 1, year - first + 1)
    completable = [f"{d:04d}" for d in feeds if d + first >= 3 and d + first + periods - 1 <= 9997]
    if completable:
        assert rollup.to_downstream(key) == completable
        for window in completable:
            assert f"{year:04d}" in rollup.to_upstream(window)
    else:
        with pytest.raises(ValueError, match=names_key(key) + ".*none could complete"):
            rollup.to_downstream(key)


# -- start: no window waits for periods before the data -----------------------------------------


def test_a_start_opens_no_window_before_the_data_and_refuses_keys_before_it():
    # Days from 2026-02-22 on, as the new user's feed: the trailing windows of 02-22 … 02-27 would
    # each wait for days of February 16 to 26 that never come.
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7, start="2026-02-22")
    )
    assert rollup.to_downstream("2026-02-22") == ["2026-02-28"]
    assert rollup.to_downstream("2026-02-25T10:00:00Z") == [
        "2026-02-28",
        "2026-03-01",
        "2026-03-02",
        "2026-03-03",
    ]
    assert rollup.to_downstream("2026-03-02") == [f"2026-03-{d:02d}" for d in range(2, 9)]
    assert rollup.to_upstream("2026-02-28") == frozenset(f"2026-02-{d}" for d in range(22, 29))
    with pytest.raises(
        OutsideCalendar, match=re.escape("'2026-02-27': its window starts at '2026-02-21', before")
    ):
        rollup.to_upstream("2026-02-27")
    with pytest.raises(
        OutsideCalendar, match=names_key("2026-02-21") + r" is before the SlidingWindow's start '2026-02-22'"
    ):
        rollup.to_downstream("2026-02-21")


@pytest.mark.parametrize(
    ("start", "why"),
    [
        ("March", "is not an ISO 8601 date"),
        ("2026-02-22T05", "2026-02-22T05"),
        ("0001-01-01", "years 0003 to 9997"),  # the window's keys could not be read
        ("9999-12-25", "years 0003 to 9997"),  # nor held by a datetime
    ],
)
def test_a_start_that_is_not_a_key_of_the_grain_in_range_is_refused_at_parse(start, why):
    with pytest.raises(
        ValueError, match=rf"SlidingWindow: start must be a key of Day\(.*got '{start}'.*{why}"
    ):
        SlidingWindow(Day(), 7, start=start)


def test_a_window_with_a_start_round_trips_and_differs_from_one_without():
    window = SlidingWindow(Day(), 7, start="2026-01-01")
    assert SlidingWindow.deserialize(json.loads(json.dumps(window.serialize()))) == window
    assert window != SlidingWindow(Day(), 7)
    assert "start" not in SlidingWindow(Day(), 7).serialize()  # the stored form without one is unchanged


@given(
    shape=window_shapes(), start=st.dates(date(2026, 1, 1), date(2026, 12, 31)), ahead=st.integers(-45, 45)
)
def test_with_a_start_a_key_feeds_exactly_the_windows_whose_members_all_come_from_it_on(shape, start, ahead):
    align, periods = shape
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()),
        window=SlidingWindow(Day(), periods, align=align, start=str(start)),
    )
    day = start + timedelta(days=ahead)
    first = first_member(align, periods)
    # The windows holding the day, by the calendar, kept where their first member is not before start.
    windows = [day - timedelta(days=first + periods - 1 - n) for n in range(periods)]
    opened = [window.isoformat() for window in windows if window + timedelta(days=first) >= start]
    if not opened:
        assert day < start
        with pytest.raises(OutsideCalendar, match="before the SlidingWindow's start"):
            rollup.to_downstream(day.isoformat())
        return
    assert feeds(rollup, day.isoformat()) == opened
    for window in opened:  # u in to_upstream(D) for every D it feeds, all members from start on
        members = rollup.to_upstream(window)
        assert day.isoformat() in members and min(members) >= start.isoformat()
