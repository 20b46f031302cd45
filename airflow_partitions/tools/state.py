"""
The partition state of a running deployment, read from its metadata database.

One reader under ``airflow-partitions status``, ``backfill --missing`` and the Partitions view.

Read-only, through Airflow's own models and session: a partitioned consumer Dag's pending
partitioned Dag runs (``AssetPartitionDagRun`` rows without a Dag run, the keys they received in
``PartitionedAssetKeyLog``), its Dag runs by partition key, the audit-log rows of keys refused on
arrival (``failed to map partition_key``), and the scheduler's queue of pending runs (the 500
oldest are evaluated per scheduler loop). The mappers are the ones the scheduler runs: the Dag's
serialized timetable. One query per table, whatever the number of partitions.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow_partitions.deadlines import CompletionDeadline
from airflow_partitions.grains import Grain, shorter_periods, shortest_period, typical_period
from airflow_partitions.grains.keys import ISO_WEEK_KEY, OtherMember, OutsideCalendar
from airflow_partitions.tools.rollup_view import RollupView, period_grain

#: Pending partitioned Dag runs the scheduler evaluates per loop, oldest first (Airflow 3.3's
#: ``MAX_PARTITION_DAG_RUNS_PER_LOOP``).
EVALUATED_PER_LOOP = 500
#: The audit-log event Airflow writes for a key a consumer's mapper refused on arrival.
REFUSED_EVENT = "failed to map partition_key"


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
    if all(y.isdigit() for y in years) and int(years[1]) - int(years[0]) > 10:
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
#: without a deadline to fire it, it waits; then what runs and what succeeded complete.
STATES = (
    "failed",
    "ran incomplete",
    "never counting",
    "past deadline",
    "overdue",
    "pending",
    "running",
    "queued",
    "success",
)
#: The states of a pending partitioned Dag run (one without a Dag run yet).
PENDING_STATES = ("never counting", "past deadline", "overdue", "pending")


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
        """Whether every awaited key was counted."""
        return self.counted >= self.awaited


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
    its runs have not had every awaited key between them. ``ran_with`` is what its runs triggered
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
    ``None`` and a success is not told apart from a run that ran incomplete.
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
    for a row not in Airflow 3.3's wording.
    """

    when: datetime | None
    message: str
    partition_key: str | None = None
    asset: str | None = None
    dag_id: str | None = None
    reason: str = ""
    expected: bool = False
    other_member: bool = False

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
    Airflow 3.4's ``RerunPolicy`` by name; ``"hold"`` on 3.3). ``overview`` lays every
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

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types (times as ISO 8601 strings), each partition with its ``ran_with``."""
        return jsonable(asdict(self))


def jsonable(value: Any) -> Any:
    """Return *value* (a dataclass as `asdict` gives it) in plain JSON types, datetimes as ISO 8601."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value.isoformat() if isinstance(value, datetime) else value


@dataclass(frozen=True)
class ConsumerDag:
    """
    A Dag whose timetable is partitioned: its id, its schedule in words, whether it is paused.

    With :func:`consumer_dags` ``(summary=True)``, also its partitions' counts by state, the range
    covered (``first``, ``last``: time parts of keys) and ``strip``: per bucket of time (the first 7
    characters of the time part: a month of day and hour keys, ``FY2026-`` of fiscal ones),
    ``[bucket, worst state, partitions]``, in time order; and ``again``: its partitions with a
    pending run beside their Dag runs (a key sent again after the period ran), counted apart.
    """

    dag_id: str
    schedule: str | None
    is_paused: bool
    states: dict[str, int] = field(default_factory=dict)
    first: str | None = None
    last: str | None = None
    strip: tuple[tuple[str, str, int], ...] = ()
    again: int = 0

    @property
    def attention(self) -> int:
        """The rank (:func:`attention`) of the most urgent state among its partitions."""
        return min((attention(state) for state, n in self.states.items() if n), default=len(STATES))


def consumer_dags(
    session: Any = None, *, summary: bool = False, only: Collection[str] | None = None
) -> list[ConsumerDag]:
    """
    List the partitioned Dags of the deployment (not stale), by Dag id: what :func:`consumer_state` reads.

    One query on ``DagModel.timetable_partitioned``, the flag Airflow sets when it serializes a Dag.
    With *summary*, each also carries its counts by state (``"ran incomplete"`` apart from
    ``"success"``), range of keys and strip of states over time: a few grouped queries for all
    the Dags together, whatever their number of partitions (:func:`_summaries`). *only* keeps
    the Dags of those ids (the ones a user may read).

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return consumer_dags(new, summary=summary, only=only)
    from airflow.models.dag import DagModel
    from sqlalchemy import select

    query = (
        select(DagModel.dag_id, DagModel.timetable_summary, DagModel.is_paused)
        .where(DagModel.timetable_partitioned.is_(True), DagModel.is_stale.is_(False))
        .order_by(DagModel.dag_id)
    )
    dags = [ConsumerDag(*row) for row in session.execute(query) if only is None or row[0] in only]
    if not summary:
        return dags
    timetables = consumer_timetables([d.dag_id for d in dags], session)
    # A Dag flagged partitioned without a serialized Dag to read it with (yet) has no summary.
    readers = {dag_id: _Reader(dag_id, session, found) for dag_id, found in timetables.items()}
    found = _summaries(readers, session) if readers else {}
    return [replace(dag, **found.get(dag.dag_id, {})) for dag in dags]


def consumer_state(
    dag_id: str,
    *,
    partition_key: str | None = None,
    start: str | None = None,
    end: str | None = None,
    states: Iterable[str] | None = None,
    limit: int | None = None,
    offset: int = 0,
    session: Any = None,
) -> ConsumerState:
    """
    Read the partition state of the partitioned consumer Dag *dag_id*: one page of its partitions.

    ``consumer_state("weather_local_day_jfk", partition_key="2013-03-10")`` tells whether New
    York's 2013-03-10 ran and with which of its UTC hours, or which of its 23 hours
    (``2013-03-10T05`` …) have arrived and which are missing. *start* and *end* select partitions
    by the time part of their key (:func:`in_time_range`), *states* by state; *limit* and *offset*
    page them, in the order of their keys' time part. Paging, the time range and the counts by
    state are worked out in the database; only the page's partitions are read in full, so a page
    of a Dag with 100,000 partitions takes what a page of one with 1,000 takes.

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    :raises ValueError: if *dag_id* has no serialized Dag, or its timetable is not partitioned
        by assets.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return consumer_state(
                dag_id,
                partition_key=partition_key,
                start=start,
                end=end,
                states=states,
                limit=limit,
                offset=offset,
                session=new,
            )
    reader = _Reader(dag_id, session)
    return reader.read(partition_key, start, end, None if states is None else set(states), limit, offset)


def consumer_range(dag_id: str, *, session: Any) -> tuple[str | None, str | None]:
    """
    Return the time parts of the first and last partition keys of *dag_id* (runs and pending runs).

    ``("2013-03-01", "2013-12-31")``; ``(None, None)`` for a Dag without partitions yet. Kept
    while the Dag's runs and pending runs are unchanged (:func:`_fingerprints`).

    :raises ValueError: as :func:`consumer_state`.
    """
    _Reader(dag_id, session)  # the Dag is a partitioned consumer, or ValueError
    ranges = _ranges_of([dag_id], session, None, None, None, _fingerprints([dag_id], session))
    return ranges.get(dag_id, (None, None))


def consumer_zone(
    asset_name: str, *, session: Any, only: Collection[str] | None = None
) -> tuple[str, str, str | None]:
    """
    Return the zone a Dag reading *asset_name* cuts periods in, the zone it reads naive keys in, the Dag.

    ``("America/New_York", "UTC", "weather_local_day_jfk")``: the first such Dag (by Dag id, of
    *only* if given) whose mapper for the asset is one of ours with a grain (a rollup's upstream
    mapper's, a composite's time dimension's); ``("UTC", "UTC", None)`` if none has one.
    """
    found = consumer_reader(asset_name, session=session, only=only)
    if found is None:
        return "UTC", "UTC", None
    mapper, dag_id = found
    zone, input_zone = zones_of(mapper) or ("UTC", "UTC")
    return zone, input_zone, dag_id


