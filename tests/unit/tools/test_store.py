"""What the tools keep across processes (state/kept/cache.py's Store): found again only as it was kept."""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept.cache import keep, kept, kept_value
from airflow_partitions.tools.state.kept.fingerprint import fingerprints
from airflow_partitions.tools.state.plain import packed, unpacked

MARCH_10 = datetime(2026, 3, 10, 4, tzinfo=UTC)
#: A Dag's fingerprint for the store's tests: any value of the types :func:`fingerprints` gives
#: (tuples of numbers, strings and times); the tests of ``fingerprints`` itself are at the end.
PRINT = (100, 250, MARCH_10, 3, 40, MARCH_10, 1)


@pytest.mark.parametrize(
    "value",
    [
        ["2026-03-10", "2026-03-11"],
        ("2026-03-01", "2026-03-31"),
        None,
        {"2026-03-10": "ran incomplete", "2026-03-11": None},
        ({("jfk|", "2026-03"): Counter({"success": 30, "failed": 1})}, {"2026-03-10": "ran incomplete"}),
        {"2026-03-10", "2026-03-11"},
        (MARCH_10, None),
        PRINT,
    ],
    ids=["page", "range", "none", "late candidates", "cells", "with runs", "dates", "fingerprint"],
)
def test_every_kept_answer_comes_back_equal_and_of_its_type(value: Any) -> None:
    back = unpacked(packed(value))
    assert back == value
    assert type(back) is type(value)


def test_a_value_of_another_type_is_refused_not_kept_wrong() -> None:
    with pytest.raises(TypeError, match="cannot keep a object"):
        packed(object())


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    """A session on an empty SQLite database; the store in *tmp_path*; nothing kept in the process."""
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "store.sqlite"))
    saved = (dict(cache.KEPT), dict(cache.STORES))
    cache.KEPT.clear()
    cache.STORES.clear()
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    with Session(engine) as new:
        yield new
    cache.KEPT.clear()
    cache.KEPT.update(saved[0])
    cache.STORES.clear()
    cache.STORES.update(saved[1])
    engine.dispose()


def _new_process() -> None:
    """Write what was kept, then forget everything but the file, as a new process starts."""
    for store in cache.STORES.values():
        if store is not None:
            store.flush()
    cache.KEPT.clear()
    cache.STORES.clear()


def test_a_new_process_finds_an_answer_kept_while_the_dags_rows_are_unchanged(session: Session) -> None:
    memo = ("page", "weather_local_day_jfk", None, None, 50, 0)
    keep(memo, PRINT, ["2013-03-01", "2013-03-02"], session)
    _new_process()
    assert kept_value(memo, {"weather_local_day_jfk": PRINT}, session) == (
        PRINT,
        ["2013-03-01", "2013-03-02"],
    )


@pytest.mark.parametrize(
    "changed",
    [
        (101, 251, MARCH_10, 3, 40, MARCH_10, 1),  # a new run
        (100, 250, datetime(2026, 3, 10, 4, 0, 1, tzinfo=UTC), 3, 40, MARCH_10, 1),  # a run's state moved
        (100, 250, MARCH_10, 3, 40, MARCH_10, 2),  # a pending run fired
        None,  # every row deleted
    ],
    ids=["new run", "run updated", "pending run fired", "no rows"],
)
def test_an_answer_kept_under_another_fingerprint_is_read_again(session: Session, changed: Any) -> None:
    memo = ("range", "weather_local_day_jfk", None, None, None)
    keep(memo, PRINT, ("2013-03-01", "2013-03-31"), session)
    _new_process()
    assert kept_value(memo, {"weather_local_day_jfk": changed}, session) is None
    assert kept(memo, changed, lambda: ("2013-03-01", "2013-04-01"), session) == ("2013-03-01", "2013-04-01")
    _new_process()
    assert kept_value(memo, {"weather_local_day_jfk": changed}, session) == (
        changed,
        ("2013-03-01", "2013-04-01"),
    )


def test_off_keeps_nothing_across_processes(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(store_file.STORE_VARIABLE, "off")
    memo = ("page", "weather_local_day_jfk", None, None, 50, 0)
    keep(memo, PRINT, ["2013-03-01"], session)
    _new_process()
    assert kept_value(memo, {"weather_local_day_jfk": PRINT}, session) is None


def test_a_store_path_that_is_a_folder_is_kept_elsewhere(
    session: Session, tmp_path: Path, monkeypatch
) -> None:
    """As any file this user cannot use (tests/unit/tools/test_store_faults.py): a file of its own instead."""
    (tmp_path / "a-folder").mkdir()
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "a-folder"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = cache.store_for(session)
    assert store is not None and store.path is not None
    assert store.path.parent.parent == tmp_path and store.path.name == "a-folder"
    (tmp_path / "a-file").write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "a-file"))  # no folder for one elsewhere
    cache.STORES.clear()
    assert cache.store_for(session) is None


