from __future__ import annotations

import inspect
import json
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path

import jsonschema
import pytest

import airflow_partitions
from airflow_partitions.provider_info import get_provider_info
from tests.unit.support import run_python

LIST_AIRFLOW_MODULES = """
import json
import sys
{imports}
print(json.dumps(sorted(m for m in sys.modules if m == "airflow" or m.startswith("airflow."))))
"""


@pytest.mark.parametrize(
    "imports",
    [
        pytest.param("import airflow_partitions; airflow_partitions.__all__", id="package"),
        pytest.param(
            "from airflow_partitions.provider_info import get_provider_info; get_provider_info()",
            id="provider-info",
        ),
    ],
)
def test_importing_does_not_import_airflow(imports):
    # Airflow reads our provider info while its configuration initialises; importing Airflow
    # there would be circular.
    output = run_python(LIST_AIRFLOW_MODULES.format(imports=imports))
    assert json.loads(output) == []


def test_provider_info_validates_against_airflows_schema():
    import airflow

    schema_path = Path(airflow.__file__).parent / "provider_info.schema.json"
    schema = json.loads(schema_path.read_text())
    info = get_provider_info()

    jsonschema.validate(info, schema)
    assert info["package-name"] == "airflow-partitions"
    assert info["versions"] == [airflow_partitions.__version__]


def test_plugin_registers_exactly_the_public_mappers_windows_and_timetables():
    from airflow.partition_mappers.base import PartitionMapper
    from airflow.partition_mappers.window import Window
    from airflow.timetables.base import Timetable

    from airflow_partitions.plugin import AirflowPartitionsPlugin

    registered = [
        *AirflowPartitionsPlugin.partition_mappers,
        *AirflowPartitionsPlugin.windows,
        *AirflowPartitionsPlugin.timetables,
    ]
    names = [cls.__name__ for cls in registered]
    public = [getattr(airflow_partitions, name) for name in airflow_partitions.__all__]
    registrable = {
        cls.__name__
        for cls in public
        if isinstance(cls, type) and (issubclass(cls, PartitionMapper | Window) or Timetable in cls.__mro__)
    }
    assert len(names) == len(set(names))
    assert set(names) == registrable
    assert all(cls is getattr(airflow_partitions, cls.__name__) for cls in registered)


def test_plugin_files_each_class_under_its_kind():
    from airflow.partition_mappers.base import PartitionMapper
    from airflow.partition_mappers.window import Window
    from airflow.timetables.base import Timetable

    from airflow_partitions.plugin import AirflowPartitionsPlugin

    assert all(issubclass(c, PartitionMapper) for c in AirflowPartitionsPlugin.partition_mappers)
    assert all(issubclass(c, Window) for c in AirflowPartitionsPlugin.windows)
    # Timetable is a Protocol with data members: issubclass() refuses it, the MRO does not.
    assert all(Timetable in c.__mro__ for c in AirflowPartitionsPlugin.timetables)


@pytest.mark.parametrize("name", airflow_partitions.__all__)
def test_public_name_resolves_to_a_class_or_function_at_a_stable_qualname(name):
    cls = getattr(airflow_partitions, name)
    assert inspect.isclass(cls) or inspect.isfunction(cls)
    assert cls.__name__ == name
    assert cls.__module__.startswith("airflow_partitions.")
    assert cls.__module__ != "airflow_partitions.plugin"
    # Airflow stores the qualname and imports it back in the scheduler.
    assert getattr(import_module(cls.__module__), cls.__qualname__) is cls


def test_dir_lists_the_public_names():
    assert set(airflow_partitions.__all__) <= set(dir(airflow_partitions))


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="NoSuchMapper"):
        airflow_partitions.NoSuchMapper  # noqa: B018


def test_plugin_entry_point():
    (entry_point,) = [ep for ep in entry_points(group="airflow.plugins") if ep.name == "airflow_partitions"]
    assert entry_point.value == "airflow_partitions.plugin:AirflowPartitionsPlugin"
    from airflow_partitions.plugin import AirflowPartitionsPlugin

    assert entry_point.load() is AirflowPartitionsPlugin


def test_provider_entry_point():
    ours = [
        ep
        for ep in entry_points(group="apache_airflow_provider")
        if ep.dist is not None and ep.dist.name == "airflow-partitions"
    ]
    assert [ep.value for ep in ours] == ["airflow_partitions.provider_info:get_provider_info"]
    assert ours[0].load() is get_provider_info


def test_a_stored_grain_of_any_kind_loads_in_a_process_that_never_imported_its_module():
    # The scheduler rebuilds stored Dags without importing the modules their Dag files used.
    code = (
        "from airflow_partitions.grains import Grain\n"
        "grain = Grain.deserialize({'format_version': 1, 'kind': 'fiscal_quarter', 'start_month': 7})\n"
        "print(grain.key(grain.floor_key('2025-08-15')))"
    )
    assert run_python(code).strip() == "FY2026-Q1"  # a July fiscal year named by its end: Aug 2025 is Q1


def test_every_memo_of_the_package_is_bounded():
    """A memo without a bound grows with every distinct key a scheduler or api-server ever sees."""
    import functools
    import pkgutil

    unbounded = []
    for found in pkgutil.walk_packages(airflow_partitions.__path__, "airflow_partitions."):
        deprecated = found.name.split(".")[1] in ("fiscal", "retail")  # aliases that warn
        if deprecated or found.name.endswith("__main__"):
            continue
        module = import_module(found.name)
        for name, value in vars(module).items():
            memo = isinstance(value, functools._lru_cache_wrapper) and value.__module__ == found.name
            if memo and value.cache_info().maxsize is None:
                unbounded.append(f"{found.name}.{name}")
    assert unbounded == []
