"""
The pruning of the store's keys unused for a week (tools/state/kept/uses.py), through the store itself.

Days are numbered from 1970-01-01 (UTC): 2026-12-06 is day 20,793 (``date -d 2026-12-06 +%s`` is
1,796,515,200, divided by 86,400).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept import uses
from airflow_partitions.tools.state.kept.store import Store

DECEMBER_6 = 20_793


def test_today_counts_days_from_1970_in_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uses.time, "time", lambda: 1_796_515_200 + 86_399.5)  # 2026-12-06T23:59:59.5Z
    assert uses.today() == DECEMBER_6


def process(path: Path, monkeypatch: pytest.MonkeyPatch, day: int) -> Store:
    """A new process's store of the file *path*, on *day*."""
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(path))
    monkeypatch.setattr(store_file, "today", lambda: day)
    store = Store.open("sqlite:///airflow.db")
    assert store is not None
    return store


def stored(path: Path) -> dict[str, int]:
    """The number of answers in the file, by key."""
    with sqlite3.connect(path) as connection:
        return dict(connection.execute("SELECT dag, count(*) FROM answers GROUP BY dag").fetchall())


def test_a_key_unused_for_more_than_a_week_is_deleted_and_one_used_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    store = process(path, monkeypatch, DECEMBER_6 - 8)  # 2026-11-28
    for question in range(3):
        store.put("old version", question, "answer")
        store.put("current version", question, "answer")
    store.flush()
    store = process(path, monkeypatch, DECEMBER_6 - 7)  # 2026-11-29: the current version is read
    assert store.fetch("current version", 0) == "answer"
    store.flush()
    process(path, monkeypatch, DECEMBER_6 - 1).flush()  # 2026-12-05: "old version" unused for 7 days
    assert stored(path) == {"current version": 3, "old version": 3}
    process(path, monkeypatch, DECEMBER_6).flush()  # 2026-12-06: 8 days
    assert stored(path) == {"current version": 3}
    process(path, monkeypatch, DECEMBER_6 + 7).flush()  # 2026-12-13: "current version" unused for 14
    assert stored(path) == {}


def test_answers_stored_before_the_days_of_use_are_kept_a_week_from_the_first_pruning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    with sqlite3.connect(path) as connection:  # a file of an older version of the package
        connection.execute(
            "CREATE TABLE answers (dag TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL, "
            "PRIMARY KEY (dag, question)) WITHOUT ROWID"
        )
        connection.executemany("INSERT INTO answers VALUES (?, '1', '2')", [("a",), ("b",), ("c",)])
    process(path, monkeypatch, DECEMBER_6).flush()
    assert stored(path) == {"a": 1, "b": 1, "c": 1}
    store = process(path, monkeypatch, DECEMBER_6 + 8)
    assert store.fetch("b", 1) == 2
    store.flush()
    assert stored(path) == {"b": 1}


def test_a_process_deletes_at_most_its_share_and_the_next_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    monkeypatch.setattr(uses, "PRUNED_AT_ONCE", 3)
    store = process(path, monkeypatch, DECEMBER_6 - 8)
    for question in range(5):
        store.put("stale", question, "answer")
    store.put("stale too", 0, "answer")
    store.flush()
    process(path, monkeypatch, DECEMBER_6).flush()
    assert stored(path) == {"stale": 2, "stale too": 1}
    process(path, monkeypatch, DECEMBER_6).flush()
    assert stored(path) == {}
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT dag, day FROM used").fetchall() == [("", DECEMBER_6)]


def test_a_read_on_the_day_it_was_recorded_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    store = process(path, monkeypatch, DECEMBER_6)
    store.put("key", 0, "answer")
    store.flush()
    store = process(path, monkeypatch, DECEMBER_6)
    assert store.fetch("key", 0) == "answer"
    store.flush()
    assert store.connection is not None and store.connection.total_changes == 0
    store = process(path, monkeypatch, DECEMBER_6 + 1)  # the next day: the day of use and the pruning's
    assert store.fetch("key", 0) == "answer"
    store.flush()
    assert store.connection is not None and store.connection.total_changes == 2


def test_a_long_lived_process_prunes_again_an_hour_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    clock = [1_000.0]
    monkeypatch.setattr(store_file.time, "monotonic", lambda: clock[0])
    old = process(path, monkeypatch, DECEMBER_6 - 8)
    old.put("stale", 0, "answer")
    old.flush()
    server = process(path, monkeypatch, DECEMBER_6 - 1)  # an api-server started on 2026-12-05
    server.put("current", 0, "answer")
    server.flush()
    assert stored(path) == {"current": 1, "stale": 1}  # "stale" unused for 8 days on 2026-12-06 only
    monkeypatch.setattr(store_file, "today", lambda: DECEMBER_6)
    clock[0] += 3_599
    server.put("current", 1, "answer")
    server.flush()
    assert stored(path) == {"current": 2, "stale": 1}  # not an hour yet
    clock[0] += 1
    server.put("current", 2, "answer")
    server.flush()
    assert stored(path) == {"current": 3}


def test_an_answer_found_in_memory_keeps_its_key_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    server = process(path, monkeypatch, DECEMBER_6 - 8)
    server.put("rows of a Dag", 0, "answer")
    server.flush()
    server.used("rows of a Dag")  # found in the process's memory on 2026-12-05, not asked of the file
    monkeypatch.setattr(store_file, "today", lambda: DECEMBER_6 - 1)
    server.flush()
    process(path, monkeypatch, DECEMBER_6).flush()  # unused for 1 day, not 8
    assert stored(path) == {"rows of a Dag": 1}


def test_a_failed_write_leaves_no_lock_for_the_other_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    failing = process(path, monkeypatch, DECEMBER_6)

    def fail(day: int) -> int:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(failing.uses, "prune", fail)
    failing.put("key", 0, "answer")
    failing.flush()
    assert failing.connection is None  # the store is off for that process
    other = sqlite3.connect(path, timeout=0)  # would wait on a lock still held, and fail at once
    other.execute("BEGIN IMMEDIATE")
    other.execute("COMMIT")
    assert stored(path) == {}  # the failed transaction's answer was rolled back
