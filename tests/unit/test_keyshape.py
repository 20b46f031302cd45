from __future__ import annotations

import json
import re

import pytest
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import RegexMapper

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
    with pytest.raises(ValueError, match="does not match"):
        mapper.to_downstream("a" * 10_000 + "b")
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
