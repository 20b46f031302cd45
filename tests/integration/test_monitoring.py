"""
Monitoring partitions on a real Airflow: a run that ran incomplete mails its notifier once, and a
real Prometheus scrapes the metrics.

This module's own Airflow (SQLite) runs the Dags of ``dags_monitoring/``; the SMTP notifier of
``apache-airflow-providers-smtp`` sends through the connection ``smtp_default``, pointed at an SMTP
server (``aiosmtpd``) this module starts on loopback. Two long-past UTC days are sent: 2026-01-05
whole, one hour per REST call, then 2026-01-06 without four of its hours, in one batch (a
producer task's ``add_partitions``). ``it_notify_day`` runs the whole day when complete and the
other at its deadline (the day ended long ago: once its keys have settled for 15 s) with 20
hours; its Dag callbacks (run by the dag-processor) call
``IncompleteRunNotifier(SmtpNotifier(...))``. ``it_late_day`` waits for all 24 hours and expects
each day within 2 hours of its end. New York hours of Thursday 2026-04-02 and of Good Friday
2026-04-03 go to the NYSE's trading days (``it_late_nyse_day``): Good Friday's are refused, it is
no partition and never late.
"""

from __future__ import annotations

import email
import email.policy
import json
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.integration import test_ui
from tests.integration.test_ui import _stop
from tests.support.launcher import AirflowInstance, free_port, wait_until

DAGS = Path(__file__).parent / "dags_monitoring"
RULES = Path(__file__).resolve().parents[2] / "docs" / "monitoring" / "alerts.yml"
PROMETHEUS = "/usr/bin/prometheus"  # Debian's prometheus package (scripts/dev.sh installs it)
ASSET = "it_mon_hours"
COMPLETE_DAY = "2026-01-05"
PARTIAL_DAY = "2026-01-06"
NEVER_SENT = [f"{PARTIAL_DAY}T{h:02d}" for h in (3, 9, 15, 21)]
THURSDAY, GOOD_FRIDAY = "2026-04-02", "2026-04-03"  # Good Friday: the NYSE is closed (nyse.com)

#: The api-server users must sign in to (a read-only ``viewer``), test_ui's fixture.
signed_in = test_ui.signed_in


def _hours(day: str) -> list[str]:
    return [f"{day}T{h:02d}" for h in range(24)]


class _Mailbox:
    """What a real SMTP server (aiosmtpd) on loopback received: each message, parsed."""

    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []
        self._lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self._lock:
            self.messages.append(message)
        return "250 Message accepted for delivery"


@pytest.fixture(scope="module", params=["sqlite"])
def airflow():  # this module's Airflow (on a failure its logs are printed, tests/integration/conftest.py)
    from aiosmtpd.controller import Controller

    mailbox = _Mailbox()
    smtp = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    connection = {
        "conn_type": "smtp",
        "host": "127.0.0.1",
        "port": smtp.port,
        "extra": {"disable_tls": True, "disable_ssl": True, "retry_limit": 0, "timeout": 10},
    }
    instance = AirflowInstance(DAGS, extra_env={"AIRFLOW_CONN_SMTP_DEFAULT": json.dumps(connection)})
    try:
        instance.start()
        instance.wait_for_dags(["it_notify_day", "it_late_day", "it_mon_produce_hours", "it_late_nyse_day"])
        instance.mailbox = mailbox
        yield instance
    finally:
        instance.stop()
        smtp.stop()


def _callbacks_run(airflow, dag_id: str) -> int:
    """How many Dag callbacks of *dag_id* the dag-processor has started (its file-processing log)."""
    logs = airflow.home / "logs" / "dag_processor"
    return sum(
        1
        for path in logs.rglob("it_monitoring.py.log")
        for line in path.read_text(errors="replace").splitlines()
        if "Executing on_" in line and json.loads(line).get("dag_id") == dag_id
    )


