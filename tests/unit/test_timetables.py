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


# ---------------------------------------------------------------------------------------------
# GrainPartitionTimetable, IntervalRuntimePartitionTimetable, ExplicitPartitionTimetable
# ---------------------------------------------------------------------------------------------

import datetime as dt  # noqa: E402
import itertools  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402

from airflow.exceptions import InvalidPartitionKeyError  # noqa: E402
from airflow.timetables.base import DagRunInfo  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import airflow_partitions.timetables as timetables_module  # noqa: E402
from airflow_partitions import (  # noqa: E402
    BusinessCalendar,
    BusinessDay,
    Cron,
    Day,
    ExplicitPartitionTimetable,
    FiscalQuarter,
    GrainPartitionTimetable,
    Hour,
    IntervalRuntimePartitionTimetable,
    Minutes,
    Month,
    RetailMonth,
    RetailWeek,
    TemporalMapper,
    Week,
)

NEW_YORK = ZoneInfo("America/New_York")
US_NY = BusinessCalendar(country="US", subdiv="NY")


def ny(*args: int) -> pendulum.DateTime:
    """A New York wall-clock time, as the UTC instant Airflow handles."""
    return pendulum.instance(dt.datetime(*args, tzinfo=NEW_YORK).astimezone(dt.UTC))


def business_t_minus_1() -> GrainPartitionTimetable:
    """Weekdays at 06:00 New York time, for the previous business day (US/NY holidays)."""
    return GrainPartitionTimetable(
        BusinessDay(US_NY, timezone="America/New_York"), offset=-1, lag=timedelta(hours=6)
    )


def restriction(earliest=None, latest=None, catchup=True) -> TimeRestriction:
    return TimeRestriction(earliest=earliest, latest=latest, catchup=catchup)


def scheduled(timetable, earliest, count, *, latest=None):
    """The first *count* runs the scheduler creates with catchup from *earliest*."""
    infos, info = [], None
    for _ in range(count):
        info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction(earliest, latest))
        if info is None:
            break
        infos.append(info)
    return infos


@pytest.fixture
def now(monkeypatch):
    """Set the timetables' clock: ``now(utc(...))``."""

    def set_now(instant):
        monkeypatch.setattr(timetables_module, "_utcnow", lambda: instant)

    return set_now


def test_grain_timetable_is_partitioned_ahead_of_the_run():
    timetable = business_t_minus_1()
    assert timetable.partitioned is True
    assert timetable.partitioned_at_runtime is False


def test_business_day_t_minus_1_skips_thanksgiving():
    # Thanksgiving is Thursday 2026-11-26: no run that day and no partition for it.
    runs = scheduled(business_t_minus_1(), ny(2026, 11, 20), 7)
    assert [(info.run_after, info.partition_key) for info in runs] == [
        (ny(2026, 11, 23, 6), "2026-11-20"),  # Monday, for Friday
        (ny(2026, 11, 24, 6), "2026-11-23"),
        (ny(2026, 11, 25, 6), "2026-11-24"),
        (ny(2026, 11, 27, 6), "2026-11-25"),  # Friday, for Wednesday
        (ny(2026, 11, 30, 6), "2026-11-27"),  # Monday, for Friday
        (ny(2026, 12, 1, 6), "2026-11-30"),
        (ny(2026, 12, 2, 6), "2026-12-01"),
    ]
    assert runs[3].run_after == utc(2026, 11, 27, 11)  # 06:00 EST
    assert all(info.partition_date == ny(*map(int, info.partition_key.split("-"))) for info in runs)
    assert all(info.data_interval is None for info in runs)


def test_business_day_runs_at_six_local_time_across_dst():
    # US DST ends on Sunday 2026-11-01: 06:00 is 10:00 UTC on Friday the 30th, 11:00 on Monday.
    runs = scheduled(business_t_minus_1(), ny(2026, 10, 29), 2)
    assert [(info.run_after, info.partition_key) for info in runs] == [
        (utc(2026, 10, 30, 10), "2026-10-29"),
        (utc(2026, 11, 2, 11), "2026-10-30"),
    ]


