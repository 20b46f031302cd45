"""
The api-server keeps answering while tasks start and asset events arrive (issue 48, item 7).

Seen on SQLite: a task's ``PATCH /execution/task-instances/{id}/run`` and a concurrent
``POST /api/v2/assets/events`` both held for the whole 60 s lock wait. Core Airflow's REST audit
log (``airflow/api_fastapi/logging/decorators.py``, ``action_logging``) commits on the
api-server's event loop, waiting for SQLite's one write lock, while the request holding that lock
needs the same loop to commit. ``benchmarks/sqlite_lockup.py`` reproduces it without this package
(figures in benchmarks/README.md): with the tasks' execution API in the same process, and with
two REST writes at once in one process even when the execution API runs apart.

The session's Airflow runs as docs/deployment.md recommends: the execution API in an api-server
process of its own. The test posts UTC hours of ``it_lockup_hours``, one at a time and then from
three client threads, while the runs of ``it_produce_lockup_hours`` (a day of keys added by its
task) and of ``it_lockup_day`` (a task per complete day) start, and reads the Partitions view of
``it_lockup_day`` twice a second meanwhile. Every request must be answered within
``ANSWER_WITHIN`` seconds (a frozen api-server answers after 60 s; a healthy one here within about
2 s). On SQLite the threads send one write at a time, as docs/deployment.md says to: two at once
freeze core's api-server whatever this package does.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta

DAY_DAG = "it_lockup_day"
PRODUCER = "it_produce_lockup_hours"
ASSET = "it_lockup_hours"
#: Seconds within which every request must be answered: far above a healthy answer, far below
#: the freeze (SQLite's 60 s lock wait).
ANSWER_WITHIN = 10.0
#: Seconds each sender waits between two events, so that the sending lasts while tasks start.
PACE = 0.2
FIRST_DAY = date(2031, 1, 1)


def _day(n: int) -> date:
    return FIRST_DAY + timedelta(days=n)


def _hours(day: date) -> list[str]:
    return [f"{day.isoformat()}T{hour:02d}" for hour in range(24)]


class _Client:
    """Calls the REST API once per request, failing unless answered within ANSWER_WITHIN seconds."""

    def __init__(self, airflow) -> None:
        self.airflow = airflow
        on_sqlite = airflow.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("sqlite")
        self._writing = threading.Lock() if on_sqlite else contextlib.nullcontext()
        self.reads = 0

    def call(self, method: str, path: str, body=None):
        # On SQLite one REST write at a time (docs/deployment.md); reads never wait for a turn.
        with self._writing if method != "GET" else contextlib.nullcontext():
            return self.airflow.request(method, path, body=body, timeout=ANSWER_WITHIN, attempts=1)

    def post_hours(self, days: list[date]) -> None:
        asset_id = self.airflow.asset_id(ASSET)
        for day in days:
            for key in _hours(day):
                self.call("POST", "/api/v2/assets/events", {"asset_id": asset_id, "partition_key": key})
                time.sleep(PACE)

    def read_view_until(self, stop: threading.Event) -> None:
        while not stop.wait(0.5):
            self.call("GET", f"/partitions/api/dags/{DAY_DAG}")
            self.reads += 1


def _send_while_tasks_start(client: _Client, produced: date, sent_by_thread: list[list[date]]) -> None:
    """Trigger a producer run adding *produced*'s hours, then post each thread's days, reading the view."""
    path = f"/api/v2/dags/{PRODUCER}/dagRuns"
    client.call("POST", path, {"logical_date": None, "conf": {"keys": _hours(produced)}})
    stop = threading.Event()
    with ThreadPoolExecutor(len(sent_by_thread) + 1) as pool:
        reader = pool.submit(client.read_view_until, stop)
        senders = [pool.submit(client.post_hours, days) for days in sent_by_thread]
        try:
            for sender in senders:
                sender.result()  # re-raises a sender's AirflowError: a request not answered in time
        finally:
            stop.set()
        reader.result()


def _task_starts(airflow) -> list[datetime]:
    """When each task of the two Dags started (UTC), read directly."""
    rows = airflow.query(
        "SELECT start_date FROM task_instance WHERE dag_id IN (:day, :producer) AND start_date IS NOT NULL",
        day=DAY_DAG,
        producer=PRODUCER,
    )
    starts = [datetime.fromisoformat(str(start)) for (start,) in rows]
    return [start if start.tzinfo else start.replace(tzinfo=UTC) for start in starts]


def test_no_request_waits_while_tasks_start_and_events_arrive(airflow):
    client = _Client(airflow)
    phases = [
        (_day(0), [[_day(1), _day(2)]]),  # one sender: one event at a time
        (_day(3), [[_day(4)], [_day(5)], [_day(6)]]),  # three senders at once
    ]
    for produced, sent_by_thread in phases:
        began = datetime.now(UTC)
        _send_while_tasks_start(client, produced, sent_by_thread)
        ended = datetime.now(UTC)
        # What the test is about: tasks started while the events were being sent.
        assert any(began <= start <= ended for start in _task_starts(airflow)), (began, ended)
    assert client.reads > 0

    runs = airflow.wait_for_runs(DAY_DAG, 7, timeout=180)
    assert sorted(r["partition_key"] for r in runs) == [_day(n).isoformat() for n in range(7)]
    assert len(airflow.wait_for_runs(PRODUCER, 2, timeout=60)) == 2
