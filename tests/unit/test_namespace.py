from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from airflow_partitions import PrefixAddMapper, PrefixReplaceMapper, PrefixStripMapper

# Prefixes and separators: any non-empty text.
texts = st.text(min_size=1, max_size=40)
# Partition keys as Airflow accepts them: not empty, not whitespace-only
# (``SerializedDAG.validate_partition_key`` and the asset-event APIs refuse those).
keys = texts.filter(str.strip)
# A prefix of only white space is refused at parse, like a blank key.
prefixes = texts.filter(str.strip)


def outcome(mapper: PrefixStripMapper, key: str) -> tuple[str, str]:
    """Return what mapping *key* does: ("ok", result) or ("error", message)."""
    try:
        return "ok", mapper.to_downstream(key)
    except ValueError as err:
        return "error", str(err)


# -- examples ---------------------------------------------------------------------------------


def test_strips_the_prefix_and_default_separator():
    assert PrefixStripMapper("eu").to_downstream("eu::daily-sales") == "daily-sales"


def test_strips_a_date_key():
    assert PrefixStripMapper("eu").to_downstream("eu::2026-03-10") == "2026-03-10"


@pytest.mark.parametrize(
    "key",
    [
        "daily-sales",  # already in the target namespace
        "us::daily-sales",  # another namespace
        "eu:daily",  # one colon is not the separator
        "eudaily-sales",  # prefix without separator
        "EU::daily-sales",  # prefixes are case-sensitive
        "xeu::daily-sales",  # the prefix must start the key
    ],
)
def test_key_without_prefix_and_separator_passes_through(key):
    assert PrefixStripMapper("eu").to_downstream(key) == key


def test_only_the_leading_qualifier_is_stripped():
    assert PrefixStripMapper("eu").to_downstream("eu::eu::x") == "eu::x"


def test_custom_separator():
    mapper = PrefixStripMapper("eu", separator="/")
    assert mapper.to_downstream("eu/daily-sales") == "daily-sales"
    assert mapper.to_downstream("eu::daily-sales") == "eu::daily-sales"


@pytest.mark.parametrize("bad", ["", None, 5, b"eu", ["eu"]])
def test_bad_prefix_is_refused_at_construction_naming_the_argument(bad):
    with pytest.raises(ValueError, match=r"\bprefix\b"):
        PrefixStripMapper(bad)


@pytest.mark.parametrize("bad", ["", None, 5, b"::"])
def test_bad_separator_is_refused_at_construction_naming_the_argument(bad):
    with pytest.raises(ValueError, match=r"\bseparator\b"):
        PrefixStripMapper("eu", separator=bad)


def test_key_that_is_only_the_qualifier_is_refused_naming_the_key():
    with pytest.raises(ValueError, match=re.escape("'eu::'")):
        PrefixStripMapper("eu").to_downstream("eu::")


@pytest.mark.parametrize("key", ["eu:: ", "eu::   ", "eu::\t", "eu::\n"])
def test_key_with_only_whitespace_after_the_qualifier_is_refused_naming_the_key(key):
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        PrefixStripMapper("eu").to_downstream(key)


def test_key_that_is_only_a_custom_qualifier_is_refused_naming_the_key():
    with pytest.raises(ValueError, match=re.escape("'region-7|'")):
        PrefixStripMapper("region-7", separator="|").to_downstream("region-7|")


@pytest.mark.parametrize(
    "date",
    [None, datetime(2026, 3, 10, tzinfo=UTC), datetime(2026, 3, 10, 5, 30, tzinfo=UTC)],
)
def test_carry_partition_date_passes_the_producers_date_through(date):
    assert PrefixStripMapper("eu").carry_partition_date(date) is date


def test_max_downstream_keys_is_passed_through_and_serialized():
    mapper = PrefixStripMapper("eu", max_downstream_keys=7)
    assert mapper.max_downstream_keys == 7
    assert mapper.serialize()["max_downstream_keys"] == 7
    assert PrefixStripMapper.deserialize(mapper.serialize()).max_downstream_keys == 7


def test_max_downstream_keys_unset_is_not_serialized():
    mapper = PrefixStripMapper("eu")
    assert mapper.max_downstream_keys is None
    assert "max_downstream_keys" not in mapper.serialize()
    assert PrefixStripMapper.deserialize(mapper.serialize()).max_downstream_keys is None


@pytest.mark.parametrize("bad", [0, -1, "10"])
def test_invalid_max_downstream_keys_is_refused_like_core(bad):
    with pytest.raises(ValueError, match="max_downstream_keys"):
        PrefixStripMapper("eu", max_downstream_keys=bad)


def test_serialize_lists_its_configuration():
    assert PrefixStripMapper("eu", separator="/", max_downstream_keys=3).serialize() == {
        "format_version": 1,
        "max_downstream_keys": 3,
        "prefix": "eu",
        "separator": "/",
    }


# -- properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", [" ", "\t", "  \n"])
def test_prefix_of_only_white_space_is_refused_at_construction(prefix):
    with pytest.raises(ValueError, match="prefix must not be only white space"):
        PrefixStripMapper(prefix)


@pytest.mark.parametrize("separator", [" ", "\t"])
def test_white_space_separator_is_allowed(separator):
    assert PrefixStripMapper("eu", separator=separator).to_downstream(f"eu{separator}sales") == "sales"


def test_non_string_key_is_refused_naming_it():
    with pytest.raises(ValueError, match="42"):
        PrefixStripMapper("eu").to_downstream(42)


@given(prefix=prefixes, separator=texts, key=keys)
def test_qualified_key_maps_to_the_bare_key(prefix, separator, key):
    mapper = PrefixStripMapper(prefix, separator=separator)
    assert mapper.to_downstream(prefix + separator + key) == key


