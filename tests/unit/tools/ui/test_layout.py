"""The Partitions view's layout of keys: month calendars, day strips, rows per dimension."""

from __future__ import annotations

from airflow_partitions.tools.ui.layout import counted, coverage, layout, select, summary, time_part


def _p(key, state="success", progress=()):
    return {"partition_key": key, "state": state, "runs": [], "progress": list(progress)}


def _rollup(expected, missing, received=None, never=()):
    return {
        "asset": "hours",
        "received": received if received is not None else [k for k in expected if k not in missing],
        "expected": expected,
        "missing": missing,
        "never_counting": list(never),
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


def test_composite_keys_make_one_row_per_first_dimension_on_shared_columns():
    [block] = layout([_p("jfk|2013-03-10"), _p("lga|2013-03-11", "pending"), _p("jfk|2013-03-11")])
    assert block["kind"] == "rows" and block["columns"] == ["2013-03-10", "2013-03-11"]
    jfk, lga = block["rows"]
    assert (jfk["title"], [c["key"] for c in jfk["cells"]]) == ("jfk", ["jfk|2013-03-10", "jfk|2013-03-11"])
    assert [c["state"] for c in lga["cells"]] == ["not opened", "pending"]


def test_other_keys_are_listed_after_the_time_blocks():
    blocks = layout([_p("exports"), _p("2026-04-01")])
    assert [b["kind"] for b in blocks] == ["month", "list"]
    assert blocks[1]["cells"][0]["label"] == "exports"


def test_pending_cells_show_counted_of_awaited_keys():
    hours = [f"2026-04-01T{h:02d}" for h in range(24)]
    pending = _p("2026-04-01", "pending", [_rollup(hours, ["2026-04-01T17"])])
    assert counted(pending) == (23, 24)
    assert layout([pending])[0]["weeks"][0][2]["count"] == "23/24"
    one_key = _p(
        "x",
        "pending",
        [{"asset": "a", "received": ["k"], "expected": [], "missing": [], "never_counting": []}],
    )
    assert counted(one_key) == (1, 1)
    assert counted(_p("2026-04-02", "success")) is None


def test_a_time_range_selects_on_the_time_part_and_an_end_keeps_its_whole_period():
    keys = ["2026-03-31", "2026-04-01", "2026-04-30T23", "jfk|2026-04-15", "2026-05-01"]
    chosen = select([_p(k) for k in keys], start="2026-04", end="2026-04")
    assert [p["partition_key"] for p in chosen] == ["2026-04-01", "jfk|2026-04-15", "2026-04-30T23"]
    assert time_part("jfk|2026-04-15") == "2026-04-15" and select([_p("a")]) == [_p("a")]


def test_summary_counts_states():
    assert summary([_p("a"), _p("b"), _p("c", "failed")]) == {"success": 2, "failed": 1}


def _k(key, events=1):
    return {"partition_key": key, "events": events, "first": None, "last": None}


def test_coverage_lists_every_day_from_first_to_last_with_gaps_and_missing_hours():
    keys = [_k("2026-05-01T00", 2), *(_k(f"2026-05-01T{h:02d}") for h in range(1, 24)), _k("2026-05-03T04")]
    [series] = coverage(keys)["series"]
    first, second, third = series["days"]
    assert (first["day"], first["events"], first["gap"]) == ("2026-05-01", 25, False)
    assert first["missing_hours"] == []
    assert (second["day"], second["gap"], second["keys"]) == ("2026-05-02", True, [])
    assert third["missing_hours"] == [f"{h:02d}" for h in range(24) if h != 4]


def test_coverage_makes_one_series_per_first_dimension_and_lists_dateless_keys():
    answer = coverage([_k("jfk|2013-03-10"), _k("lga|2013-03-12"), _k("jfk|2013-03-11"), _k("exports")])
    assert [s["title"] for s in answer["series"]] == ["jfk", "lga"]
    assert [d["gap"] for d in answer["series"][0]["days"]] == [False, False]
    assert [d["missing_hours"] for d in answer["series"][0]["days"]] == [[], []]
    assert answer["other"] == ["exports"]


def test_an_asset_page_lists_only_keyed_days_past_the_cap():
    [series] = coverage([_k("2000-01-01"), _k("2026-01-01")])["series"]
    assert [d["day"] for d in series["days"]] == ["2000-01-01", "2026-01-01"]
