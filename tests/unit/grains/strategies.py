"""Strategies and helpers the grain tests share: instants, grains, spans (hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

from airflow_partitions.grains import (
    Cron,
    Day,
    Grain,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    Period,
    Quarter,
    Week,
    Year,
)
from tests.unit.support import offset_changes, utc

HOUR = timedelta(hours=1)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: The instants property tests draw from: far from the ends of datetime, across many DST rules.
LOW, HIGH = datetime(1900, 1, 1), datetime(2200, 12, 31)


def hours_from(start: datetime, count: int) -> list[datetime]:
    return [start + i * HOUR for i in range(count)]


def span(period: Period) -> tuple[datetime, datetime]:
    """
    The period's bounds as UTC instants, converted here rather than read from ``Period.utc``.

    Tests compare and subtract bounds in UTC only: Python compares and subtracts two datetimes
    with the same ``tzinfo`` by their wall-clock readings, ignoring ``fold`` (01:30 EDT equals
    01:30 EST), and never finds a time on a repeated hour equal to one in another zone (PEP 495).
    """
    return period.start.astimezone(UTC), period.end.astimezone(UTC)


# Where Cron's ticks differ from Airflow's run times (see the Cron docstring): a time of a cron
# that does not tick every hour skipped by spring-forward ticks at the end of the gap (Airflow reads
# it with the offset before the change); a repeated one at its first occurrence (Airflow: second).
# (zone, local day, expression): (Airflow's run, our tick), from the IANA rules: New York skips
# 02:00-03:00 at 07:00Z on 2026-03-08 and repeats 01:00-02:00 (EDT, 05:00Z, then EST, 06:00Z) on
# 2026-11-01; Berlin skips 02:00-03:00 at 01:00Z on 2026-03-29 and repeats 02:00-03:00 (CEST,
# 00:00Z, then CET, 01:00Z) on 2026-10-25; Sydney repeats 02:00-03:00 (AEDT +11, 15:00Z, then AEST
# +10, 16:00Z) on 2026-04-05 and skips 02:00-03:00 at 16:00Z on 2026-10-03 (UTC date).
MOVED_BY_AIRFLOW = {
    ("America/New_York", "2026-03-08", "30 2 * * *"): ("2026-03-08T07:30Z", "2026-03-08T07:00Z"),
    ("America/New_York", "2026-03-08", "15 */2 * * *"): ("2026-03-08T07:15Z", "2026-03-08T07:00Z"),
    ("America/New_York", "2026-11-01", "30 1 * * *"): ("2026-11-01T06:30Z", "2026-11-01T05:30Z"),
    ("Europe/Berlin", "2026-03-29", "30 2 * * *"): ("2026-03-29T01:30Z", "2026-03-29T01:00Z"),
    ("Europe/Berlin", "2026-03-29", "15 */2 * * *"): ("2026-03-29T01:15Z", "2026-03-29T01:00Z"),
    ("Europe/Berlin", "2026-10-25", "30 2 * * *"): ("2026-10-25T01:30Z", "2026-10-25T00:30Z"),
    ("Europe/Berlin", "2026-10-25", "15 */2 * * *"): ("2026-10-25T01:15Z", "2026-10-25T00:15Z"),
    ("Australia/Sydney", "2026-04-05", "30 2 * * *"): ("2026-04-04T16:30Z", "2026-04-04T15:30Z"),
    ("Australia/Sydney", "2026-04-05", "15 */2 * * *"): ("2026-04-04T16:15Z", "2026-04-04T15:15Z"),
    ("Australia/Sydney", "2026-10-04", "30 2 * * *"): ("2026-10-03T16:30Z", "2026-10-03T16:00Z"),
    ("Australia/Sydney", "2026-10-04", "15 */2 * * *"): ("2026-10-03T16:15Z", "2026-10-03T16:00Z"),
}


ZONES = [
    "UTC", "America/New_York", "Europe/Berlin", "Australia/Sydney", "Asia/Kolkata",
    "America/Santiago", "Pacific/Chatham", "Asia/Kathmandu", "Australia/Lord_Howe",
]  # fmt: skip


CLOCK_MINUTES = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)


WALL_MINUTES = (72, 80, 90, 96, 120, 144, 160, 180, 240, 288, 360, 480, 720, 1440)


DAYS = timedelta(days=2)


def tiling_grains(zone: str) -> st.SearchStrategy[Grain]:
    return st.one_of(
        st.sampled_from(CLOCK_MINUTES).map(lambda n: Minutes(n, timezone=zone)),
        st.just(Hour(timezone=zone)),
        st.sampled_from(WALL_MINUTES).map(lambda n: Minutes(n, timezone=zone)),
        st.integers(0, 23).map(lambda h: Day(start_hour=h, timezone=zone)),
        st.sampled_from(WEEKDAYS).map(lambda s: Week(start=s, timezone=zone)),
        st.sampled_from([IsoWeek, Month, Quarter, Year]).map(lambda cls: cls(timezone=zone)),
    )


@st.composite
def instants(draw, zone: str) -> datetime:
    """
    Aware instants from 1900 to 2200, half of them within 4 hours of one of *zone*'s offset
    changes; written in UTC or in *zone* (the same instant either way).
    """
    instant = None
    if draw(st.booleans()):
        year = draw(st.integers(1900, 2199))
        changes = offset_changes(zone, datetime(year, 1, 1, tzinfo=UTC), datetime(year, 12, 31, tzinfo=UTC))
        if changes:
            at, _, _ = draw(st.sampled_from(changes))
            instant = at + draw(st.timedeltas(-4 * HOUR, 4 * HOUR))
    if instant is None:
        instant = draw(st.datetimes(LOW, HIGH, timezones=st.just(UTC)))
    return instant.astimezone(draw(st.sampled_from([UTC, ZoneInfo(zone)])))


@st.composite
def grain_and_instant(draw, grains=tiling_grains):
    zone = draw(st.sampled_from(ZONES))
    return draw(grains(zone)), draw(instants(zone))


def window(periods, margin=DAYS) -> tuple[datetime, datetime]:
    return min(span(p)[0] for p in periods) - margin, max(span(p)[1] for p in periods) + margin


# New York's 2026 changes (US rules): 2026-03-08 02:00 EST (07:00Z), 2026-11-01 02:00 EDT (06:00Z).
NEW_YORK_2026_CHANGES = (utc("2026-03-08T07:00Z"), utc("2026-11-01T06:00Z"))


CRON_EXPRESSIONS = ("*/20 * * * *", "@hourly", "0 9-17 * * 1-5", "30 2 * * *", "45 23 * * 0", "@monthly")


def cron_grains(zone: str) -> st.SearchStrategy[Grain]:
    return st.sampled_from(CRON_EXPRESSIONS).map(lambda e: Cron(e, timezone=zone))
