"""
Helpers shared by every class family: versioned serialization and parse-time validation.

Private: nothing here is part of the public API or of the stored Dag format beyond the
``format_version`` field that :func:`dump` writes.
"""

from __future__ import annotations

from typing import Any

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


def require_text(value: Any, *, owner: str, name: str, example: str) -> str:
    """
    Return *value* if it is a non-empty ``str``.

    :raises ValueError: naming *owner*, the argument *name*, the value given and an *example*
        of a valid one, if *value* is not a string or is empty.
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"{owner}: {name} must be a non-empty string such as {example!r}; got {value!r}.")
    return value
