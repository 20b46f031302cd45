"""
What users wrote against earlier releases still parses: every released example_dags folder and doc page.

``tests/compat/`` (written by ``scripts/snapshot_compat.py``) holds each version of
``example_dags/`` and each version of a documentation page's ``python`` blocks on main up to the
last release (pages since every block of the docs ran in the unit suite: earlier ones held
fragments). Every example folder is loaded as the dag-processor loads it (``airflow-partitions
check``, in a process of its own: the versions share module names) and must have no import
error; every page's blocks run in order with their ``assert`` statements removed, since what a
release asserted about its own behaviour may have changed on purpose, what it built must still
build. Refusals made on purpose are listed in :data:`REFUSED_ON_PURPOSE`, each with the message
that must name the class to use instead, and so are imports of modules that pages of main named
but no release shipped.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

COMPAT = Path(__file__).resolve().parents[1] / "compat"
FOLDERS = sorted((COMPAT / "example_dags").iterdir())
PAGES = sorted((COMPAT / "docs").glob("*.py"))

#: Snippets refused on purpose since their release: page file -> the text the error must contain.
#: A refusal names the class to use (docs/migrating.md). docs/cli.md at 1f224da imported
#: ``airflow_partitions.inspect``, which main had from after 0.1.0 until it became
#: ``airflow_partitions.tools`` (issue 20), and no release shipped: it is gone.
REFUSED_ON_PURPOSE: dict[str, str] = {
    "docs_cli@1f224da.py": "No module named 'airflow_partitions.inspect'",
}


def test_the_compatibility_set_holds_every_released_version():
    assert len(FOLDERS) >= 9 and len(PAGES) >= 14


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_a_released_example_dags_folder_still_loads_without_import_errors(folder):
    done = subprocess.run(
        [sys.executable, "-m", "airflow_partitions.tools.cli", "check", str(folder), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    findings = json.loads(done.stdout)
    import_errors = [f for f in findings if f["severity"] == "error" and not f["asset"]]
    assert import_errors == []


class _NoAsserts(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        return ast.Pass()


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_a_released_doc_pages_snippets_still_run(page, tmp_path, monkeypatch):
    (tmp_path / "example_dags").symlink_to(Path(__file__).resolve().parents[2] / "example_dags")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"compat_{page.stem}", "__file__": str(page)}
    # One block at a time, as test_docs runs them (each opens with its "# -- block" line).
    blocks = re.split(r"^(?=# -- block )", page.read_text(), flags=re.M)
    expected = REFUSED_ON_PURPOSE.get(page.name)

    def run() -> None:
        for block in blocks:
            tree = _NoAsserts().visit(ast.parse(block, filename=str(page)))
            exec(compile(ast.fix_missing_locations(tree), str(page), "exec"), namespace)

    if expected is None:
        run()
        return
    with pytest.raises((TypeError, ValueError, ImportError), match=expected):
        run()
