"""
``status DAG_ID``: a consumer's partitions and why they wait, from the database or ``--api-url``.

:class:`StatusRequest` is the one definition of what ``status`` asks: the CLI builds it from its
arguments (:data:`ARGUMENTS`), ``--api-url`` sends it as query parameters, and both REST routes
that answer it (the commands' ``dags/{dag_id}/status`` and the view's ``dags/{dag_id}``) build it
back; :meth:`StatusRequest.read` asks :func:`~airflow_partitions.tools.state.consumer_state`.
An option of ``status`` is a field, an argument and its use here, and nowhere else.
"""

from __future__ import annotations

import argparse
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar

from airflow_partitions.tools.commands.base import (
    API_ARGS,
    FOUND,
    MAX_ROWS,
    OK,
    Argument,
    Command,
    Opener,
    Request,
    checked_rows,
    checked_states,
    quiet,
    show,
)
from airflow_partitions.tools.commands.text import WIDTH, count, listed, terminal, wrap

#: Refused keys ``status`` prints (the latest); ``--json`` lists up to
#: :data:`~airflow_partitions.tools.state.LISTED`.
REFUSALS_SHOWN = 3


@dataclass(frozen=True)
class StatusRequest(Request):
    """
    One page of a consumer's partitions: ``StatusRequest("weather_local_day_jfk", key="2013-03-10")``.

    *key* selects one downstream partition key; *start* and *end* the time part of keys, each a
    key of the Dag's grain, its leading part or an ISO 8601 date or time (``end="2013-03"`` keeps
    all of March, :func:`~airflow_partitions.tools.state.selection.selected_range`); *states*
    (query parameter ``state``, repeated) the partitions in those states; *limit* and *offset* page
    them in key order: *limit* is the most listed, 0 every one (``None``: the face's default,
    here every one; the command line's is 50, the view's 1,000).

    :raises UsageError: naming the input, for a state that is not one of
        :data:`~airflow_partitions.tools.state.STATES`, or a *limit* or *offset* outside 0 …
        :data:`~airflow_partitions.tools.commands.base.MAX_ROWS`. The key and the range are the
        Dag's to judge: :meth:`read` raises for them, before reading any partition.
    """

    ROUTE: ClassVar[str] = "status"

    dag_id: str
    key: str | None = None
    start: str | None = None
    end: str | None = None
    states: tuple[str, ...] | None = field(default=None, metadata={"query": "state"})
    limit: int | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        checked_states(self.states)
        checked_rows("limit", self.limit)
        checked_rows("offset", self.offset)

    @staticmethod
    def answer_type() -> type:
        """Return :class:`~airflow_partitions.tools.state.ConsumerState`."""
        from airflow_partitions.tools.state.model import ConsumerState

        return ConsumerState

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.state.ConsumerState` asked for, read on *session*.

        :raises UnknownDag: for an unknown Dag, or one that is not a partitioned consumer.
        :raises UsageError: for a key or a range the Dag's keys cannot match, before reading them.
        """
        from airflow_partitions.tools.state import consumer_state

        return consumer_state(
            self.dag_id,
            partition_key=self.key,
            start=self.start,
            end=self.end,
            states=self.states,
            limit=self.limit or None,
            offset=self.offset,
            session=session,
        )


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


ARGUMENTS: list[Argument] = [
    (("dag_id",), {"help": "the partitioned consumer Dag"}),
    (("--key",), {"help": "only this downstream partition key (a key of the Dag's grain: 2013-03-10)"}),
    (
        ("--start",),
        {"help": "first time part of a key (after the last '|'): a key, its leading part, or an ISO date"},
    ),
    (
        ("--end",),
        {"help": "last time part: a key, or an ISO date or time (2013-03 keeps all of March)"},
    ),
    (
        ("--state",),
        {
            "action": "append",
            "help": "only partitions in this state (repeatable): failed, ran incomplete, never counting, "
            "past deadline, overdue, stale, pending, running, queued, success",
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

EXAMPLES = """\
examples:
  airflow-partitions status weather_local_day_jfk
  airflow-partitions status weather_local_day_jfk --key 2013-03-10 --json
  airflow-partitions status weather_airport_day --start 2013-03 --end 2013-03 --state "ran incomplete"

exit codes: 0 nothing held, 1 a partition (of those selected) holds keys that never count, or a pending
  run of the Dag is starved (queue > 500), or a Variable its members come from is broken, or the Dag is
  unknown or not a partitioned consumer, 2 usage error"""


def request_of(args: argparse.Namespace) -> StatusRequest:
    """
    Return the :class:`StatusRequest` of ``status``'s arguments.

    Without ``--state``, text lists what is not ``success`` (``--all``, ``--key`` and ``--json``:
    every state); ``--limit`` defaults to 50 (1000 with ``--json``), and 0 means every partition.
    """
    from airflow_partitions.tools.state.model import STATES

    everything = args.all or args.key or args.json
    states = args.state or (None if everything else [s for s in STATES if s != "success"])
    return StatusRequest(
        args.dag_id,
        key=args.key,
        start=args.start,
        end=args.end,
        states=None if states is None else tuple(states),
        limit=args.limit if args.limit is not None else 1000 if args.json else 50,
        offset=args.offset,
    )


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``status``: print a consumer's partitions; exit 1 if one is held (never counting, starved…)."""
    request = request_of(args)
    with quiet():
        state = source().read(request)
    show(state, format_state, as_json=args.json)
    starved = state.starved or any(p.starved for p in state.partitions)
    held = state.states.get("never counting") or starved or state.members_problems
    return FOUND if held else OK


def format_state(state: Any) -> str:
    """
    Return a :class:`~airflow_partitions.tools.state.ConsumerState` as text for 120 columns.

    A summary of every selected partition (how many in each state, the range of keys, the queue),
    then the page: each partition with its keys counted of awaited (what a pending run has, or
    what a run that ran incomplete ran with), its place in the queue and its missing keys or runs;
    then the keys refused on arrival.
    """
    lines = _summary(state)
    # The state column fits "success · 1 key after it ran, pending" when the page has one.
    width = max([16] + [len(_state_label(p)) + 2 for p in state.partitions])
    if state.partitions:
        lines.append(f"  {'partition':<28}{'state':<{width}}{'keys':>11}  {'queue':>6}  missing / runs")
    for p in state.partitions:
        lines.extend(_partition(p, width))
    lines.extend(_refusals(state))
    return "\n".join(lines)


def _summary(state: Any) -> list[str]:
    """Return the lines on every selected partition: counts by state, range, queue, late, the page."""
    from airflow_partitions.tools.state.model import STATES

    counts = ", ".join(f"{state.states[s]} {s}" for s in STATES if state.states.get(s))
    span = f" from {state.first} to {state.last}" if state.first else ""
    # Every partition of the range, whatever --state selects (the page's count is "showing" below).
    every = sum(state.states.values())
    lines = [f"{state.dag_id}: {count(every, 'partition')}{span}" + (f": {counts}" if counts else "")]
    for problem in state.members_problems:  # first: nothing fires, keys are refused, until it is fixed
        since = "" if problem.since is None else f" since {problem.since.isoformat(timespec='seconds')}"
        lines.append(
            textwrap.fill(
                f"MEMBERS BROKEN{since}: {problem.problem} Keys for its rollups are refused and their "
                f"pending runs wait. Fix: {problem.fix}.",
                WIDTH,
                initial_indent="  ",
                subsequent_indent="    ",
            )
        )
    lines.append(
        f"  pending partitioned runs in the deployment: {state.pending_total} (the scheduler evaluates the "
        "500 oldest per loop)" + (f"; {state.starved} of this Dag's beyond them" if state.starved else "")
    )
    if state.again:
        lines.append(
            textwrap.fill(
                f"{count(state.again, 'partition')} that ran (counted by their runs' state) also "
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
            f"  {count(state.late, 'partition')} late: no successful run, the period ended longer ago "
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
    return lines


def _partition(p: Any, width: int) -> list[str]:
    """Return the lines of one partition: state, keys, queue, then what it misses or its runs."""
    waiting = p.progress and not p.pending_again  # a pending run's keys, else what its runs ran with
    pending = [k for a in p.progress for k in a.missing]
    # What its runs missed, less what the pending run beside them holds (late keys, not lost).
    held = {k for a in p.progress for k in a.received} if p.pending_again else set()
    missing = pending if waiting else [k for k in p.ran_with.missing if k not in held] if p.ran_with else []
    total = (
        sum(a.missing_total for a in p.progress)
        if waiting
        else p.ran_with.missing_total - (len(p.ran_with.missing) - len(missing))
        if p.ran_with
        else 0
    )
    detail = (
        listed(missing[:3]) + (f" … ({total})" if total > 3 else "")
        if missing
        else ", ".join(f"{run_id} {run_state}" for run_id, run_state in p.runs[-2:])
    )
    queue = f"{p.queue_position}" + ("!" if p.starved else "") if p.queue_position else ""
    head = (
        f"  {terminal(p.partition_key, lines=False):<28}{_state_label(p):<{width}}{_keys(p):>11}  {queue:>6}"
    )
    line = f"{head}  {detail}"
    if len(line) > WIDTH:  # never cut a key or a run id: the detail goes on lines of its own
        line = f"{head}\n" + wrap("missing" if missing else "runs", detail)
    lines = [line]
    lines.extend(wrap("never counts", f"{key}: {why}") for a in p.progress for key, why in a.never_counting)
    if p.fires_at:
        lines.append(wrap("fires at", p.fires_at.isoformat()))
    if p.late_since:
        lines.append(wrap("late since", p.late_since.isoformat()))
    return lines


def _refusals(state: Any) -> list[str]:
    """Return the lines on the keys refused on arrival: how many, why, the latest few."""
    from airflow_partitions.tools.state.model import LISTED

    if not state.refusals:
        return []
    others = sum(r.other_member for r in state.refusals)
    ruled = sum(r.expected for r in state.refusals) - others
    mistaken = len(state.refusals) - ruled - others
    requeued = sum(r.requeued for r in state.refusals)
    lines = [
        f"  {count(state.refusals_total, 'key')} refused on arrival (Airflow's audit log); of the "
        f"latest {len(state.refusals)}, {ruled} by the calendar's rule, "
        + (f"{others} for other members (another Dag's), " if others else "")
        + f"{mistaken} mistaken"
        + (f"; {requeued} re-queued since (their events feed a run now)" if requeued else "")
    ]
    shown = state.refusals[-REFUSALS_SHOWN:]
    lines.extend(
        wrap(
            "other member" if r.other_member else "outside" if r.expected else "refused",
            f"{r.partition_key or ''}{' (re-queued since)' if r.requeued else ''}: {r.reason}".lstrip(": "),
        )
        for r in shown
    )
    if len(shown) < state.refusals_total:
        lines.append(
            f"  showing the latest {len(shown)} of {state.refusals_total}; --json lists up to {LISTED}"
        )
    return lines


def _state_label(partition: Any) -> str:
    """Return ``"success"``, or ``"success · 1 key after it ran, pending"`` with a pending run beside it."""
    again = partition.pending_again
    return partition.state + (f" · {count(partition.again, 'key')} after it ran, {again}" if again else "")


def _keys(partition: Any) -> str:
    """Return ``"20/24"``: upstream keys counted of awaited, pending or as its runs ran with (if it ran)."""
    if partition.progress and not partition.pending_again:
        counted = sum(a.counted for a in partition.progress)
        awaited = sum(a.expected_total or 1 for a in partition.progress)
        return f"{counted}/{awaited}"
    ran = partition.ran_with
    return f"{ran.counted}/{ran.awaited}" if ran else ""


COMMAND = Command(
    "status",
    "show a consumer's partitions and why they wait (reads the metadata database)",
    "Read, from the deployment's metadata database (read-only), every partition of a partitioned "
    "consumer Dag: its runs, or what its pending run has received, what is missing, which keys will "
    "never count and why, when a deadline fires it, its place in the scheduler's queue (500 evaluated "
    "per loop), and the keys refused on arrival.",
    EXAMPLES,
    ARGUMENTS,
    run,
    (StatusRequest,),
)
