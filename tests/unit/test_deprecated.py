"""The imports and names of 0.1.0 that moved keep working, with a DeprecationWarning (CHANGELOG.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

OLD_IMPORTS = [
    ("airflow_partitions.fiscal", "FiscalQuarter", "airflow_partitions.grains.fiscal"),
    ("airflow_partitions.retail", "RetailWeek", "airflow_partitions.grains.retail"),
    ("airflow_partitions.deadlines", "missing_upstream_keys", "airflow_partitions.task"),
]

#: The old modules that warn when imported (the others warn when the moved name is read).
WARN_ON_IMPORT = ("airflow_partitions.fiscal", "airflow_partitions.retail")

#: Every old import in one interpreter (one Airflow import, not one per import): before each, the modules
#: that warn on import are dropped from sys.modules (with their submodules), so each is imported
#: afresh and warns again, as in a user's new process.
IMPORT_IN_CHILD = """
import importlib, json, sys, warnings
cases, shims = json.loads(sys.argv[1]), json.loads(sys.argv[2])
import airflow.configuration  # Airflow routes warnings to its log once imported: import it first
results = {}
for module, name, new in cases:
    for loaded in [m for m in sys.modules if any(m == s or m.startswith(s + ".") for s in shims)]:
        del sys.modules[loaded]
    importlib.import_module(new)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = getattr(importlib.import_module(module), name)
    results[f"{module}.{name}"] = {
        "same": old is getattr(importlib.import_module(new), name),
        "warnings": sum(issubclass(w.category, DeprecationWarning) and "airflow_partitions" in str(w.message)
                        for w in caught),
    }
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def old_imports() -> dict[str, dict]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_IN_CHILD, json.dumps(OLD_IMPORTS), json.dumps(WARN_ON_IMPORT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(("module", "name", "new"), OLD_IMPORTS, ids=[f"{m}.{n}" for m, n, _ in OLD_IMPORTS])
def test_an_old_import_gives_the_same_object_and_warns(old_imports, module, name, new):
    result = old_imports[f"{module}.{name}"]
    assert result["same"], (module, name, new)
    assert result["warnings"] >= 1


def test_an_old_method_name_answers_as_the_new_one_and_warns():
    from airflow_partitions import Day

    with pytest.warns(DeprecationWarning, match="floor_key"):
        assert Day().period_of("2026-03-10T09").key == Day().floor_key("2026-03-10T09").key == "2026-03-10"
