"""Lateness in the faces: explain's "late at", status' "late since", the reader's rule (pure parts)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from airflow.sdk import StartOfDayMapper

from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    Day,
    ExpectedWithinMapper,
    Hour,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)
from airflow_partitions.tools import explain
from airflow_partitions.tools.commands.explain import format_explanation
from airflow_partitions.tools.commands.status import format_state
from airflow_partitions.tools.state import ConsumerState, Partition, late_since


def nyse_days() -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(
            BusinessDay(BusinessCalendar(market="NYSE"), timezone="America/New_York")
        ),
        window=TemporalWindow(Hour(timezone="America/New_York")),
        expected_within=timedelta(hours=9),
    )


def test_explain_says_when_a_partition_is_late():
    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()),
        window=TemporalWindow(Hour()),
        expected_within=timedelta(hours=2),
    )
    answer = explain(rollup, "2026-03-10", downstream=True)
    assert answer.keys[0].late_at == "2026-03-11T02:00:00+00:00"
    assert "  late at         2026-03-11T02:00:00+00:00 without a successful run" in format_explanation(
        answer
    )
    # Thursday 2026-04-02 of the NYSE's days ends at 04:00Z on the 3rd (EDT): late from 13:00Z.
    assert explain(nyse_days(), "2026-04-02", downstream=True).keys[0].late_at == "2026-04-03T13:00:00+00:00"
    wrapped = ExpectedWithinMapper(StartOfDayMapper(), expected_within=timedelta(hours=2))
    [key] = explain(wrapped, "2026-03-10T09:00:00").keys  # an upstream key: where it goes
    assert (key.key, key.late_at) == ("2026-03-10", "2026-03-11T02:00:00+00:00")
    plain = explain(
        TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())),
        "2026-03-10",
        downstream=True,
    )
    assert plain.keys[0].late_at is None and "late at" not in format_explanation(plain)


def test_good_friday_is_no_partition_of_the_nyse_so_explain_gives_it_no_time_to_be_late():
    answer = explain(nyse_days(), "2026-04-03", downstream=True)
    assert answer.keys == () and "is not a business day" in answer.refused
    assert "late at" not in format_explanation(answer)


@pytest.mark.parametrize(
    ("state", "late"),
    [
        ("pending", True),
        ("overdue", True),
        ("failed", True),
        ("running", True),
        ("queued", True),
        ("past deadline", True),
        ("never counting", True),
        ("success", False),
        ("ran incomplete", False),  # it succeeded, without every key: the ran_incomplete metric's
    ],
)
def test_a_partition_is_late_after_its_time_unless_its_latest_run_succeeded(state, late):
    due = datetime(2026, 3, 11, 2, tzinfo=UTC)
    after = due + timedelta(seconds=1)
    assert late_since(state, due, after) == (due if late else None)
    assert late_since(state, due, due - timedelta(seconds=1)) is None  # not yet
    assert late_since(state, None, after) is None  # no expected_within


def test_status_lists_how_many_are_late_and_since_when():
    since = datetime(2026, 1, 7, 2, tzinfo=UTC)
    state = ConsumerState(
        dag_id="daily",
        assets=(("hours", "hours"),),
        partitions=(
            Partition("2026-01-05", "success"),
            Partition("2026-01-06", "overdue", late_since=since),
        ),
        total=2,
        states={"success": 1, "overdue": 1},
        late=1,
    )
    text = format_state(state)
    assert "1 partition late: no successful run, the period ended longer ago than expected_within" in text
    assert "  late since      2026-01-07T02:00:00+00:00" in text
    assert text.count("late since") == 1
