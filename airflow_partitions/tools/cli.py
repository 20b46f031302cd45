"""
``airflow-partitions`` (console script) and ``airflow partition-tools`` (Airflow's CLI).

Commands: ``explain``, ``check``, ``status``, ``backfill --missing``, ``requeue``, ``discard``,
``clean``. Both faces share one argument list and one handler per command, over
:mod:`airflow_partitions.tools`.
Exit codes: 0 ok, 1 ``check`` found errors, ``explain``'s key is refused (or would never count),
``status`` found a partition holding keys that never count or starved by the 500-per-loop limit,
or ``discard`` was given an unknown Dag or one that is not a partitioned consumer, 2 usage
error (bad arguments, a mapper expression or Dag that does not load, ``requeue --yes`` while
the scheduler has yet to clear runs of an older rollup definition). Airflow is imported only
when a command runs, reading ``airflow.cfg`` and ``AIRFLOW__*`` variables as ``airflow`` does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

OK, FOUND, USAGE = 0, 1, 2
WIDTH = 120

EXPLAIN_EXAMPLES = """\
examples:
  airflow-partitions explain --mapper 'TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"), window=TemporalWindow(Hour()))' 2026-03-08T05
  airflow-partitions explain --dag-folder example_dags --dag weather_local_day_jfk 2013-03-10T05
  airflow-partitions explain --dag-folder example_dags --dag weather_local_day_jfk --downstream 2013-03-10
  airflow-partitions explain --from-db --dag weather_local_day_jfk --asset weather_jfk_hourly 2013-03-10T05 --json

exit codes: 0 mapped (and counted), 1 refused or never counted, 2 usage error"""  # noqa: E501 (commands)

CHECK_EXAMPLES = """\
examples:
  airflow-partitions check example_dags
  airflow-partitions check example_dags --json

exit codes: 0 no errors (warnings and info may be listed), 1 errors found, 2 usage error"""

STATUS_EXAMPLES = """\
examples:
  airflow-partitions status weather_local_day_jfk
  airflow-partitions status weather_local_day_jfk --key 2013-03-10 --json
  airflow-partitions status weather_airport_day --start 2013-03 --end 2013-03 --state "ran incomplete"

exit codes: 0 nothing held, 1 a partition (of those selected) holds keys that never count, or a pending
  run of the Dag is starved (queue > 500), 2 usage error"""

BACKFILL_EXAMPLES = """\
examples:
  airflow-partitions backfill --missing it_backfill_daily --start 2026-03-01 --end 2026-03-07
  airflow-partitions backfill --missing it_backfill_daily --start 2026-03-01 --end 2026-03-07 --yes

exit codes: 0 listed (dry run) or created, 2 usage error"""

REQUEUE_EXAMPLES = """\
examples:
  airflow-partitions requeue weather_local_day_jfk --start 2026-04-01 --end 2026-04-30
  airflow-partitions requeue weather_local_day_jfk --start 2026-04-01 --end 2026-04-30 --yes

exit codes: 0 listed (dry run) or re-queued, 2 usage error (or, with --yes, runs of the previous
  rollup definition the scheduler has yet to clear: wait for it, then run again)"""

DISCARD_EXAMPLES = """\
examples:
  airflow-partitions discard weather_local_day_jfk
  airflow-partitions discard weather_local_day_jfk --yes
  airflow-partitions discard weather_local_day_jfk --key 2013-03-10 --yes
  airflow-partitions discard weather_local_day_jfk --start 2013-03 --end 2013-04 --json

exit codes: 0 listed (dry run), removed, or nothing to remove, 1 an unknown Dag or one that is not a
  partitioned consumer, 2 usage error"""

CLEAN_EXAMPLES = """\
examples:
  airflow-partitions clean --before 2026-01-01
  airflow-partitions clean --before 2026-01-01 --yes
  airflow-partitions clean --before 2026-01-01 --dag weather_local_day_jfk --json