def test_another_installed_version_of_a_calendar_library_makes_new_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade of ``holidays`` (its ``.dist-info`` folder renamed by pip) must not find old answers."""
    site = tmp_path / "site-packages"
    (site / "holidays-0.60.dist-info").mkdir(parents=True)
    (site / "requests-2.32.0.dist-info").mkdir()
    monkeypatch.setattr("sys.path", [str(site)])
    store_file.environment.cache_clear()
    before = store_file.environment()
    (site / "requests-2.32.0.dist-info").rename(site / "requests-2.33.0.dist-info")
    store_file.environment.cache_clear()
    assert store_file.environment() == before  # a library mappers do not read changes nothing
    (site / "holidays-0.60.dist-info").rename(site / "holidays-0.61.dist-info")
    store_file.environment.cache_clear()
    assert store_file.environment() != before
    store_file.environment.cache_clear()


def test_another_time_zone_database_makes_new_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tzdata update (the system's, which zoneinfo reads first) moves local periods: no old answer."""
    import zoneinfo

    zones = tmp_path / "zoneinfo"
    zones.mkdir()
    (zones / "tzdata.zi").write_text("# version 2025b\nR d 1916 o - Ap 30 23 1 S\n")
    monkeypatch.setattr(zoneinfo, "TZPATH", (str(zones),))
    store_file.environment.cache_clear()
    before = store_file.environment()
    (zones / "tzdata.zi").write_text("# version 2026a\nR d 1916 o - Ap 30 23 1 S\n")
    store_file.environment.cache_clear()
    assert store_file.environment() != before
    store_file.environment.cache_clear()


def _runs(session: Session, *states: str) -> list[int]:
    """Create the Airflow tables the reader reads and one asset-triggered run per state; their ids."""
    from airflow_partitions.tools.state.tables import metadata

    metadata.create_all(session.get_bind())
    ids = []
    for day, state in enumerate(states, 1):
        ids.append(_new_run(session, f"2026-03-{day:02d}", state))
    return ids


def _new_run(session: Session, key: str, state: str, run_id: int | None = None) -> int:
    """
    Insert a run of ``weather_local_day_jfk`` for partition *key* in *state*; return its id.

    The id as SQLite gives it, or *run_id* (what a PostgreSQL transaction committed late shows).
    """
    from sqlalchemy import insert

    from airflow_partitions.tools.state.tables import dag_run

    return session.execute(
        insert(dag_run)
        .values(
            **({} if run_id is None else {"id": run_id}),
            dag_id="weather_local_day_jfk",
            run_id=f"asset_triggered__{key}T05:00:00+00:00_{state}",
            partition_key=key,
            state=state,
            run_type="asset_triggered",
            run_after=MARCH_10,
            updated_at=MARCH_10,
        )
        .returning(dag_run.c.id)
    ).scalar_one()


def _state(session: Session, run: int, state: str) -> None:
    from sqlalchemy import update

    from airflow_partitions.tools.state.tables import dag_run

    session.execute(update(dag_run).where(dag_run.c.id == run).values(state=state))


def _print(session: Session) -> Any:
    """The fingerprint a new read takes: in a transaction of its own, after the changes were committed."""
    session.commit()
    return fingerprints(["weather_local_day_jfk"], session)["weather_local_day_jfk"]


def test_a_runs_state_change_moves_the_fingerprint(session: Session) -> None:
    first, *_ = _runs(session, "success", "failed", "running")
    before = _print(session)
    _state(session, first, "failed")
    assert _print(session) != before


def test_runs_trading_states_move_the_fingerprint(session: Session) -> None:
    """Two runs swap success and failed: each state keeps its count, not its ids."""
    first, second, _ = _runs(session, "success", "failed", "success")
    before = _print(session)
    _state(session, first, "failed")
    _state(session, second, "success")
    assert _print(session) != before


