"""
Reliability through the real scheduler: two schedulers, a crash, and bad keys among good ones.

Each test sends its keys in batches (a producer task's ``add_partitions``, as a replay of history
does) and one asset event per REST call (a live feed), then reads the outcome from the metadata
database: every expected run exactly once, nothing pending for a period that completed, and
every key our mappers refuse audit-logged once per consumer. The expected days and weeks are
worked out with ``zoneinfo`` and ``date.isocalendar``, not with the package.

The heavier runs are these tests at a larger scale: ``AIRFLOW_PARTITIONS_SCALE=5 pytest
tests/integration/test_reliability.py -k postgresql`` sends five times the events (25,200 UTC
hours through two schedulers, 100 days across the crash); docs/reliability.md lists measured runs.
"""

from __future__ import annotations

import itertools
import os
import random
import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.support.launcher import wait_until

NEW_YORK = ZoneInfo("America/New_York")
#: How many times the CI-sized event counts the two-scheduler and crash tests send.
SCALE = int(os.environ.get("AIRFLOW_PARTITIONS_SCALE", "1"))
_batches = itertools.count()


def _utc_hours(start: datetime, count: int) -> list[str]:
    """*count* consecutive UTC hour keys from *start*: ``2027-01-01T00``, ``2027-01-01T01``, …"""
    return [(start + timedelta(hours=i)).strftime("%Y-%m-%dT%H") for i in range(count)]


def _new_york_days(hours: list[str]) -> tuple[set[str], set[str]]:
    """The New York days all of whose hours are among the UTC *hours*, and those with only some."""
    sent = set(hours)
    hour = datetime.fromisoformat(min(hours)).replace(tzinfo=UTC) - timedelta(days=1)
    last = datetime.fromisoformat(max(hours)).replace(tzinfo=UTC) + timedelta(days=1)
    by_day: dict[str, set[str]] = {}
    while hour <= last:
        by_day.setdefault(str(hour.astimezone(NEW_YORK).date()), set()).add(hour.strftime("%Y-%m-%dT%H"))
        hour += timedelta(hours=1)
    complete = {day for day, day_hours in by_day.items() if day_hours <= sent}
    partial = {day for day, day_hours in by_day.items() if day_hours & sent} - complete
    return complete, partial


def _produce(airflow, asset: str, keys: list[str]) -> str:
    """Trigger ``it_produce_<asset>``: one task emits *keys* (one ``add_partitions``); return the run id."""
    run = airflow.trigger(f"it_produce_{asset}", partition_key=f"batch-{next(_batches)}", conf={"keys": keys})
    return run["dag_run_id"]


def _wait_for_producers(airflow, asset: str, count: int) -> None:
    airflow.wait_for_runs(f"it_produce_{asset}", count, timeout=600 * SCALE)


def _runs(airflow, dag_id: str) -> Counter[str]:
    """How many runs each partition key of *dag_id* has (any state), read from the database."""
    rows = airflow.query("SELECT partition_key FROM dag_run WHERE dag_id = :dag_id", dag_id=dag_id)
    return Counter(key for (key,) in rows)


def _pending(airflow, dag_id: str) -> set[str]:
    """The downstream keys of *dag_id*'s pending partitioned runs (rollups still waiting)."""
    rows = airflow.query(
        "SELECT partition_key FROM asset_partition_dag_run "
        "WHERE target_dag_id = :dag_id AND created_dag_run_id IS NULL",
        dag_id=dag_id,
    )
    return {key for (key,) in rows}


def _assert_exactly(
    airflow, expected: dict[str, tuple[set[str], set[str]]], timeout: float = 600 * SCALE
) -> None:
    """
    Wait until each Dag has one run per expected key and pends only for its partial periods.

    It also waits for those runs to finish, so that the tests after this one do not queue behind them.

    :param expected: ``{dag_id: (keys that must run, keys that must stay pending)}``.
    """

    def settled() -> bool:
        restarted = airflow.check_alive()
        if restarted:
            print(f"started again after a deadlock in Airflow's scheduler: {restarted}")
        return all(
            set(_runs(airflow, dag_id)) >= runs
            and _pending(airflow, dag_id) == pending
            and not airflow.count_runs(dag_id, state="queued")
            and not airflow.count_runs(dag_id, state="running")
            for dag_id, (runs, pending) in expected.items()
        )

    wait_until(settled, timeout=timeout, what=f"the runs of {sorted(expected)}", interval=2)
    for dag_id, (runs, pending) in expected.items():
        assert _runs(airflow, dag_id) == Counter(runs), dag_id  # none lost, none twice, none extra
        assert _pending(airflow, dag_id) == pending, dag_id


