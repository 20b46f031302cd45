"""
What a consumer's mapper does with a producer's sample keys: the findings of :func:`check`, key by key.

Each :class:`Finding` is one line: what is wrong and the fix. The sample keys of a Dag folder's
producers (:func:`sample_keys`: from their timetables, :mod:`~airflow_partitions.tools.samples`,
or declared with :func:`~airflow_partitions.example_keys`; a consumer that writes assets passes its
own downstream keys on) are pushed through every consumer's mapper. What holds for a Dag folder as
a whole, and :func:`~airflow_partitions.tools.check` itself, are in
:mod:`~airflow_partitions.tools.folder_findings`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from airflow_partitions.business import BusinessDayWindow
from airflow_partitions.deadlines import CompletionDeadline
from airflow_partitions.grains.keys import read_dated, shown
from airflow_partitions.grains.zones import offset_changes
from airflow_partitions.mapping import downstream_keys, fan_out_cap
from airflow_partitions.rollup import CountingRollupMapper
from airflow_partitions.temporal import SlidingWindow, TemporalMapper, TemporalRollupMapper
from airflow_partitions.tools.loading import Consumer, DagFolder
from airflow_partitions.tools.rollup_view import RollupView
from airflow_partitions.tools.samples import timetable_samples

#: Pending partitioned runs the scheduler evaluates per loop, oldest first.
TICK_LIMIT = 500
#: Downstream periods whose awaited keys are mapped back, per consumer and producer.
ROUND_TRIPS = 3


@dataclass(frozen=True)
class Finding:
    """
    One problem :func:`check` found: *severity* (``error``, ``warning`` or ``info``), where, what, the fix.

    *dag_id* and *asset* name the consumer (or the producer, or for an import error the file in
    *dag_id*, *asset* empty); *message* and *fix* are one line each.
    """

    severity: str
    dag_id: str
    asset: str
    message: str
    fix: str

    def to_dict(self) -> dict[str, str]:
        """Return the finding as a JSON object."""
        return asdict(self)


@dataclass(frozen=True)
class SampleKeys:
    """Sample keys a producer writes to an asset: runs of consecutive keys, and whether they are all."""

    producer: str
    asset: str
    runs: tuple[tuple[str, ...], ...]
    complete: bool  # every key the producer writes in those spans (keyed ahead), not examples


def _mapped(mapper: Any, key: str) -> list[str]:
    """Return the downstream keys of *key* (``[]`` if the mapper refuses it)."""
    try:
        return downstream_keys(mapper, key)
    except ValueError:
        return []


def sample_keys(folder: DagFolder) -> dict[str, list[SampleKeys]]:
    """Return, per asset name, the sample keys of each of its producers (consumers pass theirs on)."""
    found: dict[tuple[str, str], SampleKeys] = {}
    for p in folder.producers:
        walked = tuple(tuple(run) for run in timetable_samples(p.timetable))
        if walked or p.example_keys:
            found[p.dag_id, p.asset] = SampleKeys(
                p.dag_id, p.asset, walked or (p.example_keys,), bool(walked)
            )
    for _ in folder.producers:  # a chain of consumers settles within one pass per producer
        changed = False
        for p in folder.producers:
            inputs = [c for c in folder.consumers if c.dag_id == p.dag_id]
            upstream = [(c, k) for c in inputs for k in list(found.values()) if k.asset == c.asset]
            if (p.dag_id, p.asset) in found or not upstream:
                continue
            runs = tuple(
                tuple(dict.fromkeys(d for key in run for d in _mapped(c.mapper, key)))
                for c, k in upstream
                for run in k.runs
            )
            found[p.dag_id, p.asset] = SampleKeys(
                p.dag_id, p.asset, runs, all(k.complete for _, k in upstream)
            )
            changed = True
        if not changed:
            break
    by_asset: dict[str, list[SampleKeys]] = {}
    for keys in found.values():
        by_asset.setdefault(keys.asset, []).append(keys)
    return by_asset


def naive_local_findings(c: Consumer, sample: SampleKeys) -> list[Finding]:
    """Say what our temporal rollup does with naive local times a producer writes in a zone with DST."""
    mapper = getattr(c.mapper, "upstream_mapper", None)
    if not isinstance(c.mapper, TemporalRollupMapper) or not isinstance(mapper, TemporalMapper):
        return []
    zone = mapper.input_timezone or mapper.grain.timezone
    naive = [k for run in sample.runs for k in run if _is_naive_time(k, mapper.input_format)]
    changes = offset_changes(zone, 2026)
    if not naive or not changes:
        return []
    # The local wall time of each 2026 change: the repeated hour starts at the change read with
    # the offset after it, the skipped one at the change read with the offset before it.
    examples = []
    for at, before, after in changes:
        if after < before:
            wall = (at + after).replace(tzinfo=None)
            examples.append(
                f"a key of the hour repeated when DST ends ({wall:%Y-%m-%dT%H}) counts for both occurrences"
            )
        else:
            wall = (at + before).replace(tzinfo=None)
            examples.append(
                f"one in the hour skipped when it starts ({wall:%Y-%m-%dT%H}) counts as the hour after it"
            )
    return [
        Finding(
            "info",
            c.dag_id,
            c.asset,
            f"{len(naive)} sample keys from {sample.producer}, such as {shown(naive[0])}, are naive local "
            f"times read in {zone!r}, which has daylight saving time: " + ", and ".join(examples),
            "none needed: a producer looping over local hours completes every day; write keys with their "
            "offset (%z) or in UTC to name each hour alone",
        )
    ]


def _is_naive_time(key: str, input_format: str | None) -> bool:
    try:
        when, dated = read_dated(key, input_format)
    except ValueError:
        return False
    return when.tzinfo is None and not dated


def _awaited(rollup: RollupView, period: str) -> frozenset[str] | None:
    """Return the keys the rollup's run for *period* waits for, or ``None`` if its window fails."""
    try:
        return rollup.awaited(period)
    except ValueError:
        return None


