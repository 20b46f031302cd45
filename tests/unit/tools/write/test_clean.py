"""airflow_partitions.tools.write.clean without a database: its answer in text and JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from airflow_partitions.tools.commands.clean import format_cleaned
from airflow_partitions.tools.write.clean import Cleaned

BEFORE = datetime(2026, 1, 1, tzinfo=UTC)
FOUND = Cleaned(BEFORE, 8784, 210_816, {"hourly_into_days": [8760, 210_240], "weekly": [24, 576]})


def test_a_dry_run_counts_rows_per_dag_and_says_what_it_keeps():
    assert format_cleaned(FOUND).splitlines() == [
        "would remove 8,784 pending-run rows of runs that fired, opened before 2026-01-01 00:00:00 UTC, and "
        "their 210,816 key-log rows (2 Dags)",
        "  hourly_into_days                             8,760      210,240",
        "  weekly                                          24          576",
        "dry run: pass --yes to remove them (pending runs, Dag runs and asset events are kept)",
    ]


def test_a_before_with_an_offset_is_said_in_utc_the_instant_compared_with():
    # 2026-01-01T00:00+02:00 is two hours before midnight UTC.
    found = Cleaned(datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2))), 1, 24, {"d": [1, 24]})
    assert format_cleaned(found).splitlines()[0] == (
        "would remove 1 pending-run rows of runs that fired, opened before 2025-12-31 22:00:00 UTC, and "
        "their 24 key-log rows (1 Dag)"
    )


def test_the_json_form_has_the_date_in_iso_8601_and_the_counts():
    assert FOUND.to_dict() == {
        "before": "2026-01-01T00:00:00+00:00",
        "pending_rows": 8784,
        "key_log_rows": 210_816,
        "by_dag": {"hourly_into_days": [8760, 210_240], "weekly": [24, 576]},
        "removed": False,
    }
