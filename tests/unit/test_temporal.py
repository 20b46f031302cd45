"""
TemporalMapper, TemporalWindow, TemporalRollupMapper and TemporalFanOutMapper, alone and inside
Airflow's own rollup, fan-out and serialization.

Expected keys are worked out by hand from a calendar and the published DST rules (see
``test_grains.py``), never copied from running the code.
"""

from __future__ import annotations

import inspect
import json
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import FanOutMapper, StartOfDayMapper
from airflow.partition_mappers.wait_policy import MinimumCount
from airflow.partition_mappers.window import DayWindow
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from airflow.timetables.trigger import CronPartitionTimetable
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from airflow_partitions.grains import (
    Cron,
    Day,
    Grain,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    Period,
    Quarter,
    Week,
    Year,
)
from airflow_partitions.grains.keys import parse_instant
from airflow_partitions.temporal import (
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)
from tests.unit.support import configured_temporal_instances, known_bug, offset_changes, run_python, utc

HOUR = timedelta(hours=1)
NEW_YORK = "America/New_York"


def utc_hours(start: str, count: int) -> list[str]:
    """Hour() keys of *count* consecutive UTC hours from *start*."""
    first = utc(start)
    return [f"{first + i * HOUR:%Y-%m-%dT%H}" for i in range(count)]


# -- any ISO 8601 key in, one canonical key out -------------------------------------------------


def core_cron_partition_key(expression: str, zone: str, day: str) -> str:
    """The partition key core's CronPartitionTimetable (default key_format) writes for a tick on *day*."""
    timetable = CronPartitionTimetable(expression, timezone=zone)
    start = datetime.fromisoformat(day).replace(tzinfo=UTC)
    (info,) = timetable.iter_partition_dagrun_infos(
        earliest=start, latest=start + timedelta(hours=23, minutes=59)
    )
    return info.partition_key


def test_cron_partition_timetable_writes_second_precision_local_keys_by_default():
    default = inspect.signature(CronPartitionTimetable.__init__).parameters["key_format"].default
    assert default == "%Y-%m-%dT%H:%M:%S"
    assert core_cron_partition_key("15 9 * * *", "UTC", "2026-07-30") == "2026-07-30T09:15:00"


SPELLINGS_OF_30_JULY = [
    "2026-07-30",
    "2026-07-30T09",
    "2026-07-30T09:15",
    "2026-07-30T09:15:30.25",
    "2026-07-30T09:15:00Z",
    "2026-07-30T09:15+02:00",
    "2026-07-30T09:15+0200",
    "20260730T0915Z",
    "20260730",
    "2026-07-30 09:15:00",
    "2026-W31-4",  # ISO week date: Thursday of week 31 (week 1 starts Monday 2025-12-29)
    "2026-07-30T23:59:59.999999",
]


@pytest.mark.parametrize("key", SPELLINGS_OF_30_JULY)
def test_every_iso_spelling_of_a_moment_on_30_july_maps_to_the_one_day_key(key):
    assert TemporalMapper(Day()).to_downstream(key) == "2026-07-30"


def test_core_cron_partition_timetables_default_key_maps_to_the_day():
    key = core_cron_partition_key("15 9 * * *", "UTC", "2026-07-30")
    assert TemporalMapper(Day()).to_downstream(key) == "2026-07-30"
    local_key = core_cron_partition_key("15 23 * * *", NEW_YORK, "2026-07-30")  # 03:15 UTC the next day
    assert local_key == "2026-07-30T23:15:00"
    assert TemporalMapper(Day(timezone=NEW_YORK)).to_downstream(local_key) == "2026-07-30"


def test_core_start_of_day_mapper_refuses_a_plain_date_the_motivating_case():
    core = StartOfDayMapper()
    assert core.to_downstream("2026-07-30T09:15:00") == "2026-07-30"
    with pytest.raises(ValueError, match="2026-07-30"):
        core.to_downstream("2026-07-30")
    assert TemporalMapper(Day()).to_downstream("2026-07-30") == "2026-07-30"


def test_an_offset_in_the_key_decides_the_day_not_its_wall_clock():
    mapper = TemporalMapper(Day())
    assert mapper.to_downstream("2026-07-30T01:00+02:00") == "2026-07-29"  # 23:00 UTC
    assert mapper.to_downstream("2026-07-30T23:00-05:00") == "2026-07-31"  # 04:00 UTC
    assert TemporalMapper(Day(timezone=NEW_YORK)).to_downstream("2026-07-31T03:00Z") == "2026-07-30"