exit codes: 0 counted (dry run) or removed, 2 usage error"""

#: The largest ``--limit`` and ``--offset``: SQL's LIMIT and OFFSET take a 64-bit integer (SQLite's
#: INTEGER, PostgreSQL's bigint).
MAX_ROWS = 2**63 - 1


def _rows(text: str) -> int:
    """
    Read ``--limit`` or ``--offset``: a whole number from 0 to :data:`MAX_ROWS` (``"50"`` → 50).

    :raises argparse.ArgumentTypeError: naming the text, if it is not one (argparse: exit code 2).
    """
    try:
        rows = int(text)
    except ValueError:
        rows = -1
    if not 0 <= rows <= MAX_ROWS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 0 to {MAX_ROWS}")
    return rows


#: ``--api-url`` and ``--token``: the commands that read or write a deployment's partitions do it
#: through its api-server's REST API instead of its metadata database (managed Airflow).
API_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (
        ("--api-url",),
        {
            "metavar": "URL",
            "help": "ask this api-server (https://airflow.example.com) instead of the metadata database",
        },
    ),
    (
        ("--token",),
        {"help": "the bearer token for --api-url (default: $AIRFLOW_PARTITIONS_API_TOKEN)"},
    ),
]

#: ``(flags, argparse keyword arguments)`` per command: the one definition both CLIs build from.
EXPLAIN_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("key",), {"help": "the partition key: upstream (default) or, with --downstream, downstream"}),
    (("--mapper",), {"help": "a mapper as a Python expression (airflow_partitions and airflow.sdk names)"}),
    (("--dag-folder",), {"help": "a Dag folder (or file), loaded as the dag-processor does"}),
    (("--from-db",), {"action": "store_true", "help": "read --dag from the metadata database (read-only)"}),
    (("--dag",), {"help": "the consumer Dag id (with --dag-folder, --from-db or --api-url)"}),
    (("--asset",), {"help": "the asset name or URI the Dag reads (if it reads several)"}),
    (("--downstream",), {"action": "store_true", "help": "KEY is a downstream key: list what it waits for"}),
    (("--json",), {"action": "store_true", "help": "print JSON instead of text"}),
    *API_ARGS,
]
CHECK_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("dag_folder",), {"help": "the Dag folder (or file) to check"}),
    (("--json",), {"action": "store_true", "help": "print JSON instead of text"}),
]


STATUS_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("dag_id",), {"help": "the partitioned consumer Dag"}),
    (("--key",), {"help": "only this downstream partition key"}),
    (("--start",), {"help": "first time part of a key (2013-03-01; the part after the last '|')"}),
    (("--end",), {"help": "last time part, compared on its own length (2013-03 keeps all of March)"}),
    (
        ("--state",),
        {
            "action": "append",
            "help": "only partitions in this state (repeatable): failed, ran incomplete, never counting, "
            "past deadline, overdue, pending, running, queued, success",
        },
    ),
    (
        ("--all",),
        {"action": "store_true", "help": "every state (without it, text lists what is not success)"},
    ),
    (("--limit",), {"type": _rows, "help": "partitions listed (default 50, 1000 with --json; 0: all)"}),
    (("--offset",), {"type": _rows, "default": 0, "help": "partitions skipped, in key order (paging)"}),
    (
        ("--json",),
        {"action": "store_true", "help": "print JSON (every state unless --state) instead of text"},
    ),
    *API_ARGS,
]
BACKFILL_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (
        ("dag_id",),
        {
            "help": "a Dag whose timetable makes partitions (GrainPartitionTimetable, "
            "ExplicitPartitionTimetable, CronPartitionTimetable)"
        },
    ),
    (
        ("--missing",),
        {
            "action": "store_true",
            "required": True,
            "help": "only partitions without a successful run (the one mode: Airflow's own `airflow "
            "backfill create` reruns whole ranges)",
        },
    ),
    (("--start",), {"required": True, "help": "first partition date, ISO 8601 (naive means UTC)"}),
    (("--end",), {"required": True, "help": "last partition date, inclusive"}),
    (("--yes",), {"action": "store_true", "help": "create the runs (without it: a dry run that lists them)"}),
    (
        ("--include-open",),
        {"action": "store_true", "help": "also partitions not due yet (their period has not ended)"},
    ),
    (("--json",), {"action": "store_true", "help": "print JSON instead of text"}),
    *API_ARGS,
]
REQUEUE_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("dag_id",), {"help": "the partitioned consumer Dag whose rollup definition changed"}),
    (("--start",), {"required": True, "help": "earliest asset event time, ISO 8601 (naive means UTC)"}),
    (("--end",), {"required": True, "help": "latest asset event time, inclusive (a date: to its end)"}),
    (("--yes",), {"action": "store_true", "help": "queue them (without it: a dry run that lists them)"}),
    (("--json",), {"action": "store_true", "help": "print JSON instead of text"}),
    *API_ARGS,
]
DISCARD_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("dag_id",), {"help": "the partitioned consumer Dag"}),
    (
        ("--key",),
        {
            "action": "append",
            "help": "only the pending run of this downstream key, whether or not its period ran (repeatable)",
        },
    ),
    (("--start",), {"help": "only pending runs from this time part of a key (2013-03-01), ran or not"}),
    (("--end",), {"help": "only pending runs to this time part, compared on its own length (2013-03)"}),
    (("--yes",), {"action": "store_true", "help": "remove them (without it: a dry run that lists them)"}),
    (("--json",), {"action": "store_true", "help": "print JSON instead of text"}),
    *API_ARGS,
]
CLEAN_ARGS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (
        ("--before",),
        {
            "required": True,
            "help": "remove rows of pending runs opened before this date, ISO 8601 (naive: UTC)",
        },
    ),
    (("--dag",), {"help": "only this Dag's rows (default: every Dag's)"}),
    (("--yes",), {"action": "store_true", "help": "remove them (without it: a dry run that counts them)"}),
    (("--json",), {"action": "store_true", "help": "print JSON instead of text"}),
]


class UsageError(ValueError):
    """A command's input is not usable (exit code 2)."""


