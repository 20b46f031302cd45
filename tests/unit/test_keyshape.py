from __future__ import annotations

import json
import re

import pytest
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import LookupMapper, RegexMapper
from tests.unit.support import assert_maps_alike, names_key

EXPORTS = RegexMapper(r"exports/(?P<region>[a-z]+)/(?P<day>\d{8})\.csv", "{region}|{day}")


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("exports/eu/20260310.csv", "eu|20260310"),
        ("exports/apac/20261231.csv", "apac|20261231"),
    ],
)
def test_named_groups_are_rendered_into_the_template(key, expected):
    assert EXPORTS.to_downstream(key) == expected


@pytest.mark.parametrize(
    "key", ["exports/EU/20260310.csv", "exports/eu/2026031.csv", "x/exports/eu/20260310.csv", "", 7]
)
def test_a_key_that_does_not_fully_match_is_refused_naming_it(key):
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        EXPORTS.to_downstream(key)


def test_adversarial_10000_character_key_against_a_backtracking_pattern_fails_cleanly():
    # With Python's backtracking re, (a+)+$ against a's followed by a b takes exponential time.
    mapper = RegexMapper(r"(?P<run>(a+)+)$", "{run}")
    with pytest.raises(ValueError, match="does not match") as refused:
        mapper.to_downstream("a" * 10_000 + "b")
    assert "'" + "a" * 300 + "'" in str(refused.value)  # the key, cut to its first 300 characters
    assert len(str(refused.value)) < 400
    assert mapper.to_downstream("a" * 250) == "a" * 250


def test_output_longer_than_250_characters_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="at most 250"):
        RegexMapper(r"(?P<all>.*)", "{all}").to_downstream("x" * 251)


def test_a_group_that_did_not_take_part_is_refused():
    mapper = RegexMapper(r"(?P<a>x)?(?P<b>y)", "{a}-{b}")
    assert mapper.to_downstream("xy") == "x-y"
    with pytest.raises(ValueError, match=r"without the groups \['a'\]"):
        mapper.to_downstream("y")


@pytest.mark.parametrize(
    ("pattern", "template", "match"),
    [
        (r"(?P<a>x)(?=y)", "{a}", "RE2 accepts"),  # look-ahead: not in RE2
        (r"(?P<a>x)\1", "{a}", "RE2 accepts"),  # backreference: not in RE2
        (r"(?P<a>x)", "{b}", "groups of the pattern"),
        (r"(?P<a>x)", "{}", "groups of the pattern"),
        (r"(?P<a>x)", "{a:>5}", "groups of the pattern"),
        ("", "{a}", "pattern must be a non-empty string"),
        (r"(?P<a>x)", "", "template must be a non-empty string"),
    ],
)
def test_bad_configuration_is_refused_at_parse(pattern, template, match):
    with pytest.raises(ValueError, match=match):
        RegexMapper(pattern, template)


@given(region=st.from_regex(r"[a-z]{1,10}", fullmatch=True), day=st.from_regex(r"[0-9]{8}", fullmatch=True))
def test_every_matching_key_maps_to_its_parts(region, day):
    assert EXPORTS.to_downstream(f"exports/{region}/{day}.csv") == f"{region}|{day}"


def test_round_trip_through_airflows_serialization_behaves_identically():
    mapper = RegexMapper(r"(?P<region>[a-z]+)::(?P<rest>.+)", "{rest}@{region}", max_downstream_keys=2)
    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(mapper))))
    assert json.dumps(rebuilt.serialize()) == json.dumps(mapper.serialize())
    assert (
        rebuilt.to_downstream("eu::daily-sales")
        == mapper.to_downstream("eu::daily-sales")
        == "daily-sales@eu"
    )


def test_digits_class_is_ascii_only_as_in_re2_not_unicode_as_in_python():
    # RE2's \d is [0-9]; Python's re would also accept ARABIC-INDIC DIGIT ZERO (U+0660).
    with pytest.raises(ValueError, match="does not match"):
        EXPORTS.to_downstream("exports/eu/2026031\u0660.csv")