def test_two_schedulers_create_every_run_of_5040_events_exactly_once(airflow):
    if "postgresql" not in airflow.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]:
        pytest.skip("Airflow runs several schedulers only on PostgreSQL or MySQL (row locks)")
    days = 210 * SCALE
    hours = _utc_hours(datetime(2027, 1, 1, tzinfo=UTC), 24 * days)  # 2027-01-01 … 2027-07-29, UTC
    utc_days = {str(date(2027, 1, 1) + timedelta(days=i)) for i in range(days)}
    new_york_days, partial = _new_york_days(hours)
    if SCALE == 1:  # worked out by hand too
        assert len(new_york_days) == 209 and partial == {"2026-12-31", "2027-07-29"}

    airflow.start_process("scheduler-2", kind="scheduler")
    # Two schedulers on PostgreSQL may deadlock in Airflow's own updates of dag_run; the one
    # PostgreSQL aborts exits and is started again, as in a deployment. Runs must still be exact.
    airflow.restart_on = "deadlock detected"
    try:
        # The last 10 days first, one REST call per event: a task's events are registered in one
        # transaction holding the asset's row lock, and a REST call queued behind several
        # batches of 600 can wait minutes for it.
        rest = len(hours) - 240
        for key in hours[rest:]:
            airflow.create_asset_event("it_bulk_hours", partition_key=key)
        # 4,800 keys in 8 tasks; never past ``rest``: a key sent twice reruns its day, as it should.
        batches = [hours[i : min(i + 600, rest)] for i in range(0, rest, 600)]
        for batch in batches:
            _produce(airflow, "bulk_hours", batch)
        _wait_for_producers(airflow, "bulk_hours", len(batches))
        _assert_exactly(
            airflow,
            {
                "it_bulk_new_york_day": (new_york_days, partial),
                "it_bulk_utc_day": (utc_days, set()),
                "it_bulk_core_utc_day": (utc_days, set()),
            },
        )
    finally:
        airflow.restart_on = None
        airflow.kill("scheduler-2")


def test_a_killed_scheduler_and_dag_processor_lose_and_repeat_nothing(airflow):
    days = 20 * SCALE
    hours = _utc_hours(datetime(2027, 9, 1, tzinfo=UTC), 24 * days)  # 2027-09-01 … 2027-09-20, UTC
    utc_days = {str(date(2027, 9, 1) + timedelta(days=i)) for i in range(days)}
    new_york_days, partial = _new_york_days(hours)
    if SCALE == 1:
        assert len(new_york_days) == 19 and partial == {"2027-08-31", "2027-09-20"}

    third = len(hours) // 3
    _produce(airflow, "fault_hours", hours[:third])
    _wait_for_producers(airflow, "fault_hours", 1)
    live = hours[third : 2 * third]
    step = len(live) // 3
    for key in live[:step]:
        airflow.create_asset_event("it_fault_hours", partition_key=key)
    # A crash: no SIGTERM, no cleanup, tasks in flight die with the scheduler's process group.
    airflow.kill("scheduler")
    airflow.kill("dag-processor")
    for key in live[step : 2 * step]:  # the api-server still takes events, and queues them
        airflow.create_asset_event("it_fault_hours", partition_key=key)
    airflow.start_process("scheduler")
    airflow.start_process("dag-processor")
    for key in live[2 * step :]:
        airflow.create_asset_event("it_fault_hours", partition_key=key)
    _produce(airflow, "fault_hours", hours[2 * third :])
    _wait_for_producers(airflow, "fault_hours", 2)
    _assert_exactly(
        airflow,
        {"it_fault_new_york_day": (new_york_days, partial), "it_fault_utc_day": (utc_days, set())},
    )


# -- bad keys among good ones ---------------------------------------------------------------------

#: New York local hours of ISO week 2026-W10, which ends on 2026-03-08, when clocks spring forward
#: and 02:00 does not exist; a producer writing ``range(24)`` sends ``2026-03-08T02`` anyway,
#: which reads as 03:00 EDT (as pendulum reads it), the hour after the gap: counted, not refused.
GOOD_DAYS = [date(2026, 3, 2) + timedelta(days=i) for i in range(7)]
GOOD_LOCAL_HOURS = [f"{day}T{h:02d}" for day in GOOD_DAYS for h in range(24)]
REGIONS = ["eu", "us"]
#: Digits of other scripts, which strptime would read as a date: fullwidth and Arabic-Indic.
FULLWIDTH = {ord("0") + i: 0xFF10 + i for i in range(10)}
ARABIC_INDIC = {ord("0") + i: 0x0660 + i for i in range(10)}


