"""
The JSON the Partitions view's API and ``status --json`` return, pinned by golden files.

A real Airflow metadata database (SQLite, ``airflow db migrate``) is built once per test session
in a process of its own (:mod:`tests.unit.tools.state_golden.build`): the Dags of
``state_golden/dags/`` serialized by Airflow, asset events sent through Airflow's asset manager,
Dag runs written with its models. Every answer must equal its file in ``state_golden/`` but for
``read_at`` (when it was read) and ``asset_id``. A change to what the reader returns shows here as
a diff; when the change is meant, write the files again with
``python -m tests.unit.tools.test_state_golden --write`` and say why in the commit.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "state_golden"
ROOT = Path(__file__).resolve().parents[3]
#: Fields that differ from one build to the next, whatever the reader does (``asset_id``: the
#: order in which Airflow wrote the assets).
VOLATILE = ("read_at", "asset_id")


def normalised(value: Any) -> Any:
    """Return *value* with the :data:`VOLATILE` fields as placeholders (``"<read_at>"``)."""
    if isinstance(value, dict):
        return {k: f"<{k}>" if k in VOLATILE else normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


def build() -> dict[str, Any]:
    """Run the builder in a new ``AIRFLOW_HOME`` and return its answers, normalised."""
    with tempfile.TemporaryDirectory(prefix="airflow-partitions-golden-state-") as home:
        env = {
            **os.environ,
            "AIRFLOW_HOME": home,
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
            "AIRFLOW__CORE__DAGS_FOLDER": str(HERE / "dags"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        }
        ran = subprocess.run(
            [sys.executable, "-m", "tests.unit.tools.state_golden.build"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if ran.returncode:
            raise AssertionError(f"the golden database could not be built:\n{ran.stderr[-6000:]}")
        return normalised(json.loads(ran.stdout.splitlines()[-1]))


@pytest.fixture(scope="session")
def answers() -> dict[str, Any]:
    return build()


def golden_names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.json"))


def test_every_answer_has_a_golden_file(answers):
    assert sorted(answers) == golden_names()


@pytest.mark.parametrize("name", golden_names())
def test_the_answer_equals_its_golden_file(answers, name):
    expected = json.loads((HERE / f"{name}.json").read_text(encoding="utf-8"))
    assert answers[name] == expected


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    for name, answer in build().items():
        text = json.dumps(answer, indent=1, sort_keys=True) + "\n"
        (HERE / f"{name}.json").write_text(text, encoding="utf-8")
