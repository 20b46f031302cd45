"""
The Partitions view's own requests: its list of Dags, a partition's lists, an asset's keys.

:class:`~airflow_partitions.tools.commands.base.Request` types like the commands' (with their own
:meth:`~airflow_partitions.tools.commands.base.Request.path`), built from the query by the same
dependency (:func:`~airflow_partitions.tools.ui.requests.requested`), with the same checks and the
same errors (:mod:`airflow_partitions.tools.errors`): a ``state`` is checked as ``status --state``
is, ``limit`` and ``offset`` as ``status --limit`` and ``--offset`` (0 to
:data:`~airflow_partitions.tools.commands.base.MAX_ROWS`; a ``limit`` of 0 is every one),
``start`` and ``end`` in the range language of every command. The Dag page takes ``status``'s own
:class:`~airflow_partitions.tools.commands.status.StatusRequest`. Each answers itself from a
session, as a command's request does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from airflow_partitions.tools.commands.base import Request, checked_rows, checked_states, path_segment

#: Partitions per page of the Dag page, and keys per page of a partition's list, when ``limit`` is
#: not given: a page's partitions are read in full (what each run ran with), the rest of the Dag
#: only counted; the overview shows them all, in buckets.
DEFAULT_LIMIT = 1_000


def page_limit(limit: int | None) -> int | None:
    """Return the view's page size for *limit*: :data:`DEFAULT_LIMIT` if not given; for 0, ``None`` (all)."""
    return DEFAULT_LIMIT if limit is None else limit or None


@dataclass(frozen=True)
class DagsRequest(Request):
    """
    The view's list of Dags; ``GET dags?state=failed&state=overdue``: with partitions in one of *states*.

    :raises UsageError: for a state that is not one (as ``status --state``).
    """

    IN_PATH: ClassVar[tuple[str, ...]] = ()

    states: tuple[str, ...] | None = field(default=None, metadata={"query": "state"})

    def __post_init__(self) -> None:
        checked_states(self.states)

    def path(self) -> str:
        """Return ``dags``."""
        return "dags"

    def read(self, session: Any, only: set[str] | None = None) -> list[Any]:
        """
        Return the partitioned Dags of *only*, summed (:class:`~airflow_partitions.tools.state.ConsumerDag`).

        What needs attention first (:func:`~airflow_partitions.tools.state.attention` of each Dag's
        most urgent state), then by Dag id. *only*: the Dags the caller may read (``None``: all).
        A Dag read for the first time in the background is listed (last) as ``warming``, whatever
        the states asked for (:func:`~airflow_partitions.tools.warming.summed_dags`).
        """
        from airflow_partitions.tools.warming import summed_dags

        dags = summed_dags(session, only)
        if self.states:
            dags = [d for d in dags if d.warming or any(d.states.get(s) for s in self.states)]
        return sorted(dags, key=lambda d: (d.attention, d.dag_id))


@dataclass(frozen=True)
class PartitionListRequest(Request):
    """
    One page of one list of a partition: ``GET dags/{dag_id}/partitions/{partition_key}?list=&limit=``.

    *which* (query parameter ``list``) is ``awaited``, ``missing``, ``received`` or ``never
    counting``; *limit* keys (``None``: :data:`DEFAULT_LIMIT`; 0: every one) from *offset*.

    :raises UsageError: for a list that is none of these, or a *limit* or *offset* outside 0 …
        :data:`~airflow_partitions.tools.commands.base.MAX_ROWS`.
    """

    IN_PATH: ClassVar[tuple[str, ...]] = ("dag_id", "partition_key")

    dag_id: str
    partition_key: str
    which: str = field(default="missing", metadata={"query": "list"})
    limit: int | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        from airflow_partitions.tools.state.consumers import checked_list

        checked_list(self.which)
        checked_rows("limit", self.limit)
        checked_rows("offset", self.offset)

    def path(self) -> str:
        """Return ``dags/{dag_id}/partitions/{partition_key}``, each quoted."""
        return f"dags/{path_segment(self.dag_id)}/partitions/{path_segment(self.partition_key)}"

    def read(self, session: Any) -> dict[str, Any]:
        """
        Return the page of :func:`~airflow_partitions.tools.state.partition_keys` as the view answers it.

        ``{"keys": [...], "total_entries": N, "offset", "limit", "list"}``.

        :raises UnknownDag: for a Dag that is not a partitioned consumer (404).
        :raises UnknownPartition: for a key without a run or pending run whose keys are kept (404).
        """
        from airflow_partitions.tools.state import partition_keys

        limit = page_limit(self.limit)
        keys, total = partition_keys(
            self.dag_id, self.partition_key, self.which, offset=self.offset, limit=limit, session=session
        )
        page = {"keys": keys, "total_entries": total, "offset": self.offset, "limit": limit}
        return {**page, "list": self.which}


@dataclass(frozen=True)
class AssetRequest(Request):
    """
    An asset's keys with events, from *start* to *end*: ``GET assets/{asset_name}?start=&end=``.

    *start* and *end* bound the time part of its keys as ``status``'s bound a Dag's: a key of the
    grain the asset's keys are written in, its leading part, or an ISO 8601 date or time; judged
    when the asset is found (:func:`~airflow_partitions.tools.state.asset_coverage`).
    """

    IN_PATH: ClassVar[tuple[str, ...]] = ("asset_name",)

    asset_name: str
    start: str | None = None
    end: str | None = None

    def path(self) -> str:
        """Return ``assets/{asset_name}``, quoted."""
        return f"assets/{path_segment(self.asset_name)}"

    def read(self, session: Any, mapper: Any = None) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.state.AssetCoverage`, the keys read by *mapper*'s grain.

        *mapper* is the mapper of a Dag that reads the asset (``None``: none is known), whose
        window's members name the grain of its keys (:func:`~airflow_partitions.tools.state.
        serialized.key_grain`).

        :raises UnknownAsset: for no active asset of that name (404).
        :raises UsageError: for a bound its keys cannot match, or *start* after *end* (400).
        """
        from airflow_partitions.tools.state import asset_coverage
        from airflow_partitions.tools.state.serialized import key_grain

        grain = key_grain(mapper)
        return asset_coverage(self.asset_name, start=self.start, end=self.end, grain=grain, session=session)
