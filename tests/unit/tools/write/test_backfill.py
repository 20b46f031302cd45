"""
``backfill``'s selection, its text and its tracked backfills (:mod:`~airflow_partitions.tools.write.paced`).

The tracked backfills are read and written on a real SQLite database holding Airflow 3.3's own
``log`` and ``dag_run`` tables (its models' tables, created on an empty file), as the audit log
and the scheduler keep them.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from airflow_partitions import Day
from airflow_partitions.tools.cli import main
from airflow_partitions.tools.commands import backfill as command
from airflow_partitions.tools.state.selection import checked_key


def test_a_keys_from_file_of_comments_only_is_a_usage_error_naming_it_not_every_partition(tmp_path, capsys):
    # Nothing is sent: the api-server on port 1 would be "did not answer", exit code 1.
    keys = tmp_path / "keys6.txt"
    keys.write_text("# nothing here yet\n\n")
    argv = ["backfill", "my_day", "--keys-from", str(keys), "--api-url", "http://127.0.0.1:1", "--token", "t"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"airflow-partitions backfill: error: --keys-from {str(keys)!r} holds no key (only blank lines "
        "or '#' comments): give one key a line.\n"
    )


def test_a_bad_key_of_a_keys_from_file_is_named_by_the_file_and_its_line(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("# days to redo\n2026-01-09\n\nbad-key\n")

    class Deployment:
        def read(self, request: object) -> object:
            for key in request.keys:  # as the planner checks them, with a day grain
                checked_key("my_day", Day(), key)
            raise AssertionError("bad-key passed")

    with pytest.raises(ValueError) as raised:
        command.run(_parsed(["my_day", "--keys-from", str(keys)]), Deployment)
    assert str(raised.value).startswith(
        f"--keys-from {str(keys)!r} line 4: 'bad-key' is not a partition key of 'my_day': partition key "
        "'bad-key' is not an ISO 8601 date"
    )


def _parsed(argv: list[str]) -> argparse.Namespace:
    """``backfill``'s arguments as the command line parses them."""
    from airflow_partitions.tools.cli import build_parser

    return build_parser().parse_args(["backfill", *argv])


@pytest.fixture
def session(tmp_path):
    """A session on an empty SQLite file holding Airflow 3.3's own tables (its models')."""
    import airflow.models  # noqa: F401  (registers every table of Airflow's)
    from airflow.models import import_all_models
    from airflow.models.base import Base
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    import_all_models()
    engine = create_engine(f"sqlite:///{tmp_path / 'airflow.db'}")
    Base.metadata.create_all(engine)
    with Session(engine) as new:
        yield new
    engine.dispose()


def test_the_backfills_of_an_unknown_dag_are_an_unknown_dag_not_none(session):
    from airflow_partitions.tools.commands.backfill import BackfillsRequest
    from airflow_partitions.tools.errors import UnknownDag

    with pytest.raises(UnknownDag, match=r"^no Dag 'nosuchdag' in this deployment's metadata database"):
        BackfillsRequest("nosuchdag").read(session)


class _Reader:
    """What the planner reads of a day Dag by key: these partitions, as ``Reader.partitions_of`` says."""

    def __init__(self, found: dict[str, Any]) -> None:
        self.answers = SimpleNamespace(grain=Day())
        self.found = found

    def partitions_of(self, keys: list[str]) -> list[Any]:
        return [self.found[key] for key in keys]


def test_keys_without_a_state_are_selected_whatever_their_state_a_missing_one_included():
    from airflow_partitions.tools.state.model import Partition
    from airflow_partitions.tools.write.backfill import Selection
    from airflow_partitions.tools.write.selected import PlannedDag, Selected

    found = {
        "2026-01-07": Partition("2026-01-07", "failed", runs=(("manual__1", "failed"),)),
        "2026-01-08": Partition("2026-01-08", "success", runs=(("manual__2", "success"),)),
        "2026-01-09": Partition("2026-01-09", "pending"),  # no run nor pending run: never opened
    }
    root = PlannedDag("my_day", None, [("hours", "hours")], _Reader(found))
    selection = Selection("my_day", keys=("2026-01-07", "2026-01-08", "2026-01-09"))
    page, total, counts, left_out = Selected(selection, None, datetime(2026, 2, 1, tzinfo=UTC)).keys_selected(
        root
    )
    assert [(key, state) for _, _, key, _, state in page] == [
        ("2026-01-07", "failed"),
        ("2026-01-08", "success"),
        ("2026-01-09", "missing"),
    ]
    assert (total, counts, left_out) == (3, {"failed": 1, "success": 1, "missing": 1}, 0)
    assert selection.words() == "any state, of 3 keys"
    # --state still narrows them.
    failed = Selection("my_day", keys=selection.keys, states=("failed",))
    assert [
        key
        for _, _, key, _, _ in Selected(failed, None, datetime(2026, 2, 1, tzinfo=UTC)).keys_selected(root)[0]
    ] == ["2026-01-07"]


