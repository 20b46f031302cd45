"""The airflow-partitions console script and the airflow partition-tools group: exit codes and --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from airflow_partitions.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = str(ROOT / "example_dags")
LOCAL_DAY = (
    'TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), '
    'input_timezone="UTC"), window=TemporalWindow(Hour()))'
)


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_explain_prints_a_table_a_person_reads_and_exits_0(capsys):
    code, out = run(capsys, "explain", "--mapper", LOCAL_DAY, "2026-03-08T05")
    assert code == 0
    assert out.splitlines()[0] == "TemporalRollupMapper: '2026-03-08T05' → '2026-03-08'"
    assert "23 keys under WaitForAll(): 2026-03-08T05," in out
    assert max(len(line) for line in out.splitlines()) <= 120


def test_explain_of_a_refused_key_exits_1_with_the_refusal(capsys):
    code, out = run(capsys, "explain", "--mapper", LOCAL_DAY, "2026-03-08")
    assert code == 1 and "REFUSED" in out


def test_explain_json_shape(capsys):
    code, out = run(capsys, "explain", "--mapper", LOCAL_DAY, "--json", "2026-03-08T05")
    data = json.loads(out)
    assert code == 0
    assert set(data) == {
        "mapper",
        "key",
        "downstream",
        "keys",
        "refused",
        "counts_as",
        "never_counts",
        "fan_out",
        "ok",
    }
    assert data["keys"][0]["waits_for_count"] == 23


def test_explain_reads_the_mapper_of_a_dag_in_a_folder(capsys):
    code, out = run(
        capsys,
        "explain",
        "--dag-folder",
        EXAMPLES,
        "--dag",
        "weather_local_day_jfk",
        "--json",
        "2013-03-10T05",
    )
    data = json.loads(out)
    assert code == 0 and data["keys"][0]["key"] == "2013-03-10" and data["keys"][0]["waits_for_count"] == 23


def test_explain_downstream_of_a_dag_in_a_folder(capsys):
    argv = [
        "explain",
        "--dag-folder",
        EXAMPLES,
        "--dag",
        "weather_local_day_jfk",
        "--downstream",
        "2013-03-10",
    ]
    code, out = run(capsys, *argv)
    assert code == 0 and "23 keys under WaitForAll(): 2013-03-10T05" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "2026-03-08"],
        ["explain", "--mapper", "TemporalMapper(Day())", "--dag-folder", EXAMPLES, "2026-03-08"],
        ["explain", "--mapper", "NoSuchMapper()", "2026-03-08"],
        ["explain", "--dag-folder", EXAMPLES, "--dag", "weather_land_jfk", "2026-03-08"],
        ["check", "/no/such/folder"],
    ],
)
def test_usage_errors_exit_2_naming_the_problem(capsys, argv):
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err


def test_missing_arguments_exit_2_as_argparse_does():
    with pytest.raises(SystemExit) as exit_:
        main(["check"])
    assert exit_.value.code == 2


def test_check_of_the_example_dags_exits_0_and_json_lists_findings(capsys):
    code, out = run(capsys, "check", EXAMPLES, "--json")
    findings = json.loads(out)
    assert code == 0
    assert findings and all(set(f) == {"severity", "dag_id", "asset", "message", "fix"} for f in findings)
    assert {f["severity"] for f in findings} <= {"warning", "info"}


def test_check_with_errors_exits_1(capsys, tmp_path):
    (tmp_path / "broken.py").write_text("from airflow.sdk import DAG\nimport no_such_module\n")
    code, out = run(capsys, "check", str(tmp_path))
    assert (
        code == 1 and out.startswith("ERROR    broken.py") and out.endswith("1 error, 0 warnings, 0 info\n")
    )


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "AIRFLOW_HOME": str(tmp_path)}


def test_the_console_script_runs_as_a_process(tmp_path):
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"] == {
        "airflow-partitions": "airflow_partitions.cli:main"
    }
    done = subprocess.run(
        [sys.executable, "-m", "airflow_partitions.cli", "check", EXAMPLES, "--json"],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), list)


def test_airflow_cli_has_the_partition_tools_group(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "airflow", "partition-tools", "--help"],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "explain" in done.stdout and "check" in done.stdout