@pytest.mark.parametrize(
    ("grain", "key", "expected"),
    [
        (Hour(), "2026-07-30T09:15:30.25", "2026-07-30T09"),
        (Minutes(15), "20260730T0914Z", "2026-07-30T09:00"),
        (Week(), "2026-07-30", "2026-07-27"),
        (Week(start="sunday"), "2026-07-30T09:15Z", "2026-07-26"),
        (IsoWeek(), "2026-07-30", "2026-W31"),
        (Month(), "2026-07-30T09:15+02:00", "2026-07"),
        (Quarter(), "2026-07-30", "2026-Q3"),
        (Year(), "2026-07-30", "2026"),
        (Day(), "2026-Q3", "2026-07-01"),
        (Day(), "2026-07", "2026-07-01"),
        (Day(), "2026", "2026-01-01"),
        (Day(), "2026-W31", "2026-07-27"),
        (Month(), "2026-Q3", "2026-07"),
        (Hour(timezone=NEW_YORK), "2026-07-30T09:15", "2026-07-30T09-04:00"),
        (Cron("0 9-17 * * 1-5", timezone=NEW_YORK), "2026-07-30T19:00", "2026-07-30T17:00-04:00"),
    ],
)
def test_keys_map_to_the_canonical_key_of_their_period(grain, key, expected):
    assert TemporalMapper(grain).to_downstream(key) == expected


@pytest.mark.parametrize(
    "key",
    ["2026-02-30", "2026-13-01", "garbage", "", "2026-07-30T24:01", "2026-W54", "2026-Q0", "30/07/2026"],
)
def test_key_naming_no_date_is_refused_naming_the_key(key):
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        TemporalMapper(Day()).to_downstream(key)


@pytest.mark.parametrize("key", [20260730, None, 2026.0730, b"2026-07-30", datetime(2026, 7, 30)])
def test_non_string_key_is_refused_naming_it(key):
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        TemporalMapper(Day()).to_downstream(key)


def test_input_format_reads_compact_dates_and_refuses_iso_ones():
    mapper = TemporalMapper(Day(), input_format="%Y%m%d")
    assert mapper.to_downstream("20260730") == "2026-07-30"
    with pytest.raises(ValueError, match=re.escape("'2026-07-30'")):
        mapper.to_downstream("2026-07-30")
    with pytest.raises(ValueError, match=re.escape("'20260230'")):
        mapper.to_downstream("20260230")


def test_naive_keys_are_read_in_the_input_timezone_when_one_is_given():
    assert TemporalMapper(Day(timezone=NEW_YORK)).to_downstream("2026-03-11T03") == "2026-03-11"
    utc_keyed = TemporalMapper(Day(timezone=NEW_YORK), input_timezone="UTC")
    assert utc_keyed.to_downstream("2026-03-11T03") == "2026-03-10"  # 23:00 EDT
    assert utc_keyed.to_downstream("2026-03-11T03:00-04:00") == "2026-03-11"  # an offset wins
    assert (
        TemporalMapper(Hour(), input_timezone=NEW_YORK).to_downstream("2026-03-10T09:15") == "2026-03-10T13"
    )
    assert (
        TemporalMapper(Day(), input_timezone="Asia/Kolkata").to_downstream("2026-03-10T03:00") == "2026-03-09"
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"grain": "day"},
        {"grain": None},
        {"grain": Day(), "offset": 1.0},
        {"grain": Day(), "offset": True},
        {"grain": Day(), "offset": "1"},
        {"grain": Day(), "input_format": "YYYYMMDD"},
        {"grain": Day(), "input_format": 5},
        {"grain": Day(), "input_timezone": "Mars/Olympus_Mons"},
        {"grain": Day(), "max_downstream_keys": 0},
    ],
)
def test_mapper_refuses_a_bad_parameter_at_construction(kwargs):
    with pytest.raises(ValueError):
        TemporalMapper(**kwargs)


def test_window_refuses_a_grain_that_is_not_a_grain():
    with pytest.raises(ValueError, match="'hour'"):
        TemporalWindow("hour")


# -- fall-back's repeated hour ---------------------------------------------------------------------


def test_utc_instants_on_the_repeated_hour_map_to_two_keys_and_naive_keys_to_the_first():
    mapper = TemporalMapper(Hour(timezone=NEW_YORK))
    assert mapper.to_downstream("2026-11-01T05:30:00Z") == "2026-11-01T01-04:00"
    assert mapper.to_downstream("2026-11-01T06:30:00Z") == "2026-11-01T01-05:00"
    assert mapper.to_downstream("2026-11-01T01:30") == "2026-11-01T01-04:00"  # first occurrence
    assert mapper.to_downstream("2026-11-01T01:30-05:00") == "2026-11-01T01-05:00"


def test_rollup_of_the_second_repeated_half_hour_waits_for_its_own_quarter_hours():
    # Regression: equal-looking periods once shared the process-wide member memo.
    half, quarter = Minutes(30, timezone=NEW_YORK), Minutes(15, timezone=NEW_YORK)
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(half), window=TemporalWindow(quarter))
    assert rollup.to_upstream("2026-11-01T01:00-04:00") == {
        "2026-11-01T01:00-04:00",
        "2026-11-01T01:15-04:00",
    }
    assert rollup.to_upstream("2026-11-01T01:00-05:00") == {
        "2026-11-01T01:00-05:00",
        "2026-11-01T01:15-05:00",
    }