@contextlib.contextmanager
def _quiet() -> Any:
    """Send what Airflow prints while loading Dags to stderr, so stdout holds only the answer."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _source(args: argparse.Namespace) -> Any:
    """Return the :class:`~airflow_partitions.tools.source.Source` to use: ``--api-url``, or the database."""
    from airflow_partitions.tools.source import source

    return source(args.api_url, args.token)


def _wrap(label: str, text: str) -> str:
    """Return *text* after *label*, wrapped at spaces only: a key or run id is never cut."""
    return textwrap.fill(
        text,
        WIDTH,
        initial_indent=f"  {label:<16}",
        subsequent_indent=" " * 18,
        break_long_words=False,
        break_on_hyphens=False,
    )


#: Keys listed in full in text output; a longer list shows its first and last halves of this.
LISTED_KEYS = 100


def _listed(keys: Sequence[str]) -> str:
    """Return *keys* comma-separated, or for more than :data:`LISTED_KEYS` the first and last 50."""
    if len(keys) <= LISTED_KEYS:
        return ", ".join(keys)
    half = LISTED_KEYS // 2
    more = f"… ({len(keys) - LISTED_KEYS} more; --json lists all) …"
    return ", ".join([*keys[:half], more, *keys[-half:]])


def format_explanation(explanation: Any) -> str:
    """Return an :class:`~airflow_partitions.tools.Explanation` as text for a 120-column terminal."""
    e = explanation
    targets = ", ".join(repr(k.key) for k in e.keys[:5]) + (" …" if len(e.keys) > 5 else "")
    if e.downstream:
        lines = [f"{e.mapper}: downstream key {e.key!r}"]
    else:
        lines = [f"{e.mapper}: {e.key!r} → {targets or '(none)'}"]
    if e.refused:
        lines.append(_wrap("REFUSED", e.refused))
    if e.never_counts:
        lines.append(_wrap("NEVER COUNTS", e.never_counts))
    if e.counts_as:
        both = " and ".join([e.counts_as, *e.also_counts_as])
        lines.append(
            _wrap("counts as", both + (" (both occurrences of a repeated hour)" if e.also_counts_as else ""))
        )
    if e.fan_out:
        f = e.fan_out
        verdict = "within" if f["count"] <= f["cap"] else "OVER"
        lines.append(
            _wrap("fan-out", f"{f['count']} keys, {verdict} the cap of {f['cap']} ({f['cap_source']})")
        )
    if len(e.keys) > 1 and all(k.waits_for is None for k in e.keys):  # a fan-out: one line per field
        lines.append(_wrap("keys", _listed([k.key for k in e.keys])))
        dates = dict.fromkeys((e.keys[0].partition_date, e.keys[-1].partition_date))
        lines.append(_wrap("partition_date", " … ".join(d or "(none)" for d in dates)))
        return "\n".join(lines)
    for k in e.keys:
        if len(e.keys) > 1:
            lines.append(f"  {k.key}")
        lines.append(_wrap("partition_date", k.partition_date or "(none)"))
        if k.waits_for is not None:
            lines.append(
                _wrap("waits for", f"{len(k.waits_for)} keys under {k.wait_policy}: {_listed(k.waits_for)}")
            )
        if k.rerun_policy:
            # Under a deadline, the pending run a key opens after the run fires at its deadline.
            deadline = k.rerun_policy == "hold" and k.fires_at is not None
            meaning = RERUN_MEANING[k.rerun_policy] + ("; its deadline then fires it" if deadline else "")
            lines.append(_wrap("sent again", meaning))
        for m in k.members or ():
            read = f", read {m['read_at']}" if m["read_at"] else ""
            group = f" of {m['group']}" if m["group"] else ""
            lines.append(
                _wrap(
                    f"{m['dimension']}s",
                    f"{len(m['awaited'])} awaited{group} ({m['source']}{read}): {_listed(m['awaited'])}",
                )
            )
            for d in m["dated"]:
                span = " ".join(f"{w} {d[f]}" for w, f in (("from", "start"), ("until", "end")) if f in d)
                state = (
                    "awaited" if d["awaited"] else f"not awaited by the period beginning {m['period_begins']}"
                )
                lines.append(_wrap("", f"{d['value']}: {span} (end exclusive), {state}"))
        if k.closes_at:
            lines.append(_wrap("closes at", k.closes_at))
        if k.late_at:
            lines.append(_wrap("late at", f"{k.late_at} without a successful run (expected_within)"))
        if k.fires_at:
            lines.append(_wrap("fires at", f"{k.fires_at} with at least {_count(k.needed, 'key')}"))
            lines.append(_wrap("", f"{k.fires_at_below_minimum} with fewer (and at least one)"))
    return "\n".join(lines)


#: What a key sent again for a period that ran does, per rerun policy (``explain``'s "sent again" line).
RERUN_MEANING = {
    "hold": "hold: a key for the period after it ran opens a pending run beside the run (discard removes it)",
    "refresh": "refresh: a key for the period after it ran fires a run at once with the keys sent again",
    "ignore": "ignore: a key for the period after it ran is dropped",
}


def format_findings(findings: Sequence[Any]) -> str:
    """Return :class:`~airflow_partitions.tools.Finding` rows as text for a 120-column terminal."""
    lines = []
    for f in findings:
        lines.append(f"{f.severity.upper():<8} {f.dag_id}" + (f"  (asset {f.asset})" if f.asset else ""))
        lines.append(textwrap.fill(f.message, WIDTH, initial_indent=" " * 9, subsequent_indent=" " * 9))
        lines.append(
            textwrap.fill(f"fix: {f.fix}", WIDTH, initial_indent=" " * 9, subsequent_indent=" " * 14)
        )
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    lines.append(", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in counts.items()))
    return "\n".join(lines)


def run_explain(args: argparse.Namespace) -> int:
    """Handle ``explain``: print what the mapper does with the key; return the exit code."""
    sources = [bool(args.mapper), bool(args.dag_folder), bool(args.from_db), bool(args.api_url)]
    if sum(sources) != 1 or (args.mapper and args.dag) or (not args.mapper and not args.dag):
        raise UsageError(
            "pass --mapper EXPR, or --dag ID with one of --dag-folder PATH, --from-db and --api-url URL."
        )
    if args.mapper or args.dag_folder:  # worked out here; --from-db and --api-url: by the source
        from airflow_partitions.tools import consumer_mappers, explain, load_mapper
    if args.mapper:
        explanation = explain(load_mapper(args.mapper), args.key, downstream=args.downstream)
    elif args.dag_folder:
        with _quiet():
            mapper = consumer_mappers(args.dag_folder).consumer(args.dag, args.asset).mapper
        explanation = explain(mapper, args.key, downstream=args.downstream)
    else:
        with _quiet():
            explanation = _source(args).explain(
                args.dag, args.key, asset=args.asset, downstream=args.downstream
            )
    print(json.dumps(explanation.to_dict(), indent=2) if args.json else format_explanation(explanation))
    return OK if explanation.ok else FOUND


def run_check(args: argparse.Namespace) -> int:
    """Handle ``check``: print the findings for the Dag folder; return the exit code."""
    from airflow_partitions.tools import check

    with _quiet():
        findings = check(args.dag_folder)
    if args.json:
        print(json.dumps([f.to_dict() for f in findings], indent=2))
    else:
        print(format_findings(findings))
    return FOUND if any(f.severity == "error" for f in findings) else OK


#: Refused keys ``status`` prints (the latest); ``--json`` lists up to
#: :data:`~airflow_partitions.tools.state.LISTED`.
REFUSALS_SHOWN = 3


def format_state(state: Any) -> str:
    """
    Return a :class:`~airflow_partitions.tools.state.ConsumerState` as text for 120 columns.

    A summary of every selected partition (how many in each state, the range of keys, the queue),
    then the page: each partition with its keys counted of awaited (what a pending run has, or
    what a run that ran incomplete ran with), its place in the queue and its missing keys or runs.
    """
    from airflow_partitions.tools.state import LISTED, STATES

    counts = ", ".join(f"{state.states[s]} {s}" for s in STATES if state.states.get(s))
    span = f" from {state.first} to {state.last}" if state.first else ""
    # Every partition of the range, whatever --state selects (the page's count is "showing" below).
    every = sum(state.states.values())
    lines = [f"{state.dag_id}: {_count(every, 'partition')}{span}" + (f": {counts}" if counts else "")]
    lines.append(
        f"  pending partitioned runs in the deployment: {state.pending_total} (the scheduler evaluates the "
        "500 oldest per loop)" + (f"; {state.starved} of this Dag's beyond them" if state.starved else "")
    )
    if state.again:
        lines.append(
            textwrap.fill(
                f"{_count(state.again, 'partition')} that ran (counted by their runs' state) also "
                f"{'has' if state.again == 1 else 'have'} a pending run that keys sent after the run (again, "
                f"or late) opened; Airflow holds it until its wait policy is met again: `airflow-partitions "
                f"discard {state.dag_id}` removes them",
                WIDTH,
                initial_indent="  ",
                subsequent_indent="  ",
            )
        )
    if state.late:
        lines.append(
            f"  {_count(state.late, 'partition')} late: no successful run, the period ended longer ago "
            "than expected_within"
        )
    if state.blocked_ahead:
        lines.append(
            f"  {state.blocked_ahead} pending runs ahead of this Dag's, of the 500 evaluated per loop, "
            "hold only keys that never count"
        )
    shown = len(state.partitions)
    if shown < every:
        lines.append(
            f"  showing {state.offset + 1 if shown else 0}-{state.offset + shown} of the {state.total} "
            "selected (by default those not successful; --all, --state, --start/--end, --limit and --offset "
            "choose)"
        )
    # The state column fits "success · 1 key after it ran, pending" when the page has one.
    width = max([16] + [len(_state_label(p)) + 2 for p in state.partitions])
    if shown:
        lines.append(f"  {'partition':<28}{'state':<{width}}{'keys':>11}  {'queue':>6}  missing / runs")
    for p in state.partitions:
        waiting = p.progress and not p.pending_again  # a pending run's keys, else what its runs ran with
        pending = [k for a in p.progress for k in a.missing]
        # What its runs missed, less what the pending run beside them holds (late keys, not lost).
        held = {k for a in p.progress for k in a.received} if p.pending_again else set()
        missing = (
            pending if waiting else [k for k in p.ran_with.missing if k not in held] if p.ran_with else []
        )
        total = (
            sum(a.missing_total for a in p.progress)
            if waiting
            else p.ran_with.missing_total - (len(p.ran_with.missing) - len(missing))
            if p.ran_with
            else 0
        )
        detail = (
            ", ".join(missing[:3]) + (f" … ({total})" if total > 3 else "")
            if missing
            else ", ".join(f"{run_id} {run_state}" for run_id, run_state in p.runs[-2:])
        )
        queue = f"{p.queue_position}" + ("!" if p.starved else "") if p.queue_position else ""
        head = f"  {p.partition_key:<28}{_state_label(p):<{width}}{_keys(p):>11}  {queue:>6}"
        line = f"{head}  {detail}"
        if len(line) > WIDTH:  # never cut a key or a run id: the detail goes on lines of its own
            line = f"{head}\n" + _wrap("missing" if missing else "runs", detail)
        lines.append(line)
        for a in p.progress:
            for key, why in a.never_counting:
                lines.append(_wrap("never counts", f"{key}: {why}"))
        if p.fires_at:
            lines.append(_wrap("fires at", p.fires_at.isoformat()))
        if p.late_since:
            lines.append(_wrap("late since", p.late_since.isoformat()))
    if state.refusals:
        others = sum(r.other_member for r in state.refusals)
        ruled = sum(r.expected for r in state.refusals) - others
        mistaken = len(state.refusals) - ruled - others
        lines.append(
            f"  {_count(state.refusals_total, 'key')} refused on arrival (Airflow's audit log); of the "
            f"latest {len(state.refusals)}, {ruled} by the calendar's rule, "
            + (f"{others} for other members (another Dag's), " if others else "")
            + f"{mistaken} mistaken"
        )
        shown = state.refusals[-REFUSALS_SHOWN:]
        lines.extend(
            _wrap(
                "other member" if r.other_member else "outside" if r.expected else "refused",
                f"{r.partition_key or ''}: {r.reason}".lstrip(": "),
            )
            for r in shown
        )
        if len(shown) < state.refusals_total:
            lines.append(
                f"  showing the latest {len(shown)} of {state.refusals_total}; --json lists up to {LISTED}"
            )
    return "\n".join(lines)


def _state_label(partition: Any) -> str:
    """Return ``"success"``, or ``"success · 1 key after it ran, pending"`` with a pending run beside it."""
    again = partition.pending_again
    return partition.state + (f" · {_count(partition.again, 'key')} after it ran, {again}" if again else "")


def _keys(partition: Any) -> str:
    """Return ``"20/24"``: upstream keys counted of awaited, pending or as its runs ran with (if it ran)."""
    if partition.progress and not partition.pending_again:
        counted = sum(a.counted for a in partition.progress)
        awaited = sum(a.expected_total or 1 for a in partition.progress)
        return f"{counted}/{awaited}"
    ran = partition.ran_with
    return f"{ran.counted}/{ran.awaited}" if ran else ""


def run_status(args: argparse.Namespace) -> int:
    """Handle ``status``: print a consumer's partitions from the metadata database; return the exit code."""
    from airflow_partitions.tools.state import STATES

    unknown = [s for s in args.state or () if s not in STATES]
    if unknown:
        raise UsageError(f"--state {unknown[0]!r} is not a state; states: {', '.join(STATES)}.")
    wanted = args.state or (
        None if args.all or args.key or args.json else [s for s in STATES if s != "success"]
    )
    limit = args.limit if args.limit is not None else 1000 if args.json else 50
    with _quiet():
        state = _source(args).status(
            args.dag_id,
            partition_key=args.key,
            start=args.start,
            end=args.end,
            states=wanted,
            limit=limit or None,
            offset=args.offset,
        )
    print(json.dumps(state.to_dict(), indent=2) if args.json else format_state(state))
    held = state.states.get("never counting") or state.starved or any(p.starved for p in state.partitions)
    return FOUND if held else OK


