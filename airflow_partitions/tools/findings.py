"""
Find partitioned set-ups that hold, refuse or starve, before a scheduler does.

:func:`check` loads a Dag folder as the dag-processor does, works out sample keys for every
producer of a partitioned asset (:mod:`~airflow_partitions.tools.samples`; a consumer that
writes assets passes its own downstream keys on) and pushes them through every consumer's
mapper. Each :class:`Finding` is one line: what is wrong and the fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from airflow_partitions.business import BusinessDayWindow
from airflow_partitions.composite import DimensionWindow
from airflow_partitions.deadlines import CompletionDeadline
from airflow_partitions.grains.keys import read_dated, shown
from airflow_partitions.grains.zones import FIXED_ZONE, offset_changes
from airflow_partitions.mapping import downstream_keys, fan_out_cap
from airflow_partitions.members import VariableMembers
from airflow_partitions.rollup import CountingRollupMapper
from airflow_partitions.temporal import SlidingWindow, TemporalMapper, TemporalRollupMapper
from airflow_partitions.tools.loading import Consumer, DagFolder, Producer, consumer_mappers, did_you_mean
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
class _Keys:
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


def _sample_keys(folder: DagFolder) -> dict[str, list[_Keys]]:
    """Return, per asset name, the sample keys of each of its producers (consumers pass theirs on)."""
    found: dict[tuple[str, str], _Keys] = {}
    for p in folder.producers:
        walked = tuple(tuple(run) for run in timetable_samples(p.timetable))
        if walked or p.example_keys:
            found[p.dag_id, p.asset] = _Keys(p.dag_id, p.asset, walked or (p.example_keys,), bool(walked))
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
            found[p.dag_id, p.asset] = _Keys(p.dag_id, p.asset, runs, all(k.complete for _, k in upstream))
            changed = True
        if not changed:
            break
    by_asset: dict[str, list[_Keys]] = {}
    for keys in found.values():
        by_asset.setdefault(keys.asset, []).append(keys)
    return by_asset


def _zones(data: Any) -> Iterator[str]:
    """Yield every time zone name in a serialized form (``timezone``, ``input_timezone`` … fields)."""
    if isinstance(data, dict):
        for name, value in data.items():
            if isinstance(value, str) and name.endswith("timezone"):
                yield value
            else:
                yield from _zones(value)
    elif isinstance(data, list):
        for value in data:
            yield from _zones(value)


def _has_dst(name: str) -> bool:
    try:
        zone = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return datetime(2026, 1, 1, tzinfo=zone).utcoffset() != datetime(2026, 7, 1, tzinfo=zone).utcoffset()


def _zone_findings(dag_id: str, asset: str, stored: Any) -> list[Finding]:
    return [
        Finding(
            "warning",
            dag_id,
            asset,
            f"time zone {zone!r} is a fixed offset with no daylight saving time, not the region's local "
            "time.",
            "name the region's IANA zone (America/New_York for EST), or 'UTC' for a fixed clock",
        )
        for zone in sorted(set(_zones(stored)))
        if FIXED_ZONE.fullmatch(zone)
    ]


def _naive_key_findings(producer: Producer) -> list[Finding]:
    """Warn of a cron producer writing naive local hours in a zone with DST (one hour is spelled twice)."""
    data = _stored(producer.timetable)
    key_format, zone = data.get("key_format"), data.get("timezone")
    if not isinstance(key_format, str) or not isinstance(zone, str) or "%z" in key_format:
        return []
    if not any(code in key_format for code in ("%H", "%I")) or not _has_dst(zone):
        return []
    return [
        Finding(
            "warning",
            producer.dag_id,
            producer.asset,
            f"keys {key_format!r} are naive local times in {zone!r}: the repeated hour of the fall-back "
            "night "
            "gets one key for two hours, and the skipped spring hour none.",
            "add %z to key_format, or key in timezone='UTC'",
        )
    ]


def _naive_local_findings(c: Consumer, sample: _Keys) -> list[Finding]:
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


def _stored(obj: Any) -> dict[str, Any]:
    try:
        data = obj.serialize()
    except Exception:
        return {}
    return data if isinstance(data, dict) else {}


def _awaited(rollup: RollupView, period: str) -> frozenset[str] | None:
    """Return the keys the rollup's run for *period* waits for, or ``None`` if its window fails."""
    try:
        return rollup.awaited(period)
    except ValueError:
        return None