def test_runs_trading_states_in_sets_of_equal_sums_move_the_fingerprint(session: Session) -> None:
    """
    Runs 1 and 4 succeed as runs 2 and 3 fail (5 failed throughout): each state's count and ids' sum stay.

    So do its greatest id and the sum of the ids' 32-bit hash the print summed before (``id *
    2654435761 % 2**32``, linear: equal here, as in two random trades of three).
    """
    _runs(session, "failed", "success", "success", "failed", "failed")
    before = _print(session)
    for run, state in ((1, "success"), (4, "success"), (2, "failed"), (3, "failed")):
        _state(session, run, state)
    assert _print(session) != before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    states=st.lists(st.sampled_from(["success", "failed", "running", "queued"]), min_size=2, max_size=8),
    changed=st.lists(st.sampled_from(["success", "failed", "running", "queued"]), min_size=8, max_size=8),
)
def test_any_runs_changing_states_together_move_the_fingerprint(
    tmp_path_factory: pytest.TempPathFactory, states: list[str], changed: list[str]
) -> None:
    """Property: whichever runs change state between two reads, together, the print moves."""
    engine = create_engine(f"sqlite:///{tmp_path_factory.mktemp('print') / 'airflow.db'}")
    try:
        with Session(engine) as session:
            ids = _runs(session, *states)
            before = _print(session)
            after = changed[: len(ids)]
            for run, old, new in zip(ids, states, after, strict=True):
                if new != old:
                    _state(session, run, new)
            assert (_print(session) != before) == (after != states)
    finally:
        engine.dispose()


def test_the_newest_run_deleted_and_its_id_given_again_moves_the_fingerprint(session: Session) -> None:
    """SQLite gives a new row the greatest id plus one: a new run takes the deleted newest run's id."""
    from sqlalchemy import delete

    from airflow_partitions.tools.state.tables import dag_run

    *_, newest = _runs(session, "success", "success", "success")
    before = _print(session)
    session.execute(delete(dag_run).where(dag_run.c.id == newest))
    assert _new_run(session, "2026-03-09", "success") == newest  # the same id, the same state
    assert _print(session) != before


def test_an_older_run_deleted_moves_the_fingerprint(session: Session) -> None:
    """A run deleted (its fired pending run with it) moves the runs' part: the mirror does not see it."""
    from sqlalchemy import delete

    from airflow_partitions.tools.state.tables import dag_run

    oldest, *_ = _runs(session, "success", "success", "success")
    before = _print(session)
    session.execute(delete(dag_run).where(dag_run.c.id == oldest))
    assert _print(session) != before


def test_a_running_runs_update_by_the_scheduler_keeps_the_fingerprint(session: Session) -> None:
    """The scheduler writes a running run's ``updated_at`` every loop; nothing the reader reads moved."""
    from sqlalchemy import update

    from airflow_partitions.tools.state.tables import dag_run

    *_, running = _runs(session, "success", "running")
    before = _print(session)
    later = datetime(2026, 3, 10, 4, 5, tzinfo=UTC)
    session.execute(update(dag_run).where(dag_run.c.id == running).values(updated_at=later))
    assert _print(session) == before
    _state(session, running, "success")
    assert _print(session) != before


def test_an_older_run_deleted_as_a_new_one_is_added_moves_the_fingerprint(session: Session) -> None:
    """The count stays; the new run's id is above every id, so the greatest id moves."""
    from sqlalchemy import delete

    from airflow_partitions.tools.state.tables import dag_run

    oldest, *_ = _runs(session, "success", "success", "success")
    before = _print(session)
    session.execute(delete(dag_run).where(dag_run.c.id == oldest))
    _new_run(session, "2026-03-09", "success")
    assert _print(session) != before


def test_a_run_committed_below_the_mark_as_an_older_one_is_deleted_moves_the_fingerprint(
    session: Session,
) -> None:
    """
    PostgreSQL may commit a run after a later id's: the id skipped is a gap, read again.

    Run 5 is read with 4 missing; run 4 commits later as the oldest run is deleted: the count
    stays, and no run is above the mark.
    """
    from sqlalchemy import delete

    from airflow_partitions.tools.state.tables import dag_run

    oldest, *_ = _runs(session, "success", "success", "success")
    _print(session)  # the mark: run 3
    assert _new_run(session, "2026-03-05", "success", run_id=5) == 5
    before = _print(session)
    assert _new_run(session, "2026-03-04", "success", run_id=4) == 4
    session.execute(delete(dag_run).where(dag_run.c.id == oldest))
    assert _print(session) != before