def _date(text: str, *, end_of_day: bool = False) -> Any:
    """Parse an ISO 8601 date or time (naive means UTC); *end_of_day*: a bare date means its last instant."""
    from datetime import UTC, date, datetime, time

    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{text!r} is not an ISO 8601 date such as 2026-03-01.") from None
    if end_of_day and len(text) == len(date.min.isoformat()):
        when = datetime.combine(when.date(), time.max)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _count(n: int, noun: str) -> str:
    """Return ``"1 partition"``, ``"2 partitions"``: *n* and *noun*, in the plural unless *n* is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def run_backfill(args: argparse.Namespace) -> int:
    """Handle ``backfill --missing``: list (or, with --yes, create) the runs a range lacks."""
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    source = _source(args)
    with _quiet():
        found = source.missing(args.dag_id, _date(args.start), _date(args.end), now=now)
        opened = [m for m in found if m.is_open(now)]
        missing = found if args.include_open else [m for m in found if not m.is_open(now)]
        runs = source.create_runs(args.dag_id, missing) if args.yes else []
    if args.json:
        left_out = [] if args.include_open else [m.to_dict() for m in opened]
        print(
            json.dumps(
                {"missing": [m.to_dict() for m in missing], "left_out_open": left_out, "created_runs": runs},
                indent=2,
            )
        )
        return OK
    for m in missing:
        due = " (not due yet: its period has not ended)" if m.is_open(now) else ""
        print(f"  {m.partition_key:<28}{', '.join(m.states) or 'never ran'}{due}")
    verb = f"created {_count(len(runs), 'run')}" if args.yes else "dry run: pass --yes to create them"
    print(f"{args.dag_id}: {_count(len(missing), 'partition')} without a successful run; {verb}")
    if opened and not args.include_open:
        first = opened[0]
        due = first.due.isoformat() if first.due else "?"
        print(
            f"  left out {_count(len(opened), 'partition')} not due yet (their period has not ended; "
            f"the first, {first.partition_key!r}, is due {due}): pass --include-open to create them anyway"
        )
    return OK


def format_orphans(orphans: Any) -> str:
    """Return :class:`~airflow_partitions.tools.write.requeue.Orphans` as text for 120 columns."""
    from datetime import UTC

    o = orphans
    start, end = (f"{when.astimezone(UTC):%Y-%m-%d %H:%M:%S}" for when in (o.start, o.end))
    lines = [f"{o.dag_id}: {len(o.events)} stored asset events sent {start} … {end} UTC feed no run"]
    grouped = o.by_downstream_key()
    if grouped:
        lines.append(f"  {'downstream key':<28}{'events':>6}  {'upstream keys':<40}runs")
    for key, events in grouped.items():
        upstream = sorted({e.partition_key for e in events})
        shown = upstream[0] if len(upstream) == 1 else f"{upstream[0]} … {upstream[-1]}"
        ran = ", ".join(o.runs.get(key, ()))
        lines.append(f"  {key:<28}{len(events):>6}  {shown:<40}{ran}"[:WIDTH].rstrip())
    for e in o.events:
        if e.refused:
            lines.append(_wrap("refused", f"{e.partition_key} ({e.asset}): {e.refused.splitlines()[-1]}"))
    if o.stale_pending:
        lines.append(
            _wrap(
                "not yet cleared",
                f"{o.stale_pending} pending runs carry the previous rollup definition: the scheduler clears "
                "them at its next loop, and only then are their events listed here: wait, then run again.",
            )
        )
    queueable = len(o.queueable)
    if o.requeued:
        lines.append(f"re-queued {queueable} events into {len(grouped)} partitions")
    else:
        lines.append(f"dry run: pass --yes to re-queue {queueable} events into {len(grouped)} partitions")
    return "\n".join(lines)


def run_requeue(args: argparse.Namespace) -> int:
    """Handle ``requeue``: list (or, with --yes, queue again) the stored events a Dag's runs lost."""
    start, end = _date(args.start), _date(args.end, end_of_day=True)
    with _quiet():
        orphans = _source(args).orphans(args.dag_id, start, end, write=args.yes)
    print(json.dumps(orphans.to_dict(), indent=2) if args.json else format_orphans(orphans))
    return OK


