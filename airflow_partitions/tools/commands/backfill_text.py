"""
``backfill``'s text for 120 columns: a plan (:func:`format_plan`), the backfills (:func:`format_backfills`).

Kept apart from :mod:`.backfill` (its request, arguments and handler) for the length of one screen.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from typing import Any

from airflow_partitions.tools.commands.text import WIDTH, count, listed, terminal, wrap

#: Keys a ``send`` step lists in text (more: the first three and the last; ``--json`` lists all).
SENT_SHOWN = 6


def format_carried_out(plan: Any) -> str:
    """Return :func:`format_plan` of the plan ``--yes`` carried out (feeds of every partition selected)."""
    return format_plan(plan, whole=True)


def format_plan(plan: Any, *, whole: bool = False) -> str:
    """
    Return a :class:`~airflow_partitions.tools.write.backfill.Plan` as text for 120 columns.

    A dry run's runs to start and keys to send are of the page of partitions shown, and say so
    when it is not all of them; *whole*: the plan ``--yes`` carried out, its keys to send of every
    selected partition.
    """
    states = ", ".join(f"{n} {state}" for state, n in plan.states.items() if n)
    lines = [
        f"{plan.dag_id}: {count(plan.total, 'partition')} {terminal(plan.selection, lines=False)}"
        + (f": {states}" if states else "")
    ]
    if plan.partitions:
        lines.append(f"  {'partition':<28}{'state':<16}what it takes")
    for partition in plan.partitions:
        head = f"  {terminal(partition.partition_key, lines=False):<28}{partition.state:<16}"
        said = [_step_text(plan.dag_id, partition.partition_key, step) for step in partition.steps] or [
            "nothing"
        ]
        lines.append(
            head + said[0] if len(head + said[0]) <= WIDTH else head.rstrip() + "\n" + wrap("", said[0])
        )
        lines.extend(wrap("", text) for text in said[1:])
    shown = len(plan.partitions)
    if shown < plan.total:
        lines.append(
            f"  showing {plan.offset + 1 if shown else 0}-{plan.offset + shown} of {plan.total} "
            "(--limit, --offset)"
        )
    if plan.left_out_open:
        lines.append(
            f"  left out {count(plan.left_out_open, 'period')} not due yet (not ended): "
            "--include-open plans them"
        )
    lines.extend(
        _tally(plan, "" if whole or shown == plan.total else f" for the {count(shown, 'partition')} shown")
    )
    return "\n".join(lines)


def _step_text(dag_id: str, key: str, step: Any) -> str:
    """Say one step: ``re-run asset_triggered__… (its latest run failed)``, naming another Dag's partition."""
    where = (
        "" if (step.dag_id, step.partition_key) == (dag_id, key) else f"{step.dag_id} {step.partition_key}: "
    )
    why = f" ({step.why})" if step.why else ""
    if step.action == "re-run":
        return f"{where}re-run {step.run_id}{why}"
    if step.action == "send":  # that no Dag makes them: said once, on the feeds' line
        keys = step.keys
        shown = (
            listed(keys)
            if len(keys) <= SENT_SHOWN
            else f"{listed(keys[:3])} … {terminal(keys[-1], lines=False)}"
        )
        from airflow_partitions.tools.write.backfill import NO_DAG

        why = "" if step.why.startswith(NO_DAG) else why
        return f"{where}send {count(len(keys), 'key')} of {step.asset}: {shown}{why}"
    return f"{where}{step.action}{why}"


def _tally(plan: Any, page: str) -> list[str]:
    """
    Return the lines on what the plan starts, what a feed must send, and what was done.

    *page* (``" for the 50 partitions shown"``, or ``""``) says that the counts are of the page shown.
    """
    runs = plan.runs if plan.backfill is None else []
    lines = []
    if runs:
        kinds = Counter(step.action for step in runs)
        lines.append(f"runs to start{page}: {len(runs)} ({', '.join(f'{n} {a}' for a, n in kinds.items())})")
    for feed in plan.feeds:
        lines.append(
            f"keys a feed must send{page}: {count(len(feed.keys), 'key')} of "
            f"{terminal(feed.asset, lines=False)} (no Dag makes them; --json: the bodies of POST "
            "/api/v2/assets/events)"
        )
    if page and (runs or plan.feeds):
        lines.append(f"  (of {plan.total} selected: --limit 0 plans them all; --yes starts every one)")
    backfill = plan.backfill
    if backfill is not None:
        said = (
            f"{backfill.name}: {count(len(backfill.runs), 'run')}, at most {backfill.max_active} queued or "
            f"running at once, {backfill.order} first; {backfill.active} started now, the rest as they "
            f"finish (backfill --list; --pause, --resume, --cancel {backfill.name})"
        )
        lines.append(textwrap.fill(said, WIDTH, subsequent_indent="  ", break_long_words=False))
    elif runs:
        lines.append("dry run: pass --yes to start them")
    if plan.could_not:
        lines.append(
            f"could not: {count(len(plan.could_not), 'step')} (keys only a feed can send, or what a backfill "
            "cannot do; listed above)"
        )
    return lines


def format_backfills(found: Any) -> str:
    """Return :class:`~airflow_partitions.tools.write.paced.Backfills` as text for 120 columns."""
    if not found.backfills:
        return "no backfill"
    lines = [f"  {'backfill':<16}{'Dag':<28}{'state':<11}{'runs':>6}  by state"]
    for b in found.backfills:
        states = ", ".join(f"{n} {s}" for s, n in sorted(b.counts.items()))
        lines.append(
            f"  {b.name:<16}{terminal(b.dag_id, lines=False):<28}{b.state:<11}{len(b.runs):>6}  {states}"
        )
        lines.append(
            wrap("", f"{b.selection}; at most {b.max_active} at once, {b.order} first; by {b.owner}")
        )
        if b.state == "cancelled":
            lines.append(wrap("", _cancelled(b)))
    return "\n".join(lines)


def _cancelled(backfill: Any) -> str:
    """Say what a backfill's cancel did: ``its cancel failed 2 runs still queued (…); 1 running goes on``."""
    failed = backfill.cancel_failed
    said = f"its cancel failed {count(len(failed), 'run')} still queued" + (
        f" ({listed(list(failed))})" if failed else ""
    )
    going = backfill.active
    return said + (f"; {going} of its runs queued or running go on" if going else "")
