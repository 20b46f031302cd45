"""
A Dag's tally and late partitions kept across reads: used again only while nothing they show moved.

The tally (tools/state/tally.py: counts by state, the keys whose state only the mappers tell,
strips) is kept while the Dag's fingerprint and the keys logged for its pending runs hold, and
until the clock changes a pending run's state; the late partitions (tools/state/lateness.py) while
the fingerprint holds, until the next partition becomes late. Each test reads, changes one of
those, and reads again in the same process (what was kept is there), against the state worked out
by hand: a deadline passed, a key logged, a partition's expected time passed.
The tables are the reader's own Core tables on an empty SQLite file; the Dag's mappers are a
stand-in answering what a pending run's keys give it (:class:`Answers`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import create_engine, insert
from sqlalchemy.orm import Session

from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept.fingerprint import fingerprints
from airflow_partitions.tools.state.lateness import late_keys
from airflow_partitions.tools.state.tables import (
    asset,
    asset_partition_dag_run,
    metadata,
    partitioned_asset_key_log,
)
from airflow_partitions.tools.state.tally import pending_states, tally_of

DAG = "ny_day"
OPENED = datetime(2026, 3, 10, 5, tzinfo=UTC)
#: The day's deadline: an hour after New York's 2026-03-10 ends (04:00 UTC on the 11th).
DEADLINE = datetime(2026, 3, 11, 5, tzinfo=UTC)


class Answers:
    """What the Dag's rollup answers: a deadline at :data:`DEADLINE`; a key ending ``T99`` never counts."""

    key = "mappers-v1"

    def pending(self, key: str, received: dict[str, frozenset[str]]) -> tuple[Any, ...]:
        never = any(k.endswith("T99") for keys in received.values() for k in keys)
        return (SimpleNamespace(never_counting=never),), DEADLINE, DEADLINE - timedelta(hours=1), True


#: When 2026-03-10 is late: expected within 2 hours of New York's day's end (04:00 UTC on the 11th).
LATE_AT = datetime(2026, 3, 11, 6, tzinfo=UTC)


def reader(now: datetime) -> Any:
    return SimpleNamespace(
        dag_id=DAG,
        identity="ny_day-rollup",
        answers=Answers(),
        now=now,
        may_fire_incomplete=False,
        expects=True,
        late_at=lambda key: LATE_AT if key == "2026-03-10" else None,
    )


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for memo in ("KEPT", "RECEIVED", "PENDING"):
        monkeypatch.setattr(cache, memo, type(getattr(cache, memo))())
    monkeypatch.setattr(cache, "STORES", {})
    monkeypatch.setattr(cache, "MIRRORS", {})
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "store.sqlite"))
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    metadata.create_all(engine)
    with Session(engine) as session, session.begin():
        session.execute(insert(asset), [{"id": 1, "name": "hourly", "uri": "hourly"}])
        session.execute(
            insert(asset_partition_dag_run),
            [
                {
                    "id": 1,
                    "target_dag_id": DAG,
                    "partition_key": "2026-03-10",
                    "created_at": OPENED,
                    "updated_at": OPENED,
                }
            ],
        )
    log(engine, 1, "2026-03-10T05")
    yield engine
    engine.dispose()


def log(engine: Any, log_id: int, key: str) -> None:
    """Log *key* for the pending run of 2026-03-10 (Airflow's asset manager)."""
    with Session(engine) as session, session.begin():
        session.execute(
            insert(partitioned_asset_key_log).values(
                id=log_id,
                asset_id=1,
                asset_event_id=log_id,
                asset_partition_dag_run_id=1,
                source_partition_key=key,
                target_dag_id=DAG,
                target_partition_key="2026-03-10",
                created_at=OPENED,
            )
        )


def state_at(engine: Any, now: datetime) -> tuple[dict[str, int], dict[str, str]]:
    """Read the Dag's tally as of *now* in a new session: its counts and overrides."""
    with Session(engine) as session:
        prints = fingerprints([DAG], session)
        counts, overrides, _, _ = tally_of({DAG: reader(now)}, session, None, None, None, 10, True, prints)[
            DAG
        ]
    return counts, overrides


def test_a_kept_tally_is_read_again_once_a_pending_runs_deadline_passed(engine: Any) -> None:
    assert state_at(engine, DEADLINE - timedelta(minutes=1)) == ({"pending": 1}, {"2026-03-10": "pending"})
    assert state_at(engine, DEADLINE - timedelta(seconds=1)) == ({"pending": 1}, {"2026-03-10": "pending"})
    assert state_at(engine, DEADLINE) == ({"past deadline": 1}, {"2026-03-10": "past deadline"})


