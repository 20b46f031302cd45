"""
The stored form: the versioned, sorted JSON every class of this package writes into serialized Dags.

Pure (no Airflow import). Grains and calendars serialize here; the Airflow classes nest their
forms. :func:`dump` and :func:`load` version the form, :class:`ValueEquality` compares objects by
it, :func:`rebuilt_once` rebuilds each stored form once per process. Nothing here changes a
stored form: ``tests/golden/`` pins them byte for byte.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

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


class ValueEquality:
    """
    Equality and hashing by serialized form, so a deserialized copy equals the original.

    For our mappers and windows: ``x == type(x).deserialize(x.serialize())``. The form is worked
    out once per object (they are not changed after construction).
    """

    if TYPE_CHECKING:

        def serialize(self) -> dict[str, Any]: ...

    def _identity(self) -> str:
        identity: str | None = self.__dict__.get("_identity_json")
        if identity is None:
            identity = self.__dict__["_identity_json"] = json.dumps(self.serialize(), sort_keys=True)
        return identity

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ValueEquality)
            and type(other) is type(self)
            and other._identity() == self._identity()
        )

    def __hash__(self) -> int:
        return hash(self._identity())
