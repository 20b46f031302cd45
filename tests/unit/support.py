"""Helpers shared by the unit tests: fresh interpreters and one configured instance per class."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, *, hashseed: str | None = None) -> str:
    """
    Run *code* in a fresh interpreter (this one's executable, cwd at the repository root).

    Returns its standard output; fails the test with the child's stderr if it exits non-zero.
    """
    env = dict(os.environ)
    if hashseed is not None:
        env["PYTHONHASHSEED"] = hashseed
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"child interpreter failed:\n{result.stderr}"
    return result.stdout


def configured_instances() -> dict[str, Any]:
    """Return one instance of each public class, configured away from its defaults where it can be."""
    from airflow.sdk import StartOfWeekMapper

    from airflow_partitions import (
        BusinessDayWindow,
        CompletionDeadline,
        CompositeKeyMapper,
        Day,
        DimensionFanOutMapper,
        DimensionRollupMapper,
        DimensionWindow,
        ExpectedWithinMapper,
        Hour,
        LookupMapper,
        PrefixStripMapper,
        ScheduledRuntimePartitionTimetable,
        SlidingWindow,
        TemporalMapper,
        TemporalRollupMapper,
        TemporalWindow,
    )

    new_york = "America/New_York"
    regional_hours = CompositeKeyMapper(
        ["region", "zone", "time"],
        {
            "region": LookupMapper({"store-9": "us", "store-1": "eu", "store-2": "eu"}, pass_through=True),
            "time": TemporalMapper(Day(timezone=new_york)),
        },
        output=["time", "region"],
        delimiter="::",
        escape="~",
        max_downstream_keys=3,
    )
    return {
        "LookupMapper": LookupMapper(
            {"us": ["store-9", "store-3"], "eu": "store-1", "apac": ("store-7", "store-5")},
            default="unassigned",
            max_downstream_keys=2,
        ),
        "CompositeKeyMapper": regional_hours,
        "DimensionWindow": DimensionWindow(
            zone=["west", "east"], time=TemporalWindow(Hour(timezone=new_york))
        ),
        "DimensionRollupMapper": DimensionRollupMapper(
            upstream_mapper=regional_hours,
            window=DimensionWindow(zone=["west", "east"], time=TemporalWindow(Hour(timezone=new_york))),
            wait_policy=CompletionDeadline(timedelta(hours=2), min_count=40, min_fraction=0.9),
            max_downstream_keys=5,
        ),
        "DimensionFanOutMapper": DimensionFanOutMapper(
            upstream_mapper=CompositeKeyMapper(
                ["region", "day"], {"day": TemporalMapper(Day(timezone=new_york))}
            ),
            window=DimensionWindow(day=TemporalWindow(Hour(timezone=new_york))),
            max_downstream_keys=25,
        ),
        "SlidingWindow": SlidingWindow(Day(timezone=new_york), 7, align="centred"),
        "TemporalRollupMapper:sliding": TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day(timezone=new_york), offset=-1),
            window=SlidingWindow(Day(timezone=new_york), 5, align="leading"),
            wait_policy=CompletionDeadline(timedelta(minutes=30), min_count=4),
            max_downstream_keys=6,
        ),
        "PrefixStripMapper": PrefixStripMapper("eu", separator="/", max_downstream_keys=40),
        "ExpectedWithinMapper": ExpectedWithinMapper(
            StartOfWeekMapper(timezone=new_york, max_downstream_keys=3), expected_within=timedelta(hours=30)
        ),
        "BusinessDayWindow": BusinessDayWindow(),
        "ScheduledRuntimePartitionTimetable": ScheduledRuntimePartitionTimetable(
            "0 6 * * 1-5",
            timezone="America/New_York",
            interval=timedelta(hours=6),
            run_immediately=timedelta(minutes=30),
        ),
    }


def configured_temporal_instances() -> dict[str, Any]:
    """Return grains, temporal mappers and windows configured away from their defaults, by name."""
    from airflow.partition_mappers.wait_policy import MinimumCount

    from airflow_partitions.grains import Cron, Day, Hour, IsoWeek, Minutes, Month, Quarter, Week, Year
    from airflow_partitions.temporal import (
        TemporalFanOutMapper,
        TemporalMapper,
        TemporalRollupMapper,
        TemporalWindow,
    )

    grains = {
        "Minutes": Minutes(15, timezone="Asia/Kathmandu"),
        "Hour": Hour(timezone="America/New_York"),
        "Day": Day(start_hour=6, timezone="Europe/Berlin"),
        "Week": Week(start="sunday", timezone="Australia/Sydney"),
        "IsoWeek": IsoWeek(timezone="Asia/Kolkata"),
        "Month": Month(timezone="America/Santiago"),
        "Quarter": Quarter(timezone="Pacific/Chatham"),
        "Year": Year(timezone="Australia/Lord_Howe"),
        "Cron": Cron("0 9-17 * * 1-5", timezone="America/New_York"),
    }
    return {
        **{f"grain:{name}": grain for name, grain in grains.items()},
        "TemporalMapper": TemporalMapper(
            Day(start_hour=6, timezone="Europe/Berlin"),
            input_timezone="Asia/Kolkata",
            input_format="%Y%m%dT%H%M%z",
            offset=-1,
            max_downstream_keys=40,
        ),
        "TemporalWindow": TemporalWindow(Minutes(360, timezone="America/New_York")),
        "TemporalRollupMapper": TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC", offset=-1),
            window=TemporalWindow(Hour()),
            wait_policy=MinimumCount(20),
            max_downstream_keys=7,
        ),
        "TemporalFanOutMapper": TemporalFanOutMapper(
            upstream_mapper=TemporalMapper(Week(start="sunday", timezone="Australia/Sydney")),
            window=TemporalWindow(Day(timezone="Australia/Sydney")),
            max_downstream_keys=9,
        ),
    }


@functools.lru_cache(maxsize=4096)
def _offset_changes_in_year(zone: str, year: int) -> tuple[tuple[datetime, timedelta, timedelta], ...]:
    tz = ZoneInfo(zone)
    changes = []
    day = timedelta(days=1)
    start = datetime(year, 1, 1, tzinfo=UTC)
    end = datetime(year + 1, 1, 1, tzinfo=UTC)
    instant, offset = start - day, (start - day).astimezone(tz).utcoffset()
    while instant < end:
        later = instant + day
        later_offset = later.astimezone(tz).utcoffset()
        if later_offset != offset:
            lo, hi = instant, later  # offset(lo) == offset, offset(hi) == later_offset: bisect to 1 s
            while hi - lo > timedelta(seconds=1):
                mid = lo + (hi - lo) / 2
                mid = mid.replace(microsecond=0)
                if mid.astimezone(tz).utcoffset() == offset:
                    lo = mid
                else:
                    hi = mid
            if start <= hi < end:
                changes.append((hi, offset, later_offset))
        instant, offset = later, later_offset
    return tuple(changes)


def offset_changes(zone: str, lo: datetime, hi: datetime) -> list[tuple[datetime, timedelta, timedelta]]:
    """
    Return the instants in ``[lo, hi]`` at which *zone*'s UTC offset changes, per :mod:`zoneinfo`.

    Each change is ``(instant, offset before, offset after)``, the instant being the first
    second (UTC) with the new offset. Read off the IANA data by sampling the offset daily and
    bisecting; two changes less than a day apart would be missed (in the zones the unit tests
    use, changes are at least 34 days apart from 1900 to 2200). Independent of the package
    under test.
    """
    return [
        change
        for year in range(lo.astimezone(UTC).year, hi.astimezone(UTC).year + 1)
        for change in _offset_changes_in_year(zone, year)
        if lo <= change[0] <= hi
    ]


def known_bug(grain: Any, lo: datetime, hi: datetime) -> str | None:
    """
    Say why *grain* near the instants ``[lo, hi]`` is in a known package bug's reach, else ``None``.

    The property tests ``assume`` this is ``None``; each reason names the strict-xfail test that
    reproduces the bug on a minimal example. Worked out from the IANA data (:func:`offset_changes`),
    not from the package:

    - a grain with times in its keys (``Minutes``, ``Hour``, ``Cron``) near an offset with a
      seconds part (local mean time before 1906 in India, 1910 in Chile): slot starts can fall
      on a second, keys are written to the minute.
    - a grain cut at local wall times (``Day(start_hour=…)``, ``Minutes(n)`` of over an hour)
      near a spring-forward gap that ends off the hour (Chatham's 02:45 → 03:45 on
      1974-11-03): a cut in the gap moves to its end, where no hour starts.
    """
    from airflow_partitions.grains import Cron, Day, Minutes

    tz = ZoneInfo(grain.timezone)
    changes = offset_changes(grain.timezone, lo, hi)
    offsets = {lo.astimezone(tz).utcoffset(), *(o for _, *pair in changes for o in pair)}
    if isinstance(grain, Minutes | Cron) and any(o.seconds % 60 for o in offsets):
        return "offset with a seconds part, keys written to the minute (xfail: *seconds_offset*)"
    wall_cut = isinstance(grain, Day) or (isinstance(grain, Minutes) and grain.n > 60)
    if wall_cut and any(after > before and (when + after).minute for when, before, after in changes):
        return "a wall cut in a gap that ends off the hour (xfail: *wall_cut_slot_starting_at_the_end*)"
    return None


def assert_period_contract(grain: Any, instant: datetime, steps: int) -> None:
    """The period containing *instant* contains it, its key names it both ways, shifts add up."""
    from airflow_partitions import TemporalMapper

    period = grain.floor(instant)
    assert instant in period
    assert grain.parse(period.key) == period
    assert grain.key_at(instant) == period.key
    assert TemporalMapper(grain).to_downstream(instant.isoformat()) == period.key
    assert grain.shift(period, 1).start == period.end
    assert grain.shift(grain.shift(period, steps), -steps) == period


def assert_every_instant_maps_back(grain: Any, instant: datetime, millionths: int) -> None:
    """The first, a chosen and the last instant of *instant*'s period all map to its key."""
    from airflow_partitions import TemporalMapper

    period = grain.floor(instant)
    start, end = period.utc  # real-time arithmetic: local wall arithmetic can land in a DST gap
    for inside in (start, start + (end - start) * millionths // 1_000_000, end - timedelta(microseconds=1)):
        assert TemporalMapper(grain).to_downstream(inside.isoformat()) == period.key


def assert_serialized_alike_in_fresh_processes(values: list[Any], imports: str) -> None:
    """
    Check each value's ``serialize()`` is byte-identical here and in two fresh interpreters.

    The children rebuild the values from their ``repr`` after running *imports*, with different
    ``PYTHONHASHSEED`` values: what the scheduler fingerprints must not depend on the process.
    """
    rebuilt = ", ".join(map(repr, values))
    code = f"import json\n{imports}\nprint(json.dumps([json.dumps(v.serialize()) for v in [{rebuilt}]]))"
    in_process = [json.dumps(value.serialize()) for value in values]
    for seed in ("0", "31337"):
        assert json.loads(run_python(code, hashseed=seed)) == in_process


def at(text: str) -> datetime:
    """An aware instant from ISO 8601 *text*; naive text means UTC."""
    instant = datetime.fromisoformat(text)
    return instant if instant.tzinfo else instant.replace(tzinfo=UTC)


def utc(text: str) -> datetime:
    """``"2026-03-08T05:00Z"`` as an aware UTC datetime."""
    return datetime.fromisoformat(text).astimezone(UTC)


def names_key(key: object) -> str:
    """
    A regex matching an error message that names *key* (its ``repr``; long keys may be cut at 300).

    For ``pytest.raises(ValueError, match=names_key(key))``.
    """
    return re.escape(repr(key)[:200])


def assert_maps_alike(original: Any, rebuilt: Any, key: str) -> None:
    """*rebuilt* maps *key* exactly as *original* does, or both refuse it with ``ValueError``."""
    try:
        expected = original.to_downstream(key)
    except ValueError:
        with pytest.raises(ValueError):
            rebuilt.to_downstream(key)
        return
    assert rebuilt.to_downstream(key) == expected