# -- LookupMapper ----------------------------------------------------------------------------------

STORES = LookupMapper({"store-001": "eu", "store-002": "eu", "store-101": "us"})
REGIONS = LookupMapper({"eu": ["store-002", "store-001"], "us": "store-101"})


@pytest.mark.parametrize(("key", "expected"), [("store-001", "eu"), ("store-002", "eu"), ("store-101", "us")])
def test_many_to_one_maps_each_store_to_its_region(key, expected):
    assert STORES.to_downstream(key) == expected


def test_one_to_many_maps_a_region_to_its_stores_in_sorted_order():
    assert REGIONS.to_downstream("eu") == ["store-001", "store-002"]
    assert REGIONS.to_downstream("us") == "store-101"
    assert REGIONS.largest_fan_out == 2
    assert STORES.largest_fan_out == 1


@pytest.mark.parametrize("key", ["store-999", "Store-001", "store-001 ", "", 7, None])
def test_strict_table_refuses_a_key_it_does_not_hold_naming_it_and_known_keys(key):
    with pytest.raises(ValueError, match="partition key " + names_key(key)) as error:
        STORES.to_downstream(key)
    assert "'store-001'" in str(error.value)


def test_default_and_pass_through_map_unknown_keys_and_leave_known_ones_alone():
    with_default = LookupMapper({"store-001": "eu"}, default="unassigned")
    assert with_default.to_downstream("store-999") == "unassigned"
    assert with_default.to_downstream("store-001") == "eu"
    passing = LookupMapper({"store-001": "eu"}, pass_through=True)
    assert passing.to_downstream("store-999") == "store-999"
    assert passing.to_downstream("store-001") == "eu"


@pytest.mark.parametrize(
    ("table", "kwargs", "named"),
    [
        ({}, {}, "{}"),
        (["store-001"], {}, "['store-001']"),
        ({"": "eu"}, {}, "''"),
        ({"   ": "eu"}, {}, "'   '"),
        ({5: "eu"}, {}, "5"),
        ({"store-001": ""}, {}, "table['store-001']"),
        ({"store-001": "x" * 251}, {}, "table['store-001']"),
        ({"eu": []}, {}, "table['eu']"),
        ({"eu": ["store-001", ""]}, {}, "table['eu']"),
        ({"eu": ["store-001", "store-001"]}, {}, "table['eu'] lists a key twice"),
        ({"eu": {"store-001"}}, {}, "table['eu']"),
        ({"eu": "store-001"}, {"default": ""}, "default"),
        ({"eu": "store-001"}, {"default": "x", "pass_through": True}, "default='x'"),
    ],
)
def test_bad_table_is_refused_at_parse_naming_the_entry(table, kwargs, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        LookupMapper(table, **kwargs)


def test_a_one_to_many_entry_longer_than_the_fan_out_cap_is_refused_at_parse():
    table = {"eu": ["store-001", "store-002", "store-003"], "us": "store-101"}
    with pytest.raises(
        ValueError, match=r"key 'eu' maps to 3 downstream keys, more than max_downstream_keys=2"
    ):
        LookupMapper(table, max_downstream_keys=2)
    assert LookupMapper(table, max_downstream_keys=3).to_downstream("eu") == [
        "store-001",
        "store-002",
        "store-003",
    ]


def test_the_default_fan_out_cap_is_airflows_1000():
    stores = [f"store-{n:04d}" for n in range(1001)]
    with pytest.raises(ValueError, match=r"'eu' maps to 1001 downstream keys.*\(1000\)"):
        LookupMapper({"eu": stores})
    assert len(LookupMapper({"eu": stores[:1000]}).to_downstream("eu")) == 1000


def test_serialize_writes_the_table_sorted_by_key_with_sorted_target_lists():
    mapper = LookupMapper(
        {"us": ["store-9", "store-3"], "eu": "store-1", "apac": ("store-7", "store-5")},
        default="unassigned",
        max_downstream_keys=2,
    )
    assert json.dumps(mapper.serialize()) == (
        '{"default": "unassigned", "format_version": 1, "max_downstream_keys": 2, "table": '
        '{"apac": ["store-5", "store-7"], "eu": "store-1", "us": ["store-3", "store-9"]}}'
    )
    assert LookupMapper({"a": "b"}, pass_through=True).serialize() == {
        "format_version": 1,
        "pass_through": True,
        "table": {"a": "b"},
    }


def test_lookup_round_trip_through_airflows_serialization_behaves_identically():
    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(REGIONS))))
    assert type(rebuilt) is LookupMapper
    assert rebuilt.to_downstream("eu") == ["store-001", "store-002"]
    assert rebuilt.to_downstream("us") == "store-101"
    with pytest.raises(ValueError, match="'apac'"):
        rebuilt.to_downstream("apac")