@pytest.mark.parametrize("state", ["queued", "running", "failed", "up_for_retry", None])
def test_a_successful_run_leaving_success_for_any_state_moves_the_fingerprint(
    session: Session, state: str | None
) -> None:
    """The common state's sums are left out: a run leaving it enters a state that is summed, known or not."""
    first, *_ = _runs(session, "success", "success", "failed")
    before = _print(session)
    _state(session, first, state)  # type: ignore[arg-type]
    assert _print(session) != before


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    states=st.lists(st.sampled_from(["success", "failed", "running", "queued"]), min_size=1, max_size=8),
    change=st.tuples(
        st.sampled_from(["add", "delete", "state"]),
        st.integers(min_value=0, max_value=7),
        st.sampled_from(["success", "failed", "running", "queued"]),
    ),
)
def test_any_one_change_to_the_runs_moves_the_fingerprint(
    tmp_path_factory: pytest.TempPathFactory, states: list[str], change: tuple[str, int, str]
) -> None:
    """Property: a run added, deleted or put in another state, one at a time, always moves the print."""
    from sqlalchemy import delete, select

    from airflow_partitions.tools.state.tables import dag_run

    engine = create_engine(f"sqlite:///{tmp_path_factory.mktemp('print') / 'airflow.db'}")
    try:
        with Session(engine) as session:
            ids = _runs(session, *states)
            before = _print(session)
            kind, pick, state = change
            chosen = ids[pick % len(ids)]
            held = session.scalar(select(dag_run.c.state).where(dag_run.c.id == chosen))
            if kind == "add":
                _new_run(session, "2026-03-20", state)
            elif kind == "delete":
                session.execute(delete(dag_run).where(dag_run.c.id == chosen))
            elif state != held:
                _state(session, chosen, state)
            else:
                return  # the same state again: nothing changed
            assert _print(session) != before
    finally:
        engine.dispose()


def test_a_new_process_finds_every_answer_asked_one_by_one_and_then_all_at_once(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first questions of a Dag key are read one by one, the rest from all its answers read at once."""
    monkeypatch.setattr(store_file, "ONE_BY_ONE", 2)
    memos = [("page", "weather_local_day_jfk", None, None, 50, offset) for offset in range(0, 200, 50)]
    for memo in memos:
        keep(memo, PRINT, [f"2013-03-{memo[-1] // 50 + 1:02d}"], session)
    _new_process()
    assert [kept_value(memo, {"weather_local_day_jfk": PRINT}, session) for memo in memos] == [
        (PRINT, ["2013-03-01"]),
        (PRINT, ["2013-03-02"]),
        (PRINT, ["2013-03-03"]),
        (PRINT, ["2013-03-04"]),
    ]
    (store,) = cache.STORES.values()
    assert store is not None and store.one_by_one[store.rows("weather_local_day_jfk")] == 2


def test_answers_read_ahead_are_found_without_a_read_each_and_without_loading_the_dag_key(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's questions read in one query: found as stored, a question without one worked out and kept."""
    monkeypatch.setattr(store_file, "ONE_BY_ONE", 0)  # a fetch not read ahead would load every answer
    store = cache.store_for(session)
    assert store is not None
    for day in ("2013-03-10", "2013-03-11", "2013-03-12"):
        store.put("dag-key", ["closes", day], f"{day}T05:00:00+00:00")
    _new_process()
    store = cache.store_for(session)
    assert store is not None
    asked = [["closes", day] for day in ("2013-03-10", "2013-03-11", "2013-03-13")]
    store.read_ahead("dag-key", asked)
    found = [store.fetch("dag-key", question) for question in asked]
    assert found == ["2013-03-10T05:00:00+00:00", "2013-03-11T05:00:00+00:00", None]
    assert "dag-key" not in store.loaded  # the third answer stored was never read
    store.put("dag-key", ["closes", "2013-03-13"], "2013-03-14T05:00:00+00:00")
    store.flush()
    assert store.fetch("dag-key", ["closes", "2013-03-13"]) == "2013-03-14T05:00:00+00:00"


def test_a_dag_key_of_more_answers_than_loaded_at_most_is_read_one_by_one_for_good(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the first questions, a large key is still read question by question, never held whole."""
    monkeypatch.setattr(store_file, "ONE_BY_ONE", 2)
    monkeypatch.setattr(store_file, "LOADED_AT_MOST", 3)
    days = [f"2013-03-{day:02d}" for day in range(1, 9)]
    store = cache.store_for(session)
    assert store is not None
    for name, many in (("large", days), ("small", days[:3])):
        for day in many:
            store.put(name, ["closes", day], f"{day}T05:00:00+00:00")
    _new_process()
    store = cache.store_for(session)
    assert store is not None
    for name, many in (("large", days), ("small", days[:3])):
        assert [store.fetch(name, ["closes", day]) for day in many] == [
            f"{day}T05:00:00+00:00" for day in many
        ]
    assert "large" not in store.loaded and store.one_by_one["large"] == 8
    assert "small" in store.loaded and store.one_by_one["small"] == 2


def test_the_environment_covers_every_file_of_the_package() -> None:
    """An upgrade of a mapper outside tools/ (temporal.py) makes new keys: its files are digested."""
    import airflow_partitions

    assert Path(airflow_partitions.__file__).parent == store_file.PACKAGE
    assert (store_file.PACKAGE / "temporal.py").exists()
