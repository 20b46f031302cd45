"""The time layer is pure: importing and using airflow_partitions.grains never imports Airflow."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import airflow_partitions.grains

IMPORT_EVERY_GRAINS_MODULE = """
import importlib, json, pkgutil, sys
import airflow_partitions.grains as grains
for module in pkgutil.iter_modules(grains.__path__):
    importlib.import_module(f"airflow_partitions.grains.{module.name}")
from airflow_partitions.grains import BusinessCalendar, BusinessDay, Cron, Day, FiscalQuarter, Grain
from airflow_partitions.grains import ExchangeCalendar, RetailWeek, TradingSession
assert "exchange_calendars" not in sys.modules, "imported with the grains, not when a calendar is built"
for grain in (Day(timezone="Europe/Berlin"), Cron("0 9-17 * * 1-5"), FiscalQuarter(start_month=7),
              RetailWeek(), BusinessDay(BusinessCalendar(country="US")),
              TradingSession(ExchangeCalendar("XNYS")),
              BusinessDay(ExchangeCalendar("XNYS"), timezone="America/New_York")):
    rebuilt = Grain.deserialize(json.loads(json.dumps(grain.serialize())))
    assert rebuilt == grain and rebuilt.floor_key("2026-11-27T12").key
print(json.dumps(sorted(name for name in sys.modules if name == "airflow" or name.startswith("airflow."))))
"""


def test_the_grains_package_has_every_grain_module():
    found = {module.name for module in pkgutil.iter_modules(airflow_partitions.grains.__path__)}
    expected = {"keys", "zones", "grain", "clock", "cron", "business", "fiscal", "retail"}
    assert expected | {"sessions"} <= found


def test_importing_and_using_every_grain_imports_no_airflow_module():
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERY_GRAINS_MODULE], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


#: Every grain kind this package ships, by its stored name (a new kind is added here and to the
#: golden files).
KINDS = [
    "business_day",
    "cron",
    "day",
    "fiscal_month",
    "fiscal_quarter",
    "fiscal_year",
    "hour",
    "iso_week",
    "minutes",
    "month",
    "quarter",
    "retail_month",
    "retail_quarter",
    "retail_week",
    "retail_year",
    "trading_session",
    "week",
    "year",
]


def test_every_grain_kind_is_registered_in_a_process_that_imported_only_the_grain_base():
    script = (
        "import json; from airflow_partitions.grains.grain import GRAIN_KINDS, Grain\n"
        "assert Grain.deserialize({'kind': 'fiscal_quarter', 'start_month': 7, 'timezone': 'UTC'})"
        ".floor_key('2026-08-01').key == 'FY2027-Q1'\n"
        "print(json.dumps(sorted(GRAIN_KINDS)))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == KINDS
