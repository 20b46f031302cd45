"""
The Partitions view's layout of keys: calendars, day strips, rows per dimension, years by period.

Expected places are worked out by hand: weekdays from a calendar (2026-04-01 was a Wednesday),
New York's DST changes from the US rules (2013-03-10 had 23 hours, 2026-11-01 repeated 01:00).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from airflow_partitions.tools.ui.axis import bucket_unit, time_axis
from airflow_partitions.tools.ui.layout import counted, coverage, layout, overview


def _p(key, state="success", progress=(), ran_with=None):
    return {
        "partition_key": key,
        "state": state,
        "runs": [],
        "progress": list(progress),
        "ran_with": ran_with,
    }


def _rollup(expected, missing, never=()):
    received = [k for k in expected if k not in missing]
    return {
        "asset": "hours",
        "received": received,
        "expected": expected,
        "missing": missing,
        "never_counting": list(never),
        "counted": len(expected) - len(missing),
        "received_total": len(received),
        "expected_total": len(expected),
        "missing_total": len(missing),
    }


def test_days_fill_a_month_calendar_from_monday_with_unopened_days():
    [block] = layout([_p("2026-04-01"), _p("2026-04-30", "failed")])
    assert (block["kind"], block["title"]) == ("month", "2026-04")
    first, last = block["weeks"][0], block["weeks"][-1]
    assert first[:2] == [None, None]  # 2026-04-01 is a Wednesday
    assert first[2] == {"key": "2026-04-01", "state": "success", "label": "1", "count": None}
    assert first[3] == {"key": None, "state": "not opened", "label": "2", "count": None}
    assert last[3]["key"] == "2026-04-30" and last[3]["state"] == "failed" and last[4:] == [None] * 3
    assert sum(c is not None for week in block["weeks"] for c in week) == 30


def test_hours_fill_a_strip_of_24_per_day_whatever_their_iso_spelling():
    blocks = layout([_p("2026-04-01T05"), _p("2026-04-01T06:00:00Z", "running"), _p("2026-04-02T23")])
    assert [(b["kind"], b["title"]) for b in blocks] == [("day", "2026-04-01"), ("day", "2026-04-02")]
    cells = blocks[0]["cells"]
    assert len(cells) == 24 and [c["label"] for c in cells][:3] == ["00", "01", "02"]
    assert (cells[5]["key"], cells[6]["key"], cells[7]["state"]) == (
        "2026-04-01T05",
        "2026-04-01T06:00:00Z",
        "not opened",
    )


def test_hours_with_offsets_show_both_occurrences_of_a_repeated_hour_earlier_first():
    # New York repeated 01:00 on 2026-11-01: first at -04:00 (EDT), then at -05:00 (EST).
    keys = ["2026-11-01T00-04:00", "2026-11-01T01-05:00", "2026-11-01T01-04:00", "2026-11-01T02-05:00"]
    [block] = layout([_p(k) for k in keys])
    labels = [c["label"] for c in block["cells"]]
    assert len(block["cells"]) == 25 and labels[:4] == ["00", "01-04:00", "01-05:00", "02"]
    assert [c["key"] for c in block["cells"][:4]] == [keys[0], keys[2], keys[1], keys[3]]


def test_composite_keys_make_one_row_per_first_dimension_in_time_order_under_a_date_axis():
    keys = ["jfk|2013-03-10", "lga|2013-03-11", "jfk|2013-03-11", "jfk|2013-04-01"]
    [block] = layout([_p(k, "pending" if k.startswith("lga") else "success") for k in keys])
    assert block["kind"] == "rows" and block["columns"] == ["2013-03-10", "2013-03-11", "2013-04-01"]
    assert block["axis"] == [[0, "2013-03"], [2, "2013-04"]]  # labels where the month changes
    assert block["heads"] == ["10", "11", "01"]  # and each column's day
    jfk, lga = block["rows"]
    assert (jfk["title"], [c["key"] for c in jfk["cells"]]) == (
        "jfk",
        ["jfk|2013-03-10", "jfk|2013-03-11", "jfk|2013-04-01"],
    )
    assert [c["state"] for c in lga["cells"]] == ["not opened", "pending", "not opened"]
    [one_month] = layout([_p("jfk|2013-03-10"), _p("jfk|2013-03-11")])
    assert (one_month["axis"], one_month["heads"]) == ([[0, "2013-03"]], ["10", "11"])  # its month named too


def test_months_quarters_weeks_and_fiscal_keys_make_grids_of_years_by_period():
    blocks = layout(
        [_p(k) for k in ("2013-03", "2014-12", "FY2026-Q3", "R2025-M01", "2026-W05", "2020-W53", "FY2026")]
    )
    by_title = {b["title"]: b for b in blocks}
    assert set(by_title) == {"months", "FY quarters", "R months", "weeks", "FY years"}
    months = by_title["months"]
    assert months["kind"] == "periods" and months["columns"] == [f"{m:02d}" for m in range(1, 13)]
    assert [r["title"] for r in months["rows"]] == ["2013", "2014"]
    assert [c["state"] for c in months["rows"][0]["cells"]][1:4] == ["not opened", "success", "not opened"]
    quarters = by_title["FY quarters"]
    assert quarters["columns"] == ["Q1", "Q2", "Q3", "Q4"] and quarters["rows"][0]["title"] == "FY2026"
    assert quarters["rows"][0]["cells"][2]["key"] == "FY2026-Q3"
    assert by_title["R months"]["columns"][0] == "M01" and len(by_title["R months"]["columns"]) == 12
    weeks = by_title["weeks"]
    assert len(weeks["columns"]) == 53 and weeks["columns"][:2] == ["W01", "W02"]  # 2020 had 53 ISO weeks
    assert [r["title"] for r in weeks["rows"]] == ["2020", "2026"]
    assert by_title["FY years"]["rows"][0]["cells"][0]["key"] == "FY2026"


def test_minutes_are_grouped_by_hour_with_their_worst_state_and_one_hour_zooms_in():
    minutes = [_p(f"2026-04-01T05:{m:02d}", "failed" if m == 30 else "success") for m in range(15, 60, 15)]
    minutes.append(_p("2026-04-01T07:15"))
    [day] = layout(minutes)
    assert day["kind"] == "day" and len(day["cells"]) == 24
    five = day["cells"][5]
    assert (five["state"], five["count"], five["zoom"]) == ("failed", "3", ["2026-04-01T05", "2026-04-01T05"])
    assert day["cells"][6]["state"] == "not opened" and day["cells"][7]["count"] == "1"
    [hour] = layout(minutes[:3])
    assert (hour["kind"], hour["title"]) == ("hour", "2026-04-01T05")
    assert [c["label"] for c in hour["cells"]] == ["15", "30", "45"]
    # A quarter hour on the hour is a minute key among minute keys, an hour among hours.
    [hour] = layout([_p("2026-04-01T05:00"), *minutes[:3]])
    assert [c["label"] for c in hour["cells"]] == ["00", "15", "30", "45"]
    [day] = layout([_p("2026-04-01T05:00:00Z")])
    assert day["kind"] == "day" and day["cells"][5]["key"] == "2026-04-01T05:00:00Z"


def test_other_keys_are_listed_after_the_time_blocks():
    blocks = layout([_p("exports"), _p("2026-04-01")])
    assert [b["kind"] for b in blocks] == ["month", "list"]
    assert blocks[1]["cells"][0]["label"] == "exports"


def test_pending_cells_show_counted_of_awaited_and_a_run_that_ran_incomplete_what_it_ran_with():
    hours = [f"2026-04-01T{h:02d}" for h in range(24)]
    pending = _p("2026-04-01", "pending", [_rollup(hours, ["2026-04-01T17"])])
    assert counted(pending) == (23, 24)
    assert layout([pending])[0]["weeks"][0][2]["count"] == "23/24"
    one_key = {"asset": "a", "received": ["k"], "expected": [], "missing": [], "never_counting": []}
    one_key |= {"counted": 1, "received_total": 1, "expected_total": 0, "missing_total": 0}
    assert counted(_p("x", "pending", [one_key])) == (1, 1)
    ran = {"counted": 20, "awaited": 24, "missing": hours[10:14], "missing_total": 4}
    assert counted(_p("2026-04-02", "ran incomplete", ran_with=ran)) == (20, 24)
    assert counted(_p("2026-04-03", "success", ran_with={**ran, "counted": 24, "missing": []})) is None


def test_the_overview_makes_cells_that_zoom_into_their_bucket():
    state = {
        "bucket": 7,
        "overview": [["jfk", [["2013-03", "ran incomplete", 31], ["2013-04", "success", 30]]]],
    }
    answer = overview(state)
    assert (answer["bucket"], answer["unit"], answer["columns"]) == (7, "month", ["2013-03", "2013-04"])
    assert (answer["axis"], answer["heads"]) == ([[0, "2013"]], ["03", "04"])
    [row] = answer["rows"]
    assert row["title"] == "jfk"
    assert row["cells"][0] == {
        "key": None,
        "state": "ran incomplete",
        "label": "2013-03",
        "count": "31",
        "zoom": ["2013-03", "2013-03"],
    }


def _k(key, events=1):
    return {"partition_key": key, "events": events, "first": None, "last": None}


def test_coverage_lists_every_day_from_first_to_last_with_gaps_and_missing_hours():
    keys = [_k("2026-05-01T00", 2), *(_k(f"2026-05-01T{h:02d}") for h in range(1, 24)), _k("2026-05-03T04")]
    answer = coverage(keys)
    [series] = answer["series"]
    assert answer["zone"] == "UTC"
    first, second, third = series["days"]
    assert (first["day"], first["events"], first["gap"]) == ("2026-05-01", 25, False)
    assert first["missing_hours"] == []
    assert (second["day"], second["gap"], second["keys"]) == ("2026-05-02", True, [])
    assert third["missing_hours"] == [f"{h:02d}" for h in range(24) if h != 4]


def test_a_gap_between_two_sparse_days_is_one_row_with_its_span():
    # 2013-03-11 to 2013-09-07: 21 days of March, 30 + 31 + 30 + 31 + 31 of April to August, 7 of September.
    answer = coverage([_k("jfk|2013-03-10"), _k("jfk|2013-09-08", 2), _k("jfk|2013-09-10")])
    [series] = answer["series"]
    assert [(d["day"], d["until"], d["days"], d["gap"]) for d in series["days"]] == [
        ("2013-03-10", "2013-03-10", 1, False),
        ("2013-03-11", "2013-09-07", 181, True),
        ("2013-09-08", "2013-09-08", 1, False),
        ("2013-09-09", "2013-09-09", 1, True),
        ("2013-09-10", "2013-09-10", 1, False),
    ]
    assert series["days"][1]["keys"] == [] and series["days"][1]["events"] == 0


def test_a_key_naming_no_real_hour_is_listed_apart_not_a_crash():
    answer = coverage([_k("2013-03-12T05"), _k("2013-03-13T99")], "America/New_York", "UTC")
    assert answer["other"] == ["2013-03-13T99"]
    assert [d["day"] for d in answer["series"][0]["days"]] == ["2013-03-12"]


def _utc_hours_of_new_york_day(year, month, day):
    """The UTC hour keys of a New York day, from zoneinfo (not the code under test)."""
    tz = ZoneInfo("America/New_York")
    start = datetime(year, month, day, tzinfo=tz).astimezone(UTC)
    end = (datetime(year, month, day, tzinfo=tz) + timedelta(days=1)).astimezone(UTC)
    return [
        (start + timedelta(hours=h)).strftime("%Y-%m-%dT%H")
        for h in range((end - start) // timedelta(hours=1))
    ]


def test_coverage_in_the_consumers_zone_counts_new_york_days_of_utc_hours():
    # 2013-03-10 had 23 hours in New York (from 05:00Z to 04:00Z); 2013-03-11, 24, but 05Z is missing.
    keys = [
        _k(k) for k in _utc_hours_of_new_york_day(2013, 3, 10) + _utc_hours_of_new_york_day(2013, 3, 11)[1:]
    ]
    answer = coverage(keys, "America/New_York", "UTC")
    assert answer["zone"] == "America/New_York"
    [series] = answer["series"]
    assert [(d["day"], d["missing_hours"]) for d in series["days"]] == [
        ("2013-03-10", []),
        ("2013-03-11", ["00"]),
    ]
    in_utc = coverage(keys)["series"][0]["days"]  # the same keys in UTC days: a false gap at 00-04
    assert in_utc[0]["missing_hours"] == ["00", "01", "02", "03", "04"]


def test_coverage_names_the_occurrence_of_a_repeated_hour_that_is_missing():
    # New York's 2026-11-01: 01:00 EDT is 05:00Z, 01:00 EST 06:00Z; leave out the second.
    keys = [_k(k) for k in _utc_hours_of_new_york_day(2026, 11, 1) if k != "2026-11-01T06"]
    [series] = coverage(keys, "America/New_York", "UTC")["series"]
    assert series["days"][0]["missing_hours"] == ["01-05:00"]


def test_coverage_makes_one_series_per_first_dimension_and_lists_dateless_keys():
    answer = coverage([_k("jfk|2013-03-10"), _k("lga|2013-03-12"), _k("jfk|2013-03-11"), _k("exports")])
    assert [s["title"] for s in answer["series"]] == ["jfk", "lga"]
    assert [d["gap"] for d in answer["series"][0]["days"]] == [False, False]
    assert [d["missing_hours"] for d in answer["series"][0]["days"]] == [[], []]
    assert answer["other"] == ["exports"]


def test_an_asset_page_lists_only_keyed_days_past_the_cap():
    [series] = coverage([_k("2000-01-01"), _k("2026-01-01")])["series"]
    assert [d["day"] for d in series["days"]] == ["2000-01-01", "2026-01-01"]


# -- trading sessions: NYSE's published 2026 calendar ("Holidays and Trading Hours", nyse.com):
# 09:30 to 16:00 New York time (EST in late November: 14:30Z to 21:00Z), closed Thursday 26
# November (Thanksgiving), closing at 13:00 (18:00Z) on Friday 27 November.
NOVEMBER_2026_SESSIONS = [2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 23, 24, 25, 27, 30]
NOVEMBER_2026_DAYS_OFF = [1, 7, 8, 14, 15, 21, 22, 26, 28, 29]  # Sundays, Saturdays, Thanksgiving


def _nyse():
    from airflow_partitions import ExchangeCalendar, TradingSession

    return TradingSession(ExchangeCalendar("XNYS"))


def _session_of_bars():
    from airflow_partitions import Minutes, TemporalMapper, TemporalRollupMapper, TemporalWindow

    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(_nyse()),
        window=TemporalWindow(Minutes(30, timezone="America/New_York")),
    )


def _bars(day, first="14:30", count=13, suffix="Z"):
    """*count* 30-minute bar keys of *day* from the wall time *first*, spelled with *suffix* ("": naive)."""
    start = datetime.fromisoformat(f"{day}T{first}")
    return [f"{start + timedelta(minutes=30 * n):%Y-%m-%dT%H:%M}{suffix}" for n in range(count)]


def _places(block):
    return [c for week in block["weeks"] for c in week if c is not None]


def test_a_month_of_nyse_sessions_has_places_only_on_session_days():
    partitions = [_p("2026-11-02"), _p("2026-11-27", "pending"), _p("2026-11-30", "failed")]
    [block] = layout(partitions, _nyse())
    assert (block["kind"], block["title"]) == ("month", "2026-11")
    places = _places(block)
    assert len(places) == 30
    sessions = [int(c["label"]) for c in places if c["state"] != "closed"]
    closed = [int(c["label"]) for c in places if c["state"] == "closed"]
    assert sessions == NOVEMBER_2026_SESSIONS and len(sessions) == 20
    assert closed == NOVEMBER_2026_DAYS_OFF
    thursday = block["weeks"][4][3]  # the week of 23 November, its Thursday
    assert thursday == {"key": None, "state": "closed", "label": "26", "count": None}
    assert [c["key"] for c in places if c["key"]] == ["2026-11-02", "2026-11-27", "2026-11-30"]
    assert sum(c["state"] == "not opened" for c in places) == 17
    # Without the grain every date is a place that may open, weekends and Thanksgiving too.
    [plain] = layout(partitions)
    assert sum(c["state"] == "not opened" for c in _places(plain)) == 27


def test_a_month_of_business_days_closes_weekends_only():
    from airflow_partitions import BusinessDay

    [block] = layout([_p("2026-11-02")], BusinessDay())
    closed = [int(c["label"]) for c in _places(block) if c["state"] == "closed"]
    assert closed == [1, 7, 8, 14, 15, 21, 22, 28, 29]  # BusinessCalendar(): Monday to Friday


def test_a_session_rollup_of_bars_shows_each_session_as_a_strip_of_its_bars():
    from airflow_partitions.tools.state import awaited_by_date

    keys = [
        *(_k(k) for k in _bars("2026-11-23")),  # a full session: 13 bars
        *(_k(k) for k in _bars("2026-11-24")[:-1]),  # its 15:30 bar missing
        _k("2026-11-26T15:00Z"),  # Thanksgiving: refused on arrival, but it has an event
        *(_k(k) for k in _bars("2026-11-27", "09:30", 7, suffix="")),  # naive New York times
        _k("2026-11-30T14:30Z"),
    ]
    awaited = awaited_by_date(_session_of_bars())
    [series] = coverage(keys, "America/New_York", "America/New_York", awaited)["series"]
    days = {d["day"]: d for d in series["days"]}
    assert list(days) == [f"2026-11-{d}" for d in range(23, 31)]
    full = days["2026-11-23"]
    assert [c["label"] for c in full["strip"]] == [
        "09:30", "10:00", "10:30", "11:00", "11:30", "12:00", "12:30",
        "13:00", "13:30", "14:00", "14:30", "15:00", "15:30",
    ]  # fmt: skip
    assert full["strip"][0] == {"key": "2026-11-23T09:30-05:00", "label": "09:30", "state": "received"}
    assert full["strip"][-1]["label"] == "15:30" and full["missing_hours"] == []
    assert {c["state"] for c in full["strip"]} == {"received"}  # UTC spellings count as the bars
    assert days["2026-11-24"]["missing_hours"] == ["15:30"] and len(days["2026-11-24"]["strip"]) == 13
    assert (days["2026-11-25"]["gap"], len(days["2026-11-25"]["missing_hours"])) == (True, 13)
    early = days["2026-11-27"]
    assert [c["label"] for c in early["strip"]] == [
        "09:30",
        "10:00",
        "10:30",
        "11:00",
        "11:30",
        "12:00",
        "12:30",
    ]
    assert (early["missing_hours"], early["closed"]) == ([], False)
    for day_off in ("2026-11-26", "2026-11-28", "2026-11-29"):
        assert (days[day_off]["closed"], days[day_off]["gap"], days[day_off]["strip"]) == (True, False, [])
    assert days["2026-11-26"]["keys"] == ["2026-11-26T15:00Z"] and days["2026-11-26"]["missing_hours"] == []
    assert len(days["2026-11-30"]["missing_hours"]) == 12
    # Read without the consumer's sessions, a session's day misses the hours it never trades.
    plain = {d["day"]: d for d in coverage(keys, "America/New_York")["series"][0]["days"]}
    assert plain["2026-11-23"]["missing_hours"][:2] == ["00", "01"] and plain["2026-11-26"]["gap"] is False
    assert plain["2026-11-28"]["gap"] is True


@pytest.mark.parametrize(
    ("parts", "axis", "heads"),
    [
        # Days of two months (region-days from 29 November): both months named, every day numbered.
        (
            ["2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02"],
            [[0, "2026-11"], [2, "2026-12"]],
            ["29", "30", "01", "02"],
        ),
        # Hours across midnight: the days over their hours.
        (
            ["2026-03-10T22", "2026-03-10T23", "2026-03-11T00"],
            [[0, "2026-03-10"], [2, "2026-03-11"]],
            ["22", "23", "00"],
        ),
        # Quarter hours: the hour over its minutes.
        (
            ["2026-04-01T05:00", "2026-04-01T05:15", "2026-04-01T06:00"],
            [[0, "2026-04-01T05"], [2, "2026-04-01T06"]],
            ["00", "15", "00"],
        ),
        # Months of two years, retail weeks of one, fiscal quarters, years.
        (["2025-12", "2026-01"], [[0, "2025"], [1, "2026"]], ["12", "01"]),
        (["R2026-W44", "R2026-W45"], [[0, "R2026"]], ["44", "45"]),
        (["FY2026-Q3", "FY2026-Q4", "FY2027-Q1"], [[0, "FY2026"], [2, "FY2027"]], ["Q3", "Q4", "Q1"]),
        (["2025", "2026"], [[0, "2025"], [1, "2026"]], ["", ""]),
        # No time in it: nothing to name a column by but its key (its cells' tooltips).
        (["sales", "stock"], [], ["", ""]),
    ],
    ids=["days", "hours", "minutes", "months", "retail weeks", "fiscal quarters", "years", "other"],
)
def test_a_time_axis_names_the_coarser_unit_where_it_changes_and_each_columns_place(parts, axis, heads):
    assert time_axis(parts) == (axis, heads)


@pytest.mark.parametrize(
    ("bucket", "unit"),
    [
        ("2026-03-10T05", "hour"),
        ("2026-03-10", "day"),
        ("2026-03", "month"),
        ("2026-W05", "week"),
        ("R2026-W44", "week"),
        ("R2025-M01", "month"),
        ("FY2026-Q3", "quarter"),
        ("FY2026-", "year"),
        ("2026", "year"),
        ("eu-sales", "period"),
    ],
)
def test_an_overview_bucket_is_named_by_its_spelling_a_retail_week_a_week(bucket, unit):
    assert bucket_unit(bucket) == unit
