"""
Helpers the Airflow classes share: any mapper as the core class the scheduler runs, its keys, its limits.

Layer 2 (imports Airflow, lazily where a Dag file need not pay for it). Used by our mappers and
windows at Dag parse, by the task helpers and by the tools.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any, TypeVar

#: A set of keys (``to_upstream``'s answer).
Keys = TypeVar("Keys", bound=Set[str])


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


def downstream_keys(mapper: Any, key: str) -> list[str]:
    """
    Return ``mapper.to_downstream(key)`` as a list: one key, or a fan-out's or sliding window's several.

    :raises ValueError: as the mapper's ``to_downstream`` (naming the key).
    """
    routed = mapper.to_downstream(key)
    return [routed] if isinstance(routed, str) else list(routed)


def known_keys(expected: Keys) -> Keys:
    """
    Return the keys a rollup's ``to_upstream`` gave, or raise why its members cannot be known now.

    What tasks and tools call instead of reading an :class:`~airflow_partitions.rollup.ExpectedKeys`
    with a ``problem`` (a broken Variable) as an empty window.

    :raises ValueError: the problem (``"Airflow Variable 'retail_stores' is not JSON …"``).
    """
    problem = getattr(expected, "problem", "")
    if problem:
        raise ValueError(problem)
    return expected