def test_business_day_backfill_yields_exactly_the_business_days():
    infos = list(
        business_t_minus_1().iter_partition_dagrun_infos(
            earliest=utc(2026, 11, 23),
            latest=utc(2026, 11, 30),  # read as New York midnights
        )
    )
    assert [info.partition_key for info in infos] == [
        "2026-11-23",
        "2026-11-24",
        "2026-11-25",
        "2026-11-27",
        "2026-11-30",
    ]
    assert all(info.run_after == info.partition_date for info in infos)  # as core's backfill
    assert infos[0].partition_date == utc(2026, 11, 23, 5)
    assert all(info.data_interval is None and info.logical_date is None for info in infos)


def test_backfill_and_schedule_agree_on_keys_and_partition_dates():
    timetable = business_t_minus_1()
    backfill = list(timetable.iter_partition_dagrun_infos(earliest=utc(2026, 1, 1), latest=utc(2026, 12, 31)))
    runs = scheduled(timetable, ny(2026, 1, 1), len(backfill))
    assert [(i.partition_key, i.partition_date) for i in runs] == [
        (i.partition_key, i.partition_date) for i in backfill
    ]
    # One partition per business day of 2026 (business_days' end is exclusive).
    expected = [day.isoformat() for day in US_NY.business_days(dt.date(2026, 1, 1), dt.date(2027, 1, 1))]
    assert [info.partition_key for info in backfill] == expected


def test_catchup_off_starts_with_the_run_due_now(now):
    timetable = business_t_minus_1()
    now(utc(2026, 11, 30, 12))  # Monday 07:00 New York: Monday's 06:00 run (for Friday) is due
    info = timetable.next_dagrun_info_v2(
        last_dagrun_info=None, restriction=restriction(ny(2026, 1, 1), catchup=False)
    )
    assert (info.run_after, info.partition_key) == (ny(2026, 11, 30, 6), "2026-11-27")
    # An old last run does not make it catch up ...
    old = DagRunInfo(run_after=ny(2026, 6, 2, 6), data_interval=None, partition_key="2026-06-01")
    info = timetable.next_dagrun_info_v2(last_dagrun_info=old, restriction=restriction(catchup=False))
    assert info.partition_key == "2026-11-27"
    # ... and after the run due now comes the next one.
    last = DagRunInfo(run_after=ny(2026, 11, 30, 6), data_interval=None, partition_key="2026-11-27")
    info = timetable.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction(catchup=False))
    assert (info.run_after, info.partition_key) == (ny(2026, 12, 1, 6), "2026-11-30")


def test_catchup_off_before_todays_run_is_due(now):
    now(utc(2026, 11, 30, 10))  # Monday 05:00 New York: the latest due run is Friday's
    info = business_t_minus_1().next_dagrun_info_v2(
        last_dagrun_info=None, restriction=restriction(ny(2026, 1, 1), catchup=False)
    )
    assert (info.run_after, info.partition_key) == (ny(2026, 11, 27, 6), "2026-11-25")


@pytest.mark.parametrize("catchup", [True, False])
def test_first_run_without_start_date_is_the_next_one_due(now, catchup):
    now(utc(2026, 11, 26, 12))  # Thanksgiving: the next run is Friday 06:00, for Wednesday
    info = business_t_minus_1().next_dagrun_info_v2(
        last_dagrun_info=None, restriction=restriction(catchup=catchup)
    )
    assert (info.run_after, info.partition_key) == (ny(2026, 11, 27, 6), "2026-11-25")


def test_start_date_bounds_partitions_not_runs():
    # start_date Saturday 2026-11-28: the first partition is Monday the 30th, run on Tuesday.
    info = business_t_minus_1().next_dagrun_info_v2(
        last_dagrun_info=None, restriction=restriction(ny(2026, 11, 28))
    )
    assert (info.run_after, info.partition_key) == (ny(2026, 12, 1, 6), "2026-11-30")


