"""
Benchmark airflow_partitions' key-shape, composite and sliding classes against core Airflow's, in one run.

Part 1, per-key mapping (``to_downstream``, called for every asset event): the same keys through
our mapper and through core's ``IdentityMapper`` or ``ProductMapper``, µs per key and ours/core.
Core has no regex, lookup or projecting mapper: ``IdentityMapper`` is the floor (a mapper that
does nothing), and ``ProductMapper`` of identity mappers is core's cheapest way to read a
three-segment key. Where both sides write the same key for every input (checked before timing)
the comparison is like for like: ``RegexMapper`` rewriting ``us|east|2026-03-10T09:15:00`` into
itself against ``ProductMapper(IdentityMapper() x3)``, and ``CompositeKeyMapper`` with the time
mapped to its day against ``ProductMapper(IdentityMapper(), IdentityMapper(), StartOfDayMapper())``.

Part 2, rollup re-evaluation (``to_upstream`` for each of 500 pending downstream keys on every
scheduler tick): ``DimensionRollupMapper`` per region, hours into days; the categorical rollup
across eight regions per day; a 7-day trailing ``SlidingWindow`` in ``TemporalRollupMapper``;
each cold (memos emptied), on one object across ticks, and deserialized afresh every tick (as
Airflow 3.3.2's scheduler does), against the nearest core ``RollupMapper``. Part 3 adds the wait
policy's check (``is_satisfied_by_keys``) for ``CompletionDeadline`` against core's ``WaitForAll``.

Run: ``python benchmarks/bench_keyshape.py`` (``--repeats N``, ``--ticks N``, ``--keys N``).
Timing method as ``bench_temporal.py`` (whose helpers it uses): best of N, garbage collector off,
sides interleaved within every repeat, part 1 summed over the best time of each 5,000-key chunk
with every memo emptied before each chunk.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from importlib.metadata import version
from typing import Any

from airflow.partition_mappers.base import PartitionMapper, RollupMapper
from airflow.partition_mappers.fixed_key import FixedKeyMapper
from airflow.partition_mappers.identity import IdentityMapper
from airflow.partition_mappers.product import ProductMapper
from airflow.partition_mappers.temporal import StartOfDayMapper
from airflow.partition_mappers.wait_policy import WaitForAll
from airflow.partition_mappers.window import DayWindow, SegmentWindow, WeekWindow, Window
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from bench_temporal import chunked_best, clear_memos, table, timed

from airflow_partitions import (
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    Hour,
    LookupMapper,
    RegexMapper,
    SlidingWindow,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)

SEED = 20260311
N_KEYS = 50_000
PENDING = 500
TICKS = 20
REGIONS = ("apac", "emea", "eu", "latam", "mena", "na", "sa", "us")
ZONES = ("east", "north", "south", "west")
STORES = 1_000  # many-to-one lookup table: store-0001 ... store-1000 -> a region
STORES_PER_REGION = 25  # one-to-many lookup table: a region -> 25 stores
SPAN_START = datetime(2025, 1, 1)
SPAN_MINUTES = (datetime(2028, 1, 1) - SPAN_START) // timedelta(minutes=1)  # 2025 to 2027
PATH_PATTERN = r"exports/(?P<region>[a-z]+)/(?P<day>\d{8})\.csv"
SEGMENTS_PATTERN = r"(?P<region>[a-z]+)\|(?P<zone>[a-z]+)\|(?P<time>[0-9T:-]+)"


# ---------------------------------------------------------------------------------------------
# Keys


def make_keys(n: int, seed: int = SEED) -> dict[str, list[str]]:
    """Return the key sets of part 1, each of *n* keys from a fixed seed."""
    rng = random.Random(seed)

    def minute() -> datetime:
        return SPAN_START + timedelta(minutes=rng.randrange(SPAN_MINUTES))

    return {
        # exports/eu/20260310.csv
        "path": [f"exports/{rng.choice(REGIONS)}/{minute():%Y%m%d}.csv" for _ in range(n)],
        # us|east|2026-03-10T09:15:00 (time in core's default input_format, %Y-%m-%dT%H:%M:%S)
        "composite": [
            f"{rng.choice(REGIONS)}|{rng.choice(ZONES)}|{minute():%Y-%m-%dT%H:%M:%S}" for _ in range(n)
        ],
        # us\|west|2026-03-10T09:15:00: an escaped delimiter inside the first segment
        "escaped": [
            f"{rng.choice(REGIONS)}\\|{rng.choice(ZONES)}|{minute():%Y-%m-%dT%H:%M:%S}" for _ in range(n)
        ],
        "store": [f"store-{rng.randrange(1, STORES + 1):04d}" for _ in range(n)],
        "region": [rng.choice(REGIONS) for _ in range(n)],
        # 2026-03-10; a fifth as many: each routes to 7 sliding windows, about 0.3 ms a key
        "day": [f"{minute():%Y-%m-%d}" for _ in range(max(n // 5, 1))],
    }


def store_to_region() -> dict[str, str]:
    return {f"store-{i:04d}": REGIONS[i % len(REGIONS)] for i in range(1, STORES + 1)}


def region_to_stores() -> dict[str, list[str]]:
    return {
        region: [f"{region}-store-{i:02d}" for i in range(1, STORES_PER_REGION + 1)] for region in REGIONS
    }


def identity3() -> ProductMapper:
    return ProductMapper(IdentityMapper(), IdentityMapper(), IdentityMapper())


def day_mapper() -> dict[str, TemporalMapper]:
    return {"time": TemporalMapper(Day())}


# ---------------------------------------------------------------------------------------------
# Part 1: per-key mapping


@dataclass(frozen=True)
class Case:
    """One row of part 1: our mapper and core's on the same key set."""

    label: str
    ours: Callable[[], PartitionMapper]
    keys: str  # which key set of make_keys
    core_label: str
    core: Callable[[], PartitionMapper]
    same: bool = False  # both write the same key for every input (checked)


