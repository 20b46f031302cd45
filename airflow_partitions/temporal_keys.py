"""
How a temporal mapper reads a key: the time its spelling names, in which zone, and the period holding it.

What :class:`~airflow_partitions.temporal.TemporalMapper` (stored by its own import path) maps keys
with: a :class:`KeyReading` reads any ISO 8601 spelling, period key or *input_format* key as a time
(``2026-07-30T09:15:00+02:00``; ``2026-03-10``, a date, names its own local day) and finds the
period of the grain that holds it, shifted by the mapper's offset; a naive time on the hour that
fall-back repeats names two periods (:meth:`KeyReading.occurrences`). :func:`decoded_period` and
:func:`shifted_key` are the memos of a downstream key's period and of a key shifted by an offset.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from airflow_partitions.grains import Grain, Period
from airflow_partitions.grains.keys import FIRST_YEAR, LAST_YEAR, read_dated, refusal, shown
from airflow_partitions.grains.zones import has_folds, occurrences

#: Entries kept by each memo. The scheduler re-evaluates up to 500 pending rollups a tick, and
#: deserializes our objects afresh every tick, so the memos are module-level and keyed by the
#: frozen configuration (grains are hashable values): a new, equal mapper hits the same entries.
_CACHE_SIZE = 8192


@lru_cache(maxsize=_CACHE_SIZE)
def decoded_period(grain: Grain, offset: int, downstream_key: str) -> Period:
    """
    Return the period of *grain* the canonical key *downstream_key* names, less *offset* periods (memoized).

    ``decoded_period(Day(), -1, "2026-03-09")`` is the day 2026-03-10.

    :raises ValueError: naming the key, if it is not a canonical key of *grain*.
    """
    period = grain.parse(downstream_key)
    return grain.shift(period, -offset) if offset else period


@lru_cache(maxsize=_CACHE_SIZE)
def shifted_key(mapper: Any, key: str) -> str:
    """
    Return the key *mapper* maps *key* to, shifted by its offset (``2026-03-10T09:00`` → ``2026-03-09``).

    *mapper* a :class:`~airflow_partitions.temporal.TemporalMapper` with an offset (``-1`` above).
    Memoized per mapper (by its stored form) and key: shifting builds and walks periods.

    :raises ValueError: naming the key, as the mapper's ``to_downstream``.
    """
    return mapper.downstream_period(key).key


class KeyReading:
    """
    How keys are read under *grain*: naive times in *input_tz*, or by *input_format*; periods shifted.

    *offset* whole periods, as :class:`~airflow_partitions.temporal.TemporalMapper`'s ``offset``.

    ``KeyReading(Day(), ZoneInfo("UTC"), None, -1).mapped("2026-03-10T09:00", True)`` is the period
    ``2026-03-09``; with *as_period* false, no offset, the key ``2026-03-10`` (no period built).

    :raises ValueError: from each method, naming the key, as
        :class:`~airflow_partitions.temporal.TemporalMapper` says.
    """

    def __init__(self, grain: Grain, input_tz: ZoneInfo, input_format: str | None, offset: int) -> None:
        self.grain, self.input_tz, self.input_format, self.offset = grain, input_tz, input_format, offset
        # How far a bare date's midnight lies before the day it names (days from 06:00): fixed
        # by the configuration, so worked out once here rather than for every key. A grain whose
        # periods a date names but which start at no fixed time (trading sessions) finds them itself.
        self.date_shift = getattr(grain, "_name_offset", None)
        self.dated = getattr(grain, "dated_instant", None)

    def mapped(self, key: str, as_period: bool) -> Any:
        """Return the key (*as_period*: the period, shifted by the offset) of the period *key* names."""
        when, tz, _ = self.read(key)
        return self.at(key, when, tz, as_period)

    def occurrences(self, key: str, as_period: bool) -> list[Any]:
        """Return :meth:`mapped`'s answer, and one more for a naive time on an hour fall-back repeats."""
        when, tz, dated = self.read(key)
        first = self.at(key, when, tz, as_period)
        if dated or when.tzinfo is not None or not has_folds(tz):  # every key but a naive local time
            return [first]
        return list(
            dict.fromkeys([first, *(self.at(key, i, tz, as_period) for i in occurrences(when, tz)[1:])])
        )

    def read(self, key: str) -> tuple[datetime, ZoneInfo, bool]:
        """Return the time *key* names (naive: local in the returned zone) and whether it names a date."""
        when, dated = read_dated(key, self.input_format, self.grain)
        if not FIRST_YEAR <= when.year <= LAST_YEAR:
            raise ValueError(
                f"partition key {shown(key)} names a time in the year {when.year}; keys are mapped from "
                f"the years {FIRST_YEAR:04d} to {LAST_YEAR}, where every period, its members and neighbours "
                "exist."
            )
        # A date, week or month names a span of the grain's local calendar, not an instant of
        # input_timezone: 2026-03-10 is New York's 2026-03-10 for a New York grain.
        if dated:
            if self.dated is not None:  # a date names its session (the exchange's own date)
                try:
                    return self.dated(when), self.grain.tz, True
                except ValueError as err:  # a date without a session (OutsideCalendar) or out of range
                    raise refusal(err, f"partition key {shown(key)}: {err}") from None
            # A bare date names its own day, also when days start at 06:00.
            return (when + self.date_shift if self.date_shift else when), self.grain.tz, True
        return when, self.input_tz, False

    def at(self, key: str, when: datetime, tz: ZoneInfo, as_period: bool) -> Any:
        """Return the key (or period, shifted by the offset) of the period holding *when* (naive: *tz*)."""
        try:
            if not as_period:
                return self.grain.key_at(when, tz)  # the hot path (no offset): no Period built
            period = self.grain.floor(when if when.tzinfo else when.replace(tzinfo=tz))
            return self.grain.shift(period, self.offset) if self.offset else period
        except ValueError as err:
            # A grain with gaps (business days) has no period for some instants: name the key,
            # and keep telling a day the calendar leaves out (OutsideCalendar) from a mistake.
            raise refusal(err, f"partition key {shown(key)}: {err}") from None
        except OverflowError:
            raise ValueError(f"partition key {shown(key)}: its period lies past year 1 or 9999.") from None
