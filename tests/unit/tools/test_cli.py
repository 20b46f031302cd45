"""The airflow-partitions console script and the airflow partition-tools group: exit codes and --json."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from airflow_partitions.tools.cli import main
from airflow_partitions.tools.commands.requeue import format_orphans
from tests.unit.tools.write.test_requeue import orphans

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = str(ROOT / "example_dags")
LOCAL_DAY = (
    'TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), '
    'input_timezone="UTC"), window=TemporalWindow(Hour()))'
)


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_explain_prints_a_table_a_person_reads_and_exits_0(capsys):
    code, out = run(capsys, "explain", "--mapper", LOCAL_DAY, "2026-03-08T05")
    assert code == 0
    assert out.splitlines()[0] == "TemporalRollupMapper: '2026-03-08T05' → '2026-03-08'"
    assert "23 keys under WaitForAll(): 2026-03-08T05," in out
    assert max(len(line) for line in out.splitlines()) <= 120


def test_explain_of_a_huge_window_lists_its_first_and_last_6_keys_and_how_many_more(capsys):
    minutes = "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Minutes(1)))"
    code, out = run(capsys, "explain", "--mapper", minutes, "2026-03-10T05:07")
    text = " ".join(out.split())  # unwrapped
    assert code == 0 and "1440 keys" in text and "… (1428 more; --json lists all) …" in text
    assert "2026-03-10T00:05, …" in text and "…, 2026-03-10T23:54," in text and "2026-03-10T00:06" not in text
    code, out = run(capsys, "explain", "--mapper", minutes, "--json", "2026-03-10T05:07")
    assert len(json.loads(out)["keys"][0]["waits_for"]) == 1440


def test_explain_piped_into_head_stops_quietly():
    # A month of minutes as JSON is about 1 MB: far more than a pipe holds, so the writer meets
    # the closed pipe.
    month = "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Minutes(1)))"
    cli = f"{sys.executable} -m airflow_partitions.tools.cli"
    explain = f"{cli} explain --json --mapper '{month}' 2026-03-10T05:07"
    command = f"{explain} | head -c 12"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, check=False
    )
    assert done.stdout == '{\n  "mapper"' and "Traceback" not in done.stderr and done.returncode == 0


def test_explain_of_a_refused_key_exits_1_with_the_refusal(capsys):
    code, out = run(capsys, "explain", "--mapper", LOCAL_DAY, "2026-03-08")
    assert code == 1 and "REFUSED" in out


def test_explain_json_shape(capsys):
    code, out = run(capsys, "explain", "--mapper", LOCAL_DAY, "--json", "2026-03-08T05")
    data = json.loads(out)
    assert code == 0
    assert set(data) == {
        "mapper",
        "key",
        "downstream",
        "keys",
        "refused",
        "counts_as",
        "also_counts_as",
        "never_counts",
        "fan_out",
        "ok",
    }
    assert data["keys"][0]["waits_for_count"] == 23


def test_explain_reads_the_mapper_of_a_dag_in_a_folder(capsys):
    code, out = run(
        capsys,
        "explain",
        "--dag-folder",
        EXAMPLES,
        "--dag",
        "weather_local_day_jfk",
        "--json",
        "2013-03-10T05",
    )
    data = json.loads(out)
    assert code == 0 and data["keys"][0]["key"] == "2013-03-10" and data["keys"][0]["waits_for_count"] == 23


def test_explain_downstream_of_a_dag_in_a_folder(capsys):
    argv = [
        "explain",
        "--dag-folder",
        EXAMPLES,
        "--dag",
        "weather_local_day_jfk",
        "--downstream",
        "2013-03-10",
    ]
    code, out = run(capsys, *argv)
    assert code == 0 and "23 keys under WaitForAll(): 2013-03-10T05" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "2026-03-08"],
        ["explain", "--mapper", "TemporalMapper(Day())", "--dag-folder", EXAMPLES, "2026-03-08"],
        ["explain", "--mapper", "NoSuchMapper()", "2026-03-08"],
        ["check", "/no/such/folder"],
        ["requeue", "ny_day", "--start", "April", "--end", "2026-04-30"],
        ["requeue", "ny_day", "--start", "2026-04-01", "--end", "2026-04-31"],
    ],
)
def test_usage_errors_exit_2_naming_the_problem(capsys, argv):
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err


#: An api-server that cannot answer (nothing listens on port 9, discard): a command that asked it
#: would exit 1 saying so; a usage error found first exits 2.
SILENT_API = ["--api-url", "http://127.0.0.1:9", "--token", "t"]


@pytest.mark.parametrize("api", [[], SILENT_API], ids=["database", "api"])
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["clean", "--before", "01/01/2026"],
            "--before '01/01/2026' is not an ISO 8601 date or time such as '2026-03', '2026-03-01' or "
            "'2026-03-01T12:00+02:00' (UTC without an offset).",
        ),
        (
            ["clean", "--before", "January", "--dag", "d"],
            "--before 'January' is not an ISO 8601 date or time such as '2026-03', '2026-03-01' or "
            "'2026-03-01T12:00+02:00' (UTC without an offset), nor a partition key or the leading part "
            "of one (each names a year).",
        ),
        (
            ["requeue", "d", "--start", "2026-04-01", "--end", "April"],
            "--end 'April' is not an ISO 8601 date or time",
        ),
        (
            ["requeue", "d", "--start", "2026-05-01", "--end", "2026-04-30"],
            "--start '2026-05-01' is after --end '2026-04-30'.",
        ),
        (
            ["requeue", "d", "--start", "2026-04-01", "--end", "2026-04-31"],
            "--end '2026-04-31' is not an ISO 8601 date or time",
        ),
    ],
)
def test_a_date_option_that_is_not_one_is_named_before_anything_is_asked(capsys, argv, message, api):
    assert main([*argv, *api]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"airflow-partitions {argv[0]}: error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("name", ["status", "explain", "requeue", "discard", "clean"])
def test_every_command_that_reads_a_dag_says_an_unknown_dag_exits_1_in_help_and_docs(name):
    # What each command does with an unknown Dag (UnknownDag: 404, cli._guarded's exit code 1).
    from airflow_partitions.tools.cli import COMMANDS

    codes = " ".join(COMMANDS[name].epilog.split("exit codes:")[1].split())
    assert "unknown" in codes.split(" 1 ", 1)[1].split(", 2 ")[0], codes
    [row] = [line for line in (ROOT / "docs" / "cli.md").read_text().splitlines() if line.startswith("| 1 |")]
    unknown = row.split(": no such Dag")[0].rsplit(";", 1)[1]
    assert f"`{name}" in unknown, unknown


def test_an_asset_the_dag_does_not_read_is_named_with_the_ones_it_reads(capsys):
    argv = [
        "explain",
        "--dag-folder",
        EXAMPLES,
        "--dag",
        "weather_local_day_jfk",
        "--asset",
        "nope",
        "2013-03-10",
    ]
    assert main(argv) == 1  # an unknown asset, as the asset page's 404
    # The last line: Airflow's own log of loading the folder may come first, once a test imported it.
    assert capsys.readouterr().err.splitlines()[-1] == (
        "airflow-partitions explain: Dag 'weather_local_day_jfk' reads no asset 'nope'; it reads "
        "['weather_jfk_hourly']: pass one of them as --asset (its name or URI)."
    )


def test_a_dag_the_folder_does_not_hold_is_an_unknown_dag_exit_1(capsys):
    assert main(["explain", "--dag-folder", EXAMPLES, "--dag", "weather_land_jfk", "2026-03-08"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "airflow-partitions explain: Dag 'weather_land_jfk': is not a partitioned consumer here (expected a "
        "Dag scheduled on PartitionedAssetTimetable)."
    )


def test_missing_arguments_exit_2_as_argparse_does():
    with pytest.raises(SystemExit) as exit_:
        main(["check"])
    assert exit_.value.code == 2


def test_check_of_the_example_dags_exits_0_and_json_lists_findings(capsys):
    code, out = run(capsys, "check", EXAMPLES, "--json")
    findings = json.loads(out)
    assert code == 0
    assert findings and all(set(f) == {"severity", "dag_id", "asset", "message", "fix"} for f in findings)
    assert {f["severity"] for f in findings} <= {"warning", "info"}


def test_check_of_a_folder_without_a_dag_says_so_and_exits_1(capsys, tmp_path):
    code, out = run(capsys, "check", str(tmp_path))
    assert code == 1
    assert out.startswith(f"ERROR    {tmp_path}\n         no Dags found: the folder holds no Dag file")
    assert out.endswith("1 error, 0 warnings, 0 info\n")


@pytest.mark.parametrize("command", [["check"], ["explain", "--dag", "d", "2026-03-10", "--dag-folder"]])
def test_a_dag_folder_with_a_symlink_loop_is_a_one_line_usage_error(capsys, tmp_path, command):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)
    assert main([*command, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    # One line of ours, the last (Airflow may log its loading first, once a test imported it).
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith(
        f"airflow-partitions {command[0]}: error: Dag folder {str(tmp_path)!r} has a symbolic link back into "
        "itself, which Airflow refuses to walk (Detected recursive loop"
    )
    assert err.endswith("remove the link, or list it in the folder's .airflowignore.\n")


def test_check_with_errors_exits_1(capsys, tmp_path):
    (tmp_path / "broken.py").write_text("from airflow.sdk import DAG\nimport no_such_module\n")
    code, out = run(capsys, "check", str(tmp_path))
    assert (
        code == 1 and out.startswith("ERROR    broken.py") and out.endswith("1 error, 0 warnings, 0 info\n")
    )


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "AIRFLOW_HOME": str(tmp_path)}


def test_the_console_script_runs_as_a_process(tmp_path):
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"] == {
        "airflow-partitions": "airflow_partitions.tools.cli:console"
    }
    done = subprocess.run(
        [sys.executable, "-m", "airflow_partitions.tools.cli", "check", EXAMPLES, "--json"],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), list)


def test_airflow_cli_has_the_partition_tools_group(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "airflow", "partition-tools", "--help"],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in ("explain", "check", "status", "backfill", "requeue"))


def test_requeue_dry_run_lists_events_per_downstream_key_and_what_is_refused():
    assert format_orphans(orphans()).splitlines() == [
        "ny_day: 4 stored asset events sent 2026-04-01 00:00:00 … 2026-04-30 23:59:00 UTC feed no run",
        "  downstream key              events  upstream keys                           runs",
        "  2026-04-01                       2  2026-04-01T04 … 2026-04-01T05",
        "  2026-04-02                       1  2026-04-02T04                           failed",
        "  refused         2026-04-03 (hours): ValueError: '2026-04-03' would never count",
        "dry run: pass --yes to re-queue 3 events into 2 partitions",
    ]


def test_requeue_says_what_it_queued_and_which_runs_the_scheduler_has_yet_to_clear():
    lines = format_orphans(orphans(stale_pending=2, requeued=True)).splitlines()
    assert lines[-1] == "re-queued 3 events into 2 partitions"
    assert lines[-3].startswith("  not yet cleared 2 pending runs carry the previous rollup definition")


def _requeue_reads(monkeypatch, grain: object) -> dict:
    """Make ``requeue``'s Dag one whose keys are of *grain*; return what ``orphaned_events`` is asked."""
    seen: dict = {}

    def orphaned_events(dag_id, start, end, session=None):
        seen.update(dag_id=dag_id, start=start, end=end)
        return orphans(events=())

    # The package exports a function named requeue too: patch the module's attribute.
    monkeypatch.setattr(
        importlib.import_module("airflow_partitions.tools.write.requeue"), "orphaned_events", orphaned_events
    )
    serialized = importlib.import_module("airflow_partitions.tools.state.serialized")
    monkeypatch.setattr(serialized, "consumer_timetable", lambda dag_id, session, needs: (None, [("a", "a")]))
    monkeypatch.setattr(serialized, "timetable_grain", lambda timetable, assets: grain)
    return seen


