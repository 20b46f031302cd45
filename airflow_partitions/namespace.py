"""
Namespace mappers: partition keys qualified by a prefix, such as a region or an environment.

Upstream systems often qualify partition keys with a namespace, ``eu::2026-03-10`` or
``us::daily-sales``. The mappers here move keys between namespaces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.partition_mappers.base import PartitionMapper

from airflow_partitions._common import dump, load, require_text

if TYPE_CHECKING:
    from datetime import datetime


class PrefixStripMapper(PartitionMapper):
    """
    Strip a fixed namespace prefix from upstream partition keys.

    Reads ``<prefix><separator><key>`` and writes ``<key>``: with ``prefix="eu"`` and the
    default separator ``"::"``, ``"eu::daily-sales"`` maps to ``"daily-sales"`` and
    ``"eu::2026-03-10"`` to ``"2026-03-10"``. A key that does not start with
    ``<prefix><separator>`` passes through unchanged (``"daily-sales"`` stays
    ``"daily-sales"``; so does ``"us::daily-sales"``): keys already in the target namespace
    need no mapping. To keep other namespaces out of a consumer, give each namespace its own
    asset.

    The consumer's ``partition_date`` is carried over from the producer's run, since the key
    keeps its meaning once the prefix is gone.

    :param prefix: The namespace to strip, e.g. ``"eu"``. Non-empty.
    :param separator: What stands between the prefix and the key. Non-empty; default ``"::"``.
    :param max_downstream_keys: Passed through to Airflow's fan-out cap, as core mappers do.
    :raises ValueError: at Dag parse, if *prefix* or *separator* is empty or not a string, or
        *prefix* is only white space.
        At mapping time, if nothing but white space follows ``<prefix><separator>``
        (``"eu::"``: Airflow refuses blank partition keys); the scheduler logs it as
        ``failed to map partition_key`` and other keys keep flowing.
    """

    def __init__(self, prefix: str, *, separator: str = "::", max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.prefix = require_text(prefix, owner="PrefixStripMapper", name="prefix", example="eu")
        self.separator = require_text(separator, owner="PrefixStripMapper", name="separator", example="::")
        if not prefix.strip():
            raise ValueError(
                f"PrefixStripMapper: prefix must not be only white space, such as 'eu'; got {prefix!r}."
            )
        self._qualifier = prefix + separator

    def to_downstream(self, key: str) -> str:
        """Return *key* without its ``<prefix><separator>``, or *key* itself if it has none."""
        if not isinstance(key, str):
            raise ValueError(
                f"PrefixStripMapper(prefix={self.prefix!r}): partition key {key!r} is not a string."
            )
        if not key.startswith(self._qualifier):
            return key
        stripped = key[len(self._qualifier) :]
        if not stripped.strip():
            raise ValueError(
                f"PrefixStripMapper(prefix={self.prefix!r}): partition key {key!r} has nothing (or only "
                f"white space) after {self._qualifier!r}; expected '{self._qualifier}<key>' with a "
                f"non-blank key, e.g. '{self._qualifier}daily-sales'."
            )
        return stripped

    def carry_partition_date(self, source_partition_date: datetime | None) -> datetime | None:
        """Return the producer's ``partition_date`` unchanged: stripping a prefix keeps the key's time."""
        return source_partition_date

    def serialize(self) -> dict[str, Any]:
        """Return ``{"format_version", "prefix", "separator"[, "max_downstream_keys"]}``."""
        return dump(
            prefix=self.prefix, separator=self.separator, max_downstream_keys=self.max_downstream_keys
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PrefixStripMapper:
        """Rebuild the mapper from :meth:`serialize`'s output."""
        data = load(data, cls)
        return cls(
            data["prefix"],
            separator=data["separator"],
            max_downstream_keys=data.get("max_downstream_keys"),
        )