@pytest.fixture(scope="module")
def days(airflow):
    """The whole day one REST call per key, then the partial one in a batch (one producer task)."""
    for key in _hours(COMPLETE_DAY):
        airflow.create_asset_event(ASSET, partition_key=key)
    partial = [k for k in _hours(PARTIAL_DAY) if k not in NEVER_SENT]
    airflow.trigger("it_mon_produce_hours", partition_key="batch-1", conf={"keys": partial})
    airflow.wait_for_runs("it_mon_produce_hours", 1, timeout=240)
    # Thursday 2026-04-02, then Good Friday: its hours are refused (no NYSE trading day).
    for key in _hours(THURSDAY) + _hours(GOOD_FRIDAY):
        airflow.create_asset_event("it_mon_nyse_hours", partition_key=key)
    airflow.wait_for_runs("it_late_nyse_day", 1, timeout=240)
    airflow.wait_for_runs("it_late_day", 1, timeout=240)
    return airflow.wait_for_runs("it_notify_day", 2, timeout=240)


def test_a_run_that_fired_incomplete_mails_its_notifier_once_with_what_it_missed(airflow, days):
    runs = days
    by_day = {run["partition_key"]: run for run in runs}
    assert sorted(by_day) == [COMPLETE_DAY, PARTIAL_DAY]
    # What the task saw: the partial day ran without exactly the hours never sent.
    assert airflow.xcom("it_notify_day", by_day[PARTIAL_DAY]["dag_run_id"], "load_day") == NEVER_SENT
    assert airflow.xcom("it_notify_day", by_day[COMPLETE_DAY]["dag_run_id"], "load_day") == []

    # Both runs' success callbacks ran; the complete day's, the earlier (its run ended about 15 s
    # before the other's began: the deadline's settle time), sent nothing. One mail in all.
    mailbox = airflow.mailbox
    wait_until(
        lambda: _callbacks_run(airflow, "it_notify_day") >= 2,
        timeout=120,
        what="the dag-processor to run both runs' callbacks",
    )
    wait_until(
        lambda: any(PARTIAL_DAY in m["Subject"] for m in mailbox.messages), timeout=120, what="the mail"
    )
    [message] = mailbox.messages
    assert message["Subject"] == f"{PARTIAL_DAY} of it_notify_day ran without 4 keys"
    assert message["To"] == "data-team@example.com"
    body = message.get_body(("html", "plain")).get_content()
    assert f"it_notify_day {PARTIAL_DAY} ran with 20 of 24 keys" in body
    assert f"missing from {ASSET}: {', '.join(NEVER_SENT)}" in body


# -- the metrics endpoint, scraped by a real Prometheus ----------------------------------------


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


@pytest.fixture(scope="module")
def prometheus(signed_in, tmp_path_factory):
    """Debian's Prometheus on loopback, scraping the signed-in api-server every second."""
    server, token = signed_in
    folder = tmp_path_factory.mktemp("prometheus")
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [
            {
                "job_name": "airflow_partitions",
                "metrics_path": "/partitions/metrics",
                "authorization": {"type": "Bearer", "credentials": token},
                "static_configs": [{"targets": [f"127.0.0.1:{server.port}"]}],
            }
        ],
    }
    (folder / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
    with open(folder / "prometheus.log", "wb") as log:
        process = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={folder / 'prometheus.yml'}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _ready(url, process, folder), timeout=60, what="Prometheus")
        yield url
    finally:
        _stop(process)


def _ready(url: str, process: subprocess.Popen, folder: Path) -> bool:
    if process.poll() is not None:
        raise AssertionError((folder / "prometheus.log").read_text(errors="replace")[-3000:])
    try:
        return _get(f"{url}/-/ready")[0] == 200
    except OSError:
        return False