def _key_findings(c: Consumer, sample: _Keys) -> list[Finding]:
    """Keys refused or never counted, fan-outs over the cap, round trips that miss (part a, c)."""
    mapper, out, where = c.mapper, [], f"from {sample.producer}"
    rollup = RollupView.of(mapper)
    keys = list(dict.fromkeys(k for run in sample.runs for k in run))
    unread: list[tuple[str, str]] = []
    uncounted: list[tuple[str, str]] = []
    held: list[tuple[str, str]] = []
    counting: set[str] = set()  # downstream keys some sample key counts towards
    widest = (0, "")
    for key in keys:
        try:
            down = downstream_keys(mapper, key)
        except ValueError as err:
            readable = rollup is not None and rollup.ours and _routes(mapper, key)
            (uncounted if readable else unread).append((key, str(err)))
            continue
        if len(down) > widest[0]:
            widest = (len(down), key)
        if rollup is not None and not rollup.ours:
            for d in down:
                if key in (_awaited(rollup, d) or {key}):
                    counting.add(d)
                else:
                    held.append((key, d))
    if unread:
        key, why = unread[0]
        out.append(
            Finding(
                "error",
                c.dag_id,
                c.asset,
                f"{len(unread)} of {len(keys)} sample keys {where} cannot be read, e.g. {shown(key)}: {why}",
                "make the producer write keys the consumer's mapper reads, or give the mapper their format",
            )
        )
    if uncounted:
        key, why = uncounted[0]
        out.append(
            Finding(
                "warning",
                c.dag_id,
                c.asset,
                f"{len(uncounted)} of {len(keys)} sample keys {where} are refused on arrival "
                "(one audit-log row "
                f"each), e.g. {why}",
                "none if the rollup should ignore them; else stop writing them or widen the window",
            )
        )
    # Held by Airflow's rollup, never counted: an error where nothing the producer writes counts
    # towards that period (a spelling the window does not await), else a key beside the members
    # (a weekend day of a business-day month: the info of the documented pairing says so).
    blocking = [(key, d) for key, d in held if d not in counting]
    extra = [(key, d) for key, d in held if d in counting]
    for found, severity, effect in (
        (blocking, "error", "its period counts none of the producer's keys and would wait forever"),
        (extra, "warning", "it never counts, and its period can complete only on the keys it awaits"),
    ):
        if not found or (
            severity == "warning" and isinstance(getattr(mapper, "window", None), BusinessDayWindow)
        ):
            continue
        held_key, held_down = found[0]
        held_keys = len({key for key, _ in found})
        out.append(
            Finding(
                severity,
                c.dag_id,
                c.asset,
                f"{held_keys} of {len(keys)} sample keys {where} are held but never counted "
                f"(RollupMapper compares spellings), e.g. {shown(held_key)}, not among the keys "
                f"{held_down!r} waits for: {effect}",
                "write keys as the window spells them, or use TemporalRollupMapper, which counts periods",
            )
        )
    cap, source = fan_out_cap(getattr(mapper, "max_downstream_keys", None))
    if widest[0] > cap:
        out.append(
            Finding(
                "error",
                c.dag_id,
                c.asset,
                f"{shown(widest[1])} {where} fans out to {widest[0]} keys, more than {source}: "
                "the scheduler skips it",
                f"pass max_downstream_keys={widest[0]} or more, or a coarser window",
            )
        )
    return out + (_round_trip_findings(c, rollup, keys) if rollup is not None else [])


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


def _completion_findings(c: Consumer, rollup: RollupView, sample: _Keys) -> list[Finding]:
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


def _starvation_findings(c: Consumer, rollup: RollupView, sample: _Keys) -> list[Finding]:
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


def _documented_pairing_findings(c: Consumer, rollup: RollupView | None) -> list[Finding]:
    """Say what our rollup adds to Airflow's ``RollupMapper`` over ``BusinessDayWindow`` (docs' pairing)."""
    if rollup is None or rollup.ours or not isinstance(getattr(c.mapper, "window", None), BusinessDayWindow):
        return []
    return [
        Finding(
            "info",
            c.dag_id,
            c.asset,
            "Airflow's RollupMapper compares keys by spelling: under BusinessDayWindow a weekend or holiday "
            "key ('2026-03-07') joins the month's pending run without counting, and a business day spelled "
            "otherwise does not count for it",
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow(...)) "
            "fires the same months, refuses such keys on arrival (audit log) and counts every spelling; "
            "switching changes the stored form, so Airflow clears the Dag's pending rollups once",
        )
    ]