def test_local_hours_of_new_yorks_fall_back_day_are_25_keys_in_order():
    fan_out = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK)), window=TemporalWindow(Hour(timezone=NEW_YORK))
    )
    keys = list(fan_out.to_downstream("2026-11-01"))
    expected = [
        "2026-11-01T00-04:00",
        "2026-11-01T01-04:00",
        *[f"2026-11-01T{h:02d}-05:00" for h in range(1, 24)],
    ]
    assert keys == expected


# -- offsets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grain", "offset", "key", "expected"),
    [
        (Day(), -1, "2026-03-10T09:00", "2026-03-09"),
        (Day(), -1, "2026-03-01", "2026-02-28"),
        (Day(), -1, "2028-03-01T06:00Z", "2028-02-29"),
        (Day(), -1, "2027-01-01T00:00", "2026-12-31"),
        (Day(), 1, "2026-12-31T23:59:59", "2027-01-01"),
        (Day(), -7, "2026-03-10", "2026-03-03"),
        (Day(timezone=NEW_YORK), -1, "2026-03-09T12:00", "2026-03-08"),
        (Day(timezone=NEW_YORK), 1, "2026-11-01T23:30", "2026-11-02"),
        (Hour(), -1, "2026-01-01T00:30", "2025-12-31T23"),
        (Hour(timezone=NEW_YORK), 1, "2026-11-01T05:30Z", "2026-11-01T01-05:00"),
        (Hour(timezone=NEW_YORK), -1, "2026-03-08T03:30", "2026-03-08T01-05:00"),
        (Month(), -1, "2026-01-15", "2025-12"),
        (Month(), 1, "2026-12-15", "2027-01"),
        (Month(), -12, "2028-02-29", "2027-02"),
        (Quarter(), -1, "2026-02-01", "2025-Q4"),
        (Year(), 1, "2026-06-01", "2027"),
        (IsoWeek(), 1, "2026-12-31", "2027-W01"),
        (IsoWeek(), -1, "2026-01-01", "2025-W52"),
    ],
)
def test_offset_shifts_the_mapped_period_across_month_and_year_ends(grain, offset, key, expected):
    assert TemporalMapper(grain, offset=offset).to_downstream(key) == expected


def test_offset_rollup_waits_for_the_hours_that_map_to_it():
    # offset=-1 writes each hour's day one day earlier (2026-03-10T09 -> 2026-03-09), so the run
    # keyed 2026-03-10 waits for the hours of 2026-03-11.
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(), offset=-1), window=TemporalWindow(Hour())
    )
    assert rollup.to_downstream("2026-03-10T09") == "2026-03-09"
    assert rollup.to_upstream("2026-03-10") == frozenset(utc_hours("2026-03-11T00:00Z", 24))
    assert rollup.to_upstream("2026-02-28") == frozenset(utc_hours("2026-03-01T00:00Z", 24))
    assert rollup.to_upstream("2026-12-31") == frozenset(utc_hours("2027-01-01T00:00Z", 24))
    later = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(), offset=1), window=TemporalWindow(Day())
    )
    assert later.to_downstream("2028-01-31") == "2028-02"
    assert later.to_upstream("2028-03") == frozenset(f"2028-02-{d:02d}" for d in range(1, 30))


def test_offset_mapper_decodes_a_key_to_the_period_it_was_shifted_from():
    mapper = TemporalMapper(Day(), offset=-1)
    decoded = mapper.decode_downstream("2026-03-10")
    assert isinstance(decoded, Period)
    assert decoded.key == "2026-03-11"
    assert mapper.to_partition_date("2026-03-10") == utc("2026-03-10T00:00Z")


# -- composition with Airflow ----------------------------------------------------------------------


def test_core_rollup_of_quarter_hours_into_an_hour():
    rollup = TemporalRollupMapper(upstream_mapper=TemporalMapper(Hour()), window=TemporalWindow(Minutes(15)))
    assert rollup.to_upstream("2026-03-10T09") == {
        "2026-03-10T09:00",
        "2026-03-10T09:15",
        "2026-03-10T09:30",
        "2026-03-10T09:45",
    }
    assert rollup.to_downstream("2026-03-10T09:45") == "2026-03-10T09"
    assert rollup.to_partition_date("2026-03-10T09") == utc("2026-03-10T09:00Z")


