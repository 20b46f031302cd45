"""
Helpers shared by every class family: versioned serialization and parse-time validation.

Private: nothing here is part of the public API or of the stored Dag format beyond the
``format_version`` field that :func:`dump` writes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: Version of the JSON form our classes write into serialized Dags. A reader accepts every
#: version up to this one, so a Dag serialized by an older release keeps deserializing after
#: an upgrade; a newer form than the installed release knows is refused with a clear error.
FORMAT_VERSION = 1


def dump(**fields: Any) -> dict[str, Any]:
    """
    Return the serialized form of a class: *fields* without the ``None`` ones, keys sorted.

    Sorting and dropping ``None`` make the output identical in every process: the scheduler
    fingerprints it, and a fingerprint that changed between ticks would delete pending rollup
    progress.
    """
    data = {key: value for key, value in fields.items() if value is not None}
    data["format_version"] = FORMAT_VERSION
    return dict(sorted(data.items()))


def load(data: dict[str, Any], owner: type) -> dict[str, Any]:
    """
    Check the ``format_version`` of *data* (written by :func:`dump`) and return *data*.

    :raises ValueError: if *data* was written by a newer release of airflow-partitions than
        the one installed (``format_version`` above :data:`FORMAT_VERSION`), or its
        ``format_version`` is not a positive integer.
    """
    found = data.get("format_version", 1)
    if type(found) is not int or not 1 <= found <= FORMAT_VERSION:
        raise ValueError(
            f"{owner.__name__}: the stored Dag was serialized with format_version {found!r}, "
            f"but this airflow-partitions reads up to {FORMAT_VERSION}. Upgrade airflow-partitions "
            "in every Airflow process (scheduler, dag-processor, api-server)."
        )
    return data


#: Stored forms whose rebuilt object is kept: a few per partitioned Dag of a deployment.
REBUILT_CACHE_SIZE = 512


def rebuilt_once(deserialize: Callable[[type, dict[str, Any]], T]) -> Callable[[type, dict[str, Any]], T]:
    """
    Memoize a ``deserialize(cls, data)`` by its class and stored form (the JSON, keys sorted).

    Airflow rebuilds a Dag's mappers from their stored form on every access (for every asset
    event, and every scheduler loop with pending runs), and our rollups' constructors check
    their configuration at sample instants: about 1 ms against core's 0.05. Equal stored forms
    build equal objects, which are never changed after construction, so one is rebuilt once and
    shared (at most :data:`REBUILT_CACHE_SIZE` kept). Put it under ``@classmethod``.
    """

    @functools.lru_cache(maxsize=REBUILT_CACHE_SIZE)
    def rebuild(cls: type, text: str) -> T:
        return deserialize(cls, json.loads(text))

    @functools.wraps(deserialize)
    def cached(cls: type, data: dict[str, Any]) -> T:
        return rebuild(cls, json.dumps(data, sort_keys=True))

    return cached


def require_text(value: Any, *, owner: str, name: str, example: str) -> str:
    """
    Return *value* if it is a non-empty ``str``.

    :raises ValueError: naming *owner*, the argument *name*, the value given and an *example*
        of a valid one, if *value* is not a string or is empty.
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"{owner}: {name} must be a non-empty string such as {example!r}; got {value!r}.")
    return value


def fan_out_cap(max_downstream_keys: int | None) -> tuple[int, str]:
    """
    Return the most downstream keys one upstream key may map to, and where that cap comes from.

    ``(1000, "[scheduler] partition_mapper_max_downstream_keys (1000)")`` when
    *max_downstream_keys* is ``None`` (Airflow's setting, as the deployment configures it), else
    ``(max_downstream_keys, "max_downstream_keys=…")``.
    """
    if max_downstream_keys is not None:
        return max_downstream_keys, f"max_downstream_keys={max_downstream_keys}"
    from airflow.configuration import conf

    cap = conf.getint("scheduler", "partition_mapper_max_downstream_keys", fallback=1000)
    return cap, f"[scheduler] partition_mapper_max_downstream_keys ({cap})"