def _query(prometheus: str, expression: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Run an instant PromQL query; its samples by labels (the metric name left out)."""
    status, body = _get(f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expression}))
    assert status == 200, body
    return {
        tuple(
            sorted((k, v) for k, v in item["metric"].items() if k not in ("__name__", "instance", "job"))
        ): float(item["value"][1])
        for item in json.loads(body)["data"]["result"]
    }


def test_the_metrics_need_a_token_and_parse_as_prometheus_text(signed_in, days):
    from prometheus_client.parser import text_string_to_metric_families

    server, token = signed_in
    url = f"{server.url}/partitions/metrics"
    assert _get(url)[0] == 401
    assert _get(url, "not-a-token")[0] == 403
    status, text = _get(url, token)
    assert status == 200, text
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples["airflow_partitions_partitions", (("dag_id", "it_late_day"), ("state", "success"))] == 1
    assert samples["airflow_partitions_partitions", (("dag_id", "it_late_day"), ("state", "overdue"))] == 1
    assert samples["airflow_partitions_late", (("dag_id", "it_late_day"),)] == 1
    assert samples["airflow_partitions_late", (("dag_id", "it_notify_day"),)] == 0  # no expectation
    assert samples["airflow_partitions_ran_incomplete", (("dag_id", "it_notify_day"),)] == 1
    # Good Friday is no partition of the NYSE's days: never late; its 24 hours were refused.
    nyse = (("dag_id", "it_late_nyse_day"),)
    assert samples["airflow_partitions_partitions", (*nyse, ("state", "success"))] == 1
    assert (
        sum(
            v
            for (name, labels), v in samples.items()
            if name == "airflow_partitions_partitions" and labels[0] == nyse[0]
        )
        == 1
    )
    assert samples["airflow_partitions_late", nyse] == 0
    refused = "airflow_partitions_refused_keys_total"
    assert samples[refused, (*nyse, ("reason", "outside_calendar"))] == 24
    assert samples[refused, (*nyse, ("reason", "mapping_error"))] == 0


def test_a_real_prometheus_scrapes_one_success_and_one_late_partition(prometheus, days):
    # A day rollup expected within 2 hours of each day's end: 2026-01-05 complete (success),
    # 2026-01-06 long past with 20 of its 24 hours (pending, its period over: late).
    wanted = 'airflow_partitions_late{dag_id="it_late_day"}'
    wait_until(lambda: _query(prometheus, wanted), timeout=60, what="a scrape of the metrics")
    assert _query(prometheus, wanted) == {(("dag_id", "it_late_day"),): 1.0}
    states = _query(prometheus, 'airflow_partitions_partitions{dag_id="it_late_day"} > 0')
    assert states == {
        (("dag_id", "it_late_day"), ("state", "success")): 1.0,
        (("dag_id", "it_late_day"), ("state", "overdue")): 1.0,
    }
    assert _query(prometheus, 'up{job="airflow_partitions"}') == {(): 1.0}
    # The alert rules of docs/monitoring/alerts.yml load and evaluate against the scraped series.
    rules = _rules(prometheus)
    assert sorted(rule["name"] for rule in rules) == [
        "PartitionKeysRefused",
        "PartitionLate",
        "PartitionMembersBroken",
        "PartitionPendingTooLong",
        "PartitionRanIncomplete",
        "PartitionsBlocked",
        "PartitionsOverdue",
    ]
    assert all(rule["health"] == "ok" for rule in rules), rules
    wait_until(
        lambda: any(
            a["labels"].get("dag_id") == "it_late_day" for r in _rules(prometheus) for a in r["alerts"]
        ),
        timeout=60,
        what="PartitionLate pending for it_late_day",
    )
    [late] = [r for r in _rules(prometheus) if r["name"] == "PartitionLate"]
    assert [(a["labels"]["dag_id"], a["state"]) for a in late["alerts"]] == [("it_late_day", "pending")]
    # Its overdue day alerts with no setting too (pending for the rule's hour); nothing waits 35 days.
    overdue = [r for r in _rules(prometheus) if r["name"] == "PartitionsOverdue"]
    assert [(a["labels"]["dag_id"], a["state"]) for r in overdue for a in r["alerts"]] == [
        ("it_late_day", "pending")
    ]
    assert [r["alerts"] for r in _rules(prometheus) if r["name"] == "PartitionPendingTooLong"] == [[]]
    # No members Variable is broken here: its rule evaluates and stays quiet.
    assert [r["alerts"] for r in _rules(prometheus) if r["name"] == "PartitionMembersBroken"] == [[]]


def _rules(prometheus: str) -> list[dict]:
    body = _get(f"{prometheus}/api/v1/rules")[1]
    return [rule for group in json.loads(body)["data"]["groups"] for rule in group["rules"]]
