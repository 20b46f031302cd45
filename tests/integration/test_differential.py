"""
No answer is ever stale: the faces of one Dag's partition state agree after whatever users and Airflow do.

A hypothesis state machine applies random sequences of what users and Airflow do to
``it_diff_region_day`` (region days awaiting the stores the Variable ``it_diff_stores`` lists):
asset events (keys sent again among them), periods completed (the scheduler fires them), runs
created through the REST API, set to failed, success or queued, cleared, deleted, runs trading
states (two failed runs succeed as two successful ones fail, in sets of equal sums of ids, a
failed run above them, first those that also keep the sum of a 32-bit hash of the ids: every
example starts with one), the
Variable changed (a store moved, a member list that is not JSON or empty), ``discard``,
``clean``, the Dag paused and unpaused. Dag edits are left out: a new serialized version takes
the dag-processor's next parse of the file (30 s and more), and the answers' keys hold it (the
store's own tests). After each step it reads, at one moment, field by field:

- ``status --json`` with the answer store on (a new process, reading what earlier processes
  kept in the store file, which the api-server shares);
- ``status --json`` with ``AIRFLOW_PARTITIONS_CACHE=off`` (everything worked out anew): the
  reference;
- ``status --json --api-url`` (the api-server's routes, its memory and the store);
- the Partitions view's API (``/partitions/api/dags/{id}``: the answer and its overview) and
  its list of Dags (``/partitions/api/dags``: counts, range and strip).

"At one moment": the four are read together while the Dag's rows, its pending runs and key logs,
the Variable and the deployment's open pending runs (the scheduler's queue) stay as they were
(:func:`_rows`, read before and after; else read again once the scheduler is done). Fields that
legitimately differ between faces are left out: ``read_at`` (when each face read), and a broken
Variable's ``since`` and ``fix`` (the first failed read each process saw). Each answer must
also agree with itself (its counts by state are its partitions' states) and with the Dag runs
the REST API lists (a partition's state is its latest run's, a success possibly ``ran
incomplete``). The sequences are derandomized (the same on every run) and short: about three
minutes per database.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from airflow_partitions.tools.state import BUCKET, attention
from airflow_partitions.tools.ui import layout
from tests.integration.test_status import UNREACHABLE
from tests.support.launcher import AirflowError, wait_until

pytestmark = pytest.mark.integration

#: The backends this module runs on (tests/integration/conftest.py; --every-backend: both).
#: What it compares is the store's and the faces', the same on either database; the
#: fingerprint's SQL on PostgreSQL is test_fingerprint_sql.py's.
BACKENDS = ("sqlite",)


DAG = "it_diff_region_day"
ASSET = "it_diff_store_days"
VARIABLE = "it_diff_stores"
STORES = ("s1", "s2", "s3", "s4")
#: A store no member list names: its keys are refused on arrival.
STRANGER = "s9"
REGIONS = ("north", "south")
#: Days 1 to 3 have runs at first, day 4 a pending run.
DAYS = 4
#: The day whose pending run a key leaves while another stays (every example starts with it).
LEFT_DAY = DAYS + 1
#: Each example's days are in a month of their own (2025: every period over, no state turns on the clock).
MONTHS = itertools.count(1)


def _hashed(*ids: int) -> int:
    """The sum of the ids' 32-bit multiplicative hash the fingerprint summed per state before (linear)."""
    return sum(i * 2654435761 % 2**32 for i in ids)


def _groups(found: list[tuple[Any, ...]]) -> tuple[str, ...]:
    """Each store's region as the Variable (*found*: its rows) lists them; else s1, s2 north, s3, s4 south."""
    try:
        regions = {m["value"]: m["group"] for m in json.loads(found[0][0])}
        return tuple(regions[store] for store in STORES)
    except (IndexError, ValueError, KeyError, TypeError):  # none yet, or broken by the last example
        return ("north", "north", "south", "south")


def _members(groups: tuple[str, ...]) -> str:
    """The Variable's value: store ``STORES[i]`` in region ``groups[i]``."""
    return json.dumps([{"value": s, "group": g} for s, g in zip(STORES, groups, strict=True)])