def test_requeue_end_date_means_the_end_of_that_day(monkeypatch, capsys):
    seen = _requeue_reads(monkeypatch, None)
    code, out = run(capsys, "requeue", "ny_day", "--start", "2026-04-01", "--end", "2026-04-30")
    assert code == 0 and out.endswith("dry run: pass --yes to re-queue 0 events into 0 partitions\n")
    assert seen["start"] == datetime(2026, 4, 1, tzinfo=UTC)
    assert seen["end"] == datetime(2026, 4, 30, 23, 59, 59, 999999, tzinfo=UTC)
    run(capsys, "requeue", "ny_day", "--start", "2026-04", "--end", "2026-04")  # a month, as status takes
    assert (seen["start"], seen["end"]) == (
        datetime(2026, 4, 1, tzinfo=UTC),
        datetime(2026, 4, 30, 23, 59, 59, 999999, tzinfo=UTC),
    )


def test_requeue_takes_a_key_of_the_dags_grain_and_its_leading_part(monkeypatch, capsys):
    # Berlin's ISO weeks: 2026-W14 is Monday 30 March 00:00 CEST (22:00 UTC the day before) to
    # Sunday 5 April 24:00 CEST; 2026-W is the ISO year 2026, from 29 December 2025 to 3 January 2027.
    from airflow_partitions import IsoWeek

    seen = _requeue_reads(monkeypatch, IsoWeek(timezone="Europe/Berlin"))
    code, _ = run(capsys, "requeue", "weeks", "--start", "2026-W14", "--end", "2026-W14")
    assert code == 0
    assert seen["start"] == datetime(2026, 3, 29, 22, tzinfo=UTC)
    assert seen["end"] == datetime(2026, 4, 5, 21, 59, 59, 999999, tzinfo=UTC)
    run(capsys, "requeue", "weeks", "--start", "2026-W", "--end", "2026-W")
    assert seen["start"] == datetime(2025, 12, 28, 23, tzinfo=UTC)
    assert seen["end"] == datetime(2027, 1, 3, 22, 59, 59, 999999, tzinfo=UTC)
    code = main(["requeue", "weeks", "--start", "2026-Q1"])
    assert code == 2 and capsys.readouterr().err.startswith(
        "airflow-partitions requeue: error: --start '2026-Q1' is neither a partition key of 'weeks' (its "
        "keys are written like '2026-W11'), nor the leading part of one, nor an ISO 8601 date or time"
    )


