"""
What a dimension window holds for each dimension: a window, or the members it lists; their stored form.

The per-dimension values of :class:`~airflow_partitions.composite.DimensionWindow` (stored by its
own import path): :func:`dimension_entry` reads what a Dag file gives for a dimension
(``TemporalWindow(Hour())``, ``["eu", "us"]``, ``VariableMembers("retail_stores")``),
:func:`awaited_members` says which listed members a period awaits, :func:`fan_out_mappers` what a
fan-out writes each dimension with, :func:`stored_entry` and :func:`rebuilt_entry` write and read
one dimension of the stored form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.partition_mappers.base import PartitionMapper
from airflow.partition_mappers.window import Window
from airflow.sdk.definitions.partition_mappers.window import Window as SdkWindow

from airflow_partitions.mapping import as_core
from airflow_partitions.members import Member, MemberList, VariableMembers, listed, members_of, period_day
from airflow_partitions.temporal import TemporalFanOutMapper

#: What a :class:`~airflow_partitions.composite.DimensionWindow` may list for a dimension instead of
#: a window: its members.
Listing = MemberList | VariableMembers


def dimension_entry(name: str, value: Any) -> Window | Listing:
    """
    Return what a Dag file gives for the dimension *name*, as a dimension window keeps it.

    A window (core's, for an ``airflow.sdk`` definition), a
    :class:`~airflow_partitions.members.MemberList` (``["eu", "us"]``) or the
    :class:`~airflow_partitions.members.VariableMembers` given.

    :raises ValueError: naming the dimension, for anything else, or a list that is empty, holds a
        value twice or a blank one.
    """
    if isinstance(value, Window | VariableMembers):
        return value
    if isinstance(value, SdkWindow):  # an airflow.sdk window definition
        return as_core(value, "window")
    if isinstance(value, list | tuple):
        return listed(value, owner=f"DimensionWindow: {name}")
    raise ValueError(
        f"DimensionWindow: {name} must be a window such as TemporalWindow(Hour()), a non-empty "
        f"list of distinct values such as ['eu', 'us'] or VariableMembers('name'); got {value!r}."
    )


def awaited_members(
    listings: Mapping[str, Listing], decoded_downstream: dict[str, Any], groups: Mapping[str, Any] | None
) -> dict[str, tuple[str, ...]]:
    """
    Return, per listed dimension, the values of the members a decoded downstream key awaits.

    Those whose dates cover the local date its one period begins on
    (:func:`~airflow_partitions.members.period_day`: ``store-009`` from 2026-04-06 is awaited by
    ``vic|2026-04-06``, not ``vic|2026-04-04``); for a dimension in *groups* (dimension → its
    lookup), only those whose group is the downstream value.

    :raises ValueError: if members have dates and the key has not one period, or a Variable's
        members cannot be read.
    """
    day = period_day(decoded_downstream)
    found = {}
    for name, listing in listings.items():
        members = members_of(listing)
        candidates = None
        if groups and name in groups:
            candidates = members.grouped(groups[name]).get(decoded_downstream[name], ())
        found[name] = tuple(members.awaited(day, candidates))
    return found


def fan_out_mappers(mapper: Any, windows: Mapping[str, Window | Listing]) -> dict[str, PartitionMapper]:
    """
    Return the mappers a dimension fan-out's default downstream key writes its dimensions with.

    *mapper*'s (a :class:`~airflow_partitions.composite.CompositeKeyMapper`) for its output
    dimensions, and for each dimension *windows* has a window of, that window's default
    (``TemporalMapper(Hour())`` for ``TemporalWindow(Hour())``, as
    :class:`~airflow_partitions.temporal.TemporalFanOutMapper` writes); listed dimensions get none.

    :raises ValueError: as Airflow's ``FanOutMapper``, for a window with no default mapper.
    """
    return {
        **{n: m for n, m in mapper.mappers.items() if n in mapper.output},
        **{
            n: TemporalFanOutMapper._resolve_default_downstream_mapper(w)
            for n, w in windows.items()
            if isinstance(w, Window)
        },
    }


def stored_entry(window: Window | Listing) -> dict[str, Any]:
    """Return one dimension's stored form: ``{"values": […]}``, ``{"variable": name}``, ``{"window": …}``."""
    from airflow.serialization.encoders import encode_window

    if isinstance(window, MemberList):
        return {"values": [member.entry() for member in window.members]}
    if isinstance(window, VariableMembers):
        return {"variable": window.name}
    return {"window": encode_window(window)}


def rebuilt_entry(name: str, stored: dict[str, Any]) -> Any:
    """
    Return the dimension *name* rebuilt from :func:`stored_entry`'s output (a list as its members).

    :raises ValueError: naming the dimension, for a stored member that is not one.
    """
    from airflow.serialization.decoders import decode_window

    if "values" in stored:
        where = f"DimensionWindow: {name}"
        return [Member.from_entry(entry, where=where) for entry in stored["values"]]
    if "variable" in stored:
        return VariableMembers(stored["variable"])
    return decode_window(stored["window"])