def format_discarded(found: Any) -> str:
    """Return :class:`~airflow_partitions.tools.write.discard.Discarded` as text for 120 columns."""
    d = found
    if not d.runs:
        return f"{d.dag_id}: no pending partitioned run {d.selection} to remove"
    lines = [f"{d.dag_id}: {_count(len(d.runs), 'pending partitioned run')} {d.selection}"]
    lines.append(f"  {'partition':<28}{'Dag runs':<18}{'since (UTC)':<21}keys received")
    for run in d.runs:
        since = f"{run.opened_at:%Y-%m-%d %H:%M:%S}" if run.opened_at else "?"
        keys = ", ".join(run.received[:3]) + (f" … ({len(run.received)})" if len(run.received) > 3 else "")
        lines.append(f"  {run.partition_key:<28}{', '.join(run.runs[-2:]) or 'none':<18}{since:<21}{keys}")
    if d.removed:
        lines.append(
            f"removed {_count(len(d.runs), 'pending run')} (Dag runs and asset events kept; audit-logged)"
        )
    else:
        lines.append("dry run: pass --yes to remove them (their Dag runs and asset events are kept)")
    return "\n".join(lines)


def run_discard(args: argparse.Namespace) -> int:
    """Handle ``discard``: list (or, with --yes, remove) a Dag's stray pending partitioned runs."""
    with _quiet():
        found = _source(args).stray(
            args.dag_id, keys=args.key, start=args.start, end=args.end, write=args.yes
        )
    print(json.dumps(found.to_dict(), indent=2) if args.json else format_discarded(found))
    return OK


