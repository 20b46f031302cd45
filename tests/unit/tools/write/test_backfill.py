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