def key_findings(c: Consumer, sample: SampleKeys) -> list[Finding]:
    """Keys refused or never counted, fan-outs over the cap, round trips that miss (part a, c)."""
    rollup = RollupView.of(c.mapper)
    keys = list(dict.fromkeys(k for run in sample.runs for k in run))
    mapped = _map_keys(c.mapper, rollup, keys)
    where = f"{len(keys)} sample keys from {sample.producer}"
    return (
        _refused_findings(c, mapped, where)
        + _held_findings(c, mapped, where)
        + _fan_out_findings(c, mapped, f"from {sample.producer}")
        + (_round_trip_findings(c, rollup, keys) if rollup is not None else [])
    )


@dataclass
class _Mapped:
    """What a consumer's mapper does with a producer's sample keys (:func:`_map_keys`)."""

    #: ``(key, why)`` of the keys the mapper cannot read.
    unread: list[tuple[str, str]] = field(default_factory=list)
    #: ``(key, why)`` of the keys it reads but our rollup refuses on arrival.
    uncounted: list[tuple[str, str]] = field(default_factory=list)
    #: ``(key, downstream key)`` of the keys Airflow's rollup holds without counting them.
    held: list[tuple[str, str]] = field(default_factory=list)
    #: The downstream keys some sample key counts towards.
    counting: set[str] = field(default_factory=set)
    #: The most downstream keys one key has, and that key.
    widest: tuple[int, str] = (0, "")


def _map_keys(mapper: Any, rollup: RollupView | None, keys: list[str]) -> _Mapped:
    """Map each of *keys* through *mapper* (*rollup*: its :class:`RollupView`, if a rollup)."""
    mapped = _Mapped()
    for key in keys:
        try:
            down = downstream_keys(mapper, key)
        except ValueError as err:
            readable = rollup is not None and rollup.ours and _routes(mapper, key)
            (mapped.uncounted if readable else mapped.unread).append((key, str(err)))
            continue
        if len(down) > mapped.widest[0]:
            mapped.widest = (len(down), key)
        if rollup is not None and not rollup.ours:
            for d in down:
                if key in (_awaited(rollup, d) or {key}):
                    mapped.counting.add(d)
                else:
                    mapped.held.append((key, d))
    return mapped


def _refused_findings(c: Consumer, mapped: _Mapped, where: str) -> list[Finding]:
    """Report the sample keys the mapper cannot read, and those our rollup refuses on arrival."""
    out = []
    if mapped.unread:
        key, why = mapped.unread[0]
        out.append(
            Finding(
                "error",
                c.dag_id,
                c.asset,
                f"{len(mapped.unread)} of {where} cannot be read, e.g. {shown(key)}: {why}",
                "make the producer write keys the consumer's mapper reads, or give the mapper their format",
            )
        )
    if mapped.uncounted:
        key, why = mapped.uncounted[0]
        out.append(
            Finding(
                "warning",
                c.dag_id,
                c.asset,
                f"{len(mapped.uncounted)} of {where} are refused on arrival (one audit-log row each), "
                f"e.g. {why}",
                "none if the rollup should ignore them; else stop writing them or widen the window",
            )
        )
    return out


def _held_findings(c: Consumer, mapped: _Mapped, where: str) -> list[Finding]:
    """
    Report the sample keys Airflow's rollup holds but never counts.

    An error where nothing the producer writes counts towards that period (a spelling the window
    does not await), else a warning: a key beside the members (a weekend day of a business-day
    month, which the info of the documented pairing explains instead).
    """
    blocking = [(key, d) for key, d in mapped.held if d not in mapped.counting]
    extra = [(key, d) for key, d in mapped.held if d in mapped.counting]
    out = []
    for found, severity, effect in (
        (blocking, "error", "its period counts none of the producer's keys and would wait forever"),
        (extra, "warning", "it never counts, and its period can complete only on the keys it awaits"),
    ):
        if not found or (
            severity == "warning" and isinstance(getattr(c.mapper, "window", None), BusinessDayWindow)
        ):
            continue
        held_key, held_down = found[0]
        held_keys = len({key for key, _ in found})
        out.append(
            Finding(
                severity,
                c.dag_id,
                c.asset,
                f"{held_keys} of {where} are held but never counted "
                f"(RollupMapper compares spellings), e.g. {shown(held_key)}, not among the keys "
                f"{held_down!r} waits for: {effect}",
                "write keys as the window spells them, or use TemporalRollupMapper, which counts periods",
            )
        )
    return out