def check_fan_out(owner: str, largest: int, example: str, max_downstream_keys: int | None) -> None:
    """
    Refuse, at Dag parse, a mapper one of whose upstream keys can map to more keys than allowed.

    The cap is *max_downstream_keys* if set, else Airflow's ``[scheduler]
    partition_mapper_max_downstream_keys`` (default 1000). The scheduler skips an event whose
    keys exceed it (a ``partition fan-out exceeded`` audit-log row); checking the largest
    possible fan-out here reports it when the Dag is written, not the first 31-day month.

    :param largest: The most downstream keys one upstream key can map to.
    :param example: An upstream key (or period) that maps to *largest* keys, for the message.
    :raises ValueError: naming *owner*, *example*, *largest* and the cap, if *largest* exceeds it.
    """
    cap, source = fan_out_cap(max_downstream_keys)
    if largest > cap:
        raise ValueError(
            f"{owner}: {example} maps to {largest} downstream keys, more than {source}; the scheduler "
            f"would queue no Dag run for it. Pass max_downstream_keys={largest} or more, or a coarser "
            "window."
        )


def as_core(value: Any, kind: str) -> Any:
    """
    Return an ``airflow.sdk`` mapper or window as the core class the scheduler will see.

    *kind* is ``"partition_mapper"`` or ``"window"``. Dag files may build Airflow's mappers and
    windows from ``airflow.sdk``: definitions without ``to_downstream`` or ``to_upstream``. A
    round trip through Airflow's own serialization turns them into the working core classes,
    as the scheduler's deserialization does. A core mapper or window (ours included) is returned
    as it is.

    :raises ValueError: (Airflow's) if *value* is not a mapper or window Airflow can serialize.
    """
    from airflow.partition_mappers.base import PartitionMapper
    from airflow.partition_mappers.window import Window
    from airflow.serialization import decoders, encoders

    if isinstance(value, PartitionMapper | Window):
        return value
    return getattr(decoders, f"decode_{kind}")(getattr(encoders, f"encode_{kind}")(value))


#: Airflow's partition key column width (``ID_LEN``): longer keys are refused by the database.
MAX_KEY_LENGTH = 250


def is_key(value: Any) -> bool:
    """Return whether *value* can be a partition key: a non-blank ``str`` of at most 250 characters."""
    return isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_KEY_LENGTH


#: How many characters of a key an error message quotes (Airflow's keys hold at most 250).
SHOWN_KEY_LENGTH = 300


def downstream_keys(mapper: Any, key: str) -> list[str]:
    """
    Return ``mapper.to_downstream(key)`` as a list: one key, or a fan-out's or sliding window's several.

    :raises ValueError: as the mapper's ``to_downstream`` (naming the key).
    """
    routed = mapper.to_downstream(key)
    return [routed] if isinstance(routed, str) else list(routed)


def shown(key: Any) -> str:
    """Return ``repr(key)`` for an error message, a string cut to its first 300 characters."""
    return repr(key[:SHOWN_KEY_LENGTH] if isinstance(key, str) else key)


class ValueEquality:
    """
    Equality and hashing by serialized form, so a deserialized copy equals the original.

    For our mappers and windows: ``x == type(x).deserialize(x.serialize())``. The form is worked
    out once per object (they are not changed after construction).
    """

    def _identity(self) -> str:
        identity = self.__dict__.get("_identity_json")
        if identity is None:
            identity = self.__dict__["_identity_json"] = json.dumps(self.serialize(), sort_keys=True)
        return identity

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._identity() == self._identity()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._identity())


def time_part(key: str) -> str:
    """Return the part of *key* a time range selects on: after the last ``|`` (``jfk|2026-04-15``)."""
    return key.rsplit("|", 1)[-1]


def in_time_range(key: str, start: str | None, end: str | None) -> bool:
    """
    Return whether the time part of *key* lies in [*start*, *end*].

    Bounds compare as text on the key's own spelling, *end* on its length: ``end="2026-04"`` keeps
    every key of April 2026 (``2026-04-30T23`` too).
    """
    part = time_part(key)
    return (start is None or part >= start) and (end is None or part[: len(end)] <= end)
