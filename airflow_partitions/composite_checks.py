"""
What a composite mapper and its dimension window are checked for at Dag parse, and on which keys.

Used by :class:`~airflow_partitions.composite.DimensionRollupMapper` and
:class:`~airflow_partitions.composite.DimensionFanOutMapper`: :func:`check_dimensions` refuses a
window that cannot work with the mapper's dimensions, :func:`sample_keys` makes the downstream keys
their route check is made on (:data:`~airflow_partitions.temporal_checks.SAMPLE_INSTANTS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from math import prod
from typing import Any

from airflow.partition_mappers.window import Window

from airflow_partitions.business import BusinessDayWindow
from airflow_partitions.deadlines import CompletionDeadline
from airflow_partitions.fan_out import largest_fan_out
from airflow_partitions.grains.grain import Period
from airflow_partitions.grains.keys import MAX_KEY_LENGTH, shown
from airflow_partitions.mapping import check_fan_out
from airflow_partitions.members import MemberList, VariableMembers, members_of
from airflow_partitions.temporal import SlidingWindow, TemporalMapper, TemporalWindow
from airflow_partitions.temporal_checks import SAMPLE_INSTANTS


def timed(mapper: Any) -> list[str]:
    """Return the output dimensions of *mapper* that decode to a time (a period or a datetime)."""
    return [
        name
        for name in mapper.output
        if issubclass(getattr(mapper.mappers.get(name), "expected_decoded_type", str), Period | datetime)
    ]


def check_dimensions(owner: str, mapper: Any, window: Any, *, rollup: bool) -> None:
    """
    Refuse, at Dag parse, a composite mapper and a dimension window that cannot work together.

    *mapper* a :class:`~airflow_partitions.composite.CompositeKeyMapper` and *window* a
    :class:`~airflow_partitions.composite.DimensionWindow` (the caller checked the types); *rollup*
    for a :class:`~airflow_partitions.composite.DimensionRollupMapper`, else a fan-out.

    :raises ValueError: naming *owner* and the dimension: a window naming no dimension of the
        mapper, listed values for a dimension the downstream key keeps as it is (or a time
        dimension), a value holding the mapper's delimiter, a ``SlidingWindow``, a window over a
        dropped dimension or whose decoded type differs from its dimension mapper's, members with
        dates without exactly one time dimension, or (a rollup) a dropped dimension not listed.
    """
    listings = window.listings()
    for name, members in window.windows.items():
        if name not in mapper.dimensions:
            if not rollup and name in listings:
                continue  # a fan-out adds a dimension: 2026-03-10 -> eu|2026-03-10, us|2026-03-10
            raise ValueError(
                f"{owner}: DimensionWindow names {name!r}, not a dimension of {list(mapper.dimensions)}"
                f"{'' if rollup else ' (a fan-out may add one only with a list of its values)'}."
            )
        kept = name in mapper.output
        dimension = mapper.mappers.get(name)
        unmapped = dimension is None and not isinstance(members, VariableMembers)
        if name in listings and kept and (not rollup or name in timed(mapper) or unmapped):
            raise ValueError(
                f"{owner}: dimension {name!r} is kept in the downstream key"
                f"{' as it is' if dimension is None else ''}, so its value is fixed there; list values only "
                "for a dimension the downstream key drops, or maps through a lookup in a "
                f"DimensionRollupMapper ({{{name!r}: LookupMapper({{...}})}}), or use a window."
            )
        if isinstance(members, MemberList):
            for value in members.values:
                if mapper.escape is None and mapper.delimiter in value:
                    raise ValueError(
                        f"{owner}: {name} value {shown(value)} must be at most {MAX_KEY_LENGTH} characters "
                        f"without the delimiter {mapper.delimiter!r} (or set the mapper's escape)."
                    )
        if isinstance(members, SlidingWindow):
            raise ValueError(
                f"{owner}: a SlidingWindow (for {name!r}) works only in TemporalRollupMapper, which routes "
                "each key to every window it feeds."
            )
        if isinstance(members, Window):
            if not kept:
                raise ValueError(
                    f"{owner}: dimension {name!r} is dropped from the downstream key, so a window over it "
                    "has nothing to start from; list its values instead, e.g. region=['eu', 'us']."
                )
            decoded = getattr(dimension, "expected_decoded_type", str)
            business_days = isinstance(members, BusinessDayWindow) and isinstance(dimension, TemporalMapper)
            if not business_days and not issubclass(type(members).expected_decoded_type, decoded):
                raise ValueError(
                    f"{owner}: the window for {name!r} ({type(members).__name__}) does not fit the "
                    f"dimension's mapper, which decodes to {decoded.__name__}; pair a TemporalWindow with a "
                    "TemporalMapper dimension."
                )
    dated = [n for n, members in listings.items() if isinstance(members, MemberList) and members.dated]
    if dated and len(timed(mapper)) != 1:
        raise ValueError(
            f"{owner}: members of {dated[0]!r} have dates, so the downstream key needs exactly one time "
            f"dimension whose periods they are awaited by; it has {timed(mapper) or 'none'}."
        )
    if rollup and (
        dropped := [n for n in mapper.dimensions if n not in mapper.output and n not in window.windows]
    ):
        raise ValueError(
            f"{owner}: dimensions {dropped} are dropped from the downstream key, so the rollup cannot know "
            f"which values to wait for; list them: DimensionWindow({dropped[0]}=[...])."
        )


def check_time_dimension(owner: str, mapper: Any, policy: Any, expected_within: timedelta | None) -> None:
    """
    Refuse, at Dag parse, a composite rollup that must know when a period ends and has no time.

    A :class:`~airflow_partitions.deadlines.CompletionDeadline` *policy* and an *expected_within*
    each need a dimension of *mapper* mapped by a :class:`~airflow_partitions.temporal.TemporalMapper`
    (``{"day": TemporalMapper(Day())}``: the day ``2026-03-10`` ends at midnight, in its zone).

    :raises ValueError: naming *owner*, what needs the time, and the mapper's dimensions.
    """
    needs_time = [
        what
        for what, given in (
            ("a CompletionDeadline", isinstance(policy, CompletionDeadline)),
            ("expected_within", expected_within is not None),
        )
        if given
    ]
    if needs_time and not any(isinstance(m, TemporalMapper) for m in mapper.mappers.values()):
        raise ValueError(
            f"{owner}: {' and '.join(needs_time)} needs a time dimension (a TemporalMapper) to know when "
            f"the period ends; dimensions {list(mapper.dimensions)} have none."
        )


def sample_keys(mapper: Any, windowing: Any) -> tuple[str, ...]:
    """
    Return downstream keys to check a dimension rollup on, at Dag parse.

    *windowing* the rollup's :class:`~airflow_partitions.dimension_windowing.DimensionWindowing`.
    Time dimensions take the periods at :data:`~airflow_partitions.temporal_checks.SAMPLE_INSTANTS`, a
    listed dimension kept through a lookup the group of a listed member (a member the lookup
    refuses is refused here), the others ``x``; none if an output dimension's mapper decodes to
    neither (core's temporal mappers: their keys cannot be made up here), and none with members
    from a Variable, which is read only at run time (never at Dag parse).
    """
    if windowing.variables:
        return ()
    fixed = {
        n: next(iter(members_of(windowing.listings[n]).grouped(m))) for n, m in windowing.lookups.items()
    }
    keys = []
    for instant in SAMPLE_INSTANTS:
        segments = []
        for name in mapper.output:
            dimension = mapper.mappers.get(name)
            if name in fixed:
                segments.append(fixed[name])
            elif isinstance(dimension, TemporalMapper):
                try:
                    segments.append(dimension.grain.key(dimension.grain.period_at_or_after(instant)))
                except ValueError:
                    break  # no period there (a business day on a Sunday)
            elif getattr(dimension, "expected_decoded_type", str) is str:
                segments.append("x")
            else:
                return ()
        else:
            keys.append(mapper.join(segments, "a sample key"))
    return tuple(keys)


def dimension_fan_out(windows: Mapping[str, Any], mapper: Any) -> tuple[int, str]:
    """
    Return the most members one downstream key of *mapper* can have under *windows*, and what bounds it.

    *windows* a :class:`~airflow_partitions.composite.DimensionWindow`'s, by dimension. Temporal
    windows under a :class:`~airflow_partitions.temporal.TemporalMapper` dimension count their
    widest period (``(31, "a key with day period '2027-12'")`` for the days of a month); lists
    their length; other windows and Variables count 1 (unknown).
    """
    sizes, reasons = [], []
    for name, window in windows.items():
        dimension = mapper.mappers.get(name)
        if isinstance(window, MemberList):
            sizes.append(len(window.members))
        elif isinstance(window, TemporalWindow) and isinstance(dimension, TemporalMapper):
            count, widest = largest_fan_out(dimension, window)
            sizes.append(count)
            reasons.append(f"{name} {widest}")
    return prod(sizes), f"a key with {', '.join(reasons)}" if reasons else "every key"


def fan_out_size(owner: str, mapper: Any, window: Any, max_downstream_keys: int | None) -> int:
    """
    Return the most keys a dimension fan-out turns one key into, refusing one over the cap, at Dag parse.

    *mapper* its upstream :class:`~airflow_partitions.composite.CompositeKeyMapper`, *window* its
    :class:`~airflow_partitions.composite.DimensionWindow` (``DimensionWindow.largest_fan_out``):
    ``DimensionWindow(day=TemporalWindow(Hour()))`` gives 24 under ``TemporalMapper(Day())``, 25
    under ``TemporalMapper(Day(timezone="America/New_York"))`` (a day that falls back).

    :raises ValueError: naming *owner*, for an upstream mapper that maps one key to several (no
        fan-out inside a fan-out), or a largest fan-out above *max_downstream_keys*.
    """
    if mapper.largest_fan_out > 1:
        raise ValueError(
            f"{owner}: the upstream mapper maps one key to up to {mapper.largest_fan_out} keys; "
            "Airflow's FanOutMapper needs exactly one (no fan-out inside a fan-out)."
        )
    largest, widest = window.largest_fan_out(mapper)
    check_fan_out(owner, largest, widest, max_downstream_keys)
    return largest
