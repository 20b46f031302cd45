"""
Monitoring partitions on a real Airflow: a run that ran incomplete mails its notifier once.

This module's own Airflow (SQLite) runs the Dags of ``dags_monitoring/``; the SMTP notifier of
``apache-airflow-providers-smtp`` sends through the connection ``smtp_default``, pointed at an SMTP
server (``aiosmtpd``) this module starts on loopback. Two long-past UTC days are sent, one hour
per REST call: 2026-01-05 whole, 2026-01-06 without four of its hours. ``it_notify_day`` runs the
whole day when complete and the other at its deadline (the day ended long ago: once its keys
have settled for 15 s) with 20 hours;
its Dag callbacks (run by the dag-processor) call ``IncompleteRunNotifier(SmtpNotifier(...))``.
"""

from __future__ import annotations

import email
import email.policy
import json
import threading
from pathlib import Path

import pytest

from airflow_partitions.testing import AirflowInstance, free_port, wait_until

DAGS = Path(__file__).parent / "dags_monitoring"
ASSET = "it_mon_hours"
COMPLETE_DAY = "2026-01-05"
PARTIAL_DAY = "2026-01-06"
NEVER_SENT = [f"{PARTIAL_DAY}T{h:02d}" for h in (3, 9, 15, 21)]


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
        instance.wait_for_dags(["it_notify_day", "it_late_day"])
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


def test_a_run_that_fired_incomplete_mails_its_notifier_once_with_what_it_missed(airflow):
    for key in _hours(COMPLETE_DAY) + [k for k in _hours(PARTIAL_DAY) if k not in NEVER_SENT]:
        airflow.create_asset_event(ASSET, partition_key=key)
    runs = airflow.wait_for_runs("it_notify_day", 2, timeout=240)
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