@given(prefix=prefixes, separator=texts, key=keys)
def test_key_not_starting_with_the_qualifier_is_unchanged(prefix, separator, key):
    assume(not key.startswith(prefix + separator))
    assert PrefixStripMapper(prefix, separator=separator).to_downstream(key) == key


@st.composite
def mapper_and_key(draw):
    """A mapper and a key of at most 250 characters that may or may not carry its qualifier."""
    prefix, separator = draw(prefixes), draw(texts)
    rest = draw(st.text(min_size=1, max_size=250))
    key = draw(st.sampled_from([rest, prefix + separator + rest]))[:250]
    return PrefixStripMapper(prefix, separator=separator), key


@given(mapper_and_key())
def test_output_is_never_empty_nor_longer_than_the_input(case):
    mapper, key = case
    result = outcome(mapper, key)
    qualifier = mapper.prefix + mapper.separator
    if result[0] == "error":
        # Only a blank key (Airflow refuses those) or one with nothing (or only white space) after
        # the qualifier may be refused.
        assert not key.strip() or (key.startswith(qualifier) and not key[len(qualifier) :].strip())
        return
    assert 0 < len(result[1]) <= len(key) <= 250


@given(
    prefix=prefixes,
    separator=texts,
    max_downstream_keys=st.none() | st.integers(min_value=1, max_value=1_000_000),
    keys=st.lists(texts, max_size=5),
)
def test_deserialized_mapper_behaves_and_serializes_identically(prefix, separator, max_downstream_keys, keys):
    mapper = PrefixStripMapper(prefix, separator=separator, max_downstream_keys=max_downstream_keys)
    stored = json.loads(json.dumps(mapper.serialize()))  # as the metadata database keeps it
    rebuilt = PrefixStripMapper.deserialize(stored)

    assert json.dumps(rebuilt.serialize()) == json.dumps(mapper.serialize())
    assert rebuilt.max_downstream_keys == max_downstream_keys
    qualifier = prefix + separator
    for key in [*keys, *(qualifier + k for k in keys), qualifier]:
        assert outcome(rebuilt, key) == outcome(mapper, key)


# -- PrefixAddMapper and PrefixReplaceMapper -------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("daily-sales", "eu::daily-sales"),
        ("2026-03-10", "eu::2026-03-10"),
        ("eu::daily-sales", "eu::daily-sales"),  # already qualified: unchanged
        ("us::daily-sales", "eu::us::daily-sales"),
    ],
)
def test_add_qualifies_keys_once(key, expected):
    assert PrefixAddMapper("eu").to_downstream(key) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("eu::daily-sales", "emea::daily-sales"),
        ("us::daily-sales", "us::daily-sales"),  # another namespace: unchanged
        ("daily-sales", "daily-sales"),
    ],
)
def test_replace_moves_keys_between_namespaces(key, expected):
    assert PrefixReplaceMapper("eu", "emea").to_downstream(key) == expected


def test_add_refuses_a_key_it_would_make_longer_than_250_characters_naming_it():
    key = "k" * 247  # "eu::" + 247 characters = 251
    with pytest.raises(ValueError, match="251 characters, over Airflow's 250"):
        PrefixAddMapper("eu").to_downstream(key)
    assert PrefixAddMapper("eu").to_downstream("k" * 246) == "eu::" + "k" * 246


@pytest.mark.parametrize("mapper", [PrefixAddMapper("eu"), PrefixReplaceMapper("eu", "emea")])
@pytest.mark.parametrize("key", ["eu::", "eu::  ", 42])
def test_blank_remainders_and_non_strings_are_refused_naming_the_key(mapper, key):
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        mapper.to_downstream(key)


@pytest.mark.parametrize("new_prefix", ["", " ", None])
def test_replace_refuses_a_blank_new_prefix_at_construction(new_prefix):
    with pytest.raises(ValueError, match="new_prefix"):
        PrefixReplaceMapper("eu", new_prefix)


@given(prefix=prefixes, new_prefix=prefixes, separator=texts, key=keys)
def test_add_then_strip_and_replace_there_and_back_give_the_key_back(prefix, new_prefix, separator, key):
    assume(not key.startswith(prefix + separator) and len(prefix + separator + key) <= 250)
    added = PrefixAddMapper(prefix, separator=separator).to_downstream(key)
    assert added == prefix + separator + key
    assert PrefixStripMapper(prefix, separator=separator).to_downstream(added) == key
    moved = PrefixReplaceMapper(prefix, new_prefix, separator=separator).to_downstream(added)
    assert moved == new_prefix + separator + key
    assert PrefixReplaceMapper(new_prefix, prefix, separator=separator).to_downstream(moved) == added


@pytest.mark.parametrize(
    ("mapper", "key", "expected"),
    [
        (PrefixAddMapper("eu", separator="/"), "x", "eu/x"),
        (PrefixReplaceMapper("eu", "emea", max_downstream_keys=3), "eu::x", "emea::x"),
    ],
    ids=["add", "replace"],
)
def test_add_and_replace_round_trip_through_airflows_serialization(mapper, key, expected):
    from airflow.serialization.decoders import decode_partition_mapper
    from airflow.serialization.encoders import encode_partition_mapper

    rebuilt = decode_partition_mapper(json.loads(json.dumps(encode_partition_mapper(mapper))))
    assert type(rebuilt) is type(mapper)
    assert json.dumps(rebuilt.serialize()) == json.dumps(mapper.serialize())
    assert rebuilt.to_downstream(key) == mapper.to_downstream(key) == expected