def core_product_day() -> ProductMapper:
    return ProductMapper(IdentityMapper(), IdentityMapper(), StartOfDayMapper())


def cases() -> list[Case]:
    ident, prod3 = "IdentityMapper()", "ProductMapper(IdentityMapper() x3)"
    prod_day = "ProductMapper(Identity, Identity, StartOfDayMapper())"
    three = ["region", "zone", "time"]

    def regex_segments() -> RegexMapper:
        return RegexMapper(SEGMENTS_PATTERN, "{region}|{zone}|{time}")

    return [
        Case("RegexMapper(path, '{region}|{day}')", lambda: RegexMapper(PATH_PATTERN, "{region}|{day}"),
             "path", ident, IdentityMapper),
        Case("RegexMapper(3 segments, '{region}|{zone}|{time}')", regex_segments, "composite", prod3,
             identity3, same=True),
        Case("RegexMapper(3 segments, same)", regex_segments, "composite", ident, IdentityMapper, same=True),
        Case(f"LookupMapper many-to-one ({STORES:,} stores -> region)",
             lambda: LookupMapper(store_to_region()), "store", ident, IdentityMapper),
        Case(f"LookupMapper one-to-many (region -> {STORES_PER_REGION} stores)",
             lambda: LookupMapper(region_to_stores()), "region", ident, IdentityMapper),
        Case("CompositeKeyMapper(region, zone, time), no mappers", lambda: CompositeKeyMapper(three),
             "composite", prod3, identity3, same=True),
        Case("CompositeKeyMapper(region, zone, time), time -> TemporalMapper(Day())",
             lambda: CompositeKeyMapper(three, day_mapper()), "composite", prod_day, core_product_day,
             same=True),
        Case("CompositeKeyMapper projection, output=['region']",
             lambda: CompositeKeyMapper(three, output=["region"]), "composite", prod3, identity3),
        Case("CompositeKeyMapper projection, output=['time', 'region'], time -> day",
             lambda: CompositeKeyMapper(three, day_mapper(), output=["time", "region"]), "composite",
             prod_day, core_product_day),
        Case("CompositeKeyMapper(region, time, escape='\\\\'), every key escaped",
             lambda: CompositeKeyMapper(["region", "time"], escape="\\"), "escaped", ident, IdentityMapper),
        Case("TemporalRollupMapper(SlidingWindow(Day(), 7)): 7 keys out", sliding_rollup, "day",
             "RollupMapper(StartOfDay, WeekWindow(BACKWARD)): 1 key", core_backward_week),
    ]  # fmt: skip


