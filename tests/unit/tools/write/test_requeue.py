"""airflow_partitions.tools.write.requeue without a database: its Airflow dependency, its answer's shape."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime

import pytest

from airflow_partitions.tools.errors import UsageError
from airflow_partitions.tools.write.requeue import OrphanedEvent, Orphans, orphaned_events

APRIL = (datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 4, 30, 23, 59, tzinfo=UTC))


AT = datetime(2026, 4, 2, 9, tzinfo=UTC)
#: Two hours of New York's 2026-04-01, one of 04-02, and a day key the rollup refuses.
EVENTS = (
    OrphanedEvent(1, "hours", "2026-04-01T04", AT, ("2026-04-01",)),
    OrphanedEvent(2, "hours", "2026-04-01T05", AT, ("2026-04-01",)),
    OrphanedEvent(3, "hours", "2026-04-02T04", AT, ("2026-04-02",)),
    OrphanedEvent(4, "hours", "2026-04-03", AT, refused="ValueError: '2026-04-03' would never count"),
)


def orphans(events: tuple[OrphanedEvent, ...] = EVENTS, **changes) -> Orphans:
    """The orphans of EVENTS in April, 2026-04-02 having a failed run."""
    return Orphans("ny_day", *APRIL, events, runs={"2026-04-02": ("failed",)}, **changes)


def test_requeue_calls_airflows_queue_partitioned_dags_with_these_arguments():
    # A private Airflow 3.3 method (airflow/assets/manager.py): requeue passes exactly these.
    from airflow.assets.manager import AssetManager

    parameters = inspect.signature(AssetManager._queue_partitioned_dags).parameters
    assert set(parameters) == {
        "asset_id",
        "partition_dags",
        "event",
        "partition_key",
        "partition_date",
        "task_instance",
        "session",
    }
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())


def test_a_range_ending_before_it_starts_is_refused_before_reading():
    with pytest.raises(UsageError, match="--start 2026-04-30T23:59:00\\+00:00 is after --end"):
        orphaned_events("ny_day", APRIL[1], APRIL[0], session=object())


def test_refused_events_are_listed_but_not_queued_and_keys_group_their_events():
    found = orphans()
    assert [e.event_id for e in found.queueable] == [1, 2, 3]
    assert {key: [e.event_id for e in events] for key, events in found.by_downstream_key().items()} == {
        "2026-04-01": [1, 2],
        "2026-04-02": [3],
    }


def test_to_dict_is_plain_json_with_counts_per_downstream_key():
    answer = orphans().to_dict()
    assert answer["downstream"] == {"2026-04-01": 2, "2026-04-02": 1}
    assert answer["start"] == "2026-04-01T00:00:00+00:00" and answer["requeued"] is False
    assert answer["events"][3] == {
        "event_id": 4,
        "asset": "hours",
        "partition_key": "2026-04-03",
        "timestamp": "2026-04-02T09:00:00+00:00",
        "downstream_keys": [],
        "refused": "ValueError: '2026-04-03' would never count",
        "partition_date": None,
    }
    assert answer["runs"] == {"2026-04-02": ["failed"]} and answer["stale_pending"] == 0