def test_explain_downstream_of_a_week_that_does_not_exist_is_refused_exit_1(capsys):
    # 2025 has 52 ISO weeks (28 December 2025, a Sunday, is in week 52): there is no 2025-W53.
    weeks = "TemporalRollupMapper(upstream_mapper=TemporalMapper(IsoWeek()), window=TemporalWindow(Day()))"
    code, out = run(capsys, "explain", "--downstream", "--mapper", weeks, "2025-W53")
    assert code == 1 and "REFUSED" in out and "2025 has 52 ISO weeks" in " ".join(out.split())
    code, out = run(capsys, "explain", "--downstream", "--mapper", weeks, "2026-W53")  # 2026 has 53
    assert code == 0 and "7 keys" in out


def test_a_misspelled_class_gets_a_did_you_mean(capsys):
    misspelled = "TemporalRollUpMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))"
    code = main(["explain", "--mapper", misspelled, "2026-03-10T05"])
    assert code == 2
    assert "Did you mean TemporalRollupMapper (from airflow_partitions)?" in capsys.readouterr().err


def test_status_never_cuts_a_run_id():
    from airflow_partitions.tools.commands.status import format_state
    from airflow_partitions.tools.commands.text import WIDTH
    from airflow_partitions.tools.state import ConsumerState, Partition

    run_id = "asset_triggered__2026-03-10T00:00:00+00:00__" + "x" * 90  # longer than a line
    state = ConsumerState("d", (), (Partition("2026-03-10", "success", runs=((run_id, "success"),)),))
    text = format_state(state)
    (line,) = [line for line in text.splitlines() if run_id in line]  # whole, on one line
    assert line.split()[:2] == ["runs", run_id] and "success" in text.split(run_id, 1)[1]
    assert all(len(other) <= WIDTH for other in text.splitlines() if other != line)


