"""
What a composite rollup asks of its window: dimensions rolled up, kept, grouped, or read from a Variable.

The :class:`~airflow_partitions.windowing.Windowing` of
:class:`~airflow_partitions.composite.DimensionRollupMapper` (built by it, never called back):

- a key is routed by its dimensions' mappers, a listed member's value by its group
  (``store-006|2026-04-05`` to ``vic|2026-04-05``);
- a period awaits every combination of the windowed dimensions' members, a lookup dimension's
  from its group only, listed members by their dates, members from an Airflow Variable as last
  read (:class:`~airflow_partitions.members.VariableMembers`);
- a key is read dimension by dimension as the member it names (a time dimension's spelling as
  :class:`~airflow_partitions.temporal_windowing.MemberSpelling` reads it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import product
from typing import Any

from airflow.partition_mappers.base import PartitionMapper

from airflow_partitions.business import BusinessDayWindow
from airflow_partitions.grains.keys import OtherMember, OutsideCalendar, shown
from airflow_partitions.members import (
    Member,
    MemberList,
    Unavailable,
    VariableMembers,
    members_of,
    period_day,
)
from airflow_partitions.temporal import TemporalMapper, TemporalWindow
from airflow_partitions.temporal_windowing import MemberSpelling
from airflow_partitions.windowing import Awaited, ExpectedKeys, Windowing, listed

#: Entries kept by the memo of which members a period awaits under the member lists read.
_CACHE_SIZE = 2048


class DimensionWindowing(Windowing):
    """
    What :class:`~airflow_partitions.composite.DimensionRollupMapper` asks of its window (module docstring).

    :param upstream_mapper: The rollup's :class:`~airflow_partitions.composite.CompositeKeyMapper`.
    :param window: Its :class:`~airflow_partitions.composite.DimensionWindow`.
    """

    def __init__(self, upstream_mapper: Any, window: Any) -> None:
        super().__init__(upstream_mapper, window)
        #: Per dimension with a mapper, how a segment is read as the member it names: a time
        #: dimension's as the period of the window's grain (its own grain if kept), another kept
        #: dimension's as its mapper writes it (``x::s1`` is ``s1`` under PrefixStripMapper('x'));
        #: windows of other kinds and listed values count as spelled.
        self.spellings: dict[str, Callable[[str], tuple[str, ...]]] = {}
        for name, dimension in upstream_mapper.mappers.items():
            windowed = window.windows.get(name)
            if isinstance(dimension, TemporalMapper) and isinstance(windowed, BusinessDayWindow):
                self.spellings[name] = MemberSpelling(dimension, windowed.grain(dimension.grain.timezone))
            elif isinstance(dimension, TemporalMapper) and isinstance(windowed, TemporalWindow | None):
                self.spellings[name] = MemberSpelling(
                    dimension, windowed.grain if windowed else dimension.grain
                )
            elif windowed is None and name in upstream_mapper.output:
                self.spellings[name] = _as_written(dimension)
        #: The dimensions the window lists members for, and (of those) the ones the downstream key
        #: keeps through a lookup, with the lookup: each downstream value awaits its group's members.
        self.listings = window.listings()
        self.lookups = {
            n: upstream_mapper.mappers.get(n) for n in self.listings if n in upstream_mapper.output
        }
        self.variables = [v for v in self.listings.values() if isinstance(v, VariableMembers)]

    def read(self) -> tuple[int, ...] | Unavailable | None:
        """
        Return the versions of the Variables' member lists now in use (``None``: no Variable).

        :class:`~airflow_partitions.members.Unavailable` (why) if a Variable cannot be read or is
        malformed, or a list mixes members with and without a group where no lookup places them.
        """
        if not self.variables:
            return None
        try:
            for name, lookup in self.lookups.items():
                members_of(self.listings[name]).grouped(lookup)  # memoized: checks the groups once
            return tuple(v.current().version for v in self.variables)
        except ValueError as err:
            return Unavailable(str(err))

    def members(self, decoded: dict[str, Any], read: Any = None) -> list[dict[str, Any]]:
        """
        Return the window's members of a decoded downstream key, a lookup's grouped by it.

        *read*: the listed dimensions' awaited values (``((name, values), ...)``), if worked out.
        """
        awaited = dict(read) if isinstance(read, tuple) else None
        return self.window.to_upstream(decoded, self.lookups, awaited)

    def expected(self, downstream_key: str, read: Any, owner: int) -> Awaited:
        """
        Return the upstream keys *downstream_key* waits for, with its closing time.

        With members from a Variable, worked out twice over: which members the key awaits, by the
        Variable's value read (memoized); its keys, by those members. A new value builds again
        only the keys of the periods whose members it changed. While a Variable cannot give its
        members (*read* :class:`~airflow_partitions.members.Unavailable`), no keys and the reason:
        the scheduler's pending runs wait (:class:`~airflow_partitions.rollup.CountingPolicy`).
        """
        if isinstance(read, Unavailable):
            return ExpectedKeys((), None, downstream_key, owner, problem=read.reason)
        if read is None:
            return listed(self, downstream_key, None, owner)
        return _listed(self, downstream_key, _awaited_now(self, downstream_key, read), owner)

    def membership(self, downstream_key: str) -> list[dict[str, Any]]:
        """
        Return, per listed dimension, the members *downstream_key*'s period awaits and where they came from.

        ``[{"dimension": "store", "source": "Variable 'retail_stores'", "read_at":
        "2026-04-06T01:02:03+00:00", "period_begins": "2026-04-06", "group": "vic", "awaited":
        ["store-005", …, "store-009"], "dated": [{"group": "vic", "start": "2026-04-06", "value":
        "store-009", "awaited": True}]}]``: the source is ``"listed in the Dag file"`` or the Variable
        (and when this process read it, UTC); *group* the downstream value of a lookup dimension (else
        ``None``); *dated* the members with dates among those the group holds, awaited or not.

        :raises ValueError: if *downstream_key* is not a key this rollup writes, or a Variable cannot
            be read.
        """
        decoded = self.upstream_mapper.decode_downstream(downstream_key)
        awaited = self.window.awaited(decoded, self.lookups)
        day = period_day(decoded)
        found = []
        for name, listing in self.listings.items():
            members = members_of(listing)
            group = decoded[name] if name in self.lookups else None
            held = members.members if group is None else members.grouped(self.lookups[name]).get(group, ())
            dated = [m for m in held if m.dated]
            found.append(
                {
                    "dimension": name,
                    "source": members.source,
                    "read_at": None if members.read_at is None else members.read_at.isoformat(),
                    "period_begins": None if day is None else day.isoformat(),
                    "group": group,
                    "awaited": list(awaited[name]),
                    "dated": [{**m.fields(), "awaited": m.value in awaited[name]} for m in dated],
                }
            )
        return found

    def member(self, name: str, segment: str) -> Member:
        """
        Return the listed member of dimension *name* that *segment* names.

        :raises ~airflow_partitions.OtherMember: if the window lists no such member (another Dag's
            store, or one not yet listed).
        :raises ValueError: if the dimension's Variable cannot be read (naming it).
        """
        members = members_of(self.listings[name])
        found = members.by_value.get(segment)
        if found is None:
            values = list(members.values)
            listed_values = f"{values}" if len(values) <= 10 else f"{values[:5]} and {len(values) - 5} more"
            source = "" if isinstance(self.listings[name], MemberList) else f" ({members.source})"
            raise OtherMember(f"dimension {name!r} is {segment!r}, not one of {listed_values}{source}")
        return found

    def route(self, key: str) -> list[str]:
        """
        Return the downstream keys of *key*: a lookup dimension's value is its listed member's group.

        A member with a ``group`` counts for that group; one without, for its lookup's answer.

        :raises ~airflow_partitions.OtherMember: naming the key, if a lookup dimension names no listed
            member.
        :raises ValueError: naming the key and why, if the groups cannot be known now.
        """
        if not self.lookups:
            return super().route(key)
        if isinstance(read := self.read(), Unavailable):  # the groups cannot be known now
            raise ValueError(f"partition key {shown(key)}: {read.reason}")
        mapper = self.upstream_mapper
        segments = mapper.split(key)
        given = {}
        for name in self.lookups:
            try:
                member = self.member(name, segments[name])
            except OtherMember as err:
                raise OtherMember(f"partition key {shown(key)}: {err}.") from None
            if member.group is not None:
                given[name] = member.group
        return mapper.keys_of(key, segments, given)

    def counts_as(self, key: str) -> tuple[str, ...]:
        """
        Return *key* spelled as the window awaits the member it names, dimension by dimension.

        ``eu|2026-03-10T09:00:00Z`` is read as ``eu|2026-03-10T09`` under a window of hours; a
        time dimension's segment counts as the member period it names, a kept dimension's as its
        mapper writes it, a listed dimension's if it is one of the members, and one with dates only
        if they cover the period of the downstream key it maps to. A naive local time on a repeated
        hour counts for both occurrences (every combination of the members its segments count as).

        :raises ~airflow_partitions.OtherMember: naming the dimension, if it names no listed member.
        :raises ~airflow_partitions.OutsideCalendar: naming the member's dates, if they do not cover
            the key's period.
        :raises ValueError: naming the dimension and why, if a segment names no member otherwise.
        """
        mapper = self.upstream_mapper
        segments = mapper.split(key)
        for name in self.listings:
            member = self.member(name, segments[name])
            if member.dated:
                day = period_day(mapper.decode_downstream(self.route(key)[0]))
                if day is None:
                    raise ValueError(
                        f"dimension {name!r}: {member.value!r} has dates, but the downstream key has no one "
                        "time dimension"
                    )
                if not member.covers(day):
                    raise OutsideCalendar(
                        f"dimension {name!r}: {member.value!r} is a member {member.dates()}, not of the "
                        f"period beginning {day}"
                    )
        choices: dict[str, tuple[str, ...]] = {name: (segment,) for name, segment in segments.items()}
        for name, spelling in self.spellings.items():
            try:
                choices[name] = spelling(segments[name])
            except ValueError as err:
                raise ValueError(f"dimension {name!r}: {err}") from None
        return tuple(
            mapper.join(combination, key) for combination in product(*(choices[n] for n in mapper.dimensions))
        )


@lru_cache(maxsize=_CACHE_SIZE)
def _awaited_now(windowing: DimensionWindowing, downstream_key: str, read: Any) -> tuple[Any, ...]:
    """Return the members *downstream_key* awaits under the member lists *read* (versions), by dimension."""
    decoded = windowing.upstream_mapper.decode_downstream(downstream_key)
    return tuple(sorted(windowing.window.awaited(decoded, windowing.lookups).items()))


@lru_cache(maxsize=_CACHE_SIZE)
def _listed(windowing: DimensionWindowing, downstream_key: str, awaited: Any, owner: int) -> ExpectedKeys:
    """Return the keys of *downstream_key* awaiting the members *awaited*: built once per such set."""
    return listed(windowing, downstream_key, awaited, owner)


def _as_written(mapper: PartitionMapper) -> Callable[[str], tuple[str, ...]]:
    """Return a reader of a kept dimension's segment as the rollup awaits it: as *mapper* writes it."""

    def read(segment: str) -> tuple[str, ...]:
        written = mapper.to_downstream(segment)
        if not isinstance(written, str):
            raise ValueError(f"{segment!r} maps to several values {list(written)!r}, not one")
        return (mapper.encode_upstream(mapper.decode_downstream(written)),)

    return read
