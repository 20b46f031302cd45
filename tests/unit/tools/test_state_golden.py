"""
The JSON the Partitions view's API and ``status --json`` return, pinned by golden files.

A real Airflow metadata database (SQLite, ``airflow db migrate``) is built once per test session
in a process of its own (:mod:`tests.unit.tools.state_golden.build`): the Dags of
``state_golden/dags/`` serialized by Airflow, asset events sent through Airflow's asset manager,
Dag runs written with its models. Every answer must equal its file in ``state_golden/`` but for
``read_at`` (when it was read) and ``asset_id``. A change to what the reader returns shows here as
a diff; when the change is meant, write the files again with
``python -m tests.unit.tools.test_state_golden --write`` and say why in the commit.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "state_golden"
ROOT = Path(__file__).resolve().parents[3]
#: Fields that differ from one build to the next, whatever the reader does (``asset_id``: the
#: order in which Airflow wrote the assets).
VOLATILE = ("read_at", "asset_id")


def normalised(value: Any) -> Any:
    """Return *value* with the :data:`VOLATILE` fields as placeholders (``"<read_at>"``)."""
    if isinstance(value, dict):
        return {k: f"<{k}>" if k in VOLATILE else normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


def build() -> dict[str, Any]:
    """Run the builder in a new ``AIRFLOW_HOME``: its answers (``golden``, ``both_modes``), normalised."""
    with tempfile.TemporaryDirectory(prefix="airflow-partitions-golden-state-") as home:
        env = {
            **os.environ,
            "AIRFLOW_HOME": home,
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
            "AIRFLOW__CORE__DAGS_FOLDER": str(HERE / "dags"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        }
        ran = subprocess.run(
            [sys.executable, "-m", "tests.unit.tools.state_golden.build"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if ran.returncode:
            raise AssertionError(f"the golden database could not be built:\n{ran.stderr[-6000:]}")
        return normalised(json.loads(ran.stdout.splitlines()[-1]))


@pytest.fixture(scope="session")
def built() -> dict[str, Any]:
    return build()


@pytest.fixture(scope="session")
def answers(built) -> dict[str, Any]:
    return built["golden"]


def golden_names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.json"))


def test_every_answer_has_a_golden_file(answers):
    from tests.unit.tools.state_golden.build import UNPINNED

    assert sorted(set(answers) - set(UNPINNED)) == golden_names()


@pytest.mark.parametrize("name", golden_names())
def test_the_answer_equals_its_golden_file(answers, name):
    expected = json.loads((HERE / f"{name}.json").read_text(encoding="utf-8"))
    assert answers[name] == expected


def test_answers_read_from_the_store_of_the_mappers_answers_equal_those_worked_out(built, answers):
    # A second read with every memo emptied finds the mappers' answers in the store the first
    # read filled (tools/state/kept/cache.py's Store), never deserializing a consumer's mappers for
    # status, and returns the same JSON. Checked to fail with a stored pending run's fires_at
    # dropped when rebuilt.
    from tests.unit.tools.state_golden.build import UNPINNED

    again = built["from_store"]
    pinned = sorted(set(answers) - set(UNPINNED))  # the metrics' ages move with the clock
    assert {n: again["answers"][n] for n in pinned} == {n: answers[n] for n in pinned}
    assert again["asked"]["found"] > 0
    assert again["asked"].get("worked out", 0) == 0


def both_modes_names() -> list[str]:
    from tests.unit.tools.state_golden.build import BOTH_MODES

    return sorted(BOTH_MODES)


@pytest.mark.parametrize("name", both_modes_names())
def test_a_command_answers_the_same_through_the_rest_api_as_from_the_database(built, name):
    # The same exit code, text or JSON and error, read from the database and through a real
    # api-server (uvicorn on loopback) with --api-url and an admin's token.
    found = built["both_modes"][name]
    assert found["api"] == found["database"]
    assert found["database"]["exit"] in (0, 1, 2)


def test_the_statuses_read_through_the_api_are_the_golden_ones(built, answers):
    for dag in ("ny_day", "region_day", "business_month", "business_producer"):
        assert built["both_modes"][f"status_{dag}"]["api"]["out"] == answers[f"status_{dag}"]["json"]


def test_the_api_mode_names_a_forged_token_a_missing_token_and_a_silent_server(built):
    refused = built["both_modes"]["refused"]
    assert refused["forged"]["exit"] == 1
    # Airflow answers a token it did not sign with 403 "Invalid JWT token".
    assert "refused the token (403: Invalid JWT token)" in refused["forged"]["err"]
    assert "forged or expired" in refused["forged"]["err"]
    assert refused["no_token"]["exit"] == 1
    assert "AIRFLOW_PARTITIONS_API_TOKEN" in refused["no_token"]["err"]
    assert refused["no_answer"]["exit"] == 1
    assert "did not answer" in refused["no_answer"]["err"]
    assert not any("Traceback" in r["err"] for r in refused.values())


def test_a_viewer_reads_through_the_api_but_may_not_discard(built):
    refused = built["both_modes"]["refused"]
    assert refused["viewer_reads"]["exit"] == 0
    assert refused["viewer_reads"]["out"] == built["both_modes"]["discard_ny_day"]["database"]["out"]
    assert refused["viewer_discards"]["exit"] == 1
    assert "may not do this (403: Forbidden)" in refused["viewer_discards"]["err"]


def test_a_discard_through_the_api_is_audit_logged_under_the_callers_name(built):
    dry = built["both_modes"]["discard_ny_day"]["database"]["out"]
    assert len(dry["runs"]) == 1  # the golden New York day with a key sent after it ran
    written = built["both_modes"]["written"]
    assert written["discard"]["exit"] == 0
    assert written["discard"]["out"]["removed"] is True
    assert [r["partition_key"] for r in written["discard"]["out"]["runs"]] == [
        r["partition_key"] for r in dry["runs"]
    ]
    # One audit-log row per removed pending run, its owner the token's user (not the OS user).
    assert written["audit_owners"] == ["golden-admin"] * len(dry["runs"])


def _with_times(value: Any) -> Any:
    """Return *value* (normalised JSON) with each ``"<read_at>"`` an ISO 8601 time, to rebuild it."""
    if isinstance(value, dict):
        return {
            k: "2013-03-20T00:00:00+00:00" if v == "<read_at>" else _with_times(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_with_times(v) for v in value]
    return value


def status_request_names() -> list[str]:
    from tests.unit.tools.state_golden.build import STATUS_REQUESTS

    return sorted(STATUS_REQUESTS)


@pytest.mark.parametrize("name", status_request_names())
def test_the_cli_the_commands_route_and_the_view_answer_one_status_request_alike(built, name):
    # One request type, every face: the CLI builds the StatusRequest the builder sent to both routes
    # (its path and query parameters), and the CLI's --json (database and --api-url), the commands'
    # route and the view's page hold the same state; the CLI's text is that state formatted.
    from airflow_partitions.tools.cli import build_parser
    from airflow_partitions.tools.commands.status import StatusRequest, format_state, request_of
    from airflow_partitions.tools.state.model import ConsumerState
    from airflow_partitions.tools.state.plain import rebuilt
    from airflow_partitions.tools.ui.layout import overview
    from tests.unit.tools.state_golden.build import STATUS_REQUESTS, status_argv

    fields = STATUS_REQUESTS[name]
    argv = status_argv(fields)
    assert request_of(build_parser().parse_args(argv)) == StatusRequest(**fields)
    faces = built["both_modes"]["status_faces"][name]
    route = faces["route"]
    assert route["status"] == 200
    assert faces["json"]["exit"] == faces["json_api"]["exit"] in (0, 1)
    assert faces["json"]["out"] == faces["json_api"]["out"] == route["json"]
    assert faces["view"]["status"] == 200
    view = faces["view"]["json"]
    # The view's page is the state, its overview laid out in buckets, and the page's grid beside.
    assert {k: view[k] for k in route["json"] if k != "overview"} == {
        k: v for k, v in route["json"].items() if k != "overview"
    }
    assert view["overview"] == overview(route["json"])
    assert view["total_entries"] == route["json"]["total"]
    assert len(route["json"]["partitions"]) == min(
        fields["limit"], route["json"]["total"] - fields.get("offset", 0)
    )
    text = format_state(rebuilt(ConsumerState, _with_times(route["json"]))) + "\n"
    assert faces["text"]["out"] == faces["text_api"]["out"] == text
    assert faces["text"]["exit"] == faces["text_api"]["exit"] == faces["json"]["exit"]


@pytest.mark.parametrize(
    ("name", "status_code", "exit_code", "message"),
    [
        ("unknown_dag", 404, 1, "no Dag 'no_such_dag' in this deployment's metadata database"),
        ("bad_state", 400, 2, "--state 'again' is not a state; states: failed, ran incomplete"),
        ("bad_range", 400, 2, "--start '2013-04' is after --end '2013-03'."),
        (
            "bad_start",
            400,
            2,
            "--start '03/2013' is neither a partition key of 'golden_ny_day' (its keys are written like "
            "'2026-03-10'), nor the leading part of one, nor an ISO 8601 date or time such as '2013'",
        ),
        ("bad_end", 400, 2, "--end '2013-02-30' is neither a partition key of 'golden_ny_day'"),
        ("bad_key", 400, 2, "--key 'garbage' is not a partition key of 'golden_ny_day': partition key"),
    ],
)
def test_both_routes_and_both_modes_refuse_a_bad_status_request_alike(
    built, name, status_code, exit_code, message
):
    faces = built["both_modes"]["status_faces"][name]
    assert faces["route"]["status"] == faces["view"]["status"] == status_code
    assert message in faces["route"]["json"]["detail"] and message in faces["view"]["json"]["detail"]
    assert faces["cli"]["exit"] == faces["cli_api"]["exit"] == exit_code
    assert message in faces["cli"]["err"] and faces["cli"]["err"] == faces["cli_api"]["err"]
    assert "Traceback" not in faces["cli"]["err"] + faces["cli_api"]["err"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("start", "--start '03/2013' is neither a partition key of 'golden_ny_day'"),
        ("end", "--end 'garbage' is neither a partition key of 'golden_ny_day'"),
        (
            "key",
            "--key '2013-03-09T05' is not a partition key of 'golden_ny_day': partition key "
            "'2013-03-09T05' is not a canonical Day(",
        ),
    ],
)
def test_discard_yes_with_a_selection_the_dags_keys_cannot_match_removes_nothing_in_both_modes(
    built, name, message
):
    found = built["both_modes"]["bad_discards"][name]
    for mode in ("database", "api"):
        assert found[mode]["exit"] == 2, found[mode]
        assert message in found[mode]["err"] and "Traceback" not in found[mode]["err"]
    assert found["database"]["err"] == found["api"]["err"]
    before, after = built["both_modes"]["bad_discards_pending"]
    assert before == after > 0  # counted by SQL around the refused runs: no pending run removed


@pytest.mark.parametrize("command", ["status", "requeue", "discard"])
def test_an_unknown_dag_exits_1_naming_it_in_both_modes(built, command):
    found = built["both_modes"][f"{command}_unknown"]
    assert found["database"]["exit"] == found["api"]["exit"] == 1
    assert "'no_such_dag'" in found["database"]["err"] and found["api"]["err"] == found["database"]["err"]


def test_an_unknown_asset_is_named_in_both_modes(built):
    # An unknown asset, as the asset page's 404: exit 1.
    found = built["both_modes"]["explain_unknown_asset"]
    assert found["database"]["exit"] == found["api"]["exit"] == 1
    named = "Dag 'golden_ny_day' reads no asset 'nope'; it reads ['golden_utc_hours']"
    assert named in found["database"]["err"]
    assert found["api"]["err"] == found["database"]["err"]


def test_clean_through_the_api_counts_as_the_database_and_removes_under_the_callers_name(built):
    dry = built["both_modes"]["clean_ny_day"]["database"]
    assert dry["exit"] == 0 and dry["out"]["removed"] is False
    written = built["both_modes"]["written"]
    # Counted by a query of the test's own, before the removal: what the dry run counted.
    assert written["fired_before"] == [dry["out"]["pending_rows"], dry["out"]["key_log_rows"]]
    assert dry["out"]["pending_rows"] > 0 and dry["out"]["by_dag"] == {
        "golden_ny_day": written["fired_before"]
    }
    clean = written["clean"]
    assert clean["exit"] == 0, clean["err"]
    assert clean["out"] == {**dry["out"], "removed": True}
    assert written["fired_after"] == [0, 0]
    assert written["clean_owners"] == ["golden-admin"]  # one audit-log row per Dag cleaned


def test_a_viewer_counts_through_the_api_but_may_not_clean(built):
    refused = built["both_modes"]["refused"]
    assert refused["viewer_counts"]["exit"] == 0
    assert refused["viewer_counts"]["out"] == built["both_modes"]["clean_ny_day"]["database"]["out"]
    assert refused["viewer_cleans"]["exit"] == 1
    assert "may not do this (403: Forbidden)" in refused["viewer_cleans"]["err"]
    assert "it needs more access to the Dag 'golden_ny_day'" in refused["viewer_cleans"]["err"]
    assert "Traceback" not in refused["viewer_cleans"]["err"]


def test_a_viewer_may_not_clean_every_dag_and_is_told_the_access_is_to_every_dag(built):
    refused = built["both_modes"]["refused"]["viewer_cleans_every_dag"]
    assert refused["exit"] == 1 and "may not do this (403: Forbidden)" in refused["err"]
    assert "it needs more access to every Dag (clean without --dag)" in refused["err"]
    assert "Traceback" not in refused["err"]


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Parse Prometheus' text format with prometheus_client's parser: (name, labels) to value."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_the_metrics_endpoint_serves_each_dags_partitions_in_prometheus_text_format(answers):
    from datetime import UTC, datetime, timedelta

    from airflow_partitions.tools.metrics import METRICS
    from tests.unit.tools.state_golden.build import WRITTEN

    scraped = answers["metrics"]
    assert scraped["status"] == 200
    assert scraped["content_type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = _samples(scraped["text"])

    def value(name: str, dag: str, **labels: str) -> float:
        return samples[name, tuple(sorted({"dag_id": dag, **labels}.items()))]

    # golden_late_day (build.py): 2013-03-04 failed, 2013-03-05 succeeded, 2013-03-06 has 20 of
    # 24 hours (its period ended: overdue), 2099-01-01 pending. Expected within two hours of each
    # day's end: the failed day and the overdue one are late, the day to come is not.
    states = ("success", "failed", "overdue", "pending", "ran incomplete", "running")
    late_day = {s: value("airflow_partitions_partitions", "golden_late_day", state=s) for s in states}
    assert late_day == {
        "success": 1,
        "failed": 1,
        "overdue": 1,
        "pending": 1,
        "ran incomplete": 0,
        "running": 0,
    }
    assert value("airflow_partitions_late", "golden_late_day") == 2
    assert value("airflow_partitions_late", "golden_ny_day") == 0  # no expected_within
    # golden_ny_day's 2013-03-08 fired at its deadline with 20 of its 24 hours.
    assert value("airflow_partitions_ran_incomplete", "golden_ny_day") == 1
    assert value("airflow_partitions_ran_incomplete", "golden_late_day") == 0
    # Keys refused on arrival: an hour 99 (ny_day), a key without its time part (region_day), a
    # Saturday into a month of business days (business_month: the calendar's rule at work).
    refused = "airflow_partitions_refused_keys_total"
    assert value(refused, "golden_ny_day", reason="mapping_error") == 1
    assert value(refused, "golden_region_day", reason="mapping_error") == 1
    assert value(refused, "golden_business_month", reason="outside_calendar") == 1
    assert value(refused, "golden_business_month", reason="mapping_error") == 0
    assert value("airflow_partitions_blocked", "golden_late_day") == 0
    # The oldest pending run of golden_late_day was opened on WRITTEN's day (build.py's fix_times).
    age = value("airflow_partitions_oldest_pending_age_seconds", "golden_late_day")
    now = datetime.now(UTC)
    assert (now - timedelta(hours=1) - (WRITTEN + timedelta(days=1))).total_seconds() <= age
    assert age <= (now - WRITTEN).total_seconds()
    # Every metric is served with its HELP and TYPE; names as the contract says.
    from prometheus_client.parser import text_string_to_metric_families

    families = {f.name: f.type for f in text_string_to_metric_families(scraped["text"])}
    assert families == {name.removesuffix("_total"): kind for name, (kind, _, _) in METRICS.items()}


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    from tests.unit.tools.state_golden.build import UNPINNED

    for name, answer in build()["golden"].items():
        if name in UNPINNED:
            continue
        text = json.dumps(answer, indent=1, sort_keys=True) + "\n"
        (HERE / f"{name}.json").write_text(text, encoding="utf-8")