def test_no_partition_after_the_end_date():
    timetable = business_t_minus_1()
    last = DagRunInfo(run_after=ny(2026, 11, 27, 6), data_interval=None, partition_key="2026-11-25")
    assert (
        timetable.next_dagrun_info_v2(
            last_dagrun_info=last, restriction=restriction(ny(2026, 1, 1), ny(2026, 11, 27))
        ).partition_key
        == "2026-11-27"
    )  # the end date is the partition's start: inclusive
    assert (
        timetable.next_dagrun_info_v2(
            last_dagrun_info=last, restriction=restriction(ny(2026, 1, 1), ny(2026, 11, 26, 23))
        )
        is None
    )


def test_last_run_without_a_key_of_the_grain_is_found_by_date():
    last = DagRunInfo(
        run_after=ny(2026, 11, 27, 6),
        data_interval=None,
        partition_key="other",
        partition_date=ny(2026, 11, 25),
    )
    info = business_t_minus_1().next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction())
    assert info.partition_key == "2026-11-27"


def test_resolve_partition_date_is_the_period_start():
    timetable = business_t_minus_1()
    assert timetable.resolve_partition_date("2026-11-25") == utc(2026, 11, 25, 5)
    with pytest.raises(InvalidPartitionKeyError, match="2026-11-26"):
        timetable.resolve_partition_date("2026-11-26")  # Thanksgiving: not a business day
    with pytest.raises(InvalidPartitionKeyError, match="2026-11-25T00"):
        timetable.resolve_partition_date("2026-11-25T00")  # not the canonical spelling


def test_fall_back_hour_gives_two_keys_and_two_runs():
    timetable = GrainPartitionTimetable(Hour(timezone="America/New_York"))
    infos = list(timetable.iter_partition_dagrun_infos(earliest=utc(2026, 11, 1), latest=utc(2026, 11, 1, 2)))
    assert [info.partition_key for info in infos] == [
        "2026-11-01T00-04:00",
        "2026-11-01T01-04:00",
        "2026-11-01T01-05:00",
        "2026-11-01T02-05:00",
    ]
    assert [info.partition_date for info in infos] == [utc(2026, 11, 1, h) for h in (4, 5, 6, 7)]
    runs = scheduled(timetable, utc(2026, 11, 1, 5), 2)  # each at the end of its hour
    assert [(i.partition_key, i.run_after) for i in runs] == [
        ("2026-11-01T01-04:00", utc(2026, 11, 1, 6)),
        ("2026-11-01T01-05:00", utc(2026, 11, 1, 7)),
    ]


def test_fifteen_minute_slots_with_a_real_time_lag():
    timetable = GrainPartitionTimetable(Minutes(15), offset=-1, lag=timedelta(minutes=5))
    runs = scheduled(timetable, utc(2026, 3, 10, 9), 3)
    assert [(i.partition_key, i.run_after) for i in runs] == [
        ("2026-03-10T09:00", utc(2026, 3, 10, 9, 20)),
        ("2026-03-10T09:15", utc(2026, 3, 10, 9, 35)),
        ("2026-03-10T09:30", utc(2026, 3, 10, 9, 50)),
    ]


def test_operations_day_from_six_runs_at_its_end_across_dst():
    # Day(start_hour=6): 2026-10-31 runs from 06:00 EDT to 06:00 EST on 1 November (25 hours).
    timetable = GrainPartitionTimetable(Day(start_hour=6, timezone="America/New_York"))
    runs = scheduled(timetable, ny(2026, 10, 30, 6), 3)
    assert [(i.partition_key, i.partition_date, i.run_after) for i in runs] == [
        ("2026-10-30", utc(2026, 10, 30, 10), utc(2026, 10, 31, 10)),
        ("2026-10-31", utc(2026, 10, 31, 10), utc(2026, 11, 1, 11)),
        ("2026-11-01", utc(2026, 11, 1, 11), utc(2026, 11, 2, 11)),
    ]