def consumer_reader(
    asset_name: str, *, session: Any, only: Collection[str] | None = None
) -> tuple[Any, str] | None:
    """
    Return the mapper of the Dag :func:`consumer_zone` names for *asset_name*, and that Dag's id.

    ``None`` if no partitioned Dag (of *only*, if given) reads the asset with one of our mappers
    with a grain.
    """
    for dag in consumer_dags(session, only=only):
        try:
            timetable, assets = consumer_timetable(dag.dag_id, session)
        except ValueError:
            continue
        for name, uri in assets:
            if name == asset_name and zones_of(mapper := timetable.get_partition_mapper(name=name, uri=uri)):
                return mapper, dag.dag_id
    return None


def consumer_grain(dag_id: str, session: Any) -> Grain | None:
    """
    Return the grain of the periods *dag_id*'s partition keys name, if all its assets' mappers agree.

    A rollup's upstream mapper's grain (``TradingSession(ExchangeCalendar("XNYS"))`` for a
    session's 30-minute bars), a temporal mapper's own; ``None`` for a Dag whose mappers name no
    one grain. The Partitions view lays a month of its keys out by it: a date without a period
    (a weekend of business days, a day without a session) is a closed place, not an unopened one.

    :raises ValueError: as :func:`consumer_state`.
    """
    timetable, assets = consumer_timetable(dag_id, session)
    grains = set()
    for name, uri in assets:
        mapper = timetable.get_partition_mapper(name=name, uri=uri)
        grains.add(period_grain(getattr(mapper, "upstream_mapper", None) or mapper))
    return grains.pop() if len(grains) == 1 else None


def has_period_on(grain: Grain, day: str) -> bool:
    """
    Whether *grain* has a period keyed by the date *day* (``2026-11-26`` under NYSE sessions: no).

    A grain whose periods tile time (days, hours) has one on every date; a business day or a
    trading session only on its calendar's days (a date it refuses, or moves to another key, has
    none).
    """
    if grain.tiles:
        return True
    try:
        return grain.parse(day).key == day
    except ValueError:
        return False


def awaited_by_date(mapper: Any) -> Callable[[str], tuple[str, ...] | None] | None:
    """
    Return what the period of each date awaits under *mapper*, for a grain that does not tile time.

    For a rollup of 30-minute bars into NYSE sessions, ``awaited("2026-11-27")`` is its 7 bars in
    time order (``2026-11-27T09:30-05:00`` … ``T12:30-05:00``), ``awaited("2026-11-26")`` is
    ``None`` (no session); for a mapper that is no rollup, ``()`` on a date with a period. The
    whole function is ``None`` for mappers whose grain tiles time (every date has a period: the
    view's hours of a day say what is missing) or that have no grain.
    """
    rollup = RollupView.of(mapper)
    grain = getattr(getattr(mapper, "upstream_mapper", None) if rollup else mapper, "grain", None)
    if not isinstance(grain, Grain) or grain.tiles:  # plain keys only: no composite's dimensions
        return None

    def awaited(day: str) -> tuple[str, ...] | None:
        if not has_period_on(grain, day):
            return None
        if rollup is None:
            return ()
        try:
            return rollup.in_order(rollup.awaited(day))
        except ValueError:
            return None

    return awaited


def zones_of(mapper: Any) -> tuple[str, str] | None:
    """Return ``(grain zone, input zone)`` of the first of our temporal mappers in *mapper*, else ``None``."""
    grain = getattr(mapper, "grain", None)
    if isinstance(grain, Grain):
        return grain.timezone, getattr(mapper, "input_timezone", None) or grain.timezone
    for inner in (getattr(mapper, "upstream_mapper", None), *getattr(mapper, "mappers", {}).values()):
        if inner is not None and (found := zones_of(inner)):
            return found
    return None


def consumer_timetable(dag_id: str, session: Any) -> tuple[Any, list[tuple[str, str]]]:
    """
    Return the serialized timetable of the partitioned consumer Dag *dag_id* and the assets it reads.

    The timetable is the one the scheduler runs (the latest serialized Dag); the assets are
    ``(name, uri)`` pairs, ``[("weather_jfk_hourly", "weather_jfk_hourly")]``, in the order of its
    asset condition; ``timetable.get_partition_mapper(name=…, uri=…)`` gives each one's mapper.
    Deserialized once per serialized version (its row id and hash), then kept: the overview reads
    every partitioned Dag's (:func:`consumer_timetables`, one query for them all).

    :raises ValueError: if *dag_id* has no serialized Dag, or its timetable is not partitioned.
    """
    found = consumer_timetables([dag_id], session).get(dag_id)
    if found is None:
        raise ValueError(
            f"{dag_id!r} is not a partitioned consumer Dag in this deployment's metadata database "
            "(no serialized Dag, or its schedule is not partitioned by assets)."
        )
    return found


def asset_rows(assets: Collection[tuple[str, str]], session: Any) -> list[tuple[int, str, str]]:
    """Return ``(id, name, uri)`` of the assets *assets* names (``(name, uri)`` pairs), in id order."""
    from airflow.models.asset import AssetModel
    from sqlalchemy import and_, or_, select

    if not assets:
        return []
    return [
        tuple(row)
        for row in session.execute(
            select(AssetModel.id, AssetModel.name, AssetModel.uri)
            .where(or_(*(and_(AssetModel.name == name, AssetModel.uri == uri) for name, uri in assets)))
            .order_by(AssetModel.id)
        )
    ]


def consumer_timetables(
    dag_ids: Collection[str], session: Any
) -> dict[str, tuple[Any, list[tuple[str, str]]]]:
    """
    Return :func:`consumer_timetable` of each of *dag_ids* that is a partitioned consumer Dag.

    One query for the latest serialized version of them all; a version seen before is not
    deserialized again.
    """
    from airflow.models.serialized_dag import SerializedDagModel

    versions = {
        dag_id: (row_id, dag_hash)
        for dag_id, row_id, dag_hash in session.execute(
            SerializedDagModel._latest_by_version_select(list(dag_ids)).with_only_columns(
                SerializedDagModel.dag_id, SerializedDagModel.id, SerializedDagModel.dag_hash
            )
        )
    }
    found = {}
    for dag_id in dag_ids:
        version = versions.get(dag_id)
        cached = _TIMETABLES.get(dag_id)
        if version is not None and cached is not None and cached[0] == version:
            found[dag_id] = (cached[1], list(cached[2]))
            continue
        dag = SerializedDagModel.get_dag(dag_id, session=session)
        timetable = getattr(dag, "timetable", None)
        if timetable is None or not getattr(timetable, "partitioned", False):
            continue
        condition = getattr(timetable, "asset_condition", None)
        assets = [(key.name, key.uri) for key, _ in condition.iter_assets()] if condition is not None else []
        if version is not None:
            _TIMETABLES[dag_id] = (version, timetable, tuple(assets))
        found[dag_id] = (timetable, assets)
    return found


#: Deserialized timetables by Dag id, with the serialized version (row id, hash) they were read from.
_TIMETABLES: dict[str, tuple[tuple[Any, ...], Any, tuple[tuple[str, str], ...]]] = {}


def run_states(dag_id: str, keys: Iterable[str], session: Any) -> dict[str, list[str]]:
    """
    Return the states of *dag_id*'s runs of each of *keys* that has runs, oldest run first.

    ``{"2026-03-03": ["failed", "success"]}``: 2026-03-03 failed, then its rerun succeeded; keys
    without a run are left out. One query on ``dag_run`` per 500 keys.
    """
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    states: dict[str, list[str]] = defaultdict(list)
    for chunk in _chunks(sorted(set(keys))):
        for key, state in session.execute(
            select(DagRun.partition_key, DagRun.state)
            .where(DagRun.dag_id == dag_id, DagRun.partition_key.in_(chunk))
            .order_by(DagRun.id)
        ):
            states[key].append(_state_name(state))
    return dict(states)


def time_part_sql(column: Any) -> Any:
    """
    Return SQL for :func:`time_part` of a key column: what follows the last ``|`` (SQLite and PostgreSQL).

    ``rtrim(key, replace(key, '|', ''))`` strips every trailing character that is not ``|``, leaving
    the key up to its last ``|``; the time part is what follows.
    """
    from sqlalchemy import func

    return func.substr(column, func.length(func.rtrim(column, func.replace(column, "|", ""))) + 1)


