"""
The api-server's background first reads (airflow_partitions.tools.warming): the warmer's order and
retries, which Dags a request leaves to it, the copy of the pending runs, and the metrics of a Dag
still warming. Timing is the benchmark's (benchmarks/bench_ui.py), not asserted here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import wait
from pathlib import Path

import pytest
from sqlalchemy import create_engine, insert
from sqlalchemy.orm import Session

from airflow_partitions.tools import warming
from airflow_partitions.tools.metrics import metrics_text
from airflow_partitions.tools.state import ConsumerDag
from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept.cache import mirror_copied, mirror_for
from airflow_partitions.tools.state.kept.mirror import Mirror
from airflow_partitions.tools.state.tables import asset_partition_dag_run, metadata


class Reads:
    """What a warmer read, in order; the read of *blocking* waits for :attr:`go` (set: no wait)."""

    def __init__(self, failing: int = 0) -> None:
        self.done: list[str] = []
        self.go = threading.Event()
        self.started = threading.Event()
        self.failing = failing

    def __call__(self, names: list[str]) -> None:
        self.started.set()
        self.go.wait(timeout=10)
        if self.failing:
            self.failing -= 1
            raise RuntimeError(f"the database is down while reading {names}")
        self.done.append(names)


def test_the_warmer_reads_each_dag_once_in_order_and_a_waiting_request_first() -> None:
    reads = Reads()
    warmer = warming.Warmer(reads)
    [first] = warmer.submit(["bench_small_000"])
    assert reads.started.wait(timeout=10)  # under way: the others wait behind it
    warmer.submit(["bench_minutes", "bench_region_day"])
    again = warmer.submit(["bench_minutes"])  # asked twice: read once, one future
    asked = warmer.submit(["bench_region_day", "bench_store_region_day"], first=True)
    reads.go.set()
    wait([first, *again, *asked], timeout=10)
    assert all(f.done() and f.exception() is None for f in [first, *again, *asked])
    # The first alone (under way when the others came), then the rest together, in their order.
    assert reads.done == [
        ["bench_small_000"],
        ["bench_region_day", "bench_store_region_day", "bench_minutes"],
    ]


def test_a_failed_read_holds_its_error_and_is_made_again_when_asked_again(caplog) -> None:
    reads = Reads(failing=1)
    reads.go.set()
    warmer = warming.Warmer(reads)
    [failed] = warmer.submit(["bench_region_day"])
    wait([failed], timeout=10)
    assert isinstance(failed.exception(), RuntimeError) and reads.done == []
    assert "could not read ['bench_region_day'] in the background" in caplog.text
    [again] = warmer.submit(["bench_region_day"])
    wait([again], timeout=10)
    assert again.exception() is None and reads.done == [["bench_region_day"]]


def test_a_request_reads_the_fewest_runs_itself_up_to_the_limit_and_leaves_the_rest(monkeypatch) -> None:
    monkeypatch.setattr(warming, "INLINE_AT_MOST", 10_000)
    monkeypatch.setattr(warming, "PER_DAG", 500)
    counts = {"region_day": 1_000_000, "small_b": 30, "small_a": 30, "minutes": 1_000_000, "store": 8_950}
    # 530 + 530 fit, then 9,450 would make 10,510: it and the larger ones go to the background.
    assert warming.too_large(counts) == ["store", "minutes", "region_day"]
    assert warming.too_large({"small": 30, "exactly": 8_970}) == []  # 530 + 9,470: 10,000
    # Thirty small Dags of 30 runs: 18 of them make 9,540; the 19th would make 10,070.
    smalls = {f"small_{i:02d}": 30 for i in range(30)}
    assert warming.too_large(smalls) == [f"small_{i:02d}" for i in range(18, 30)]
    assert warming.too_large({}) == []


def test_without_a_warmer_no_dag_is_warming(monkeypatch) -> None:
    monkeypatch.setattr(cache, "WARMER", None)
    assert warming.warming_dags(None) == frozenset()
    assert "any_dag" not in warming.warming_dags({"any_dag"})


def test_every_dag_is_warming_while_the_pending_runs_are_copied() -> None:
    assert "bench_region_day" in warming.EVERY and "" in warming.EVERY


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    """A session on an SQLite database with the reader's tables; the store in *tmp_path*."""
    monkeypatch.setattr(cache, "STORES", {})
    monkeypatch.setattr(cache, "MIRRORS", {})
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "store.sqlite"))
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    metadata.create_all(engine)
    with Session(engine) as new:
        yield new
    engine.dispose()


def test_the_copy_of_the_pending_runs_is_known_once_a_process_made_it(
    session: Session, tmp_path: Path
) -> None:
    from datetime import UTC, datetime

    other = create_engine(f"sqlite:///{tmp_path / 'other.db'}")
    metadata.create_all(other)
    with Session(other) as elsewhere:
        mirror_for(elsewhere)  # the store's file holds the copy of another database only
        elsewhere.commit()
    other.dispose()
    session.execute(
        insert(asset_partition_dag_run).values(
            id=1,
            target_dag_id="region_day",
            partition_key="north|2026-03-10",
            created_at=datetime(2026, 3, 10, tzinfo=UTC),
            updated_at=datetime(2026, 3, 10, tzinfo=UTC),
        )
    )
    session.commit()
    assert not mirror_copied(session)  # a new store: the first read copies the table
    url = session.get_bind().url.render_as_string(hide_password=True)
    store = cache.store_for(session)
    # Made by this process, its first sync under way (the copy holds the store's lock): not yet.
    cache.MIRRORS[url] = Mirror(store.connection, store_file.digest([url])[:8], store.lock)
    assert not mirror_copied(session)
    mirror_for(session)
    session.commit()
    assert mirror_copied(session)
    cache.MIRRORS.clear()  # a new process on the same file: the copy is there, synced by what changed
    assert mirror_copied(session)


def test_the_metrics_of_a_dag_still_warming_are_its_warming_gauge_alone(session: Session) -> None:
    ready = ConsumerDag("bench_small_000", "daily", False, states={"success": 30})
    text = metrics_text(session, dags=[ready, ConsumerDag("bench_region_day", "hourly", False, warming=True)])
    assert 'airflow_partitions_warming{dag_id="bench_region_day"} 1' in text
    assert 'airflow_partitions_warming{dag_id="bench_small_000"} 0' in text
    assert 'airflow_partitions_partitions{dag_id="bench_small_000",state="success"} 30' in text
    series = [line for line in text.splitlines() if not line.startswith("#")]
    assert [line for line in series if "bench_region_day" in line] == [
        'airflow_partitions_warming{dag_id="bench_region_day"} 1'
    ]
