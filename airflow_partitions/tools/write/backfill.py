"""
Backfill of any partitioned Dag: what each selected partition takes (the plan), and carrying it out.

A partition is selected by key, time range and state (``status``'s range language and states,
with ``missing`` for a period of the range that has no run and no pending run). What it takes:

- **re-run** its Dag's own latest run, for ``failed``, ``ran incomplete`` and ``stale``: the run is
  cleared as ``airflow dags clear`` clears it (:mod:`~airflow_partitions.tools.write.paced`), so it
  keeps its id and the asset events that triggered it;
- **run**, a new Dag run for a ``missing`` partition of a Dag whose timetable makes its keys ahead
  (``GrainPartitionTimetable``, ``ExplicitPartitionTimetable``), through Airflow's ``trigger_dag``;
- for a partition that waits for upstream keys (``overdue``, ``past deadline``, ``never
  counting``; ``missing`` of an asset-fed Dag; ``pending`` once its period ended), each missing
  upstream key is followed to the Dag that produces its asset (its tasks' outlets): a producer
  whose timetable makes the key gets a **run** of it (or a **re-run** of its run), a producer fed by
  assets itself is planned the same way, key by key (hours → days → months); keys no Dag makes
  are keys a feed must **send**, listed per asset with the bodies of Airflow's ``POST
  /api/v2/assets/events``;
- **wait** for a partition in flight (a run queued or running) or not due (its period has not
  ended: ``include_open`` plans it anyway); **cannot** for what a backfill cannot do (keys that
  never count, a producer whose runs name their keys at run time), saying what can.

The values a plan is made of (:class:`Selection` in, :class:`Plan` out, each partition's
:class:`Step`); :func:`~airflow_partitions.tools.write.planning.plan` answers a page of the
selection (a dry run: nothing written), :func:`~airflow_partitions.tools.write.planning.carry_out`
plans every selected partition and hands the runs to a paced, tracked backfill
(:mod:`~airflow_partitions.tools.write.paced`), saying what it could not do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from airflow_partitions.tools.state.model import STATES
from airflow_partitions.tools.state.plain import jsonable
from airflow_partitions.tools.write.paced import Backfill

#: What a plan selects by besides the partition states: a period of the range with no run and no
#: pending run of the Dag.
MISSING = "missing"
#: Every state ``--state`` takes: the partition states, then ``missing``.
SELECTABLE = (*STATES, MISSING)
#: ``--state``'s default without keys: every partition (a key with a run or a pending run) that
#: is not ``success`` (keys asked for are selected whatever their state). Periods never opened
#: (``missing``) only when asked for: a Dag's range may hold years of them (a key sent for 2099
#: by mistake).
NOT_SUCCESS = tuple(state for state in STATES if state != "success")
#: ``--missing`` (today's meaning): a partition of the range without a successful run.
WITHOUT_SUCCESS = ("failed", MISSING)
#: The states whose own latest Dag run is run again.
RERUN = ("failed", "ran incomplete", "stale")
#: The states of a partition whose run is queued or running: nothing to do but wait.
IN_FLIGHT = ("queued", "running")
#: How a ``send`` step's ``why`` begins when no Dag makes the asset (a feed must send its keys).
NO_DAG = "no Dag makes"
#: How many upstream Dags a plan follows from the selected one (hours → days → months is 2).
DEPTH = 4
#: The most periods ``missing`` walks in a range: a wider range is refused, naming it.
MOST_PERIODS = 100_000


@dataclass(frozen=True)
class Step:
    """
    One thing a plan does or asks for a partition (see the module's docstring for the actions).

    ``Step("re-run", "it_days", "2026-03-03", run_id="asset_triggered__…")``,
    ``Step("run", "it_hours_producer", "2026-03-04T05")``, ``Step("send", "it_days", "2026-03-04",
    asset="it_hours", keys=("2026-03-04T05", …))``: the keys of *asset* the partition
    ``it_days``/``2026-03-04`` awaits that a feed must send; ``why`` says why, in words.
    """

    action: str
    dag_id: str
    partition_key: str
    run_id: str | None = None
    asset: str | None = None
    keys: tuple[str, ...] = ()
    why: str = ""

    @property
    def runs(self) -> bool:
        """Whether the step is a Dag run a backfill starts (``re-run`` or ``run``)."""
        return self.action in ("re-run", "run")


@dataclass(frozen=True)
class PlannedPartition:
    """One selected partition: its key, its state (``missing``: never opened) and its steps, in order."""

    partition_key: str
    state: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Feed:
    """
    Keys of one asset a feed must send: ``Feed("it_hours", "it_hours", 7, ("2026-03-04T05",))``.

    :attr:`events` are the bodies of Airflow's ``POST /api/v2/assets/events``, one per key.
    """

    asset: str
    uri: str
    asset_id: int | None
    keys: tuple[str, ...]

    @property
    def events(self) -> list[dict[str, Any]]:
        """``[{"asset_id": 7, "partition_key": "2026-03-04T05", "extra": {}}, …]``."""
        return [{"asset_id": self.asset_id, "partition_key": key, "extra": {}} for key in self.keys]


@dataclass(frozen=True)
class Plan:
    """
    What a backfill of one Dag takes: a page of its selected partitions with their steps, and counts.

    ``partitions`` is the page (``offset``, ``limit``; the selected ones in key order) of ``total``;
    ``states`` counts every selected partition by state. ``feeds`` gathers the page's ``send``
    steps by asset (after :func:`~airflow_partitions.tools.write.planning.carry_out`, every
    selected partition's). ``left_out_open`` counts the ``missing`` periods left out because they are not
    due (``include_open`` plans them). After :func:`carry_out`, ``backfill`` is the tracked
    backfill the runs were handed to (:class:`~airflow_partitions.tools.write.paced.Backfill`)
    and ``could_not`` the steps it could not take (``send``, ``cannot``).
    """

    dag_id: str
    selection: str
    partitions: tuple[PlannedPartition, ...]
    total: int
    states: dict[str, int]
    offset: int = 0
    limit: int | None = None
    feeds: tuple[Feed, ...] = ()
    left_out_open: int = 0
    backfill: Backfill | None = None
    could_not: tuple[Step, ...] = ()

    @property
    def runs(self) -> list[Step]:
        """The Dag runs the page's steps start, each once, in the page's order."""
        return once_each(s for p in self.partitions for s in p.steps if s.runs)

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types; each feed with its ``events`` (the REST API's bodies)."""
        answer = jsonable(self)
        for feed, found in zip(self.feeds, answer["feeds"], strict=True):
            found["events"] = feed.events
        return answer


def once_each(steps: Any) -> list[Step]:
    """Return *steps* without repeats of one action on one Dag's partition (or asset), first kept."""
    seen: dict[tuple[str, str, str, str | None], Step] = {}
    for step in steps:
        seen.setdefault((step.action, step.dag_id, step.partition_key, step.asset), step)
    return list(seen.values())


@dataclass(frozen=True)
class Selection:
    """
    What a plan selects of one Dag: ``Selection("it_days", states=("failed",), start="2026-03")``.

    *keys*, or *start* / *end* (``status``'s range language), and *states* (:data:`SELECTABLE`;
    ``None``: every state for *keys*, those partitions whatever their state, else
    :data:`NOT_SUCCESS`); *include_open* also plans what is not due; *now* (UTC) decides what is
    due. *limit* (``None``: all) and *offset* page the planned partitions.
    """

    dag_id: str
    start: str | None = None
    end: str | None = None
    keys: tuple[str, ...] | None = None
    states: tuple[str, ...] | None = None
    include_open: bool = False
    now: datetime | None = None
    limit: int | None = None
    offset: int = 0

    @property
    def wanted(self) -> tuple[str, ...]:
        """The states selected (by default :data:`SELECTABLE` for keys, else :data:`NOT_SUCCESS`)."""
        return self.states or (SELECTABLE if self.keys else NOT_SUCCESS)

    def words(self) -> str:
        """Say what is selected: ``"failed, from 2026-03 to the last"`` or ``"any state, of 4 keys"``."""
        states = " or ".join(self.wanted) if self.states else "any state" if self.keys else "not success"
        if self.keys:
            return f"{states}, of {len(self.keys)} keys"
        if self.start or self.end:
            return f"{states}, from {self.start or 'the first'} to {self.end or 'the last'}"
        return states
