"""
CeleryExecutor (the managed services' executor) with two schedulers on PostgreSQL, Redis as broker.

The reliability scenario of ``test_reliability.py`` on a distributed engine: UTC hours sent in
batches (producer tasks, run on Celery) and one per REST call, a scheduler and the Celery worker
killed with SIGKILL mid-stream and started again; every day of two rollups (UTC days, New York
days) must run exactly once, each run's task on Celery must succeed, and only the partial New
York days stay pending. Redis is Debian's ``redis-server`` on loopback, PostgreSQL Debian's.
``AIRFLOW_PARTITIONS_SCALE=10`` sends ten times the events (100 days; docs/reliability.md).
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from tests.integration.test_reliability import SCALE, _assert_exactly, _new_york_days, _utc_hours
from tests.support.launcher import AirflowInstance, PostgresServer, RedisServer

DAGS = Path(__file__).parent / "dags_celery"
_batches = itertools.count()


@pytest.fixture(scope="module", params=["celery"])
def airflow():  # this module's Airflow (on a failure its logs are printed, tests/integration/conftest.py)
    postgres, redis = PostgresServer(), RedisServer()
    instance = None
    try:
        database = postgres.start()
        broker = redis.start()
        instance = AirflowInstance(
            DAGS,
            sql_alchemy_conn=database,
            extra_env={
                "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
                "AIRFLOW__CELERY__BROKER_URL": broker,
                "AIRFLOW__CELERY__RESULT_BACKEND": "db+" + database,
                # A task that died with its worker is failed (then retried) after 30 s, not 300; one
                # queued on it that it never started is queued again after 60 s, not 600.
                "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "30",
                "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": "60",
            },
        )
        instance.start()
        instance.start_process("celery-worker", kind="celery-worker")
        instance.start_process("scheduler-2", kind="scheduler")
        instance.wait_for_dags(["it_celery_produce_hours", "it_celery_utc_day", "it_celery_new_york_day"])
        yield instance
    finally:
        if instance is not None:
            instance.stop()
        redis.stop()
        postgres.stop()


def _produce(airflow, keys: list[str]) -> None:
    airflow.trigger("it_celery_produce_hours", partition_key=f"batch-{next(_batches)}", conf={"keys": keys})


def test_celery_workers_and_two_schedulers_on_postgresql_lose_and_repeat_nothing_across_kills(airflow):
    airflow.restart_on = "deadlock detected"  # as test_reliability's two schedulers (Airflow's own deadlock)
    days = 10 * SCALE
    hours = _utc_hours(datetime(2028, 3, 1, tzinfo=UTC), 24 * days)  # 2028-03-01 … 2028-03-10, UTC
    utc_days = {str(date(2028, 3, 1) + timedelta(days=i)) for i in range(days)}
    new_york_days, partial = _new_york_days(hours)
    if SCALE == 1:  # worked out by hand too: New York's days are 4 or 5 hours behind UTC
        assert len(new_york_days) == 9 and partial == {"2028-02-29", "2028-03-10"}

    third = len(hours) // 3
    _produce(airflow, hours[:third])
    airflow.wait_for_runs("it_celery_produce_hours", 1, timeout=300 * SCALE)
    live = hours[third : 2 * third]
    step = len(live) // 3
    for key in live[:step]:
        airflow.create_asset_event("it_celery_hours", partition_key=key)
    # A crash of one scheduler and of the only Celery worker, with tasks in flight on it.
    airflow.kill("scheduler")
    airflow.kill("celery-worker")
    for key in live[step : 2 * step]:  # the other scheduler and the api-server go on
        airflow.create_asset_event("it_celery_hours", partition_key=key)
    airflow.start_process("celery-worker", kind="celery-worker")
    airflow.start_process("scheduler")
    for key in live[2 * step :]:
        airflow.create_asset_event("it_celery_hours", partition_key=key)
    _produce(airflow, hours[2 * third :])
    airflow.wait_for_runs("it_celery_produce_hours", 2, timeout=300 * SCALE)
    expected = {"it_celery_new_york_day": (new_york_days, partial), "it_celery_utc_day": (utc_days, set())}
    _assert_exactly(airflow, expected)
    for dag_id in expected:
        states = {run["partition_key"]: run["state"] for run in airflow.dag_runs(dag_id)}
        assert set(states.values()) == {"success"}, (dag_id, states)
    # Celery ran them: its result backend (in the metadata database) holds the results of the tasks
    # it ran (an attempt killed with its worker leaves none; its retry does).
    [(succeeded,)] = airflow.query("SELECT count(*) FROM celery_taskmeta WHERE status = 'SUCCESS'")
    assert succeeded >= len(utc_days)
