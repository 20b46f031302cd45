"""
``clean --before DATE``: the bookkeeping Airflow keeps forever for partitioned runs that fired.

:class:`CleanRequest` counts those rows (a source's ``fired_rows``); with ``--yes`` it removes them
in batches (a source's ``clean``), one audit-log row per Dag under the caller's name. Through
``--api-url`` the dry run needs read access to the Dag (``--dag``) or to every Dag, ``--yes``
edit access: :mod:`airflow_partitions.tools.ui.commands`.
"""

from __future__ import annotations

import argparse
import contextlib
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
    quiet,
    reading,
    session_for,
    show,
)
from airflow_partitions.tools.commands.text import count
from airflow_partitions.tools.errors import UnknownDag


@dataclass(frozen=True)
class CleanRequest(Request):
    """
    The rows of partitioned runs that fired, opened before *before*, of *dag_id* or all Dags.

    ``CleanRequest("2026-01-01", "weather_local_day_jfk")`` is ``dags/weather_local_day_jfk/clean``;
    without a Dag (``None``), ``dags/~/clean``. *before* is in the range language of every command
    (:func:`~airflow_partitions.tools.state.selection.time_bound`): an ISO 8601 date or time (UTC
    without an offset), or of a partitioned Dag a key of its grain or its leading part; the rows
    are those opened before its first instant.

    :raises UsageError: naming ``--before``, for a value no Dag could read
        (:func:`~airflow_partitions.tools.state.selection.checked_times`); without a Dag, for one
        that is not an ISO 8601 date or time.
    """

    ROUTE: ClassVar[str] = "clean"

    before: str
    dag_id: str | None = None

    def __post_init__(self) -> None:
        from airflow_partitions.tools.state.selection import checked_times, time_bound

        checked_times(self.before, None, option="--before")
        if self.dag_id is None:  # every Dag: no grain to read a key by
            time_bound(None, None, "--before", self.before, last=False)

    @staticmethod
    def answer_type() -> type:
        """Return :class:`~airflow_partitions.tools.write.clean.Cleaned`."""
        from airflow_partitions.tools.write.clean import Cleaned

        return Cleaned

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.write.clean.Cleaned` counted (read-only).

        :raises UsageError: for a *before* that names no instant (:meth:`instant`).
        :raises UnknownDag: naming the Dag, if the deployment has no such Dag and no rows of it.
        """
        from airflow_partitions.tools.write.clean import fired_rows

        with reading(session) as opened:
            return fired_rows(self.instant(opened), dag_id=self.dag_id, session=opened)

    def write(self, session: Any, user: str | None, may_run: Any = None) -> Any:
        """
        Remove them in batches, each its own transaction, under *user*'s name; return what was removed.

        *session* reads only *before*: each batch commits on its own (short locks while Airflow runs).

        :raises UsageError: as :meth:`read`, before anything is removed.
        :raises UnknownDag: as :meth:`read`, before anything is removed.
        """
        from airflow_partitions.tools.write.clean import clean

        with session_for(session) as opened:
            before = self.instant(opened)
        return clean(before, dag_id=self.dag_id, user=user)

    def instant(self, session: Any) -> datetime:
        """
        Return the first instant *before* names (aware, UTC), read by the Dag's grain if it is partitioned.

        :raises UsageError: naming ``--before``, for a value that names no instant.
        """
        from airflow_partitions.tools.state.selection import time_bound
        from airflow_partitions.tools.state.serialized import consumer_timetable, timetable_grain

        grain = None
        # Another schedule's Dag, or a deleted one's rows: no grain to read a key by.
        with contextlib.suppress(UnknownDag):
            if self.dag_id is not None:
                grain = timetable_grain(*consumer_timetable(self.dag_id, session))
        return time_bound(self.dag_id, grain, "--before", self.before, last=False)


ARGUMENTS: list[Argument] = [
    (
        ("--before",),
        {
            "required": True,
            "help": "remove rows of pending runs opened before this time: an ISO 8601 date or time (UTC "
            "without an offset), or with --dag a key of its grain or its leading part",
        },
    ),
    (("--dag",), {"help": "only this Dag's rows (default: every Dag's)"}),
    (("--yes",), {"action": "store_true", "help": "remove them (without it: a dry run that counts them)"}),
    JSON_ARG,
    *API_ARGS,
]

EXAMPLES = """\
examples:
  airflow-partitions clean --before 2026-01-01
  airflow-partitions clean --before 2026-01-01 --yes
  airflow-partitions clean --before 2026-01-01 --dag weather_local_day_jfk --json
  airflow-partitions clean --before 2026-01-01 --dag weather_local_day_jfk --yes --api-url https://airflow.example.com

exit codes: 0 counted (dry run) or removed, 1 an unknown Dag (or, with --api-url, too little access),
  2 usage error"""


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``clean``: count (or, with --yes, remove) the bookkeeping of partitioned runs that fired."""
    request = CleanRequest(args.before, args.dag)
    with quiet():
        deployment = source()
        found = deployment.write(request) if args.yes else deployment.read(request)
    show(found, format_cleaned, as_json=args.json)
    return OK


def format_cleaned(found: Any) -> str:
    """
    Return :class:`~airflow_partitions.tools.write.clean.Cleaned` as text for 120 columns.

    ``--before`` is said in UTC, the instant compared with (``2026-01-01T00:00+02:00`` is
    ``2025-12-31 22:00:00 UTC``).
    """
    from datetime import UTC

    c = found
    when = f"{c.before.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
    verb = "removed" if c.removed else "would remove"
    lines = [
        f"{verb} {c.pending_rows:,} pending-run rows of runs that fired, opened before {when}, and their "
        f"{c.key_log_rows:,} key-log rows ({count(len(c.by_dag), 'Dag')})"
    ]
    lines.extend(f"  {dag:<40}{pending:>10,} {logged:>12,}" for dag, (pending, logged) in c.by_dag.items())
    if not c.removed:
        lines.append("dry run: pass --yes to remove them (pending runs, Dag runs and asset events are kept)")
    return "\n".join(lines)


COMMAND = Command(
    "clean",
    "remove the bookkeeping Airflow keeps forever for partitioned runs that fired",
    "Airflow never deletes a partitioned run's pending-run row (asset_partition_dag_run) or its key-log "
    "rows (partitioned_asset_key_log) once the run fired, and `airflow db clean` does not cover them. "
    "Count those of runs opened before --before (every Dag's, or --dag's); with --yes, delete them in "
    "batches while Airflow runs. Pending runs, Dag runs and asset events are never touched; what a "
    "cleaned run ran with is then shown as not kept.",
    EXAMPLES,
    ARGUMENTS,
    run,
    (CleanRequest,),
)
