"""docs/deployment/Dockerfile, the deployment page's image: it parses and starts from a released Airflow."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import dockerfile
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docs" / "deployment" / "Dockerfile"
IMAGE = re.compile(r"^apache/airflow:(?P<version>\d+\.\d+\.\d+)$")


def _instructions() -> list[dockerfile.Command]:
    return list(dockerfile.parse_file(str(DOCKERFILE)))


def test_the_dockerfile_starts_from_a_released_airflow_image_the_package_supports():
    first = _instructions()[0]
    assert first.cmd == "FROM", first.original
    found = IMAGE.match(first.value[0])
    assert found, f"expected apache/airflow:X.Y.Z, got {first.value[0]!r}"
    tag = Version(found["version"])
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [airflow] = [
        Requirement(r) for r in pyproject["project"]["dependencies"] if r.startswith("apache-airflow>")
    ]
    assert tag in airflow.specifier  # a release the package supports
    # Released: no newer than the Airflow the package index gives the newest job (its images follow);
    # the oldest-Airflow job runs on the pinned oldest release instead.
    oldest = (ROOT / "scripts" / "oldest-airflow.txt").read_text()
    installed = version("apache-airflow")
    assert tag <= Version(installed) or f"apache-airflow=={installed}\n" in oldest


def test_the_dockerfile_installs_the_package_with_airflow_pinned_as_the_image_advises():
    [install] = [c for c in _instructions() if c.cmd == "RUN" and "pip install" in c.value[0]]
    command = install.value[0]
    assert '"apache-airflow==${AIRFLOW_VERSION}"' in command
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert re.search(rf'"{project["name"]}(\[[a-z,]+\])?=={re.escape(project["version"])}"', command), command


def test_the_deployment_page_includes_this_very_file():
    page = (ROOT / "docs" / "deployment.md").read_text()
    assert '--8<-- "docs/deployment/Dockerfile"' in page
