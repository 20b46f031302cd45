"""
``discard DAG_ID``: a consumer's stray pending partitioned runs; ``--yes`` removes them.

:class:`DiscardRequest` lists them (a source's ``stray``); with ``--yes`` it removes them and the
keys they hold, one audit-log row each (a source's ``discard``). Dag runs and asset events are
never touched.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, ClassVar

from airflow_partitions.tools.commands.base import (
    API_ARGS,
    JSON_ARG,
    OK,
    Argument,
    Command,
    Opener,
    Request,
    quiet,
    show,
)
from airflow_partitions.tools.commands.text import count, listed, terminal


@dataclass(frozen=True)
class DiscardRequest(Request):
    """
    A Dag's pending runs to remove: ``DiscardRequest("weather_local_day_jfk", keys=("2013-03-10",))``.

    By default those of periods that already ran; *keys* (query parameter ``key``, repeated), or
    *start* / *end* (time parts of keys, *end* compared on its own length), select any of them.
    """

    ROUTE: ClassVar[str] = "discard"

    dag_id: str
    keys: tuple[str, ...] | None = field(default=None, metadata={"query": "key"})
    start: str | None = None
    end: str | None = None

    @staticmethod
    def answer_type() -> type:
        """Return :class:`~airflow_partitions.tools.write.discard.Discarded`."""
        from airflow_partitions.tools.write.discard import Discarded

        return Discarded

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.write.discard.Discarded` selected (read-only).

        :raises UnknownDag: for an unknown Dag or one that is not a partitioned consumer.
        :raises UsageError: for *keys* with a range, a key or bound the Dag's keys cannot match, or
            *start* after *end* (:func:`~airflow_partitions.tools.write.discard.stray_runs`).
        """
        from airflow_partitions.tools.write.discard import stray_runs

        keys = list(self.keys) if self.keys else None
        return stray_runs(self.dag_id, keys=keys, start=self.start, end=self.end, session=session)

    def write(self, session: Any, user: str | None, may_run: Any = None) -> Any:
        """Remove them under *user*'s name (audit log); return what was removed. Raises as :meth:`read`."""
        from airflow_partitions.tools.write.discard import discard

        keys = list(self.keys) if self.keys else None
        return discard(self.dag_id, keys=keys, start=self.start, end=self.end, user=user, session=session)


ARGUMENTS: list[Argument] = [
    (("dag_id",), {"help": "the partitioned consumer Dag"}),
    (
        ("--key",),
        {
            "action": "append",
            "help": "only the pending run of this downstream key, whether or not its period ran (repeatable)",
        },
    ),
    (
        ("--start",),
        {"help": "only pending runs from this time part of a key (a key, its leading part, or an ISO date)"},
    ),
    (("--end",), {"help": "only pending runs to this time part (2013-03 keeps all of March), ran or not"}),
    (("--yes",), {"action": "store_true", "help": "remove them (without it: a dry run that lists them)"}),
    JSON_ARG,
    *API_ARGS,
]

EXAMPLES = """\
examples:
  airflow-partitions discard weather_local_day_jfk
  airflow-partitions discard weather_local_day_jfk --yes
  airflow-partitions discard weather_local_day_jfk --key 2013-03-10 --yes
  airflow-partitions discard weather_local_day_jfk --start 2013-03 --end 2013-04 --json

exit codes: 0 listed (dry run), removed, or nothing to remove, 1 an unknown Dag or one that is not a
  partitioned consumer, 2 usage error"""


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``discard``: list (or, with --yes, remove) a Dag's stray pending partitioned runs."""
    keys = tuple(args.key) if args.key else None
    request = DiscardRequest(args.dag_id, keys=keys, start=args.start, end=args.end)
    with quiet():
        deployment = source()
        found = deployment.write(request) if args.yes else deployment.read(request)
    show(found, format_discarded, as_json=args.json)
    return OK


def format_discarded(found: Any) -> str:
    """Return :class:`~airflow_partitions.tools.write.discard.Discarded` as text for 120 columns."""
    d = found
    if not d.runs:
        return f"{d.dag_id}: no pending partitioned run {terminal(d.selection, lines=False)} to remove"
    lines = [
        f"{d.dag_id}: {count(len(d.runs), 'pending partitioned run')} {terminal(d.selection, lines=False)}"
    ]
    lines.append(f"  {'partition':<28}{'Dag runs':<18}{'since (UTC)':<21}keys received")
    for run in d.runs:
        since = f"{run.opened_at:%Y-%m-%d %H:%M:%S}" if run.opened_at else "?"
        keys = listed(run.received[:3]) + (f" … ({len(run.received)})" if len(run.received) > 3 else "")
        key = terminal(run.partition_key, lines=False)
        lines.append(f"  {key:<28}{', '.join(run.runs[-2:]) or 'none':<18}{since:<21}{keys}")
    if d.removed:
        lines.append(
            f"removed {count(len(d.runs), 'pending run')} (Dag runs and asset events kept; audit-logged)"
        )
    else:
        lines.append("dry run: pass --yes to remove them (their Dag runs and asset events are kept)")
    return "\n".join(lines)


COMMAND = Command(
    "discard",
    "remove stray pending partitioned runs: those keys sent again opened after their period ran",
    "A key sent again for a period that already has a Dag run (an at-least-once feed, a replay) opens a "
    "pending partitioned run that waits for the whole period again (Airflow 3.3, and 3.4's RerunPolicy "
    "HOLD) and takes one of the 500 places the scheduler evaluates per loop. List those of a Dag (or, "
    "with --key or --start/--end, any of its pending runs), each with the keys it received and since "
    "when; with --yes, remove them and the keys they hold (one audit-log row each). Dag runs and asset "
    "events are never touched; keys that arrive meanwhile are kept.",
    EXAMPLES,
    ARGUMENTS,
    run,
    (DiscardRequest,),
)
