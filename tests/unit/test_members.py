"""
Members of a dimension: a rollup through a lookup (store to region), members with dates, a Variable's.

Expected keys are worked out in the tests from the store table and the calendar (a day's key is
its date; an Australia/Sydney month begins on its first local day), never by the code under test.
"""

from __future__ import annotations

import json
import re
import traceback
from datetime import date, timedelta

import pytest
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
    LookupMapper,
    Member,
    Month,
    OtherMember,
    OutsideCalendar,
    RegexMapper,
    TemporalMapper,
    VariableMembers,
)
from airflow_partitions import members as members_module
from airflow_partitions.mapping import known_keys
from airflow_partitions.members import EXPECTED_JSON, forget_reads, parse_members

SYDNEY = "Australia/Sydney"
#: Eight stores in two regions, as the issue's example.
STORES = {f"store-00{i}": "nsw" if i <= 4 else "vic" for i in range(1, 9)}
STORE_009 = Member("store-009", start="2026-04-06", group="vic")


def by_region(
    window: DimensionWindow, table: dict[str, str] | None = None, **kwargs
) -> DimensionRollupMapper:
    """Stores' days into regions' days, through a lookup of *table* (default :data:`STORES`)."""
    return DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["store", "day"],
            {"store": LookupMapper(table or STORES), "day": TemporalMapper(Day(timezone=SYDNEY))},
            **kwargs,
        ),
        window=window,
    )


def keys(stores, day: str) -> set[str]:
    return {f"{store}|{day}" for store in stores}


# -- A rollup through a lookup, in one Dag -------------------------------------------------------


def test_the_issues_spelling_runs_each_region_day_from_its_own_stores():
    rollup = by_region(DimensionWindow(store=list(STORES)))
    for store, region in STORES.items():
        assert rollup.to_downstream(f"{store}|2026-04-05") == f"{region}|2026-04-05"
    assert rollup.to_upstream("nsw|2026-04-05") == keys(
        ["store-001", "store-002", "store-003", "store-004"], "2026-04-05"
    )
    assert rollup.to_upstream("vic|2026-04-05") == keys(
        ["store-005", "store-006", "store-007", "store-008"], "2026-04-05"
    )


def test_kept_dimensions_follow_the_output_order():
    rollup = by_region(DimensionWindow(store=list(STORES)), output=["day", "store"])
    assert rollup.to_downstream("store-006|2026-04-05") == "2026-04-05|vic"
    assert rollup.to_upstream("2026-04-05|vic") == keys(
        ["store-005", "store-006", "store-007", "store-008"], "2026-04-05"
    )


def test_any_key_mapper_is_a_lookup_a_regex_one_too():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["store", "day"],
            {"store": RegexMapper(r"(?P<region>[a-z]+)-\d+", "{region}"), "day": TemporalMapper(Day())},
        ),
        window=DimensionWindow(store=["nsw-1", "nsw-2", "vic-7"]),
    )
    assert rollup.to_downstream("vic-7|2026-04-05") == "vic|2026-04-05"
    assert rollup.to_upstream("nsw|2026-04-05") == {"nsw-1|2026-04-05", "nsw-2|2026-04-05"}
    with pytest.raises(OtherMember, match=re.escape("dimension 'store' is 'vic-8', not one of")):
        rollup.to_downstream("vic-8|2026-04-05")  # matches the pattern, but is not listed


def test_three_dimensions_a_lookup_kept_and_a_list_dropped():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["store", "till", "day"],
            {"store": LookupMapper(STORES), "day": TemporalMapper(Day())},
            output=["store", "day"],
        ),
        window=DimensionWindow(store=["store-001", "store-005"], till=["t1", "t2"]),
    )
    assert rollup.to_downstream("store-001|t2|2026-04-05") == "nsw|2026-04-05"
    assert rollup.to_upstream("nsw|2026-04-05") == {"store-001|t1|2026-04-05", "store-001|t2|2026-04-05"}