def format_cleaned(found: Any) -> str:
    """Return :class:`~airflow_partitions.tools.write.clean.Cleaned` as text for 120 columns."""
    c = found
    when = f"{c.before:%Y-%m-%d %H:%M:%S} UTC"
    verb = "removed" if c.removed else "would remove"
    lines = [
        f"{verb} {c.pending_rows:,} pending-run rows of runs that fired, opened before {when}, and their "
        f"{c.key_log_rows:,} key-log rows ({_count(len(c.by_dag), 'Dag')})"
    ]
    lines.extend(f"  {dag:<40}{pending:>10,} {logged:>12,}" for dag, (pending, logged) in c.by_dag.items())
    if not c.removed:
        lines.append("dry run: pass --yes to remove them (pending runs, Dag runs and asset events are kept)")
    return "\n".join(lines)


def run_clean(args: argparse.Namespace) -> int:
    """Handle ``clean``: count (or, with --yes, remove) the bookkeeping of partitioned runs that fired."""
    from airflow_partitions.tools.write.clean import clean, fired_rows

    before = _date(args.before)
    with _quiet():
        found = clean(before, dag_id=args.dag) if args.yes else fired_rows(before, dag_id=args.dag)
    print(json.dumps(found.to_dict(), indent=2) if args.json else format_cleaned(found))
    return OK


