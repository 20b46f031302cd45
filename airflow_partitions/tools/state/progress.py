"""
What the keys a pending run received give it: progress per asset, state, what a run ran with.

Pure (no database): the reader hands these functions the keys it read. Importing this module
imports no Airflow (the mappers' classes come with the rollups handed in).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import TYPE_CHECKING

from airflow_partitions.tools.state.model import LISTED, AssetProgress, Partition, RanWith, Run

if TYPE_CHECKING:
    from airflow_partitions.tools.rollup_view import RollupView


def progress_of(
    asset: str, rollup: RollupView | None, downstream_key: str, received: AbstractSet[str]
) -> AssetProgress:
    """
    Return what the *received* keys of *asset* give *downstream_key* (a rollup counts members).

    For a mapper that is no rollup (*rollup* ``None``) one key is enough: only ``received`` is set
    (``counted`` 1 once a key came). Each list holds at most :data:`LISTED` keys (``*_total``: all).
    """
    keys = sorted(received)
    if rollup is None:
        return AssetProgress(asset, tuple(keys[:LISTED]), counted=min(1, len(keys)), received_total=len(keys))
    progress = rollup.progress(downstream_key, received)
    return AssetProgress(
        asset,
        tuple(keys[:LISTED]),
        progress.awaited[:LISTED],
        progress.missing[:LISTED],
        progress.never_counting[:LISTED],
        counted=progress.counted,
        received_total=len(keys),
        expected_total=len(progress.awaited),
        missing_total=len(progress.missing),
    )


def ran_with(
    progress: tuple[AssetProgress, ...],
    rollups: dict[str, RollupView | None],
    assets: list[tuple[str, str]],
    *,
    members_then: bool = False,
) -> RanWith:
    """
    Return what a run ran with from what each asset had given its pending run (:func:`progress_of`).

    Counted and awaited keys are summed over the Dag's assets; an asset that sent nothing counts 0
    of its awaited keys (a rollup's, or 1 under a mapper that is no rollup).

    *members_then*: the rollups' members are read at run time (a Variable), and *progress* was
    worked out under today's; the run is judged by the keys it had instead. Every key logged for it
    counted when it was logged (Airflow logs a key in the pending run of the period it counts for),
    so each is counted and awaited, whatever the members say now. A rollup that fires only complete
    (``WaitForAll``) fired once every key it awaited then was logged: it awaited those keys and no
    other (``RanWith(3, 3)`` for south's day that ran with s004 to s006, after s003 moved into
    south). One that may fire incomplete (a deadline, a minimum count) also awaits the keys today's
    members await that it lacks, listed as missing: what it awaited then is not kept.
    """
    given = {item.asset: item for item in progress}
    counted = awaited = 0
    missing: list[str] = []
    missing_total = 0
    for name, _ in assets:
        item, rollup = given.get(name), rollups.get(name)
        if rollup is None:
            counted += item.counted if item else 0
            awaited += 1
            continue
        if item is None:  # nothing came from this asset: every awaited key is missing
            continue
        if members_then:
            counted += item.received_total
            if not rollup.may_fire_incomplete:
                awaited += item.received_total
                continue
            awaited += item.expected_total + item.received_total - item.counted
        else:
            counted += item.counted
            awaited += item.expected_total
        missing_total += item.missing_total
        missing.extend(item.missing[: LISTED - len(missing)])
    return RanWith(counted, awaited, tuple(missing), missing_total)


def pending_partition(
    downstream_key: str,
    progress: tuple[AssetProgress, ...],
    rollups: dict[str, RollupView | None],
    *,
    now: datetime,
    runs: tuple[tuple[str, str], ...] = (),
    opened_at: datetime | None = None,
    queue_position: int | None = None,
) -> Partition:
    """
    Return the :class:`Partition` of a pending run from what each asset gave it (pure: no database).

    Its state is ``"never counting"`` if it holds a key that will never count, ``"past deadline"``
    once a :class:`~airflow_partitions.CompletionDeadline` lets it fire (*now*, UTC, at or after
    the latest of its assets' times to fire), ``"overdue"`` when its period has ended with keys
    still missing and no deadline will fire it, else ``"pending"`` (also a complete one the
    scheduler has not fired yet: see its queue position).
    """
    fires_at, ends, deadline = pending_times(downstream_key, progress, rollups)
    return Partition(
        downstream_key,
        pending_state(never_counting(progress), fires_at, ends, deadline, now),
        runs=runs,
        progress=progress,
        opened_at=opened_at,
        fires_at=fires_at,
        queue_position=queue_position,
    )


def pending_times(
    downstream_key: str, progress: tuple[AssetProgress, ...], rollups: dict[str, RollupView | None]
) -> tuple[datetime | None, datetime | None, bool]:
    """
    Return when a pending run's state turns: ``(fires_at, ends, deadline)``, UTC, from its keys alone.

    *fires_at*: when a :class:`~airflow_partitions.CompletionDeadline` lets it fire (the latest of
    its assets'), else ``None``; *ends*: when the first period still missing keys ends (``None``
    if none is); *deadline*: whether a deadline will fire it.
    """
    from airflow_partitions.deadlines import CompletionDeadline

    times, ends, deadline = [], None, False
    for item in progress:
        rollup = rollups.get(item.asset)
        if rollup is not None and item.expected_total:
            expected = rollup.awaited(downstream_key)
            times.append(rollup.fires_at(expected, item.counted))
            closes_at = getattr(expected, "closes_at", None)
            if closes_at is not None and item.missing_total > 0:
                ends = closes_at if ends is None else min(ends, closes_at)
            deadline = deadline or isinstance(rollup.policy, CompletionDeadline)
    return max((t for t in times if t is not None), default=None), ends, deadline


def pending_state(
    never_counting: bool,
    fires_at: datetime | None,
    ends: datetime | None,
    deadline: bool,
    now: datetime,
) -> str:
    """
    Return a pending run's state at *now* (UTC) from :func:`pending_times` (:func:`pending_partition`).

    *never_counting*: whether an asset's keys include one its rollup never counts
    (:func:`never_counting`).
    """
    if never_counting:
        return "never counting"
    if fires_at is not None and fires_at <= now:
        return "past deadline"
    if ends is not None and ends <= now and not deadline:
        return "overdue"
    return "pending"


def never_counting(progress: tuple[AssetProgress, ...]) -> bool:
    """Whether a pending run holds a key its rollup never counts (of any asset, :func:`progress_of`)."""
    return any(p.never_counting for p in progress)


def ran_state(history: tuple[Run, ...], ran: RanWith | None) -> str:
    """Return a partition's state from its Dag runs: the latest's (``"ran incomplete"``: short of keys)."""
    state = history[-1].state if history else "pending"
    return "ran incomplete" if state == "success" and ran is not None and not ran.complete else state


def again_state(state: str) -> str:
    """
    Return the state of a pending run beside a Dag run (a key sent again), from its own pending state.

    Never ``"overdue"``: a period that ran is not late, whatever its re-opened run waits for.
    """
    return "pending" if state == "overdue" else state