def test_a_lookup_that_fans_out_awaits_the_store_in_each_of_its_regions():
    rollup = by_region(DimensionWindow(store=["s1", "s2"]), table={"s1": ["nsw", "act"], "s2": "nsw"})
    assert rollup.to_downstream("s1|2026-04-05") == ["act|2026-04-05", "nsw|2026-04-05"]
    assert rollup.to_upstream("act|2026-04-05") == {"s1|2026-04-05"}
    assert rollup.to_upstream("nsw|2026-04-05") == {"s1|2026-04-05", "s2|2026-04-05"}


@pytest.mark.parametrize(
    ("build", "match"),
    [
        # A listed store the lookup cannot place: refused at parse, naming it.
        (lambda: by_region(DimensionWindow(store=[*STORES, "store-077"])), "'store-077' has no group"),
        # Kept as it is (no mapper): its value would be fixed by the key itself.
        (
            lambda: DimensionRollupMapper(
                upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}),
                window=DimensionWindow(store=["s1"]),
            ),
            "'store' is kept in the downstream key as it is",
        ),
        # A fan-out lists values only for a dimension it adds.
        (
            lambda: DimensionFanOutMapper(
                upstream_mapper=CompositeKeyMapper(["store", "day"], {"store": LookupMapper(STORES)}),
                window=DimensionWindow(store=["store-001"]),
                downstream_mapper=CompositeKeyMapper(["store", "day"]),
            ),
            "'store' is kept",
        ),
        # Dates need one time dimension in the downstream key.
        (
            lambda: DimensionRollupMapper(
                upstream_mapper=CompositeKeyMapper(["store", "region"], output=["region"]),
                window=DimensionWindow(store=[Member("s1", start="2026-04-06")]),
            ),
            "exactly one time dimension",
        ),
    ],
)
def test_lists_that_cannot_work_are_refused_at_parse(build, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        build()


def test_a_per_region_dag_refuses_other_regions_stores_as_other_members_not_mistakes():
    nsw = [s for s, region in STORES.items() if region == "nsw"]
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}, output=["day"]),
        window=DimensionWindow(store=nsw),
    )
    assert rollup.to_downstream("store-002|2026-04-05") == "2026-04-05"
    with pytest.raises(OtherMember, match=re.escape("dimension 'store' is 'store-006', not one of")):
        rollup.to_downstream("store-006|2026-04-05")


# -- Members with dates --------------------------------------------------------------------------


def test_store_009_is_awaited_from_its_first_day_and_its_earlier_keys_are_refused_naming_its_dates():
    rollup = by_region(DimensionWindow(store=[*STORES, STORE_009]))
    vic = ["store-005", "store-006", "store-007", "store-008"]
    assert rollup.to_upstream("vic|2026-04-04") == keys(vic, "2026-04-04")
    assert rollup.to_upstream("vic|2026-04-06") == keys([*vic, "store-009"], "2026-04-06")
    assert rollup.to_downstream("store-009|2026-04-06") == "vic|2026-04-06"
    with pytest.raises(
        OutsideCalendar,
        match=re.escape("'store-009' is a member from 2026-04-06, not of the period beginning 2026-04-04"),
    ):
        rollup.to_downstream("store-009|2026-04-04")


def test_a_member_that_opens_mid_month_is_first_awaited_by_the_next_month():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["store", "month"], {"month": TemporalMapper(Month(timezone=SYDNEY))}, output=["month"]
        ),
        window=DimensionWindow(store=["s1", Member("s2", start="2026-04-15", end="2026-07-01")]),
    )
    assert rollup.to_upstream("2026-04") == {"s1|2026-04"}  # April began on the 1st, before s2 opened
    assert rollup.to_upstream("2026-05") == {"s1|2026-05", "s2|2026-05"}
    assert rollup.to_upstream("2026-06") == {"s1|2026-06", "s2|2026-06"}
    assert rollup.to_upstream("2026-07") == {"s1|2026-07"}  # end is exclusive


def test_a_fan_out_over_dated_members_runs_only_the_members_of_the_day():
    fan_out = DimensionFanOutMapper(
        upstream_mapper=CompositeKeyMapper(["day"], {"day": TemporalMapper(Day())}),
        window=DimensionWindow(store=["s1", Member("s2", end="2026-04-05")]),
        downstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}),
    )
    assert fan_out.to_downstream("2026-04-04") == ["s1|2026-04-04", "s2|2026-04-04"]
    assert fan_out.to_downstream("2026-04-05") == ["s1|2026-04-05"]