#: ``name -> (help, description, epilog, arguments, handler)``.
COMMANDS: dict[str, tuple[str, str, str, list, Callable[[argparse.Namespace], int]]] = {
    "explain": (
        "explain what a partition mapper does with one key",
        "Show where an upstream key goes (downstream keys, partition_date, whether a rollup counts it or the "
        "refusal Airflow would audit-log, what its period waits for, a fan-out against its cap), or with "
        "--downstream what a downstream key waits for. The mapper comes from an expression, a Dag folder or "
        "the metadata database, after Airflow's serialization round trip.",
        EXPLAIN_EXAMPLES,
        EXPLAIN_ARGS,
        run_explain,
    ),
    "check": (
        "check a Dag folder's partitioned producers and consumers",
        "Load the Dag folder as the dag-processor does, push sample keys of every producer (from its "
        "timetable, or declared with airflow_partitions.example_keys) through every consumer's mapper, and "
        "list what would be refused, held forever, exceed a fan-out cap or starve the scheduler.",
        CHECK_EXAMPLES,
        CHECK_ARGS,
        run_check,
    ),
    "status": (
        "show a consumer's partitions and why they wait (reads the metadata database)",
        "Read, from the deployment's metadata database (read-only), every partition of a partitioned "
        "consumer Dag: its runs, or what its pending run has received, what is missing, which keys will "
        "never count and why, when a deadline fires it, its place in the scheduler's queue (500 evaluated "
        "per loop), and the keys refused on arrival.",
        STATUS_EXAMPLES,
        STATUS_ARGS,
        run_status,
    ),
    "backfill": (
        "create runs only for the partitions of a range without a successful run",
        "List the partitions a partitioned Dag's timetable makes in [--start, --end] that have no successful "
        "run (failed or never run); with --yes, create exactly those runs through Airflow's trigger_dag.",
        BACKFILL_EXAMPLES,
        BACKFILL_ARGS,
        run_backfill,
    ),
    "requeue": (
        "queue again the stored asset events a consumer's cleared pending runs had received",
        "After a consumer's rollup definition changed (even only max_downstream_keys), Airflow clears its "
        "pending partitioned runs with the keys they had received and replays nothing. List the stored asset "
        "events of its upstream assets, sent in [--start, --end], that feed none of its runs, per downstream "
        "key under its current mapper; with --yes, queue them again for this Dag alone, as the scheduler "
        "does on an event's arrival (no new asset event: other consumers are not triggered).",
        REQUEUE_EXAMPLES,
        REQUEUE_ARGS,
        run_requeue,
    ),
    "discard": (
        "remove stray pending partitioned runs: those keys sent again opened after their period ran",
        "A key sent again for a period that already has a Dag run (an at-least-once feed, a replay) opens a "
        "pending partitioned run that waits for the whole period again (Airflow 3.3, and 3.4's RerunPolicy "
        "HOLD) and takes one of the 500 places the scheduler evaluates per loop. List those of a Dag (or, "
        "with --key or --start/--end, any of its pending runs), each with the keys it received and since "
        "when; with --yes, remove them and the keys they hold (one audit-log row each). Dag runs and asset "
        "events are never touched; keys that arrive meanwhile are kept.",
        DISCARD_EXAMPLES,
        DISCARD_ARGS,
        run_discard,
    ),
    "clean": (
        "remove the bookkeeping Airflow keeps forever for partitioned runs that fired",
        "Airflow never deletes a partitioned run's pending-run row (asset_partition_dag_run) or its key-log "
        "rows (partitioned_asset_key_log) once the run fired, and `airflow db clean` does not cover them. "
        "Count those of runs opened before --before (every Dag's, or --dag's); with --yes, delete them in "
        "batches while Airflow runs. Pending runs, Dag runs and asset events are never touched; what a "
        "cleaned run ran with is then shown as not kept.",
        CLEAN_EXAMPLES,
        CLEAN_ARGS,
        run_clean,
    ),
}


