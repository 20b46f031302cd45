"""
CompositeKeyMapper, DimensionWindow, DimensionRollupMapper and DimensionFanOutMapper.

Expected keys are written out by hand (a New York day has 23 hours on 2026-03-08, when clocks
skip 02:00 to 03:00 EST to EDT, and 25 on 2026-11-01, when 01:00 repeats), or computed in the
test from :mod:`zoneinfo`, never by the code under test.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.identity import IdentityMapper
from airflow.partition_mappers.product import ProductMapper
from airflow.partition_mappers.temporal import StartOfDayMapper
from airflow.partition_mappers.window import DayWindow
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionFanOutMapper,
    DimensionRollupMapper,
    DimensionWindow,
    Hour,
    IsoWeek,
    LookupMapper,
    Month,
    SlidingWindow,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalWindow,
    Year,
)
from tests.unit.support import assert_maps_alike, configured_instances, names_key, offset_changes, utc

NEW_YORK = "America/New_York"
ISSUE_KEY = "us|east|2026-03-10T09:00:00"
DIMENSIONS = ["region", "zone", "time"]
BY_DAY = {"time": TemporalMapper(Day())}


def rollup_of_hours(zone: str = "UTC", **kwargs) -> DimensionRollupMapper:
    """Per-region hours into days: ``eu|2026-03-10T09`` -> ``eu|2026-03-10``."""
    return DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day(timezone=zone))}),
        window=DimensionWindow(time=TemporalWindow(Hour(timezone=zone))),
        **kwargs,
    )


def fan_out_to_hours(zone: str = "UTC", **kwargs) -> DimensionFanOutMapper:
    """The mirror: ``eu|2026-03-10`` -> ``eu|2026-03-10T00`` ... ``eu|2026-03-10T23``."""
    return DimensionFanOutMapper(
        upstream_mapper=CompositeKeyMapper(["region", "day"], {"day": TemporalMapper(Day(timezone=zone))}),
        window=DimensionWindow(day=TemporalWindow(Hour(timezone=zone))),
        **kwargs,
    )


def rollup_of_regions(regions: list[str], **kwargs) -> DimensionRollupMapper:
    """Across a fixed list of regions, per day: ``eu|2026-03-10`` -> ``2026-03-10``."""
    return DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "day"], output=["day"], **kwargs),
        window=DimensionWindow(region=regions),
    )


def utc_hour_keys(prefix: str, day: str) -> list[str]:
    """``prefix|YYYY-MM-DDTHH`` for the 24 hours of a UTC *day*."""
    return [f"{prefix}|{day}T{h:02d}" for h in range(24)]


# -- CompositeKeyMapper ----------------------------------------------------------------------------


def test_issue_case_maps_the_time_dimension_to_its_day_and_keeps_the_others():
    assert CompositeKeyMapper(DIMENSIONS, BY_DAY).to_downstream(ISSUE_KEY) == "us|east|2026-03-10"


def test_cores_two_mapper_product_mapper_cannot_read_the_three_segment_key():
    core = ProductMapper(IdentityMapper(), TemporalMapper(Day()))
    with pytest.raises(ValueError, match="Expected 2 segments in key, got 3"):
        core.to_downstream(ISSUE_KEY)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (["region"], "us"),
        (["zone"], "east"),
        (["time", "region"], "2026-03-10|us"),
        (["zone", "region", "time"], "east|us|2026-03-10"),
        (["time"], "2026-03-10"),
    ],
)
def test_output_selects_drops_and_reorders_dimensions(output, expected):
    assert CompositeKeyMapper(DIMENSIONS, BY_DAY, output=output).to_downstream(ISSUE_KEY) == expected


def test_each_dimension_is_mapped_by_its_own_mapper():
    mapper = CompositeKeyMapper(
        ["store", "time"], {"store": LookupMapper({"store-001": "eu"}), "time": TemporalMapper(Hour())}
    )
    assert mapper.to_downstream("store-001|2026-03-10T09:15:00+01:00") == "eu|2026-03-10T08"


def test_a_dimension_that_fans_out_gives_every_combination():
    mapper = CompositeKeyMapper(
        ["region", "time"],
        {"region": LookupMapper({"eu": ["store-2", "store-1"]}), "time": TemporalMapper(Day())},
    )
    assert mapper.to_downstream("eu|2026-03-10T09") == ["store-1|2026-03-10", "store-2|2026-03-10"]
    assert mapper.largest_fan_out == 2


def test_a_fan_out_above_the_cap_is_refused_at_parse():
    stores = LookupMapper({"eu": ["store-1", "store-2", "store-3"]})
    with pytest.raises(ValueError, match="maps to 3 downstream keys, more than max_downstream_keys=2"):
        CompositeKeyMapper(["region", "day"], {"region": stores}, max_downstream_keys=2)
    assert (
        CompositeKeyMapper(["region", "day"], {"region": stores}, max_downstream_keys=3).largest_fan_out == 3
    )
    # A dimension the output drops does not fan out.
    assert CompositeKeyMapper(["region", "day"], {"region": stores}, output=["day"]).largest_fan_out == 1


@pytest.mark.parametrize(
    ("delimiter", "key", "expected"),
    [
        ("/", "us/east/2026-03-10T09:00:00", "us/east/2026-03-10"),
        ("::", "us::east::2026-03-10T09:00:00", "us::east::2026-03-10"),
        (",", "us,east,2026-03-10T23:59:59-05:00", "us,east,2026-03-11"),
    ],
)
def test_any_delimiter(delimiter, key, expected):
    assert CompositeKeyMapper(DIMENSIONS, BY_DAY, delimiter=delimiter).to_downstream(key) == expected


@pytest.mark.parametrize(
    "key",
    ["us|2026-03-10T09:00:00", "us|east|west|2026-03-10T09:00:00", "us||2026-03-10T09:00:00", "|east|x", ""],
)
def test_a_key_with_the_wrong_segments_is_refused_naming_it(key):
    with pytest.raises(ValueError, match=names_key(key)):
        CompositeKeyMapper(DIMENSIONS, BY_DAY).to_downstream(key)


def test_a_dimension_mappers_error_names_the_key_and_the_dimension():
    key = "us|east|2026-02-30T09:00:00"
    with pytest.raises(ValueError, match=names_key(key) + ".*'time'.*'2026-02-30T09:00:00'"):
        CompositeKeyMapper(DIMENSIONS, BY_DAY).to_downstream(key)


def test_a_non_string_key_is_refused_naming_it():
    with pytest.raises(ValueError, match="20260310"):
        CompositeKeyMapper(DIMENSIONS, BY_DAY).to_downstream(20260310)


def test_a_mapped_segment_containing_the_delimiter_is_refused_without_an_escape():
    mapper = CompositeKeyMapper(["region", "day"], {"region": LookupMapper({"na": "us|ca"})})
    with pytest.raises(ValueError, match=names_key("na|2026-03-10") + ".*'us\\|ca'.*delimiter"):
        mapper.to_downstream("na|2026-03-10")


def test_with_an_escape_a_mapped_segment_containing_the_delimiter_is_escaped():
    mapper = CompositeKeyMapper(["region", "day"], {"region": LookupMapper({"na": "us|ca"})}, escape="\\")
    assert mapper.to_downstream("na|2026-03-10") == r"us\|ca|2026-03-10"


def test_with_an_escape_keys_are_read_with_escaped_delimiters_and_escapes():
    mapper = CompositeKeyMapper(["path", "day"], escape="\\")
    assert mapper.split(r"a\|b\\c|2026-03-10") == {"path": "a|b\\c", "day": "2026-03-10"}
    assert mapper.to_downstream(r"a\|b\\c|2026-03-10") == r"a\|b\\c|2026-03-10"
    assert mapper.join(["a|b\\c", "2026-03-10"], "source") == r"a\|b\\c|2026-03-10"


@pytest.mark.parametrize("key", ["a\\x|2026-03-10", "a|2026-03-10\\"])
def test_a_dangling_escape_is_refused_naming_the_key(key):
    with pytest.raises(ValueError, match=names_key(key)):
        CompositeKeyMapper(["path", "day"], escape="\\").to_downstream(key)


def test_an_output_longer_than_250_characters_is_refused_naming_the_key():
    longest = "x" * 200 + "|" + "y" * 49
    assert CompositeKeyMapper(["a", "b"]).to_downstream(longest) == longest  # 250 characters
    too_long = longest + "y"
    with pytest.raises(ValueError, match=names_key(too_long) + ".*251 characters"):
        CompositeKeyMapper(["a", "b"]).to_downstream(too_long)


@pytest.mark.parametrize("key", ["eu|", "|2026-03-10T09", " |2026-03-10T09", "eu|\t", "eu||2026-03-10T09"])
def test_an_empty_or_blank_segment_is_refused_naming_the_key(key):
    # Airflow refuses a whole key of only whitespace; a blank dimension is refused the same way,
    # instead of opening a pending run for region " " that no producer means.
    with pytest.raises(ValueError, match=names_key(key) + ".*non-blank segments"):
        CompositeKeyMapper(["region", "time"]).to_downstream(key)


ADVERSARIAL_KEYS = [
    "a" * 10_000,  # one segment
    "a" * 5_000 + "|" + "b" * 4_999,  # the right segment count, far too long
    "|" * 10_000,  # ten thousand empty segments
    "\\" * 10_000,  # ten thousand escapes
    "\\|" * 5_000,  # one segment of five thousand escaped delimiters
]


@pytest.mark.parametrize("key", ADVERSARIAL_KEYS, ids=range(len(ADVERSARIAL_KEYS)))
@pytest.mark.parametrize("escape", [None, "\\"])
def test_adversarial_10000_character_key_is_refused_naming_it(key, escape):
    assert len(key) == 10_000
    with pytest.raises(ValueError, match=names_key(key)):
        CompositeKeyMapper(["a", "b"], escape=escape).to_downstream(key)


@pytest.mark.parametrize(
    ("args", "kwargs", "named"),
    [
        (["region"], {}, "'region'"),  # a string, not a list of names
        ([[]], {}, "[]"),
        ([["region", "time-of-day"]], {}, "'time-of-day'"),
        ([["region", "region"]], {}, "['region', 'region']"),
        ([["region", "day"], {"zone": IdentityMapper()}], {}, "['zone']"),
        ([["region", "day"]], {"output": ["zone"]}, "['zone']"),
        ([["region", "day"]], {"output": ["day", "day"]}, "['day', 'day']"),
        ([["region", "day"]], {"delimiter": ""}, "delimiter"),
        ([["region", "day"]], {"escape": "\\\\"}, "'\\\\\\\\'"),
        ([["region", "day"]], {"escape": "|"}, "'|'"),
        ([["region", "day"]], {"delimiter": "<>", "escape": ">"}, "'>'"),
    ],
)
def test_bad_layout_is_refused_at_parse_naming_it(args, kwargs, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        CompositeKeyMapper(*args, **kwargs)


def test_decode_downstream_gives_each_output_dimension_decoded_by_its_mapper():
    decoded = CompositeKeyMapper(DIMENSIONS, BY_DAY, output=["time", "region"]).decode_downstream(
        "2026-03-10|us"
    )
    assert decoded.keys() == {"time", "region"}
    assert decoded["region"] == "us"
    assert decoded["time"].utc == (utc("2026-03-10T00:00Z"), utc("2026-03-11T00:00Z"))


@pytest.mark.parametrize(
    ("mappers", "output", "key", "expected"),
    [
        ({"time": TemporalMapper(Day(timezone=NEW_YORK))}, None, "us|east|2026-03-10", "2026-03-10T04:00Z"),
        ({"time": TemporalMapper(Day(timezone=NEW_YORK))}, ["region"], "us", None),
        (
            {"time": TemporalMapper(Day()), "zone": TemporalMapper(Day())},
            None,
            "us|2026-03-09|2026-03-10",
            None,
        ),
        ({"time": TemporalMapper(Day())}, None, "not|a|2026-03-10|key", None),
    ],
)
def test_partition_date_is_the_one_date_dimensions_start(mappers, output, key, expected):
    date_ = CompositeKeyMapper(DIMENSIONS, mappers, output=output).to_partition_date(key)
    assert date_ == (None if expected is None else utc(expected))


def test_composite_round_trip_through_airflows_serialization_behaves_identically():
    mapper = CompositeKeyMapper(
        DIMENSIONS, {"time": TemporalMapper(Day(timezone=NEW_YORK))}, output=["time", "zone"], escape="~"
    )
    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(mapper))))
    assert type(rebuilt) is CompositeKeyMapper
    assert rebuilt == mapper
    assert hash(rebuilt) == hash(mapper)
    key = "us|e~|st|2026-03-11T03:30:00Z"
    assert rebuilt.to_downstream(key) == mapper.to_downstream(key) == "2026-03-10|e~|st"


def test_sdk_mappers_are_taken_as_the_core_mappers_the_scheduler_sees():
    from airflow.sdk import IdentityMapper as SdkIdentityMapper

    mapper = CompositeKeyMapper(["region", "day"], {"region": SdkIdentityMapper()})
    assert type(mapper.mappers["region"]) is IdentityMapper
    assert mapper.to_downstream("eu|2026-03-10") == "eu|2026-03-10"


# Blank segments (only whitespace), and whitespace around a segment, are refused: never generated.
segment_text = st.text(
    st.sampled_from("|/,\\~a ") | st.characters(codec="utf-8"), min_size=1, max_size=40
).filter(lambda segment: segment.strip() == segment)


@pytest.mark.parametrize("key", ["eu |2026-03-10T09", " eu|2026-03-10T09", "eu|\t2026-03-10T09"])
def test_whitespace_around_a_segment_is_refused_naming_it(key):
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    )
    with pytest.raises(
        ValueError, match=names_key(key) + r" has whitespace around its '(region|time)' segment"
    ):
        rollup.to_downstream(key)
    assert rollup.to_downstream("eu|2026-03-10T09") == "eu|2026-03-10"  # the same key without it


@given(
    delimiter=st.sampled_from(["|", "/", ",", ":"]),
    escape=st.sampled_from(["\\", "~"]),
    segments=st.lists(segment_text, min_size=1, max_size=3),
)
def test_with_an_escape_every_list_of_segments_splits_back_from_its_join(delimiter, escape, segments):
    names = [f"d{n}" for n in range(len(segments))]
    mapper = CompositeKeyMapper(names, delimiter=delimiter, escape=escape)
    key = mapper.join(segments, "source")
    assert mapper.split(key) == dict(zip(names, segments, strict=True))
    assert mapper.to_downstream(key) == key
    unescaped = key.replace(escape + escape, "").replace(escape + delimiter, "")
    assert unescaped.count(delimiter) == len(segments) - 1


@pytest.mark.parametrize("escape", [None, "\\"])
def test_a_segment_that_would_merge_with_a_multi_character_delimiter_is_refused(escape):
    # 'a:' + '::' + 'b' is 'a:::b', which reads back as 'a' and ':b'.
    mapper = CompositeKeyMapper(
        ["a", "b"], {"a": LookupMapper({"k": "a:", "j": "a"})}, delimiter="::", escape=escape
    )
    with pytest.raises(ValueError, match=r"'k::b'.*would be read back"):
        mapper.to_downstream("k::b")
    assert mapper.to_downstream("j::b") == "a::b"


@given(segments=st.lists(st.text(alphabet=":ab", min_size=1, max_size=4), min_size=2, max_size=3))
def test_with_a_multi_character_delimiter_a_join_reads_back_or_is_refused(segments):
    names = [f"d{n}" for n in range(len(segments))]
    mapper = CompositeKeyMapper(names, delimiter="::", escape="\\")
    try:
        key = mapper.join(segments, "source")
    except ValueError as err:
        assert "would be read back" in str(err)
        return
    assert mapper.split(key) == dict(zip(names, segments, strict=True))


# -- DimensionRollupMapper -------------------------------------------------------------------------


def test_hourly_per_region_keys_roll_up_into_the_regions_day():
    rollup = rollup_of_hours()
    assert rollup.to_downstream("eu|2026-03-10T09") == "eu|2026-03-10"
    assert rollup.to_upstream("eu|2026-03-10") == frozenset(utc_hour_keys("eu", "2026-03-10"))
    assert rollup.to_upstream("us|2026-03-10") == frozenset(utc_hour_keys("us", "2026-03-10"))
    assert rollup.to_partition_date("eu|2026-03-10") == utc("2026-03-10T00:00Z")


def test_each_region_waits_only_for_its_own_hours():
    policy = rollup_of_hours().wait_policy
    expected = rollup_of_hours().to_upstream("eu|2026-03-10")
    all_of_us = frozenset(utc_hour_keys("us", "2026-03-10"))
    eu_missing_one = frozenset(utc_hour_keys("eu", "2026-03-10")[:-1])
    assert not policy.is_satisfied_by_keys(matched=all_of_us | eu_missing_one, expected=expected).satisfied
    assert policy.is_satisfied_by_keys(matched=expected, expected=expected).satisfied


def test_cores_rollup_mapper_refuses_a_product_mapper():
    with pytest.raises(TypeError, match="ProductMapper"):
        RollupMapper(upstream_mapper=ProductMapper(IdentityMapper(), StartOfDayMapper()), window=DayWindow())


@pytest.mark.parametrize(("day", "hours"), [("2026-03-08", 23), ("2026-03-10", 24), ("2026-11-01", 25)])
def test_a_new_york_day_waits_for_its_real_hours(day, hours):
    assert len(rollup_of_hours(NEW_YORK).to_upstream(f"eu|{day}")) == hours


def test_new_york_spring_forward_and_fall_back_hours_by_hand():
    rollup = rollup_of_hours(NEW_YORK)
    spring = ["eu|2026-03-08T00-05:00", "eu|2026-03-08T01-05:00"] + [
        f"eu|2026-03-08T{h:02d}-04:00" for h in range(3, 24)
    ]
    fall = ["eu|2026-11-01T00-04:00", "eu|2026-11-01T01-04:00"] + [
        f"eu|2026-11-01T{h:02d}-05:00" for h in range(1, 24)
    ]
    assert rollup.to_upstream("eu|2026-03-08") == frozenset(spring)
    assert rollup.to_upstream("eu|2026-11-01") == frozenset(fall)
    assert {rollup.to_downstream(key) for key in spring} == {"eu|2026-03-08"}


def test_categorical_rollup_across_a_fixed_region_list_into_the_day():
    rollup = rollup_of_regions(["us", "eu", "apac"])
    assert rollup.to_downstream("eu|2026-03-10") == "2026-03-10"
    assert rollup.to_upstream("2026-03-10") == {"apac|2026-03-10", "eu|2026-03-10", "us|2026-03-10"}
    with pytest.raises(
        ValueError, match=re.escape("dimension 'region' is 'mars', not one of ['apac', 'eu', 'us']")
    ):
        rollup.to_downstream("mars|2026-03-10")  # never awaited: refused on arrival


def test_a_list_and_a_window_at_once_wait_for_every_combination():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["region", "time"], {"time": TemporalMapper(Day())}, output=["time"]
        ),
        window=DimensionWindow(region=["eu", "us"], time=TemporalWindow(Hour())),
    )
    assert rollup.to_downstream("us|2026-03-10T23") == "2026-03-10"
    assert rollup.to_upstream("2026-03-10") == frozenset(
        utc_hour_keys("eu", "2026-03-10") + utc_hour_keys("us", "2026-03-10")
    )


def test_rollup_round_trip_through_airflows_serialization_behaves_identically():
    rollup = rollup_of_hours(NEW_YORK)
    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(rollup))))
    assert type(rebuilt) is DimensionRollupMapper
    assert type(rebuilt.window) is DimensionWindow
    assert rebuilt.to_upstream("eu|2026-11-01") == rollup.to_upstream("eu|2026-11-01")
    assert rebuilt.to_downstream("eu|2026-11-01T06:30Z") == "eu|2026-11-01"


def _hourly(output: list[str] | None = None, mappers: dict | None = None) -> CompositeKeyMapper:
    return CompositeKeyMapper(
        ["region", "time"], {"time": TemporalMapper(Day())} if mappers is None else mappers, output=output
    )


@pytest.mark.parametrize(
    ("mapper", "window", "named"),
    [
        (TemporalMapper(Day()), DimensionWindow(time=TemporalWindow(Hour())), "TemporalMapper"),
        (_hourly(), TemporalWindow(Hour()), "TemporalWindow"),
        (_hourly(), DimensionWindow(zone=["a"]), "'zone'"),
        (_hourly(), DimensionWindow(region=["eu"]), "'region' is kept"),
        (_hourly(["region"]), DimensionWindow(time=TemporalWindow(Hour())), "'time' is dropped"),
        (_hourly(["time"]), DimensionWindow(time=TemporalWindow(Hour())), "['region']"),
        (
            _hourly(mappers={}),
            DimensionWindow(time=TemporalWindow(Hour())),
            "the window for 'time' (TemporalWindow) does not fit",
        ),
    ],
)
def test_a_rollup_whose_mapper_and_window_do_not_fit_is_refused_at_parse(mapper, window, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        DimensionRollupMapper(upstream_mapper=mapper, window=window)


@pytest.mark.parametrize(
    ("windows", "named"),
    [
        ({}, "at least one dimension"),
        ({"region": "eu"}, "region"),
        ({"region": []}, "region"),
        ({"region": ["eu", "  "]}, "region"),
        ({"region": ["eu", "eu"]}, "['eu', 'eu']"),
        ({"region": 5}, "5"),
    ],
)
def test_a_bad_dimension_window_is_refused_at_parse_naming_it(windows, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        DimensionWindow(**windows)


#: Region values as a producer writes them: not blank, no whitespace around them (both refused).
regions = st.text(st.characters(codec="utf-8", exclude_characters="|"), min_size=1, max_size=20).filter(
    lambda region: region.strip() == region != ""
)
ROLLUP_ZONES = ["UTC", NEW_YORK, "Europe/Berlin", "Asia/Kolkata"]


@st.composite
def local_days(draw) -> tuple[str, date]:
    """A zone and a date in it, half of them the date of one of its offset changes."""
    zone = draw(st.sampled_from(ROLLUP_ZONES))
    day = draw(st.dates(date(1990, 1, 1), date(2060, 12, 31)))
    changes = offset_changes(
        zone, datetime(day.year, 1, 1, tzinfo=UTC), datetime(day.year, 12, 31, tzinfo=UTC)
    )
    if changes and draw(st.booleans()):
        day = draw(st.sampled_from(changes))[0].astimezone(ZoneInfo(zone)).date()
    return zone, day


def hours_in(zone: str, day: date) -> int:
    """Real hours from local midnight to the next, read off :mod:`zoneinfo` (no midnight is skipped)."""
    tz = ZoneInfo(zone)
    start = datetime.combine(day, datetime.min.time(), tz).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tz).astimezone(UTC)
    return (end - start) // timedelta(hours=1)


@given(region=regions, zone_day=local_days())
def test_every_awaited_hour_of_a_region_routes_back_to_its_day(region, zone_day):
    zone, day = zone_day
    rollup = rollup_of_hours(zone)
    downstream = f"{region}|{day.isoformat()}"
    awaited = rollup.to_upstream(downstream)
    assert len(awaited) == hours_in(zone, day)
    assert {rollup.to_downstream(key) for key in awaited} == {downstream}
    assert all(key.startswith(region + "|") for key in awaited)


@given(
    names=st.lists(regions, min_size=1, max_size=6, unique=True),
    day=st.dates(date(1990, 1, 1), date(2060, 12, 31)),
    escape=st.sampled_from([None, "\\"]),
)
def test_every_awaited_region_routes_back_to_its_day(names, day, escape):
    rollup = rollup_of_regions(names, escape=escape)
    awaited = rollup.to_upstream(day.isoformat())
    assert len(awaited) == len(names)
    assert {rollup.to_downstream(key) for key in awaited} == {day.isoformat()}


@given(
    region=st.text(st.sampled_from("|\\a") | st.characters(codec="utf-8"), min_size=1, max_size=20).filter(
        lambda region: region.strip() == region != ""
    )
)
def test_an_escaped_region_with_delimiters_routes_back_to_its_day(region):
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}, escape="\\"),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    )
    downstream = rollup.upstream_mapper.join([region, "2026-03-10"], "test")
    awaited = rollup.to_upstream(downstream)
    assert len(awaited) == 24
    assert {rollup.to_downstream(key) for key in awaited} == {downstream}


@pytest.mark.parametrize(
    ("method", "key"),
    [
        ("to_downstream", "eu"),
        ("to_downstream", "eu|2026-02-30T09"),
        ("to_upstream", "eu|2026-02-30"),
        ("to_upstream", "eu|2026-03-10T05"),  # not a key the rollup writes
        ("to_upstream", "eu|2026-03-10|x"),
    ],
)
def test_rollup_errors_at_mapping_time_name_the_key(method, key):
    with pytest.raises(ValueError, match=names_key(key)):
        getattr(rollup_of_hours(), method)(key)


# -- DimensionFanOutMapper -------------------------------------------------------------------------


def test_mirror_fan_out_turns_a_regions_day_into_its_24_hours_in_order():
    assert list(fan_out_to_hours().to_downstream("eu|2026-03-10")) == utc_hour_keys("eu", "2026-03-10")


def test_mirror_fan_out_of_a_new_york_fall_back_day_runs_25_hours():
    keys = list(fan_out_to_hours(NEW_YORK, max_downstream_keys=25).to_downstream("us|2026-11-01"))
    assert keys == ["us|2026-11-01T00-04:00", "us|2026-11-01T01-04:00"] + [
        f"us|2026-11-01T{h:02d}-05:00" for h in range(1, 24)
    ]


def test_fan_out_largest_output_is_checked_at_parse():
    with pytest.raises(
        ValueError, match=r"day period '2028-11-05'.* 25 downstream keys.*max_downstream_keys=24"
    ):
        fan_out_to_hours(NEW_YORK, max_downstream_keys=24)
    with pytest.raises(ValueError, match="24 downstream keys, more than max_downstream_keys=23"):
        fan_out_to_hours(max_downstream_keys=23)
    assert len(list(fan_out_to_hours(max_downstream_keys=24).to_downstream("eu|2026-03-10"))) == 24


def test_fan_out_over_listed_values_needs_a_downstream_mapper_and_counts_them():
    upstream = CompositeKeyMapper(["region", "day"], {"day": TemporalMapper(Day())}, output=["day"])
    window = DimensionWindow(region=["eu", "us"], day=TemporalWindow(Hour()))
    with pytest.raises(ValueError, match="downstream_mapper"):
        DimensionFanOutMapper(upstream_mapper=upstream, window=window)
    writer = CompositeKeyMapper(["region", "day"], {"day": TemporalMapper(Hour())})
    with pytest.raises(ValueError, match="48 downstream keys, more than max_downstream_keys=47"):
        DimensionFanOutMapper(
            upstream_mapper=upstream, window=window, downstream_mapper=writer, max_downstream_keys=47
        )
    fan_out = DimensionFanOutMapper(upstream_mapper=upstream, window=window, downstream_mapper=writer)
    keys = list(fan_out.to_downstream("any|2026-03-10"))
    assert sorted(keys) == sorted(utc_hour_keys("eu", "2026-03-10") + utc_hour_keys("us", "2026-03-10"))


def test_fan_out_errors_at_mapping_time_name_the_key():
    with pytest.raises(ValueError, match=names_key("eu|2026-02-30")):
        list(fan_out_to_hours().to_downstream("eu|2026-02-30"))


def test_fan_out_round_trip_through_airflows_serialization_behaves_identically():
    fan_out = fan_out_to_hours(NEW_YORK, max_downstream_keys=25)
    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(fan_out))))
    assert type(rebuilt) is DimensionFanOutMapper
    assert rebuilt.max_downstream_keys == 25
    assert list(rebuilt.to_downstream("eu|2026-03-08")) == list(fan_out.to_downstream("eu|2026-03-08"))
    assert rebuilt.to_partition_date("eu|2026-03-08T03-04:00") == utc("2026-03-08T07:00Z")


# -- configured instances, rebuilt -----------------------------------------------------------------

CONFIGURED = configured_instances()
composite_parts = st.one_of(
    st.sampled_from(
        ["store-1", "store-9", "east", "2026-03-10T09:00:00", "2026-11-01T01:30-05:00", "~~", "~::"]
    ),
    st.text(st.sampled_from(":~a1-T") | st.characters(codec="utf-8"), max_size=12),
)


@given(parts=st.lists(composite_parts, min_size=1, max_size=4))
def test_rebuilt_composite_mapper_and_rollup_map_every_key_like_the_originals(parts):
    key = "::".join(parts)
    for name in ("CompositeKeyMapper", "DimensionRollupMapper"):
        original = CONFIGURED[name]
        rebuilt = type(original).deserialize(json.loads(json.dumps(original.serialize())))
        assert_maps_alike(original, rebuilt, key)
    rollup = CONFIGURED["DimensionRollupMapper"]
    rebuilt = type(rollup).deserialize(json.loads(json.dumps(rollup.serialize())))
    try:
        downstream = rollup.to_downstream(key)
    except ValueError:
        return
    for one in [downstream] if isinstance(downstream, str) else downstream:
        assert rebuilt.to_upstream(one) == rollup.to_upstream(one)


def test_a_fan_out_adds_a_dimension_from_a_list_of_its_values():
    fan_out = DimensionFanOutMapper(
        upstream_mapper=CompositeKeyMapper(["day"], {"day": TemporalMapper(Day())}),
        window=DimensionWindow(region=["us", "eu"]),
        downstream_mapper=CompositeKeyMapper(["region", "day"], {"day": TemporalMapper(Day())}),
    )
    assert fan_out.to_downstream("2026-03-10T09:00") == ["eu|2026-03-10", "us|2026-03-10"]
    with pytest.raises(ValueError, match="needs an explicit downstream_mapper"):
        DimensionFanOutMapper(
            upstream_mapper=CompositeKeyMapper(["day"]), window=DimensionWindow(region=["eu"])
        )
    with pytest.raises(ValueError, match="names 'region', not a dimension"):
        DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["day"]), window=DimensionWindow(region=["eu"])
        )


@pytest.mark.parametrize(
    ("mappers", "window", "match"),
    [
        # Naive UTC hour keys read in New York time: 2026-01-15T02 (UTC) is still the 14th in New York.
        (
            {"time": TemporalMapper(Day(timezone=NEW_YORK))},
            DimensionWindow(time=TemporalWindow(Hour())),
            r"'x\|2026-01-14' would wait forever: it waits for 'x\|2026-01-15T02', "
            r"which maps to 'x\|2026-01-15'",
        ),
        # A kept dimension whose mapper cannot map its own output (a region) back to itself.
        (
            {"time": TemporalMapper(Day()), "a": LookupMapper({"s1": "eu", "s2": "eu"})},
            DimensionWindow(time=TemporalWindow(Hour())),
            r"would wait forever.*'x' is not in the lookup table",
        ),
        (
            {"time": TemporalMapper(Day())},
            DimensionWindow(time=SlidingWindow(Day(), 7)),
            "only in TemporalRollupMapper",
        ),
        ({"time": TemporalMapper(Month())}, DimensionWindow(time=TemporalWindow(IsoWeek())), "do not tile"),
    ],
)
def test_a_dimension_rollup_that_would_wait_forever_is_refused_at_parse(mappers, window, match):
    with pytest.raises(ValueError, match=match):
        DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(["a", "time"], mappers), window=window)


def test_a_fan_out_nested_in_a_dimension_counts_towards_the_cap_at_parse():
    hours_of_a_year = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Year()), window=TemporalWindow(Hour()), max_downstream_keys=9000
    )
    # 2028 is a leap year: 366 * 24 = 8784 hours.
    with pytest.raises(ValueError, match="maps to 8784 downstream keys"):
        CompositeKeyMapper(["a", "t"], {"t": hours_of_a_year})
    assert (
        CompositeKeyMapper(["a", "t"], {"t": hours_of_a_year}, max_downstream_keys=8784).largest_fan_out
        == 8784
    )


def test_a_fan_out_inside_a_dimension_fan_out_is_refused_at_parse():
    with pytest.raises(ValueError, match="no fan-out inside a fan-out"):
        DimensionFanOutMapper(
            upstream_mapper=CompositeKeyMapper(
                ["region", "day"],
                {"region": LookupMapper({"eu": ["de", "fr"]}), "day": TemporalMapper(Day())},
            ),
            window=DimensionWindow(day=TemporalWindow(Hour())),
        )


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (
            lambda: CompositeKeyMapper(["a"], {"a": TemporalMapper}),
            "dimension 'a' must be a partition mapper",
        ),
        (lambda: CompositeKeyMapper(["a"], {"a": "Day"}), "dimension 'a' must be a partition mapper"),
        (lambda: DimensionWindow(a=TemporalWindow), "a must be a window"),
        (lambda: DimensionWindow(a=TemporalMapper(Hour())), "a must be a window"),
        (
            lambda: DimensionRollupMapper(
                upstream_mapper=CompositeKeyMapper(["a", "d"], output=["d"]),
                window=DimensionWindow(a=["e|u"]),
            ),
            r"a value 'e\|u' must be at most 250 characters without the delimiter",
        ),
    ],
)
def test_building_blocks_of_the_wrong_kind_are_refused_naming_them(build, match):
    with pytest.raises(ValueError, match=match):
        build()