days = st.dates(min_value=date(2025, 1, 1), max_value=date(2027, 12, 31))


@st.composite
def dated_members(draw):
    """A member with a random start and/or end (end after start), or none."""
    start = draw(st.none() | days)
    end = draw(st.none() | days.filter(lambda d: start is None or d > start))
    return start, end


@given(dates=st.lists(dated_members(), min_size=1, max_size=6), day=days)
def test_a_dated_member_is_awaited_exactly_by_the_periods_from_its_start_to_its_end(dates, day):
    members = [Member(f"s{i}", start, end) for i, (start, end) in enumerate(dates)]
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(
            ["store", "day"], {"day": TemporalMapper(Day(timezone=SYDNEY))}, output=["day"]
        ),
        window=DimensionWindow(store=members),
    )
    key = day.isoformat()
    covering = {
        f"s{i}|{key}"
        for i, (start, end) in enumerate(dates)
        if (start is None or start <= day) and (end is None or day < end)
    }
    assert rollup.to_upstream(key) == covering
    for i, (start, _end) in enumerate(dates):
        upstream = f"s{i}|{key}"
        if upstream in covering:  # u in to_upstream(D) <=> D in to_downstream(u)
            assert rollup.to_downstream(upstream) == key
        else:
            with pytest.raises(
                OutsideCalendar,
                match=re.escape(f"'s{i}' is a member from" if start else f"'s{i}' is a member until"),
            ):
                rollup.to_downstream(upstream)


@st.composite
def store_tables(draw):
    """A table of stores to regions, and the stores a window lists (some with dates and groups)."""
    names = draw(st.lists(st.from_regex(r"s[0-9]{1,3}", fullmatch=True), min_size=1, max_size=8, unique=True))
    table = {name: draw(st.sampled_from(["nsw", "vic", "qld"])) for name in names}
    listed = []
    for name in names:
        start, end = draw(dated_members())
        group = draw(st.none() | st.sampled_from(["nsw", "vic", "wa"]))
        listed.append(Member(name, start, end, group))
    return table, listed


@given(setup=store_tables(), day=days)
def test_a_lookup_rollup_keeps_the_sliding_contract_for_every_store_and_region(setup, day):
    table, listed = setup
    rollup = by_region(DimensionWindow(store=listed), table=table)
    key = day.isoformat()
    regions = {"nsw", "vic", "qld", "wa"}
    for member in listed:
        upstream = f"{member.value}|{key}"
        region = member.group or table[member.value]
        covered = (member.start is None or member.start <= day) and (member.end is None or day < member.end)
        for downstream in (f"{r}|{key}" for r in regions):
            assert (upstream in rollup.to_upstream(downstream)) == (
                covered and downstream == f"{region}|{key}"
            )
        if covered:
            assert rollup.to_downstream(upstream) == f"{region}|{key}"
        else:
            with pytest.raises(OutsideCalendar):
                rollup.to_downstream(upstream)


@given(values=st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), min_size=1, max_size=6, unique=True))
def test_a_plain_list_is_stored_as_before_and_awaits_every_value(values):
    window = DimensionWindow(store=values)
    assert window.serialize()["windows"] == {"store": {"values": sorted(values)}}
    assert DimensionWindow(store=[Member(v) for v in values]).serialize() == window.serialize()