def _guarded(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run *handler*; a usage or loading error is printed to stderr with exit code 2."""
    try:
        return handler(args)
    except LookupError as err:  # an unknown Dag, or one that is not what the command needs
        print(f"airflow-partitions {args.command}: {err.args[0]}", file=sys.stderr)
        return FOUND
    except ValueError as err:
        print(f"airflow-partitions {args.command}: error: {err}", file=sys.stderr)
        return USAGE


def build_parser() -> argparse.ArgumentParser:
    """Return the ``airflow-partitions`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="airflow-partitions",
        description=(
            "Explain partition mappers, check Dag folders, show partition state, backfill gaps, re-queue "
            "events after a rollup changed, discard stray pending runs, clean old bookkeeping."
        ),
        epilog="examples:\n  airflow-partitions explain --help\n  airflow-partitions check example_dags",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for name, (help_, description, epilog, arguments, handler) in COMMANDS.items():
        sub = commands.add_parser(
            name,
            help=help_,
            description=description,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        for flags, options in arguments:
            sub.add_argument(*flags, **options)
        sub.add_argument(
            "--verbose", action="store_true", help="also print Airflow's own log (import tracebacks …)"
        )
        sub.set_defaults(handler=handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run ``airflow-partitions`` with *argv* (default: the command line); return the exit code.

    ``main(["check", "example_dags"])`` prints the findings and returns 0 when there is no error.
    """
    args = build_parser().parse_args(argv)
    if not args.verbose and "airflow" not in sys.modules:
        # Airflow logs (a Dag file's import traceback, every Dag it fills the bag with) straight to
        # the terminal, ahead of the answer, which already reports what matters: keep it for --verbose.
        os.environ["AIRFLOW__LOGGING__LOGGING_LEVEL"] = "CRITICAL"
    try:
        return _guarded(args.handler, args)
    except BrokenPipeError:  # `… | head`: the reader left; say nothing more (Python's recipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK


def get_cli_commands() -> list[Any]:
    """
    Return the ``airflow partition-tools`` command group, for Airflow's provider ``"cli"`` list.

    ``airflow partition-tools explain …`` and ``airflow partition-tools check …`` take the same
    arguments as ``airflow-partitions`` (core's own group is ``airflow partitions``).
    """
    from airflow.cli.cli_config import ActionCommand, Arg, GroupCommand

    def action(name: str) -> ActionCommand:
        help_, description, epilog, arguments, handler = COMMANDS[name]

        def func(args: argparse.Namespace) -> None:
            args.command = name
            code = _guarded(handler, args)
            if code:
                sys.exit(code)

        return ActionCommand(
            name=name,
            help=help_,
            func=func,
            args=[Arg(flags, **options) for flags, options in arguments],
            description=description,
            epilog=epilog.replace("airflow-partitions ", "airflow partition-tools "),
        )

    return [
        GroupCommand(
            name="partition-tools",
            help=(
                "Explain mappers, check Dag folders, show partition state, backfill missing partitions, "
                "re-queue events after a rollup changed, discard stray pending runs, clean old bookkeeping"
            ),
            subcommands=[action(name) for name in COMMANDS],
        )
    ]


if __name__ == "__main__":
    sys.exit(main())