def test_a_kept_tally_is_read_again_once_a_key_is_logged_for_a_pending_run(engine: Any) -> None:
    before = DEADLINE - timedelta(hours=2)
    assert state_at(engine, before) == ({"pending": 1}, {"2026-03-10": "pending"})
    log(engine, 2, "2026-03-10T99")  # a key the rollup never counts
    assert state_at(engine, before) == ({"never counting": 1}, {"2026-03-10": "never counting"})


def late_at(engine: Any, now: datetime) -> dict[str, Any]:
    """Read the Dag's late partitions as of *now* in a new session."""
    with Session(engine) as session:
        return late_keys({DAG: reader(now)}, session, fingerprints([DAG], session)).get(DAG, {})


def test_kept_late_partitions_are_read_again_once_a_partition_becomes_late(engine: Any) -> None:
    assert late_at(engine, LATE_AT - timedelta(minutes=1)) == {}
    assert late_at(engine, LATE_AT - timedelta(seconds=1)) == {}
    assert late_at(engine, LATE_AT) == {"2026-03-10": (LATE_AT, None)}
    assert late_at(engine, LATE_AT + timedelta(hours=1)) == {"2026-03-10": (LATE_AT, None)}


def test_a_kept_value_is_decoded_once_while_kept_and_again_once_kept_anew() -> None:
    memo, fingerprint = ("late", "decoded_once_day", "mappers-v1", None, None, None), (1, 2)
    worked_out = LATE_AT - timedelta(minutes=5)
    late = [["2026-03-10", "2026-03-11T06:00:00+00:00", None]]
    cache.keep_until(memo, fingerprint, late, worked_out, LATE_AT)
    first = cache.kept_until(memo, fingerprint, LATE_AT - timedelta(seconds=1))
    assert first == [["2026-03-10", "2026-03-11T06:00:00+00:00", None]]
    assert cache.kept_until(memo, fingerprint, LATE_AT - timedelta(seconds=1)) is first  # not decoded again
    assert cache.kept_until(memo, fingerprint, LATE_AT) is None  # its end: 2026-03-11T06:00Z
    assert cache.kept_until(memo, (1, 3), OPENED) is None  # another fingerprint
    cache.keep_until(memo, fingerprint, [], worked_out, None)
    assert cache.kept_until(memo, fingerprint, LATE_AT) == []


def test_a_value_kept_by_a_clock_ahead_is_not_served_to_a_clock_behind_it() -> None:
    # A process whose clock ran ahead worked out which partitions are late at its own now: another
    # process, whose clock is behind that instant, must not serve them (they are not late yet there).
    memo, fingerprint = ("late", "clocks_day", "mappers-v1", None, None, None), (1, 2)
    ahead = LATE_AT + timedelta(minutes=10)
    cache.keep_until(memo, fingerprint, [["2026-03-10", LATE_AT.isoformat(), None]], ahead, None)
    assert cache.kept_until(memo, fingerprint, LATE_AT - timedelta(minutes=1)) is None
    assert cache.kept_until(memo, fingerprint, ahead) == [["2026-03-10", LATE_AT.isoformat(), None]]


class AnswersByKey(Answers):
    """As :class:`Answers`, but every key of 2026-03-12 never counts there."""

    def pending(self, key: str, received: dict[str, frozenset[str]]) -> tuple[Any, ...]:
        never = key == "2026-03-12"
        return (SimpleNamespace(never_counting=never),), DEADLINE, DEADLINE - timedelta(hours=1), True


def test_a_pending_runs_kept_times_are_not_another_partitions_that_took_its_id(engine: Any) -> None:
    """SQLite gives a deleted pending run's id again: run 2, no keys, of 2026-03-10, then of 2026-03-12."""
    now = DEADLINE - timedelta(hours=2)
    by_key = SimpleNamespace(**{**vars(reader(now)), "answers": AnswersByKey()})
    with Session(engine) as session:
        assert pending_states({DAG: by_key}, session, [(DAG, 2, "2026-03-10")])[0] == {2: "pending"}
        assert pending_states({DAG: by_key}, session, [(DAG, 2, "2026-03-12")])[0] == {2: "never counting"}
