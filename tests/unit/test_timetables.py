from __future__ import annotations

import json
from datetime import timedelta

import pendulum
import pytest
from airflow.serialization.decoders import decode_timetable
from airflow.serialization.encoders import encode_timetable
from airflow.timetables.base import DataInterval, TimeRestriction

from airflow_partitions import ScheduledRuntimePartitionTimetable


def utc(*args: int) -> pendulum.DateTime:
    return pendulum.datetime(*args, tz="UTC")


def new_york_at_six() -> ScheduledRuntimePartitionTimetable:
    return ScheduledRuntimePartitionTimetable("0 6 * * *", timezone="America/New_York")


def test_defers_partition_keys_to_the_task():
    timetable = new_york_at_six()
    assert timetable.partitioned_at_runtime is True
    assert timetable.partitioned is False


@pytest.mark.parametrize("cron", ["61 * * * *", "* * * * * *", "nope", "", "0 24 * * *", "0 6 * 13 *"])
def test_invalid_cron_is_refused_at_construction(cron):
    with pytest.raises(ValueError, match="cron"):
        ScheduledRuntimePartitionTimetable(cron, timezone="UTC")


def test_unknown_timezone_is_refused_at_construction():
    with pytest.raises(ValueError, match="Mars/Olympus"):
        ScheduledRuntimePartitionTimetable("0 6 * * *", timezone="Mars/Olympus")


@pytest.mark.parametrize("cron", ["0 6 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"])
def test_cron_naming_no_real_date_is_refused_at_construction(cron):
    # 31 and 30 February, 31 April/June/September/November do not exist in any year.
    with pytest.raises(ValueError, match="never fires"):
        ScheduledRuntimePartitionTimetable(cron, timezone="UTC")


def test_leap_day_cron_is_accepted_and_fires_on_the_next_29_february():
    info = ScheduledRuntimePartitionTimetable("0 6 29 2 *", timezone="UTC").next_dagrun_info(
        last_automated_data_interval=None,
        restriction=TimeRestriction(earliest=utc(2026, 3, 1), latest=None, catchup=True),
    )
    assert info.run_after == utc(2028, 2, 29, 6)  # 2028 is the next leap year after 2026


@pytest.mark.parametrize("timezone", [5, None, 3600.0])
def test_timezone_of_the_wrong_type_is_refused_at_construction(timezone):
    with pytest.raises(ValueError, match="timezone must be an IANA time zone name"):
        ScheduledRuntimePartitionTimetable("0 6 * * *", timezone=timezone)


def test_preset_is_accepted_and_means_midnight_daily():
    timetable = ScheduledRuntimePartitionTimetable("@daily", timezone="UTC")
    assert timetable.summary == "0 0 * * *"
    info = timetable.next_dagrun_info(
        last_automated_data_interval=DataInterval(utc(2026, 3, 9), utc(2026, 3, 9)),
        restriction=TimeRestriction(earliest=utc(2026, 1, 1), latest=None, catchup=True),
    )
    assert info.run_after == utc(2026, 3, 10)


def test_summary_is_the_cron_expression():
    assert new_york_at_six().summary == "0 6 * * *"


def test_accepts_a_pendulum_timezone():
    timetable = ScheduledRuntimePartitionTimetable("0 6 * * *", timezone=pendulum.timezone("Europe/Paris"))
    assert timetable.serialize()["timezone"] == "Europe/Paris"


@pytest.mark.parametrize(
    ("last_end", "expected_run"),
    [
        # 06:00 EST is 11:00 UTC; 06:00 EDT is 10:00 UTC.
        pytest.param(utc(2026, 3, 6, 11), utc(2026, 3, 7, 11), id="before-dst-start"),
        # US daylight saving time starts on Sunday 2026-03-08.
        pytest.param(utc(2026, 3, 7, 11), utc(2026, 3, 8, 10), id="dst-start"),
        pytest.param(utc(2026, 3, 8, 10), utc(2026, 3, 9, 10), id="after-dst-start"),
        # ... and ends on Sunday 2026-11-01.
        pytest.param(utc(2026, 10, 31, 10), utc(2026, 11, 1, 11), id="dst-end"),
    ],
)
def test_next_run_is_at_six_new_york_time(last_end, expected_run):
    info = new_york_at_six().next_dagrun_info(
        last_automated_data_interval=DataInterval(start=last_end, end=last_end),
        restriction=TimeRestriction(earliest=utc(2026, 1, 1), latest=None, catchup=True),
    )
    assert info.run_after == expected_run
    assert info.data_interval == DataInterval(start=expected_run, end=expected_run)
    assert info.partition_key is None


