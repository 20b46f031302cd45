"""
Dags for tests/integration/test_monitoring.py: notifications of runs that ran incomplete, and lateness.

Both consume the UTC hours of ``it_mon_hours`` into UTC days. ``it_notify_day`` fires a day at its
end (``CompletionDeadline`` with no grace: a day long past fires once its keys have settled for
15 s; a whole day fires as it completes) and mails
the runs that ran incomplete through Airflow's SMTP notifier, on the connection ``smtp_default``
the test points at its own SMTP server. ``it_late_day`` waits for all 24 hours and expects each
day within two hours of its end. ``it_mon_produce_hours`` sends the keys of its run's conf in one
task (a batch). ``it_late_nyse_day`` rolls New York hours up into the NYSE's trading days.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.providers.smtp.notifications.smtp import SmtpNotifier
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, PartitionedAtRuntime, task

from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    CompletionDeadline,
    Day,
    Hour,
    IncompleteRunNotifier,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    missing_upstream_keys,
)

HOURS = Asset("it_mon_hours")
NEW_YORK = "America/New_York"

incomplete = IncompleteRunNotifier(
    SmtpNotifier(
        to="data-team@example.com",
        from_email="airflow@example.com",
        subject="{{ incomplete_run.partition_key }} of {{ dag.dag_id }} ran without "
        "{{ incomplete_run.missing_total }} keys",
        html_content="{{ incomplete_run }}",
    )
)


with DAG("it_mon_produce_hours", schedule=PartitionedAtRuntime(), catchup=False):

    @task(outlets=[HOURS])
    def add_keys(outlet_events=None, dag_run=None) -> int:
        """Emit one asset event per key of the run's conf (``{"keys": [...]}``): a batch."""
        keys = dag_run.conf["keys"]
        outlet_events[HOURS].add_partitions(keys)
        return len(keys)

    add_keys()


@task
def load_day(**context) -> list[str]:
    """Return the hours the run's day never received (as the task sees them)."""
    return missing_upstream_keys(context, HOURS)


with DAG(
    "it_notify_day",
    schedule=PartitionedAssetTimetable(
        assets=HOURS,
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()),
            window=TemporalWindow(Hour()),
            wait_policy=CompletionDeadline(timedelta(0), settle=timedelta(seconds=15)),
        ),
    ),
    on_success_callback=incomplete,
    on_failure_callback=incomplete,
    catchup=False,
):
    load_day()

with DAG(
    "it_late_day",
    schedule=PartitionedAssetTimetable(
        assets=HOURS,
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()),
            window=TemporalWindow(Hour()),
            expected_within=timedelta(hours=2),
        ),
    ),
    catchup=False,
):
    load_day()

# The New York Stock Exchange's trading days of New York hours, each expected within two hours of
# its end: Good Friday (2026-04-03) is no trading day, so no partition, never late.
with DAG(
    "it_late_nyse_day",
    schedule=PartitionedAssetTimetable(
        assets=Asset("it_mon_nyse_hours"),
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(BusinessDay(BusinessCalendar(market="NYSE"), timezone=NEW_YORK)),
            window=TemporalWindow(Hour(timezone=NEW_YORK)),
            expected_within=timedelta(hours=2),
        ),
    ),
    catchup=False,
):
    EmptyOperator(task_id="done")