def _in_range_sql(part: Any, start: str | None, end: str | None) -> list[Any]:
    """Return SQL conditions for :func:`in_time_range` on a time-part expression."""
    from sqlalchemy import func

    conditions = []
    if start is not None:
        conditions.append(part >= start)
    if end is not None:
        conditions.append(func.substr(part, 1, len(end)) <= end)
    return conditions


def _chunks(items: list[Any], size: int = 500) -> Iterator[list[Any]]:
    """Yield *items* in lists of at most *size* (SQLite takes a bounded number of query parameters)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _state_name(state: Any) -> str:
    return str(getattr(state, "value", state))


#: What the runs a rollup fired ran with, by (rollup identity, the runs' pending-run ids): the keys
#: Airflow logged for a pending run never change once it fired, so each is worked out once per
#: process. Bounded; the scheduler-side mappers are rebuilt per process too.
_RAN_WITH: OrderedDict[tuple[int, tuple[int, ...]], RanWith] = OrderedDict()
_RAN_WITH_SIZE = 200_000

#: What a pending run's received keys give it, by (its Dag's mappers, its key, the keys): its
#: progress and the times its state turns on (:func:`pending_times`, which depend on the keys, not
#: the clock). The overview counts every pending run of a Dag each time it is read, and building
#: their awaited sets again (thousands, more than the rollups' own cache holds) was most of it.
_PENDING: OrderedDict[
    tuple[Any, ...], tuple[tuple[AssetProgress, ...], datetime | None, datetime | None, bool]
] = OrderedDict()
_PENDING_SIZE = 10_000


class _Reader:
    """One read of one consumer Dag's partition state, in one session (see :func:`consumer_state`)."""

    def __init__(
        self, dag_id: str, session: Any, found: tuple[Any, list[tuple[str, str]]] | None = None
    ) -> None:
        self.dag_id = dag_id
        self.session = session
        self.timetable, self.assets = found or consumer_timetable(dag_id, session)
        self.rollups = {
            name: RollupView.of(self.timetable.get_partition_mapper(name=name, uri=uri))
            for name, uri in self.assets
        }
        self.now = datetime.now(UTC)
        #: Whether a run of this Dag can fire without all its keys (a deadline, a minimum count);
        #: under WaitForAll a run exists only once every key counted.
        self.may_fire_incomplete = any(
            rollup is not None and rollup.may_fire_incomplete for rollup in self.rollups.values()
        )
        #: The grain of this Dag's periods and the least grace of its deadlines, when every rollup
        #: that may fire incomplete has a deadline over that grain (:attr:`RollupView.deadline`):
        #: then a run's creation time can prove it fired complete. Else ``None``: each run is read.
        deadlines = [r.deadline for r in self.rollups.values() if r is not None and r.may_fire_incomplete]
        grains = {d[0] for d in deadlines if d is not None}
        self.deadline = (
            (grains.pop(), min(d[1] for d in deadlines if d is not None))
            if deadlines and None not in deadlines and len(grains) == 1
            else None
        )
        self._shorter: list[datetime] | None = None  # looked up once, by :meth:`bounds`
        self._shorter_read = False
        #: The Dag's fingerprint (:func:`_fingerprints`) once a read took it; until then one that
        #: matches nothing kept.
        self.fingerprint: Any = object()
        self.identity = hash(
            tuple(sorted((n, repr(r.mapper.serialize())) for n, r in self.rollups.items() if r))
        )

    # -- the keys: paging, range and counts in the database ------------------------------------

    def _keys_query(self, start: str | None, end: str | None) -> Any:
        """Select the Dag's partition keys (of its runs and pending runs) with their time part: a subquery."""
        from airflow.models.asset import AssetPartitionDagRun
        from airflow.models.dagrun import DagRun
        from sqlalchemy import select, union

        keys = union(
            select(DagRun.partition_key.label("key")).where(
                DagRun.dag_id == self.dag_id, DagRun.partition_key.is_not(None)
            ),
            select(AssetPartitionDagRun.partition_key.label("key")).where(
                AssetPartitionDagRun.target_dag_id == self.dag_id,
                AssetPartitionDagRun.created_dag_run_id.is_(None),
            ),
        ).subquery()
        part = time_part_sql(keys.c.key)
        return (
            select(keys.c.key.label("key"), part.label("part"))
            .where(*_in_range_sql(part, start, end))
            .subquery()
        )

    def _ordered(self, start: str | None, end: str | None) -> Any:
        """Select the keys in order of their time part, each with its latest run's state (``None``: none)."""
        from airflow.models.dagrun import DagRun
        from sqlalchemy import func, select

        keys = self._keys_query(start, end)
        latest = (
            select(DagRun.partition_key.label("key"), func.max(DagRun.id).label("id"))
            .where(DagRun.dag_id == self.dag_id, DagRun.partition_key.is_not(None))
            .group_by(DagRun.partition_key)
            .subquery()
        )
        return (
            select(keys.c.key, DagRun.state)
            .outerjoin(latest, latest.c.key == keys.c.key)
            .outerjoin(DagRun, DagRun.id == latest.c.id)
            .order_by(keys.c.part, keys.c.key)
        )

    def read(
        self,
        only: str | None,
        start: str | None,
        end: str | None,
        wanted: set[str] | None,
        limit: int | None,
        offset: int,
    ) -> ConsumerState:
        from sqlalchemy import select

        keys = self._keys_query(start, end)
        if only is not None:
            keys = select(keys).where(keys.c.key == only).subquery()
        prints = _fingerprints([self.dag_id], self.session)
        self.fingerprint = prints.get(self.dag_id)
        ranges = _ranges_of([self.dag_id], self.session, start, end, only, prints)
        first, last = ranges.get(self.dag_id, (None, None))
        bucket = bucket_length(first, last)
        states, overrides, overview, again = _tally_of(
            {self.dag_id: self}, self.session, start, end, only, bucket, True, prints
        )[self.dag_id]
        if only is not None:
            page_keys = [only] if states else []
            total = len(page_keys)
        elif wanted is None:
            total = sum(states.values())
            ordered = select(keys.c.key).order_by(keys.c.part, keys.c.key).offset(offset)
            page_keys = _kept(
                ("page", self.dag_id, start, end, limit, offset),
                prints.get(self.dag_id),
                lambda: list(self.session.scalars(ordered.limit(limit) if limit is not None else ordered)),
            )
        else:  # a state filter: walk the keys in order (only the page is kept)
            total = sum(n for state, n in states.items() if state in wanted)
            page_keys, seen = [], 0
            for key, state in self.session.execute(self._ordered(start, end)):
                if overrides.get(key, _state_name(state)) not in wanted:
                    continue
                if seen >= offset and (limit is None or len(page_keys) < limit):
                    page_keys.append(key)
                seen += 1
        partitions = self._partitions(page_keys)
        refusals, refusals_total = self._refusals(only)
        pending_total, blocked, starved = self._queue_summary(only)
        return ConsumerState(
            dag_id=self.dag_id,
            assets=tuple(self.assets),
            partitions=tuple(partitions),
            refusals=refusals,
            refusals_total=refusals_total,
            pending_total=pending_total,
            blocked_ahead=blocked,
            starved=starved,
            read_at=self.now,
            total=total,
            offset=offset,
            limit=limit,
            states=states,
            first=first,
            last=last,
            bucket=bucket,
            overview=overview,
            again=again,
            rerun_policies=tuple((name, r.rerun_policy) for name, r in self.rollups.items() if r is not None),
        )

    def summary(self) -> dict[str, Any]:
        """Return the Dag's counts by state, range of keys and strip (see :func:`_summaries`)."""
        return _summaries({self.dag_id: self}, self.session)[self.dag_id]

    # -- what a pending run has, what a run ran with ------------------------------------------

    def _progress(self, key: str, received: dict[str, set[str]]) -> tuple[AssetProgress, ...]:
        return tuple(
            progress_of(name, self.rollups.get(name), key, received.get(name, set()))
            for name, _ in self.assets
            if name in received
        )

    def _pending(self, key: str, received: dict[str, set[str]]) -> tuple[str, Partition]:
        """Return a pending run's state and partition (what its keys give it: :data:`_PENDING`)."""
        memo = (self.identity, key, frozenset((name, frozenset(keys)) for name, keys in received.items()))
        found = _PENDING.get(memo)
        if found is None:
            progress = self._progress(key, received)
            found = _PENDING[memo] = (progress, *pending_times(key, progress, self.rollups))
            if len(_PENDING) > _PENDING_SIZE:
                _PENDING.popitem(last=False)
        progress, fires_at, ends, deadline = found
        state = _pending_state(progress, fires_at, ends, deadline, self.now)
        return state, Partition(key, state, progress=progress, fires_at=fires_at)

    def _ran_with_of(self, groups: Iterable[tuple[int, ...]]) -> dict[tuple[int, ...], RanWith]:
        """
        Return what each group of fired pending runs of one partition ran with, together.

        A group of one is what that run ran with; of all the runs of a partition, what they ran
        with together: a rerun for keys that came late (a refresh) completes its period once every
        key came in one run or another. Memoized per process: a fired run's keys never change.
        """
        groups = list(dict.fromkeys(groups))
        found = {g: _RAN_WITH[self.identity, g] for g in groups if (self.identity, g) in _RAN_WITH}
        todo = [g for g in groups if g not in found]
        if not todo:
            return found
        ids = sorted({i for g in todo for i in g})
        keys: dict[int, str] = {}
        for chunk in _chunks(ids):
            keys.update(self.session.execute(_apdr_keys(chunk)).all())
        received = received_keys(self.session, ids)
        for group in todo:
            together: dict[str, set[str]] = defaultdict(set)
            for apdr_id in group:
                for name, logged in received.get(apdr_id, {}).items():
                    together[name] |= logged
            ran = ran_with(self._progress(keys[group[0]], together), self.rollups, self.assets)
            found[group] = _RAN_WITH[self.identity, group] = ran
            if len(_RAN_WITH) > _RAN_WITH_SIZE:
                _RAN_WITH.popitem(last=False)
        return found

    def _fired_runs(
        self, keys: list[str]
    ) -> dict[str, list[tuple[int | None, datetime | None, datetime | None]]]:
        """
        Return the asset-triggered Dag runs of *keys*, oldest first: ``(pending run id, created, date)``.

        ``date`` is the run's ``partition_date``; the pending run's id is ``None`` for a run whose
        bookkeeping ``clean`` removed.
        """
        from airflow.models.asset import AssetPartitionDagRun
        from airflow.models.dagrun import DagRun
        from sqlalchemy import func, select

        by_key: dict[str, list[tuple[int | None, datetime | None, datetime | None]]] = defaultdict(list)
        for chunk in _chunks(keys):
            query = (
                select(
                    DagRun.partition_key,
                    AssetPartitionDagRun.id,
                    func.coalesce(DagRun.created_at, DagRun.run_after),
                    DagRun.partition_date,
                )
                .outerjoin(AssetPartitionDagRun, AssetPartitionDagRun.created_dag_run_id == DagRun.id)
                .where(
                    DagRun.dag_id == self.dag_id,
                    DagRun.run_type == ASSET_TRIGGERED,
                    DagRun.partition_key.in_(chunk),
                )
                .order_by(DagRun.id)
            )
            for key, apdr_id, created, anchor in self.session.execute(query):
                by_key[key].append((apdr_id, created, anchor))
        return by_key

    def _fired_complete(self, created: datetime | None, anchor: datetime | None) -> bool:
        """
        Whether a run Airflow created at *created* for a period starting at *anchor* fired complete.

        Every run of a Dag whose rollups wait for all their keys did; under a deadline, a run
        created before its period's start (``partition_date``) plus its length plus the grace
        (:meth:`bounds`) did.
        """
        if not self.may_fire_incomplete:
            return True
        bounds = self.bounds()
        if bounds is None or created is None or anchor is None:
            return False
        shortest, typical, shorter = bounds
        made, start = _utc(created) or created, _utc(anchor) or anchor
        return made < start + shortest or (
            shorter is not None and start not in shorter and made < start + typical
        )

    def bounds(self) -> tuple[timedelta, timedelta, list[datetime] | None] | None:
        """
        Return how long after its period's start a run can only have fired complete, and where not.

        ``(shortest, typical, shorter)``: the grain's :func:`~airflow_partitions.grains.
        shortest_period` and :func:`~airflow_partitions.grains.typical_period` plus the grace, and
        the starts (UTC) of this Dag's periods shorter than typical (:func:`~airflow_partitions.
        grains.shorter_periods` between its runs' first and last ``partition_date``; ``None`` if
        too many to list: then only the shortest bound holds). ``None`` without a deadline.
        """
        if self.deadline is None:
            return None
        grain, grace = self.deadline
        if not self._shorter_read:
            from airflow.models.dagrun import DagRun
            from sqlalchemy import func, select

            low, high = _kept(
                ("dates", self.dag_id),
                self.fingerprint,
                lambda: self.session.execute(
                    select(func.min(DagRun.partition_date), func.max(DagRun.partition_date)).where(
                        DagRun.dag_id == self.dag_id
                    )
                ).one(),
            )
            low, high = _utc(low), _utc(high)
            self._shorter = shorter_periods(grain, low, high) if low and high else []
            self._shorter_read = True
        return shortest_period(grain) + grace, typical_period(grain) + grace, self._shorter

    def _complete(self, key: str) -> RanWith | None:
        """Return what a run of *key* that fired complete ran with: every awaited key (``None``: unknown)."""
        awaited = 0
        for name, _ in self.assets:
            rollup = self.rollups.get(name)
            try:
                awaited += len(rollup.awaited(key)) if rollup is not None else 1
            except ValueError:
                return None
        return RanWith(awaited, awaited)

    # -- the page ------------------------------------------------------------------------------

    def _partitions(self, keys: list[str]) -> list[Partition]:
        """Return the page's partitions in full: runs and what they ran with, progress, queue places."""
        from airflow.models.asset import AssetPartitionDagRun
        from airflow.models.dagrun import DagRun
        from sqlalchemy import func, select

        if not keys:
            return []
        runs: dict[str, list[tuple[str, str, int | None, bool]]] = defaultdict(list)
        pending: dict[str, Any] = {}
        complete: set[int] = set()  # fired runs known complete without reading their keys
        for chunk in _chunks(keys):
            found = self.session.execute(
                select(
                    DagRun.id,
                    DagRun.run_id,
                    DagRun.partition_key,
                    DagRun.state,
                    func.coalesce(DagRun.created_at, DagRun.run_after),
                    DagRun.partition_date,
                    DagRun.run_type,
                )
                .where(DagRun.dag_id == self.dag_id, DagRun.partition_key.in_(chunk))
                .order_by(DagRun.id)
            ).all()
            # The pending runs they came from, by Dag run id: one scan of the table (no index).
            came_from = dict(
                self.session.execute(
                    select(AssetPartitionDagRun.created_dag_run_id, AssetPartitionDagRun.id).where(
                        AssetPartitionDagRun.created_dag_run_id.in_([row[0] for row in found])
                    )
                ).all()
            )
            for dag_run_id, run_id, key, state, created, anchor, run_type in found:
                apdr_id = came_from.get(dag_run_id)
                # An asset-triggered run without its pending run: clean removed its bookkeeping.
                kept = apdr_id is not None or _state_name(run_type) != ASSET_TRIGGERED
                runs[key].append((run_id, _state_name(state), apdr_id, kept))
                if apdr_id is not None and self._fired_complete(created, anchor):
                    complete.add(apdr_id)
            for apdr in self.session.scalars(
                select(AssetPartitionDagRun).where(
                    AssetPartitionDagRun.target_dag_id == self.dag_id,
                    AssetPartitionDagRun.created_dag_run_id.is_(None),
                    AssetPartitionDagRun.partition_key.in_(chunk),
                )
            ):
                pending[apdr.partition_key] = apdr
        # Each run's own keys (its history), and the partition's: all its runs' keys together.
        fired = {key: tuple(i for *_, i, _ in key_runs if i is not None) for key, key_runs in runs.items()}
        lost = {key for key, key_runs in runs.items() if not all(kept for *_, kept in key_runs)}
        read = self._ran_with_of(
            [
                *((i,) for group in fired.values() for i in group if i not in complete),
                *(
                    group
                    for key, group in fired.items()
                    if group and not complete.intersection(group) and key not in lost
                ),
            ]
        )
        whole = {key: self._complete(key) for key, group in fired.items() if complete.intersection(group)}

        def of_run(key: str, apdr_id: int | None) -> RanWith | None:
            return None if apdr_id is None else whole.get(key) if apdr_id in complete else read[(apdr_id,)]

        def of_partition(key: str) -> RanWith | None:
            group = fired.get(key, ())
            if complete.intersection(group):
                return whole.get(key)
            return None if not group or key in lost else read[group]

        received = received_keys(self.session, [apdr.id for apdr in pending.values()])
        places = self._queue_places([apdr.id for apdr in pending.values()])
        partitions = []
        for key in keys:
            history = tuple(
                Run(run_id, state, of_run(key, apdr_id), kept) for run_id, state, apdr_id, kept in runs[key]
            )
            pairs = tuple((run.run_id, run.state) for run in history)
            latest = of_partition(key)
            kept = key not in lost or bool(complete.intersection(fired.get(key, ())))
            closes_at = self._closes_at(key)
            ran = Partition(
                key, _ran_state(history, latest), pairs, ran_with=latest, history=history, ran_with_kept=kept
            )
            if key in pending:
                apdr = pending[key]
                waiting, partition = self._pending(key, received.get(apdr.id, {}))
                # A period that ran shows its run, the pending run a later key opened beside it.
                partition = (
                    replace(partition, state=ran.state, pending_again=_again(waiting))
                    if history
                    else partition
                )
                partitions.append(
                    replace(
                        partition,
                        runs=pairs,
                        history=history,
                        ran_with=latest,
                        opened_at=apdr.created_at,
                        queue_position=places.get(apdr.id),
                        closes_at=closes_at,
                    )
                )
            else:
                partitions.append(replace(ran, closes_at=closes_at))
        return partitions

    def _closes_at(self, key: str) -> datetime | None:
        """Return the end of the partition's period (UTC), from a rollup's expected keys, else ``None``."""
        for rollup in self.rollups.values():
            if rollup is not None:
                try:
                    return getattr(rollup.awaited(key), "closes_at", None)
                except ValueError:
                    return None
        return None

    # -- the scheduler's queue and the audit log -----------------------------------------------

    def _queue_places(self, apdr_ids: list[int]) -> dict[int, int]:
        """Return each pending run's place in the deployment's queue of pending runs, oldest first."""
        from sqlalchemy import select

        queue = self._queue()
        found: dict[int, int] = {}
        for chunk in _chunks(apdr_ids):
            found.update(
                self.session.execute(select(queue.c.id, queue.c.place).where(queue.c.id.in_(chunk))).all()
            )
        return found

    @staticmethod
    def _queue() -> Any:
        """
        Select the deployment's pending partitioned runs with their place in the scheduler's queue.

        Oldest first (``created_at``, then id), 1-based, of Dags that are not stale: the order in
        which the scheduler evaluates them, 500 per loop (a subquery: ``id``, ``dag_id``, ``key``,
        ``place``).
        """
        from airflow.models.asset import AssetPartitionDagRun
        from airflow.models.dag import DagModel
        from sqlalchemy import func, select

        place = func.row_number().over(order_by=(AssetPartitionDagRun.created_at, AssetPartitionDagRun.id))
        return (
            select(
                AssetPartitionDagRun.id.label("id"),
                AssetPartitionDagRun.target_dag_id.label("dag_id"),
                AssetPartitionDagRun.partition_key.label("key"),
                place.label("place"),
            )
            .join(DagModel, DagModel.dag_id == AssetPartitionDagRun.target_dag_id)
            .where(AssetPartitionDagRun.created_dag_run_id.is_(None), DagModel.is_stale.is_(False))
            .subquery()
        )

    def _queue_summary(self, only: str | None = None) -> tuple[int, int, int]:
        """
        Return the deployment's pending runs, how many hold only keys that never count, this Dag's starved.

        The second counts the pending runs among the 500 evaluated ahead of this Dag's oldest
        (of the partition *only*'s, if given: ``status --key``); the third, this Dag's pending
        runs (the partition's) beyond the 500 oldest (not evaluated this loop).
        """
        from sqlalchemy import func, select

        queue = self._queue()
        total = self.session.scalar(select(func.count()).select_from(queue)) or 0
        mine_only = [queue.c.dag_id == self.dag_id] + ([queue.c.key == only] if only is not None else [])
        starved = self.session.scalar(
            select(func.count()).where(*mine_only, queue.c.place > EVALUATED_PER_LOOP)
        )
        head = list(
            self.session.execute(
                select(queue.c.id, queue.c.dag_id, queue.c.key)
                .where(queue.c.place <= EVALUATED_PER_LOOP)
                .order_by(queue.c.place)
            )
        )
        # This Dag's oldest pending run (of the partition asked for) within the evaluated ones; if
        # it is beyond them (starved), all of them are ahead of it; without a pending run nothing is.
        mine = next(
            (
                place
                for place, (_, dag_id, key) in enumerate(head)
                if dag_id == self.dag_id and only in (None, key)
            ),
            None,
        )
        ahead = head[:mine] if mine is not None else head if starved else []
        return total, _blocked([(run, dag_id) for run, dag_id, _ in ahead], self.session), starved or 0

    def _refusals(self, only: str | None) -> tuple[tuple[Refusal, ...], int]:
        """Return the latest keys refused on arrival (at most :data:`LISTED`, oldest first), and all."""
        from airflow.models.log import Log
        from sqlalchemy import func, select

        conditions = [Log.event == REFUSED_EVENT, Log.extra.contains(f"in target Dag '{self.dag_id}'")]
        if only is not None:
            conditions.append(Log.extra.contains(f"'{only}'"))
        total = self.session.scalar(select(func.count(Log.id)).where(*conditions)) or 0
        latest = self.session.execute(
            select(Log.dttm, Log.extra).where(*conditions).order_by(Log.id.desc()).limit(LISTED)
        )
        return tuple(reversed([Refusal.read(when, extra) for when, extra in latest])), total


