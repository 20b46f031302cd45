"""
``requeue DAG_ID --start [--end]``: the stored asset events a consumer's cleared pending runs had received.

:class:`RequeueRequest` lists them (a source's ``orphans``); with ``--yes`` it queues them again
for this Dag alone (a source's ``requeue``), as the scheduler does on an event's arrival.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import UTC, datetime
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
    session_for,
    show,
)
from airflow_partitions.tools.commands.text import WIDTH, terminal, wrap


@dataclass(frozen=True)
class RequeueRequest(Request):
    """
    The Dag's upstream events sent from *start* to *end* that feed none of its runs.

    ``RequeueRequest("weather_local_day_jfk", "2026-04", "2026-04")``: the events sent in April
    2026 (UTC). Each bound is in the range language of every command
    (:func:`~airflow_partitions.tools.state.selection.selected_times`): a key of the Dag's grain,
    its leading part, or an ISO 8601 date or time (UTC without an offset); *start* is its first
    instant, *end* its last (``None``: now). What needs no Dag is checked here
    (:func:`~airflow_partitions.tools.state.selection.checked_times`), the rest by the Dag's grain
    before anything is read.

    :raises UsageError: naming the option, for a bound that names no year, a calendar spelling
        that names no date or time, or two calendar spellings out of order.
    """

    ROUTE: ClassVar[str] = "requeue"

    dag_id: str
    start: str
    end: str | None = None

    def __post_init__(self) -> None:
        from airflow_partitions.tools.state.selection import checked_times

        checked_times(self.start, self.end)

    @staticmethod
    def answer_type() -> type:
        """Return :class:`~airflow_partitions.tools.write.requeue.Orphans`."""
        from airflow_partitions.tools.write.requeue import Orphans

        return Orphans

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.write.requeue.Orphans` (read-only).

        :raises UnknownDag: for an unknown Dag, or one that reads no assets (exit code 1).
        :raises UsageError: for a bound the Dag's keys cannot match, or *start* after *end*.
        """
        from airflow_partitions.tools.write.requeue import orphaned_events

        with session_for(session) as opened:
            return orphaned_events(self.dag_id, *self.times(opened), session=opened)

    def write(self, session: Any, user: str | None, may_run: Any = None) -> Any:
        """
        Queue them again under *user*'s name; return what was queued.

        :raises ValueError: as :func:`~airflow_partitions.tools.write.requeue.requeue`, and as :meth:`read`.
        """
        from airflow_partitions.tools.write.requeue import requeue

        with session_for(session) as opened:
            return requeue(self.dag_id, *self.times(opened), user=user, session=opened)

    def times(self, session: Any) -> tuple[datetime, datetime]:
        """
        Return ``(start, end)``: the first instant *start* names and the last *end* names (aware, UTC).

        :raises UnknownDag: as :meth:`read`, before the bounds are read.
        :raises UsageError: as :meth:`read`.
        """
        from airflow_partitions.tools.state.selection import selected_times
        from airflow_partitions.tools.state.serialized import consumer_timetable, timetable_grain

        grain = timetable_grain(*consumer_timetable(self.dag_id, session, needs="assets"))
        start, end = selected_times(self.dag_id, grain, self.start, self.end)
        return start or datetime.now(UTC), end or datetime.now(UTC)


ARGUMENTS: list[Argument] = [
    (("dag_id",), {"help": "the partitioned consumer Dag whose rollup definition changed"}),
    (
        ("--start",),
        {
            "required": True,
            "help": "earliest asset event time: an ISO 8601 date or time (UTC without an offset), a key "
            "of the Dag's grain or its leading part",
        },
    ),
    (("--end",), {"help": "latest asset event time, inclusive (2026-04: to the end of April); default: now"}),
    (("--yes",), {"action": "store_true", "help": "queue them (without it: a dry run that lists them)"}),
    JSON_ARG,
    *API_ARGS,
]

EXAMPLES = """\
examples:
  airflow-partitions requeue weather_local_day_jfk --start 2026-04-01 --end 2026-04-30
  airflow-partitions requeue weather_local_day_jfk --start 2026-04-01 --yes    # sent from April 1 until now

exit codes: 0 listed (dry run) or re-queued, 1 an unknown Dag or one that is not a partitioned consumer
  (or, with --api-url, too little access), 2 usage error (or, with --yes, runs of the previous rollup
  definition the scheduler has yet to clear: wait for it, then run again)"""


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``requeue``: list (or, with --yes, queue again) the events a Dag's runs lost (no --end: now)."""
    request = RequeueRequest(args.dag_id, args.start, args.end)
    with quiet():
        deployment = source()
        orphans = deployment.write(request) if args.yes else deployment.read(request)
    show(orphans, format_orphans, as_json=args.json)
    return OK


def format_orphans(orphans: Any) -> str:
    """Return :class:`~airflow_partitions.tools.write.requeue.Orphans` as text for 120 columns."""
    o = orphans
    start, end = (f"{when.astimezone(UTC):%Y-%m-%d %H:%M:%S}" for when in (o.start, o.end))
    lines = [f"{o.dag_id}: {len(o.events)} stored asset events sent {start} … {end} UTC feed no run"]
    grouped = o.by_downstream_key()
    if grouped:
        lines.append(f"  {'downstream key':<28}{'events':>6}  {'upstream keys':<40}runs")
    for key, events in grouped.items():
        upstream = sorted({terminal(e.partition_key, lines=False) for e in events})
        shown = upstream[0] if len(upstream) == 1 else f"{upstream[0]} … {upstream[-1]}"
        ran = ", ".join(o.runs.get(key, ()))
        lines.append(f"  {terminal(key, lines=False):<28}{len(events):>6}  {shown:<40}{ran}"[:WIDTH].rstrip())
    for e in o.events:
        if e.refused:
            lines.append(wrap("refused", f"{e.partition_key} ({e.asset}): {e.refused.splitlines()[-1]}"))
    if o.stale_pending:
        lines.append(
            wrap(
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


COMMAND = Command(
    "requeue",
    "queue again the stored asset events a consumer's cleared pending runs had received",
    "After a consumer's rollup definition changed (even only max_downstream_keys), Airflow clears its "
    "pending partitioned runs with the keys they had received and replays nothing. List the stored asset "
    "events of its upstream assets, sent in [--start, --end] (without --end: until now), that feed none "
    "of its runs, per downstream key under its current mapper; with --yes, queue them again for this "
    "Dag alone, as the scheduler does on an event's arrival (no new asset event: other consumers are "
    "not triggered).",
    EXAMPLES,
    ARGUMENTS,
    run,
    (RequeueRequest,),
)
