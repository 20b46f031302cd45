"""
Lateness: when a partition should have run, measured from the end of its period in its own calendar.

A partition is **late** once its period has ended plus *expected_within* and it has no successful
Dag run. The period is the one the downstream key names in the mapper's calendar, so a business
day ends at its local midnight, a trading session at its close (13:00 New York time on an early
close), a fiscal month on its last day; a day that is no period of the calendar (a holiday under
a business-day rollup, a day without a session) is never a partition, so it is never late.

- Our rollups take ``expected_within=timedelta(...)``
  (:class:`~airflow_partitions.temporal.TemporalRollupMapper`,
  :class:`~airflow_partitions.composite.DimensionRollupMapper`) and answer
  :meth:`~airflow_partitions.rollup.CountingRollupMapper.late_at`.
- A Dag fed by Airflow's own temporal mappers (``StartOfDayMapper`` and its kin) says it with
  :class:`ExpectedWithinMapper`, which wraps the core mapper and changes nothing else.
- :func:`late_at` answers for any mapper: ``None`` where no expectation is set.

Nothing here reads the clock: a time a partition is late at is a pure function of its key and
the configuration. Whoever compares it with now (the tools, the metrics) reads the clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, ClassVar

from airflow.partition_mappers.base import PartitionMapper

from airflow_partitions.grains.grain import Grain
from airflow_partitions.grains.stored import ValueEquality, dump, load

#: The longest *expected_within* accepted: ten years, as a :class:`CompletionDeadline`'s grace.
MAX_EXPECTED_WITHIN = timedelta(days=3660)


def as_expected_within(owner: str, value: Any) -> timedelta | None:
    """
    Return *value* as the *expected_within* a mapper keeps: ``None`` (no expectation) or a ``timedelta``.

    :raises ValueError: at Dag parse, naming *owner* and ``expected_within``, for anything but
        ``None`` or a ``timedelta`` longer than zero and at most 3660 days (ten years).
    """
    if value is None:
        return None
    if not isinstance(value, timedelta) or not timedelta(0) < value <= MAX_EXPECTED_WITHIN:
        raise ValueError(
            f"{owner}: expected_within must be a timedelta longer than zero and at most 3660 days (ten "
            f"years), such as timedelta(hours=2) after each period's end; got {value!r}."
        )
    return value


def stored_seconds(value: timedelta | None) -> float | None:
    """Return *expected_within* as the stored form writes it (seconds), ``None`` (left out) if unset."""
    return None if value is None else value.total_seconds()


def from_stored(seconds: float | None) -> timedelta | None:
    """Return the *expected_within* of a stored form (:func:`stored_seconds`), ``None`` if left out."""
    return None if seconds is None else timedelta(seconds=seconds)


def late_at(mapper: Any, downstream_key: str) -> datetime | None:
    """
    Return when the partition *downstream_key* of *mapper* is late if it has not run (UTC).

    ``None`` for a mapper without an expectation: Airflow's own mappers, ours without
    *expected_within*. See :meth:`~airflow_partitions.rollup.CountingRollupMapper.late_at` and
    :meth:`ExpectedWithinMapper.late_at`.

    :raises ValueError: (the mapper's) if *downstream_key* is not a key the mapper writes, such as
        a holiday under a business-day rollup.
    """
    answer = getattr(mapper, "late_at", None)
    return answer(downstream_key) if callable(answer) else None


@lru_cache(maxsize=1)
def _core_grains() -> dict[type, type[Grain]]:
    """Return Airflow's temporal mappers, each with the grain of the periods it names."""
    from airflow.partition_mappers import temporal as core

    from airflow_partitions.grains import Day, Hour, Month, Quarter, Week, Year

    return {
        core.StartOfHourMapper: Hour,
        core.StartOfDayMapper: Day,
        core.StartOfWeekMapper: Week,  # ISO weeks: Monday first, as Week() by default
        core.StartOfMonthMapper: Month,
        core.StartOfQuarterMapper: Quarter,
        core.StartOfYearMapper: Year,
    }


class ExpectedWithinMapper(ValueEquality, PartitionMapper):
    """
    Airflow's temporal mapper as it is, with a time each partition is expected by.

    For a Dag fed by Airflow's own mappers, which take no such option::

        PartitionedAssetTimetable(
            assets=hourly,
            default_partition_mapper=ExpectedWithinMapper(
                StartOfDayMapper(timezone="Europe/Berlin"), expected_within=timedelta(hours=2)
            ),
        )

    maps keys exactly as ``StartOfDayMapper(timezone="Europe/Berlin")`` does (``2026-03-10T09:00:00``
    to ``2026-03-10``, same ``partition_date``), and the partition ``2026-03-10`` is late from
    2026-03-11T02:00 Berlin time (01:00Z) if it has no successful run by then. The period's end
    is the start of the next period in the mapper's time zone, DST included (a Berlin day of 23
    hours ends 23 hours after it starts).

    Only Dags that wrap their mapper change their stored form (the wrapper's, which nests the
    core mapper's); Airflow then clears that Dag's pending runs once, as for any changed mapper.
    It wraps Airflow's ``StartOfHourMapper``, ``StartOfDayMapper``, ``StartOfWeekMapper``,
    ``StartOfMonthMapper``, ``StartOfQuarterMapper`` and ``StartOfYearMapper`` (from
    ``airflow.sdk`` or core), not rollups: Airflow tells a rollup by its class, which a wrapper
    would hide; our rollups take ``expected_within`` themselves.

    Stored form: ``{"expected_within_seconds": 7200.0, "format_version": 1, "mapper": <Airflow's
    encoding of the wrapped mapper>}``.

    :param mapper: One of Airflow's temporal mappers listed above.
    :param expected_within: How long after each period's end its partition is expected to have
        run (a ``timedelta`` longer than zero, at most ten years).
    :raises ValueError: at Dag parse, naming the argument: *mapper* not one of those mappers (or
        with a fixed-offset time zone, which has no IANA name to compute local periods in), or
        *expected_within* not a positive ``timedelta``.
    """

    #: What the wrapped mappers decode keys to (a naive period start), as Airflow's ``RollupMapper``
    #: and ``FanOutMapper`` read it.
    expected_decoded_type: ClassVar[type] = datetime

    def __init__(self, mapper: Any, *, expected_within: timedelta) -> None:
        from airflow_partitions.mapping import as_core

        owner = "ExpectedWithinMapper"
        grains = _core_grains()
        try:
            core = as_core(mapper, "partition_mapper")
        except (ValueError, TypeError, NotImplementedError):
            core = mapper
        grain_type = grains.get(type(core))
        if grain_type is None:
            names = ", ".join(sorted(cls.__name__ for cls in grains))
            raise ValueError(
                f"{owner}: mapper must be one of Airflow's temporal mappers ({names}); got {mapper!r}. "
                "Our rollups take expected_within themselves: TemporalRollupMapper(..., expected_within=...)."
            )
        zone = str(getattr(core._timezone, "name", core._timezone))
        try:
            grain = grain_type(timezone=zone)
        except ValueError:
            raise ValueError(
                f"{owner}: mapper's timezone must be an IANA time zone name such as 'Europe/Berlin' (a fixed "
                f"offset has no calendar to end periods in); got {core._timezone!r}."
            ) from None
        super().__init__(max_downstream_keys=core.max_downstream_keys)
        within = as_expected_within(owner, expected_within)
        if within is None:
            raise ValueError(
                f"{owner}: expected_within must be a timedelta longer than zero, such as timedelta(hours=2); "
                "got None (without one, use the mapper unwrapped)."
            )
        #: The wrapped core mapper, which maps every key.
        self.mapper = core
        self.expected_within = within
        self._grain = grain

    def __repr__(self) -> str:
        return f"ExpectedWithinMapper({self.mapper!r}, expected_within={self.expected_within!r})"

    def to_downstream(self, key: str) -> str:
        """Return the wrapped mapper's downstream key (``ValueError`` as it raises it)."""
        return self.mapper.to_downstream(key)

    def decode_downstream(self, downstream_key: str) -> Any:
        """Return the wrapped mapper's decoding of *downstream_key* (a naive period start)."""
        return self.mapper.decode_downstream(downstream_key)

    def encode_upstream(self, decoded: Any) -> str:
        """Return the wrapped mapper's upstream key for *decoded*."""
        return self.mapper.encode_upstream(decoded)

    def format(self, decoded: Any) -> str:
        """Return the wrapped mapper's key for a period start (Airflow's ``FanOutMapper`` calls it)."""
        return self.mapper.format(decoded)

    def to_partition_date(self, downstream_key: str) -> datetime | None:
        """Return the wrapped mapper's ``partition_date``: the period's start, aware."""
        return self.mapper.to_partition_date(downstream_key)

    def carry_partition_date(self, source_partition_date: datetime | None) -> datetime | None:
        """Return what the wrapped mapper carries over from the producer's ``partition_date``."""
        return self.mapper.carry_partition_date(source_partition_date)

    def period_end(self, downstream_key: str) -> datetime:
        """
        Return the end of the period *downstream_key* names, in UTC: the next period's start.

        ``2026-03-09T23:00:00+00:00`` for ``2026-03-09`` under ``StartOfDayMapper(timezone=
        "Europe/Berlin")``.

        :raises ValueError: (the wrapped mapper's) if *downstream_key* is not a key it writes.
        """
        return self._grain.floor(self.mapper.to_partition_date(downstream_key)).utc[1]

    def late_at(self, downstream_key: str) -> datetime:
        """
        Return when the partition *downstream_key* is late without a successful run (UTC).

        Its period's end (:meth:`period_end`) plus *expected_within*.

        :raises ValueError: (the wrapped mapper's) if *downstream_key* is not a key it writes.
        """
        return self.period_end(downstream_key) + self.expected_within

    def serialize(self) -> dict[str, Any]:
        """Return the wrapped mapper's encoding and *expected_within* in seconds, versioned."""
        from airflow.serialization.encoders import encode_partition_mapper

        return dump(
            mapper=encode_partition_mapper(self.mapper),
            expected_within_seconds=stored_seconds(self.expected_within),
        )

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        """Rebuild the mapper from :meth:`serialize`'s output."""
        from airflow.serialization.decoders import decode_partition_mapper

        data = load(data, cls)
        return cls(
            decode_partition_mapper(data["mapper"]),
            expected_within=timedelta(seconds=data["expected_within_seconds"]),
        )


def without_expectations(stored: Any) -> Any:
    """
    Return a stored mapper form (Airflow's encoding, or a rollup fingerprint) without ``expected_within``.

    ``expected_within`` says when a partition is late; it changes nothing a period awaits. An
    :class:`ExpectedWithinMapper` gives the form of the mapper it wraps, and every
    ``expected_within_seconds`` is left out: two fingerprints equal after this differ only in
    when partitions are late (:func:`expectation_changed_only`).
    """
    if isinstance(stored, list):
        return [without_expectations(item) for item in stored]
    if not isinstance(stored, dict):
        return stored
    if str(stored.get("__type", "")).endswith(f".{ExpectedWithinMapper.__qualname__}"):
        return without_expectations(stored.get("__var", {}).get("mapper"))
    return {k: without_expectations(v) for k, v in stored.items() if k != "expected_within_seconds"}


def expectation_changed_only(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """
    Return whether two rollup fingerprints (``compute_rollup_fingerprint``) differ in expected_within only.

    Airflow's scheduler clears a Dag's pending runs whenever the fingerprint changes; for such a
    change the api-server's watch queues their keys again (:mod:`airflow_partitions.tools.watch`).
    """
    return before != after and without_expectations(before) == without_expectations(after)