def test_fiscal_quarters_two_days_after_each_quarter_ends():
    # Fiscal years from October, named by the year they end in: FY2027-Q1 is October-December 2026.
    timetable = GrainPartitionTimetable(FiscalQuarter(start_month=10), lag=timedelta(days=2))
    runs = scheduled(timetable, utc(2026, 1, 1), 4)
    assert [(i.partition_key, i.run_after) for i in runs] == [
        ("FY2026-Q2", utc(2026, 4, 3)),
        ("FY2026-Q3", utc(2026, 7, 3)),
        ("FY2026-Q4", utc(2026, 10, 3)),
        ("FY2027-Q1", utc(2027, 1, 3)),
    ]
    assert timetable.resolve_partition_date("FY2027-Q1") == utc(2026, 10, 1)


def test_offset_zero_runs_at_the_start_of_its_own_period():
    timetable = GrainPartitionTimetable(Month(timezone="America/New_York"), offset=0, lag=timedelta(hours=1))
    [info] = scheduled(timetable, ny(2026, 11, 1), 1)
    assert (info.partition_key, info.run_after) == ("2026-11", ny(2026, 11, 1, 1))


@pytest.mark.parametrize(
    ("grain", "days"),
    [
        pytest.param(BusinessDay(US_NY, timezone="America/New_York"), 730, id="business-day"),
        pytest.param(Day(start_hour=6, timezone="America/New_York"), 730, id="day-from-six"),
        pytest.param(Week(start="sunday", timezone="Europe/Berlin"), 730, id="week"),
        pytest.param(Month(timezone="Australia/Sydney"), 730, id="month"),
        pytest.param(FiscalQuarter(start_month=7), 730, id="fiscal-quarter"),
        pytest.param(RetailWeek(), 730, id="retail-week"),
        pytest.param(Minutes(360, timezone="America/New_York"), 730, id="six-hours"),
        pytest.param(Cron("0 9 * * 1-5", timezone="America/New_York"), 730, id="cron"),
        pytest.param(Hour(timezone="America/New_York"), 730, id="hour"),
        # Two years of 15-minute slots is 70,000 keys: one DST autumn keeps the suite fast.
        pytest.param(Minutes(15, timezone="America/New_York"), 14, id="fifteen-minutes"),
    ],
)
def test_every_key_over_two_years_maps_and_round_trips_through_the_mapper(grain, days):
    timetable = GrainPartitionTimetable(grain, offset=-1)
    mapper = TemporalMapper(grain)
    start = dt.datetime(2026, 10, 25)
    infos = list(
        timetable.iter_partition_dagrun_infos(earliest=start, latest=start + dt.timedelta(days=days))
    )
    assert infos
    keys = [info.partition_key for info in infos]
    assert len(set(keys)) == len(keys)
    dates = [info.partition_date for info in infos]
    assert dates == sorted(dates)
    for info in infos:
        key = info.partition_key
        assert mapper.to_downstream(key) == key
        assert grain.parse(key).key == key
        # Compared in UTC: Python never finds a fall-back hour's local time equal across zones.
        assert mapper.to_partition_date(key).astimezone(dt.UTC) == info.partition_date
        assert timetable.resolve_partition_date(key) == info.partition_date


GRAINS = [
    BusinessDay(US_NY, timezone="America/New_York"),
    Day(start_hour=2, timezone="America/New_York"),
    Hour(timezone="America/New_York"),
    Minutes(15, timezone="Asia/Kolkata"),
    Minutes(360, timezone="Europe/Berlin"),
    Week(),
    FiscalQuarter(start_month=7),
    Cron("*/20 9-17 * * *", timezone="America/New_York"),
]


@settings(max_examples=60)
@given(
    grain=st.sampled_from(GRAINS),
    offset=st.integers(-3, 3),
    lag_minutes=st.integers(0, 36 * 60),
    start=st.datetimes(min_value=dt.datetime(2025, 1, 1), max_value=dt.datetime(2028, 12, 31)),
)
def test_schedule_walks_consecutive_partitions_with_increasing_run_times(grain, offset, lag_minutes, start):
    timetable = GrainPartitionTimetable(grain, offset=offset, lag=timedelta(minutes=lag_minutes))
    runs = scheduled(timetable, pendulum.instance(start.replace(tzinfo=dt.UTC)), 6)
    periods = [grain.parse(info.partition_key) for info in runs]
    assert periods[0].utc[0] >= start.replace(tzinfo=dt.UTC)
    assert grain.shift(periods[0], -1).utc[0] < start.replace(tzinfo=dt.UTC)
    assert all(grain.shift(a, 1) == b for a, b in itertools.pairwise(periods))
    assert all(a.run_after < b.run_after for a, b in itertools.pairwise(runs))