def test_utc_hours_of_new_yorks_spring_forward_day_roll_up_with_utc_input_timezone():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    )
    expected = utc_hours("2026-03-08T05:00Z", 23)  # 00:00 EST to 00:00 EDT
    assert rollup.to_upstream("2026-03-08") == frozenset(expected)
    assert {rollup.to_downstream(key) for key in expected} == {"2026-03-08"}
    assert rollup.to_downstream("2026-03-08T04") == "2026-03-07"
    assert rollup.to_downstream("2026-03-09T04") == "2026-03-09"


def test_rollup_with_a_strptime_input_format_writes_and_reads_the_same_keys():
    compact = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(), input_format="%Y%m%dT%H"), window=TemporalWindow(Hour())
    )
    expected = {f"20260310T{h:02d}" for h in range(24)}
    assert compact.to_upstream("2026-03-10") == expected
    assert {compact.to_downstream(key) for key in expected} == {"2026-03-10"}

    with_offset = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK), input_format="%Y-%m-%dT%H%z"),
        window=TemporalWindow(Hour(timezone=NEW_YORK)),
    )
    keys = with_offset.to_upstream("2026-11-01")
    assert len(keys) == 25
    assert {"2026-11-01T01-0400", "2026-11-01T01-0500"} <= keys
    assert {with_offset.to_downstream(key) for key in keys} == {"2026-11-01"}


def test_sdk_rollup_refuses_our_window_at_parse_naming_our_rollup():
    from airflow.sdk import RollupMapper as SdkRollupMapper

    berlin = "Europe/Berlin"
    with pytest.raises(
        TypeError, match=r"works in airflow_partitions. TemporalRollupMapper, not in Airflow.s RollupMapper"
    ):
        SdkRollupMapper(
            upstream_mapper=TemporalMapper(Day(timezone=berlin)), window=TemporalWindow(Hour(timezone=berlin))
        )


def test_our_rollup_of_berlin_hours_survives_airflows_serialization():
    berlin = "Europe/Berlin"
    dag_file = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone=berlin)), window=TemporalWindow(Hour(timezone=berlin))
    )
    encoded = encode_partition_mapper(dag_file)
    scheduler = decode_partition_mapper(json.loads(json.dumps(encoded)))

    assert isinstance(scheduler, TemporalRollupMapper)
    keys = scheduler.to_upstream("2026-03-29")  # 23 hours: 02:00 CET -> 03:00 CEST
    assert keys == {f"2026-03-29T{h:02d}+01:00" for h in (0, 1)} | {
        f"2026-03-29T{h:02d}+02:00" for h in range(3, 24)
    }
    assert scheduler.to_downstream("2026-03-29T01:30Z") == "2026-03-29"
    assert scheduler.to_partition_date("2026-03-29") == utc("2026-03-28T23:00Z")
    assert encode_partition_mapper(scheduler) == encoded


def test_sdk_fan_out_with_our_classes_survives_airflows_serialization():
    from airflow.sdk import FanOutMapper as SdkFanOutMapper

    dag_file = SdkFanOutMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK)),
        window=TemporalWindow(Hour(timezone=NEW_YORK)),
        downstream_mapper=TemporalMapper(Hour(timezone=NEW_YORK)),
    )
    encoded = encode_partition_mapper(dag_file)
    scheduler = decode_partition_mapper(json.loads(json.dumps(encoded)))

    assert isinstance(scheduler, FanOutMapper)
    keys = list(scheduler.to_downstream("2026-03-08"))
    assert keys == ["2026-03-08T00-05:00", "2026-03-08T01-05:00"] + [
        f"2026-03-08T{h:02d}-04:00" for h in range(3, 24)
    ]
    assert scheduler.to_partition_date("2026-03-08T03-04:00") == utc("2026-03-08T07:00Z")
    assert encode_partition_mapper(scheduler) == encoded


def test_sdk_fan_out_has_no_default_downstream_mapper_for_our_window():
    from airflow.sdk import FanOutMapper as SdkFanOutMapper

    with pytest.raises(ValueError, match="TemporalWindow"):
        SdkFanOutMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))


def test_temporal_fan_out_defaults_its_downstream_mapper_to_the_windows_grain():
    fan_out = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), max_downstream_keys=30
    )
    assert isinstance(fan_out.downstream_mapper, TemporalMapper)
    assert fan_out.downstream_mapper.grain == Hour()
    assert list(fan_out.to_downstream("2026-03-10T17:45")) == utc_hours("2026-03-10T00:00Z", 24)
    assert fan_out.to_partition_date("2026-03-10T05") == utc("2026-03-10T05:00Z")

    scheduler = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(fan_out))))
    assert type(scheduler) is TemporalFanOutMapper
    assert scheduler.max_downstream_keys == 30
    assert list(scheduler.to_downstream("2026-03-10")) == utc_hours("2026-03-10T00:00Z", 24)


def test_temporal_fan_out_of_a_leap_february_runs_29_days():
    fan_out = TemporalFanOutMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()))
    assert list(fan_out.to_downstream("2028-02-29")) == [f"2028-02-{d:02d}" for d in range(1, 30)]


