"""``check DAG_FOLDER``: push sample keys of every producer through every consumer; list the findings."""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Sequence
from typing import Any

from airflow_partitions.tools.commands.base import FOUND, JSON_ARG, OK, Argument, Command, Opener, quiet
from airflow_partitions.tools.commands.text import WIDTH, terminal

ARGUMENTS: list[Argument] = [(("dag_folder",), {"help": "the Dag folder (or file) to check"}), JSON_ARG]

EXAMPLES = """\
examples:
  airflow-partitions check example_dags
  airflow-partitions check example_dags --json

exit codes: 0 no errors (warnings and info may be listed), 1 errors found (a folder with no Dag file is
  one: nothing was checked), 2 usage error"""


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``check`` (which reads no deployment: *source* is not opened); exit 1 if errors are found."""
    from airflow_partitions.tools import check

    with quiet():
        findings = check(args.dag_folder)
    if args.json:
        print(json.dumps([f.to_dict() for f in findings], indent=2))
    else:
        print(terminal(format_findings(findings)))
    return FOUND if any(f.severity == "error" for f in findings) else OK


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


COMMAND = Command(
    "check",
    "check a Dag folder's partitioned producers and consumers",
    "Load the Dag folder as the dag-processor does, push sample keys of every producer (from its "
    "timetable, or declared with airflow_partitions.example_keys) through every consumer's mapper, and "
    "list what would be refused, held forever, exceed a fan-out cap or starve the scheduler.",
    EXAMPLES,
    ARGUMENTS,
    run,
)