def test_status_shows_a_run_that_ran_incomplete_with_what_it_ran_with_and_counts_it_apart():
    from airflow_partitions.tools.commands.status import format_state
    from airflow_partitions.tools.state import ConsumerState, Partition, RanWith

    missing = ("2026-03-10T14", "2026-03-10T15", "2026-03-10T16", "2026-03-10T17")
    partitions = (
        Partition("2026-03-09", "success", runs=(("r1", "success"),), ran_with=RanWith(24, 24)),
        Partition(
            "2026-03-10", "ran incomplete", runs=(("r2", "success"),), ran_with=RanWith(20, 24, missing, 4)
        ),
    )
    state = ConsumerState(
        "d",
        (),
        partitions,
        total=2,
        states={"success": 1, "ran incomplete": 1},
        first="2026-03-09",
        last="2026-03-10",
    )
    lines = format_state(state).splitlines()
    assert lines[0] == "d: 2 partitions from 2026-03-09 to 2026-03-10: 1 ran incomplete, 1 success"
    # The default selection leaves the success out: the header still counts every partition.
    hidden = format_state(replace(state, partitions=partitions[1:], total=1)).splitlines()
    assert hidden[0] == lines[0]
    assert hidden[2].startswith("  showing 1-1 of the 1 selected (by default those not successful;")
    [incomplete] = [line for line in lines if line.lstrip().startswith("2026-03-10")]
    assert incomplete.split()[:3] == ["2026-03-10", "ran", "incomplete"]
    assert "20/24" in incomplete and "2026-03-10T14, 2026-03-10T15, 2026-03-10T16 … (4)" in incomplete
    [complete] = [line for line in lines if line.lstrip().startswith("2026-03-09")]
    assert "24/24" in complete and "r1 success" in complete


