"""check: one small Dag folder per mistake (written here), a clean one, a core-only one, and example_dags."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from airflow_partitions.tools import check

EXAMPLES = Path(__file__).resolve().parents[3] / "example_dags"

HEADER = """\
from airflow.sdk import (
    DAG, Asset, CronPartitionTimetable, PartitionedAssetTimetable, PartitionedAtRuntime, task,
    DayWindow, FanOutMapper, MonthWindow, RollupMapper, StartOfDayMapper, StartOfMonthMapper,
)
from airflow_partitions import *

days = Asset("days")
"""


def dag_folder(tmp_path: Path, producer: str, consumer: str, body: str = "") -> Path:
    """Write one producer Dag (schedule *producer*, writing ``days``) and one consumer (mapper *consumer*)."""
    source = (
        HEADER
        + body
        + textwrap.dedent(f"""
        with DAG("producer", schedule={producer}):
            @task(outlets=[days])
            def write():
                pass
            write()

        schedule = PartitionedAssetTimetable(assets=days, default_partition_mapper={consumer})
        with DAG("consumer", schedule=schedule):
            @task
            def read():
                pass
            read()
        """)
    )
    (tmp_path / "dags.py").write_text(source)
    return tmp_path


DAILY = 'CronPartitionTimetable("0 0 * * *", timezone="UTC", key_format="%Y-%m-%d")'
MONTH_OF_DAYS = "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()))"


def errors(findings):
    return [f for f in findings if f.severity == "error"]


def only(findings, severity):
    (found,) = [f for f in findings if f.severity == severity]
    return found


def test_a_daily_producer_and_a_month_of_days_is_clean(tmp_path):
    assert check(dag_folder(tmp_path, DAILY, MONTH_OF_DAYS)) == []


@pytest.mark.parametrize(
    "files",
    [{}, {"notes.txt": "not Python"}, {"helpers.py": "X = 1\n"}],  # safe mode skips a file without 'dag'
    ids=["empty", "no Python", "no Dag file"],
)
def test_a_folder_without_a_dag_is_one_error_saying_nothing_was_checked(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    [found] = check(tmp_path)
    assert (found.severity, found.dag_id) == ("error", str(tmp_path))
    assert (
        found.message == "no Dags found: the folder holds no Dag file Airflow loads, so nothing was checked"
    )


def test_a_folder_of_a_dag_that_is_not_partitioned_is_clean(tmp_path):
    (tmp_path / "plain.py").write_text(
        "from airflow.sdk import DAG\nfrom airflow.providers.standard.operators.empty import EmptyOperator\n"
        "with DAG('plain', schedule=None):\n    EmptyOperator(task_id='t')\n"
    )
    assert check(tmp_path) == []


def test_a_dag_folder_of_core_classes_only_is_checked_and_clean(tmp_path):
    core = 'CronPartitionTimetable("0 0 * * *", timezone="UTC")'
    assert (
        check(
            dag_folder(
                tmp_path, core, "RollupMapper(upstream_mapper=StartOfMonthMapper(), window=MonthWindow())"
            )
        )
        == []
    )


def test_keys_the_consumer_cannot_read_are_an_error(tmp_path):
    producer = 'CronPartitionTimetable("0 0 * * *", timezone="UTC", key_format="%d/%m/%Y")'
    finding = only(check(dag_folder(tmp_path, producer, MONTH_OF_DAYS)), "error")
    assert (finding.dag_id, finding.asset) == ("consumer", "days")
    assert "cannot be read, e.g. '01/01/2026'" in finding.message


def test_a_month_of_days_fed_by_a_weekday_producer_never_completes(tmp_path):
    weekdays = 'CronPartitionTimetable("0 0 * * 1-5", timezone="UTC", key_format="%Y-%m-%d")'
    finding = only(check(dag_folder(tmp_path, weekdays, MONTH_OF_DAYS)), "error")
    assert "the run for '2026-02' waits for 28 keys, 8 of which producer never writes" in finding.message
    assert "'2026-02-01'" in finding.message and "wait forever" in finding.message


def test_weekend_keys_into_a_business_day_month_are_refused_on_arrival_a_warning(tmp_path):
    months = "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow())"
    finding = only(check(dag_folder(tmp_path, DAILY, months)), "warning")
    assert "are refused on arrival" in finding.message and "is not a business day" in finding.message


def test_a_fan_out_over_its_cap_is_an_error(tmp_path):
    fan_out = (
        "FanOutMapper(upstream_mapper=StartOfMonthMapper(), window=MonthWindow(), max_downstream_keys=28)"
    )
    monthly = 'CronPartitionTimetable("0 0 1 * *", timezone="UTC")'
    finding = only(check(dag_folder(tmp_path, monthly, fan_out)), "error")
    assert "fans out to 31 keys, more than max_downstream_keys=28" in finding.message


def test_naive_local_hours_in_a_zone_with_dst_are_a_warning(tmp_path):
    hourly = 'CronPartitionTimetable("0 * * * *", timezone="America/New_York", key_format="%Y-%m-%dT%H")'
    finding = only(check(dag_folder(tmp_path, hourly, "TemporalMapper(Day())")), "warning")
    assert finding.dag_id == "producer" and "naive local times in 'America/New_York'" in finding.message


def test_core_day_window_of_24_naive_hours_holds_the_missing_spring_hour_without_counting_it(tmp_path):
    # Core writes the skipped local 02:00 of New York's 2026-03-08 as 03:00, so the day awaits 23
    # keys, all written; '2026-03-08T02' is held beside them and never counts: a warning (an error
    # only where a period counts none of the producer's keys).
    utc_hours = 'CronPartitionTimetable("0 * * * *", timezone="UTC", key_format="%Y-%m-%dT%H")'
    core_day = (
        'RollupMapper(upstream_mapper=StartOfDayMapper(timezone="America/New_York", '
        'input_format="%Y-%m-%dT%H"), window=DayWindow())'
    )
    findings = check(dag_folder(tmp_path, utc_hours, core_day))
    finding = only(findings, "warning")
    assert errors(findings) == []
    assert "held but never counted" in finding.message
    assert "'2026-03-08T02', not among the keys '2026-03-08' waits for" in finding.message


def test_core_rollup_awaiting_a_spelling_no_producer_writes_is_an_error(tmp_path):
    # The producer writes UTC hours with their offset ('2026-03-10T05:00:00+0000'); core's mapper
    # reads them in New York and awaits New York's spelling ('2026-03-10T00:00:00-0500' …).
    utc = 'CronPartitionTimetable("0 * * * *", timezone="UTC", key_format="%Y-%m-%dT%H:%M:%S%z")'
    core_day = (
        'RollupMapper(upstream_mapper=StartOfDayMapper(timezone="America/New_York", '
        'input_format="%Y-%m-%dT%H:%M:%S%z"), window=DayWindow())'
    )
    (held,) = [f for f in errors(check(dag_folder(tmp_path, utc, core_day))) if "held" in f.message]
    assert "300 of 300 sample keys" in held.message and "would wait forever" in held.message


def test_a_fixed_offset_zone_name_is_a_warning(tmp_path):
    producer = 'CronPartitionTimetable("0 0 * * *", timezone="EST", key_format="%Y-%m-%d")'
    finding = only(check(dag_folder(tmp_path, producer, "TemporalMapper(Day())")), "warning")
    assert "'EST' is a fixed offset" in finding.message


def test_a_mapper_class_no_plugin_registers_is_an_error_as_the_dag_processor_reports_it(tmp_path):
    body = textwrap.dedent("""
        from airflow.partition_mappers.identity import IdentityMapper

        class Unregistered(IdentityMapper):
            pass
        """)
    finding = only(check(dag_folder(tmp_path, DAILY, "Unregistered()", body)), "error")
    assert finding.dag_id.endswith("dags.py") and "Unregistered" in finding.message


def test_a_runtime_producer_feeding_a_wait_for_all_rollup_is_a_starvation_warning(tmp_path):
    body = 'example_keys(days, ["2026-03-02", "2026-03-03"])\n'
    finding = only(check(dag_folder(tmp_path, "PartitionedAtRuntime()", MONTH_OF_DAYS, body)), "warning")
    assert "stays pending under WaitForAll() until all 31 keys of that period arrive" in finding.message
    assert "only the 500 oldest pending partitioned runs per loop" in finding.message


def test_a_runtime_producer_declaring_no_keys_is_reported_as_info(tmp_path):
    finding = only(check(dag_folder(tmp_path, "PartitionedAtRuntime()", "TemporalMapper(Day())")), "info")
    assert finding.dag_id == "producer" and "example_keys" in finding.fix


@pytest.mark.parametrize("schedule", ["None", '"@daily"'])
def test_a_producer_on_a_plain_schedule_feeding_a_partitioned_consumer_is_reported(tmp_path, schedule):
    # Its events carry a key only if its task calls add_partitions; else Airflow audit-logs
    # "missing partition key" and queues nothing.
    finding = only(check(dag_folder(tmp_path, schedule, "TemporalMapper(Day())")), "info")
    assert finding.dag_id == "producer" and "its schedule is not partitioned" in finding.message


def test_the_example_dags_have_no_errors():
    findings = check(EXAMPLES)
    assert errors(findings) == []
    assert {f.dag_id for f in findings if f.severity == "warning"} >= {
        "weather_local_day_jfk",
        "weather_monthly_jfk",
    }


def test_a_missing_folder_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        check(tmp_path / "nowhere")


def test_airflows_documented_business_day_rollup_is_clean_but_for_an_info_naming_our_rollup(tmp_path):
    # RollupMapper(StartOfMonthMapper, BusinessDayWindow), as Airflow's plugin docs write it, from a
    # producer of every calendar day: it works (no error, no warning); the info says what ours adds.
    documented = (
        'RollupMapper(upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), '
        "window=BusinessDayWindow())"
    )
    findings = check(dag_folder(tmp_path, DAILY, documented))
    finding = only(findings, "info")
    assert [f.severity for f in findings] == ["info"]
    assert "compares keys by spelling" in finding.message and "'2026-03-07'" in finding.message
    assert finding.fix.startswith(
        "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow"
    )


def test_declared_naive_local_hours_into_a_berlin_day_rollup_are_an_info_saying_what_happens(tmp_path):
    # Berlin 2026: clocks go forward at 02:00 on 29 March, back at 03:00 on 25 October (02:00 repeats).
    body = 'example_keys(days, ["2026-10-25T02", "2026-10-25T03"])\n'
    berlin_day = (
        'TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="Europe/Berlin")), '
        'window=TemporalWindow(Hour(timezone="Europe/Berlin")))'
    )
    findings = check(dag_folder(tmp_path, "PartitionedAtRuntime()", berlin_day, body))
    (info,) = [f for f in findings if f.severity == "info" and "naive local" in f.message]
    assert "'2026-10-25T02', are naive local times read in 'Europe/Berlin'" in info.message
    assert "repeated when DST ends (2026-10-25T02) counts for both occurrences" in info.message
    assert "skipped when it starts (2026-03-29T02) counts as the hour after it" in info.message
    assert errors(findings) == []


def test_offset_keys_into_a_berlin_day_rollup_get_no_naive_info(tmp_path):
    body = 'example_keys(days, ["2026-10-25T02+02:00", "2026-10-25T02:00:00Z"])\n'
    berlin_day = (
        'TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="Europe/Berlin")), '
        'window=TemporalWindow(Hour(timezone="Europe/Berlin")))'
    )
    findings = check(dag_folder(tmp_path, "PartitionedAtRuntime()", berlin_day, body))
    assert not [f for f in findings if "naive local" in f.message]


def test_an_asset_of_and_no_dag_in_the_folder_produces_is_a_warning_naming_it(tmp_path):
    body = 'orders = Asset("orders")\n'
    source = (
        HEADER
        + body
        + textwrap.dedent("""
        daily = CronPartitionTimetable("0 0 * * *", timezone="UTC", key_format="%Y-%m-%d")
        with DAG("producer", schedule=daily):
            @task(outlets=[days])
            def write():
                pass
            write()

        with DAG("consumer", schedule=PartitionedAssetTimetable(assets=days & orders)):
            @task
            def read():
                pass
            read()

        with DAG("either", schedule=PartitionedAssetTimetable(assets=days | orders)):
            @task
            def read_either():
                pass
            read_either()
        """)
    )
    (tmp_path / "dags.py").write_text(source)
    findings = check(tmp_path)
    (warning,) = [
        f for f in findings if f.severity == "warning" and "no Dag in this folder produces" in f.message
    ]
    assert (warning.dag_id, warning.asset) == ("consumer", "orders")
    assert "'days' & 'orders'" in warning.message and "500 oldest pending runs" in warning.message
    assert not [f for f in findings if f.dag_id == "either" and "produces" in f.message]  # days | orders


def test_a_consumer_none_of_whose_assets_is_produced_here_is_an_info(tmp_path):
    source = HEADER + textwrap.dedent("""
        orders = Asset("orders")
        with DAG("consumer", schedule=PartitionedAssetTimetable(assets=days & orders)):
            @task
            def read():
                pass
            read()
        """)
    (tmp_path / "dags.py").write_text(source)
    (info,) = [f for f in check(tmp_path) if "no Dag in this folder produces" in f.message]
    assert info.severity == "info" and "may live in another folder" in info.message


SLIDING = "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7{}))"


def test_a_sliding_window_without_a_start_is_a_warning_naming_start(tmp_path):
    findings = check(dag_folder(tmp_path, DAILY, SLIDING.format("")))
    warning = only(findings, "warning")
    assert "first 6 windows" in warning.message and "never completes" in warning.message
    assert "start='2026-01-01'" in warning.fix
    assert errors(findings) == []  # the windows at the sample's edges are the sample's, not a gap


def test_a_sliding_window_with_a_start_fed_daily_is_clean(tmp_path):
    assert check(dag_folder(tmp_path, DAILY, SLIDING.format(", start='2026-01-01'"))) == []


def test_a_sliding_window_fed_by_a_weekday_producer_still_never_completes(tmp_path):
    weekdays = 'CronPartitionTimetable("0 0 * * 1-5", timezone="UTC", key_format="%Y-%m-%d")'
    found = only(check(dag_folder(tmp_path, weekdays, SLIDING.format(", start='2026-01-01'"))), "error")
    assert "never writes" in found.message and "wait forever" in found.message


REST_FED = HEADER + textwrap.dedent("""
    # The one consumer of hours nobody in this folder produces: a REST client sends them.
    hours = Asset("hours")
    schedule = PartitionedAssetTimetable(
        assets=hours,
        default_partition_mapper=TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())
        ),
    )
    with DAG("rest_fed", schedule=schedule):
        @task
        def read():
            pass
        read()
    """)


def test_a_rest_fed_rollup_holding_keys_sent_again_is_warned_of_and_the_unchecked_dag_is_said(tmp_path):
    (tmp_path / "dags.py").write_text(REST_FED)
    findings = check(tmp_path)
    warning = only(findings, "warning")
    assert (warning.dag_id, warning.asset) == ("rest_fed", "hours")
    assert "no Dag of this folder produces it: REST clients and other folders deliver at least once" in (
        warning.message
    )
    assert "rerun_policy='refresh'" in warning.fix and "airflow-partitions discard DAG_ID" in warning.fix
    info = only(findings, "info")
    assert (info.dag_id, info.asset) == ("rest_fed", "hours")
    assert info.message.startswith("no key reached it: no Dag of this folder produces the assets it reads")


def test_a_rest_fed_rollup_under_a_deadline_is_not_warned_of_keys_sent_again(tmp_path):
    deadline = REST_FED.replace(
        "window=TemporalWindow(Hour())",
        "window=TemporalWindow(Hour()), wait_policy=CompletionDeadline(timedelta(hours=1))",
    ).replace(
        "from airflow_partitions import *", "from datetime import timedelta\nfrom airflow_partitions import *"
    )
    (tmp_path / "dags.py").write_text(deadline)
    findings = check(tmp_path)
    assert [f.severity for f in findings] == ["info"]  # the deadline fires a run re-opened by a key


def test_a_producer_with_retries_feeding_a_rollup_that_holds_is_named_in_the_warning(tmp_path):
    folder = dag_folder(tmp_path, DAILY, MONTH_OF_DAYS)
    source = (
        (folder / "dags.py").read_text().replace("@task(outlets=[days])", "@task(outlets=[days], retries=3)")
    )
    (folder / "dags.py").write_text(source)
    warning = only(check(folder), "warning")
    assert (warning.dag_id, warning.asset) == ("consumer", "days")
    assert warning.message.startswith("tasks of producer that write it have retries")


def test_a_malformed_member_variable_is_an_error_naming_it_and_the_json_expected(tmp_path, monkeypatch):
    from airflow_partitions.members import EXPECTED_JSON, forget_reads

    monkeypatch.setenv("AIRFLOW_VAR_CHECKED_STORES", '{"store-001": "nsw"}')  # an object, not a list
    forget_reads()
    consumer = (
        "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['store', 'day'], "
        "{'day': TemporalMapper(Day())}, output=['day']), "
        "window=DimensionWindow(store=VariableMembers('checked_stores')))"
    )
    try:
        findings = check(dag_folder(tmp_path, DAILY, consumer))
    finally:
        forget_reads()
    (found,) = [f for f in errors(findings) if "Airflow Variable 'checked_stores'" in f.message]
    assert found.dag_id == "consumer"
    assert EXPECTED_JSON in found.message
    assert "airflow variables set checked_stores" in found.fix


def test_a_member_variable_mixing_members_with_and_without_a_group_is_an_error_naming_them(
    tmp_path, monkeypatch
):
    from airflow_partitions.members import forget_reads

    stores = [{"value": "store-001", "group": "north"}, "store-002", {"value": "store-003", "group": "south"}]
    monkeypatch.setenv("AIRFLOW_VAR_CHECKED_STORES", json.dumps(stores))  # store-002 lost its group
    forget_reads()
    consumer = (
        "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['store', 'day'], "
        "{'day': TemporalMapper(Day())}), window=DimensionWindow(store=VariableMembers('checked_stores')))"
    )
    try:
        findings = check(dag_folder(tmp_path, DAILY, consumer))
    finally:
        forget_reads()
    (found,) = [f for f in errors(findings) if "members ['store-002'] have no group" in f.message]
    assert found.dag_id == "consumer" and "Variable 'checked_stores'" in found.message
    assert "airflow variables set checked_stores" in found.fix
