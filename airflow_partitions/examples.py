"""
Example keys declared in a Dag file, for ``airflow-partitions check``: Airflow never sees them.

A producer whose tasks choose keys at runtime cannot be sampled from its timetable; its Dag file
declares a few with :func:`example_keys`, which ``check`` pushes through every consumer's mapper.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

#: ``(asset name, asset uri) -> keys`` declared by the Dag files loaded in this process.
_declared: dict[tuple[str, str], tuple[str, ...]] = {}

AssetT = TypeVar("AssetT")


def example_keys(asset: AssetT, keys: Iterable[str]) -> AssetT:
    """
    Declare keys a runtime producer writes to *asset*, for ``airflow-partitions check``; return *asset*.

    Use it where the asset is listed as an outlet:
    ``@task(outlets=[example_keys(hourly, ["2013-03-10T05", "2013-03-10T06"])])``. Airflow never sees
    the declaration (the asset is returned unchanged, so its stored form, and the Dag's, do not
    change); ``check`` pushes the keys through every consumer's mapper. Declare one key of each
    shape the task writes. A producer on ``PartitionedAtRuntime`` without a declaration is
    reported by ``check`` (``info``), since nothing can be checked for it.

    :param asset: An ``airflow.sdk`` ``Asset``.
    :param keys: Non-empty partition keys, such as ``"jfk::2013-03-11"``.
    :raises ValueError: naming *asset*, if *keys* is empty or holds a value that is not a
        non-empty string.
    """
    listed = tuple(keys)
    if not listed or not all(isinstance(k, str) and k for k in listed):
        raise ValueError(
            f"example_keys: expected non-empty partition key strings for {asset!r}; got {listed!r}."
        )
    name, uri = getattr(asset, "name", ""), getattr(asset, "uri", "")
    _declared[name, uri] = tuple(dict.fromkeys(_declared.get((name, uri), ()) + listed))
    return asset


def declared_example_keys(name: str, uri: str) -> tuple[str, ...]:
    """Return the keys declared with :func:`example_keys` for the asset *name* / *uri* (else ``()``)."""
    return _declared.get((name, uri), ())


def forget_example_keys() -> None:
    """Forget every declaration (before a Dag folder is loaded again)."""
    _declared.clear()
