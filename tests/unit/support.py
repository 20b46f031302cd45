"""Helpers shared by the unit tests: fresh interpreters and one configured instance per class."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, *, hashseed: str | None = None) -> str:
    """
    Run *code* in a fresh interpreter (this one's executable, cwd at the repository root).

    Returns its standard output; fails the test with the child's stderr if it exits non-zero.
    """
    env = dict(os.environ)
    if hashseed is not None:
        env["PYTHONHASHSEED"] = hashseed
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"child interpreter failed:\n{result.stderr}"
    return result.stdout


def configured_instances() -> dict[str, Any]:
    """Return one instance of each public class, configured away from its defaults where it can be."""
    from airflow_partitions import BusinessDayWindow, PrefixStripMapper, ScheduledRuntimePartitionTimetable

    return {
        "PrefixStripMapper": PrefixStripMapper("eu", separator="/", max_downstream_keys=40),
        "BusinessDayWindow": BusinessDayWindow(),
        "ScheduledRuntimePartitionTimetable": ScheduledRuntimePartitionTimetable(
            "0 6 * * 1-5",
            timezone="America/New_York",
            interval=timedelta(hours=6),
            run_immediately=timedelta(minutes=30),
        ),
    }
