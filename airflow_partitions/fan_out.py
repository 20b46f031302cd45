"""
Fan-outs over the period a mapper names: the base of our fan-out mappers, and their sizes and keys.

:class:`MappedPeriodFanOut` is Airflow's ``FanOutMapper`` expanding the period the upstream mapper
maps a key to (the base of :class:`~airflow_partitions.temporal.TemporalFanOutMapper` and
:class:`~airflow_partitions.composite.DimensionFanOutMapper`, which are stored by their own import
paths); :func:`format_member` writes a member as a downstream key, as Airflow's does;
:func:`largest_fan_out` says how many keys one period fans out to, for the checks at Dag parse.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from airflow.partition_mappers.base import PartitionMapper
from airflow.partition_mappers.temporal import FanOutMapper

from airflow_partitions.grains import most_members
from airflow_partitions.mapping import as_core


def largest_fan_out(mapper: Any, window: Any) -> tuple[int, str]:
    """
    Return the most members of *window* in one period of *mapper*, and that period, for messages.

    *mapper* a :class:`~airflow_partitions.temporal.TemporalMapper`, *window* a
    :class:`~airflow_partitions.temporal.TemporalWindow`.

    ``(31, "period '2027-12'")`` for days of a month (:func:`~airflow_partitions.grains.
    most_members`). When the members do not tile some period (hours in a ``Minutes(180)`` slot
    whose cut moved to the end of a gap at :45, Chatham in 1974) the size cannot be worked out:
    ``(1, …)``, and the scheduler reports those periods when it meets them.
    """
    try:
        largest, widest = most_members(mapper.grain, window.grain)
    except ValueError:
        return 1, "a period"
    return largest, f"period {widest.key!r}"


def format_member(mapper: PartitionMapper | None, decoded: Any) -> str:
    """Write a decoded member as a downstream key, as Airflow's ``FanOutMapper`` does."""
    if callable(formatter := getattr(mapper, "format", None)):
        return formatter(decoded)
    return decoded.isoformat() if isinstance(decoded, datetime) else str(decoded)


class MappedPeriodFanOut(FanOutMapper):
    """
    Airflow's ``FanOutMapper``, expanding the period the upstream mapper maps a key to.

    Core decodes the mapped key with ``decode_downstream``, which for a rollup undoes the
    mapper's offset (the downstream key ``2026-03-10`` of ``offset=-1`` waits for 2026-03-11);
    a fan-out of ``TemporalMapper(Day(), offset=-1)`` must expand 2026-03-09, the day the mapper
    names. Mappers with a ``decode_output`` (ours) are decoded with it; others as core does.

    ``airflow.sdk`` mappers and windows given to it (``StartOfMonthMapper()``, ``MonthWindow()``:
    definitions without ``to_downstream``) are converted to the core classes at construction
    (:func:`~airflow_partitions._common.as_core`); the stored form is the same either way.
    """

    def __init__(
        self,
        *,
        upstream_mapper: Any,
        window: Any,
        downstream_mapper: Any = None,
        max_downstream_keys: int | None = None,
    ) -> None:
        super().__init__(
            upstream_mapper=as_core(upstream_mapper, "partition_mapper"),
            window=as_core(window, "window"),
            downstream_mapper=None
            if downstream_mapper is None
            else as_core(downstream_mapper, "partition_mapper"),
            max_downstream_keys=max_downstream_keys,
        )

    def to_downstream(self, key: str) -> Iterable[str]:
        """Return the keys of the window's members in the period the upstream mapper names."""
        mapper = self.upstream_mapper
        decode = getattr(mapper, "decode_output", None)
        formatted = mapper.to_downstream(key)
        if decode is None or not isinstance(formatted, str):
            return super().to_downstream(key)  # core's, with its TypeError for a fanning mapper
        return [format_member(self.downstream_mapper, m) for m in self.window.to_upstream(decode(formatted))]
