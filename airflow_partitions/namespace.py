"""
Namespace mappers: partition keys qualified by a prefix, such as a region or an environment.

Upstream systems often qualify partition keys with a namespace, ``eu::2026-03-10`` or
``us::daily-sales``. The mappers here move keys between namespaces: strip one
(:class:`PrefixStripMapper`), add one (:class:`PrefixAddMapper`) or replace one with another
(:class:`PrefixReplaceMapper`). A key keeps its meaning across namespaces, so each carries the
producer's ``partition_date`` over to the consumer's run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.partition_mappers.base import PartitionMapper

from airflow_partitions.grains.keys import MAX_KEY_LENGTH, is_key, shown
from airflow_partitions.grains.stored import ValueEquality, dump, load
from airflow_partitions.mapping import require_text

if TYPE_CHECKING:
    from datetime import datetime


def _prefix(value: Any, owner: str, name: str) -> str:
    prefix = require_text(value, owner=owner, name=name, example="eu")
    if not prefix.strip():
        raise ValueError(f"{owner}: {name} must not be only white space, such as 'eu'; got {prefix!r}.")
    return prefix


class _NamespaceMapper(ValueEquality, PartitionMapper):
    """Validation, key checks, date carrying and serialization shared by the namespace mappers."""

    def __init__(self, prefix: str, *, separator: str = "::", max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        owner = type(self).__name__
        self.prefix = _prefix(prefix, owner, "prefix")
        self.separator = require_text(separator, owner=owner, name="separator", example="::")
        self._qualifier = prefix + separator

    def _fail(self, key: Any, problem: str) -> ValueError:
        return ValueError(
            f"{type(self).__name__}(prefix={self.prefix!r}): partition key {shown(key)} {problem}"
        )

    def _rest(self, key: Any) -> str | None:
        """Return what follows ``<prefix><separator>`` in *key*, or ``None`` if it has no such prefix."""
        if not is_key(key):
            raise self._fail(
                key, f"is not a partition key: expected a non-blank string of at most {MAX_KEY_LENGTH}."
            )
        if not key.startswith(self._qualifier):
            return None
        rest = key[len(self._qualifier) :]
        if not rest.strip():
            raise self._fail(
                key,
                f"has nothing (or only white space) after {self._qualifier!r}; expected "
                f"'{self._qualifier}<key>' with a non-blank key, e.g. '{self._qualifier}daily-sales'.",
            )
        return rest

    def _checked(self, key: str) -> str:
        if len(key) > MAX_KEY_LENGTH:
            raise self._fail(key, f"would become {len(key)} characters, over Airflow's {MAX_KEY_LENGTH}.")
        return key

    def carry_partition_date(self, source_partition_date: datetime | None) -> datetime | None:
        """Return the producer's ``partition_date`` unchanged: a namespace does not change a key's time."""
        return source_partition_date

    def _fields(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "separator": self.separator}

    def serialize(self) -> dict[str, Any]:
        """Return the mapper's prefixes and separator (and ``max_downstream_keys``), versioned."""
        return dump(**self._fields(), max_downstream_keys=self.max_downstream_keys)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        """Rebuild the mapper from :meth:`serialize`'s output."""
        fields = {k: v for k, v in load(data, cls).items() if k != "format_version"}
        return cls(fields.pop("prefix"), **fields)