def test_temporal_fan_out_of_weekday_cron_ticks():
    fan_out = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK)),
        window=TemporalWindow(Cron("0 9-17 * * 1-5", timezone=NEW_YORK)),
    )
    assert list(fan_out.to_downstream("2026-03-10")) == [f"2026-03-10T{h:02d}:00-04:00" for h in range(9, 18)]
    assert list(fan_out.to_downstream("2026-03-14")) == []  # a Saturday


def test_temporal_rollup_with_an_offset_waits_for_the_next_days_hours_and_survives_serialization():
    mapper, window = TemporalMapper(Day(), offset=-1), TemporalWindow(Hour())
    ours = TemporalRollupMapper(upstream_mapper=mapper, window=window, wait_policy=MinimumCount(20))
    for key, hours_of in (
        ("2026-03-10", "2026-03-11"),
        ("2028-03-01", "2028-03-02"),
        ("2027-01-01", "2027-01-02"),
    ):
        assert ours.to_upstream(key) == frozenset(utc_hours(f"{hours_of}T00:00Z", 24))
    assert ours.to_downstream("2026-03-09T23") == "2026-03-08"

    scheduler = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(ours))))
    assert type(scheduler) is TemporalRollupMapper
    assert scheduler.wait_policy == MinimumCount(20)
    assert scheduler.to_upstream("2026-03-10") == frozenset(utc_hours("2026-03-11T00:00Z", 24))


@pytest.mark.parametrize(
    ("mapper", "window"),
    [
        (TemporalMapper(Month()), TemporalWindow(IsoWeek())),
        (TemporalMapper(Day(timezone="Asia/Kolkata")), TemporalWindow(Hour())),  # days start at :30 UTC
        (TemporalMapper(Day()), TemporalWindow(Day(start_hour=6))),
    ],
)
def test_temporal_rollup_refuses_grains_that_do_not_nest_at_construction(mapper, window):
    with pytest.raises(ValueError, match="do not tile"):
        TemporalRollupMapper(upstream_mapper=mapper, window=window)


def test_temporal_rollup_refuses_mappers_and_windows_that_are_not_ours():
    with pytest.raises(ValueError, match="TemporalMapper"):
        TemporalRollupMapper(upstream_mapper=StartOfDayMapper(), window=TemporalWindow(Hour()))
    with pytest.raises(ValueError, match="TemporalWindow"):
        TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=DayWindow())


def test_core_rollup_refuses_our_window_at_construction_naming_our_rollup():
    with pytest.raises(
        TypeError, match=r"works in airflow_partitions. TemporalRollupMapper, not in Airflow.s RollupMapper"
    ):
        RollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))
    with pytest.raises(
        TypeError, match=r"works in airflow_partitions. TemporalRollupMapper, not in Airflow.s RollupMapper"
    ):
        RollupMapper(upstream_mapper=StartOfDayMapper(), window=TemporalWindow(Hour()))
    with pytest.raises(TypeError, match="Period"):
        RollupMapper(upstream_mapper=TemporalMapper(Day()), window=DayWindow())


def test_sdk_rollup_refuses_our_window_under_the_sdk_start_of_day_mapper():
    from airflow.sdk import RollupMapper as SdkRollupMapper
    from airflow.sdk import StartOfDayMapper as SdkStartOfDayMapper

    with pytest.raises(
        TypeError, match=r"works in airflow_partitions. TemporalRollupMapper, not in Airflow.s RollupMapper"
    ):
        SdkRollupMapper(upstream_mapper=SdkStartOfDayMapper(), window=TemporalWindow(Hour()))


@pytest.mark.parametrize(
    ("grain", "key", "start"),
    [
        (Day(timezone=NEW_YORK), "2026-03-08", "2026-03-08T05:00Z"),
        (Day(start_hour=6, timezone=NEW_YORK), "2026-03-08", "2026-03-08T10:00Z"),
        (Hour(timezone=NEW_YORK), "2026-11-01T01-05:00", "2026-11-01T06:00Z"),
        (Minutes(15, timezone="Asia/Kathmandu"), "2026-03-10T09:15+05:45", "2026-03-10T03:30Z"),
        (IsoWeek(), "2026-W53", "2026-12-28T00:00Z"),
        (Month(timezone="Australia/Sydney"), "2026-03", "2026-02-28T13:00Z"),
        (Quarter(), "2028-Q1", "2028-01-01T00:00Z"),
        (Year(timezone="Asia/Kolkata"), "2028", "2027-12-31T18:30Z"),
        (Cron("0 9-17 * * 1-5", timezone=NEW_YORK), "2026-03-10T09:00-04:00", "2026-03-10T13:00Z"),
    ],
)
def test_partition_date_is_the_aware_period_start(grain, key, start):
    partition_date = TemporalMapper(grain).to_partition_date(key)
    assert partition_date.tzinfo is not None
    assert partition_date.astimezone(UTC) == utc(start)


