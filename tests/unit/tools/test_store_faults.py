"""
The store's file when things go wrong (state/kept/store.py, store_faults.py): answers stay right, and fast.

A damaged file (found so on opening, or while in use) is moved aside, said once and built anew; a
folder this user cannot write gets a file of the user's own elsewhere, said once; a process killed
in the middle of a write leaves what was written before; processes keeping and reading at the same
time each find their own answers. Real SQLite files and real processes throughout.
"""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept import store as store_file
from airflow_partitions.tools.state.kept.cache import keep, kept_value
from tests.unit.tools.test_store import _new_process as new_process

ROOT = Path(__file__).resolve().parents[3]
DAG = "weather_local_day_jfk"
PRINT = (100, (("failed", 3, "2f1c"),))
MEMO = ("page", DAG, None, None, 50, 0)


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    """A session on an empty SQLite database; the store at tmp/store.sqlite, this user's own in tmp/own."""
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(tmp_path / "store.sqlite"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "own"))
    (tmp_path / "own").mkdir()
    for memo in ("KEPT", "STORES", "MIRRORS"):
        monkeypatch.setattr(cache, memo, type(getattr(cache, memo))())
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    with Session(engine) as new:
        yield new
    engine.dispose()


def _new_process() -> None:
    """test_store's new process, which forgets the mirrors of the pending runs too."""
    new_process()
    cache.MIRRORS.clear()


def _kept_across_processes(session: Session, value: Any) -> Any:
    """Keep *value* under :data:`MEMO`, then read it back in a new process."""
    keep(MEMO, PRINT, value, session)
    _new_process()
    found = kept_value(MEMO, {DAG: PRINT}, session)
    return None if found is None else found[1]


def test_a_damaged_store_file_is_moved_aside_said_once_and_built_anew(
    session: Session, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "store.sqlite").write_bytes(b"not a database, " * 512)
    assert _kept_across_processes(session, ["2013-03-01"]) == ["2013-03-01"]
    said = capsys.readouterr().err
    assert said.count("warning") == 1
    assert f"the answer store {tmp_path / 'store.sqlite'} is damaged (file is not a database)" in said
    assert f"moved to {tmp_path / 'store.sqlite.damaged'} and built anew" in said
    assert (tmp_path / "store.sqlite.damaged").read_bytes().startswith(b"not a database")
    _new_process()
    assert kept_value(MEMO, {DAG: PRINT}, session) == (PRINT, ["2013-03-01"])
    assert capsys.readouterr().err == ""  # said once: the next processes find the file built anew


def test_a_store_file_damaged_while_in_use_is_built_anew_for_the_next_read(
    session: Session, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _kept_across_processes(session, ["2013-03-01"]) == ["2013-03-01"]
    _new_process()
    path = tmp_path / "store.sqlite"
    store = cache.store_for(session)  # opened: its first page (the tables) read
    assert store is not None and store.connection is not None
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    whole = path.read_bytes()
    path.write_bytes(whole[:4096] + b"\xff" * (len(whole) - 4096))  # every page after the first
    assert kept_value(MEMO, {DAG: PRINT}, session) is None  # not read: worked out again
    assert "is damaged" in capsys.readouterr().err
    assert (tmp_path / "store.sqlite.damaged").exists()
    assert cache.store_for(session) is not store  # opened anew, in the same process
    assert _kept_across_processes(session, ["2013-03-02"]) == ["2013-03-02"]
    assert capsys.readouterr().err == ""


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody may write in: its mode, and for root (who may write anywhere) immutable (chattr +i)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        yield folder
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def test_a_store_folder_this_user_cannot_write_is_replaced_by_its_own_said_once(
    session: Session,
    read_only: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = read_only / "store.sqlite"
    monkeypatch.setenv(store_file.STORE_VARIABLE, str(path))
    assert _kept_across_processes(session, ["2013-03-01"]) == ["2013-03-01"]  # kept elsewhere
    user = pwd.getpwuid(os.geteuid()).pw_name
    instead = tmp_path / "own" / f"airflow-partitions-{user}" / "store.sqlite"
    said = capsys.readouterr().err
    assert said.count("warning") == 1
    assert (
        f"the answer store {path} cannot be used (unable to open database file): {instead} is used instead"
        in said
    )
    assert (
        f"make {path} and its folder readable and writable by {user}, or set AIRFLOW_PARTITIONS_CACHE" in said
    )
    _new_process()
    assert kept_value(MEMO, {DAG: PRINT}, session) == (PRINT, ["2013-03-01"])
    store = cache.store_for(session)
    assert store is not None and store.path == instead
    assert capsys.readouterr().err == ""  # said once


#: Keep an answer, then die (SIGKILL) inside the store's write transaction, before its commit.
KILLED_WHILE_WRITING = """
import os, signal, sys
from sqlalchemy import create_engine
from sqlalchemy.orm import Session
from airflow_partitions.tools.state.kept.cache import keep, store_for
with Session(create_engine("sqlite:///" + sys.argv[1])) as session:
    keep(("page", "d", None), (2,), ["2013-03-02"], session)
    store = store_for(session)
    store.uses.record = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # after the answers' INSERT
    store.flush()
"""


def test_a_process_killed_while_writing_leaves_the_store_as_it_was(session: Session, tmp_path: Path) -> None:
    keep(("page", "d", None), (1,), ["2013-03-01"], session)
    _new_process()
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_WHILE_WRITING, str(tmp_path / "airflow.db")], cwd=ROOT, check=False
    )
    assert killed.returncode == -signal.SIGKILL
    assert kept_value(("page", "d", None), {"d": (1,)}, session) == ((1,), ["2013-03-01"])
    assert kept_value(("page", "d", None), {"d": (2,)}, session) is None  # never committed
    keep(("page", "d", None), (3,), ["2013-03-03"], session)  # the write lock is free
    _new_process()
    assert kept_value(("page", "d", None), {"d": (3,)}, session) == ((3,), ["2013-03-03"])


#: Keep 40 answers of one's own, each read back in a new process's memory; print how many came back.
KEEPING_ALONGSIDE = """
import sys
from sqlalchemy import create_engine
from sqlalchemy.orm import Session
from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.kept.cache import keep, kept_value, store_for
me = sys.argv[2]
with Session(create_engine("sqlite:///" + sys.argv[1])) as session:
    back = 0
    for n in range(40):
        keep(("page", me, n), (n,), [me, n], session)
        store_for(session).flush()
        cache.KEPT.clear()
        found = kept_value(("page", me, n), {me: (n,)}, session)
        back += found == ((n,), [me, n]) or found is None  # None: the file was busy, worked out again
        assert kept_value(("page", me, n), {me: (n + 1,)}, session) is None  # never another print's
    print(back)
"""


def test_processes_keeping_and_reading_at_once_each_find_their_own_answers(
    session: Session, tmp_path: Path
) -> None:
    keep(MEMO, PRINT, ["2013-03-01"], session)  # the file and its tables made
    _new_process()
    started = [
        subprocess.Popen(
            [sys.executable, "-c", KEEPING_ALONGSIDE, str(tmp_path / "airflow.db"), f"dag-{i}"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    assert [process.communicate(timeout=120)[0].strip() for process in started] == ["40"] * 4
    assert all(process.returncode == 0 for process in started)
    for i in range(4):
        assert kept_value(("page", f"dag-{i}", 39), {f"dag-{i}": (39,)}, session) == ((39,), [f"dag-{i}", 39])
