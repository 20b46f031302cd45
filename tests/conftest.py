"""
How pytest-xdist shares the suite between workers (``bash scripts/dev.sh test`` runs two).

Each backend's integration tests form one unit of work, so one worker starts Airflow on SQLite
and the other on PostgreSQL, and each runs its backend's tests in order on its one Airflow; the
other tests go by module (a module's tests in order, as ``test_docs.py``'s blocks of a page need).
With ``--integration-by-module`` the integration tests go by module too, and each worker starts
an Airflow of its own for the backend it runs: for a run on one backend (the oldest Airflow's
SQLite tests), two Airflows side by side instead of one worker running them all while the other
idles. xdist's own ``--dist loadgroup`` cannot do this under pytest 9.2: it renames
``item._nodeid``, which pytest 9.2 no longer reads, so its groups are silently ignored.

The longest units of work start first (:func:`pytest_collection_modifyitems`): a worker takes its
next unit when it has two tests left, in the order collected. xdist's own order (most tests
first) started the integration sessions after the big parametrized unit modules and left the
one-test Celery session (five minutes) for last, on one worker while the other idled.
"""

from __future__ import annotations

import re

import pytest

#: The ``airflow`` fixture's parameter in an integration test's id: ``test_x[postgresql]``.
_BACKEND = re.compile(r"^tests/integration/.*\[(?:.*-)?(?P<backend>sqlite|postgresql)(?:-.*)?\]$")


def pytest_addoption(parser):
    parser.addoption(
        "--integration-by-module",
        action="store_true",
        help="share the integration tests between workers by module, each worker with its own Airflow "
        "(for a run on one backend: -k 'not postgresql')",
    )
    parser.addoption(
        "--every-backend",
        action="store_true",
        help="run every integration module on both backends, also those whose BACKENDS names one "
        "(tests/integration/conftest.py)",
    )


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # the order of pytest_collection_modifyitems
    if config.getoption("integration_by_module"):
        return LoadScopeScheduling(config, log)

    class ByBackend(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            match = _BACKEND.match(nodeid)
            return f"airflow on {match['backend']}" if match else super()._split_scope(nodeid)

    return ByBackend(config, log)


#: Units of work known to be long, longest first (a few minutes each in CI): each backend's
#: integration session (or, by module, each integration module), the Celery session, the golden
#: database's build (tests/unit/tools/test_state_golden.py). The rest keep pytest's order.
_LONG_FIRST = (
    re.compile(r"^tests/integration/.*\[(?:.*-)?postgresql(?:-.*)?\]$"),
    re.compile(r"^tests/integration/"),
    re.compile(r"^tests/unit/tools/test_state_golden\.py::"),
)


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        return next(
            (i for i, pattern in enumerate(_LONG_FIRST) if pattern.match(item.nodeid)), len(_LONG_FIRST)
        )

    items.sort(key=rank)  # stable: within a rank, pytest's order