def _cli(airflow, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``airflow-partitions ARGS`` (the caller collects it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "airflow_partitions.tools.cli", *args],
        env={**airflow.env, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _done(airflow, *args: str) -> None:
    """Run ``airflow-partitions ARGS`` to its end; it must succeed."""
    _out, err = _cli(airflow, *args).communicate(timeout=180)
    assert "Traceback" not in err, err[-3000:]


def _answer(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=180)
    assert process.returncode in (0, 1) and out, err[-3000:]
    return json.loads(out)


def _normal(answer: dict[str, Any]) -> dict[str, Any]:
    """*answer* without the fields that legitimately differ between faces (see the module)."""
    kept = {k: v for k, v in answer.items() if k != "read_at"}
    kept["members_problems"] = [
        {k: v for k, v in p.items() if k not in ("since", "fix")} for p in answer.get("members_problems", [])
    ]
    return kept


def _faces(airflow, token: str) -> dict[str, dict[str, Any]]:
    """Read every face of the Dag's state together: the three commands at once, then the view's API."""
    status = ("status", DAG, "--json", "--limit", "1000")
    started = {
        "store on": _cli(airflow, *status),
        "store off": _cli(airflow, *status, env={"AIRFLOW_PARTITIONS_CACHE": "off"}),
        "api-url": _cli(
            airflow,
            *status,
            "--api-url",
            airflow.url,
            env={"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": UNREACHABLE, "AIRFLOW_PARTITIONS_API_TOKEN": token},
        ),
    }
    view = airflow.request("GET", f"/partitions/api/dags/{DAG}", params={"limit": 1000})
    [listed] = [d for d in airflow.request("GET", "/partitions/api/dags")["dags"] if d["dag_id"] == DAG]
    faces = {name: _answer(process) for name, process in started.items()}
    faces["view"] = view
    faces["view list"] = listed
    return faces


def _rows(airflow) -> tuple[Any, ...]:
    """What every face's answer is read from: the Dag's rows, the Variable, the deployment's queue."""
    return (
        airflow.query("SELECT id, state, partition_key FROM dag_run WHERE dag_id = :d ORDER BY id", d=DAG),
        airflow.query(
            "SELECT id, target_dag_id, partition_key, created_dag_run_id FROM asset_partition_dag_run "
            "WHERE target_dag_id = :d OR created_dag_run_id IS NULL ORDER BY id",
            d=DAG,
        ),
        airflow.query(
            "SELECT l.id, l.asset_partition_dag_run_id, l.source_partition_key "
            "FROM partitioned_asset_key_log l "
            "JOIN asset_partition_dag_run r ON r.id = l.asset_partition_dag_run_id "
            "WHERE r.target_dag_id = :d ORDER BY l.id",
            d=DAG,
        ),
        airflow.query("SELECT val FROM variable WHERE key = :k", k=VARIABLE),
        airflow.query("SELECT is_paused FROM dag WHERE dag_id = :d", d=DAG),
        airflow.query(
            "SELECT max(id) FROM log WHERE event LIKE 'partition-tools%' OR event LIKE 'failed to map%'"
        ),
    )


def _settled(airflow) -> tuple[Any, ...]:
    """Wait until the scheduler is done with the Dag (no run queued or running unless paused, rows still)."""

    def still() -> tuple[Any, ...] | None:
        before = _rows(airflow)
        paused = before[4][0][0]
        if not paused and any(state in ("queued", "running") for _, state, _ in before[0]):
            return None
        time.sleep(0.5)
        return before if _rows(airflow) == before else None

    return wait_until(still, timeout=180, what=f"{DAG}'s runs to settle", interval=0.5)


def _expected_strip(answer: dict[str, Any]) -> list[list[Any]]:
    """The list's strip worked out from an answer's partitions: per month, the most urgent state and count."""
    by_bucket: dict[str, list[str]] = {}
    for partition in answer["partitions"]:
        by_bucket.setdefault(partition["partition_key"].rsplit("|", 1)[-1][:BUCKET], []).append(
            partition["state"]
        )
    return [[b, min(states, key=attention), len(states)] for b, states in sorted(by_bucket.items())]


def _differences(answer: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """What *answer* says otherwise than *reference*: per field, per partition for ``partitions``."""
    found = {k: (answer.get(k), v) for k, v in reference.items() if k != "partitions" and answer.get(k) != v}
    theirs = {p["partition_key"]: p for p in answer.get("partitions", [])}
    for partition in reference.get("partitions", []):
        other = theirs.pop(partition["partition_key"], {})
        for field, value in partition.items():
            if other.get(field) != value:
                found[f"{partition['partition_key']} {field}"] = (other.get(field), value)
    found.update({f"{key} (only in the face)": "" for key in theirs})
    return found


def _agree(faces: dict[str, dict[str, Any]], runs: list[tuple[Any, ...]]) -> None:
    """Assert the faces agree with the reference (store off), with themselves and with the Dag runs."""
    reference = _normal(faces["store off"])
    for name in ("store on", "api-url"):
        wrong = _differences(_normal(faces[name]), reference)
        assert not wrong, f"{name} differs from the store off (the face's, the reference's): {wrong}"
    view = _normal({k: v for k, v in faces["view"].items() if k in reference and k != "overview"})
    assert view == {k: v for k, v in reference.items() if k != "overview"}, "the view's answer differs"
    assert faces["view"]["overview"] == layout.overview(faces["store off"]), "the view's overview differs"
    listed = faces["view list"]
    assert [listed[k] for k in ("states", "first", "last", "again", "late")] == [
        reference[k] for k in ("states", "first", "last", "again", "late")
    ], f"the view's list differs: {listed}"
    assert [list(cell) for cell in listed["strip"]] == _expected_strip(reference)
    # One answer read at one moment: its counts are its partitions' states.
    assert Counter(p["state"] for p in reference["partitions"]) == Counter(reference["states"])
    latest = {key: state for _, state, key in runs}  # in id order: the latest run of each key last
    for partition in reference["partitions"]:
        if partition["partition_key"] in latest:
            state = latest[partition["partition_key"]]
            allowed = {"success", "ran incomplete"} if state == "success" else {state}
            assert partition["state"] in allowed, (partition, state)


class Differential(RuleBasedStateMachine):
    """What users and Airflow do to ``it_diff_region_day``, its faces compared after each step."""

    airflow: Any = None

    def __init__(self) -> None:
        super().__init__()
        self.month = next(MONTHS)
        #: Each store's region: as the Variable lists them (an example goes on from the last one's).
        self.groups = _groups(self.airflow.query("SELECT val FROM variable WHERE key = :k", k=VARIABLE))
        self.token = self.airflow.request("GET", "/auth/token", auth=False)["access_token"]

    def day(self, n: int) -> str:
        return f"2025-{self.month:02d}-{n:02d}"

    def runs(self, *states: str) -> list[tuple[int, str, str]]:
        """The Dag's runs in *states* (all if none): ``(id, run id, state)``, by id."""
        rows = self.airflow.query(
            "SELECT id, run_id, state FROM dag_run WHERE dag_id = :d ORDER BY id", d=DAG
        )
        return [(i, run_id, state) for i, run_id, state in rows if not states or state in states]

    def set_state(self, run_id: str, state: str) -> None:
        self.airflow.request("PATCH", f"/api/v2/dags/{DAG}/dagRuns/{run_id}", body={"state": state})

    def check(self) -> None:
        """Read the faces at one moment (the rows unchanged around them) and compare them."""
        for attempt in itertools.count(1):
            before = _settled(self.airflow)
            faces = _faces(self.airflow, self.token)
            if _rows(self.airflow) == before:
                _agree(faces, before[0])
                return
            assert attempt < 5, "the rows kept changing while the faces were read"

    # -- the steps ---------------------------------------------------------------------------------

    @initialize()
    def members_and_runs(self) -> None:
        """
        The Dag unpaused, six runs created (and ended), a day's keys in part sent; then the stale cases.

        Runs trade states (:meth:`trade_states`, compared), a store moves to the other region
        while the day waits (one of the regions' pending runs awaits it before or after), and a
        store whose key a pending run holds beside another's moves (compared before: the watch
        deletes its key-log row from a run that stays, which no new row names): every example
        starts with them.
        """
        self.set_members(self.groups)
        self.airflow.request("PATCH", f"/api/v2/dags/{DAG}", body={"is_paused": False})
        for region, n in itertools.product(REGIONS, (1, 2, 3)):
            self.airflow.trigger(DAG, partition_key=f"{region}|{self.day(n)}")
        self.send("s3", DAYS)
        self.send("s1", DAYS)
        _settled(self.airflow)
        self.trade_states(*self.quadruples()[0])
        self.move("s4")
        self.leave()

    def leave(self) -> None:
        """
        Two stores of a region of three or more send :data:`LEFT_DAY` (a third does not); compared; one moves.

        Its key leaves the region's pending run, which keeps the other's, for the other region's.
        Its key-log row is not the newest: deleting the newest makes the mirror read every stamp.
        """

        def members(region: str) -> list[str]:
            return [store for store, group in zip(STORES, self.groups, strict=True) if group == region]

        if max(len(members(region)) for region in REGIONS) < 3:  # two and two: a store of south moves
            self.move(members("south")[0])
        region = max(REGIONS, key=lambda r: len(members(r)))
        for store in reversed(members(region)[:2]):  # the one to move first: its row is not the newest
            self.send(store, LEFT_DAY)
        _settled(self.airflow)
        self.check()
        self.move(members(region)[1])

    def set_members(self, groups: tuple[str, ...] | str) -> None:
        """Set the Variable through the REST API; wait until every process has read it (and re-routed)."""
        value = groups if isinstance(groups, str) else _members(groups)
        if self.airflow.query("SELECT val FROM variable WHERE key = :k", k=VARIABLE) == [(value,)]:
            return
        body = {"key": VARIABLE, "value": value}
        try:
            self.airflow.request("PATCH", f"/api/v2/variables/{VARIABLE}", body=body)
        except AirflowError:
            self.airflow.request("POST", "/api/v2/variables", body=body)
        time.sleep(float(self.airflow.env["AIRFLOW_PARTITIONS_VARIABLE_TTL"]) + 2)

    @rule(store=st.sampled_from([*STORES, STRANGER]), n=st.integers(1, DAYS))
    def send(self, store: str, n: int) -> None:
        """A store's day sent (again, if it was): counted, refused, or opening a pending run."""
        self.sent = f"{store}|{self.day(n)}"
        self.airflow.create_asset_event(ASSET, partition_key=self.sent)

    @rule()
    def resend(self) -> None:
        """The last key sent, sent again (an at-least-once feed); hypothesis's simplest step."""
        self.airflow.create_asset_event(ASSET, partition_key=self.sent)

    @rule(region=st.sampled_from(REGIONS), n=st.integers(1, DAYS))
    def complete(self, region: str, n: int) -> None:
        """Every store of a region sends its day: the scheduler fires the region's day."""
        for store, group in zip(STORES, self.groups, strict=True):
            if group == region:
                self.send(store, n)

    @rule(region=st.sampled_from(REGIONS), n=st.integers(1, DAYS))
    def trigger(self, region: str, n: int) -> None:
        """A run of a region's day created through the REST API (the scheduler runs it)."""
        self.airflow.trigger(DAG, partition_key=f"{region}|{self.day(n)}")

    @precondition(lambda self: self.runs())
    @rule(data=st.data(), state=st.sampled_from(["failed", "success", "queued"]))
    def set_run_state(self, data: st.DataObject, state: str) -> None:
        """A run set to failed, success or queued (run again) through the REST API."""
        _, run_id, _ = data.draw(st.sampled_from(self.runs()))
        self.set_state(run_id, state)

    @precondition(lambda self: self.runs("success", "failed"))
    @rule(data=st.data())
    def clear(self, data: st.DataObject) -> None:
        """A finished run's task instances cleared through the REST API: it runs again."""
        _, run_id, _ = data.draw(st.sampled_from(self.runs("success", "failed")))
        body = {"dry_run": False, "dag_run_id": run_id, "only_failed": False, "reset_dag_runs": True}
        self.airflow.request("POST", f"/api/v2/dags/{DAG}/clearTaskInstances", body=body)

    @precondition(lambda self: self.runs())
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        """A run deleted through the REST API."""
        _, run_id, _ = data.draw(st.sampled_from(self.runs()))
        self.airflow.request("DELETE", f"/api/v2/dags/{DAG}/dagRuns/{run_id}")

    def quadruples(self) -> list[tuple[str, ...]]:
        """
        Four finished runs ``a < b < c < d`` with ``a + d == b + c``, and one above them: their run ids.

        First those whose trade also keeps the sum of a 32-bit hash of the ids (:func:`_hashed`).
        """
        runs = {i: run_id for i, run_id, _ in self.runs("success", "failed")}
        newest = max(runs, default=0)
        found = [
            (a, b, c, d)
            for a, b, c in itertools.combinations(sorted(runs), 3)
            if (d := b + c - a) in runs and d < newest  # above c: d - c == b - a
        ]
        found.sort(key=lambda q: _hashed(q[0], q[3]) != _hashed(q[1], q[2]))
        return [(*(runs[i] for i in q), runs[newest]) for q in found[:20]]

    def trade_states(self, a: str, b: str, c: str, d: str, e: str) -> None:
        """
        Runs trade states through the REST API: a and d succeed, b and c fail (compared); then the other way.

        Each state keeps its number of runs, the sum of their ids (a + d == b + c) and its greatest
        id (e, above them, fails throughout).
        """
        for run_id, state in ((a, "success"), (d, "success"), (b, "failed"), (c, "failed"), (e, "failed")):
            self.set_state(run_id, state)
        self.check()
        for run_id, state in ((a, "failed"), (d, "failed"), (b, "success"), (c, "success")):
            self.set_state(run_id, state)

    @precondition(lambda self: self.quadruples())
    @rule(data=st.data())
    def trade(self, data: st.DataObject) -> None:
        """Runs trade states (:meth:`trade_states`)."""
        self.trade_states(*data.draw(st.sampled_from(self.quadruples())))

    @rule(store=st.sampled_from(STORES))
    def move(self, store: str) -> None:
        """The Variable changed: a store moves to the other region."""
        other = {"north": "south", "south": "north"}
        self.groups = tuple(other[g] if s == store else g for s, g in zip(STORES, self.groups, strict=True))
        self.set_members(self.groups)

    @rule(value=st.sampled_from(["not JSON [", "[]"]))
    def break_members(self, value: str) -> None:
        """The Variable changed to a member list that is not JSON (a half-edited value), or empty."""
        self.set_members(value)

    @precondition(
        lambda self: self.airflow.query(
            "SELECT 1 FROM asset_partition_dag_run WHERE target_dag_id = :d AND created_dag_run_id IS NULL",
            d=DAG,
        )
    )
    @rule(data=st.data())
    def discard(self, data: st.DataObject) -> None:
        """``discard --key K --yes`` of a pending run."""
        keys = self.airflow.query(
            "SELECT partition_key FROM asset_partition_dag_run WHERE target_dag_id = :d "
            "AND created_dag_run_id IS NULL ORDER BY id",
            d=DAG,
        )
        (key,) = data.draw(st.sampled_from(keys))
        _done(self.airflow, "discard", DAG, "--key", key, "--yes")

    @rule(every_dag=st.booleans())
    def clean(self, every_dag: bool) -> None:
        """``clean --yes`` of fired runs' bookkeeping (the Dag's, or every Dag's): ran with unknown."""
        tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
        _done(self.airflow, "clean", "--before", tomorrow, *([] if every_dag else ["--dag", DAG]), "--yes")

    @rule(paused=st.booleans())
    def pause(self, paused: bool) -> None:
        """The Dag paused or unpaused (paused: keys open no pending run, runs wait queued)."""
        self.airflow.request("PATCH", f"/api/v2/dags/{DAG}", body={"is_paused": paused})

    @invariant()
    def faces_agree(self) -> None:
        self.check()

    def teardown(self) -> None:
        self.airflow.request("PATCH", f"/api/v2/dags/{DAG}", body={"is_paused": False})


def test_every_face_gives_the_same_answer_after_every_step(airflow):
    Differential.airflow = airflow
    run_state_machine_as_test(
        Differential,
        settings=settings(
            max_examples=3,  # the first is hypothesis's simplest: its first rule (resend) again and again
            stateful_step_count=5,
            deadline=None,
            derandomize=True,
            phases=[Phase.generate],  # no shrinking: each step takes seconds; the failure prints its steps
            suppress_health_check=list(HealthCheck),
        ),
    )
