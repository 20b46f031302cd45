"""
Benchmark airflow_partitions' business-day classes against core Airflow's month classes, in one run.

Part 1, per-key mapping: the same 100,000 daily keys (``2026-03-10``) through core's
``StartOfMonthMapper(input_format="%Y-%m-%d")`` and ``TemporalMapper(Month())`` (same output,
checked), and the business days among them through ``TemporalMapper(BusinessDay(US))`` and its
T-1 form (``offset=-1``); µs per key and core/ours. The calendar's years are computed before
timing (the first key of a year computes it once per process).

Part 1 also times ``TemporalRollupMapper(TemporalMapper(Month()), BusinessDayWindow(US)).to_downstream``
on the business-day keys: since "no silent holds" it also reads each key as the business day it
names and looks up its month's expected set (a weekend or holiday key is refused).

Part 2, rollup re-evaluation: 500 pending months, each re-evaluated on every scheduler tick
(``to_upstream(key)`` for all 500, as the scheduler does): core's ``RollupMapper(StartOfMonthMapper,
MonthWindow())`` (every day of the month) against ``TemporalRollupMapper(TemporalMapper(Month()),
window)`` with ``BusinessDayWindow()``, ``BusinessDayWindow(US)`` and ``TemporalWindow(BusinessDay(US))``
(Airflow's ``RollupMapper`` refuses our windows at construction since "no silent holds"): tick 1
with every memo emptied (the holidays library computes each year), then ticks on mappers
deserialized afresh every tick, as Airflow 3.3.2's scheduler does.

Targets (issue 13): the T-1 mapper and the first tick of each rollup no slower than core's.

``US`` is ``BusinessCalendar(country="US")``. Run: ``python benchmarks/bench_business.py``
(``--repeats N``, ``--ticks N``). Timing method as ``bench_temporal.py`` (whose helpers it uses):
best of N, garbage collector off, sides interleaved within every repeat.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from datetime import date, timedelta

from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import StartOfMonthMapper
from airflow.partition_mappers.window import MonthWindow
from airflow.serialization.decoders import decode_partition_mapper
from airflow.serialization.encoders import encode_partition_mapper
from bench_temporal import TARGET_FIRST_TICK, chunked_best, clear_memos, table, timed, verdict

import airflow_partitions.business
from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    BusinessDayWindow,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)

SEED = 20261126
N_KEYS = 100_000
PENDING = 500
TICKS = 20
US = BusinessCalendar(country="US")
SPAN_START, SPAN_DAYS = date(2025, 1, 1), (date(2028, 1, 1) - date(2025, 1, 1)).days


def make_keys(n: int = N_KEYS, seed: int = SEED) -> list[str]:
    """Return *n* daily keys spread uniformly over 2025-2027 (fixed seed)."""
    rng = random.Random(seed)
    return [(SPAN_START + timedelta(days=rng.randrange(SPAN_DAYS))).isoformat() for _ in range(n)]


def pending_months(n: int = PENDING) -> list[str]:
    """Return *n* consecutive month keys from 2000-01 (pending rollups)."""
    return [f"{2000 + i // 12:04d}-{i % 12 + 1:02d}" for i in range(n)]


def clear_all_memos() -> None:
    """Empty the temporal memos and the business calendars' year cache."""
    clear_memos()
    airflow_partitions.business._business_ordinals.cache_clear()


def business_rollup(window: object) -> Callable[[], RollupMapper]:
    return lambda: TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=window)


def rollups() -> dict[str, Callable[[], RollupMapper]]:
    return {
        "core MonthWindow()": lambda: RollupMapper(
            upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=MonthWindow()
        ),
        "TemporalRollupMapper(BusinessDayWindow())": business_rollup(BusinessDayWindow()),
        "TemporalRollupMapper(BusinessDayWindow(US))": business_rollup(BusinessDayWindow(US)),
        "TemporalRollupMapper(TemporalWindow(BusinessDay(US)))": business_rollup(
            TemporalWindow(BusinessDay(US))
        ),
    }


#: Issue 13: the T-1 business-day mapper no slower per key than core's StartOfMonthMapper.
TARGET_T_MINUS_1 = 1.0


