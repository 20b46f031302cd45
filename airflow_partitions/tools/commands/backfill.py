"""
``backfill DAG_ID``: what each partition of a selection takes (a dry run); ``--yes`` starts it, paced.

:class:`BackfillRequest` selects a Dag's partitions by key (``--key``, ``--keys-from``), time
range (``--start``/``--end``, ``status``'s range language) and state (``--state``, ``--missing``);
its ``read`` is the plan (:func:`~airflow_partitions.tools.write.planning.plan`), its ``write``
hands the plan's runs to a tracked backfill (:func:`~airflow_partitions.tools.write.planning.
carry_out`). :class:`BackfillsRequest` lists the tracked backfills (``--list``) and pauses,
resumes or cancels one (``--pause``, ``--resume``, ``--cancel``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from airflow_partitions.tools.commands.backfill_text import (
    format_backfills,
    format_carried_out,
    format_plan,
)
from airflow_partitions.tools.commands.base import (
    API_ARGS,
    JSON_ARG,
    OK,
    Argument,
    Command,
    Opener,
    Request,
    UsageError,
    quiet,
    session_for,
    show,
)
from airflow_partitions.tools.commands.status import MAX_ROWS
from airflow_partitions.tools.errors import Forbidden, NotFound

#: How many of a backfill's runs may be queued or running at once, unless ``--max-active`` says.
MAX_ACTIVE = 4
#: The most ``--max-active`` takes.
MOST_ACTIVE = 1_000
#: ``--order``'s values: the selected partitions' keys oldest or newest first.
ORDERS = ("oldest", "newest")


@dataclass(frozen=True)
class BackfillRequest(Request):
    """
    A Dag's partitions to backfill: ``BackfillRequest("it_days", states=("failed", "stale"), max_active=2)``.

    *keys* (query parameter ``key``, repeated) or *start* / *end* (a key of the Dag's grain, its
    leading part, or an ISO 8601 date or time) and *states* (``state``, repeated: the partition
    states and ``missing``; ``None``: every state for *keys*, else every state but ``success``)
    select; *include_open* also plans periods not due; *limit* (``None``: all) and *offset* page
    the dry run; *max_active* and *order* pace what ``--yes`` starts; *now* (UTC; ``None``: the
    clock) decides what is due.

    :raises UsageError: (a ``ValueError``: exit code 2, or 400) naming the option, for a state that
        is not one, *keys* with a range, *limit* or *offset* outside 0 … ``MAX_ROWS``, *max_active*
        outside 1 … :data:`MOST_ACTIVE`, or an *order* that is not ``oldest`` or ``newest``.
    """

    ROUTE: ClassVar[str] = "backfill"

    dag_id: str
    start: str | None = None
    end: str | None = None
    keys: tuple[str, ...] | None = field(default=None, metadata={"query": "key"})
    states: tuple[str, ...] | None = field(default=None, metadata={"query": "state"})
    include_open: bool = False
    limit: int | None = None
    offset: int = 0
    max_active: int = MAX_ACTIVE
    order: str = "oldest"
    now: datetime | None = None

    def __post_init__(self) -> None:
        from airflow_partitions.tools.write.backfill import SELECTABLE

        unknown = [s for s in self.states or () if s not in SELECTABLE]
        if unknown:
            raise UsageError(f"--state {unknown[0]!r} is not a state; states: {', '.join(SELECTABLE)}.")
        if self.keys and (self.start or self.end):
            raise UsageError("give --key (or --keys-from) or --start/--end, not both.")
        for name in ("limit", "offset"):
            rows = getattr(self, name)
            if rows is not None and not 0 <= rows <= MAX_ROWS:
                raise UsageError(f"--{name} {rows!r} is not a whole number from 0 to {MAX_ROWS}.")
        if not 1 <= self.max_active <= MOST_ACTIVE:
            raise UsageError(
                f"--max-active {self.max_active!r} is not a whole number from 1 to {MOST_ACTIVE}."
            )
        if self.order not in ORDERS:
            raise UsageError(f"--order {self.order!r} is not one of {', '.join(ORDERS)}.")

    def selection(self) -> Any:
        """Return what is selected, as the planner takes it (:class:`~.write.backfill.Selection`)."""
        from airflow_partitions.tools.write.backfill import Selection

        return Selection(
            self.dag_id,
            self.start,
            self.end,
            self.keys,
            self.states,
            self.include_open,
            self.now,
            self.limit,
            self.offset,
        )

    @staticmethod
    def answer_type() -> type:
        """Return :class:`~airflow_partitions.tools.write.backfill.Plan`."""
        from airflow_partitions.tools.write.backfill import Plan

        return Plan

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.write.backfill.Plan` of a page of the selection.

        :raises UnknownDag: for an unknown Dag, or one that is not partitioned (``NotAConsumer``).
        :raises ValueError: for a key or range the Dag's keys cannot match, before reading them.
        """
        from airflow_partitions.tools.write.planning import plan

        with session_for(session, scoped=False) as own:
            return plan(self.selection(), own)

    def write(self, session: Any, user: str | None, may_run: Any = None) -> Any:
        """
        Plan every selected partition, start a tracked backfill of its runs as *user*. Raises as :meth:`read`.

        The runs of a Dag upstream that *may_run* refuses are left to the plan's ``could_not``.
        """
        from airflow_partitions.tools.write.planning import carry_out

        with session_for(session, scoped=False) as own:
            return carry_out(
                self.selection(), own, user, max_active=self.max_active, order=self.order, may_run=may_run
            )


