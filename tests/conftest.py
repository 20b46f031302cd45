"""
How pytest-xdist shares the suite between workers (``bash scripts/dev.sh test`` runs two).

Each backend's integration tests form one unit of work, so one worker starts Airflow on SQLite
and the other on PostgreSQL, and each runs its backend's tests in order on its one Airflow; the
other tests go by module (a module's tests in order, as ``test_docs.py``'s blocks of a page need).
xdist's own ``--dist loadgroup`` cannot do this under pytest 9.2: it renames ``item._nodeid``,
which pytest 9.2 no longer reads, so its groups are silently ignored.
"""

from __future__ import annotations

import re

import pytest

#: The ``airflow`` fixture's parameter in an integration test's id: ``test_x[postgresql]``.
_BACKEND = re.compile(r"^tests/integration/.*\[(?:.*-)?(?P<backend>sqlite|postgresql)(?:-.*)?\]$")


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByBackend(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            match = _BACKEND.match(nodeid)
            return f"airflow on {match['backend']}" if match else super()._split_scope(nodeid)

    return ByBackend(config, log)
