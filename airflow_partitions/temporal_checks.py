"""
What temporal mappers and windows are checked for at Dag parse, and on which periods.

Used by the classes of :mod:`airflow_partitions.temporal` (stored by their own import paths):
:func:`require_grain` refuses a grain that is not ours, :func:`sliding_start` reads a
``SlidingWindow``'s first period, :func:`largest_window` and :func:`check_sliding` bound a rollup's
sizes, and :func:`sample_keys` makes the keys its route check is made on, at the fixed
:data:`SAMPLE_INSTANTS`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from airflow_partitions.grains import Grain, Period, most_members
from airflow_partitions.grains.keys import FIRST_YEAR, LAST_YEAR
from airflow_partitions.mapping import check_fan_out

#: Fixed sample instants at which a rollup's grains are checked to nest, at Dag parse: an
#: ordinary day, both 2026 US DST changes, a year end and a leap day (deterministic: no clock).
SAMPLE_INSTANTS = tuple(
    datetime.fromisoformat(t)
    for t in (
        "2026-01-14T12:00Z",
        "2026-03-08T12:00Z",
        "2026-11-01T12:00Z",
        "2026-12-31T12:00Z",
        "2028-02-29T12:00Z",
    )
)


def require_grain(grain: Any, owner: str) -> Grain:
    """
    Return *grain* if it is one of our grains (``Day()``, ``Hour(timezone="UTC")``).

    :raises ValueError: naming *owner*, for anything else.
    """
    if not isinstance(grain, Grain):
        raise ValueError(
            f"{owner}: grain must be an airflow_partitions grain such as Day() or Hour(timezone='UTC'); "
            f"got {grain!r}."
        )
    return grain


def sliding_start(grain: Grain, start: str | None) -> Period | None:
    """
    Return the period of *grain* a ``SlidingWindow``'s *start* names (``"2026-01-01"``), ``None`` for none.

    :raises ValueError: for a *start* that is not a key of *grain*, or whose period is not within
        the years 0003 to 9996 (a window from it on must fit in the years keys are read from).
    """
    if start is None:
        return None
    try:
        period = grain.parse(start)
        if not FIRST_YEAR <= period.utc[0].year <= LAST_YEAR - 1:
            raise ValueError(
                f"keys are read from the years {FIRST_YEAR:04d} to {LAST_YEAR}, and a window from "
                f"its start on must fit in them"
            )
    except (TypeError, ValueError, OverflowError) as err:
        raise ValueError(
            f"SlidingWindow: start must be a key of {grain!r}, the first period the producer "
            f"has, such as {grain.key(grain.period_at_or_after(SAMPLE_INSTANTS[0]))!r}; "
            f"got {start!r} ({err})."
        ) from None
    return period


def largest_window(grain: Grain, member_grain: Grain, sliding_periods: int | None) -> tuple[int, str] | None:
    """
    Return the most members one period of *grain* awaits, and which, for a rollup's size check.

    ``(31, "the run for '2027-12'")`` for the days of a month
    (:func:`~airflow_partitions.grains.most_members`); ``(7, "every window")`` for a sliding window
    of 7 *sliding_periods*; ``None`` when the members do not nest (the route check names the period).
    """
    if sliding_periods is not None:
        return sliding_periods, "every window"
    try:
        largest, widest = most_members(grain, member_grain)
    except ValueError:
        return None  # members that do not nest: the route check names the period
    return largest, f"the run for {widest.key!r}"


def check_sliding(window: Any, grain: Grain, max_downstream_keys: int | None) -> None:
    """
    Refuse, at Dag parse, a ``SlidingWindow`` of another grain than its rollup mapper's, or over the cap.

    :raises ValueError: naming the grains, or the window's periods and the fan-out cap.
    """
    if window.grain != grain:
        raise ValueError(
            "TemporalRollupMapper: a SlidingWindow's grain must be the mapper's; got "
            f"{window.grain!r} under {grain!r}."
        )
    check_fan_out("TemporalRollupMapper", window.periods, "every upstream key", max_downstream_keys)


def sample_keys(grain: Grain, first: Period | None) -> tuple[str, ...]:
    """
    Return the keys of the periods of *grain* holding the :data:`SAMPLE_INSTANTS`, from *first* on.

    ``Day()``: ``("2026-01-14", "2026-03-08", "2026-11-01", "2026-12-31", "2028-02-29")``; periods
    a grain has none at are left out (a business day on a Sunday); *first*, a sliding window's
    first window (``SlidingWindow(start=…)``), replaces the samples before it.
    """
    periods = []
    for instant in SAMPLE_INSTANTS:
        try:
            # A trading session's grain gives the next session: 12:00Z is outside most of them.
            periods.append(grain.period_at_or_after(instant))
        except ValueError:
            continue  # a grain with gaps has no period there (a business day on a Sunday)
    if first is not None:
        periods = [first, *(period for period in periods if period.utc[0] > first.utc[0])]
    return tuple(grain.key(period) for period in periods)
