"""
Time zones, their offsets and DST: wall-clock times to real instants, gaps and folds.

Pure (no Airflow import). Rules: the IANA time zone database, through :mod:`zoneinfo`. A local
wall-clock time skipped by spring-forward resolves to the first real instant after the gap, one
repeated by fall-back to its first occurrence (:func:`resolve`).
"""

from __future__ import annotations

import re
import warnings
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: Legacy IANA names of fixed offsets, which people write meaning a region's local time (``EST``
#: for New York): a grain in one warns. ``Etc/GMT+5`` is UTC-05:00 (POSIX signs), also fixed.
FIXED_ZONE = re.compile(r"EST|MST|HST|Etc/GMT[+-](?!0$)\d{1,2}")
_REGION = {"EST": "America/New_York", "MST": "America/Denver", "HST": "Pacific/Honolulu"}


def time_zone(name: str, *, owner: str) -> ZoneInfo:
    """
    Return the IANA time zone *name* (``"America/New_York"``, ``"UTC"``).

    :raises ValueError: naming *owner* and *name* if it is not a string naming a zone in the
        IANA database as :mod:`zoneinfo` has it.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"{owner}: timezone must be an IANA time zone name such as 'UTC'; got {name!r}.")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{owner}: timezone {name!r} is not an IANA time zone name such as 'UTC' or 'America/New_York'."
        ) from None


def warn_if_fixed(name: str, owner: str) -> None:
    """
    Warn (``UserWarning``) if *name* is a fixed-offset legacy zone (``EST``, ``Etc/GMT+5``).

    People write them meaning a region's local time; they have no daylight saving time.
    """
    if FIXED_ZONE.fullmatch(name):
        region = _REGION.get(name, "America/New_York")
        warnings.warn(
            f"{owner}: timezone {name!r} is a fixed UTC offset all year, without daylight saving time, so "
            "its days and hours are not a region's local ones; if you meant a region's local time, use its "
            f"IANA name, such as {region!r}.",
            UserWarning,
            stacklevel=4,
        )


def naive(instant: datetime) -> datetime:
    """
    Return the wall-clock time of *instant* without its zone, as ``instant.replace(tzinfo=None)``.

    ``datetime.combine`` takes no keyword arguments: on Python 3.11 it is four times faster than
    ``replace``, which the mapping and period-building hot paths call for every key and period.
    """
    return datetime.combine(instant.date(), instant.time())


def occurrences(wall: datetime, tz: ZoneInfo) -> tuple[datetime, ...]:
    """
    Return the real instants the naive local wall-clock time *wall* names in *tz*, in order.

    Two on the hour that fall-back repeats (Europe/Berlin's ``2026-10-25T02:30``: 02:30 CEST, then
    02:30 CET, an hour later), else one. A time skipped by spring-forward (Berlin's
    ``2026-03-29T02:30``) names one instant, read with the offset before the change, as
    :mod:`zoneinfo` and pendulum read it: 01:30 UTC, which is 03:30 CEST, after the gap.
    """
    first, second = wall.replace(tzinfo=tz, fold=0), wall.replace(tzinfo=tz, fold=1)
    if first.utcoffset() == second.utcoffset() or naive(second.astimezone(UTC).astimezone(tz)) != wall:
        return (first,)  # no change of offset here, or a skipped time (it reads back as another)
    return first, second


def has_folds(tz: ZoneInfo) -> bool:
    """Return whether *tz* ever changes its offset (``UTC`` and ``Etc/GMT+5`` never do)."""
    return tz.utcoffset(None) is None


def resolve(wall: datetime, tz: ZoneInfo) -> datetime:
    """
    Return the first real instant at or after the local wall-clock time *wall*.

    An ambiguous *wall* (repeated by fall-back) means its first occurrence; one skipped by
    spring-forward means the end of the gap (New York's 2026-03-08T02:40 is 03:00 EDT).
    """
    if tz.utcoffset(None) is not None:  # a zone that never changes its offset (UTC): no gap, no repeat
        return datetime.combine(wall.date(), wall.time(), tz)  # (fold means nothing there)
    first = wall.replace(tzinfo=tz, fold=0)
    local = first.astimezone(UTC).astimezone(tz)
    if local.replace(tzinfo=None) == wall.replace(fold=0):
        return local
    # Skipped: fold 1 reads the wall time with the offset after the change (an instant before
    # the gap ends), fold 0 with the one before (after it). Find the change to the second.
    naive = wall.replace(fold=0)
    lo, hi = int(wall.replace(tzinfo=tz, fold=1).timestamp()), int(first.timestamp())
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid, tz).replace(tzinfo=None) >= naive:
            hi = mid
        else:
            lo = mid
    return datetime.fromtimestamp(hi, tz)


@lru_cache(maxsize=1024)
def offset_changes(zone: str, year: int) -> tuple[tuple[datetime, timedelta, timedelta], ...]:
    """
    Return the changes of *zone*'s UTC offset in UTC calendar *year*, per the IANA tz database.

    Each is ``(instant, offset before, offset after)``, the instant (UTC, whole second) the first
    with the new offset. :mod:`zoneinfo` has no public list of transitions, so the offset is
    sampled every 12 hours and each change found by bisection (two changes less than 12 hours
    apart would be missed). Memoized per zone and year.
    """
    tz = ZoneInfo(zone)
    start = int(datetime(year, 1, 1, tzinfo=UTC).timestamp())
    end = int(datetime(year + 1, 1, 1, tzinfo=UTC).timestamp()) if year < 9999 else start + 365 * 86400
    changes = []
    before = datetime.fromtimestamp(start, tz).utcoffset()
    for lo in range(start, end, 43200):
        hi = min(lo + 43200, end)
        after = datetime.fromtimestamp(hi, tz).utcoffset()
        if after != before:
            was, low = before, lo
            while hi - low > 1:
                mid = (low + hi) // 2
                if datetime.fromtimestamp(mid, tz).utcoffset() == was:
                    low = mid
                else:
                    hi = mid
            now = datetime.fromtimestamp(hi, tz).utcoffset() or timedelta()
            changes.append((datetime.fromtimestamp(hi, UTC), was or timedelta(), now))
        before = after
    return tuple(changes)


def changes_between(zone: str, lo: datetime, hi: datetime) -> list[tuple[datetime, timedelta, timedelta]]:
    """Return :func:`offset_changes` of *zone* at instants ``lo <= c <= hi``."""
    lo, hi = lo.astimezone(UTC), hi.astimezone(UTC)
    return [
        change
        for year in range(lo.year, hi.year + 1)
        for change in offset_changes(zone, year)
        if lo <= change[0] <= hi
    ]


#: The years :func:`cut_years` samples; later years repeat the last one's rules.
CUT_SAMPLE = (1850, 2200)


@lru_cache(maxsize=256)
def cut_years(zone: str, slot: timedelta) -> frozenset[int]:
    """
    Return the UTC years in which *zone*'s offset changes by no whole number of *slot*.

    Sampled weekly from 1850 to 2200 (years after 2200 count as 2199); changes from or to a local
    mean time with a seconds part (New York's -04:56:02 until 1883) are left out, since keys are
    written to the minute there anyway. A change undone within a week may be missed. Memoized:
    once per zone and slot length per process.
    """
    tz = ZoneInfo(zone)
    first, last = (int(datetime(year, 1, 1, tzinfo=UTC).timestamp()) for year in CUT_SAMPLE)
    years: set[int] = set()
    before = datetime.fromtimestamp(first, tz)
    for t in range(first + 7 * 86400, last, 7 * 86400):
        after = datetime.fromtimestamp(t, tz)
        change = (after.utcoffset() or timedelta()) - (before.utcoffset() or timedelta())
        whole = not (before.utcoffset() or timedelta()).seconds % 60 and not change.seconds % 60
        if change % slot and whole:
            years.update((before.astimezone(UTC).year, after.astimezone(UTC).year))
        before = after
    return frozenset(years)


def as_utc(instant: datetime) -> datetime:
    """Return the aware *instant* as a plain UTC ``datetime`` (pendulum's lose ``UTC`` in sums)."""
    utc = instant.astimezone(UTC)
    return datetime.combine(utc.date(), utc.time(), UTC)


def offset_text(instant: datetime) -> str:
    offset = instant.utcoffset() or timedelta()
    sign = "-" if offset < timedelta() else "+"
    seconds = int(abs(offset).total_seconds())
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    # Local mean times before standard zones had offsets in seconds (Santiago: -04:42:45).
    return text + f":{seconds % 60:02d}" if seconds % 60 else text
