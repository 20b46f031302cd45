"""
The store's SQLite file when it cannot be used: damaged, unreadable, or in a folder this user cannot write.

Without its store every command works its answers out again (importing Airflow, reading every
pending run's keys): 3.08 s against 0.57 s for a ``status`` that was seen, on every command,
silently. So a damaged file (not a database, or a malformed one) is moved aside
(``<file>.damaged``) and built anew, said once by the process that moved it; a file or folder
this user cannot read or write is replaced by one of its own in the temporary folder
(``/tmp/airflow-partitions-<user>/``), said once per file and reason (the file kept elsewhere
remembers it). Each is said on stderr: a command's terminal, the api-server's log.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import sqlite3
import sys
import tempfile
from pathlib import Path

#: SQLite's primary result codes of a damaged file: ``SQLITE_CORRUPT`` (a malformed database) and
#: ``SQLITE_NOTADB`` (no database at all).
DAMAGED = (11, 26)


def damaged(err: BaseException) -> bool:
    """Whether *err* (an error of SQLite) says the file is damaged, not busy, locked or unwritable."""
    return isinstance(err, sqlite3.DatabaseError) and (getattr(err, "sqlite_errorcode", 0) & 0xFF) in DAMAGED


def say(text: str) -> None:
    """Print a warning about the store on stderr: ``airflow-partitions: warning: …``."""
    print(f"airflow-partitions: warning: {text}", file=sys.stderr)


def inode(path: Path) -> int | None:
    """Return the file number of *path* (``None``: no such file): what a store opened."""
    try:
        return path.stat().st_ino
    except OSError:
        return None


def set_aside(path: Path, opened: int | None, err: BaseException) -> bool:
    """
    Move the damaged store file *path* (and its ``-wal`` and ``-shm``) to ``<path>.damaged``; say so.

    *opened*: the file number of the file found damaged: if *path* is another file now, another
    process built it anew already, and nothing is moved. Returns whether *path* may be built anew.
    """
    if opened is not None and inode(path) not in (opened, None):
        return True
    aside = path.with_name(f"{path.name}.damaged")
    try:
        os.replace(path, aside)
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    except FileNotFoundError:  # another process moved it first
        return True
    except OSError:
        return False
    say(
        f"the answer store {path} is damaged ({err}): moved to {aside} and built anew (the next reads work "
        f"their answers out again, then are fast); {aside} can be deleted"
    )
    return True


def user() -> str:
    """Return the name of the user this process runs as (``airflow``)."""
    return pwd.getpwuid(os.getuid()).pw_name


def elsewhere(path: Path) -> Path:
    """Return where this user keeps the store *path* when it cannot: its temporary folder, by user."""
    return Path(tempfile.gettempdir()) / f"airflow-partitions-{user()}" / path.name


def unusable(path: Path, err: BaseException, instead: Path | None) -> str:
    """Return what to say of a store file *path* this user cannot use (*err*), kept at *instead* (or none)."""
    fix = (
        f"make {path} and its folder readable and writable by {user()}, or set "
        "AIRFLOW_PARTITIONS_CACHE to a file that is (or to off)"
    )
    kept = "every command works its answers out again" if instead is None else f"{instead} is used instead"
    return f"the answer store {path} cannot be used ({err}): {kept}; {fix}"