def test_status_refuses_a_state_that_is_not_one_naming_the_states(capsys):
    from airflow_partitions.tools.cli import main

    assert main(["status", "any_dag", "--state", "again"]) == 2
    err = capsys.readouterr().err
    assert "--state 'again' is not a state; states: failed, ran incomplete" in err


def test_a_partition_that_ran_with_keys_after_it_counts_them_as_members_beside_its_state():
    from airflow_partitions.tools.commands.status import _state_label
    from airflow_partitions.tools.state import AssetProgress, Partition

    # Three spellings of one hour, received by the pending run beside a successful run.
    spellings = ("2026-05-01T10", "2026-05-01T10:00:00Z", "2026-05-01T06:00:00-04:00")
    progress = (AssetProgress("hours", spellings, counted=1, received_total=3, expected_total=24),)
    ran = Partition("2026-05-01", "success", progress=progress, pending_again="pending")
    assert (ran.again, _state_label(ran)) == (1, "success · 1 key after it ran, pending")
    assert _state_label(Partition("2026-05-02", "overdue", progress=progress)) == "overdue"


def test_status_says_when_it_shows_only_the_latest_refusals_and_how_to_see_them_all():
    from airflow_partitions.tools.commands.status import format_state
    from airflow_partitions.tools.state import ConsumerState, Refusal

    # 13 Saturdays and Sundays of March and April 2026 refused by a business-day month, oldest first.
    weekend = ["2026-03-01", *(f"2026-03-{d:02d}" for d in (7, 8, 14, 15, 21, 22, 28, 29)), "2026-04-04"]
    weekend += ["2026-04-05", "2026-04-11", "2026-04-12"]
    refusals = tuple(Refusal(None, "", partition_key=day, reason="not a business day") for day in weekend)
    assert len(refusals) == 13
    lines = format_state(ConsumerState("d", (), (), refusals=refusals, refusals_total=13)).splitlines()
    assert lines[-5].startswith("  13 keys refused on arrival")
    assert [line.split()[1] for line in lines[-4:-1]] == ["2026-04-05:", "2026-04-11:", "2026-04-12:"]
    assert lines[-1] == "  showing the latest 3 of 13; --json lists up to 100"
    # All of them shown: nothing cut, nothing said.
    few = format_state(ConsumerState("d", (), (), refusals=refusals[:2], refusals_total=2)).splitlines()
    assert not any("showing the latest" in line for line in few)


def test_without_gc_turns_the_collector_off_for_the_block_and_back_as_it_was() -> None:
    import gc

    from airflow_partitions.tools.commands.base import without_gc

    assert gc.isenabled()
    with pytest.raises(LookupError), without_gc():
        assert not gc.isenabled()
        raise LookupError("an unknown Dag")
    assert gc.isenabled()
    gc.disable()
    try:
        with without_gc():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_requeue_without_end_reads_until_now(monkeypatch, capsys):
    seen = _requeue_reads(monkeypatch, None)
    before = datetime.now(UTC)
    code, out = run(capsys, "requeue", "ny_day", "--start", "2026-04-01")
    assert code == 0 and out.endswith("dry run: pass --yes to re-queue 0 events into 0 partitions\n")
    assert seen["start"] == datetime(2026, 4, 1, tzinfo=UTC)
    assert before <= seen["end"] <= datetime.now(UTC)


def test_status_marks_the_refused_keys_re_queued_since_and_counts_them():
    from airflow_partitions.tools.commands.status import format_state
    from airflow_partitions.tools.state import ConsumerState, Refusal

    # Four keys of a store its region's Variable did not list yet, the last two re-queued since.
    keys = [f"store-007|2026-11-{d}" for d in (27, 28, 29, 30)]
    refusals = tuple(
        Refusal(None, "", partition_key=key, reason="not listed", requeued=n >= 2)
        for n, key in enumerate(keys)
    )
    lines = format_state(ConsumerState("d", (), (), refusals=refusals, refusals_total=4)).splitlines()
    assert lines[-5] == (
        "  4 keys refused on arrival (Airflow's audit log); of the latest 4, 0 by the calendar's rule, "
        "4 mistaken; 2 re-queued since (their events feed a run now)"
    )
    assert [line.split(":")[0].split(None, 1)[1] for line in lines[-4:-1]] == [
        "store-007|2026-11-28",
        "store-007|2026-11-29 (re-queued since)",
        "store-007|2026-11-30 (re-queued since)",
    ]
    none_again = format_state(ConsumerState("d", (), (), refusals=refusals[:2], refusals_total=2))
    assert "re-queued" not in none_again