def test_dated_members_round_trip_through_airflows_serialization():
    rollup = by_region(
        DimensionWindow(store=[*STORES, STORE_009, Member("store-010", end="2026-05-01", group="nsw")])
    )
    stored = json.loads(json.dumps(encode_partition_mapper(rollup)))
    assert stored["__var"]["window"]["__var"]["windows"]["store"]["values"][-2:] == [
        {"group": "vic", "start": "2026-04-06", "value": "store-009"},
        {"end": "2026-05-01", "group": "nsw", "value": "store-010"},
    ]
    rebuilt = decode_partition_mapper(stored)
    assert rebuilt == rollup
    assert rebuilt.to_upstream("vic|2026-04-06") == rollup.to_upstream("vic|2026-04-06")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("",), "non-blank"),
        (("s1", "2026-04-31"), "YYYY-MM-DD"),
        (("s1", "06/04/2026"), "YYYY-MM-DD"),
        (("s1", "2026-04-06", "2026-04-06"), "must be after start"),
        (("s1", None, None, " "), "group must be"),
    ],
)
def test_a_bad_member_is_refused_naming_what_is_expected(args, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        Member(*args)


def test_a_member_date_with_a_time_is_refused():
    from datetime import datetime

    with pytest.raises(ValueError, match="not a date and time"):
        Member("s1", start=datetime(2026, 4, 6))


# -- Members read from an Airflow Variable --------------------------------------------------------


@pytest.fixture
def variable(monkeypatch):
    """Set the Airflow Variable ``retail_stores`` through Airflow's environment-variable secrets backend."""
    forget_reads()

    def set_to(value) -> None:
        monkeypatch.setenv(
            "AIRFLOW_VAR_RETAIL_STORES", value if isinstance(value, str) else json.dumps(value)
        )
        forget_reads()

    yield set_to
    forget_reads()


def by_region_from_variable() -> DimensionRollupMapper:
    return by_region(DimensionWindow(store=VariableMembers("retail_stores")))


def test_a_variables_members_are_awaited_and_its_stored_form_names_it_only(variable):
    variable([*STORES])
    rollup = by_region_from_variable()
    before = json.dumps(encode_partition_mapper(rollup))
    assert rollup.serialize()["window"]["__var"]["windows"] == {"store": {"variable": "retail_stores"}}
    assert rollup.to_upstream("vic|2026-04-06") == keys(
        ["store-005", "store-006", "store-007", "store-008"], "2026-04-06"
    )

    # store-009 joins vic, with its region, from 2026-04-06: the stored form does not change.
    variable([*STORES, {"value": "store-009", "start": "2026-04-06", "group": "vic"}])
    assert json.dumps(encode_partition_mapper(by_region_from_variable())) == before
    assert rollup.to_upstream("vic|2026-04-06") == keys(
        ["store-005", "store-006", "store-007", "store-008", "store-009"], "2026-04-06"
    )
    assert rollup.to_upstream("vic|2026-04-04") == keys(
        ["store-005", "store-006", "store-007", "store-008"], "2026-04-04"
    )
    assert rollup.to_downstream("store-009|2026-04-06") == "vic|2026-04-06"  # the group, not the table
    with pytest.raises(OutsideCalendar, match="from 2026-04-06"):
        rollup.to_downstream("store-009|2026-04-04")


def test_a_change_is_seen_once_the_read_is_older_than_the_ttl(variable, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(members_module.time, "monotonic", lambda: clock[0])
    variable(["store-005"])
    rollup = by_region_from_variable()
    assert rollup.to_upstream("vic|2026-04-06") == {"store-005|2026-04-06"}
    monkeypatch.setenv("AIRFLOW_VAR_RETAIL_STORES", json.dumps(["store-005", "store-006"]))
    clock[0] += members_module.VARIABLE_TTL - 1
    assert rollup.to_upstream("vic|2026-04-06") == {"store-005|2026-04-06"}  # still the read of a minute ago
    clock[0] += 1
    assert rollup.to_upstream("vic|2026-04-06") == {"store-005|2026-04-06", "store-006|2026-04-06"}


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("not json", "is not JSON"),
        ("{}", "holds"),
        ("[]", "holds"),
        ('["s1", 5]', "entry 5"),
        ('[{"value": "s1", "opens": "2026-04-06"}]', "entry"),
        ('[{"value": "s1", "start": "April"}]', "YYYY-MM-DD"),
        ('["s1", "s1"]', "twice"),
    ],
)
def test_a_malformed_variable_is_an_error_naming_it_and_the_json_expected(variable, value, match):
    variable(value)
    rollup = by_region_from_variable()
    # What the scheduler asks of a pending run: no keys, and why (it must not raise: Airflow logs a
    # traceback for each pending run on each loop); the run waits, never fires.
    expected = rollup.to_upstream("vic|2026-04-06")
    assert len(expected) == 0 and re.search(re.escape(match), expected.problem)
    assert "Airflow Variable 'retail_stores'" in expected.problem and EXPECTED_JSON in expected.problem
    answer = rollup.wait_policy.is_satisfied_by_keys(matched=keys(STORES, "2026-04-06"), expected=expected)
    assert not answer.satisfied and answer.unreachable and expected.problem in answer.unreachable_reason
    # What the tools and tasks ask: the error itself.
    with pytest.raises(ValueError, match=re.escape(match)) as raised:
        known_keys(rollup.to_upstream("vic|2026-04-06"))
    assert EXPECTED_JSON in str(raised.value)
    with pytest.raises(ValueError, match="Airflow Variable 'retail_stores'"):
        rollup.to_downstream("store-005|2026-04-06")  # the key is refused out loud, not held