@dataclass(frozen=True)
class BackfillsRequest(Request):
    """
    The tracked backfills of a Dag (``None``: of every Dag, ``~``), or one by *name*; an *action* on it.

    ``BackfillsRequest(name="backfill-12", action="cancel")``: *action* is ``pause``, ``resume`` or
    ``cancel`` (a write: ``--pause NAME`` …).

    :raises UsageError: for an action that is none of those, or one without a *name*.
    """

    ROUTE: ClassVar[str] = "backfills"

    dag_id: str | None = None
    name: str | None = None
    action: str | None = None

    def __post_init__(self) -> None:
        from airflow_partitions.tools.write.paced import CONTROLS

        if self.action is not None and self.action not in CONTROLS:
            raise UsageError(
                f"{self.action!r} is not an action on a backfill; actions: {', '.join(CONTROLS)}."
            )
        if self.action is not None and not self.name:
            raise UsageError(f"--{self.action} needs the name of a backfill (backfill --list names them).")

    @staticmethod
    def answer_type() -> type:
        """Return :class:`~airflow_partitions.tools.write.paced.Backfills`."""
        from airflow_partitions.tools.write.paced import Backfills

        return Backfills

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.write.paced.Backfills` asked for.

        :raises UnknownDag: for a *dag_id* the deployment has no Dag of (exit code 1, as every command).
        :raises NotFound: for a name no backfill has, or one of another Dag than *dag_id*.
        """
        from airflow_partitions.tools.write.paced import backfills

        with session_for(session, scoped=False) as own:
            found = backfills(own, self.dag_id, self.name)
        if self.name is not None and self.dag_id is not None and found.backfills[0].dag_id != self.dag_id:
            raise NotFound(f"no backfill {self.name!r} of {self.dag_id!r} (it backfills another Dag).")
        return found

    def write(self, session: Any, user: str | None, may_run: Any = None) -> Any:
        """
        Pause, resume or cancel the backfill *name* as *user*; return it. Raises as :meth:`read`.

        :raises Forbidden: if *may_run* refuses the backfill's Dag (its runs would be triggered or
            cleared).
        """
        from airflow_partitions.tools.write.paced import Backfills, control

        if self.name is None or self.action is None:
            raise UsageError("an action on a backfill needs its name and the action.")
        with session_for(session, scoped=False) as own:  # one session for the check and the action
            dag_id = self.read(own).backfills[0].dag_id
            if may_run is not None and not may_run(dag_id):
                raise Forbidden(
                    f"you may not trigger and clear the runs of {dag_id!r} (Airflow's Dag run permissions)."
                )
            return Backfills((control(own, self.name, self.action, user),))


def _rows(text: str) -> int:
    """Read ``--limit``, ``--offset`` or ``--max-active`` (a whole number); argparse names it."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


ARGUMENTS: list[Argument] = [
    (
        ("dag_id",),
        {"nargs": "?", "help": "the partitioned Dag (any: asset-fed, or partitioned by its timetable)"},
    ),
    (("--start",), {"help": "first time part of a key: a key, its leading part, or an ISO date"}),
    (("--end",), {"help": "last time part: a key, or an ISO date or time (2026-03 keeps all of March)"}),
    (("--key",), {"action": "append", "help": "only this partition key (repeatable)"}),
    (
        ("--keys-from",),
        {"metavar": "FILE", "help": "only the keys of this file, one a line ('#' starts a comment)"},
    ),
    (
        ("--state",),
        {
            "action": "append",
            "help": "only partitions in this state (repeatable): failed, ran incomplete, stale, overdue, "
            "past deadline, never counting, missing (a period of the range with no run), … (default: "
            "every state but success; with --key or --keys-from, every state)",
        },
    ),
    (
        ("--missing",),
        {
            "action": "store_true",
            "help": "partitions without a successful run: --state failed --state missing",
        },
    ),
    (("--include-open",), {"action": "store_true", "help": "also partitions whose period has not ended"}),
    (
        ("--limit",),
        {"type": _rows, "help": "partitions the dry run lists (default 50, 1000 with --json; 0: all)"},
    ),
    (("--offset",), {"type": _rows, "default": 0, "help": "partitions skipped, in key order (paging)"}),
    (
        ("--yes",),
        {"action": "store_true", "help": "start the runs, paced (without it: a dry run that plans them)"},
    ),
    (
        ("--max-active",),
        {
            "type": _rows,
            "default": MAX_ACTIVE,
            "help": f"its runs queued or running at once (default {MAX_ACTIVE})",
        },
    ),
    (
        ("--order",),
        {"choices": ORDERS, "default": "oldest", "help": "start the oldest or the newest partitions first"},
    ),
    (("--list",), {"action": "store_true", "help": "list the tracked backfills (of DAG_ID, if given)"}),
    (("--pause",), {"metavar": "NAME", "help": "pause a backfill: it starts no more runs"}),
    (("--resume",), {"metavar": "NAME", "help": "resume a paused backfill"}),
    (("--cancel",), {"metavar": "NAME", "help": "cancel a backfill: no more runs, its queued runs failed"}),
    JSON_ARG,
    *API_ARGS,
]

EXAMPLES = """\
examples:
  airflow-partitions backfill it_days                          # the plan of every partition not success
  airflow-partitions backfill it_days --state failed --state stale --max-active 2 --yes
  airflow-partitions backfill it_months --start 2026-03 --end 2026-03 --state overdue --json
  airflow-partitions backfill it_backfill_daily --missing --start 2026-03-01 --end 2026-03-07 --yes
  airflow-partitions backfill --list
  airflow-partitions backfill --cancel backfill-12

exit codes: 0 planned, started, listed or done, 1 an unknown Dag or backfill, 2 usage error"""


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``backfill``: plan (with --yes, start) a Dag's backfill; list, pause, resume or cancel one."""
    controls = {a: getattr(args, a) for a in ("pause", "resume", "cancel") if getattr(args, a)}
    if args.list or controls:
        if len(controls) > 1 or (args.list and controls):
            raise UsageError("give one of --list, --pause, --resume, --cancel.")
        action, name = next(iter(controls.items()), (None, None))
        asked = BackfillsRequest(args.dag_id, name, action)
        with quiet():
            deployment = source()
            found = deployment.write(asked) if action else deployment.read(asked)
        show(found, format_backfills, as_json=args.json)
        return OK
    request = request_of(args)
    try:
        with quiet():
            deployment = source()
            answer = deployment.write(request) if args.yes else deployment.read(request)
    except UsageError as err:
        raise UsageError(read_from(str(err), args.keys_from)) from None
    show(answer, format_plan if not args.yes else format_carried_out, as_json=args.json)
    return OK


def request_of(args: argparse.Namespace) -> BackfillRequest:
    """
    Return the :class:`BackfillRequest` of ``backfill``'s arguments.

    :raises UsageError: without a Dag id, for ``--missing`` with ``--state``, or a ``--keys-from``
        file that cannot be read or holds no key.
    """
    from airflow_partitions.tools.write.backfill import WITHOUT_SUCCESS

    if not args.dag_id:
        raise UsageError("give the Dag to backfill (or --list, --pause, --resume, --cancel).")
    if args.missing and args.state:
        raise UsageError("give --missing or --state, not both (--missing is --state failed --state missing).")
    keys = list(args.key or [])
    if args.keys_from:
        keys += [key for _, key in keys_in(args.keys_from)]
    limit = args.limit if args.limit is not None else 1000 if args.json else 50
    return BackfillRequest(
        args.dag_id,
        start=args.start,
        end=args.end,
        keys=tuple(keys) or None,
        states=WITHOUT_SUCCESS if args.missing else tuple(args.state) if args.state else None,
        include_open=args.include_open,
        limit=limit or None,
        offset=args.offset,
        max_active=args.max_active,
        order=args.order,
    )


def keys_in(path: str) -> list[tuple[int, str]]:
    """
    Return the keys of the file *path*, each with its line number (from 1): ``[(2, "2026-03-03")]``.

    One key a line; blank lines and ``#`` comments are left out.

    :raises UsageError: naming the file, if it cannot be read (or is not UTF-8 text), or holds no
        key (empty, or only comments: selecting no key is not selecting every partition).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"--keys-from {path!r} cannot be read: {err}.") from None
    keys = [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not keys:
        raise UsageError(
            f"--keys-from {path!r} holds no key (only blank lines or '#' comments): give one key a line."
        )
    return keys


def read_from(message: str, path: str | None) -> str:
    """
    Return a usage error's *message* naming the line of the ``--keys-from`` file *path* its key is on.

    ``--key 'bad-key' is not …`` of a key read from line 3 becomes ``--keys-from 'keys.txt' line 3:
    'bad-key' is not …``; any other message (or no file) is returned as it is.
    """
    if path is None or not message.startswith("--key "):
        return message
    for number, key in keys_in(path):
        named = f"--key {key!r} "
        if message.startswith(named):
            return f"--keys-from {path!r} line {number}: {key!r} {message.removeprefix(named)}"
    return message


COMMAND = Command(
    "backfill",
    "plan and start what a partitioned Dag's partitions take: re-runs, upstream runs, keys to send; paced",
    "Select a partitioned Dag's partitions (--key, --keys-from, --start/--end, --state; default: every one "
    "not success) and print what each takes: its own run again (failed, ran incomplete, stale), runs of "
    "the Dags upstream that make the keys it misses (following the mappings), or the exact keys a feed "
    "must send (--json: the bodies of POST /api/v2/assets/events). With --yes, start the runs as one "
    "named backfill, at most --max-active queued or running at once, --order oldest or newest first; "
    "--list, --pause, --resume and --cancel act on it. Every write is audit-logged under the caller's name.",
    EXAMPLES,
    ARGUMENTS,
    run,
    (BackfillRequest, BackfillsRequest),
)