def test_partition_date_of_a_non_canonical_key_is_refused():
    with pytest.raises(ValueError, match=re.escape("'2026-03-08T00:00'")):
        TemporalMapper(Day()).to_partition_date("2026-03-08T00:00")


# -- serialization -------------------------------------------------------------------------------

INSTANCES = configured_temporal_instances()
NAMES = sorted(INSTANCES)

SERIALIZE_IN_CHILD = """
import json
from tests.unit.support import configured_temporal_instances
instances = configured_temporal_instances()
print(json.dumps({name: json.dumps(obj.serialize()) for name, obj in instances.items()}))
"""


@pytest.fixture(scope="module")
def child_outputs() -> list[dict[str, str]]:
    """What two fresh interpreters with different hash seeds serialize."""
    return [json.loads(run_python(SERIALIZE_IN_CHILD, hashseed=seed)) for seed in ("0", "424242")]


@pytest.mark.parametrize("name", NAMES)
def test_serialize_is_byte_identical_across_processes_and_hash_seeds(name, child_outputs):
    in_process = json.dumps(INSTANCES[name].serialize())
    assert [output[name] for output in child_outputs] == [in_process, in_process]


@pytest.mark.parametrize("name", NAMES)
def test_serialize_is_plain_json(name):
    data = INSTANCES[name].serialize()
    assert json.loads(json.dumps(data)) == data


# TemporalFanOutMapper serializes as Airflow's FanOutMapper does, in core's field order.
@pytest.mark.parametrize("name", [name for name in NAMES if name != "TemporalFanOutMapper"])
def test_our_serialized_forms_are_key_sorted_and_versioned(name):
    data = INSTANCES[name].serialize()
    assert json.dumps(data) == json.dumps(data, sort_keys=True)
    assert data["format_version"] == 1


def rebuild(instance):
    data = json.loads(json.dumps(instance.serialize()))
    return Grain.deserialize(data) if isinstance(instance, Grain) else type(instance).deserialize(data)


@pytest.mark.parametrize("name", NAMES)
def test_deserialize_of_serialize_serializes_identically(name):
    instance = INSTANCES[name]
    rebuilt = rebuild(instance)
    assert type(rebuilt) is type(instance)
    assert json.dumps(rebuilt.serialize()) == json.dumps(instance.serialize())


def test_deserialized_mapper_and_window_equal_and_hash_like_the_originals():
    mapper, window = INSTANCES["TemporalMapper"], INSTANCES["TemporalWindow"]
    assert rebuild(mapper) == mapper
    assert hash(rebuild(mapper)) == hash(mapper)
    assert rebuild(window) == window
    assert hash(rebuild(window)) == hash(window)
    assert rebuild(mapper) != TemporalMapper(Day(start_hour=6, timezone="Europe/Berlin"))


def test_deserialized_configured_mapper_maps_identically():
    mapper = INSTANCES["TemporalMapper"]  # Berlin 06:00 days, T-1, naive keys read in India
    rebuilt = rebuild(mapper)
    for key in ("20260310T0700+0100", "20260329T0559+0200", "20261025T2359-0500"):
        assert rebuilt.to_downstream(key) == mapper.to_downstream(key)
    assert mapper.to_downstream("20260310T0700+0100") == "2026-03-09"
    assert rebuilt.max_downstream_keys == 40


@pytest.mark.parametrize("name", ["TemporalMapper", "TemporalWindow"])
def test_serialized_by_a_newer_release_is_refused(name):
    data = {**INSTANCES[name].serialize(), "format_version": 2}
    with pytest.raises(ValueError, match="format_version"):
        type(INSTANCES[name]).deserialize(data)


def test_mapper_serializes_only_what_is_set():
    assert TemporalMapper(Day()).serialize() == {
        "format_version": 1,
        "grain": {"format_version": 1, "kind": "day", "start_hour": 0, "timezone": "UTC"},
        "offset": 0,
    }
    assert TemporalMapper(Day(), max_downstream_keys=40).serialize()["max_downstream_keys"] == 40


# -- the ends of the calendar ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mapper", "key"),
    [
        (TemporalMapper(Day()), "9999-12-31T23:00-05:00"),
        (TemporalMapper(Day(), offset=1), "9999-12-31"),
        (TemporalMapper(Hour(timezone=NEW_YORK)), "9999-12-31T23:30"),
        (TemporalMapper(Month(), offset=-1), "0001-01-15"),
    ],
)
def test_key_at_the_end_of_time_is_refused_with_a_value_error_naming_it(mapper, key):
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        mapper.to_downstream(key)