def test_a_dry_runs_counts_of_runs_and_keys_to_send_say_they_are_of_the_page_shown():
    from airflow_partitions.tools.write.backfill import Feed, Plan, PlannedPartition, Step

    hours = tuple(f"2026-01-08T{h:02d}" for h in range(24))
    shown = (
        PlannedPartition(
            "2026-01-07", "failed", (Step("re-run", "my_day", "2026-01-07", run_id="manual__1"),)
        ),
        PlannedPartition(
            "2026-01-08", "overdue", (Step("send", "my_day", "2026-01-08", asset="my_hours", keys=hours),)
        ),
    )
    plan = Plan(
        "my_day",
        "not success",
        shown,
        331,
        {"failed": 1, "overdue": 330},
        limit=2,
        feeds=(Feed("my_hours", "my_hours", 3, hours),),
    )
    lines = command.format_plan(plan).splitlines()
    assert lines[-4:] == [
        "runs to start for the 2 partitions shown: 1 (1 re-run)",
        "keys a feed must send for the 2 partitions shown: 24 keys of my_hours (no Dag makes them; --json: "
        "the bodies of POST /api/v2/assets/events)",
        "  (of 331 selected: --limit 0 plans them all; --yes starts every one)",
        "dry run: pass --yes to start them",
    ]
    # Every partition shown: the counts are of all of them, and said plainly.
    whole = command.format_plan(replace(plan, total=2, states={"failed": 1, "overdue": 1})).splitlines()
    assert whole[-3:] == [
        "runs to start: 1 (1 re-run)",
        "keys a feed must send: 24 keys of my_hours (no Dag makes them; --json: the bodies of POST "
        "/api/v2/assets/events)",
        "dry run: pass --yes to start them",
    ]


T = datetime(2026, 1, 10, 9, tzinfo=UTC)


def _backfill(session: Any, states: list[str]) -> str:
    """
    Record a backfill of my_day that started one re-run a run, as ``backfill --yes`` does; return its name.

    Run *i* is ``manual__i`` of partition ``2026-01-0i`` (from 1), in ``dag_run`` in ``states[i - 1]``.
    """
    from sqlalchemy import insert

    from airflow_partitions.tools.state.tables import dag_run
    from airflow_partitions.tools.write import audit, paced

    runs = [(f"manual__{i}", f"2026-01-0{i}") for i in range(1, len(states) + 1)]
    session.execute(
        insert(dag_run),
        [
            {
                "dag_id": "my_day",
                "run_id": run_id,
                "run_type": "manual",
                "partition_key": key,
                "state": state,
                "run_after": T,
            }
            for (run_id, key), state in zip(runs, states, strict=True)
        ],
    )
    what = {
        "selection": "any state, of 3 keys",
        "max_active": len(runs),
        "order": "oldest",
        "runs": [["re-run", "my_day", key, run_id, ""] for run_id, key in runs],
    }
    row = audit(session, paced.CREATED, "my_day", "ann", what)
    session.flush()
    started = [[i, run_id, ""] for i, (run_id, _) in enumerate(runs)]
    audit(session, paced.STARTED, "my_day", "ann", {"backfill": row.id, "runs": started})
    session.commit()
    return f"backfill-{row.id}"


def _set(session: Any, run_id: str, state: str) -> None:
    """Write the state of my_day's run *run_id*, as the scheduler does."""
    from sqlalchemy import update

    from airflow_partitions.tools.state.tables import dag_run

    session.execute(update(dag_run).where(dag_run.c.run_id == run_id).values(state=state))
    session.commit()


def test_cancel_fails_only_the_runs_still_queued_when_it_writes_and_says_which(session, monkeypatch):
    from airflow_partitions.tools.write import paced

    name = _backfill(session, ["queued", "queued", "running", "success"])
    lock = paced._lock

    def scheduler_starts_run_2_first(session: Any, backfill_id: int) -> None:
        _set(session, "manual__2", "running")  # after the cancel read it queued
        lock(session, backfill_id)

    monkeypatch.setattr(paced, "_lock", scheduler_starts_run_2_first)
    cancelled = paced.control(session, name, "cancel", "bob")
    assert cancelled.state == "cancelled" and cancelled.cancel_failed == ("manual__1",)
    assert [run.state for run in cancelled.runs] == ["failed", "running", "running", "success"]
    assert command.format_backfills(paced.Backfills((cancelled,))).splitlines()[-1].strip() == (
        "its cancel failed 1 run still queued (manual__1); 2 of its runs queued or running go on"
    )
    # The runs left running end as they end; those that had ended keep their state.
    _set(session, "manual__2", "success")
    _set(session, "manual__4", "running")  # re-run since by another backfill
    listed = paced.backfills(session, name=name).backfills[0]
    assert [run.state for run in listed.runs] == ["failed", "success", "running", "success"]
    assert listed.cancel_failed == ("manual__1",)


def test_a_done_backfill_keeps_the_states_its_runs_ended_in_when_they_are_run_again(session):
    from airflow_partitions.tools.write import paced

    name = _backfill(session, ["failed", "success", "success"])
    done = paced.advance(session, int(name.removeprefix("backfill-")))
    assert done.state == "done" and done.counts == {"failed": 1, "success": 2}
    for run_id in ("manual__1", "manual__2"):  # a later backfill re-runs them
        _set(session, run_id, "running")
    again = paced.backfills(session, name=name).backfills[0]
    assert [run.state for run in again.runs] == ["failed", "success", "success"]
    assert again.counts == {"failed": 1, "success": 2}