@settings(max_examples=60)
@given(
    grain=st.sampled_from(GRAINS),
    offset=st.integers(-3, 3),
    lag_minutes=st.integers(0, 36 * 60),
    instant=st.datetimes(min_value=dt.datetime(2025, 1, 1), max_value=dt.datetime(2028, 12, 31)),
)
def test_first_run_from_now_is_the_first_due_at_or_after_now(grain, offset, lag_minutes, instant):
    timetable = GrainPartitionTimetable(grain, offset=offset, lag=timedelta(minutes=lag_minutes))
    now = instant.replace(tzinfo=dt.UTC)
    timetables_module_now = timetables_module._utcnow
    try:
        timetables_module._utcnow = lambda: now
        info = timetable.next_dagrun_info_v2(last_dagrun_info=None, restriction=restriction())
    finally:
        timetables_module._utcnow = timetables_module_now
    assert info.run_after >= now
    before = grain.shift(grain.parse(info.partition_key), -1)
    previous = timetable.next_dagrun_info_v2(
        last_dagrun_info=DagRunInfo(
            run_after=now, data_interval=None, partition_key=grain.shift(before, -1).key
        ),
        restriction=restriction(),
    )
    assert previous.partition_key == before.key
    assert previous.run_after < now


def test_grain_timetable_summary_and_description():
    timetable = business_t_minus_1()
    assert timetable.summary == "BusinessDay T-1 +6:00:00 (America/New_York)"
    assert timetable.description == (
        "One run per BusinessDay period in America/New_York, 6:00:00 (local wall-clock time) after the "
        "period starts, for the period before it; keys as TemporalMapper(BusinessDay) writes them"
    )
    assert "real time" in GrainPartitionTimetable(Minutes(15), offset=-2).description
    assert "2 periods before it" in GrainPartitionTimetable(Minutes(15), offset=-2).description


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (("day",), {}, "grain must be a grain"),
        ((Day(),), {"offset": 1.0}, "offset must be an integer"),
        ((Day(),), {"offset": True}, "offset must be an integer"),
        ((Day(),), {"offset": 1001}, "offset must be an integer"),
        ((Day(),), {"lag": timedelta(hours=-1)}, "lag must be a non-negative timedelta"),
        ((Day(),), {"lag": 3600}, "lag must be a non-negative timedelta"),
    ],
)
def test_grain_timetable_refuses_bad_arguments_at_construction(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        GrainPartitionTimetable(*args, **kwargs)


def test_bad_calendars_are_refused_when_building_the_grain():
    with pytest.raises(ValueError, match="calendar must be a BusinessCalendar"):
        GrainPartitionTimetable(BusinessDay("US"))
    with pytest.raises(ValueError, match="timezone"):
        GrainPartitionTimetable(Day(timezone="Mars/Olympus"))


def test_grain_timetable_serializes_deterministically():
    assert business_t_minus_1().serialize() == {
        "format_version": 1,
        "grain": {
            "calendar": {"country": "US", "format_version": 1, "subdiv": "NY", "weekmask": "1111100"},
            "format_version": 1,
            "kind": "business_day",
            "roll": "raise",
            "start_hour": 0,
            "timezone": "America/New_York",
        },
        "lag": 21600.0,
        "offset": -1,
    }


def test_interval_runtime_timetable_runs_every_delta_with_keys_from_the_task():
    timetable = IntervalRuntimePartitionTimetable(timedelta(minutes=15))
    assert timetable.partitioned_at_runtime is True
    assert timetable.partitioned is False
    assert timetable.summary == "0:15:00"
    info = timetable.next_dagrun_info_v2(
        last_dagrun_info=DagRunInfo.exact(utc(2026, 3, 10, 9)), restriction=restriction(utc(2026, 1, 1))
    )
    assert info.run_after == utc(2026, 3, 10, 9, 15)
    assert info.partition_key is None
    assert timetable.resolve_partition_date("anything") is None


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((timedelta(0),), {}, "delta must be a positive"),
        ((timedelta(minutes=-5),), {}, "delta must be a positive"),
        (("15m",), {}, "delta must be a positive"),
        ((timedelta(hours=1),), {"interval": timedelta(hours=-1)}, "interval must be a non-negative"),
    ],
)
def test_interval_runtime_timetable_refuses_bad_durations(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        IntervalRuntimePartitionTimetable(*args, **kwargs)


CLOSES = {
    "2026-11": dt.datetime(2026, 12, 3, 18, tzinfo=NEW_YORK),
    "2026-10": dt.datetime(2026, 11, 4, 18, tzinfo=NEW_YORK),
    "2026-12": dt.datetime(2027, 1, 6, 18, tzinfo=NEW_YORK),
}


def test_explicit_partitions_run_in_time_order():
    timetable = ExplicitPartitionTimetable(CLOSES)
    assert timetable.partitioned is True
    runs = scheduled(timetable, None, 5)
    assert [(i.partition_key, i.run_after) for i in runs] == [
        ("2026-10", utc(2026, 11, 4, 23)),
        ("2026-11", utc(2026, 12, 3, 23)),
        ("2026-12", utc(2027, 1, 6, 23)),
    ]
    assert all(i.partition_date == i.run_after for i in runs)
    assert timetable.resolve_partition_date("2026-11") == utc(2026, 12, 3, 23)
    with pytest.raises(InvalidPartitionKeyError, match="2027-01"):
        timetable.resolve_partition_date("2027-01")


def test_explicit_partitions_start_date_end_date_and_backfill():
    timetable = ExplicitPartitionTimetable(list(CLOSES.items()))
    assert scheduled(timetable, utc(2026, 11, 5), 5, latest=utc(2026, 12, 31))[0].partition_key == "2026-11"
    assert len(scheduled(timetable, utc(2026, 11, 5), 5, latest=utc(2026, 12, 31))) == 1
    infos = timetable.iter_partition_dagrun_infos(earliest=utc(2026, 11, 1), latest=utc(2026, 12, 3, 23))
    assert [i.partition_key for i in infos] == ["2026-10", "2026-11"]


def test_explicit_partitions_without_catchup(now):
    timetable = ExplicitPartitionTimetable(CLOSES)
    now(utc(2026, 12, 10))
    info = timetable.next_dagrun_info_v2(
        last_dagrun_info=None, restriction=restriction(utc(2026, 1, 1), catchup=False)
    )
    assert info.partition_key == "2026-11"  # the latest one due
    info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction(catchup=False))
    assert info.partition_key == "2026-12"
    info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction(catchup=False))
    assert info is None


