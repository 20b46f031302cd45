"""
``rerun_policy=`` on our rollups: Airflow 3.4's RerunPolicy names, HOLD's stored form unchanged.

Airflow 3.4 (apache/airflow PR #68778) is not installable here: its ``RerunPolicy`` is stood in
for by an enum written from its 3.4.0 definition (``airflow.partition_mappers.rerun_policy``: a
``str`` enum ``REFRESH = "refresh"``, ``HOLD = "hold"``, ``IGNORE = "ignore"``), put where
``airflow_partitions.rollup`` looks for it.
"""

from __future__ import annotations

import json
from enum import StrEnum

import pytest
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper

import airflow_partitions.rollup as rollup_module
from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    Hour,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)


class RerunPolicy34(StrEnum):
    """Airflow 3.4.0's ``airflow.partition_mappers.rerun_policy.RerunPolicy`` (its members and values)."""

    REFRESH = "refresh"
    HOLD = "hold"
    IGNORE = "ignore"


def day_of_hours(**options) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), **options
    )


def regions_per_day(**options) -> DimensionRollupMapper:
    return DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "day"], output=["day"]),
        window=DimensionWindow(region=["eu", "us"]),
        **options,
    )


@pytest.fixture
def airflow_34(monkeypatch):
    monkeypatch.setattr(rollup_module, "_CoreRerunPolicy", RerunPolicy34)
    return RerunPolicy34


@pytest.mark.parametrize("build", [day_of_hours, regions_per_day])
def test_hold_given_or_not_leaves_the_stored_form_as_every_rollup_wrote_it(build):
    before = build().serialize()
    assert "rerun_policy" not in before
    assert build(rerun_policy="hold").serialize() == before
    assert build(rerun_policy=None).serialize() == before


@pytest.mark.parametrize("build", [day_of_hours, regions_per_day])
@pytest.mark.parametrize("policy", ["refresh", "ignore"])
def test_on_airflow_33_refresh_and_ignore_are_refused_at_parse_naming_34_and_the_way_out(build, policy):
    assert rollup_module._CoreRerunPolicy is None  # this machine's Airflow is 3.3
    with pytest.raises(ValueError) as refused:
        build(rerun_policy=policy)
    message = str(refused.value)
    assert f"rerun_policy={policy!r} needs Airflow 3.4" in message
    assert "airflow-partitions discard DAG_ID" in message and "CompletionDeadline" in message


@pytest.mark.parametrize("value", ["Hold", "REFRESH", "again", 1, ["hold"]])
def test_a_value_that_names_no_policy_is_refused_naming_the_values_it_takes(value):
    with pytest.raises(ValueError, match=r"rerun_policy must be one of 'hold', 'refresh', 'ignore'"):
        day_of_hours(rerun_policy=value)


def test_on_airflow_34_the_rollup_keeps_cores_member_which_the_scheduler_compares_by_identity(airflow_34):
    for given in ("refresh", airflow_34.REFRESH):
        assert day_of_hours(rerun_policy=given).rerun_policy is airflow_34.REFRESH
    assert day_of_hours().rerun_policy is airflow_34.HOLD
    assert regions_per_day(rerun_policy="ignore").rerun_policy is airflow_34.IGNORE


def test_on_airflow_34_a_policy_other_than_hold_is_a_top_level_key_of_the_stored_form(airflow_34):
    hold = day_of_hours().serialize()
    for name in ("refresh", "ignore"):
        stored = day_of_hours(rerun_policy=name).serialize()
        assert stored == {**hold, "rerun_policy": name}
        assert list(stored) == sorted(stored)  # the stored form's keys stay sorted
        # A fresh dict each call: Airflow 3.4's fingerprint pops the key from what it is given.
        stored.pop("rerun_policy")
        assert day_of_hours(rerun_policy=name).serialize()["rerun_policy"] == name
    assert day_of_hours().serialize() == hold  # HOLD, the default, writes no key (as on 3.3)


@pytest.mark.parametrize("name", ["refresh", "ignore"])
def test_on_airflow_34_the_policy_survives_airflows_serialization_round_trip(airflow_34, name):
    # (Not HOLD: its stored form is every rollup's, rebuilt once per process, here under 3.3.)
    mapper = day_of_hours(rerun_policy=name)
    stored = json.loads(json.dumps(encode_partition_mapper(mapper)))
    rebuilt = decode_partition_mapper(stored)
    assert rebuilt.rerun_policy is airflow_34(name)
    assert rebuilt == mapper and rebuilt.serialize() == mapper.serialize()