def _fan_out_findings(c: Consumer, mapped: _Mapped, where: str) -> list[Finding]:
    """Report a sample key that fans out to more downstream keys than the scheduler takes."""
    cap, source = fan_out_cap(getattr(c.mapper, "max_downstream_keys", None))
    widest, key = mapped.widest
    if widest <= cap:
        return []
    return [
        Finding(
            "error",
            c.dag_id,
            c.asset,
            f"{shown(key)} {where} fans out to {widest} keys, more than {source}: the scheduler skips it",
            f"pass max_downstream_keys={widest} or more, or a coarser window",
        )
    ]


def _routes(mapper: CountingRollupMapper, key: str) -> bool:
    try:
        mapper.route(key)
    except ValueError:
        return False
    return True


def _round_trip_findings(c: Consumer, rollup: RollupView, keys: list[str]) -> list[Finding]:
    """Report a rollup waiting for a key that maps to another period (it would wait forever)."""
    periods = list(dict.fromkeys(d for k in keys for d in _mapped(c.mapper, k)))[:ROUND_TRIPS]
    for period in periods:
        try:
            expected = rollup.awaited(period)
        except ValueError as err:
            return [
                Finding(
                    "error",
                    c.dag_id,
                    c.asset,
                    f"the run for {period!r} cannot list the keys it waits for: {err}",
                    "pair a window whose members nest in the mapper's period",
                )
            ]
        for awaited in sorted(expected):
            back = _mapped(c.mapper, awaited)
            if period not in back:
                return [
                    Finding(
                        "error",
                        c.dag_id,
                        c.asset,
                        f"the run for {period!r} waits for {awaited!r}, which maps to "
                        f"{back[0] if back else 'nothing (refused)'!r}: it would wait forever",
                        "pair a window whose members nest in the mapper's period, in the mapper's time zone",
                    )
                ]
    return []


def completion_findings(c: Consumer, rollup: RollupView, sample: SampleKeys) -> list[Finding]:
    """Report a period inside a keyed-ahead producer's span waiting for keys it never writes (part b)."""
    # The first and last periods may be only partly inside the span; of a sliding window's, the
    # first and last periods - 1 windows (their other members are the producer's, outside it).
    window = getattr(c.mapper, "window", None)
    edge = max(window.periods - 1, 1) if isinstance(window, SlidingWindow) else 1
    for run in sample.runs:
        periods = list(dict.fromkeys(d for k in run for d in _mapped(c.mapper, k)))
        for period in periods[edge:-edge]:
            expected = _awaited(rollup, period)
            if expected is None:
                continue  # reported by the round trip
            missing = rollup.missing(period, run)
            if not missing:
                continue
            deadline = isinstance(rollup.policy, CompletionDeadline)
            return [
                Finding(
                    "warning" if deadline else "error",
                    c.dag_id,
                    c.asset,
                    f"the run for {period!r} waits for {len(expected)} keys, {len(missing)} of which "
                    f"{sample.producer} never writes (e.g. {', '.join(map(repr, missing[:3]))}): it "
                    + ("fires only at its deadline, incomplete" if deadline else "would wait forever"),
                    "choose a window of the keys the producer writes (BusinessDayWindow for weekdays, our "
                    "TemporalWindow for local days), or make the producer write them",
                )
            ]
    return []


def starvation_findings(c: Consumer, rollup: RollupView, sample: SampleKeys) -> list[Finding]:
    """Report a runtime producer feeding a rollup that can stay incomplete (part d)."""
    policy = rollup.policy
    if sample.complete or isinstance(policy, CompletionDeadline):
        return []
    size = max(
        (len(_awaited(rollup, d) or ()) for k in sample.runs[0][:1] for d in _mapped(c.mapper, k)),
        default=0,
    )
    return [
        Finding(
            "warning",
            c.dag_id,
            c.asset,
            f"{sample.producer} chooses its keys at runtime, and one run may add hundreds "
            "(add_partitions takes any number): each period a burst touches opens a pending run, which "
            f"stays pending under {policy!r} until all {size or 'its'} keys of that period arrive. The "
            f"scheduler evaluates only the {TICK_LIMIT} oldest pending partitioned runs per loop, so one "
            f"run adding a key to each of {TICK_LIMIT} periods it leaves incomplete (a replay of "
            f"{TICK_LIMIT} days, one hour each) stops every partitioned consumer of the deployment",
            "wait with CompletionDeadline(grace) (it fires incomplete periods after their end), or make "
            "sure each run completes the periods it touches",
        )
    ]