@pytest.mark.parametrize(
    ("partitions", "match"),
    [
        ({}, "at least one"),
        ({"": CLOSES["2026-11"]}, "non-empty string"),
        ({"x" * 251: CLOSES["2026-11"]}, "251 characters"),
        ([("a", CLOSES["2026-11"]), ("a", CLOSES["2026-12"])], "listed twice"),
        ({"a": dt.datetime(2026, 12, 3)}, "timezone-aware datetime"),
        ({"a": "2026-12-03"}, "timezone-aware datetime"),
        ({"a": CLOSES["2026-11"], "b": CLOSES["2026-11"].astimezone(dt.UTC)}, "same time"),
        (42, "mapping"),
        ([("a",)], "mapping"),
    ],
)
def test_explicit_partitions_are_validated_at_construction(partitions, match):
    with pytest.raises(ValueError, match=match):
        ExplicitPartitionTimetable(partitions)


def test_explicit_serialization_is_sorted_whatever_the_input_order():
    forward = ExplicitPartitionTimetable(CLOSES)
    backward = ExplicitPartitionTimetable(dict(reversed(list(CLOSES.items()))))
    assert json.dumps(forward.serialize()) == json.dumps(backward.serialize())
    assert forward.serialize() == {
        "format_version": 1,
        "partitions": [
            ["2026-10", "2026-11-04T23:00:00+00:00"],
            ["2026-11", "2026-12-03T23:00:00+00:00"],
            ["2026-12", "2027-01-06T23:00:00+00:00"],
        ],
    }


