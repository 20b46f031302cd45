"""
``requeue DAG_ID --start [--end]``: the stored asset events a consumer's cleared pending runs had received.

:class:`RequeueRequest` lists them (a source's ``orphans``); with ``--yes`` it queues them again
for this Dag alone (a source's ``requeue``), as the scheduler does on an event's arrival.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from airflow_partitions.tools.commands.base import (
    API_ARGS,
    JSON_ARG,
    OK,
    Argument,
    Command,
    Opener,
    Request,
    in_order,
    parse_date,
    quiet,
    show,
)
from airflow_partitions.tools.commands.text import WIDTH, terminal, wrap


@dataclass(frozen=True)
class RequeueRequest(Request):
    """
    The Dag's upstream events sent in ``[start, end]`` (aware datetimes) that feed none of its runs.

    :raises UsageError: (a ``ValueError``: exit code 2, or 400) for *start* after *end*.

    ``RequeueRequest("weather_local_day_jfk", datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 5, 1,
    tzinfo=UTC))``.
    """

    ROUTE: ClassVar[str] = "requeue"

    dag_id: str
    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        in_order(self.start, self.end)

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.write.requeue.Orphans` (read-only).

        :raises LookupError: for an unknown Dag, or one that is not a partitioned consumer (exit code 1).
        :raises ValueError: as :func:`~airflow_partitions.tools.write.requeue.orphaned_events`.
        """
        from airflow_partitions.tools.write.requeue import orphaned_events

        return orphaned_events(self.dag_id, self.start, self.end, session=session)

    def write(self, session: Any, user: str | None) -> Any:
        """
        Queue them again under *user*'s name; return what was queued.

        :raises ValueError: as :func:`~airflow_partitions.tools.write.requeue.requeue`.
        """
        from airflow_partitions.tools.write.requeue import requeue

        return requeue(self.dag_id, self.start, self.end, user=user, session=session)


ARGUMENTS: list[Argument] = [
    (("dag_id",), {"help": "the partitioned consumer Dag whose rollup definition changed"}),
    (("--start",), {"required": True, "help": "earliest asset event time, ISO 8601 (naive means UTC)"}),
    (("--end",), {"help": "latest asset event time, inclusive (a date: to its end); default: now"}),
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
    from datetime import UTC

    end = datetime.now(UTC) if args.end is None else parse_date("--end", args.end, end_of_day=True)
    request = RequeueRequest(args.dag_id, parse_date("--start", args.start), end)
    with quiet():
        deployment = source()
        orphans = deployment.requeue(request) if args.yes else deployment.orphans(request)
    show(orphans, format_orphans, as_json=args.json)
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
)
