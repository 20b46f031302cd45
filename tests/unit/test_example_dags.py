"""The example Dags parse, serialize and use our classes, without a running Airflow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.serialization.serialized_objects import DagSerialization

EXAMPLES = Path(__file__).resolve().parents[2] / "example_dags"
AIRPORTS = ("ewr", "jfk", "lga")
EXPECTED = {f"weather_{kind}_{a}" for kind in ("land", "daily", "local_day", "monthly") for a in AIRPORTS} | {
    "weather_airport_day",
    "weather_daily_export",
}


@pytest.fixture(scope="module")
def dagbag(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("AIRFLOW_PARTITIONS_DATA", str(tmp_path_factory.mktemp("data")))
    try:
        yield DagBag(dag_folder=str(EXAMPLES))
    finally:
        mp.undo()


def test_every_example_dag_parses_without_import_errors(dagbag):
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == EXPECTED


def test_every_example_dag_serializes_as_the_dag_processor_would(dagbag):
    for dag_id in EXPECTED:
        stored = json.dumps(DagSerialization.to_dict(dagbag.dags[dag_id]))
        assert dag_id in stored


def test_examples_use_our_classes_where_the_docs_say(dagbag):
    stored = {dag_id: json.dumps(DagSerialization.to_dict(dagbag.dags[dag_id])) for dag_id in EXPECTED}
    assert "airflow_partitions.namespace.PrefixStripMapper" in stored["weather_daily_jfk"]
    assert "airflow_partitions.business.BusinessDayWindow" in stored["weather_monthly_jfk"]
    assert "airflow_partitions.composite.DimensionRollupMapper" in stored["weather_airport_day"]
    assert (
        "airflow_partitions.timetables.ScheduledRuntimePartitionTimetable" in stored["weather_daily_export"]
    )