def check_per_key(keys: dict[str, list[str]]) -> None:
    """Exit unless every mapper maps every key of its set, and like-for-like pairs agree."""
    for case in cases():
        ours, core = case.ours(), case.core()
        for key in keys[case.keys]:
            mapped = ours.to_downstream(key)  # raises on a key it cannot map
            if case.same and mapped != core.to_downstream(key):
                sys.exit(f"sanity check failed: {case.label} and {case.core_label} differ on {key!r}")
    samples = {
        "path": RegexMapper(PATH_PATTERN, "{region}|{day}").to_downstream("exports/eu/20260310.csv"),
        "composite": CompositeKeyMapper(["region", "zone", "time"], day_mapper()).to_downstream(
            "us|east|2026-03-10T09:15:00"
        ),
        "escaped": CompositeKeyMapper(["region", "time"], escape="\\").to_downstream(
            "us\\|west|2026-03-10T09:15:00"
        ),
    }
    expected = {
        "path": "eu|20260310",
        "composite": "us|east|2026-03-10",
        "escaped": "us\\|west|2026-03-10T09:15:00",
    }
    if samples != expected:
        sys.exit(f"sanity check failed: {samples} != {expected}")
    fanned = LookupMapper(region_to_stores()).to_downstream("eu")
    week = TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7))
    if len(fanned) != STORES_PER_REGION or len(week.to_downstream("2026-03-05")) != 7:
        sys.exit("sanity check failed: fan-out sizes")
    print(
        "Sanity: every key maps; where marked '=', ours and core's write the same key for every input; "
        "'eu' fans out to 25 stores, a day to 7 sliding windows."
    )


def bench_per_key(keys: dict[str, list[str]], repeats: int) -> None:
    # Per key set: each of our mappers, and each core mapper once (rows may share one).
    runs: dict[str, dict[str, Callable[[str], object]]] = {}
    for index, case in enumerate(cases()):
        functions = runs.setdefault(case.keys, {"baseline": lambda key: None})
        functions[f"ours {index}"] = case.ours().to_downstream
        functions.setdefault(f"core {case.core_label}", case.core().to_downstream)
    us = {
        (key_set, name): value
        for key_set, functions in runs.items()
        for name, value in chunked_best(functions, keys[key_set], repeats).items()
    }
    rows = []
    for index, case in enumerate(cases()):
        ours_us, core_us = us[case.keys, f"ours {index}"], us[case.keys, f"core {case.core_label}"]
        rows.append(
            [case.label, case.keys, f"{ours_us:.2f}", ("= " if case.same else "") + case.core_label,
             f"{core_us:.2f}", f"{ours_us / core_us:.2f}x"]
        )  # fmt: skip
    baseline = max(value for (_, name), value in us.items() if name == "baseline")
    print(
        f"Part 1: per-key to_downstream, {len(keys['composite']):,} keys per set ({len(keys['day']):,} "
        f"day keys), best of {repeats} per 5,000-key chunk; ours/core above 1: ours costs more"
    )
    print(table(["ours", "keys", "µs/key", "core ('=': same output)", "µs/key", "ours/core"], rows))
    print(f"(loop and call overhead alone: at most {baseline:.2f} µs/key, included in every column)")
    print(
        "keys: path 'exports/eu/20260310.csv'; composite 'us|east|2026-03-10T09:15:00'; "
        "escaped 'us\\|west|2026-03-10T09:15:00'; store 'store-0042'; region 'eu'; day '2026-03-10'"
    )


# ---------------------------------------------------------------------------------------------
# Part 2: rollup re-evaluation


def pending_days(n: int, first: date = date(2026, 1, 1)) -> list[str]:
    return [(first + timedelta(days=i)).isoformat() for i in range(n)]


def per_region_rollup() -> DimensionRollupMapper:
    return DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], day_mapper()),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    )


def core_day_of_hours() -> RollupMapper:
    return RollupMapper(upstream_mapper=StartOfDayMapper(input_format="%Y-%m-%dT%H"), window=DayWindow())


def categorical_rollup() -> DimensionRollupMapper:
    return DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "day"], output=["day"]),
        window=DimensionWindow(region=list(REGIONS)),
    )


def core_categorical() -> RollupMapper:
    return RollupMapper(upstream_mapper=FixedKeyMapper("all_regions"), window=SegmentWindow(list(REGIONS)))


def sliding_rollup(policy: Any = None) -> TemporalRollupMapper:
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7), wait_policy=policy
    )


def core_backward_week() -> RollupMapper:
    return RollupMapper(
        upstream_mapper=StartOfDayMapper(input_format="%Y-%m-%d"),
        window=WeekWindow(direction=Window.Direction.BACKWARD),
    )