def _sliding_start_findings(c: Consumer) -> list[Finding]:
    """Warn of a sliding window without ``start``: a feed's first windows wait for periods before it."""
    window = getattr(c.mapper, "window", None)
    if not isinstance(window, SlidingWindow) or window.periods == 1 or window.start is not None:
        return []
    return [
        Finding(
            "warning",
            c.dag_id,
            c.asset,
            f"a feed's first {window.periods - 1} windows (a SlidingWindow of {window.periods} periods) "
            "await periods before its first key: unless those keys come (a backfill), each stays a "
            f"pending run that never completes, among the {TICK_LIMIT} the scheduler evaluates per loop",
            "give the window the first period of the data, SlidingWindow(..., start='2026-01-01'): no window "
            "opens before it; or wait with CompletionDeadline(grace) to fire those windows incomplete",
        )
    ]


def _rerun_findings(folder: DagFolder, c: Consumer, rollup: RollupView | None) -> list[Finding]:
    """
    Warn where a rollup that holds keys sent again (HOLD, no deadline) is fed by producers that resend.

    REST clients and Dags of other folders deliver at least once; a producer task with retries, or
    a producer run cleared to re-process, sends its keys again. Under Airflow's ``RerunPolicy.HOLD``
    each such key for a period that ran opens a pending run beside the run that waits until its
    wait policy is met again: the whole period under ``WaitForAll``, *n* keys under
    ``MinimumCount(n)`` (a ``CompletionDeadline`` fires it instead).
    """
    if rollup is None or rollup.rerun_policy != "hold" or isinstance(rollup.policy, CompletionDeadline):
        return []  # (a deadline fires the pending run a key sent again opens)
    producers = [p for p in folder.producers if p.asset == c.asset]
    retrying = sorted(p.dag_id for p in producers if p.retries)
    if producers and not retrying:
        return []
    source = (
        f"tasks of {', '.join(retrying)} that write it have retries (a retried or cleared task sends its "
        "keys again)"
        if retrying
        else "no Dag of this folder produces it: REST clients and other folders deliver at least once"
    )
    return [
        Finding(
            "warning",
            c.dag_id,
            c.asset,
            f"{source}; a key sent again after its period ran opens a pending run beside the run that "
            f"waits until {rollup.policy!r} is met again (rerun policy HOLD), which keys sent again rarely "
            f"do, and takes one of the {TICK_LIMIT} places the scheduler evaluates per loop",
            "on Airflow 3.4 pass rerun_policy='refresh' (rerun with the keys sent again) or 'ignore' (drop "
            "them); on 3.3 remove such runs with `airflow-partitions discard DAG_ID`, or let a "
            "CompletionDeadline fire them",
        )
    ]


def _unchecked_findings(folder: DagFolder) -> list[Finding]:
    """Say which consumer Dags no key reached: no Dag of the folder produces any asset they read."""
    produced = {p.asset for p in folder.producers}
    unfed: dict[str, list[str]] = {}
    for c in folder.consumers:
        unfed.setdefault(c.dag_id, []).append(c.asset)
    return [
        Finding(
            "info",
            dag_id,
            ", ".join(assets),
            "no key reached it: no Dag of this folder produces the assets it reads (REST clients or another "
            "folder do), so what its mappers do with keys was not checked",
            "declare a few keys its producers send with airflow_partitions.example_keys(asset, [...]) in a "
            "Dag file of this folder, or check one key with `airflow-partitions explain`",
        )
        for dag_id, assets in unfed.items()
        if not produced.intersection(assets)
    ]


def _variable_findings(c: Consumer) -> list[Finding]:
    """Report a Variable a consumer's window lists members from that is missing or malformed."""
    window = getattr(c.mapper, "window", None)
    listings = window.listings() if isinstance(window, DimensionWindow) else {}
    findings = []
    for name, listing in listings.items():
        if not isinstance(listing, VariableMembers):
            continue
        try:
            listing.current()
        except ValueError as err:
            findings.append(
                Finding(
                    "error",
                    c.dag_id,
                    c.asset,
                    f"the members of {name!r}: {err}",
                    f'set it, e.g. airflow variables set {listing.name} \'["store-001", {{"value": '
                    '"store-009", "start": "2026-04-06"}]\'; until then every key for this rollup is refused '
                    "and its pending runs are not evaluated (the scheduler logs the error on each loop)",
                )
            )
    return findings


