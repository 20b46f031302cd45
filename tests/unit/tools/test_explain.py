"""explain, load_mapper and partition_period, against values worked out independently of the mappers."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from airflow_partitions.tools import explain, load_mapper

NEW_YORK = ZoneInfo("America/New_York")
LOCAL_DAY = (
    'TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), '
    'input_timezone="UTC"), window=TemporalWindow(Hour()))'
)


def utc_hours_of_new_york_day(day: date) -> list[str]:
    """The UTC hour keys whose instant falls on *day* in New York, by brute force over two days."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    hours = (start + timedelta(hours=h) for h in range(48))
    return [f"{h:%Y-%m-%dT%H}" for h in hours if h.astimezone(NEW_YORK).date() == day]


def test_a_utc_hour_goes_to_its_new_york_day_of_23_hours_on_the_spring_forward_day():
    hours = utc_hours_of_new_york_day(date(2026, 3, 8))
    assert len(hours) == 23 and (hours[0], hours[-1]) == ("2026-03-08T05", "2026-03-09T03")

    explained = explain(load_mapper(LOCAL_DAY), "2026-03-08T05")

    assert explained.ok and explained.counts_as == "2026-03-08T05"
    (day,) = explained.keys
    assert day.key == "2026-03-08"
    assert day.partition_date == "2026-03-08T00:00:00-05:00"
    assert list(day.waits_for) == hours
    assert day.wait_policy == "WaitForAll()"
    assert day.closes_at == "2026-03-09T04:00:00+00:00"


def test_another_spelling_of_an_hour_counts_as_the_awaited_member():
    explained = explain(load_mapper(LOCAL_DAY), "2026-03-08T05:00:00Z")
    assert explained.counts_as == "2026-03-08T05"


def test_a_date_where_hours_are_awaited_is_refused_with_the_message_airflow_would_audit_log():
    explained = explain(load_mapper(LOCAL_DAY), "2026-03-08")
    assert not explained.ok and explained.keys == ()
    assert explained.refused.startswith("partition key '2026-03-08' would never count towards '2026-03-08'")


def test_downstream_key_lists_what_its_period_waits_for():
    explained = explain(load_mapper(LOCAL_DAY), "2026-11-01", downstream=True)
    assert explained.downstream and len(explained.keys[0].waits_for) == 25


def test_a_business_day_month_waits_for_its_weekdays_and_refuses_a_saturday():
    mapper = load_mapper(
        'TemporalRollupMapper(upstream_mapper=TemporalMapper(Month(timezone="America/New_York")), '
        "window=BusinessDayWindow())"
    )
    march = [date(2026, 3, d) for d in range(1, 32)]
    weekdays = [f"{d:%Y-%m-%d}" for d in march if d.weekday() < 5]  # no US federal holiday in March

    explained = explain(mapper, "2026-03", downstream=True)
    assert list(explained.keys[0].waits_for) == weekdays and len(weekdays) == 22

    saturday = explain(mapper, "2026-03-07")
    assert "is not a business day" in saturday.refused


def test_a_fan_out_counts_its_keys_against_its_cap():
    mapper = load_mapper(
        "TemporalFanOutMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()))"
    )
    explained = explain(mapper, "2028-02")
    assert explained.fan_out == {
        "count": 29,
        "cap": 1000,
        "cap_source": "[scheduler] partition_mapper_max_downstream_keys (1000)",
    }
    assert [k.key for k in explained.keys][::28] == ["2028-02-01", "2028-02-29"]

    capped = load_mapper(
        "TemporalFanOutMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()), "
        "max_downstream_keys=31)"
    )
    assert explain(capped, "2028-02").fan_out["cap_source"] == "max_downstream_keys=31"


def test_a_core_mapper_from_airflow_sdk_nested_in_our_composite_mapper_works():
    mapper = load_mapper('CompositeKeyMapper(["region", "time"], {"time": StartOfMonthMapper()})')
    explained = explain(mapper, "eu|2026-03-10T05:00:00")
    assert [(k.key, k.partition_date) for k in explained.keys] == [
        ("eu|2026-03", "2026-03-01T00:00:00+00:00")
    ]


def test_a_core_rollup_from_airflow_sdk_is_explained_with_its_spelling():
    mapper = load_mapper("RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())")
    explained = explain(mapper, "2026-03-10T05:00:00")
    assert explained.counts_as == "2026-03-10T05:00:00"
    assert len(explained.keys[0].waits_for) == 24


def test_a_completion_deadline_says_when_a_partial_period_fires():
    mapper = load_mapper(
        "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), "
        "wait_policy=CompletionDeadline(timedelta(hours=2), min_fraction=0.9))"
    )
    (day,) = explain(mapper, "2026-03-10T03").keys
    assert (day.closes_at, day.needed) == ("2026-03-11T00:00:00+00:00", 22)  # 90 % of 24, rounded up
    assert day.fires_at == "2026-03-11T02:00:00+00:00"
    assert day.fires_at_below_minimum == "2026-03-11T04:00:00+00:00"


def test_downstream_of_a_mapper_that_is_not_a_rollup_names_the_key_and_what_is_expected():
    with pytest.raises(ValueError, match=r"TemporalMapper is not a rollup.*'2026-03-10'"):
        explain(load_mapper("TemporalMapper(Day())"), "2026-03-10", downstream=True)


def test_explanation_is_json():
    data = json.loads(json.dumps(explain(load_mapper(LOCAL_DAY), "2026-03-08T05").to_dict()))
    assert data["ok"] is True and data["keys"][0]["waits_for_count"] == 23


@pytest.mark.parametrize("expression", ["Foo()", "TemporalMapper(", "Day()", "__import__('os')"])
def test_a_bad_mapper_expression_is_refused_naming_it(expression):
    with pytest.raises(ValueError, match="mapper expression"):
        load_mapper(expression)


