r"""
How a composite key is laid out and spelled: its dimensions, their mappers, its segments cut and joined.

What :class:`~airflow_partitions.composite.CompositeKeyMapper` (stored by its own import path)
reads and writes keys with: :func:`dimension_names` checks a layout (``["region", "day"]``),
:func:`dimension_mappers` the mappers of its dimensions and :func:`checked_escape` its escape;
:func:`split_key` cuts ``us|east|2026-03-10`` into its segments by dimension name and
:func:`join_key` writes segments back. With the escape ``\``, ``a\|b|c`` is the two segments
``a|b`` and ``c``, and ``\\`` a literal backslash; written segments are escaped the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from airflow.partition_mappers.base import PartitionMapper
from airflow.sdk.definitions.partition_mappers.base import PartitionMapper as SdkPartitionMapper

from airflow_partitions.grains.keys import MAX_KEY_LENGTH, shown
from airflow_partitions.mapping import as_core


def dimension_names(value: Any, *, owner: str, what: str) -> tuple[str, ...]:
    """
    Return *value* as a tuple of distinct identifiers (dimension names, ``("region", "day")``).

    :raises ValueError: naming *owner* and *what*, for a value that is not a non-empty list of
        distinct identifiers.
    """
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValueError(
            f"{owner}: {what} must be a non-empty list of names such as ['region', 'day']; got {value!r}."
        )
    for name in value:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{owner}: {what} must be identifiers such as 'region'; got {name!r}.")
    if len(set(value)) != len(value):
        raise ValueError(f"{owner}: {what} name a dimension twice: {list(value)!r}.")
    return tuple(value)


def dimension_mappers(owner: str, mappers: Any, dimensions: Sequence[str]) -> dict[str, PartitionMapper]:
    """
    Return *mappers* (dimension name → mapper, or ``None``) sorted by name, each as Airflow's core mapper.

    ``{"time": TemporalMapper(Day())}`` for the dimensions ``("region", "time")``; an ``airflow.sdk``
    mapper (``StartOfDayMapper()``) becomes core's.

    :raises ValueError: naming *owner*, for a mapper of a name not in *dimensions*, or one that is
        not a partition mapper instance.
    """
    mappers = dict(mappers or {})
    if unknown := sorted(set(mappers) - set(dimensions)):
        raise ValueError(f"{owner}: mappers name {unknown}, not dimensions {list(dimensions)}.")
    for name, mapper in mappers.items():
        if not isinstance(mapper, PartitionMapper | SdkPartitionMapper):
            raise ValueError(
                f"{owner}: the mapper for dimension {name!r} must be a partition mapper instance such as "
                f"TemporalMapper(Day()); got {mapper!r}."
            )
    return {name: as_core(mapper, "partition_mapper") for name, mapper in sorted(mappers.items())}


def checked_escape(owner: str, escape: Any, delimiter: str) -> str | None:
    """
    Return *escape* (``None``: no escape) if it is one character not in *delimiter*.

    :raises ValueError: naming *owner*, for anything else (``"||"``, or ``"|"`` with the delimiter ``|``).
    """
    if escape is not None and (not isinstance(escape, str) or len(escape) != 1 or escape in delimiter):
        raise ValueError(
            f"{owner}: escape must be one character not in the delimiter {delimiter!r}, such as '\\\\'; "
            f"got {escape!r}."
        )
    return escape


def _cut(key: str, delimiter: str, escape: str | None) -> list[str]:
    """Return *key* cut at each unescaped delimiter, escapes undone (any number of segments)."""
    if escape is None or escape not in key:
        return key.split(delimiter)
    segments, current, i = [], [], 0
    while i < len(key):
        if key[i] == escape:
            if key.startswith(delimiter, i + 1):
                current.append(delimiter)
                i += 1 + len(delimiter)
                continue
            if not key.startswith(escape, i + 1):
                raise ValueError(
                    f"CompositeKeyMapper: partition key {shown(key)} has {escape!r} at position {i} "
                    f"before neither {delimiter!r} nor {escape!r}."
                )
            current.append(escape)
            i += 2
        elif key.startswith(delimiter, i):
            segments.append("".join(current))
            current = []
            i += len(delimiter)
        else:
            current.append(key[i])
            i += 1
    segments.append("".join(current))
    return segments


def split_key(key: Any, names: Sequence[str], delimiter: str, escape: str | None) -> dict[str, str]:
    """
    Return the segments of *key* by dimension name (*names*, in order): ``{"region": "us", "day": …}``.

    :raises ValueError: as :meth:`~airflow_partitions.composite.CompositeKeyMapper.split` says, and
        for a key that is not a string.
    """
    if not isinstance(key, str):
        raise ValueError(f"CompositeKeyMapper: partition key {shown(key)} is not a string.")
    segments = _cut(key, delimiter, escape)
    blank = not all(segment.strip() for segment in segments)
    if len(segments) != len(names) or blank:
        raise ValueError(
            f"CompositeKeyMapper: partition key {shown(key)} must have {len(names)} non-blank "
            f"segments {list(names)} separated by {delimiter!r}; got {len(segments)}"
            f"{' (one blank)' if blank and len(segments) == len(names) else ''}."
        )
    for name, segment in zip(names, segments, strict=True):
        if segment != segment.strip():  # 'eu ' would be a region of its own, awaited by no one
            raise ValueError(
                f"CompositeKeyMapper: partition key {shown(key)} has whitespace around its {name!r} "
                f"segment {segment!r}; expected {segment.strip()!r} (a segment is read as written)."
            )
    return dict(zip(names, segments, strict=True))


def join_key(segments: Iterable[str], source: Any, delimiter: str, escape: str | None) -> str:
    """
    Return *segments* joined by *delimiter*, each escaped if *escape* is set (``us|2026-03-10``).

    :raises ValueError: as :meth:`~airflow_partitions.composite.CompositeKeyMapper.join` says.
    """
    segments, parts = list(segments), []
    for segment in segments:
        if escape is not None:
            segment = segment.replace(escape, escape * 2).replace(delimiter, escape + delimiter)
        elif delimiter in segment:
            raise ValueError(
                f"CompositeKeyMapper: partition key {shown(source)} maps a dimension to {segment!r}, "
                f"which contains the delimiter {delimiter!r}; set escape='\\\\' to escape it."
            )
        parts.append(segment)
    key = delimiter.join(parts)
    if len(delimiter) > 1 and _cut(key, delimiter, escape) != segments:
        raise ValueError(
            f"CompositeKeyMapper: partition key {shown(source)} maps to segments {segments!r}, "
            f"one of which begins or ends like the delimiter {delimiter!r}: {shown(key)} would be "
            "read back as other segments."
        )
    if len(key) > MAX_KEY_LENGTH:
        raise ValueError(
            f"CompositeKeyMapper: partition key {shown(source)} maps to {len(key)} characters; "
            f"Airflow keys hold at most {MAX_KEY_LENGTH}."
        )
    return key