def _latest_of(dag_ids: Collection[str]) -> Any:
    """Select the id of each partition key's latest Dag run of the Dags *dag_ids* (a subquery)."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    return (
        select(func.max(DagRun.id).label("id"))
        .where(DagRun.dag_id.in_(dag_ids), DagRun.partition_key.is_not(None))
        .group_by(DagRun.dag_id, DagRun.partition_key)
        .subquery()
    )


def _ran_state(history: tuple[Run, ...], ran: RanWith | None) -> str:
    """Return a partition's state from its Dag runs: the latest's (``"ran incomplete"``: short of keys)."""
    state = history[-1].state if history else "pending"
    return "ran incomplete" if state == "success" and ran is not None and not ran.complete else state


def _again(state: str) -> str:
    """
    Return the state of a pending run beside a Dag run (a key sent again), from its own pending state.

    Never ``"overdue"``: a period that ran is not late, whatever its re-opened run waits for.
    """
    return "pending" if state == "overdue" else state


def _with_runs(session: Any, pending: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Return those of the *pending* ``(dag_id, partition_key)`` pairs that have a Dag run."""
    by_dag: dict[str, list[str]] = defaultdict(list)
    for dag_id, key in pending:
        by_dag[dag_id].append(key)
    return {(dag_id, key) for dag_id, keys in by_dag.items() for key in run_states(dag_id, keys, session)}