def test_temporal_rollup_refuses_or_honours_utc_member_keys_under_a_local_day():
    try:
        rollup = TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day(timezone=NEW_YORK)), window=TemporalWindow(Hour())
        )
    except ValueError:
        return
    awaited = rollup.to_upstream("2026-03-10")
    assert "2026-03-11T03" in awaited  # 23:00 EDT on the 10th
    assert rollup.to_downstream("2026-03-11T03") == "2026-03-10"


def test_operations_day_key_maps_to_itself_and_fans_out_its_own_hours():
    assert TemporalMapper(Day(start_hour=6)).to_downstream("2026-03-10") == "2026-03-10"
    fan_out = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Day(start_hour=6)), window=TemporalWindow(Hour())
    )
    assert next(iter(fan_out.to_downstream("2026-03-10"))) == "2026-03-10T06"


# -- properties ------------------------------------------------------------------------------------

ZONES = [
    "UTC", "America/New_York", "Europe/Berlin", "Australia/Sydney", "Asia/Kolkata",
    "America/Santiago", "Pacific/Chatham", "Asia/Kathmandu", "Australia/Lord_Howe",
]  # fmt: skip
DAYS = timedelta(days=2)


def mapper_grains(zone: str) -> st.SearchStrategy[Grain]:
    at = {"timezone": zone}
    return st.one_of(
        st.sampled_from([1, 5, 15, 30, 60, 90, 360, 1440]).map(lambda n: Minutes(n, **at)),
        st.just(Hour(**at)),
        st.integers(0, 23).map(lambda h: Day(start_hour=h, **at)),
        st.sampled_from(["monday", "sunday"]).map(lambda s: Week(start=s, **at)),
        st.sampled_from([IsoWeek, Month, Quarter, Year]).map(lambda cls: cls(**at)),
        st.sampled_from(["*/20 * * * *", "0 9-17 * * 1-5"]).map(lambda e: Cron(e, **at)),
    )


@st.composite
def instants(draw, zone: str) -> datetime:
    """Aware UTC instants from 1900 to 2200, half of them within 4 hours of an offset change of *zone*."""
    if draw(st.booleans()):
        year = draw(st.integers(1900, 2199))
        changes = offset_changes(zone, datetime(year, 1, 1, tzinfo=UTC), datetime(year, 12, 31, tzinfo=UTC))
        if changes:
            at, _, _ = draw(st.sampled_from(changes))
            return at + draw(st.timedeltas(-4 * HOUR, 4 * HOUR))
    return draw(st.datetimes(datetime(1900, 1, 1), datetime(2200, 12, 31), timezones=st.just(UTC)))


def spellings(instant: datetime, zone: str) -> list[str]:
    """ISO 8601 spellings of *instant* (the naive ones are its wall clock in *zone*)."""
    local = instant.astimezone(ZoneInfo(zone))
    return [
        instant.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        instant.strftime("%Y%m%dT%H%M%SZ"),
        local.isoformat(),
        local.replace(tzinfo=None).isoformat(timespec="minutes"),
        local.strftime("%Y-%m-%dT%H"),
        local.date().isoformat(),
    ]


@settings(max_examples=80)
@given(st.data())
def test_mapping_is_deterministic_canonical_short_and_the_grains_own_period_key(data):
    zone = data.draw(st.sampled_from(ZONES))
    grain = data.draw(mapper_grains(zone))
    input_timezone = data.draw(st.sampled_from([None, *ZONES]))
    key_zone = input_timezone or zone
    key = data.draw(st.sampled_from(spellings(data.draw(instants(key_zone)), key_zone)))
    mapper = TemporalMapper(grain, input_timezone=input_timezone)

    out = mapper.to_downstream(key)
    assert isinstance(out, str)
    assert 0 < len(out) <= 250
    assert mapper.to_downstream(key) == out
    assert TemporalMapper.deserialize(json.loads(json.dumps(mapper.serialize()))).to_downstream(key) == out
    # The mapping hot path agrees with the grain: the key of the period holding the key's instant.
    assert out == grain.key(grain.floor(key_instant(grain, key, ZoneInfo(key_zone))))


@settings(max_examples=80)
@given(st.data())
def test_mapping_a_canonical_key_gives_it_back(data):
    zone = data.draw(st.sampled_from(ZONES))
    grain = data.draw(mapper_grains(zone))
    period = grain.floor(data.draw(instants(zone)))
    assume(known_bug(grain, period.utc[0] - DAYS, period.utc[1] + DAYS) is None)
    assert TemporalMapper(grain).to_downstream(period.key) == period.key


def key_instant(grain: Grain, key: str, tz: ZoneInfo) -> datetime:
    """
    The instant a key stands for: its own (naive: in *tz*), but a bare date names that date of
    the grain's own calendar, whatever *tz* is, and the day starting on it.
    """
    if not re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", key):
        return parse_instant(key, tz)
    instant = parse_instant(key, grain.tz)
    if isinstance(grain, Day):
        instant += timedelta(hours=grain.start_hour)  # wall-clock addition: 06:00 on that date
    return instant


