"""
What a request selects: range bounds and keys checked against the Dag's grain, first.

``status`` and ``discard`` bound keys (:func:`selected_range`); ``requeue`` and ``clean`` instants
(:func:`selected_times`), in the same range language.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from airflow_partitions import BusinessDay, Day, FiscalQuarter, Hour, IsoWeek
from airflow_partitions.tools.errors import UsageError
from airflow_partitions.tools.state.selection import (
    checked_key,
    checked_times,
    selected_range,
    selected_times,
)

NEW_YORK = "America/New_York"


@pytest.mark.parametrize(
    ("grain", "start", "end", "expected"),
    [
        # Keys of the grain are kept as written.
        (Day(timezone=NEW_YORK), "2013-03-01", "2013-03-10", ("2013-03-01", "2013-03-10")),
        (IsoWeek(), "2026-W09", "2026-W14", ("2026-W09", "2026-W14")),
        (FiscalQuarter(start_month=7), "FY2026-Q3", None, ("FY2026-Q3", None)),
        # A month of days: its first and its last day (March has 31).
        (Day(timezone=NEW_YORK), "2013-03", "2013-03", ("2013-03-01", "2013-03-31")),
        # 2026-03-01 is a Sunday, in ISO week 9 (Monday 23 February); 31 March, a Tuesday, in week 14.
        (IsoWeek(), "2026-03", "2026-03", ("2026-W09", "2026-W14")),
        # Fiscal years from July, named by their end: January to March 2026 is FY2026's third quarter.
        (FiscalQuarter(start_month=7), "2026-01-15", "2026-03", ("FY2026-Q3", "FY2026-Q3")),
        # Business-day keys are dates with gaps: a date is compared as written.
        (BusinessDay(), "2026-03-07", "2026-03", ("2026-03-07", "2026-03")),
        # The leading part of a key, as the Partitions view's buckets cut them, is compared as written.
        (IsoWeek(), "2026-W", "2026-W", ("2026-W", "2026-W")),
        (FiscalQuarter(start_month=7), "FY2026-", "FY2026-", ("FY2026-", "FY2026-")),
        (Day(), "2013-0", None, ("2013-0", None)),
        # No grain (a core mapper's keys, or categories): nothing to judge by, compared as written.
        (None, "2013", "2013-03-10T05", ("2013", "2013-03-10T05")),
        (None, "eu-", "eu-w", ("eu-", "eu-w")),
    ],
)
def test_a_bound_is_a_key_of_the_grain_or_an_iso_date_read_in_its_keys(grain, start, end, expected):
    assert selected_range("d", grain, start, end) == expected


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (
            "03/2013",
            None,
            "--start '03/2013' is neither a partition key of 'd' (its keys are written like '2026-03-10'), "
            "nor the leading part of one, nor an ISO 8601 date or time such as '2013', '2013-03', "
            "'2013-03-10' or '2013-03-10T05'",
        ),
        (None, "garbage", "--end 'garbage' is neither a partition key of 'd'"),
        (None, "2026-W", "--end '2026-W' is neither a partition key of 'd'"),  # days: no W in them
        (None, "FY2026-", "--end 'FY2026-' is neither a partition key of 'd'"),
        (None, "2013-02-30", "--end '2013-02-30' is neither"),  # February has no 30th
        ("2013-03-10T24", None, "--start '2013-03-10T24' is neither"),
        ("2013-03-10T05:00Z", None, "--start '2013-03-10T05:00Z' is neither"),  # keys carry no zone
        ("2013-04", "2013-03", "--start '2013-04' is after --end '2013-03'."),
        # 2021 began on a Friday and was no leap year: its 28 December is in week 52, the last.
        ("2021-W53", None, "--start '2021-W53' names no week: 2021 has 52 ISO weeks (2021-W01 … 2021-W52)."),
    ],
)
def test_a_bound_that_is_neither_is_refused_naming_the_option_and_the_value(start, end, message):
    with pytest.raises(ValueError) as refused:
        selected_range("d", Day(), start, end)
    assert message in str(refused.value)


def test_a_local_hour_of_a_fall_back_night_bounds_both_of_its_hours():
    # New York, 2026-11-01: clocks go back from 02:00 EDT to 01:00 EST; hours are keyed with their
    # offset, the first 01:00 hour -04:00, the second -05:00.
    new_york_hours = Hour(timezone=NEW_YORK)
    assert selected_range("d", new_york_hours, "2026-11-01T01", "2026-11-01T01") == (
        "2026-11-01T01-04:00",
        "2026-11-01T01-05:00",
    )
    # The whole day: from midnight EDT to 23:00 EST.
    assert selected_range("d", new_york_hours, "2026-11-01", "2026-11-01") == (
        "2026-11-01T00-04:00",
        "2026-11-01T23-05:00",
    )


def test_a_local_hour_the_clocks_skip_is_refused_naming_the_zone():
    # New York, 2026-03-08: clocks go from 02:00 EST to 03:00 EDT; no 02:00 hour.
    with pytest.raises(ValueError) as refused:
        selected_range("d", Hour(timezone=NEW_YORK), None, "2026-03-08T02")
    assert str(refused.value) == (
        "--end '2026-03-08T02' names no time in America/New_York: its clocks skip it (daylight saving time "
        "starts)."
    )


def test_a_start_after_the_end_is_judged_in_the_keys_spelling():
    # ISO week 10 of 2026 (2 to 8 March) lies in March: not after it, though 'W' sorts after '0'.
    assert selected_range("d", IsoWeek(), "2026-W10", "2026-03") == ("2026-W10", "2026-W14")
    with pytest.raises(ValueError, match=r"--start '2026-04' is after --end '2026-W10'\."):
        selected_range("d", IsoWeek(), "2026-04", "2026-W10")


@pytest.mark.parametrize("key", ["2013-03-10", "jfk|2013-03-10"])
def test_a_key_of_the_grain_passes(key):
    checked_key("d", Day(timezone=NEW_YORK), key)


def test_a_key_that_is_not_one_of_the_grains_is_refused_naming_it_and_the_dag():
    with pytest.raises(ValueError) as refused:
        checked_key("d", Day(), "garbage")
    assert str(refused.value).startswith(
        "--key 'garbage' is not a partition key of 'd': partition key 'garbage' is not"
    )
    with pytest.raises(ValueError) as refused:
        checked_key("d", Day(), "2013-03-10T05")
    assert str(refused.value).endswith("the period it falls in is written '2013-03-10'.")


def test_without_a_grain_any_key_passes():
    checked_key("d", None, "eu")
    checked_key("d", Hour(), None)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


LAST = 999999  # the last microsecond of a second: a bound of times ends on its span's last instant


@pytest.mark.parametrize(
    ("grain", "start", "end", "expected"),
    [
        # Calendar spellings are UTC whatever the grain (event times, as requeue always read them).
        (None, "2026-04", "2026-04", (utc(2026, 4, 1), utc(2026, 4, 30, 23, 59, 59, LAST))),
        (Day(timezone=NEW_YORK), "2026-04-01", None, (utc(2026, 4, 1), None)),
        (
            None,
            "2026-03-10T05+02:00",
            "2026-03-10T05+02:00",
            (utc(2026, 3, 10, 3), utc(2026, 3, 10, 3, 59, 59, LAST)),
        ),
        # A time to the second is that instant.
        (
            None,
            "2026-04-01T00:00:00+00:00",
            "2026-04-01T12:30:00",
            (utc(2026, 4, 1), utc(2026, 4, 1, 12, 30)),
        ),
        # A key of the grain is its period: New York's 2026-W11 from Monday 9 March 00:00 EDT (04:00 UTC:
        # daylight saving time began on the 8th) to Sunday 15 March 24:00 EDT.
        (
            IsoWeek(timezone=NEW_YORK),
            "2026-W11",
            "2026-W11",
            (utc(2026, 3, 9, 4), utc(2026, 3, 16, 3, 59, 59, LAST)),
        ),
        (
            FiscalQuarter(start_month=7),
            "FY2026-Q3",
            "FY2026-Q3",
            (utc(2026, 1, 1), utc(2026, 3, 31, 23, 59, 59, LAST)),
        ),
        # A leading part: from its first period to its last. New York hours "2026-0": 1 January
        # 00:00 EST (05:00 UTC) to 30 September 23:59 EDT (03:59 UTC on 1 October); between the
        # months the view samples, found to the hour.
        (
            Hour(timezone=NEW_YORK),
            "2026-0",
            "2026-0",
            (utc(2026, 1, 1, 5), utc(2026, 10, 1, 3, 59, 59, LAST)),
        ),
        # Business days "2026-1": Thursday 1 October to Thursday 31 December, walked day by day.
        (BusinessDay(), "2026-1", "2026-1", (utc(2026, 10, 1), utc(2026, 12, 31, 23, 59, 59, LAST))),
        # Another ISO 8601 date is its day, UTC: 2026-W11-1 is Monday 9 March.
        (IsoWeek(), None, "2026-W11-1", (None, utc(2026, 3, 9, 23, 59, 59, LAST))),
    ],
)
def test_a_bound_of_times_is_the_span_it_names(grain, start, end, expected):
    assert selected_times("d", grain, start, end) == expected


@pytest.mark.parametrize(
    ("grain", "start", "end", "message"),
    [
        (None, "2026-06", "2026-05", "--start '2026-06' is after --end '2026-05'."),
        (
            Day(),
            "2026-Q1",
            None,
            "--start '2026-Q1' is neither a partition key of 'd' (its keys are written like",
        ),
        (None, "FY2026-Q3", None, "--start 'FY2026-Q3' is not an ISO 8601 date or time such as '2026-03'"),
        (None, "2021-W53", None, "--start '2021-W53' names no week: 2021 has 52 ISO weeks"),
        (
            None,
            None,
            "0001-01-01T00:00+14:00",
            "--end '0001-01-01T00:00+14:00' is outside the times a date can name",
        ),
    ],
)
def test_a_bound_of_times_that_names_none_is_refused_naming_it(grain, start, end, message):
    with pytest.raises(UsageError) as refused:
        selected_times("d", grain, start, end)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("yesterday", None, "--start 'yesterday' is not an ISO 8601 date or time such as"),
        ("2026-04-01", "2026-04-31", "--end '2026-04-31' is not an ISO 8601 date or time such as"),
        ("2026-05-01", "2026-04-30", "--start '2026-05-01' is after --end '2026-04-30'."),
        ("2026-05-01T00:00:00Z", "2026-04-30", "--start '2026-05-01T00:00:00Z' is after --end '2026-04-30'."),
    ],
)
def test_what_no_grain_could_read_is_refused_before_a_dag_is_asked(start, end, message):
    with pytest.raises(UsageError) as refused:
        checked_times(start, end)
    assert str(refused.value).startswith(message)


def test_what_a_grain_may_read_is_left_to_the_dag():
    # Keys and their leading parts name a year; in what order they lie is the grain's to say.
    for start, end in (("2026-W14", "2026-W09"), ("FY2026-", "2026-03"), ("R2026-W05", None)):
        checked_times(start, end)


@pytest.mark.parametrize(
    ("grain", "bound", "last", "expected"),
    [
        # A key: its period's start, in the grain's zone (New York midnight is 05:00 UTC in March).
        (Day(timezone="America/New_York"), "2026-03-05", False, "2026-03-05T05:00:00+00:00"),
        (Day(timezone="America/New_York"), "2026-03-05", True, "2026-03-05T05:00:00+00:00"),
        # A calendar spelling: the period of its first instant, or with last of its last one.
        (Day(), "2026-03", False, "2026-03-01T00:00:00+00:00"),
        (Day(), "2026-03", True, "2026-03-31T00:00:00+00:00"),
        (Hour(timezone="America/New_York"), "2026-11-01", True, "2026-11-02T04:00:00+00:00"),
        (IsoWeek(), "2026-03", True, "2026-03-30T00:00:00+00:00"),  # the week of 31 March
        # No grain (a core mapper's keys): an ISO 8601 time, naive meaning UTC.
        (None, "2026-03-05T07:30", False, "2026-03-05T07:30:00+00:00"),
    ],
)
def test_a_bound_starts_a_walk_of_the_ranges_periods_at_its_periods_start(grain, bound, last, expected):
    from airflow_partitions.tools.state.selection import bound_instant

    assert bound_instant(grain, "--end", bound, last=last).astimezone(UTC).isoformat() == expected


def test_the_leading_part_of_a_key_names_no_instant_to_walk_from():
    from airflow_partitions.tools.state.selection import bound_instant

    with pytest.raises(
        ValueError, match="--start 'FY2026-' names no instant to walk the periods of a range from"
    ):
        bound_instant(FiscalQuarter(start_month=7), "--start", "FY2026-", last=False)
