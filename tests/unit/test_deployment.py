"""docs/deployment/Dockerfile, the deployment page's image: it parses and starts from a released Airflow."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import dockerfile
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
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


#: The pages a user installs from: the first ``bash`` block with ``pip install`` in each.
INSTALL_PAGES = [ROOT / "README.md", ROOT / "docs" / "deployment.md"]
CONSTRAINTS_URL = (
    "https://raw.githubusercontent.com/apache/airflow/constraints-${AIRFLOW_VERSION}/"
    "constraints-${PYTHON_VERSION}.txt"
)


def _install_block(page: Path) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", page.read_text(), re.DOTALL)
    [first, *_] = [block for block in blocks if "pip install" in block]
    return first.splitlines()


def _celery_pin() -> str:
    """The Celery requirement of the package's test extra, what this project tests with: ``<5.7``."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [celery] = [Requirement(r) for r in extras["test"] if r.startswith("celery")]
    [upper] = [spec for spec in celery.specifier if spec.operator == "<"]
    return f"celery{upper}"


def test_the_install_lines_take_airflows_constraints_file_first_and_the_celery_pin_the_tests_take():
    image = IMAGE.match(_instructions()[0].value[0])
    assert image is not None
    pin = _celery_pin()
    assert pin == "celery<5.7"
    for page in INSTALL_PAGES:
        lines = _install_block(page)
        assert f"AIRFLOW_VERSION={image['version']}" in lines, page.name  # the Dockerfile's Airflow
        assert f'CONSTRAINTS="{CONSTRAINTS_URL}"' in lines, page.name
        first, second, *_ = [line for line in lines if line.startswith("pip install")]
        assert first.startswith('pip install "apache-airflow[')  # Airflow first, with its constraints
        assert first.endswith('--constraint "${CONSTRAINTS}"'), first
        assert second.startswith(f'pip install "apache-airflow==${{AIRFLOW_VERSION}}" "{pin}" '), second
        text = " ".join(page.read_text().split())
        assert "cannot import name 'retry' from 'celery.backends.database'" in text, page.name


def test_the_celery_the_tests_run_has_what_airflows_celery_provider_imports():
    # The reason for the pin, on the installed versions: Celery 5.7.0 removed it.
    from celery.backends.database import retry  # noqa: F401  (what celery_executor_utils imports)

    assert Version(version("celery")) in SpecifierSet(_celery_pin().removeprefix("celery"))
    import airflow.providers.celery.executors as executors  # the provider's own import, read as text

    utils = Path(executors.__file__).with_name("celery_executor_utils.py").read_text()
    assert "from celery.backends.database import DatabaseBackend, Task as TaskDb, retry" in utils


def test_the_celery_recovery_settings_are_airflows_own_with_their_defaults():
    from airflow.configuration import conf
    from airflow.providers.celery.get_provider_info import get_provider_info

    section = (ROOT / "docs" / "deployment.md").read_text().split("## CeleryExecutor")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `\[(\w+)\] (\w+)`[^|]*\| ([^|]+) \| ([^|]+) \|", section, re.MULTILINE)
    named = {(group, option) for group, option, _, _ in rows}
    assert {("scheduler", "task_instance_heartbeat_timeout"), ("scheduler", "task_queued_timeout")} <= named
    for group, option, stated, _ in rows:
        default = conf.get_default_value(group, option)
        stated = stated.strip().removesuffix(" s").replace(",", "")
        if default is None:  # Redis's visibility timeout: the provider names Airflow's default in words
            options = get_provider_info()["config"][group]["options"]
            assert f"{stated} seconds" in options[option]["description"], (group, option)
        elif stated.replace(".", "").isdigit():
            assert float(stated) == float(default), (group, option, stated, default)
        else:
            assert stated == default, (group, option, stated, default)
    # What the page says to set is what tests/integration/test_celery.py runs with.
    celery_test = (ROOT / "tests" / "integration" / "test_celery.py").read_text()
    for group, option, _, advised in rows:
        variable = f"AIRFLOW__{group.upper()}__{option.upper()}"
        if variable in celery_test:
            value = re.search(rf'"{variable}": "(\d+)"', celery_test)
            low, high = (int(n) for n in re.findall(r"\d+", advised))
            assert value and low <= int(value[1]) <= high, (variable, advised)