def _bad_hour_keys() -> list[str]:
    """Keys no hour rollup may accept: 186 of them, each refused on arrival."""
    days = range(1, 21)
    return [
        *(f"garbage-{i:03d}" for i in range(30)),
        "NaN",
        "null",
        "-1",
        "2026",  # a year where hours are awaited
        *(f"2026/05/{d:02d}T05" for d in days),  # wrong formats
        *(f"05/{d:02d}/2026 05:00" for d in days),
        *(f"2026-05-{d:02d}T05h" for d in days),
        *(f"2026-05-{d:02d}T25" for d in days),
        *(f"{i:03d}" + "x" * 247 for i in range(20)),  # 250 characters, Airflow's longest key
        *(f"2026-05-{d:02d}T05".translate(FULLWIDTH) for d in range(1, 11)),  # non-ASCII digits
        *(f"2026-05-{d:02d}T05".translate(ARABIC_INDIC) for d in range(1, 11)),
        "0001-01-01T00",  # years 1 and 9999: outside 0003 to 9997, where every period exists
        "9999-12-31T23:00:00+00:00",
        "9999-12-31T23",
        *(f"0001-05-{d:02d}T05" for d in range(1, 11)),
        *(f"9999-05-{d:02d}T05" for d in range(1, 11)),
        *(f"2026-05-{d:02d}" for d in range(4, 11)),  # whole days where hours are awaited
        "2026-W19",
        "2026-05",
    ]


def _bad_region_keys() -> list[str]:
    """Composite keys the region rollup must refuse: blank dimensions, and bad hours: 156."""
    days = range(1, 21)
    return [
        *(f"|2026-05-{d:02d}T05" for d in days),  # blank dimensions
        *(f" |2026-05-{d:02d}T05" for d in days),
        *(f"eu||2026-05-{d:02d}T05" for d in days),
        "eu|",
        "us| ",
        "eu",
        *(f"eu|{i:03d}" + "x" * 244 for i in range(10)),  # 250 characters
        *(f"eu|{key}" for key in _bad_hour_keys()[::2] if len(key) <= 247),
    ]


REFUSED = re.compile(
    r"Could not map partition_key '(?P<key>.*)' for asset \(name='[^']*', uri='[^']*'\) "
    r"in target Dag '(?P<dag>[^']*)'\.",
    re.DOTALL,
)


def _refusals(airflow, dag_ids: set[str]) -> Counter[tuple[str, str]]:
    """The audit rows of keys refused on arrival by *dag_ids*: ``{(key, dag_id): rows}``."""
    matches = (REFUSED.match(extra) for extra in airflow.audit_log("failed to map partition_key"))
    return Counter((m["key"], m["dag"]) for m in matches if m and m["dag"] in dag_ids)


def _send_mixed(airflow, asset: str, keys: list[str]) -> int:
    """Send *keys* shuffled: the first 100 one per REST call, the rest in batches of 250; return batches."""
    keys = random.Random(13).sample(keys, len(keys))
    for key in keys[:100]:
        airflow.create_asset_event(f"it_{asset}", partition_key=key)
    batches = [keys[i : i + 250] for i in range(100, len(keys), 250)]
    for batch in batches:
        _produce(airflow, asset, batch)
    return len(batches)


def test_bad_keys_among_good_ones_are_each_refused_once_per_consumer_and_every_good_run_is_created(airflow):
    if "postgresql" not in airflow.env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]:
        pytest.skip("refusals are the mapper's and one audit write; SQLite's: test_no_silent_holds.py")
    bad_hours, bad_regions = _bad_hour_keys(), _bad_region_keys()
    assert len(set(bad_hours)) == len(bad_hours) == 186 and len(set(bad_regions)) == len(bad_regions) == 156
    good_regions = [f"{region}|{hour}" for region in REGIONS for hour in GOOD_LOCAL_HOURS]

    hour_batches = _send_mixed(airflow, "local_hours", GOOD_LOCAL_HOURS + bad_hours)
    region_batches = _send_mixed(airflow, "region_local_hours", good_regions + bad_regions)
    _wait_for_producers(airflow, "local_hours", hour_batches)
    _wait_for_producers(airflow, "region_local_hours", region_batches)

    days = {str(day) for day in GOOD_DAYS}
    weeks = {f"{day.isocalendar().year}-W{day.isocalendar().week:02d}" for day in GOOD_DAYS}
    assert weeks == {"2026-W10"}
    _assert_exactly(
        airflow,
        {
            "it_local_day": (days, set()),
            "it_local_iso_week": (weeks, set()),
            "it_region_local_day": ({f"{region}|{day}" for region in REGIONS for day in days}, set()),
        },
    )
    expected = Counter(
        [(key, dag_id) for key in bad_hours for dag_id in ("it_local_day", "it_local_iso_week")]
        + [(key, "it_region_local_day") for key in bad_regions]
    )
    assert sum(expected.values()) == 528
    assert _refusals(airflow, {"it_local_day", "it_local_iso_week", "it_region_local_day"}) == expected
