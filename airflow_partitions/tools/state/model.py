"""
What the Partitions view's API and ``status --json`` return: the value types of partition state.

Frozen dataclasses, plain JSON through :func:`~airflow_partitions.tools.state.plain.jsonable`
(golden files pin it: ``tests/unit/tools/test_state_golden.py``); the states and how urgent each
is; how keys are cut into their time part and into the buckets of a strip. Pure: no database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.grains.keys import ISO_WEEK_KEY, OtherMember, OutsideCalendar
from airflow_partitions.tools.state.plain import jsonable

#: Pending partitioned Dag runs the scheduler evaluates per loop, oldest first (Airflow 3.3's
#: ``MAX_PARTITION_DAG_RUNS_PER_LOOP``).
EVALUATED_PER_LOOP = 500
#: The audit-log event Airflow writes for a key a consumer's mapper refused on arrival.
REFUSED_EVENT = "failed to map partition_key"
#: The audit-log events of ``clean --yes`` (one row per Dag) and ``discard --yes`` (one per pending
#: run removed): the rows they delete from ``asset_partition_dag_run`` (:mod:`.mirror` starts over).
CLEANED_EVENT = "partition-tools clean"
DISCARDED_EVENT = "partition-tools discard"
#: The audit-log event of one ``reroute`` that changed something (``event`` holds 60), written in the
#: transaction that moved keys out of pending runs (:mod:`.mirror` reads their stamps again).
REROUTED_EVENT = "partition-tools reroute"


def time_part(key: str) -> str:
    """Return the part of *key* a time range selects on: after the last ``|`` (``jfk|2026-04-15``)."""
    return key.rsplit(SEPARATOR, 1)[-1]


#: What separates the dimensions of a composite key (``jfk|2013-03-10``); the time part is the last.
SEPARATOR = "|"


def bucket_length(first: str | None, last: str | None) -> int:
    """
    Return how many characters of a time part name its bucket in a strip, for keys from *first* to *last*.

    Months (7: ``2013-03``) over a range longer than a month, days (10) within one month, hours
    (13) within one day; years (4) over more than ten years of ISO keys. ISO weeks (``2026-W53``)
    one by one (8) within one ISO year, else by year (4). Labelled keys group by their year:
    ``FY2026-`` of ``FY2026-Q3`` (7).
    """
    if first is None or last is None:
        return BUCKET
    if ISO_WEEK_KEY.fullmatch(first) and ISO_WEEK_KEY.fullmatch(last):  # 2026-W53: weeks, or their years
        return 8 if first[:4] == last[:4] else 4
    same = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last))
    )
    if same >= 10:
        return 13
    if same >= 7:
        return 10
    years = first[:4], last[:4]
    if all(y.isascii() and y.isdigit() for y in years) and int(years[1]) - int(years[0]) > 10:
        return 4
    return BUCKET


def in_time_range(key: str, start: str | None, end: str | None) -> bool:
    """
    Return whether the time part of *key* lies in [*start*, *end*].

    Bounds compare as text on the key's own spelling, *end* on its length: ``end="2026-04"`` keeps
    every key of April 2026 (``2026-04-30T23`` too).
    """
    part = time_part(key)
    return (start is None or part >= start) and (end is None or part[: len(end)] <= end)


def is_selected(key: str, start: str | None, end: str | None, only: str | None) -> bool:
    """Return whether *key* is *only*, else whether its time part is in [*start*, *end*] (SQL: ``.sql``)."""
    return key == only if only is not None else in_time_range(key, start, end)


def prefix_and_bucket(key: str, length: int, by_prefix: bool) -> tuple[str, str]:
    """
    Return a key's prefix before its time part and the first *length* characters of its time part.

    ``("jfk|", "2013-03")`` of ``jfk|2013-03-10``; the prefix is ``""`` unless *by_prefix* (as
    :func:`~airflow_partitions.tools.state.sql.prefix_and_bucket_sql` in SQL).
    """
    part = time_part(key)
    return (key[: len(key) - len(part)] if by_prefix else ""), part[:length]


#: Characters of a key's time part that name its bucket in a Dag's strip of states: ``2026-03`` of
#: day and hour keys, ``FY2026-`` of fiscal quarters (ISO weeks: :func:`bucket_label`).
BUCKET = 7
#: What the first 7 characters of an ISO week key leave of it (``2026-W5`` of ``2026-W53``).
_CUT_ISO_WEEK = re.compile(r"(?P<year>\d{4})-W\d?")


def bucket_label(bucket: str) -> str:
    """
    Return the period a strip's *bucket* of time parts names: *bucket*, but a cut ISO week's year.

    7 characters of ``2026-W53`` (``2026-W5``) would put weeks 50 to 53 in one cell and call it
    a week; the cell is the year, ``2026``, which its keys' range selects (``in_time_range``).
    """
    cut = _CUT_ISO_WEEK.fullmatch(bucket)
    return cut["year"] if cut else bucket


#: Keys listed in one list of a partition (received, awaited, missing, never counting); the rest are
#: counted (``*_total``) and paged by :func:`partition_keys` (the view's detail endpoint).
LISTED = 100

#: Partition states, the ones that need attention first: a run failed, a run fired without all its
#: keys, a pending run holds keys that will never count, its deadline passed, its period ended
#: without a deadline to fire it, a key it counted came again after its run started (stale); it
#: waits; then what runs and what succeeded complete.
STATES = (
    "failed",
    "ran incomplete",
    "never counting",
    "past deadline",
    "overdue",
    "stale",
    "pending",
    "running",
    "queued",
    "success",
)
#: The states of a pending partitioned Dag run (one without a Dag run yet).
PENDING_STATES = ("never counting", "past deadline", "overdue", "pending")


#: The states of a partition that has a successful Dag run: it is never late.
SUCCEEDED = ("success", "ran incomplete", "stale")


def late_since(state: str, late_at: datetime | None, now: datetime) -> datetime | None:
    """
    Return since when a partition in *state* is late at *now* (UTC): *late_at*, if it has passed.

    A partition is late once its period's end plus its mapper's ``expected_within`` (*late_at*,
    :func:`~airflow_partitions.lateness.late_at`) has passed and its latest Dag run has not
    succeeded (:data:`SUCCEEDED`: ``"ran incomplete"`` succeeded too): it is pending, or its run is
    queued, running or failed. ``None`` otherwise, and without an expectation (*late_at* ``None``).
    """
    if late_at is None or state in SUCCEEDED or now < late_at:
        return None
    return late_at


def attention(state: str) -> int:
    """Return the rank of *state* in :data:`STATES`, 0 the most urgent (unknown: just before success)."""
    return STATES.index(state) if state in STATES else len(STATES) - 1


@dataclass(frozen=True)
class AssetProgress:
    """
    What one upstream asset has given a partitioned Dag run (pending, or one that ran).

    Keys are upstream partition keys as producers sent them (``received``), as the rollup awaits
    them (``expected``, ``missing``, in time order), and the received keys that will never count,
    each with why (``never_counting``: ``[key, reason]``). ``expected`` is empty for a mapper that
    is not a rollup (one key is enough). Each list holds at most :data:`LISTED` keys; ``counted``
    and the ``*_total`` fields count them all.
    """

    asset: str
    received: tuple[str, ...]
    expected: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    never_counting: tuple[tuple[str, str], ...] = ()
    counted: int = 0
    received_total: int = 0
    expected_total: int = 0
    missing_total: int = 0


@dataclass(frozen=True)
class RanWith:
    """
    What a Dag run of a rollup ran with: upstream keys counted of those awaited, and the missing ones.

    ``RanWith(20, 24, ("2026-03-10T04", …), 4)``: it fired (a deadline passed) with 20 of its 24
    hours. ``missing`` lists at most :data:`LISTED` keys, in time order; ``missing_total`` counts
    them all. Summed over the Dag's rollup assets; an asset under a mapper that is no rollup counts
    1 of 1 once it sent a key. Read from the keys Airflow logged for the run (the asset events it
    linked to it), never guessed.
    """

    counted: int
    awaited: int
    missing: tuple[str, ...] = ()
    missing_total: int = 0

    @property
    def complete(self) -> bool:
        """Whether every awaited key was counted, of at least one (a period awaiting none never did)."""
        return self.awaited > 0 and self.counted >= self.awaited


@dataclass(frozen=True)
class Run:
    """
    One Dag run of a partition: its id, state and, for a run a rollup fired, what it ran with.

    ``ran_with_kept`` is false for a run asset events triggered whose keys Airflow's bookkeeping
    no longer holds (``airflow-partitions clean`` removed them): then ``ran_with`` is ``None``,
    not known, rather than a guess.
    """

    run_id: str
    state: str
    ran_with: RanWith | None = None
    ran_with_kept: bool = True


@dataclass(frozen=True)
class Partition:
    """
    One downstream partition key of a consumer Dag: its Dag runs and its pending run, if any.

    ``state`` is, for a pending run (no Dag run yet): ``"pending"`` (waiting for upstream keys),
    ``"past deadline"`` (its :class:`~airflow_partitions.CompletionDeadline` time to fire has
    come: it fires once settled), ``"overdue"`` (its period ended and no deadline will fire it:
    under ``WaitForAll`` it waits for keys that may never come), ``"never counting"`` (it holds
    keys that will never count); else the state of its latest Dag run (``"success"``,
    ``"failed"``, ``"running"``, ``"queued"``), with ``"ran incomplete"`` when it succeeded but
    its runs have not had every awaited key between them, and ``"stale"`` when it succeeded with
    every key but a key that counts towards it came again after its latest run started (data
    corrected upstream: :mod:`~airflow_partitions.tools.state.stale`). ``ran_with`` is what its runs triggered
    by asset events ran with together (``None`` for none: a manual run): a rerun for keys that
    came late (a refresh) completes its period. ``history`` lists every run, oldest first, each
    with what it ran with itself. ``queue_position`` is the pending run's place
    among all pending partitioned runs of the deployment, oldest first (1-based): beyond 500 the
    scheduler does not evaluate it this loop. ``closes_at`` is the end of its period (UTC). Times
    are UTC.

    A partition that has a Dag run shows that run's state, whatever came after it: a key sent again
    for its period (an at-least-once feed) opens a pending run beside it (Airflow's HOLD), whose
    state is ``pending_again`` (``"pending"``, ``"past deadline"`` or ``"never counting"``; never
    ``"overdue"``: it waits for a period that ran), with its keys in ``progress`` and its
    ``opened_at``, ``fires_at`` and ``queue_position``; ``None`` when there is none.
    ``airflow-partitions discard`` removes such runs. ``ran_with_kept`` is false when what one of
    its runs ran with is no longer kept (``airflow-partitions clean``): ``ran_with`` is then
    ``None`` and a success is not told apart from a run that ran incomplete. ``late_since`` is
    when it became late (:func:`late_since`: its period's end plus its mapper's
    ``expected_within``, passed without a successful run), ``None`` when it is not late.
    """

    partition_key: str
    state: str
    runs: tuple[tuple[str, str], ...] = ()
    progress: tuple[AssetProgress, ...] = ()
    opened_at: datetime | None = None
    fires_at: datetime | None = None
    queue_position: int | None = None
    ran_with: RanWith | None = None
    history: tuple[Run, ...] = ()
    closes_at: datetime | None = None
    pending_again: str | None = None
    ran_with_kept: bool = True
    late_since: datetime | None = None

    @property
    def again(self) -> int:
        """
        How many upstream keys the pending run beside its Dag runs holds (0: none): ``1 key after it ran``.

        Counted as members (three spellings of one hour are one key), or as received under a
        mapper that is no rollup. Keys sent again, or keys that came after the run fired (late).
        """
        if not self.pending_again:
            return 0
        return sum(p.counted if p.expected_total else p.received_total for p in self.progress)

    @property
    def starved(self) -> bool:
        """Whether the scheduler's loop does not reach this pending run (over 500 ahead)."""
        return self.queue_position is not None and self.queue_position > EVALUATED_PER_LOOP


@dataclass(frozen=True)
class Refusal:
    """
    A key refused on arrival, read from Airflow's audit-log row (``failed to map partition_key``).

    ``reason`` is the mapper's own words: the error Airflow appends after its preamble ("This
    likely indicates that the partition mapper in the target Dag is misconfigured…"), which is
    kept whole in ``message``. ``expected`` tells the rollup's rule at work (a
    :class:`~airflow_partitions.OutsideCalendar`: a Saturday into a business-day month) from a
    mistake (a key the mapper cannot read, a misconfigured mapper); ``other_member``, among those,
    a key for a member the window does not list (:class:`~airflow_partitions.OtherMember`: another
    region's store in a per-region Dag). ``partition_key``, ``asset`` and ``dag_id`` are ``None``
    for a row not in Airflow 3.3's wording. ``requeued``: the refused event feeds a run of the Dag
    now, queued again after the refusal (``airflow-partitions requeue --yes``, once the mapper took
    the key: :func:`~airflow_partitions.tools.state.audit_log.requeued`).
    """

    when: datetime | None
    message: str
    partition_key: str | None = None
    asset: str | None = None
    dag_id: str | None = None
    reason: str = ""
    expected: bool = False
    other_member: bool = False
    requeued: bool = False

    @classmethod
    def read(cls, when: datetime | None, extra: str | None) -> Refusal:
        """Return the refusal an audit-log row's ``extra`` (Airflow 3.3's wording) records."""
        message = extra or ""
        found = _REFUSED.match(message)
        if found is None:
            return cls(when, message, reason=message.splitlines()[-1] if message else "")
        return cls(
            when,
            message,
            partition_key=found["key"],
            asset=found["asset"],
            dag_id=found["dag"],
            reason=found["reason"].strip(),
            expected=found["error"] in (OutsideCalendar.__name__, OtherMember.__name__),
            other_member=found["error"] == OtherMember.__name__,
        )


#: Airflow 3.3's wording of a refused key (``airflow/assets/manager.py``): the key, the asset, the
#: Dag, its preamble, then ``<exception class>: <message>`` on the last line.
_REFUSED = re.compile(
    r"^Could not map partition_key '(?P<key>.*?)' for asset \(name='(?P<asset>.*?)', uri='.*?'\) "
    r"in target Dag '(?P<dag>[^']*)'\..*?\n(?P<error>\w+): (?P<reason>.*)\Z",
    re.DOTALL,
)


@dataclass(frozen=True)
class MembersProblem:
    """
    An Airflow Variable a Dag's rollups read members from that cannot give them now, and what to do.

    ``MembersProblem("retail_stores", "Airflow Variable 'retail_stores' is not JSON (…); expected …",
    since)``: while it lasts, every key for those rollups is refused on arrival and their pending
    runs wait (none fires). ``since`` (UTC) is when the Dag first refused a key for it, from
    Airflow's audit log; before any key was refused, when a process of this machine first read it
    so. ``fix`` says how to set it right, and what becomes of the keys refused meanwhile.
    """

    variable: str
    problem: str
    since: datetime | None = None
    fix: str = ""


@dataclass(frozen=True)
class ConsumerState:
    """
    The partition state of one partitioned consumer Dag: one page of its partitions, counts of all.

    ``partitions`` is the page (``offset``, ``limit``) of the ``total`` partitions selected (time
    range, states), ordered by the time part of their key; ``states`` counts the selected ones by
    state (``"success"`` and ``"ran incomplete"`` apart); ``first`` and ``last`` are the range
    covered: the time parts of the first and last selected keys (``2013-03-01``, ``2013-12-31``).
    ``pending_total`` counts every pending partitioned run of the deployment; ``blocked_ahead``,
    those among the 500 the scheduler evaluates ahead of this Dag's oldest pending run that hold
    only keys that will never count; ``starved``, this Dag's pending runs beyond those 500.
    ``refusals`` are the latest :data:`LISTED` keys refused on arrival, of ``refusals_total``.
    ``again`` counts the selected partitions with a pending run beside their Dag runs (counted in
    ``states`` by their latest run's state: see :class:`Partition`); ``rerun_policies``, per asset
    under a rollup, what a key for a period that already ran does (``[["hours", "hold"]]``:
    Airflow 3.4's ``RerunPolicy`` by name; ``"hold"`` on 3.3). ``late`` counts the selected
    partitions that are late now (:attr:`Partition.late_since`). ``members_problems`` names
    the Variables its rollups read members from that cannot give them now (:class:`MembersProblem`).
    ``overview`` lays every
    selected partition out (not only the page) as strips of states, one per key prefix (``jfk``
    of ``jfk|2013-03-10``; ``""`` for plain keys): ``(bucket, worst state, partitions)`` per
    *bucket* characters of the time part (:func:`bucket_length`: ``2013-03`` months over a long
    range, days within a month).
    """

    dag_id: str
    assets: tuple[tuple[str, str], ...]
    partitions: tuple[Partition, ...]
    refusals: tuple[Refusal, ...] = ()
    pending_total: int = 0
    blocked_ahead: int = 0
    read_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    total: int = 0
    offset: int = 0
    limit: int | None = None
    states: dict[str, int] = field(default_factory=dict)
    first: str | None = None
    last: str | None = None
    refusals_total: int = 0
    starved: int = 0
    bucket: int = 0
    overview: tuple[tuple[str, tuple[tuple[str, str, int], ...]], ...] = ()
    again: int = 0
    rerun_policies: tuple[tuple[str, str], ...] = ()
    late: int = 0
    members_problems: tuple[MembersProblem, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601 strings), each partition with its ``ran_with``."""
        return jsonable(self)


@dataclass(frozen=True)
class ConsumerDag:
    """
    A Dag whose timetable is partitioned: its id, its schedule in words, whether it is paused.

    With :func:`consumer_dags` ``(summary=True)``, also its partitions' counts by state, the range
    covered (``first``, ``last``: time parts of keys) and ``strip``: per bucket of time (the first 7
    characters of the time part: a month of day and hour keys, ``FY2026-`` of fiscal ones),
    ``[bucket, worst state, partitions]``, in time order; and ``again``: its partitions with a
    pending run beside their Dag runs (a key sent again after the period ran), counted apart;
    ``late``: its partitions late now (:attr:`Partition.late_since`), counted apart too;
    ``members_problems``: its broken member Variables (:class:`MembersProblem`). ``warming``: true
    while the api-server reads the Dag for the first time in the background
    (:mod:`~airflow_partitions.tools.warming`): then it carries no summary.
    """

    dag_id: str
    schedule: str | None
    is_paused: bool
    states: dict[str, int] = field(default_factory=dict)
    first: str | None = None
    last: str | None = None
    strip: tuple[tuple[str, str, int], ...] = ()
    again: int = 0
    late: int = 0
    members_problems: tuple[MembersProblem, ...] = ()
    warming: bool = False

    @property
    def attention(self) -> int:
        """The rank (:func:`attention`) of the most urgent state among its partitions."""
        return min((attention(state) for state, n in self.states.items() if n), default=len(STATES))


@dataclass(frozen=True)
class KeyEvents:
    """The asset events of one partition key of an asset: how many, the first and last (UTC)."""

    partition_key: str
    events: int
    first: datetime | None
    last: datetime | None


@dataclass(frozen=True)
class AssetCoverage:
    """
    Which partition keys of one asset have asset events, and the keys consumers refused.

    ``keys`` in key order; ``unkeyed_events`` counts the asset's events without a partition key.
    """

    asset: str
    uri: str
    asset_id: int
    keys: tuple[KeyEvents, ...]
    refusals: tuple[Refusal, ...] = ()
    unkeyed_events: int = 0
    read_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601 strings)."""
        return jsonable(self)