# (title, pending keys, {label: factory}; the last label is core's)
Group = tuple[str, list[str], dict[str, Callable[[], RollupMapper]]]


def groups(n: int) -> list[Group]:
    days = pending_days(n)
    regional = [f"{region}|{day}" for day in pending_days(n // 2) for region in ("eu", "us")][:n]
    return [
        (
            f"per-region day of 24 hours, {n} pending keys 'eu|2026-03-10' (eu and us, {n // 2} days)",
            regional,
            {
                "DimensionRollupMapper": per_region_rollup,
                "core: StartOfDayMapper + DayWindow, no region": core_day_of_hours,
            },
        ),
        (
            f"categorical, {len(REGIONS)} regions per day, {n} pending days '2026-03-10'",
            days,
            {
                "DimensionRollupMapper(region=[8 regions])": categorical_rollup,
                "core: FixedKeyMapper + SegmentWindow(8), one key for all days": core_categorical,
            },
        ),
        (
            f"sliding 7-day trailing window, {n} pending days '2026-03-10'",
            days,
            {
                "TemporalRollupMapper(SlidingWindow(Day(), 7))": sliding_rollup,
                "core: StartOfDayMapper + WeekWindow(BACKWARD) (never fires)": core_backward_week,
            },
        ),
    ]


def core_key(key: str) -> str:
    """Return the key core's comparable rollup is asked for: the day of a pending key of ours."""
    return key.split("|")[-1]


def check_rollups(n: int) -> None:
    """Exit unless our rollups expect the members core's comparable rollups do, for every key."""
    (_, regional, _), (_, days, _), _ = groups(n)
    ours, core = per_region_rollup(), core_day_of_hours()
    for key in regional:
        region, day = key.split("|")
        want = {f"{region}|{member}" for member in core.to_upstream(day)}
        if ours.to_upstream(key) != want or len(want) != 24:
            sys.exit(f"rollup sanity check failed: per-region members of {key!r}")
    categorical = categorical_rollup()
    for day in days:
        if categorical.to_upstream(day) != {f"{region}|{day}" for region in REGIONS}:
            sys.exit(f"rollup sanity check failed: categorical members of {day!r}")
    sliding, week = sliding_rollup(), core_backward_week()
    for day in days:
        if sliding.to_upstream(day) != week.to_upstream(day) or len(week.to_upstream(day)) != 7:
            sys.exit(f"rollup sanity check failed: sliding members of {day!r}")
    sample = sorted(sliding.to_upstream("2026-03-09"))
    first_hour = min(ours.to_upstream("eu|2026-03-10"))
    print(
        f"Sanity: per-region sets are core's 24 hours with the region ({first_hour!r} …); categorical "
        f"sets are the 8 regions of the day; the sliding window and core's backward WeekWindow expect "
        f"the same 7 days for all {len(days)} days ({sample[0]} … {sample[-1]} for 2026-03-09)."
    )


def bench_group(title: str, keys: list[str], builders: dict[str, Callable[[], RollupMapper]], ticks: int,
                repeats: int) -> None:  # fmt: skip
    core_label = list(builders)[-1]
    asked = {label: [core_key(k) for k in keys] if label == core_label else keys for label in builders}

    def tick(mapper: RollupMapper, label: str) -> Callable[[], None]:
        wanted = asked[label]
        return lambda: [mapper.to_upstream(key) for key in wanted]

    encoded = {label: encode_partition_mapper(build()) for label, build in builders.items()}
    first = {label: float("inf") for label in builders}
    steady, fresh = dict(first), dict(first)
    for _ in range(repeats):  # sides interleaved in every repeat
        for label, build in builders.items():
            clear_memos()  # tick 1 from an empty process, as after a scheduler restart
            mapper = build()
            times = [timed(tick(mapper, label)) for _ in range(ticks)]
            first[label] = min(first[label], times[0])
            steady[label] = min(steady[label], *times[1:])
            for _ in range(ticks - 1):  # memos warm, a new object every tick (the scheduler)
                fresh[label] = min(
                    fresh[label],
                    timed(lambda label=label: tick(decode_partition_mapper(encoded[label]), label)()),
                )
    rows = []
    for label in builders:
        mean = (first[label] + (ticks - 1) * fresh[label]) / ticks
        core_mean = (first[core_label] + (ticks - 1) * fresh[core_label]) / ticks
        rows.append(
            [label, f"{first[label] * 1e3:.2f}", f"{steady[label] * 1e3:.2f}", f"{fresh[label] * 1e3:.2f}",
             f"{first[label] / first[core_label]:.3g}x", f"{fresh[label] / fresh[core_label]:.3g}x",
             f"{mean / core_mean:.3g}x"]
        )  # fmt: skip
    print(f"  {title}")
    print(
        table(
            ["ms per tick", "tick 1 (cold)", "same object", "deserialized", "ours/core 1", "ours/core deser.",
             "ours/core avg"],
            rows,
        )
    )  # fmt: skip


def bench_rollups(n: int, ticks: int, repeats: int) -> None:
    check_rollups(n)
    print(
        f"Part 2: rollup re-evaluation, to_upstream for every pending key per tick, {ticks} ticks, best of "
        f"{repeats}; tick 1 with every memo emptied, later ticks on one object ('same object') or on a "
        f"mapper deserialized afresh every tick ('deserialized', the scheduler); avg: tick 1 + "
        f"{ticks - 1} deserialized ticks"
    )
    for title, keys, builders in groups(n):
        bench_group(title, keys, builders, ticks, repeats)


# ---------------------------------------------------------------------------------------------
# Part 3: the wait policy's check


def bench_policies(n: int, repeats: int) -> None:
    """Time one tick of to_upstream + is_satisfied_by_keys over n incomplete 7-day windows."""
    days = pending_days(n, first=date(2020, 1, 1))  # windows closed long ago: the deadline has passed
    # 6 of 7 keys are enough; settle=0: fire at once (the default waits 30 s without a new key)
    late = CompletionDeadline(timedelta(hours=2), min_fraction=0.8, settle=timedelta(0))
    builders = {
        "TemporalRollupMapper(SlidingWindow), CompletionDeadline": lambda: sliding_rollup(late),
        "TemporalRollupMapper(SlidingWindow), WaitForAll": lambda: sliding_rollup(WaitForAll()),
        "core: WeekWindow(BACKWARD), WaitForAll": core_backward_week,
    }
    mappers = {label: build() for label, build in builders.items()}
    arrived = {day: frozenset(sorted(mappers["core: WeekWindow(BACKWARD), WaitForAll"].to_upstream(day))[1:])
               for day in days}  # fmt: skip
    fired = {
        label: sum(
            m.wait_policy.is_satisfied_by_keys(matched=arrived[d], expected=m.to_upstream(d)).satisfied
            for d in days
        )
        for label, m in mappers.items()
    }
    if fired != {label: (n if "Deadline" in label else 0) for label in builders}:
        sys.exit(f"policy sanity check failed: {fired}")

    def tick(mapper: RollupMapper) -> Callable[[], None]:
        policy = mapper.wait_policy
        return lambda: [
            policy.is_satisfied_by_keys(matched=arrived[day], expected=mapper.to_upstream(day))
            for day in days
        ]

    best = {label: float("inf") for label in builders}
    for _ in range(repeats):
        for label, mapper in mappers.items():
            tick(mapper)()  # warm: the memo holds every window
            best[label] = min(best[label], timed(tick(mapper)))
    core = best["core: WeekWindow(BACKWARD), WaitForAll"]
    print(
        f"Part 3: one warm tick of to_upstream + wait_policy.is_satisfied_by_keys over {n} pending 7-day "
        f"windows with 6 of 7 keys each (closed long ago), best of {repeats}"
    )
    print(
        table(
            ["rollup, policy", "ms per tick", "fired", "ours/core"],
            [[label, f"{best[label] * 1e3:.2f}", str(fired[label]), f"{best[label] / core:.3g}x"]
             for label in builders],
        )
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="best of N (default 5)")
    parser.add_argument("--ticks", type=int, default=TICKS, help=f"scheduler ticks (default {TICKS})")
    parser.add_argument("--keys", type=int, default=N_KEYS, help=f"keys per set in part 1 (default {N_KEYS})")
    args = parser.parse_args()

    import airflow

    print(
        f"Python {sys.version.split()[0]}, Apache Airflow {airflow.__version__}, google-re2 "
        f"{version('google-re2')}, seed {SEED}\n"
    )
    keys = make_keys(args.keys)
    check_per_key(keys)
    bench_per_key(keys, args.repeats)
    print()
    bench_rollups(PENDING, args.ticks, args.repeats)
    print()
    bench_policies(PENDING, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
