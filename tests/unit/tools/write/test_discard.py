"""airflow_partitions.tools.write.discard without a database: its Airflow dependency, its answer in text."""

from __future__ import annotations

import argparse
import inspect
from datetime import UTC, datetime

from airflow_partitions.tools.cli import COMMANDS, _guarded
from airflow_partitions.tools.commands.base import FOUND
from airflow_partitions.tools.commands.discard import format_discarded
from airflow_partitions.tools.errors import UnknownDag
from airflow_partitions.tools.write.discard import Discarded, StrayRun

AT = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def test_discard_takes_airflows_lock_for_new_keys_with_these_arguments():
    # A private Airflow 3.3 function (airflow/assets/manager.py), taken before a key joins a pending run.
    from airflow.assets.manager import _lock_asset_model

    parameters = inspect.signature(_lock_asset_model).parameters
    assert {"session", "asset_id"} <= set(parameters)
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters.values())


def test_a_dry_run_lists_each_stray_run_with_its_runs_since_when_and_keys():
    found = Discarded(
        "day",
        "of periods that already have a Dag run",
        (
            StrayRun("2026-05-01", 7, AT, ("2026-05-01T07",), ("success",)),
            StrayRun(
                "2026-05-02", 9, AT, tuple(f"2026-05-02T{h:02d}" for h in range(5)), ("failed", "success")
            ),
        ),
    )
    assert format_discarded(found).splitlines() == [
        "day: 2 pending partitioned runs of periods that already have a Dag run",
        "  partition                   Dag runs          since (UTC)          keys received",
        "  2026-05-01                  success           2026-05-04 09:30:00  2026-05-01T07",
        "  2026-05-02                  failed, success   2026-05-04 09:30:00  2026-05-02T00, 2026-05-02T01, "
        "2026-05-02T02 … (5)",
        "dry run: pass --yes to remove them (their Dag runs and asset events are kept)",
    ]


def test_nothing_to_remove_says_so_naming_the_selection():
    assert format_discarded(Discarded("day", "of 2026-05-01", ())) == (
        "day: no pending partitioned run of 2026-05-01 to remove"
    )


def test_an_unknown_dag_is_exit_code_1_with_its_message_and_no_traceback(capsys):
    def handler(args: argparse.Namespace, source: object) -> int:
        raise UnknownDag("no Dag 'nope' in this deployment's metadata database.")

    assert _guarded(COMMANDS["discard"]._replace(handler=handler), argparse.Namespace()) == FOUND
    assert capsys.readouterr().err == (
        "airflow-partitions discard: no Dag 'nope' in this deployment's metadata database.\n"
    )