class PrefixStripMapper(_NamespaceMapper):
    """
    Strip a fixed namespace prefix from upstream partition keys.

    Reads ``<prefix><separator><key>`` and writes ``<key>``: with ``prefix="eu"`` and the
    default separator ``"::"``, ``"eu::daily-sales"`` maps to ``"daily-sales"`` and
    ``"eu::2026-03-10"`` to ``"2026-03-10"``. A key that does not start with
    ``<prefix><separator>`` passes through unchanged (``"daily-sales"`` stays
    ``"daily-sales"``; so does ``"us::daily-sales"``): keys already in the target namespace
    need no mapping. To keep other namespaces out of a consumer, give each namespace its own
    asset.

    :param prefix: The namespace to strip, e.g. ``"eu"``. Non-empty.
    :param separator: What stands between the prefix and the key. Non-empty; default ``"::"``.
    :param max_downstream_keys: Passed through to Airflow's fan-out cap, as core mappers do.
    :raises ValueError: at Dag parse, if *prefix* or *separator* is empty or not a string, or
        *prefix* is only white space.
        At mapping time, if nothing but white space follows ``<prefix><separator>``
        (``"eu::"``: Airflow refuses blank partition keys) or the key is not a string; the
        scheduler logs it as ``failed to map partition_key`` and other keys keep flowing.
    """

    def to_downstream(self, key: str) -> str:
        """Return *key* without its ``<prefix><separator>``, or *key* itself if it has none."""
        rest = self._rest(key)
        return key if rest is None else rest


class PrefixAddMapper(_NamespaceMapper):
    """
    Qualify upstream partition keys with a namespace prefix.

    Reads ``<key>`` and writes ``<prefix><separator><key>``: with ``prefix="eu"``,
    ``"daily-sales"`` maps to ``"eu::daily-sales"`` and ``"2026-03-10"`` to ``"eu::2026-03-10"``.
    A key that already starts with ``<prefix><separator>`` passes through unchanged, so the
    mapper is idempotent (``"eu::daily-sales"`` stays as it is).

    :param prefix: The namespace to add, e.g. ``"eu"``. Non-empty.
    :param separator: What stands between the prefix and the key. Non-empty; default ``"::"``.
    :param max_downstream_keys: Passed through to Airflow's fan-out cap, as core mappers do.
    :raises ValueError: at Dag parse, as :class:`PrefixStripMapper`. At mapping time, naming the
        key, if it is not a string, is ``<prefix><separator>`` with nothing after it, or would
        become longer than Airflow's 250-character partition keys.
    """

    def to_downstream(self, key: str) -> str:
        """Return ``<prefix><separator><key>``, or *key* itself if it already has that prefix."""
        return key if self._rest(key) is not None else self._checked(self._qualifier + key)


class PrefixReplaceMapper(_NamespaceMapper):
    """
    Move upstream partition keys from one namespace to another.

    Reads ``<prefix><separator><key>`` and writes ``<new_prefix><separator><key>``: with
    ``PrefixReplaceMapper("eu", "emea")``, ``"eu::daily-sales"`` maps to
    ``"emea::daily-sales"``. A key without ``<prefix><separator>`` passes through unchanged
    (``"us::daily-sales"``, ``"emea::daily-sales"``), as with :class:`PrefixStripMapper`.

    :param prefix: The namespace to replace, e.g. ``"eu"``. Non-empty.
    :param new_prefix: The namespace to write instead, e.g. ``"emea"``. Non-empty.
    :param separator: What stands between a prefix and the key, in and out. Default ``"::"``.
    :param max_downstream_keys: Passed through to Airflow's fan-out cap, as core mappers do.
    :raises ValueError: at Dag parse, if a prefix or the separator is empty, white space or not a
        string. At mapping time, naming the key, as :class:`PrefixAddMapper`.
    """

    def __init__(
        self,
        prefix: str,
        new_prefix: str,
        *,
        separator: str = "::",
        max_downstream_keys: int | None = None,
    ) -> None:
        super().__init__(prefix, separator=separator, max_downstream_keys=max_downstream_keys)
        self.new_prefix = _prefix(new_prefix, type(self).__name__, "new_prefix")

    def to_downstream(self, key: str) -> str:
        """Return *key* with ``<prefix><separator>`` replaced by ``<new_prefix><separator>``."""
        rest = self._rest(key)
        return key if rest is None else self._checked(self.new_prefix + self.separator + rest)

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "new_prefix": self.new_prefix}