def test_a_broken_variable_is_raised_anew_each_time_and_logged_once_per_read(variable, monkeypatch, caplog):
    clock = [1000.0]
    monkeypatch.setattr(members_module.time, "monotonic", lambda: clock[0])
    variable("not json")
    rollup = by_region_from_variable()
    raised = []
    with caplog.at_level("ERROR", logger=members_module.__name__):
        for _ in range(50):  # a scheduler evaluating pending runs loop after loop
            rollup.to_upstream("vic|2026-04-06")
            with pytest.raises(ValueError) as error:
                rollup.to_downstream("store-005|2026-04-06")
            raised.append(error.value)
        assert len(caplog.records) == 1  # one line per read, not one per use
        # A new exception each time: a stored one raised again grows its traceback on every raise.
        assert len({id(e) for e in raised}) == len(raised)
        depths = {len(traceback.extract_tb(e.__traceback__)) for e in raised}
        assert len(depths) == 1
        problem, since = VariableMembers("retail_stores").problem()
        clock[0] += members_module.VARIABLE_TTL
        rollup.to_upstream("vic|2026-04-06")
        assert len(caplog.records) == 2  # read again after the TTL: logged again, still broken
    assert VariableMembers("retail_stores").problem() == (problem, since)  # broken since the first read
    assert "is not JSON" in problem and "broken since" in caplog.records[0].getMessage()
    monkeypatch.setenv("AIRFLOW_VAR_RETAIL_STORES", json.dumps([*STORES]))
    clock[0] += members_module.VARIABLE_TTL
    assert VariableMembers("retail_stores").problem() is None
    assert rollup.to_downstream("store-005|2026-04-06") == "vic|2026-04-06"


def test_a_missing_variable_names_it_and_the_json_expected():
    with pytest.raises(
        ValueError,
        match=re.escape(f"Airflow Variable 'retail_stores' does not exist; set it to {EXPECTED_JSON}"),
    ):
        parse_members("retail_stores", None, read_at=None)


def test_a_variable_is_never_read_at_dag_parse(variable):
    variable("not json")
    assert by_region_from_variable().serialize()["window"]["__var"]["windows"]["store"] == {
        "variable": "retail_stores"
    }


def test_a_bad_variable_name_is_refused_at_parse():
    with pytest.raises(ValueError, match="Airflow Variable key"):
        VariableMembers(" retail_stores")


def test_an_unchanged_value_keeps_the_same_member_list_and_its_memos(variable, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(members_module.time, "monotonic", lambda: clock[0])
    variable(["store-005"])
    first = VariableMembers("retail_stores").current()
    clock[0] += members_module.VARIABLE_TTL + timedelta(seconds=1).total_seconds()
    assert VariableMembers("retail_stores").current() is first


def stores_by_group_from_variable() -> DimensionRollupMapper:
    """Stores' days into their groups' days, the groups read from the Variable alone (no lookup)."""
    return DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": TemporalMapper(Day())}),
        window=DimensionWindow(store=VariableMembers("retail_stores")),
    )


def test_a_variables_groups_place_stores_no_lookup_table_knows(variable):
    variable([{"value": "store-010", "group": "vic"}, {"value": "store-011", "group": "nsw"}])
    rollup = stores_by_group_from_variable()
    assert rollup.to_downstream("store-010|2026-04-06") == "vic|2026-04-06"
    assert rollup.to_upstream("vic|2026-04-06") == {"store-010|2026-04-06"}
    assert rollup.to_upstream("nsw|2026-04-06") == {"store-011|2026-04-06"}
    variable(["store-010", "store-011"])  # no member has a group: each counts for its own value
    assert rollup.to_downstream("store-010|2026-04-06") == "store-010|2026-04-06"