@pytest.mark.parametrize(
    "timetable",
    [
        pytest.param(business_t_minus_1(), id="business-day"),
        pytest.param(
            GrainPartitionTimetable(FiscalQuarter(start_month=10), lag=timedelta(days=2)), id="fiscal"
        ),
        pytest.param(GrainPartitionTimetable(Cron("*/20 9-17 * * 1-5", timezone="Europe/Berlin")), id="cron"),
        pytest.param(
            GrainPartitionTimetable(Minutes(15), offset=0, lag=timedelta(seconds=90.5)), id="minutes"
        ),
        pytest.param(
            IntervalRuntimePartitionTimetable(timedelta(minutes=15), interval=timedelta(hours=1)),
            id="interval",
        ),
        pytest.param(ExplicitPartitionTimetable(CLOSES), id="explicit"),
    ],
)
def test_new_timetables_round_trip_through_airflows_serialization(timetable):
    encoded = json.loads(json.dumps(encode_timetable(timetable)))  # as stored in the database
    decoded = decode_timetable(encoded)
    assert type(decoded) is type(timetable)
    assert json.dumps(decoded.serialize()) == json.dumps(timetable.serialize())
    assert decoded.summary == timetable.summary
    if timetable.partitioned:
        assert decoded == timetable
        window = {"earliest": utc(2026, 11, 23), "latest": utc(2026, 12, 6)}
        assert list(decoded.iter_partition_dagrun_infos(**window)) == list(
            timetable.iter_partition_dagrun_infos(**window)
        )


@pytest.mark.parametrize(
    ("timetable", "last_run", "expected"),
    [
        (business_t_minus_1(), ny(2026, 11, 25, 6), ("2026-11-25", ny(2026, 11, 27, 6))),
        (ExplicitPartitionTimetable(CLOSES), utc(2026, 11, 4, 23), ("2026-11", utc(2026, 12, 3, 23))),
    ],
)
def test_pre_partition_api_goes_by_the_last_run_time(timetable, last_run, expected):
    # LatestOnlyOperator and AssetOrTimeSchedule still call next_dagrun_info.
    info = timetable.next_dagrun_info(
        last_automated_data_interval=DataInterval(last_run, last_run), restriction=restriction()
    )
    assert (info.partition_key, info.run_after) == expected


def test_serialized_dag_backfill_path_creates_exactly_the_business_days():
    # What `airflow backfill create --from-date 2026-11-23 --to-date 2026-11-30` asks the Dag.
    from airflow.sdk import DAG, Asset, task
    from airflow.serialization.serialized_objects import DagSerialization

    with DAG("business_days", schedule=business_t_minus_1(), start_date=ny(2026, 11, 1), catchup=True) as dag:

        @task(outlets=[Asset("business_day_export")])
        def export():
            pass

        export()

    serialized = DagSerialization.from_dict(json.loads(json.dumps(DagSerialization.to_dict(dag))))
    assert isinstance(serialized.timetable, GrainPartitionTimetable)
    infos = list(serialized.iter_dagrun_infos_between(utc(2026, 11, 23), utc(2026, 11, 30)))
    assert [info.partition_key for info in infos] == [
        "2026-11-23",
        "2026-11-24",
        "2026-11-25",
        "2026-11-27",
        "2026-11-30",
    ]
    first = serialized.next_dagrun_info(last_automated_run_info=None)
    # Election Day, Tuesday 2026-11-03, is a New York State holiday: Monday's run is on Wednesday.
    assert (first.partition_key, first.run_after) == ("2026-11-02", ny(2026, 11, 4, 6))