ADVERSARIAL_KEY = "store-" + "9" * 9_994


@pytest.mark.parametrize("options", [{}, {"pass_through": True}])
def test_adversarial_10000_character_key_is_refused_naming_it(options):
    assert len(ADVERSARIAL_KEY) == 10_000
    with pytest.raises(ValueError, match=names_key(ADVERSARIAL_KEY)):
        LookupMapper({"store-001": "eu"}, **options).to_downstream(ADVERSARIAL_KEY)


def test_a_blank_key_does_not_pass_through():
    with pytest.raises(ValueError, match=names_key("  ")):
        LookupMapper({"store-001": "eu"}, pass_through=True).to_downstream("  ")


def test_adversarial_key_under_a_default_maps_to_the_default():
    assert (
        LookupMapper({"store-001": "eu"}, default="unassigned").to_downstream(ADVERSARIAL_KEY) == "unassigned"
    )


table_keys = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12).filter(str.strip)
tables = st.dictionaries(
    table_keys,
    st.one_of(table_keys, st.lists(table_keys, min_size=1, max_size=5, unique=True)),
    min_size=1,
    max_size=12,
)


@given(table=tables, data=st.data())
def test_lookup_serializes_alike_whatever_the_order_the_table_was_written_in(table, data):
    items = data.draw(st.permutations(list(table.items())))
    reordered = {
        key: target if isinstance(target, str) else data.draw(st.permutations(target))
        for key, target in items
    }
    written = json.dumps(LookupMapper(reordered).serialize())
    assert written == json.dumps(LookupMapper(table).serialize())
    stored = json.loads(written)["table"]
    assert list(stored) == sorted(table)
    assert all(isinstance(t, str) or t == sorted(t) for t in stored.values())


@given(
    table=tables,
    options=st.sampled_from([{}, {"default": "unassigned"}, {"pass_through": True}]),
    data=st.data(),
)
def test_lookup_deserialized_maps_every_key_like_the_original(table, options, data):
    mapper = LookupMapper(table, **options)
    rebuilt = LookupMapper.deserialize(json.loads(json.dumps(mapper.serialize())))
    keys = data.draw(st.lists(st.one_of(st.sampled_from(sorted(table)), st.text(max_size=300)), max_size=10))
    for key in keys:
        assert_maps_alike(mapper, rebuilt, key)
        if key in table:  # an independent look-up: the table entry itself, lists sorted
            assert mapper.to_downstream(key) == (
                table[key] if isinstance(table[key], str) else sorted(table[key])
            )


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: RegexMapper("(?P<a>x)", "{a"), r"template '\{a' is not a format string"),
        (lambda: RegexMapper("(?P<a>x)", " "), "template must not be blank"),
        (lambda: LookupMapper({"a": "b"}, pass_through="no"), "pass_through must be True or False; got 'no'"),
    ],
)
def test_bad_templates_and_flags_are_refused_at_parse(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_round_trips_compare_equal():
    for mapper in (EXPORTS, LookupMapper({"eu": ["s1", "s2"], "s3": "us"}, default="x")):
        assert type(mapper).deserialize(json.loads(json.dumps(mapper.serialize()))) == mapper
