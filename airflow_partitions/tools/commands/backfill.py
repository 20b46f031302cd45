"""
``backfill --missing DAG_ID``: the partitions of a range without a successful run; ``--yes`` creates them.

:class:`BackfillRequest` lists them (a source's ``missing``); the runs are created from that list
(a source's ``create_runs``, through Airflow's ``trigger_dag``).
"""

from __future__ import annotations

import argparse
import json
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
    in_years,
    parse_date,
    quiet,
)
from airflow_partitions.tools.commands.text import count, terminal


@dataclass(frozen=True)
class BackfillRequest(Request):
    """
    A Dag's partitions in ``[start, end]`` without a successful run, due by *now* or not (aware datetimes).

    ``BackfillRequest("daily", datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 7, tzinfo=UTC), now)``.

    :raises UsageError: (a ``ValueError``: exit code 2, or 400) for *start* after *end*, or a range
        reaching outside the years 0003 to 9997 (:func:`~airflow_partitions.tools.commands.base.in_years`).
    """

    ROUTE: ClassVar[str] = "backfill"

    dag_id: str
    start: datetime
    end: datetime
    now: datetime

    def __post_init__(self) -> None:
        in_order(self.start, self.end)
        in_years(self.start, self.end)

    def read(self, session: Any) -> list[Any]:
        """
        Return the :class:`~airflow_partitions.tools.write.backfill.MissingPartition` list, due or not.

        :raises ValueError: naming the Dag, if it is not stored or its timetable makes no partitions.
        """
        from airflow_partitions.tools.write.backfill import missing_partitions

        return missing_partitions(
            self.dag_id, self.start, self.end, include_open=True, now=self.now, session=session
        )


ARGUMENTS: list[Argument] = [
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
    JSON_ARG,
    *API_ARGS,
]

EXAMPLES = """\
examples:
  airflow-partitions backfill --missing it_backfill_daily --start 2026-03-01 --end 2026-03-07
  airflow-partitions backfill --missing it_backfill_daily --start 2026-03-01 --end 2026-03-07 --yes

exit codes: 0 listed (dry run) or created, 2 usage error"""


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``backfill --missing``: list (or, with --yes, create) the runs a range lacks."""
    from datetime import UTC

    now = datetime.now(UTC)
    start, end = parse_date("--start", args.start), parse_date("--end", args.end)
    request = BackfillRequest(args.dag_id, start, end, now)
    deployment = source()
    with quiet():
        found = deployment.missing(request)
        opened = [m for m in found if m.is_open(now)]
        missing = found if args.include_open else [m for m in found if not m.is_open(now)]
        runs = deployment.create_runs(args.dag_id, missing) if args.yes else []
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
        print(f"  {terminal(m.partition_key, lines=False):<28}{', '.join(m.states) or 'never ran'}{due}")
    verb = f"created {count(len(runs), 'run')}" if args.yes else "dry run: pass --yes to create them"
    print(f"{args.dag_id}: {count(len(missing), 'partition')} without a successful run; {verb}")
    if opened and not args.include_open:
        first = opened[0]
        due = first.due.isoformat() if first.due else "?"
        print(
            f"  left out {count(len(opened), 'partition')} not due yet (their period has not ended; "
            f"the first, {first.partition_key!r}, is due {due}): pass --include-open to create them anyway"
        )
    return OK


COMMAND = Command(
    "backfill",
    "create runs only for the partitions of a range without a successful run",
    "List the partitions a partitioned Dag's timetable makes in [--start, --end] that have no successful "
    "run (failed or never run); with --yes, create exactly those runs through Airflow's trigger_dag.",
    EXAMPLES,
    ARGUMENTS,
    run,
)
