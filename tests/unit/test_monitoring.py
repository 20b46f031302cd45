"""
The alert rules and the dashboard in docs/monitoring/: tested with Prometheus' promtool, and held
to the metrics GET /partitions/metrics serves (names and labels).

``promtool`` comes with Debian's ``prometheus`` package (scripts/dev.sh installs it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.unit.support import REPO_ROOT

RULES = REPO_ROOT / "docs" / "monitoring" / "alerts.yml"
RULE_TESTS = Path(__file__).parent / "monitoring" / "alerts_test.yml"
DASHBOARD = REPO_ROOT / "docs" / "monitoring" / "dashboard.json"

#: The metrics of GET /partitions/metrics and their labels (docs/monitoring.md).
METRICS = {
    "airflow_partitions_partitions": {"dag_id", "state"},
    "airflow_partitions_late": {"dag_id"},
    "airflow_partitions_oldest_pending_age_seconds": {"dag_id"},
    "airflow_partitions_ran_incomplete": {"dag_id"},
    "airflow_partitions_refused_keys_total": {"dag_id", "reason"},
    "airflow_partitions_blocked": {"dag_id"},
    "airflow_partitions_members_broken": {"dag_id", "variable"},
    "airflow_partitions_warming": {"dag_id"},
}
NAMES = re.compile(r"\bairflow_partitions_\w+")


def promtool(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: install Debian's prometheus package (scripts/dev.sh test does)")
    return subprocess.run([found, *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_the_alert_rules_are_valid_prometheus_rules():
    checked = promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 7 rules found" in checked.stdout


def test_the_alert_rules_pass_their_promtool_tests():
    tested = promtool("test", "rules", str(RULE_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr


@pytest.mark.parametrize(
    ("wrong", "right", "alert"),
    [
        ("for: 5m", "for: 50m", "PartitionLate"),
        ("airflow_partitions_blocked > 0", "airflow_partitions_blocked > 500", "PartitionsBlocked"),
        ("offset 30m", "offset 5m", "PartitionRanIncomplete"),
        ("for: 1h", "for: 2h", "PartitionsOverdue"),
        ('partitions{state="overdue"} > 0', "partitions > 0", "PartitionsOverdue"),
        ("35 * 86400", "36 * 86400", "PartitionPendingTooLong"),
    ],
    ids=[
        "late waits too long",
        "blocked threshold",
        "incomplete window",
        "overdue waits too long",
        "overdue of any state",
        "pending age threshold",
    ],
)
def test_promtool_fails_the_rules_with_a_wrong_rule(tmp_path, wrong, right, alert):
    # The same tests against a copy of the rules with one rule changed: they must fail, naming it.
    text = RULES.read_text()
    assert text.count(wrong) == 1
    (tmp_path / "alerts.yml").write_text(text.replace(wrong, right))
    tests = RULE_TESTS.read_text().replace("../../../docs/monitoring/alerts.yml", "alerts.yml")
    (tmp_path / "alerts_test.yml").write_text(tests)
    tested = promtool("test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert tested.returncode != 0
    assert f"alertname: {alert}" in tested.stdout + tested.stderr


def _by_labels(expression: str) -> set[str]:
    """The labels an expression aggregates by, ``sum by (dag_id, reason) (…)``."""
    return {
        label.strip() for group in re.findall(r"\bby \(([^)]*)\)", expression) for label in group.split(",")
    }


def _rule_expressions() -> list[str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def _dashboard_targets() -> list[dict]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target for panel in dashboard["panels"] for target in panel["targets"]]


def test_the_alert_rules_name_only_metrics_that_exist():
    expressions = _rule_expressions()
    named = {name for expression in expressions for name in NAMES.findall(expression)}
    assert named <= set(METRICS), named - set(METRICS)
    # Overdue partitions and the oldest pending age too: rules that need no setting on the Dag.
    assert {
        "airflow_partitions_partitions",
        "airflow_partitions_late",
        "airflow_partitions_oldest_pending_age_seconds",
        "airflow_partitions_ran_incomplete",
        "airflow_partitions_refused_keys_total",
        "airflow_partitions_blocked",
    } <= named


def test_the_dashboard_parses_and_shows_every_metric_and_only_those():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "airflow-partitions"
    [dag_variable] = [v for v in dashboard["templating"]["list"] if v["name"] == "dag_id"]
    assert NAMES.findall(dag_variable["definition"]) == ["airflow_partitions_partitions"]
    targets = _dashboard_targets()
    assert targets and all(t["datasource"]["uid"] == "${datasource}" for t in targets)
    named = {name for target in targets for name in NAMES.findall(target["expr"])}
    assert named == set(METRICS)
    for target in targets:
        [metric] = set(NAMES.findall(target["expr"]))
        labels = METRICS[metric]
        assert _by_labels(target["expr"]) <= labels, target["expr"]
        assert set(re.findall(r"\{\{(\w+)\}\}", target["legendFormat"])) <= labels, target["legendFormat"]
        assert set(re.findall(r"(\w+)=~", target["expr"])) <= labels, target["expr"]