def test_a_mapper_refusing_its_arguments_is_quoted_without_a_generic_example():
    with pytest.raises(ValueError) as refused:
        load_mapper("TemporalMapper(Day(timezone='Mars/Olympus_Mons'))")
    assert "Mars/Olympus_Mons" in str(refused.value) and "such as 'TemporalMapper(Day())'" not in str(
        refused.value
    )
    with pytest.raises(ValueError, match=r"NameError.*such as 'TemporalMapper\(Day\(\)\)'"):
        load_mapper("TemporalMaper(Day())")


@pytest.mark.parametrize(
    ("expression", "key", "expected"),
    [
        ('ChainMapper(PrefixStripMapper("eu"), TemporalMapper(Day()))', "eu::2026-03-10T05", "2026-03-10"),
        ("ProductMapper(IdentityMapper(), TemporalMapper(Day()))", "eu|2026-03-10T05", "eu|2026-03-10"),
    ],
)
def test_ours_nested_in_cores_chain_and_product_mappers_are_explained(expression, key, expected):
    explained = explain(load_mapper(expression), key)
    assert [(k.key, k.partition_date) for k in explained.keys] == [(expected, "2026-03-10T00:00:00+00:00")]


BY_REGION = (
    "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['store', 'day'], {{'store': LookupMapper("
    "{{'store-001': 'nsw', 'store-005': 'vic', 'store-006': 'vic'}}), 'day': TemporalMapper(Day())}}), "
    "window=DimensionWindow(store={stores}))"
)


def test_a_regions_day_shows_the_members_it_awaits_and_where_they_came_from():
    from airflow_partitions.tools.commands.explain import format_explanation

    stores = "['store-001', 'store-005', 'store-006', Member('store-009', start='2026-04-06', group='vic')]"
    mapper = load_mapper(BY_REGION.format(stores=stores))
    (before,) = explain(mapper, "vic|2026-04-04", downstream=True).keys
    (members,) = before.members
    assert members == {
        "dimension": "store",
        "source": "listed in the Dag file",
        "read_at": None,
        "period_begins": "2026-04-04",
        "group": "vic",
        "awaited": ["store-005", "store-006"],
        "dated": [{"value": "store-009", "start": "2026-04-06", "group": "vic", "awaited": False}],
    }
    (opened,) = explain(mapper, "vic|2026-04-06", downstream=True).keys
    assert opened.members[0]["awaited"] == ["store-005", "store-006", "store-009"]
    assert opened.members[0]["dated"] == [
        {"value": "store-009", "start": "2026-04-06", "group": "vic", "awaited": True}
    ]
    text = format_explanation(explain(mapper, "vic|2026-04-04", downstream=True))
    assert "2 awaited of vic (listed in the Dag file): store-005, store-006" in text
    assert (
        "store-009: from 2026-04-06 (end exclusive), not awaited by the period beginning 2026-04-04" in text
    )


def test_a_variables_members_name_the_variable_and_when_it_was_read(monkeypatch):
    from airflow_partitions.members import forget_reads

    monkeypatch.setenv("AIRFLOW_VAR_EXPLAINED_STORES", json.dumps(["store-005", "store-006"]))
    forget_reads()
    try:
        before = datetime.now(UTC)
        mapper = load_mapper(BY_REGION.format(stores="VariableMembers('explained_stores')"))
        (members,) = explain(mapper, "vic|2026-04-04", downstream=True).keys[0].members
    finally:
        forget_reads()
    assert members["source"] == "Variable 'explained_stores'"
    assert datetime.fromisoformat(members["read_at"]) >= before
    assert members["awaited"] == ["store-005", "store-006"]


def test_a_region_day_of_96_hours_leads_with_its_stores_and_counts_the_keys_it_leaves_out():
    from airflow_partitions.tools.commands.explain import format_explanation

    stores = [f"store-00{n}" for n in range(1, 5)]
    mapper = load_mapper(
        "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['store', 'time'], {'store': LookupMapper("
        f"{dict.fromkeys(stores, 'nsw')!r}), 'time': TemporalMapper(Day())}}), "
        f"window=DimensionWindow(store={stores!r}, time=TemporalWindow(Hour())))"
    )
    text = format_explanation(explain(mapper, "nsw|2026-11-29", downstream=True))
    # The four stores times the day's 24 UTC hours, in key order: 96, of which the first and last 6 show.
    awaited = [f"{store}|2026-11-29T{h:02d}" for store in stores for h in range(24)]
    lines = text.splitlines()
    [stores_at] = [i for i, line in enumerate(lines) if line.startswith("  stores ")]
    [keys_at] = [i for i, line in enumerate(lines) if line.startswith("  waits for ")]
    assert stores_at < keys_at, text  # which stores it awaits, before the keys they make
    assert lines[stores_at].split(None, 1)[1] == (
        "4 awaited of nsw (listed in the Dag file): store-001, store-002, store-003, store-004"
    )
    shown = " ".join(" ".join(lines[keys_at : keys_at + 4]).split())  # the line, unwrapped
    first = "waits for 96 keys under WaitForAll(): " + ", ".join(awaited[:6])
    assert shown.startswith(first + ", … (84 more; --json lists all) …, "), shown
    assert shown.endswith("…, " + ", ".join(awaited[-6:])), shown
    assert all(key not in text for key in awaited[6:-6])
    # A local day of 25 hours is listed whole.
    fall_back = format_explanation(explain(load_mapper(LOCAL_DAY), "2026-11-01", downstream=True))
    assert all(key in fall_back for key in utc_hours_of_new_york_day(date(2026, 11, 1)))
    assert "more; --json lists all" not in fall_back