def test_a_member_saved_without_its_group_is_an_error_naming_it_not_a_partition_of_its_own(variable):
    # The half-edited JSON of the issue: store-011 lost its group. Read as its own "region", it
    # opened store-011|… and its region's day stopped awaiting it.
    variable([{"value": "store-010", "group": "vic"}, "store-011", {"value": "store-012", "group": "vic"}])
    rollup = stores_by_group_from_variable()
    with pytest.raises(ValueError, match=re.escape("members ['store-011'] have no group while the others")):
        rollup.to_downstream("store-011|2026-04-06")
    with pytest.raises(ValueError, match="store-011"):
        rollup.to_downstream("store-010|2026-04-06")  # the whole list is broken, as malformed JSON is
    expected = rollup.to_upstream("vic|2026-04-06")
    assert len(expected) == 0 and "store-011" in expected.problem
    assert rollup.wait_policy.is_satisfied_by_keys(matched=set(), expected=expected).unreachable


def test_a_period_whose_group_left_the_members_awaits_nothing_and_never_fires(variable):
    variable([{"value": "store-010", "group": "vic"}, {"value": "store-011", "group": "vic"}])
    rollup = stores_by_group_from_variable()
    # A pending run of a group no member has (the store's own value while its group was missing):
    expected = rollup.to_upstream("store-011|2026-04-06")
    assert len(expected) == 0 and expected.problem == ""
    answer = rollup.wait_policy.is_satisfied_by_keys(matched={"store-011|2026-04-06"}, expected=expected)
    assert not answer.satisfied and answer.unreachable
    assert (
        "'store-011|2026-04-06'" in answer.unreachable_reason
        and "awaits no keys" in answer.unreachable_reason
    )


def test_a_new_value_builds_again_only_the_periods_whose_members_it_changes(variable):
    variable([*STORES])
    rollup = by_region_from_variable()
    nsw, vic = rollup.to_upstream("nsw|2026-04-06"), rollup.to_upstream("vic|2026-04-06")
    variable([*STORES, {"value": "store-009", "group": "vic"}])
    assert rollup.to_upstream("nsw|2026-04-06") is nsw  # the same awaited keys, not built again
    assert rollup.to_upstream("vic|2026-04-06") == vic | {"store-009|2026-04-06"}


@given(
    dates=dated_members(),
    value=st.from_regex(r"[a-z0-9-]{1,12}", fullmatch=True),
    group=st.none() | st.sampled_from(["nsw", "vic"]),
)
def test_a_members_entry_and_stored_form_give_back_the_same_member(dates, value, group):
    member = Member(value, *dates, group)
    assert Member.from_entry(json.loads(json.dumps(member.entry())), where="test") == member
    assert Member.deserialize(json.loads(json.dumps(member.serialize()))) == member
    # A member without dates or group is stored as its plain value, as a list always was.
    assert (member.entry() == value) == (dates == (None, None) and group is None)


def test_a_fix_is_seen_within_seconds_of_a_broken_read(variable, monkeypatch):
    # A missing or malformed Variable is read again after BROKEN_TTL (5 s), not the minute a good
    # value is kept: keys sent right after the fix are not refused for a minute more.
    clock = [1000.0]
    monkeypatch.setattr(members_module.time, "monotonic", lambda: clock[0])
    variable("not json")
    rollup = by_region_from_variable()
    assert rollup.to_upstream("vic|2026-04-06").problem
    monkeypatch.setenv("AIRFLOW_VAR_RETAIL_STORES", json.dumps([*STORES]))
    clock[0] += members_module.BROKEN_TTL - 0.5
    assert rollup.to_upstream("vic|2026-04-06").problem  # the failed read, kept a few seconds
    clock[0] += 0.5
    assert rollup.to_upstream("vic|2026-04-06") == keys(STORES, "2026-04-06") - keys(
        ["store-001", "store-002", "store-003", "store-004"], "2026-04-06"
    )
    assert members_module.BROKEN_TTL < members_module.VARIABLE_TTL