def bench_per_key(keys: list[str], repeats: int) -> float:
    core, month = StartOfMonthMapper(input_format="%Y-%m-%d"), TemporalMapper(Month())
    differ = [key for key in keys if core.to_downstream(key) != month.to_downstream(key)]
    if differ:
        sys.exit(f"per-key sanity check failed: {len(differ)} keys differ, e.g. {differ[0]!r}")
    business = [key for key in keys if US.is_business_day(date.fromisoformat(key))]  # computes the years
    today, t_minus_1 = TemporalMapper(BusinessDay(US)), TemporalMapper(BusinessDay(US), offset=-1)
    if any(today.to_downstream(key) != key for key in business):
        sys.exit("per-key sanity check failed: a business day does not map to itself")
    rollup = business_rollup(BusinessDayWindow(US))()
    if any(rollup.to_downstream(key) != month.to_downstream(key) for key in business):
        sys.exit("per-key sanity check failed: the business-day rollup and TemporalMapper(Month()) differ")

    us = chunked_best({"core": core.to_downstream, "month": month.to_downstream}, keys, repeats)
    us_business = chunked_best(
        {
            "core": core.to_downstream,
            "day": today.to_downstream,
            "t-1": t_minus_1.to_downstream,
            "month": month.to_downstream,
            "rollup": rollup.to_downstream,
        },
        business,
        repeats,
    )
    rows = [
        ["StartOfMonthMapper (core), all keys", f"{us['core']:.2f}", "1.00x"],
        ["TemporalMapper(Month()), all keys", f"{us['month']:.2f}", f"{us['core'] / us['month']:.2f}x"],
        ["StartOfMonthMapper (core), business-day keys", f"{us_business['core']:.2f}", "1.00x"],
        [
            "TemporalMapper(BusinessDay(US))",
            f"{us_business['day']:.2f}",
            f"{us_business['core'] / us_business['day']:.2f}x",
        ],
        [
            "TemporalMapper(BusinessDay(US), offset=-1)",
            f"{us_business['t-1']:.2f}",
            f"{us_business['core'] / us_business['t-1']:.2f}x",
        ],
        [
            "TemporalMapper(Month()), business-day keys",
            f"{us_business['month']:.2f}",
            f"{us_business['core'] / us_business['month']:.2f}x",
        ],
        [
            "TemporalRollupMapper(TemporalMapper(Month()), BusinessDayWindow(US))",
            f"{us_business['rollup']:.2f}",
            f"{us_business['core'] / us_business['rollup']:.2f}x",
        ],
    ]
    print(
        f"Part 1: per-key to_downstream, {len(keys):,} daily keys over 2025-2027, of which "
        f"{len(business):,} US business days ({len(set(business)):,} distinct); best of "
        f"{repeats}, memos emptied before each 5,000-key chunk"
    )
    print(table(["mapping", "µs/key", "core/this"], rows))
    return us_business["core"] / us_business["t-1"]


def bench_rollups(months: list[str], ticks: int, repeats: int) -> dict[str, float]:
    builders = rollups()
    expected = {name: build().to_upstream("2026-11") for name, build in builders.items()}
    sizes = {name: len(keys) for name, keys in expected.items()}
    if sizes != {
        "core MonthWindow()": 30,
        "TemporalRollupMapper(BusinessDayWindow())": 21,
        "TemporalRollupMapper(BusinessDayWindow(US))": 19,
        "TemporalRollupMapper(TemporalWindow(BusinessDay(US)))": 19,
    }:
        sys.exit(f"rollup sanity check failed: members of 2026-11 {sizes}")
    window = builders["TemporalRollupMapper(BusinessDayWindow(US))"]()
    grain = builders["TemporalRollupMapper(TemporalWindow(BusinessDay(US)))"]()
    core = builders["core MonthWindow()"]()
    for month in months:
        ours = window.to_upstream(month)
        if ours != grain.to_upstream(month) or not ours <= core.to_upstream(month):
            sys.exit(f"rollup sanity check failed: the US business-day rollups disagree on {month}")
    print(
        f"Sanity: November 2026 has {sizes['core MonthWindow()']} days, 21 weekdays, 19 US business days; "
        f"both US business-day rollups agree on all {len(months)} months, and their members are days core "
        "awaits."
    )

    def tick(mapper: RollupMapper) -> Callable[[], None]:
        return lambda: [mapper.to_upstream(month) for month in months]

    encoded = {name: encode_partition_mapper(build()) for name, build in builders.items()}
    first = {name: float("inf") for name in builders}
    fresh = dict(first)
    for _ in range(repeats):
        for name, build in builders.items():
            clear_all_memos()  # tick 1 as after a scheduler restart: the holidays library runs
            first[name] = min(first[name], timed(tick(build())))
            for _ in range(ticks - 1):
                fresh[name] = min(
                    fresh[name], timed(lambda name=name: tick(decode_partition_mapper(encoded[name]))())
                )
    core = "core MonthWindow()"
    rows = [
        [
            name,
            f"{first[name] * 1e3:.2f}",
            f"{fresh[name] * 1e3:.2f}",
            f"{first[core] / first[name]:.2f}x",
            f"{fresh[core] / fresh[name]:.2f}x",
        ]
        for name in builders
    ]
    print(
        f"Part 2: rollup re-evaluation, {len(months)} pending months ({months[0]} … {months[-1]}), "
        f"to_upstream for all {len(months)} per tick, {ticks} ticks, best of {repeats}"
    )
    print(
        table(
            ["rollup (upstream: StartOfMonthMapper or TemporalMapper(Month()))", "tick 1 ms",
             "later ticks ms", "core/this tick 1", "core/this later"],
            rows,
        )
    )  # fmt: skip
    return {name: first[core] / first[name] for name in builders if name != core}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="best of N (default 5)")
    parser.add_argument("--ticks", type=int, default=TICKS, help=f"scheduler ticks (default {TICKS})")
    args = parser.parse_args()

    import airflow
    import holidays

    print(
        f"Python {sys.version.split()[0]}, Apache Airflow {airflow.__version__}, "
        f"holidays {holidays.__version__}, seed {SEED}\n"
    )
    t_minus_1 = bench_per_key(make_keys(), args.repeats)
    print()
    first_tick = bench_rollups(pending_months(), args.ticks, args.repeats)
    print()
    print("Targets (issue 13), core/this:")
    print(f"  T-1 per key: {verdict(t_minus_1, TARGET_T_MINUS_1)}")
    for name, ratio in first_tick.items():
        print(f"  tick 1, {name}: {verdict(ratio, TARGET_FIRST_TICK)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
