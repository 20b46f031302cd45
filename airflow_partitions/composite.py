"""
Composite partition keys: named dimensions, each mapped by any mapper, rolled up or fanned out.

A composite key joins several dimensions with a delimiter: ``us|east|2026-03-10T09:00:00`` is
(region, zone, time). :class:`CompositeKeyMapper` reads such keys, maps each dimension with a
mapper of its own (a :class:`~airflow_partitions.temporal.TemporalMapper` for the time,
a :class:`~airflow_partitions.keyshape.LookupMapper` for a code) and writes the dimensions it
keeps, in the order it is given. Core's ``ProductMapper`` needs one mapper per segment and
keeps them all, in order; it cannot drop or reorder a dimension, and core's ``RollupMapper``
refuses it.

:class:`DimensionWindow` names, per dimension, what a rollup waits for (a temporal window for
the time, a fixed list of regions for a dimension the downstream key drops);
:class:`DimensionRollupMapper` rolls up those dimensions and keeps the others, each combination
of kept values independently; :class:`DimensionFanOutMapper` is the mirror fan-out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from itertools import product
from math import prod
from typing import Any, ClassVar

from airflow.partition_mappers.base import PartitionMapper
from airflow.partition_mappers.window import Window

from airflow_partitions.composite_checks import (
    check_dimensions,
    check_time_dimension,
    dimension_fan_out,
    fan_out_size,
    sample_keys,
)
from airflow_partitions.composite_keys import (
    checked_escape,
    dimension_mappers,
    dimension_names,
    join_key,
    split_key,
)
from airflow_partitions.dimension_members import (
    Listing,
    awaited_members,
    dimension_entry,
    fan_out_mappers,
    rebuilt_entry,
    stored_entry,
)
from airflow_partitions.dimension_windowing import DimensionWindowing
from airflow_partitions.fan_out import MappedPeriodFanOut, format_member
from airflow_partitions.grains.keys import shown
from airflow_partitions.grains.stored import ValueEquality, dump, load, rebuilt_once
from airflow_partitions.mapping import check_fan_out, downstream_keys, require_text
from airflow_partitions.members import Member, MemberList, VariableMembers
from airflow_partitions.rollup import CountingRollupMapper, OnlyOurRollup


class CompositeKeyMapper(ValueEquality, PartitionMapper):
    r"""
    Map a composite key dimension by dimension, and select, drop or reorder its dimensions.

    ``CompositeKeyMapper(["region", "zone", "time"], {"time": TemporalMapper(Day())})`` maps
    ``us|east|2026-03-10T09:00:00`` to ``us|east|2026-03-10``; with ``output=["region"]`` to
    ``us``; with ``output=["time", "region"]`` to ``2026-03-10|us``. Dimensions without a
    mapper are copied unchanged. A dimension mapper that returns several keys (a one-to-many
    :class:`~airflow_partitions.keyshape.LookupMapper`) makes the composite return every
    combination.

    Delimiters inside segments: by default a key is split at every *delimiter* (so it must have
    exactly one segment per dimension), and a mapped segment containing the delimiter is
    refused. With ``escape="\\"``, ``\|`` in a key is a literal ``|`` inside a segment and ``\\``
    a literal backslash, and output segments are escaped the same way.

    Decoded form (for :class:`DimensionWindow` and rollups): a ``dict`` of the output
    dimensions, each decoded by its mapper (``{"region": "us", "time": Period(2026-03-10)}``).
    ``dag_run.partition_date``: the one dimension whose mapper gives a date, as core's
    ``ProductMapper`` (none if zero or several do).

    :param dimensions: Names of the upstream key's segments, in order (identifiers).
    :param mappers: Dimension name → mapper for that segment (any Airflow or airflow-partitions
        mapper, including temporal ones); others pass through.
    :param output: The dimensions of the downstream key, in order; default: *dimensions*.
    :param delimiter: The separator between segments; default ``"|"``.
    :param escape: One character that escapes the delimiter (and itself) inside segments; by
        default none, and delimiters inside segments are refused.
    :param max_downstream_keys: Airflow's fan-out cap; checked at parse against the product of
        the dimension mappers' largest fan-outs.
    :raises ValueError: at Dag parse, for dimensions that are not distinct identifiers, mappers
        for unknown dimensions, an *output* naming unknown dimensions or one twice, an empty
        delimiter, an escape that is not one character distinct from the delimiter, or a fan-out
        above the cap; at mapping time, naming the key, for a key with the wrong number of
        segments, an empty segment, a dangling escape, a dimension mapper's error, a mapped
        segment containing the delimiter (no *escape*), or an output over 250 characters.
    """

    expected_decoded_type: ClassVar[type] = dict

    def __init__(
        self,
        dimensions: Sequence[str],
        mappers: Mapping[str, PartitionMapper] | None = None,
        *,
        output: Sequence[str] | None = None,
        delimiter: str = "|",
        escape: str | None = None,
        max_downstream_keys: int | None = None,
    ) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        owner = "CompositeKeyMapper"
        self.dimensions = dimension_names(dimensions, owner=owner, what="dimensions")
        self.output = (
            self.dimensions if output is None else dimension_names(output, owner=owner, what="output")
        )
        if unknown := [name for name in self.output if name not in self.dimensions]:
            raise ValueError(f"{owner}: output names {unknown}, not dimensions {list(self.dimensions)}.")
        self.mappers: dict[str, PartitionMapper] = dimension_mappers(owner, mappers, self.dimensions)
        self.delimiter = require_text(delimiter, owner=owner, name="delimiter", example="|")
        self.escape = checked_escape(owner, escape, self.delimiter)
        self.largest_fan_out = prod(getattr(self.mappers.get(n), "largest_fan_out", 1) for n in self.output)
        check_fan_out(owner, self.largest_fan_out, "a key", max_downstream_keys)

    def split(self, key: str, names: Sequence[str] | None = None) -> dict[str, str]:
        """
        Return the segments of *key* by dimension name (*names*: default, the upstream layout).

        :raises ValueError: naming the key, for a wrong segment count, an empty or blank segment
            (only whitespace, which Airflow refuses as a whole key too: ``eu| ``), whitespace around
            a segment (``eu |2026-03-10T09``), or a dangling escape.
        """
        return split_key(key, self.dimensions if names is None else names, self.delimiter, self.escape)

    def join(self, segments: Iterable[str], source: Any) -> str:
        """
        Return *segments* joined by the delimiter, escaped if an *escape* is set.

        *source* is what the key is made from (a key, or a decoded key, shown only in an error: a
        decoded period is not written out for every key joined).

        :raises ValueError: naming the *source*, for a segment containing the delimiter
            (no *escape*), a segment that would merge with a delimiter of several characters
            (``a:`` before ``::``), or a result over 250 characters.
        """
        return join_key(segments, source, self.delimiter, self.escape)

    def to_downstream(self, key: str) -> str | list[str]:
        """Return the output dimensions of *key*, each mapped; every combination if one fans out."""
        keys = self.keys_of(key, self.split(key))
        return keys[0] if len(keys) == 1 else keys

    def keys_of(
        self, key: str, segments: dict[str, str], given: Mapping[str, str] | None = None
    ) -> list[str]:
        """
        Return the downstream keys of *key* (split into *segments*), *given* output values kept as given.

        :raises ValueError: as :meth:`to_downstream`.
        """
        choices: list[list[str]] = []
        for name in self.output:
            mapper = self.mappers.get(name)
            if given and name in given:
                choices.append([given[name]])
                continue
            if mapper is None:
                choices.append([segments[name]])
                continue
            try:
                choices.append(downstream_keys(mapper, segments[name]))
            except ValueError as err:
                raise ValueError(
                    f"CompositeKeyMapper: partition key {shown(key)}, dimension {name!r}: {err}"
                ) from None
        return [self.join(combination, key) for combination in product(*choices)]

    def decode_downstream(self, downstream_key: str) -> dict[str, Any]:
        """
        Return ``{dimension: decoded value}`` for the output dimensions of *downstream_key*.

        :raises ValueError: naming the key (and the dimension), if it cannot be decoded.
        """
        return self._decode(downstream_key, "decode_downstream")

    def decode_output(self, downstream_key: str) -> dict[str, Any]:
        """
        Return ``{dimension: value}`` each output segment names itself, offsets kept (a fan-out's).

        With ``{"day": TemporalMapper(Day(), offset=-1)}``, ``eu|2026-03-09`` decodes to the
        period 2026-03-09 (:meth:`decode_downstream`: 2026-03-10, what a rollup waits for).

        :raises ValueError: as :meth:`decode_downstream`.
        """
        return self._decode(downstream_key, "decode_output")

    def _decode(self, downstream_key: str, method: str) -> dict[str, Any]:
        decoded: dict[str, Any] = {}
        for name, segment in self.split(downstream_key, self.output).items():
            mapper = self.mappers.get(name)
            try:
                decoded[name] = (
                    segment if mapper is None else getattr(mapper, method, mapper.decode_downstream)(segment)
                )
            except ValueError as err:
                raise ValueError(
                    f"CompositeKeyMapper: partition key {shown(downstream_key)}, dimension {name!r}: {err}"
                ) from None
        return decoded

    def encode_upstream(self, decoded: dict[str, Any]) -> str:
        """
        Return the upstream key for *decoded*, which must give every upstream dimension.

        :raises ValueError: naming the missing dimensions.
        """
        if missing := [name for name in self.dimensions if name not in decoded]:
            raise ValueError(f"CompositeKeyMapper: no value for dimensions {missing} in {decoded!r}.")
        return self.join(
            (
                self.mappers[name].encode_upstream(decoded[name]) if name in self.mappers else decoded[name]
                for name in self.dimensions
            ),
            decoded,
        )

    def format(self, decoded: dict[str, Any]) -> str:
        """Return the downstream key for *decoded* output dimensions (a fan-out's downstream side)."""
        return self.join(
            (format_member(self.mappers.get(name), decoded[name]) for name in self.output), decoded
        )

    def to_partition_date(self, downstream_key: str) -> datetime | None:
        """Return the one date among the output dimensions (``None`` if zero or several)."""
        try:
            segments = self.split(downstream_key, self.output)
        except ValueError:
            return None
        anchors = [
            anchor
            for name, segment in segments.items()
            if name in self.mappers and (anchor := self.mappers[name].to_partition_date(segment)) is not None
        ]
        return anchors[0] if len(anchors) == 1 else None

    def serialize(self) -> dict[str, Any]:
        """Return the layout, delimiter, escape and each dimension's mapper (Airflow's encoding)."""
        from airflow.serialization.encoders import encode_partition_mapper

        return dump(
            dimensions=list(self.dimensions),
            output=list(self.output),
            mappers={name: encode_partition_mapper(mapper) for name, mapper in self.mappers.items()},
            delimiter=self.delimiter,
            escape=self.escape,
            max_downstream_keys=self.max_downstream_keys,
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> CompositeKeyMapper:
        """Rebuild the mapper from :meth:`serialize`'s output."""
        from airflow.serialization.decoders import decode_partition_mapper

        data = load(data, cls)
        return cls(
            data["dimensions"],
            {name: decode_partition_mapper(m) for name, m in data["mappers"].items()},
            output=data["output"],
            delimiter=data["delimiter"],
            escape=data.get("escape"),
            max_downstream_keys=data.get("max_downstream_keys"),
        )


class DimensionWindow(ValueEquality, Window):
    """
    Per dimension of a composite key, the members a rollup waits for (or a fan-out runs).

    ``DimensionWindow(time=TemporalWindow(Hour()))``: the downstream ``eu|2026-03-10`` waits for
    ``eu|2026-03-10T00`` … ``eu|2026-03-10T23``, the other dimensions kept. ``DimensionWindow(
    region=["eu", "us"])``, for a dimension the downstream key drops: ``2026-03-10`` waits for
    ``eu|2026-03-10`` and ``us|2026-03-10``. Both at once wait for every combination.

    Members of a list may have dates, ``DimensionWindow(store=["store-001", Member("store-009",
    start="2026-04-06")])``: a period of the downstream key's one time dimension awaits the members
    whose dates cover the local date it begins on (store-009 from the day 2026-04-06, not on
    2026-04-04). ``DimensionWindow(store=VariableMembers("retail_stores"))`` lists the members an
    Airflow Variable holds, read at run time (:class:`~airflow_partitions.members.VariableMembers`).
    Under :class:`DimensionRollupMapper`, a list for a dimension the downstream key keeps through a
    lookup (store to region) gives each downstream value the members whose lookup answer it is.

    Size: the product of each dimension's members (a window's size, or the list's length).

    :param windows: Dimension name → a window of that dimension's decoded values (ours or
        Airflow's), a non-empty list of distinct values (strings or
        :class:`~airflow_partitions.members.Member` objects), or a
        :class:`~airflow_partitions.members.VariableMembers`.
    A rollup over it is :class:`DimensionRollupMapper`; Airflow's ``RollupMapper`` refuses it at Dag
    parse, naming ours (:class:`~airflow_partitions.rollup.OnlyOurRollup`). Airflow's
    ``FanOutMapper`` and :class:`DimensionFanOutMapper` take it.

    Stored form: a plain list as ``{"values": [sorted values]}``; a member with dates or a group as
    an object among them (``{"value": "store-009", "start": "2026-04-06"}``); a Variable as
    ``{"variable": "retail_stores"}``, its name only.

    :raises ValueError: at Dag parse, for no dimensions, or a value that is neither a window, a
        non-empty list of distinct non-blank strings and members, nor a ``VariableMembers``; at
        :meth:`to_upstream`, if members with dates meet a downstream key without one time dimension,
        or a Variable's members cannot be read (naming it and the JSON expected).
    :raises TypeError: at Dag parse, from Airflow's ``RollupMapper``, if given this window.
    """

    expected_decoded_type = OnlyOurRollup(dict, "DimensionRollupMapper")

    def __init__(self, **windows: Window | Sequence[str | Member] | VariableMembers) -> None:
        super().__init__()
        if not windows:
            raise ValueError(
                "DimensionWindow: name at least one dimension, e.g. DimensionWindow(region=['eu'])."
            )
        self.windows: dict[str, Window | Listing] = {
            name: dimension_entry(name, value) for name, value in sorted(windows.items())
        }

    def listings(self) -> dict[str, Listing]:
        """Return the dimensions the window lists members for (not windows), by name."""
        return {n: w for n, w in self.windows.items() if isinstance(w, MemberList | VariableMembers)}

    def to_upstream(
        self,
        decoded_downstream: dict[str, Any],
        groups: Mapping[str, Any] | None = None,
        awaited: Mapping[str, Sequence[str]] | None = None,
    ) -> list[dict[str, Any]]:
        """
        Return every combination of the windowed dimensions' members, other dimensions kept.

        A listed dimension gives the members whose dates cover the local date the downstream key's
        one period begins on (:func:`~airflow_partitions.members.period_day`). *groups* (dimension
        → its mapper, from :class:`DimensionRollupMapper`) names the listed dimensions the
        downstream key keeps through a lookup: those give the members whose group or lookup answer
        is the downstream value. *awaited* gives the listed dimensions' values as :meth:`awaited`
        worked them out.

        :raises ValueError: as the class says.
        """
        names = list(self.windows)
        listed = self.awaited(decoded_downstream, groups) if awaited is None else awaited
        choices = [
            list(window.to_upstream(decoded_downstream[name])) if isinstance(window, Window) else listed[name]
            for name, window in self.windows.items()
        ]
        return [{**decoded_downstream, **dict(zip(names, combo, strict=True))} for combo in product(*choices)]

    def awaited(
        self, decoded_downstream: dict[str, Any], groups: Mapping[str, Any] | None = None
    ) -> dict[str, tuple[str, ...]]:
        """Return, per listed dimension, the values of the members a decoded downstream key awaits."""
        return awaited_members(self.listings(), decoded_downstream, groups)

    def largest_fan_out(self, mapper: CompositeKeyMapper) -> tuple[int, str]:
        """
        Return the most members one downstream key of *mapper* can have, and what bounds it.

        Temporal windows under a :class:`TemporalMapper` dimension count their widest period
        (31 days of a month); lists their length; other windows and Variables count 1 (unknown).
        """
        return dimension_fan_out(self.windows, mapper)

    def serialize(self) -> dict[str, Any]:
        """
        Return ``{"windows": {name: {"window": …}, {"values": [sorted]} or {"variable": name}}}``.

        Sorted by name; a list's entries by value, each a string or (with dates or a group) an object.
        """
        return dump(windows={name: stored_entry(w) for name, w in self.windows.items()})

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> DimensionWindow:
        """Rebuild the window from :meth:`serialize`'s output."""
        windows = load(data, cls)["windows"]
        return cls(**{n: rebuilt_entry(n, w) for n, w in windows.items()})


def runtime_variables(mapper: Any) -> list[VariableMembers]:
    """
    Return the Variables a mapper's window lists members from, read at run time (``[]``: none).

    A :class:`DimensionWindow` over ``store=VariableMembers("retail_stores")`` gives
    ``[VariableMembers("retail_stores")]``; a mapper wrapping another (``mapper``) is looked into.
    """
    window = getattr(mapper, "window", None)
    if isinstance(window, DimensionWindow):
        return [v for v in window.listings().values() if isinstance(v, VariableMembers)]
    inner = getattr(mapper, "mapper", None)
    return runtime_variables(inner) if inner is not None else []


def _checked(owner: str, mapper: Any, window: Any, *, rollup: bool) -> None:
    """
    Refuse, at Dag parse, a mapper no :class:`CompositeKeyMapper` or a window no :class:`DimensionWindow`.

    Then :func:`~airflow_partitions.composite_checks.check_dimensions` (*rollup*: for a rollup).

    :raises ValueError: naming *owner*, the types given, or what does not fit.
    """
    if not isinstance(mapper, CompositeKeyMapper) or not isinstance(window, DimensionWindow):
        raise ValueError(
            f"{owner}: upstream_mapper must be a CompositeKeyMapper and window a DimensionWindow; got "
            f"{type(mapper).__name__} and {type(window).__name__}."
        )
    check_dimensions(owner, mapper, window, rollup=rollup)


class DimensionRollupMapper(CountingRollupMapper):
    """
    Roll up some dimensions of a composite key and keep the others, each value independently.

    Per region, hours into days::

        DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
            window=DimensionWindow(time=TemporalWindow(Hour())),
        )

    maps ``eu|2026-03-10T09`` to ``eu|2026-03-10`` and runs the consumer for ``eu|2026-03-10``
    once all 24 hours of ``eu`` have arrived, whatever ``us`` has sent. Across a fixed list of
    regions, per day (the downstream key drops the region)::

        DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["region", "day"], output=["day"]),
            window=DimensionWindow(region=["eu", "us"]),
        )

    runs ``2026-03-10`` once ``eu|2026-03-10`` and ``us|2026-03-10`` have both arrived. Through a
    lookup, per region and day (the downstream key keeps the store dimension, mapped)::

        DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(
                ["store", "day"], {"store": LookupMapper({"store-001": "nsw", "store-005": "vic"}),
                                   "day": TemporalMapper(Day())}
            ),
            window=DimensionWindow(store=["store-001", "store-005", Member("store-009", start="2026-04-06",
                                                                             group="vic")]),
        )

    maps ``store-005|2026-04-06`` to ``vic|2026-04-06``, which awaits ``store-005|2026-04-06`` and
    ``store-009|2026-04-06`` (store-009 from 2026-04-06 on; its earlier keys are refused as
    :class:`~airflow_partitions.OutsideCalendar` naming its dates). A key naming a value the window
    does not list is refused as :class:`~airflow_partitions.OtherMember`. Member
    keys are written by the mapper's ``encode_upstream``: producers must send them exactly so
    (temporal dimensions in their grain's canonical key). ``wait_policy`` may be a
    :class:`~airflow_partitions.deadlines.CompletionDeadline` (its period: the latest time
    dimension's).

    :param upstream_mapper: A :class:`CompositeKeyMapper`.
    :param window: A :class:`DimensionWindow` over its dimensions.
    :param wait_policy: Airflow's ``WaitForAll`` (default) or ``MinimumCount``, or a
        :class:`~airflow_partitions.deadlines.CompletionDeadline`.
    :param max_upstream_keys: The most upstream keys one period may await (every combination of
        the windowed dimensions; default 50,000, as :class:`~airflow_partitions.temporal.
        TemporalRollupMapper`).
    :param rerun_policy: What a key for a period that already ran does: ``"hold"`` (default, and
        Airflow 3.3's only behaviour: it opens a pending run beside the run, which waits for the
        whole period again), ``"refresh"`` or ``"ignore"``, or Airflow 3.4's ``RerunPolicy``
        members; applied by Airflow 3.4's scheduler (:func:`~airflow_partitions.rollup.as_rerun_policy`).
    :param expected_within: How long after its period's end each partition is expected to have run
        (a ``timedelta`` longer than zero, at most ten years; default ``None``, no expectation):
        with ``timedelta(hours=2)``, the day ``2026-03-10`` is late from 02:00 the next day in the
        mapper's time zone if it has no successful run by then (:meth:`~airflow_partitions.rollup.
        CountingRollupMapper.late_at`). Periods the calendar does not have (holidays, days without
        a session) are never partitions, so never late.
    :raises ValueError: at Dag parse, for an *expected_within* that is not a ``timedelta`` longer
        than zero (and at most ten years), or with keys that carry no time (no TemporalMapper
        dimension); for more awaited keys than *max_upstream_keys*, a window
        naming unknown dimensions, a window over a dropped dimension, values for a dimension kept
        as it is (no mapper, unless from a Variable) or for a time dimension, a listed member its
        lookup cannot place, members with dates and not one time dimension in the downstream key,
        a dropped dimension the window does not list, or a window whose decoded type differs from
        its dimension mapper's. A window listing a :class:`~airflow_partitions.VariableMembers` is
        not read at parse (its route check is skipped).
    """

    upstream_mapper: CompositeKeyMapper
    window: DimensionWindow

    def __init__(
        self,
        *,
        upstream_mapper: CompositeKeyMapper,
        window: DimensionWindow,
        wait_policy: Any = None,
        max_downstream_keys: int | None = None,
        max_upstream_keys: int | None = None,
        rerun_policy: Any = None,
        expected_within: timedelta | None = None,
    ) -> None:
        owner = "DimensionRollupMapper"
        _checked(owner, upstream_mapper, window, rollup=True)
        super().__init__(
            upstream_mapper=upstream_mapper,
            window=window,
            windowing=DimensionWindowing(upstream_mapper, window),
            wait_policy=wait_policy,
            max_downstream_keys=max_downstream_keys,
            max_upstream_keys=max_upstream_keys,
            rerun_policy=rerun_policy,
            expected_within=expected_within,
        )
        self._check_size(*window.largest_fan_out(upstream_mapper))
        check_time_dimension(owner, upstream_mapper, self.policy, self.expected_within)
        self._check_routes(
            sample_keys(upstream_mapper, self.windowing),
            hint="producers must send exactly the keys awaited: a kept dimension's mapper must map its own "
            "output to itself, and naive time keys be read in the window grain's zone "
            "(TemporalMapper(..., input_timezone=...))",
        )

    windowing: DimensionWindowing

    def membership(self, downstream_key: str) -> list[dict[str, Any]]:
        """
        Return, per listed dimension, the members *downstream_key*'s period awaits and where they came from.

        See :meth:`~airflow_partitions.dimension_windowing.DimensionWindowing.membership`.

        :raises ValueError: if *downstream_key* is not a key this rollup writes, or a Variable cannot
            be read.
        """
        return self.windowing.membership(downstream_key)


class DimensionFanOutMapper(ValueEquality, MappedPeriodFanOut):
    """
    Fan one composite key out over some of its dimensions, the mirror of :class:`DimensionRollupMapper`.

    ``DimensionFanOutMapper(upstream_mapper=CompositeKeyMapper(["region", "day"], {"day":
    TemporalMapper(Day())}), window=DimensionWindow(day=TemporalWindow(Hour())))`` turns
    ``eu|2026-03-10`` into ``eu|2026-03-10T00`` … ``eu|2026-03-10T23`` (one Dag run each).

    The default downstream mapper writes the upstream mapper's output dimensions, each windowed
    one with its window's default mapper (``TemporalMapper(grain)`` for a
    :class:`~airflow_partitions.temporal.TemporalWindow`); pass *downstream_mapper* (a
    :class:`CompositeKeyMapper`) to write others, such as a dimension the window lists values
    for. The largest fan-out (widest temporal period times list lengths) is checked against the
    cap at Dag parse.

    To fan out over a dimension the upstream key does not have, list its values and name the
    downstream layout: ``DimensionFanOutMapper(upstream_mapper=CompositeKeyMapper(["day"]),
    window=DimensionWindow(region=["eu", "us"]), downstream_mapper=CompositeKeyMapper(["region",
    "day"]))`` turns ``2026-03-10`` into ``eu|2026-03-10`` and ``us|2026-03-10``.

    :raises ValueError: at Dag parse, for a mapper and window that do not fit (as
        :class:`DimensionRollupMapper`, except that a list of values may add a dimension), a
        window listing values with no *downstream_mapper*, or a largest fan-out above the cap.
    """

    def __init__(
        self,
        *,
        upstream_mapper: CompositeKeyMapper,
        window: DimensionWindow,
        downstream_mapper: PartitionMapper | None = None,
        max_downstream_keys: int | None = None,
    ) -> None:
        owner = "DimensionFanOutMapper"
        _checked(owner, upstream_mapper, window, rollup=False)
        if downstream_mapper is None:
            if window.listings():
                raise ValueError(f"{owner}: a window listing values needs an explicit downstream_mapper.")
            downstream_mapper = CompositeKeyMapper(
                upstream_mapper.output,
                fan_out_mappers(upstream_mapper, window.windows),  # (lists refused just above)
                delimiter=upstream_mapper.delimiter,
                escape=upstream_mapper.escape,
            )
        super().__init__(
            upstream_mapper=upstream_mapper,
            window=window,
            downstream_mapper=downstream_mapper,
            max_downstream_keys=max_downstream_keys,
        )
        self.largest_fan_out = fan_out_size(owner, upstream_mapper, window, max_downstream_keys)

    def serialize(self) -> dict[str, Any]:
        """Return core's ``FanOutMapper`` fields, key-sorted and versioned like our other classes."""
        return dump(**super().serialize())

    @classmethod
    @rebuilt_once
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        """Rebuild the fan-out from :meth:`serialize`'s output, once per stored form (``rebuilt_once``)."""
        return super().deserialize(load(data, cls))
