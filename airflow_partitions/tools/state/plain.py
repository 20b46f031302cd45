"""
Answers as plain JSON and back: what the view's API, ``status --json`` and the store hold.

:func:`jsonable` turns a value (a dataclass, tuples, datetimes) into plain JSON types, datetimes
as ISO 8601 strings (``2026-03-10T04:00:00+00:00``); :func:`rebuilt_as` turns such JSON back into
the type a field declares; :func:`packed` and :func:`unpacked` keep the answers read from a Dag's
rows in the store, types and all (tuples, sets, counters, tuple keys). Pure: no database, no
Airflow.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any


def rebuilt(cls: type, data: Any) -> Any:
    """
    Return the dataclass *cls* rebuilt from its JSON (``to_dict()``'s plain types).

    Nested dataclasses, tuples, ``X | None`` and ISO 8601 datetimes are rebuilt by the field's
    type; keys that are no field (computed ones, ``ok``, ``downstream``) are left out.
    """
    return _rebuilder(cls)(data)


#: The types whose JSON is the value itself (a rebuild of thousands of keys skips them).
PLAIN = (str, int, float, bool)


def rebuilt_as(kind: Any, value: Any) -> Any:
    """
    Return *value* (plain JSON) as the type *kind*.

    :raises ValueError: for a datetime that is not ISO 8601 (``2026-03-01T00:00:00+00:00``).
    """
    return None if value is None else _rebuilder(kind)(value)


def _same(value: Any) -> Any:
    return value


def _time(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 time such as 2026-03-01T00:00:00+00:00.") from None


@functools.lru_cache(maxsize=128)  # one entry per type an answer holds: a few dozen at most
def _rebuilder(kind: Any) -> Callable[[Any], Any]:
    """
    Return a function rebuilding plain JSON (not ``None``) as *kind*, its types resolved once.

    Resolving a type's parts (``typing.get_origin``, a dataclass's hints) was most of rebuilding
    thousands of stored answers; each kind's function is built once per process.
    """
    if kind in PLAIN or kind is Any:
        return _same
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (types.UnionType, typing.Union):
        inner = _rebuilder(next(a for a in args if a is not type(None)))
        return lambda value: None if value is None else inner(value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        cls: Callable[..., Any] = kind
        hints = typing.get_type_hints(kind)
        fields = {f.name: _rebuilder(hints[f.name]) for f in dataclasses.fields(kind)}
        return lambda data: cls(
            **{name: fields[name](value) for name, value in data.items() if name in fields}
        )
    if kind is datetime:
        return _time
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            if args[0] in PLAIN:
                return tuple
            each = _rebuilder(args[0])
            return lambda value: tuple(None if v is None else each(v) for v in value)
        parts = [_rebuilder(a) for a in args]
        return lambda value: tuple(
            None if v is None else part(v) for part, v in zip(parts, value, strict=True)
        )
    if origin is dict:
        each = _rebuilder(args[1])
        return lambda value: {k: None if v is None else each(v) for k, v in value.items()}
    return _same


def jsonable(value: Any) -> Any:
    """
    Return *value* (a dataclass, or as `asdict` gives it) in plain JSON types, datetimes as ISO 8601.

    A dataclass field by field, as `asdict` would give it, without its deep copy (half of a
    ``status --json`` of 1,000 partitions).
    """
    if value is None or isinstance(value, PLAIN):
        return value
    kind: Any = type(value)
    names = _field_names(kind)
    if names is not None:
        return {name: jsonable(getattr(value, name)) for name in names}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value.isoformat() if isinstance(value, datetime) else value


@functools.lru_cache(maxsize=128)  # one entry per type an answer holds
def _field_names(kind: Any) -> tuple[str, ...] | None:
    """Return the field names of the dataclass *kind*, ``None`` if it is none."""
    return tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None


def packed(value: Any) -> Any:
    """
    Return *value* as plain JSON that :func:`unpacked` gives back equal, types and all.

    For the answers read from a Dag's rows (:data:`~airflow_partitions.tools.state.kept.cache.KEPT`):
    tuples, sets, counters, dicts with tuple keys and datetimes are tagged (``{"t": [...]}``,
    ``{"s": ...}``, ``{"c": ...}``, ``{"m": [[key, value], ...]}``,
    ``{"dt": "2026-03-10T04:00:00+00:00"}``); lists, strings, numbers, booleans and ``None`` are
    themselves, a dict of string keys ``{"d": {...}}``.

    :raises TypeError: for a value of another type (it would not come back equal).
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return {"dt": value.isoformat()}
    if isinstance(value, Counter):
        return {"c": [[packed(k), n] for k, n in value.items()]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {"d": {k: packed(v) for k, v in value.items()}}
        return {"m": [[packed(k), packed(v)] for k, v in value.items()]}
    if isinstance(value, set | frozenset):
        return {"s": sorted((packed(v) for v in value), key=repr)}
    if isinstance(value, list):
        return [packed(v) for v in value]
    if isinstance(value, tuple):  # a Row too
        return {"t": [packed(v) for v in value]}
    raise TypeError(f"cannot keep a {type(value).__name__} across processes: {value!r}")


def unpacked(data: Any) -> Any:
    """Return the value :func:`packed` gave *data* for."""
    if isinstance(data, list):
        return [unpacked(v) if isinstance(v, list | dict) else v for v in data]
    if not isinstance(data, dict):
        return data
    (tag, inner), *_ = data.items()
    if tag == "dt":
        return datetime.fromisoformat(inner)
    if tag == "c":
        return Counter({unpacked(k): n for k, n in inner})
    if tag == "d":
        return {k: unpacked(v) for k, v in inner.items()}
    if tag == "m":
        return {
            unpacked(k) if isinstance(k, list | dict) else k: unpacked(v) if isinstance(v, list | dict) else v
            for k, v in inner
        }
    if tag == "s":
        return {unpacked(v) for v in inner}
    return tuple(unpacked(v) for v in inner)
