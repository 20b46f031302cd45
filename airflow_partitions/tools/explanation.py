"""
What a mapper does with one key: where it goes, whether it counts, what a period waits for.

The answers come from the mapper's own methods (``to_downstream``, ``to_partition_date``) and,
for a rollup, from :class:`~airflow_partitions.tools.rollup_view.RollupView`, so they are what the
scheduler computes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from airflow_partitions.grains.keys import shown


@dataclass(frozen=True)
class KeyExplanation:
    """
    One downstream key: its ``partition_date`` and, for a rollup, what its period waits for.

    Times are ISO 8601 strings (``2026-03-08T05:00:00+00:00``). For a rollup, *waits_for* lists
    the upstream keys in the spelling awaited (sorted), *wait_policy* the configured policy; for a
    :class:`~airflow_partitions.CompletionDeadline`, *closes_at* is the period's end (UTC),
    *needed* the keys needed at the deadline, *fires_at* when it fires with at least *needed*
    keys and *fires_at_below_minimum* when it fires with fewer; *rerun_policy* what a key for the
    period does once it ran (``"hold"``: a pending run beside the run; Airflow 3.4's ``"refresh"``,
    ``"ignore"``). For a rollup whose window lists members, *members* says per listed dimension
    which members the period awaits and where they came from (the Dag file's list, or an Airflow
    Variable and when it was read; members with dates and whether their dates cover the period:
    :meth:`~airflow_partitions.DimensionRollupMapper.membership`). *late_at* is when the partition
    is late without a successful run (its period's end plus the mapper's ``expected_within``:
    :func:`~airflow_partitions.lateness.late_at`), for any mapper that has one.
    """

    key: str
    partition_date: str | None
    waits_for: tuple[str, ...] | None = None
    wait_policy: str | None = None
    closes_at: str | None = None
    needed: int | None = None
    fires_at: str | None = None
    fires_at_below_minimum: str | None = None
    rerun_policy: str | None = None
    members: tuple[dict[str, Any], ...] | None = None
    late_at: str | None = None


@dataclass(frozen=True)
class Explanation:
    """
    What *mapper* does with *key* (:func:`explain`'s answer); ``to_dict()`` is its JSON form.

    *downstream* says whether *key* is a downstream key (its *keys* is the key itself, with what
    it waits for) or an upstream one (*keys* are where it goes). *refused* is the ``ValueError``
    message Airflow would audit-log (``failed to map partition_key``); *counts_as* the member
    spelling a rollup counts the key as (*also_counts_as*: the second occurrence's, for a naive
    local time on a repeated hour such as Berlin's ``2026-10-25T02``), and *never_counts* why a core
    rollup would hold it
    without counting it. *fan_out* is ``{"count", "cap", "cap_source"}`` when the key maps to
    several keys.
    """

    mapper: str
    key: str
    downstream: bool
    keys: tuple[KeyExplanation, ...] = ()
    refused: str | None = None
    counts_as: str | None = None
    also_counts_as: tuple[str, ...] = ()
    never_counts: str | None = None
    fan_out: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """Whether the key is mapped and, for a rollup, counted."""
        return self.refused is None and self.never_counts is None

    def to_dict(self) -> dict[str, Any]:
        """Return the explanation as plain JSON types, with ``ok`` and each key's ``waits_for_count``."""
        data = asdict(self)
        for item in data["keys"]:
            item["waits_for_count"] = None if item["waits_for"] is None else len(item["waits_for"])
        return {**data, "ok": self.ok}


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def explain_key(mapper: Any, key: str) -> KeyExplanation:
    """
    Return what the downstream *key* of *mapper* means: its ``partition_date`` and, for a rollup, its wait.

    :raises ValueError: (the mapper's) if *key* is not a downstream key a rollup *mapper* writes.
    """
    from airflow_partitions.lateness import late_at
    from airflow_partitions.tools.rollup_view import RollupView

    try:
        partition_date = _iso(mapper.to_partition_date(key))
    except (ValueError, TypeError):
        partition_date = None
    try:
        late = _iso(late_at(mapper, key))
    except ValueError:
        late = None
    rollup = RollupView.of(mapper)
    if rollup is None:
        return KeyExplanation(key, partition_date, late_at=late)
    wait = rollup.wait(key)
    return KeyExplanation(
        key,
        partition_date,
        waits_for=wait.awaited,
        wait_policy=wait.policy,
        closes_at=_iso(wait.closes_at),
        needed=wait.needed,
        fires_at=_iso(wait.fires_at),
        fires_at_below_minimum=_iso(wait.fires_at_below_minimum),
        rerun_policy=wait.rerun_policy,
        members=tuple(mapper.membership(key))
        if hasattr(mapper, "membership") and mapper.window.listings()
        else None,
        late_at=late,
    )


def explain(mapper: Any, key: str, *, downstream: bool = False) -> Explanation:
    """
    Explain what *mapper* (a core mapper, ours or Airflow's) does with the partition *key*.

    Upstream (default): ``explain(TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone=
    "America/New_York"), input_timezone="UTC"), window=TemporalWindow(Hour())), "2026-03-08T05")``
    says the key goes to ``2026-03-08`` (``partition_date`` ``2026-03-08T00:00:00-05:00``), counts as
    ``2026-03-08T05``, and that the day waits for 23 keys, ``2026-03-08T05`` … ``2026-03-09T03``.
    A key the mapper refuses is not an error here: :attr:`Explanation.refused` holds the message
    Airflow would audit-log. A fan-out's key count is compared with its cap
    (``max_downstream_keys`` or ``[scheduler] partition_mapper_max_downstream_keys``).

    With *downstream*, *key* is a downstream key (``2026-03-08``) of a rollup: what it waits for;
    a key the rollup does not write (``2025-W53``, a week that does not exist) is
    :attr:`Explanation.refused` with the mapper's reason. Members an Airflow Variable lists are read
    now (not as last read, up to a minute ago).

    :raises ValueError: naming the key, if *downstream* and *mapper* is not a rollup.
    """
    from airflow_partitions.composite import runtime_variables
    from airflow_partitions.mapping import downstream_keys, fan_out_cap
    from airflow_partitions.tools.rollup_view import RollupView

    for variable in runtime_variables(mapper):
        variable.read_now()  # each question reads the members as they are now, as status does
    name = type(mapper).__name__
    rollup = RollupView.of(mapper)
    if downstream:
        if rollup is None:
            raise ValueError(
                f"{name} is not a rollup: only a rollup (RollupMapper, TemporalRollupMapper, "
                f"DimensionRollupMapper) lists the upstream keys of a downstream key such as {shown(key)}."
            )
        try:
            return Explanation(name, key, True, (explain_key(mapper, key),))
        except ValueError as err:  # not a key the rollup writes (2025-W53: no such week)
            return Explanation(name, key, True, refused=str(err))
    try:
        keys = downstream_keys(mapper, key)
    except ValueError as err:
        return Explanation(name, key, False, refused=str(err))
    fan_out = None
    if len(keys) > 1 or hasattr(mapper, "downstream_mapper"):
        cap, source = fan_out_cap(mapper.max_downstream_keys)
        fan_out = {"count": len(keys), "cap": cap, "cap_source": source}
    counts_as = never = None
    also: tuple[str, ...] = ()
    if rollup is not None:
        counts_as, *rest = rollup.counts_as(key) or (None,)
        also = tuple(rest)
        # Only Airflow's rollup holds a key it never counts: ours refuse such a key on arrival.
        missed = [] if rollup.ours else [k for k in keys if rollup.never_counts(key, k)]
        if missed:
            counts_as, never = (
                None,
                (
                    f"Airflow's RollupMapper compares keys by spelling: {shown(key)} is not one of the keys "
                    f"{missed[0]!r} waits for, so the pending run holds it and never counts it."
                ),
            )
    explained = tuple(explain_key(mapper, k) for k in keys) if len(keys) <= 50 else ()
    if not explained:
        explained = tuple(KeyExplanation(k, None) for k in keys)
    return Explanation(
        name,
        key,
        False,
        explained,
        counts_as=counts_as,
        also_counts_as=also,
        never_counts=never,
        fan_out=fan_out,
    )
