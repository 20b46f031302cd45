#!/usr/bin/env bash
# Set up and run airflow-partitions from a fresh clone. Needs Python 3.11+ (python3) and, for
# the PostgreSQL tests, the browser tests, the CeleryExecutor test and the alert rules' tests, Debian's
# postgresql, chromium, redis-server and prometheus packages (installed here when run as root).
#
#   bash scripts/dev.sh demo [--keep] [--port N]   the main job: the example pipeline on a real Airflow
#   bash scripts/dev.sh test [ARGS]     the whole test suite: ruff, mypy, the wheel and sdist, the
#                                       docs site, unit tests, and integration tests on SQLite and
#                                       PostgreSQL; then, on the oldest Airflow supported (3.3.1),
#                                       the unit tests (but the pure time layer's and the golden
#                                       database's) and five SQLite integration modules (ARGS go to
#                                       pytest, and run on the newest Airflow only)
#
# Everything is installed into a virtual environment, .venv (or $VENV), made on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

setup() {  # $1: the optional dependencies to install with the package; $2: pip constraints
  if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating $VENV and installing airflow-partitions[$1] (about a minute the first time) …"
    "${PYTHON:-python3}" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --editable ".[$1]" \
    ${2:+--constraint "$2"}
}

missing_packages() {  # the Debian packages the tests need that are not installed, by name
  command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || echo postgresql
  command -v chromium >/dev/null || echo chromium
  command -v redis-server >/dev/null || echo redis-server
  command -v promtool >/dev/null || echo prometheus  # the alert rules' tests (docs/monitoring/)
}

case "${1:-}" in
  demo)
    shift
    setup examples
    exec "$VENV/bin/python" scripts/demo.py "$@"
    ;;
  test)
    shift
    # Debian's packages (the PostgreSQL tests', the Partitions view's browser tests' and the Celery
    # test's Redis) install while the venv is made and the checks before pytest run, with one
    # apt-get update: on a fresh machine apt and pip each took a minute or more, one after the other.
    read -ra missing <<<"$(missing_packages | xargs)"
    packages_log=$(mktemp)
    if [ ${#missing[@]} -gt 0 ]; then
      if [ "$(id -u)" != 0 ]; then
        echo "The tests need Debian's packages: sudo apt-get install -y ${missing[*]}" >&2
        exit 1
      fi
      echo "Installing Debian's ${missing[*]} in the background …"
    fi
    { [ ${#missing[@]} -eq 0 ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq "${missing[@]}"; }; } >"$packages_log" 2>&1 &
    installing_packages=$!
    setup test
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    "$VENV/bin/mypy"  # pyproject's [tool.mypy]: strict on the pure time layer
    # The release artifacts: wheel and sdist build, pass twine's checks, and the wheel carries
    # the Partitions view's static files but only what users import: not the tests' launcher of
    # Airflow, PostgreSQL and Redis (tests/support/launcher.py, or put back as airflow_partitions.testing),
    # nor anything else of tests/.
    dist=$(mktemp -d)
    "$VENV/bin/python" -m build --quiet --outdir "$dist" .
    "$VENV/bin/twine" check --strict "$dist"/*
    wheel_files=$("$VENV/bin/python" -m zipfile -l "$dist"/*.whl)
    grep "airflow_partitions/tools/ui/static/partitions.js" <<<"$wheel_files" >/dev/null
    if grep -E "^tests/|/launcher\.py |^airflow_partitions/testing\.py " <<<"$wheel_files"; then
      echo "The wheel holds the tests' launcher (above): it belongs in tests/support/" >&2
      exit 1
    fi
    rm -rf "$dist"
    # The documentation site (mkdocs.yml): broken links and references fail the build. Not
    # --quiet: MkDocs then counts no warnings, and --strict could never fail; its INFO lines are
    # filtered out instead (pipefail keeps mkdocs' exit status).
    NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --site-dir "$(mktemp -d)" 2>&1 \
      | { grep -v '^INFO' || true; }
    "$VENV/bin/airflow-partitions" check example_dags
    wait "$installing_packages" || { cat "$packages_log" >&2; exit 1; }
    rm -f "$packages_log"
    # Three workers: the SQLite and the PostgreSQL integration sessions run side by side (each
    # backend's tests stay on one worker, tests/conftest.py), the Celery session (six minutes,
    # most of it waiting on Airflow's timeouts) and the unit tests on the third. On two cores the
    # third worker took the waiting off the integration sessions' workers.
    if [ $# -gt 0 ]; then
      exec "$VENV/bin/python" -m pytest -n "${PYTEST_WORKERS:-3}" "$@"
    fi
    # The oldest Airflow supported gets a virtual environment of its own, installed while the
    # newest's tests run (its log is shown if it fails).
    oldest=${VENV_OLDEST:-.venv-oldest}
    oldest_log=$(mktemp)
    (VENV=$oldest setup test scripts/oldest-airflow.txt) >"$oldest_log" 2>&1 &
    installing=$!
    trap 'kill "$installing" 2>/dev/null || true' EXIT  # a failed run does not leave pip running
    # --durations: the slowest tests are listed, to see where CI's time goes (we aim for 25 min).
    "$VENV/bin/python" -m pytest -n "${PYTEST_WORKERS:-3}" --durations=15
    echo "On the oldest Airflow supported ($(grep -m1 '^apache-airflow==' scripts/oldest-airflow.txt)) …"
    wait "$installing" || { cat "$oldest_log" >&2; exit 1; }
    rm -f "$oldest_log"
    # There: the unit tests but the pure time layer's (tests/unit/grains: it imports no Airflow,
    # test_pure.py), and on SQLite the integration modules where the scheduler's own code decides
    # (our classes end to end, keys sent again, no silent holds, status, restarts and upgrades),
    # by module on three SQLite Airflows, one a worker; all but status run on SQLite here only
    # (--every-backend: on the newest they run on PostgreSQL, their BACKENDS). The view, the members, the sessions, the
    # reliability and starvation scenarios and Celery run on the newest only: with them the whole
    # suite took 40 minutes, past CI's 30. So does the golden database's build (two minutes, the
    # longest unit test): its answers are the state reader's, which test_status.py checks here
    # against a real scheduler of this Airflow.
    exec "$oldest/bin/python" -m pytest -n "${PYTEST_WORKERS:-3}" --durations=15 --integration-by-module --every-backend \
      tests/unit --ignore=tests/unit/grains --ignore=tests/unit/tools/test_state_golden.py -k "not postgresql" \
      tests/integration/test_scheduler.py tests/integration/test_again.py \
      tests/integration/test_no_silent_holds.py tests/integration/test_status.py \
      tests/integration/test_upgrade.py
    ;;
  *)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
