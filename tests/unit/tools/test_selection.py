"""What ``status`` and ``discard`` select: range bounds and keys checked against the Dag's grain, first."""

from __future__ import annotations

import pytest

from airflow_partitions import BusinessDay, Day, FiscalQuarter, Hour, IsoWeek
from airflow_partitions.tools.state.selection import checked_key, selected_range

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
    from datetime import UTC

    from airflow_partitions.tools.state.selection import bound_instant

    assert bound_instant(grain, "--end", bound, last=last).astimezone(UTC).isoformat() == expected


def test_the_leading_part_of_a_key_names_no_instant_to_walk_from():
    from airflow_partitions.tools.state.selection import bound_instant

    with pytest.raises(
        ValueError, match="--start 'FY2026-' names no instant to walk the periods of a range from"
    ):
        bound_instant(FiscalQuarter(start_month=7), "--start", "FY2026-", last=False)
