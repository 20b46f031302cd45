"""
Find partitioned set-ups that hold, refuse or starve, before a scheduler does: :func:`check`.

:func:`check` loads a Dag folder as the dag-processor does, works out sample keys for every
producer of a partitioned asset and pushes them through every consumer's mapper
(:mod:`~airflow_partitions.tools.findings`); here, what holds for the folder, its producers and
its consumers' configuration as a whole. Each :class:`~airflow_partitions.tools.findings.Finding`
is one line: what is wrong and the fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from airflow_partitions.business import BusinessDayWindow
from airflow_partitions.composite import DimensionWindow
from airflow_partitions.deadlines import CompletionDeadline
from airflow_partitions.grains.zones import FIXED_ZONE
from airflow_partitions.members import Unavailable, VariableMembers
from airflow_partitions.temporal import SlidingWindow
from airflow_partitions.tools.findings import (
    TICK_LIMIT,
    Finding,
    completion_findings,
    key_findings,
    naive_local_findings,
    sample_keys,
    starvation_findings,
)
from airflow_partitions.tools.loading import Consumer, DagFolder, Producer, consumer_mappers, did_you_mean
from airflow_partitions.tools.rollup_view import RollupView


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


def _stored(obj: Any) -> dict[str, Any]:
    try:
        data = obj.serialize()
    except Exception:
        return {}
    return data if isinstance(data, dict) else {}


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
    """
    Report a Variable a consumer's window lists members from that is missing or malformed.

    Malformed includes a list whose members a rollup cannot group: some with a group, some without
    one, where no lookup places them (:meth:`~airflow_partitions.members.MemberList.grouped`).
    """
    window = getattr(c.mapper, "window", None)
    listings = window.listings() if isinstance(window, DimensionWindow) else {}
    variables = [(name, v) for name, v in listings.items() if isinstance(v, VariableMembers)]
    if not variables:
        return []
    read = getattr(c.mapper, "members_read", lambda: None)()
    problems = {(name, v): problem[0] for name, v in variables if (problem := v.problem()) is not None}
    if isinstance(read, Unavailable) and not problems:  # the groups, not a Variable's JSON
        problems = {(name, v): read.reason for name, v in variables}
    return [
        Finding(
            "error",
            c.dag_id,
            c.asset,
            f"the members of {name!r}: {problem}",
            f'set it, e.g. airflow variables set {variable.name} \'[{{"value": "store-001", "group": '
            '"north"}, {"value": "store-009", "start": "2026-04-06", "group": "south"}]\'; until then every '
            "key for this rollup is refused and its pending runs wait (the scheduler logs it once a minute; "
            "fixed, `airflow-partitions requeue` takes back the keys refused meanwhile)",
        )
        for (name, variable), problem in problems.items()
    ]


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
    samples = sample_keys(folder)
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

        broken = _variable_findings(c)
        findings += broken
        for sample in [] if broken else feeds:  # keys meet members no one can know yet: said once, above
            findings += key_findings(c, sample) + naive_local_findings(c, sample)
            if rollup is not None:
                findings += starvation_findings(c, rollup, sample)
                if sample.complete and len(feeds) == 1:
                    findings += completion_findings(c, rollup, sample)
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

    A folder without a Dag (no Dag file, or only files Airflow skips) is one ``error`` naming it:
    nothing checked is no pass, and a wrong path in a CI job would otherwise pass for ever.

    :raises ValueError: if *dag_folder* does not exist.
    """
    folder = consumer_mappers(dag_folder)
    if folder.dags or folder.import_errors:
        return check_dags(folder)
    return [
        Finding(
            "error",
            str(dag_folder),
            "",
            "no Dags found: the folder holds no Dag file Airflow loads, so nothing was checked",
            "pass the Dag folder ([core] dags_folder) or a Dag file; Airflow skips files listed in "
            ".airflowignore and, in safe mode ([core] dag_discovery_safe_mode), files without the words "
            "'airflow' and 'dag'",
        )
    ]