@settings(max_examples=70)
@given(st.data(), st.integers(-3, 3))
def test_offset_mapping_is_plain_mapping_shifted(data, offset):
    zone = data.draw(st.sampled_from(ZONES))
    grain = data.draw(mapper_grains(zone))
    key = data.draw(st.sampled_from(spellings(data.draw(instants(zone)), zone)))
    plain = grain.floor(key_instant(grain, key, grain.tz))
    assume(known_bug(grain, plain.utc[0] - 10 * DAYS, plain.utc[1] + 10 * DAYS) is None)

    shifted = TemporalMapper(grain, offset=offset).to_downstream(key)
    assert shifted == grain.shift(plain, offset).key
    assert TemporalMapper(grain, offset=offset).decode_downstream(shifted) == plain


def rollup_pairs(zone: str) -> st.SearchStrategy[tuple[Grain, Grain]]:
    """(member grain, rollup grain) pairs in one zone whose periods nest."""
    at = {"timezone": zone}
    return st.sampled_from(
        [
            (Minutes(15, **at), Hour(**at)),
            (Hour(**at), Day(**at)),
            (Hour(**at), Day(start_hour=6, **at)),
            (Minutes(360, **at), Day(**at)),
            (Day(**at), Week(start="sunday", **at)),
            (Day(**at), IsoWeek(**at)),
            (Day(**at), Month(**at)),
            (Month(**at), Quarter(**at)),
            (Month(**at), Year(**at)),
        ]
    )


@settings(max_examples=70)
@given(st.data(), st.integers(-2, 2))
def test_rollup_awaits_a_key_exactly_for_the_period_it_maps_to(data, offset):
    zone = data.draw(st.sampled_from(ZONES))
    fine, coarse = data.draw(rollup_pairs(zone))
    member = fine.floor(data.draw(instants(zone)))
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(coarse, offset=offset), window=TemporalWindow(fine)
    )

    # The coarse periods involved: the member's, the one it maps to, and their neighbours.
    involved = [coarse.shift(coarse.floor(member.start), n) for n in range(-3, 4)]
    lo, hi = min(p.utc[0] for p in involved) - DAYS, max(p.utc[1] for p in involved) + DAYS
    for grain in (fine, coarse):
        assume(known_bug(grain, lo, hi) is None)

    downstream = rollup.to_downstream(member.key)
    period = coarse.parse(downstream)
    around = [coarse.shift(period, n) for n in (-1, 0, 1)]

    awaited = rollup.to_upstream(downstream)
    assert member.key in awaited
    assert {rollup.to_downstream(key) for key in awaited} == {downstream}
    for neighbour in (around[0], around[2]):
        assert member.key not in rollup.to_upstream(neighbour.key)
    assert rollup.to_partition_date(downstream).astimezone(UTC) == period.utc[0]


@settings(max_examples=40)
@given(st.data())
def test_fan_out_writes_one_canonical_key_per_member_in_order(data):
    zone = data.draw(st.sampled_from(ZONES))
    fine, coarse = data.draw(rollup_pairs(zone))
    period = coarse.floor(data.draw(instants(zone)))
    for grain in (fine, coarse):
        assume(known_bug(grain, period.utc[0] - DAYS, period.utc[1] + DAYS) is None)
    fan_out = TemporalFanOutMapper(upstream_mapper=TemporalMapper(coarse), window=TemporalWindow(fine))

    keys = list(fan_out.to_downstream(period.start.astimezone(UTC).isoformat()))
    assert keys == [m.key for m in fine.members(period)]
    assert len(set(keys)) == len(keys)
    assert all(0 < len(key) <= 250 for key in keys)
    starts = [fan_out.to_partition_date(key).astimezone(UTC) for key in keys]
    assert starts == [m.utc[0] for m in fine.members(period)]


def test_fan_out_converts_airflow_sdk_definitions_at_construction_keeping_the_stored_form():
    from airflow.partition_mappers.temporal import StartOfMonthMapper as CoreStartOfMonthMapper
    from airflow.partition_mappers.window import MonthWindow as CoreMonthWindow
    from airflow.sdk import MonthWindow, StartOfMonthMapper

    from airflow_partitions import TemporalFanOutMapper

    sdk = TemporalFanOutMapper(upstream_mapper=StartOfMonthMapper(), window=MonthWindow())
    core = TemporalFanOutMapper(upstream_mapper=CoreStartOfMonthMapper(), window=CoreMonthWindow())
    assert sdk.serialize() == core.serialize()
    assert list(sdk.to_downstream("2026-02-10T00:00:00"))[::27] == ["2026-02-01", "2026-02-28"]