def _unproduced_findings(folder: DagFolder) -> list[Finding]:
    """Report an asset a consumer's runs need that no Dag of the folder produces (part 5a)."""
    produced = {p.asset for p in folder.producers}
    findings = []
    for dag_id in dict.fromkeys(c.dag_id for c in folder.consumers):
        mine = [c for c in folder.consumers if c.dag_id == dag_id]
        needed = sorted(
            {name for c in mine for name in c.needs_also} | {c.asset for c in mine if c.needs_also}
        )
        missing = [name for name in needed if name not in produced]
        if not missing:
            continue
        elsewhere = not any(name in produced for name in needed)
        findings.append(
            Finding(
                "info" if elsewhere else "warning",
                dag_id,
                missing[0],
                f"its runs need {' & '.join(repr(n) for n in needed)}, and no Dag in this folder produces "
                f"{', '.join(repr(n) for n in missing)}: every pending run holds until those keys arrive, "
                f"and counts towards the {TICK_LIMIT} oldest pending runs the scheduler evaluates per loop"
                + (
                    " (none of its assets is produced here: their producers may live in another folder)"
                    if elsewhere
                    else ""
                ),
                "make sure a producer writes those keys (another Dag folder, a REST client), or schedule "
                "the Dag on the assets that are produced",
            )
        )
    return findings


def check_dags(folder: DagFolder) -> list[Finding]:
    """Return the findings for the consumers and producers of *folder* (see :func:`check`), errors first."""
    findings = [
        Finding(
            "error",
            path,
            "",
            " ".join(error.strip().splitlines()[-1:]) or error,
            did_you_mean(error)
            or (
                "fix the configuration as the error says"
                if error.strip().splitlines()[-1:] and error.strip().splitlines()[-1].startswith("ValueError")
                else "fix the file; for a class no plugin registers, install its package in every Airflow "
                "process"
            ),
        )
        for path, error in sorted(folder.import_errors.items())
    ]
    samples = _sample_keys(folder)
    findings += _unproduced_findings(folder)
    for p in folder.producers:
        findings += _naive_key_findings(p) + _zone_findings(p.dag_id, p.asset, _stored(p.timetable))
        if p.at_runtime and not p.example_keys:
            unpartitioned = (
                ""
                if p.partitioned
                else "; its schedule is not partitioned, so an event it emits without add_partitions has "
                "no key (Airflow audit-logs 'missing partition key' and queues no partitioned run)"
            )
            findings.append(
                Finding(
                    "info",
                    p.dag_id,
                    p.asset,
                    "its keys are chosen at runtime and none are declared: nothing it writes can be checked"
                    + unpartitioned,
                    "declare a few with airflow_partitions.example_keys(asset, [...]) in its Dag file",
                )
            )
    for c in folder.consumers:
        from airflow.serialization.encoders import encode_partition_mapper

        findings += _zone_findings(c.dag_id, c.asset, encode_partition_mapper(c.mapper))
        feeds = samples.get(c.asset, [])
        rollup = RollupView.of(c.mapper)
        findings += _documented_pairing_findings(c, rollup) + _sliding_start_findings(c)
        findings += _rerun_findings(folder, c, rollup)

        findings += _variable_findings(c)
        for sample in feeds:
            findings += _key_findings(c, sample) + _naive_local_findings(c, sample)
            if rollup is not None:
                findings += _starvation_findings(c, rollup, sample)
                if sample.complete and len(feeds) == 1:
                    findings += _completion_findings(c, rollup, sample)
    findings += _unchecked_findings(folder)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(dict.fromkeys(findings), key=lambda f: (order[f.severity], f.dag_id, f.asset))


def check(dag_folder: str | Path) -> list[Finding]:
    """
    Load *dag_folder* as the dag-processor does and return what would hold, refuse or starve.

    For every partitioned consumer and each producer of its asset (sample keys from the
    producer's timetable, or declared with :func:`~airflow_partitions.example_keys`; a consumer
    writing assets passes its downstream keys on):

    - ``error``: import errors (a class no plugin registers fails Airflow's serialization);
      an Airflow Variable a window lists members from that is missing or malformed;
      keys the consumer cannot read; keys a core ``RollupMapper`` holds but never counts; a
      period waiting for keys no producer writes (weekends from a weekday producer, 24 naive
      hours of a 23-hour day) or for a key that maps to another period; a fan-out above its cap.
    - ``warning``: keys our rollups refuse on arrival (audit-logged); naive local hours keyed in
      a zone with daylight saving time; fixed-offset zone names (``EST``); a runtime producer
      feeding a ``WaitForAll``/``MinimumCount`` rollup (pending runs can pile up past the
      scheduler's 500 per loop).
      a rollup that holds keys sent again (``WaitForAll``, rerun policy HOLD) fed through the REST
      API or another folder, or by producer tasks with retries.
    - ``info``: a runtime producer declaring no example keys; a consumer no sample key reached.

    :raises ValueError: if *dag_folder* does not exist.
    """
    return check_dags(consumer_mappers(dag_folder))