#: The run type of the Dag runs the scheduler creates from asset events (``DagRunType.ASSET_TRIGGERED``).
ASSET_TRIGGERED = "asset_triggered"


def _fired_query(dag_id: str) -> Any:
    """
    Select the fired pending runs of *dag_id* with their Dag run's key: ``(partition_key, id)``, oldest first.

    Read from ``asset_partition_dag_run`` (one scan: Airflow indexes none of its columns but the
    id), each joined to its Dag run by that run's primary key; add columns of ``DagRun`` to it.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    return (
        select(DagRun.partition_key, AssetPartitionDagRun.id)
        .select_from(AssetPartitionDagRun)
        .join(DagRun, DagRun.id == AssetPartitionDagRun.created_dag_run_id)
        .where(AssetPartitionDagRun.target_dag_id == dag_id)
        .order_by(AssetPartitionDagRun.id)
    )


def _unproven(readers: dict[str, _Reader], dialect: str) -> Any:
    """
    Return SQL: whether a Dag run of one of *readers*' Dags may have fired without all its keys.

    ``None`` if no Dag's rollups can fire incomplete. A run is proven complete when its Dag
    waits for all keys, or when Airflow created it before its ``partition_date`` plus the Dag's
    :meth:`_Reader.bounds` (the comparison is the database's: no row is read for it);
    an unknown database or a missing date proves nothing.
    """
    from airflow.models.dagrun import DagRun
    from sqlalchemy import and_, false, func, literal, or_, text

    created, anchor = func.coalesce(DagRun.created_at, DagRun.run_after), DagRun.partition_date
    cases = []

    def before(bound: timedelta) -> Any:
        """Return SQL: whether the run was created before its ``partition_date`` plus *bound*."""
        if dialect == "sqlite":
            return func.julianday(created) < func.julianday(anchor) + bound.total_seconds() / 86400
        if dialect == "postgresql":
            return created < anchor + literal(bound)
        return created < func.date_add(anchor, text(f"INTERVAL {int(bound.total_seconds())} SECOND"))

    for dag_id, reader in readers.items():
        if not reader.may_fire_incomplete:
            continue
        bounds = reader.bounds()
        if bounds is None or dialect not in ("sqlite", "postgresql", "mysql"):
            cases.append(DagRun.dag_id == dag_id)
            continue
        shortest, typical, shorter = bounds
        proven = before(shortest)
        if shorter is not None:
            proven = or_(proven, and_(before(typical), DagRun.partition_date.not_in(shorter)))
        cases.append(and_(DagRun.dag_id == dag_id, ~func.coalesce(proven, false())))
    return or_(*cases) if cases else None


def selected_keys(column: Any, start: str | None, end: str | None, only: str | None) -> list[Any]:
    """
    Return SQL conditions selecting partition keys (a column): *only* that key, else the time range.

    *start* and *end* bound the time part of the key (the part after the last ``|``:
    ``2026-04-01`` of ``vic|2026-04-01``), compared on their own length (``end="2026-04"`` keeps
    all of April); ``None`` leaves that side open.
    """
    return [column == only] if only is not None else _in_range_sql(time_part_sql(column), start, end)


#: A tally of one Dag's selected partitions: counts by state, the keys whose state only the mappers
#: tell (key to state), the strips of states (prefix, ((bucket, worst state, partitions), …)), and
#: how many have a pending run beside their Dag runs (counted by their runs' state).
Tally = tuple[dict[str, int], dict[str, str], tuple[tuple[str, tuple[tuple[str, str, int], ...]], ...], int]


def _tally_of(
    readers: dict[str, _Reader],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    length: int,
    by_prefix: bool,
    prints: dict[str, tuple[Any, ...]],
) -> dict[str, Tally]:
    """
    Return, per Dag of *readers*, its selected partitions' counts by state, overrides and strips.

    Grouped queries for all the Dags at once: their latest Dag runs by Dag, key prefix, bucket of
    *length* characters of the key's time part and state (:func:`_run_cells`, kept while the
    Dag's runs and pending runs stay as they are), and their pending runs, whose states need the
    mappers (deadline, never-counting keys: their keys are read). *by_prefix*: one strip per key
    prefix (``jfk`` of ``jfk|2013-03-10``), else one (prefix ``""``). ``overrides`` maps the keys
    whose state is not their latest run's to it: the pending ones without a run and the ones that
    ran incomplete. A pending run beside a Dag run (a key sent again) is counted apart, never as a
    state: its partition counts by its runs.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from sqlalchemy import select

    dag_ids = list(readers)
    cells, overrides = _run_cells(readers, session, start, end, only, length, by_prefix, prints)
    column = AssetPartitionDagRun.partition_key
    pending = session.execute(
        select(
            AssetPartitionDagRun.target_dag_id,
            AssetPartitionDagRun.id,
            column,
            *_prefix_and_bucket_sql(column, length, by_prefix),
        ).where(
            AssetPartitionDagRun.target_dag_id.in_(dag_ids),
            AssetPartitionDagRun.created_dag_run_id.is_(None),
            *selected_keys(column, start, end, only),
        )
    ).all()
    ran = _with_runs(session, ((dag_id, key) for dag_id, _, key, *_ in pending))
    again: Counter[str] = Counter(dag_id for dag_id, _, key, *_ in pending if (dag_id, key) in ran)
    pending = [row for row in pending if (row[0], row[2]) not in ran]
    received = received_keys(session, [apdr_id for _, apdr_id, *_ in pending])
    for dag_id, apdr_id, key, prefix_, bucket in pending:
        state = overrides[dag_id][key] = readers[dag_id]._pending(key, received.get(apdr_id, {}))[0]
        cells[dag_id, prefix_.rstrip(SEPARATOR), bucket][state] += 1
    counts: dict[str, Counter[str]] = {dag_id: Counter() for dag_id in dag_ids}
    strips: dict[str, dict[str, list[tuple[str, str, int]]]] = {
        dag_id: defaultdict(list) for dag_id in dag_ids
    }
    labelled: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for (dag_id, prefix_, bucket_), by_state in cells.items():
        labelled[dag_id, prefix_, bucket_label(bucket_)].update(by_state)
    for (dag_id, prefix_, bucket_), by_state in sorted(labelled.items()):
        counts[dag_id].update(by_state)
        present = [state for state, n in by_state.items() if n > 0]
        if present:
            strips[dag_id][prefix_].append((bucket_, min(present, key=attention), sum(by_state.values())))
    return {
        dag_id: (
            {state: n for state, n in counts[dag_id].items() if n > 0},
            overrides[dag_id],
            tuple((p, tuple(strip)) for p, strip in strips[dag_id].items()),
            again[dag_id],
        )
        for dag_id in dag_ids
    }


def _prefix_and_bucket_sql(column: Any, length: int, by_prefix: bool) -> tuple[Any, Any]:
    """
    Select a key's prefix before its time part and the first *length* characters of its time part.

    ``jfk|`` and ``2013-03`` of ``jfk|2013-03-10``; the prefix is ``""`` unless *by_prefix*, an
    expression all the same: PostgreSQL refuses a constant in ``GROUP BY``.
    """
    from sqlalchemy import func

    part = time_part_sql(column)
    cut = func.length(column) - func.length(part) if by_prefix else 0
    return func.substr(column, 1, cut), func.substr(part, 1, length)


def _run_cells(
    readers: dict[str, _Reader],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    length: int,
    by_prefix: bool,
    prints: dict[str, tuple[Any, ...]],
) -> tuple[dict[tuple[str, str, str], Counter[str]], dict[str, dict[str, str]]]:
    """
    Return the latest Dag runs of the keys, counted by (Dag, prefix, bucket) and state.

    Also the keys whose run succeeded without all its keys (``"ran incomplete"``): a run that
    succeeded, from asset events, and is not proven complete by its creation time
    (:func:`_unproven`) has its keys read (once per process). A Dag's answer is kept while its
    runs and pending runs are unchanged (:func:`_kept_value`): the overview is read again and
    again, and a Dag of 100,000 runs takes a grouped scan of them all.
    """

    def memo(dag_id: str) -> tuple[Any, ...]:
        return ("cells", dag_id, readers[dag_id].identity, start, end, only, length, by_prefix)

    found = {dag_id: _kept_value(memo(dag_id), prints) for dag_id in readers}
    answers = {dag_id: kept[1] for dag_id, kept in found.items() if kept is not None}
    todo = {dag_id: reader for dag_id, reader in readers.items() if dag_id not in answers}
    if todo:
        answers.update(_read_run_cells(todo, session, start, end, only, length, by_prefix))
        for dag_id in todo:
            _keep(memo(dag_id), prints.get(dag_id), answers[dag_id])
    cells: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    overrides: dict[str, dict[str, str]] = {}
    for dag_id, (by_bucket, incomplete) in answers.items():
        for (prefix_, bucket_), by_state in by_bucket.items():
            cells[dag_id, prefix_, bucket_].update(by_state)
        overrides[dag_id] = dict(incomplete)
    return cells, overrides


def _read_run_cells(
    todo: dict[str, _Reader],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    length: int,
    by_prefix: bool,
) -> dict[str, tuple[dict[tuple[str, str], Counter[str]], dict[str, str]]]:
    """Read :func:`_run_cells`' answer for the Dags of *todo*: cells, and keys that ran incomplete."""
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    dag_ids = list(todo)
    latest = _latest_of(dag_ids)
    selected = selected_keys(DagRun.partition_key, start, end, only)
    prefix, bucket = _prefix_and_bucket_sql(DagRun.partition_key, length, by_prefix)
    mine: dict[str, dict[tuple[str, str], Counter[str]]] = {
        dag_id: defaultdict(Counter) for dag_id in dag_ids
    }
    for dag_id, prefix_, bucket_, state, n in session.execute(
        select(DagRun.dag_id, prefix, bucket, DagRun.state, func.count())
        .join(latest, latest.c.id == DagRun.id)
        .where(*selected)
        .group_by(DagRun.dag_id, prefix, bucket, DagRun.state)
    ):
        mine[dag_id][prefix_.rstrip(SEPARATOR), bucket_][_state_name(state)] += n
    incomplete: dict[str, dict[str, str]] = {dag_id: {} for dag_id in dag_ids}
    doubt = _unproven(todo, session.get_bind().dialect.name)
    unproven: dict[str, set[str]] = defaultdict(set)
    if doubt is not None:
        for dag_id, key in session.execute(
            select(DagRun.dag_id, DagRun.partition_key)
            .join(latest, latest.c.id == DagRun.id)
            .where(*selected, DagRun.state == "success", DagRun.run_type == ASSET_TRIGGERED, doubt)
        ):
            unproven[dag_id].add(key)
    for dag_id, keys in unproven.items():
        reader = todo[dag_id]
        by_key = reader._fired_runs(sorted(keys))
        groups = {
            key: tuple(i for i, _, _ in by_key[key] if i is not None)
            for key in keys
            if not any(reader._fired_complete(created, anchor) for _, created, anchor in by_key[key])
            # What a run whose bookkeeping was cleaned ran with is not known: not "ran incomplete".
            and all(i is not None for i, _, _ in by_key[key])
        }
        ran = reader._ran_with_of(groups.values())
        for key, group in groups.items():
            if not ran[group].complete:
                incomplete[dag_id][key] = "ran incomplete"
                head, _, key_part = key.rpartition(SEPARATOR)
                cell = mine[dag_id][head if by_prefix else "", key_part[:length]]
                cell["success"] -= 1
                cell["ran incomplete"] += 1
    return {dag_id: (dict(mine[dag_id]), incomplete[dag_id]) for dag_id in dag_ids}


def _fingerprints(dag_ids: list[str], session: Any) -> dict[str, tuple[Any, ...]]:
    """
    Return, per Dag, what changes whenever its runs or pending runs do: counts, greatest ids, updates.

    Two grouped queries (``dag_run`` through its ``dag_id`` index; ``asset_partition_dag_run``,
    one scan). A run's state change moves its ``updated_at``; a new pending run or run, the
    greatest id; a pending run that fires, its ``created_dag_run_id`` and ``updated_at``.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    prints: dict[str, tuple[Any, ...]] = {}
    for dag_id, *values in session.execute(
        select(DagRun.dag_id, func.count(), func.max(DagRun.id), func.max(DagRun.updated_at))
        .where(DagRun.dag_id.in_(dag_ids))
        .group_by(DagRun.dag_id)
    ):
        prints[dag_id] = tuple(values)
    for dag_id, *values in session.execute(
        select(
            AssetPartitionDagRun.target_dag_id,
            func.count(),
            func.max(AssetPartitionDagRun.id),
            func.max(AssetPartitionDagRun.updated_at),
            func.count(AssetPartitionDagRun.created_dag_run_id),
        )
        .where(AssetPartitionDagRun.target_dag_id.in_(dag_ids))
        .group_by(AssetPartitionDagRun.target_dag_id)
    ):
        prints[dag_id] = (*prints.get(dag_id, ()), *values)
    return prints


def _ranges_of(
    dag_ids: Collection[str],
    session: Any,
    start: str | None,
    end: str | None,
    only: str | None,
    prints: dict[str, tuple[Any, ...]],
) -> dict[str, tuple[str, str]]:
    """
    Return, per Dag, the time parts of its first and last selected keys (runs and pending runs).

    Kept while the Dag's fingerprint (*prints*, :func:`_fingerprints`) holds: a scan of all its keys.
    """
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    ranges: dict[str, tuple[str, str]] = {}
    todo = []
    for dag_id in dag_ids:
        found = _kept_value(("range", dag_id, start, end, only), prints)
        if found is None:
            todo.append(dag_id)
        elif found[1] is not None:
            ranges[dag_id] = found[1]
    if not todo:
        return ranges
    for dag, column, condition in (
        (DagRun.dag_id, DagRun.partition_key, DagRun.partition_key.is_not(None)),
        (
            AssetPartitionDagRun.target_dag_id,
            AssetPartitionDagRun.partition_key,
            AssetPartitionDagRun.created_dag_run_id.is_(None),
        ),
    ):
        part = time_part_sql(column)
        for dag_id, low, high in session.execute(
            select(dag, func.min(part), func.max(part))
            .where(dag.in_(todo), condition, *selected_keys(column, start, end, only))
            .group_by(dag)
        ):
            first, last = ranges.get(dag_id, (low, high))
            ranges[dag_id] = (min(first, low), max(last, high))
    for dag_id in todo:
        _keep(("range", dag_id, start, end, only), prints.get(dag_id), ranges.get(dag_id))
    return ranges


#: Answers read from all of a Dag's rows (its range, a page of its keys), by what was asked, with
#: the Dag's fingerprint when read (:func:`_fingerprints`): kept while the fingerprint holds. Bounded.
_KEPT: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
_KEPT_SIZE = 4096


def _keep(memo: tuple[Any, ...], fingerprint: Any, value: Any) -> None:
    _KEPT[memo] = (fingerprint, value)
    _KEPT.move_to_end(memo)
    if len(_KEPT) > _KEPT_SIZE:
        _KEPT.popitem(last=False)


def _kept_value(memo: tuple[Any, ...], prints: dict[str, tuple[Any, ...]]) -> tuple[Any, Any] | None:
    """Return the kept ``(fingerprint, value)`` of *memo* (the Dag id second) while its Dag's print holds."""
    found = _KEPT.get(memo)
    return found if found is not None and found[0] == prints.get(memo[1]) else None


def _kept(memo: tuple[Any, ...], fingerprint: Any, read: Any) -> Any:
    """Return what *read* () returned for *memo* while *fingerprint* holds, else read it again."""
    found = _KEPT.get(memo)
    if found is not None and found[0] == fingerprint:
        return found[1]
    value = read()
    _keep(memo, fingerprint, value)
    return value


def _summaries(readers: dict[str, _Reader], session: Any) -> dict[str, dict[str, Any]]:
    """
    Return, per Dag, its counts by state, range of keys and strip (the fields of :class:`ConsumerDag`).

    The strip groups partitions by the first :data:`BUCKET` characters of their key's time part
    (a month of day and hour keys, a year of ``FY2026-Q3``), each bucket with its most urgent
    state (:func:`attention`) and its number of partitions, in time order. A few grouped queries
    for all the Dags together, whatever their number.
    """
    prints = _fingerprints(list(readers), session)
    for dag_id, reader in readers.items():
        reader.fingerprint = prints.get(dag_id)
    tallies = _tally_of(readers, session, None, None, None, BUCKET, False, prints)
    ranges = _ranges_of(list(readers), session, None, None, None, prints)
    return {
        dag_id: {
            "states": states,
            "first": ranges.get(dag_id, (None, None))[0],
            "last": ranges.get(dag_id, (None, None))[1],
            "strip": strips[0][1] if strips else (),
            "again": again,
        }
        for dag_id, (states, _, strips, again) in tallies.items()
    }


def received_keys(session: Any, apdr_ids: list[int]) -> dict[int, dict[str, set[str]]]:
    """Return the keys Airflow logged for each pending run, by asset name (one query per 500 runs)."""
    from airflow.models.asset import AssetModel, PartitionedAssetKeyLog
    from sqlalchemy import select

    received: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for chunk in _chunks(apdr_ids):
        for apdr_id, name, key in session.execute(
            select(
                PartitionedAssetKeyLog.asset_partition_dag_run_id,
                AssetModel.name,
                PartitionedAssetKeyLog.source_partition_key,
            )
            .join(AssetModel, AssetModel.id == PartitionedAssetKeyLog.asset_id)
            .where(PartitionedAssetKeyLog.asset_partition_dag_run_id.in_(chunk))
        ):
            received[apdr_id][name].add(key)
    return received


def _apdr_keys(apdr_ids: list[int]) -> Any:
    from airflow.models.asset import AssetPartitionDagRun
    from sqlalchemy import select

    return select(AssetPartitionDagRun.id, AssetPartitionDagRun.partition_key).where(
        AssetPartitionDagRun.id.in_(apdr_ids)
    )


def progress_of(
    asset: str, rollup: RollupView | None, downstream_key: str, received: set[str]
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
    progress: tuple[AssetProgress, ...], rollups: dict[str, RollupView | None], assets: list[tuple[str, str]]
) -> RanWith:
    """
    Return what a run ran with from what each asset had given its pending run (:func:`progress_of`).

    Counted and awaited keys are summed over the Dag's assets; an asset that sent nothing counts 0
    of its awaited keys (a rollup's, or 1 under a mapper that is no rollup).
    """
    given = {item.asset: item for item in progress}
    counted = awaited = 0
    missing: list[str] = []
    missing_total = 0
    for name, _ in assets:
        item = given.get(name)
        if rollups.get(name) is None:
            counted += item.counted if item else 0
            awaited += 1
            continue
        if item is None:  # nothing came from this asset: every awaited key is missing
            continue
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
        _pending_state(progress, fires_at, ends, deadline, now),
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


def _pending_state(
    progress: tuple[AssetProgress, ...],
    fires_at: datetime | None,
    ends: datetime | None,
    deadline: bool,
    now: datetime,
) -> str:
    """Return a pending run's state at *now* (UTC) from :func:`pending_times` (:func:`pending_partition`)."""
    if any(p.never_counting for p in progress):
        return "never counting"
    if fires_at is not None and fires_at <= now:
        return "past deadline"
    if ends is not None and ends <= now and not deadline:
        return "overdue"
    return "pending"


def _blocked(ahead: list[Any], session: Any) -> int:
    """Return how many pending runs *ahead* hold only keys their rollup will never count."""
    from airflow.models.asset import AssetModel, PartitionedAssetKeyLog
    from sqlalchemy import select

    if not ahead:
        return 0
    dag_of = dict(ahead)
    keys: dict[int, list[tuple[str, str, str, str]]] = defaultdict(list)
    for chunk in _chunks(list(dag_of)):
        for apdr_id, name, uri, key, target in session.execute(
            select(
                PartitionedAssetKeyLog.asset_partition_dag_run_id,
                AssetModel.name,
                AssetModel.uri,
                PartitionedAssetKeyLog.source_partition_key,
                PartitionedAssetKeyLog.target_partition_key,
            )
            .join(AssetModel, AssetModel.id == PartitionedAssetKeyLog.asset_id)
            .where(PartitionedAssetKeyLog.asset_partition_dag_run_id.in_(chunk))
        ):
            keys[apdr_id].append((name, uri, key, target))
    timetables = {
        dag_id: timetable
        for dag_id, (timetable, _) in consumer_timetables(set(dag_of.values()), session).items()
    }
    blocked = 0
    for apdr_id, logged in keys.items():
        timetable = timetables.get(dag_of[apdr_id])
        blocked += timetable is not None and not any(
            _counts(RollupView.of(timetable.get_partition_mapper(name=name, uri=uri)), key, target)
            for name, uri, key, target in logged
        )
    return blocked


def _counts(rollup: RollupView | None, key: str, downstream_key: str) -> bool:
    """Whether *key* counts towards *downstream_key* (any key counts for a mapper that is no rollup)."""
    return rollup is None or rollup.never_counts(key, downstream_key) is None


def partition_keys(
    dag_id: str, partition_key: str, which: str, *, offset: int = 0, limit: int = 1000, session: Any = None
) -> tuple[list[Any], int]:
    """
    Return one page of one list of a partition, and the list's length: what the detail pages through.

    *which* is ``"awaited"``, ``"missing"``, ``"received"`` or ``"never counting"`` (``[key, why]``
    pairs) for its pending run, or for its latest run when it has no pending one (what it ran with).
    Keys in time order (received: sorted); summed over the Dag's assets in their order.

    :raises ValueError: for an unknown *which*, a Dag that is not a partitioned consumer, or a key
        without a run or pending run.
    """
    if which not in ("awaited", "missing", "received", "never counting"):
        raise ValueError(f"list {which!r} is not one of 'awaited', 'missing', 'received', 'never counting'.")
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return partition_keys(dag_id, partition_key, which, offset=offset, limit=limit, session=new)
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.models.dagrun import DagRun
    from sqlalchemy import select

    reader = _Reader(dag_id, session)
    apdr_id = session.scalar(
        select(AssetPartitionDagRun.id).where(
            AssetPartitionDagRun.target_dag_id == dag_id,
            AssetPartitionDagRun.partition_key == partition_key,
            AssetPartitionDagRun.created_dag_run_id.is_(None),
        )
    ) or session.scalar(
        _fired_query(dag_id)
        .with_only_columns(AssetPartitionDagRun.id)
        .where(DagRun.partition_key == partition_key)
        .order_by(DagRun.id.desc())
        .limit(1)
    )
    if apdr_id is None:
        raise ValueError(
            f"{dag_id!r} has no run or pending run of partition {partition_key!r} from asset events whose "
            "keys are kept (`airflow-partitions clean` removes those of old runs)."
        )
    received = received_keys(session, [apdr_id]).get(apdr_id, {})
    found: list[Any] = []
    for name, _ in reader.assets:
        rollup, keys = reader.rollups.get(name), received.get(name, set())
        if which == "received":
            found.extend(sorted(keys))
        elif rollup is not None:
            progress = rollup.progress(partition_key, keys)
            found.extend(
                {
                    "awaited": progress.awaited,
                    "missing": progress.missing,
                    "never counting": progress.never_counting,
                }[which]
            )
    return [list(item) if isinstance(item, tuple) else item for item in found[offset : offset + limit]], len(
        found
    )


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
        return jsonable(asdict(self))


def asset_coverage(
    asset_name: str, *, start: str | None = None, end: str | None = None, session: Any = None
) -> AssetCoverage:
    """
    Read which partition keys of the asset *asset_name* have events, and its refused keys.

    One query per table: the asset, its events grouped by partition key, and the audit-log rows
    ``failed to map partition_key`` naming it. *start* and *end* select keys (and refusals) by
    the time part of the key, as the Partitions view's Dag page does.

    :param session: An Airflow ORM session; a new one (read-only use) if omitted.
    :raises ValueError: if no active asset is named *asset_name*.
    """
    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return _coverage(asset_name, start, end, new)
    return _coverage(asset_name, start, end, session)


def _coverage(name: str, start: str | None, end: str | None, session: Any) -> AssetCoverage:
    from airflow.models.asset import AssetActive, AssetEvent, AssetModel
    from airflow.models.log import Log
    from sqlalchemy import func, select

    found = session.execute(
        select(AssetModel.id, AssetModel.uri)
        .join(AssetActive, (AssetActive.name == AssetModel.name) & (AssetActive.uri == AssetModel.uri))
        .where(AssetModel.name == name)
    ).first()
    if found is None:
        raise ValueError(f"No active asset is named {name!r} in this deployment's metadata database.")
    asset_id, uri = found
    keys, unkeyed = [], 0
    for key, events, first, last in session.execute(
        select(
            AssetEvent.partition_key,
            func.count(AssetEvent.id),
            func.min(AssetEvent.timestamp),
            func.max(AssetEvent.timestamp),
        )
        .where(AssetEvent.asset_id == asset_id)
        .group_by(AssetEvent.partition_key)
    ):
        if key is None:
            unkeyed = events
        elif in_time_range(key, start, end):
            keys.append(KeyEvents(key, events, _utc(first), _utc(last)))
    refusals = []
    for when, extra in session.execute(
        select(Log.dttm, Log.extra)
        .where(Log.event == REFUSED_EVENT, Log.extra.contains(f"(name='{name}', uri="))
        .order_by(Log.id)
    ):
        refusal = Refusal.read(when, extra)
        if refusal.partition_key is None or in_time_range(refusal.partition_key, start, end):
            refusals.append(refusal)
    return AssetCoverage(
        name,
        uri,
        asset_id,
        tuple(sorted(keys, key=lambda k: k.partition_key)),
        tuple(refusals),
        unkeyed,
    )


def _utc(value: datetime | None) -> datetime | None:
    """SQLite's aggregates return naive datetimes: they are UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value