def test_first_run_aligns_to_the_next_tick_after_the_start_date():
    info = new_york_at_six().next_dagrun_info(
        last_automated_data_interval=None,
        restriction=TimeRestriction(earliest=utc(2026, 3, 7, 12), latest=None, catchup=True),
    )
    assert info.run_after == utc(2026, 3, 8, 10)


def test_interval_sets_the_data_interval_start():
    timetable = ScheduledRuntimePartitionTimetable(
        "0 6 * * *", timezone="America/New_York", interval=timedelta(hours=24)
    )
    info = timetable.next_dagrun_info(
        last_automated_data_interval=DataInterval(utc(2026, 3, 6, 11), utc(2026, 3, 7, 11)),
        restriction=TimeRestriction(earliest=utc(2026, 1, 1), latest=None, catchup=True),
    )
    assert info.data_interval == DataInterval(start=utc(2026, 3, 7, 10), end=utc(2026, 3, 8, 10))


def test_no_run_after_the_end_date():
    info = new_york_at_six().next_dagrun_info(
        last_automated_data_interval=DataInterval(utc(2026, 3, 7, 11), utc(2026, 3, 7, 11)),
        restriction=TimeRestriction(earliest=utc(2026, 1, 1), latest=utc(2026, 3, 8, 9), catchup=True),
    )
    assert info is None


def test_serialize_is_the_cron_trigger_form_with_a_version():
    assert new_york_at_six().serialize() == {
        "expression": "0 6 * * *",
        "format_version": 1,
        "interval": 0.0,
        "run_immediately": False,
        "timezone": "America/New_York",
    }


def test_round_trip_through_airflows_serialization():
    timetable = ScheduledRuntimePartitionTimetable(
        "30 5 * * 1-5",
        timezone="America/New_York",
        interval=timedelta(hours=2),
        run_immediately=timedelta(minutes=15),
    )
    encoded = json.loads(json.dumps(encode_timetable(timetable)))  # as stored in the database
    decoded = decode_timetable(encoded)

    assert type(decoded) is ScheduledRuntimePartitionTimetable
    assert json.dumps(decoded.serialize()) == json.dumps(timetable.serialize())
    assert decoded.partitioned_at_runtime is True


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"interval": "1h"}, "interval must be a non-negative timedelta"),
        ({"interval": timedelta(hours=-1)}, "interval must be a non-negative timedelta"),
        ({"run_immediately": "yes"}, "run_immediately must be True, False or a timedelta"),
    ],
)
def test_bad_interval_or_run_immediately_is_refused_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ScheduledRuntimePartitionTimetable("0 6 * * *", timezone="UTC", **kwargs)


@pytest.mark.parametrize(
    ("preset", "expected"), [("@midnight", utc(2026, 3, 11)), ("@annually", utc(2027, 1, 1))]
)
def test_croniter_presets_core_accepts_are_accepted(preset, expected):
    info = ScheduledRuntimePartitionTimetable(preset, timezone="UTC").next_dagrun_info(
        last_automated_data_interval=None,
        restriction=TimeRestriction(earliest=utc(2026, 3, 10, 12), latest=None, catchup=True),
    )
    assert info.run_after == expected


def test_zoneinfo_timezone_is_accepted_and_stored_by_name():
    from zoneinfo import ZoneInfo

    timetable = ScheduledRuntimePartitionTimetable("0 6 * * *", timezone=ZoneInfo("Europe/Berlin"))
    assert timetable.serialize()["timezone"] == "Europe/Berlin"