def test_retail_months_run_the_monday_after_each_closes():
    # NRF 4-5-4: retail 2026 starts Sunday 2026-02-01; February has 4 weeks, March 5, April 4.
    timetable = GrainPartitionTimetable(RetailMonth(), lag=timedelta(days=1))
    runs = scheduled(timetable, utc(2026, 2, 1), 3)
    assert [(i.partition_key, i.partition_date, i.run_after) for i in runs] == [
        ("R2026-M01", utc(2026, 2, 1), utc(2026, 3, 2)),
        ("R2026-M02", utc(2026, 3, 1), utc(2026, 4, 6)),
        ("R2026-M03", utc(2026, 4, 5), utc(2026, 5, 4)),
    ]


def test_lord_howe_hours_run_once_per_hour_through_the_half_hour_dst_change():
    # Lord Howe (IANA tz database) goes from 02:00 +11:00 back to 01:30 +10:30 at 15:00Z on
    # 2026-04-04: the hours from 13:00Z are 00:00 +11:00, 01:00 +11:00, the partial 01:30 +10:30
    # (15:00Z to 15:30Z), then 02:00 +10:30 (15:30Z) and 03:00 +10:30 (16:30Z).
    grain = Hour(timezone="Australia/Lord_Howe")
    timetable = GrainPartitionTimetable(grain, offset=0)
    runs = scheduled(timetable, utc(2026, 4, 4, 13), 5)
    assert [(info.run_after, info.partition_key) for info in runs] == [
        (utc(2026, 4, 4, 13), "2026-04-05T00+11:00"),
        (utc(2026, 4, 4, 14), "2026-04-05T01+11:00"),
        (utc(2026, 4, 4, 15), "2026-04-05T01:30+10:30"),
        (utc(2026, 4, 4, 15, 30), "2026-04-05T02+10:30"),
        (utc(2026, 4, 4, 16, 30), "2026-04-05T03+10:30"),
    ]
    # Compared as instants: Python never finds a time on a repeated hour equal to one in UTC.
    assert all(grain.parse(i.partition_key).start.timestamp() == i.partition_date.timestamp() for i in runs)
    assert all(TemporalMapper(grain).to_downstream(info.partition_key) == info.partition_key for info in runs)


def test_cron_timetable_runs_the_skipped_tick_at_the_end_of_the_gap_and_steps_back_over_it():
    # New York skips 02:00-03:00 EST at 07:00Z on 2026-03-08: the 02:30 tick of that day is 03:00
    # EDT (07:00Z); the days around it tick at 02:30 EST (07:30Z) and 02:30 EDT (06:30Z).
    grain = Cron("30 2 * * *", timezone="America/New_York")
    runs = scheduled(GrainPartitionTimetable(grain), utc(2026, 3, 7), 3)
    assert [(info.run_after, info.partition_key) for info in runs] == [
        (utc(2026, 3, 8, 7), "2026-03-07T02:30-05:00"),
        (utc(2026, 3, 9, 6, 30), "2026-03-08T03:00-04:00"),
        (utc(2026, 3, 10, 6, 30), "2026-03-09T02:30-04:00"),
    ]


def test_a_partition_is_due_when_the_scheduler_would_run_it():
    # Default offset -1: a UTC day is due at its end; offset 0 and a lag: at its start plus the lag.
    assert GrainPartitionTimetable(Day()).due("2026-12-02") == dt.datetime(2026, 12, 3, tzinfo=dt.UTC)
    assert GrainPartitionTimetable(Day(), offset=0, lag=timedelta(hours=6)).due("2026-12-02") == dt.datetime(
        2026, 12, 2, 6, tzinfo=dt.UTC
    )
    # The docstring's T-1 business day in New York: 2026-11-25 runs on Friday 27 November at 06:00
    # EST (11:00 UTC), over Thanksgiving; 2026-11-27 on Monday 30 November.
    weekdays = GrainPartitionTimetable(
        BusinessDay(BusinessCalendar(country="US", subdiv="NY"), timezone="America/New_York"),
        offset=-1,
        lag=timedelta(hours=6),
    )
    assert weekdays.due("2026-11-25") == dt.datetime(2026, 11, 27, 11, tzinfo=dt.UTC)
    assert weekdays.due("2026-11-27") == dt.datetime(2026, 11, 30, 11, tzinfo=dt.UTC)
    with pytest.raises(InvalidPartitionKeyError):
        weekdays.due("2026-11-26")
