#!/usr/bin/env bash
# Set up and run airflow-partitions from a fresh clone. Needs Python 3.11+ (python3) and, for
# the PostgreSQL tests and the browser tests, Debian's postgresql and chromium packages
# (installed here when run as root).
#
#   bash scripts/dev.sh demo [--keep]   the main job: the example pipeline on a real Airflow
#   bash scripts/dev.sh test [ARGS]     the whole test suite: ruff, unit tests, and integration
#                                       tests on SQLite and PostgreSQL (ARGS go to pytest)
#
# Everything is installed into a virtual environment, .venv (or $VENV), made on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

setup() {  # $1: the optional dependencies to install with the package
  if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating $VENV and installing airflow-partitions[$1] (about a minute the first time) …"
    "${PYTHON:-python3}" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --editable ".[$1]"
}

ensure_postgres() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; then
    return
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "The PostgreSQL tests need Debian's postgresql package: sudo apt-get install -y postgresql" >&2
    exit 1
  fi
  echo "Installing Debian's postgresql package …"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

ensure_chromium() {  # the Partitions view's browser tests drive Debian's chromium, headless
  if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
    return
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "The browser tests need Debian's chromium package: sudo apt-get install -y chromium" >&2
    exit 1
  fi
  echo "Installing Debian's chromium package …"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
}

case "${1:-}" in
  demo)
    shift
    setup examples
    exec "$VENV/bin/python" scripts/demo.py "$@"
    ;;
  test)
    shift
    setup test
    ensure_postgres
    ensure_chromium
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    "$VENV/bin/airflow-partitions" check example_dags
    exec "$VENV/bin/python" -m pytest "$@"
    ;;
  *)
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
