"""
Every refusal docs/temporal.md documents, held against the code: the page says it, the code does it.

Each case pairs the words of the page that document a refusal (whitespace collapsed, so a phrase
may span the page's line breaks) with the configuration or key the page names, the exception the
page says and the words the message gives. A case whose phrase left the page, or whose call no
longer raises as the page says, fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import StartOfDayMapper
from airflow.partition_mappers.window import DayWindow

from airflow_partitions import (
    Cron,
    Day,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    OutsideCalendar,
    SlidingWindow,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
    Year,
)

PAGE = " ".join((Path(__file__).resolve().parents[2] / "docs" / "temporal.md").read_text().split())
NEW_YORK = "America/New_York"


def rollup(mapper: Any, window: Any, **options: Any) -> TemporalRollupMapper:
    return TemporalRollupMapper(upstream_mapper=mapper, window=window, **options)


def fan_out(mapper: Any, window: Any, **options: Any) -> TemporalFanOutMapper:
    return TemporalFanOutMapper(upstream_mapper=mapper, window=window, **options)


#: (the page's words, what they name, the exception the page says, words of its message)
REFUSALS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # -- input_format (TemporalMapper) ----------------------------------------------------------
    (
        "Only a format that cannot name each member is refused at Dag parse: `%Y-%m-%dT%H` for "
        "`Minutes(30)` members",
        lambda: rollup(
            TemporalMapper(Day(timezone=NEW_YORK), input_format="%Y-%m-%dT%H"),
            TemporalWindow(Minutes(30, timezone=NEW_YORK)),
        ),
        ValueError,
        "waits for 48 members, but its upstream mapper writes them as 24 distinct keys",
    ),
    # -- TemporalWindow in a TemporalRollupMapper ---------------------------------------------------
    (
        "`2026-03-10` where hours are awaited gives `partition key '2026-03-10' would never count "
        "towards '2026-03-10'",
        lambda: rollup(TemporalMapper(Day()), TemporalWindow(Hour())).to_downstream("2026-03-10"),
        ValueError,
        "partition key '2026-03-10' would never count towards '2026-03-10': it names a span that no one "
        "member of the window holds",
    ),
    (
        "so `TemporalRollupMapper` refuses it at Dag parse (`… would wait forever: … "
        "TemporalMapper(..., input_timezone='UTC')`)",
        lambda: rollup(TemporalMapper(Day(timezone=NEW_YORK)), TemporalWindow(Hour())),
        ValueError,
        r"would wait forever.*input_timezone='UTC'",
    ),
    (
        "a key that maps to a Saturday in the cron example would never count: it is refused on arrival",
        lambda: rollup(TemporalMapper(Day()), TemporalWindow(Cron("0 9-17 * * 1-5"))).to_downstream(
            "2026-03-14T09:00"
        ),
        ValueError,
        "would never count towards '2026-03-14'",
    ),
    # -- TemporalRollupMapper -------------------------------------------------------------------
    (
        "`TemporalWindow(IsoWeek())` under `TemporalMapper(Month())` is a `ValueError` when the Dag "
        "file is parsed",
        lambda: rollup(TemporalMapper(Month()), TemporalWindow(IsoWeek())),
        ValueError,
        "periods do not tile",
    ),
    (
        "Anything else is refused with a `ValueError` naming the types",
        lambda: rollup(StartOfDayMapper(), TemporalWindow(Hour())),
        ValueError,
        "upstream_mapper must be a TemporalMapper and window a TemporalWindow, SlidingWindow or "
        "BusinessDayWindow; got StartOfDayMapper and TemporalWindow",
    ),
    (
        "`TemporalMapper(Year())` over `TemporalWindow(Minutes(1))` (527,040 in 2028) is refused",
        lambda: rollup(TemporalMapper(Year()), TemporalWindow(Minutes(1))),
        ValueError,
        "the run for '2028' would wait for 527,040 upstream keys, more than the default of 50,000",
    ),
    (
        "A value that is not a positive integer is refused at Dag parse",
        lambda: rollup(TemporalMapper(Day()), TemporalWindow(Hour()), max_upstream_keys=0),
        ValueError,
        "max_upstream_keys must be a positive integer or None; got 0",
    ),
    # -- SlidingWindow --------------------------------------------------------------------------
    (
        "a key before it (`2026-02-21`) feeds none and is refused on arrival (`OutsideCalendar`",
        lambda: rollup(TemporalMapper(Day()), SlidingWindow(Day(), 7, start="2026-02-22")).to_downstream(
            "2026-02-21"
        ),
        OutsideCalendar,
        "partition key '2026-02-21' is before the SlidingWindow's start '2026-02-22'",
    ),
    (
        "`grain` must be the mapper's grain (`ValueError` at Dag parse otherwise)",
        lambda: rollup(TemporalMapper(Day()), SlidingWindow(Hour(), 3)),
        ValueError,
        "a SlidingWindow's grain must be the mapper's",
    ),
    (
        "refused at Dag parse: `SlidingWindow(Hour(), 2000)`",
        lambda: SlidingWindow(Hour(), 2000),
        ValueError,
        "periods must be a whole number from 1 to 1000 such as 7; got 2000",
    ),
    (
        "or one wider than the fan-out cap",
        lambda: rollup(TemporalMapper(Hour()), SlidingWindow(Hour(), 30), max_downstream_keys=24),
        ValueError,
        "every upstream key maps to 30 downstream keys, more than max_downstream_keys=24",
    ),
    (
        "a `SlidingWindow` whose `periods` is not a whole number from 1 to 1000",
        lambda: SlidingWindow(Day(), 0),
        ValueError,
        "periods must be a whole number from 1 to 1000 such as 7; got 0",
    ),
    (
        'whose `align` is not `"trailing"`, `"leading"` or `"centred"`',
        lambda: SlidingWindow(Day(), 7, align="middle"),
        ValueError,
        "align must be one of .*got 'middle'",
    ),
    (
        "or that is centred on an even number of periods",
        lambda: SlidingWindow(Day(), 4, align="centred"),
        ValueError,
        "a centred window needs an odd number of periods; got 4",
    ),
    # -- fan-out caps ---------------------------------------------------------------------------
    (
        "`Year()` to `Hour()` (8,784 in 2028) is refused naming period `2028`",
        lambda: fan_out(TemporalMapper(Year()), TemporalWindow(Hour())),
        ValueError,
        "period '2028' maps to 8784 downstream keys",
    ),
    (
        "`Month()` to `Day()` with `max_downstream_keys=30` naming `2027-12`",
        lambda: fan_out(TemporalMapper(Month()), TemporalWindow(Day()), max_downstream_keys=30),
        ValueError,
        "period '2027-12' maps to 31 downstream keys, more than max_downstream_keys=30",
    ),
    (
        "a New York day to `Hour()` with `max_downstream_keys=24` naming `2028-11-05`",
        lambda: fan_out(
            TemporalMapper(Day(timezone=NEW_YORK)),
            TemporalWindow(Hour(timezone=NEW_YORK)),
            max_downstream_keys=24,
        ),
        ValueError,
        "period '2028-11-05' maps to 25 downstream keys",
    ),
    # -- Errors: at Dag parse -------------------------------------------------------------------
    (
        "(`TemporalMapper(Day)`",
        lambda: TemporalMapper(Day),
        ValueError,
        "grain must be an airflow_partitions grain",
    ),
    ('`TemporalWindow("hour")`', lambda: TemporalWindow("hour"), ValueError, "grain must be"),
    (
        "`Minutes(n)` with `n` dividing neither 60 nor 1440",
        lambda: Minutes(7),
        ValueError,
        "dividing 60 or 1440 .*got 7",
    ),
    (
        "`Day(start_hour=24)`",
        lambda: Day(start_hour=24),
        ValueError,
        "start_hour must be an hour from 0 to 23; got 24",
    ),
    (
        '`Week(start="Sunday")` (lower case only)',
        lambda: Week(start="Sunday"),
        ValueError,
        "start must be one of monday.*got 'Sunday'",
    ),
    (
        'a `timezone` or `input_timezone` that is not an IANA name (`"+02:00"`',
        lambda: Day(timezone="+02:00"),
        ValueError,
        "timezone '\\+02:00' is not an IANA time zone name",
    ),
    (
        '`"Europe/Nowhere"`',
        lambda: TemporalMapper(Day(), input_timezone="Europe/Nowhere"),
        ValueError,
        "Europe/Nowhere",
    ),
    (
        "an invalid, six-field or impossible cron expression",
        lambda: Cron("not a cron"),
        ValueError,
        "is not a five-field",
    ),
    (
        "an invalid, six-field or impossible cron expression",
        lambda: Cron("0 0 9 * * 1"),
        ValueError,
        "is not a five-field",
    ),
    (
        "an invalid, six-field or impossible cron expression",
        lambda: Cron("0 0 30 2 *"),
        ValueError,
        "names no date that exists",
    ),
    (
        "an `offset` that is not an integer (`1.5`, `True`)",
        lambda: TemporalMapper(Day(), offset=1.5),
        ValueError,
        "offset must be a whole number of periods; got 1.5",
    ),
    (
        "an `offset` that is not an integer (`1.5`, `True`)",
        lambda: TemporalMapper(Day(), offset=True),
        ValueError,
        "offset must be a whole number of periods; got True",
    ),
    (
        "an `input_format` without a `%` directive",
        lambda: TemporalMapper(Day(), input_format="YYYYMMDD"),
        ValueError,
        "input_format must be a strptime format",
    ),
    (
        "`max_downstream_keys` below 1 (core's check)",
        lambda: TemporalMapper(Day(), max_downstream_keys=0),
        ValueError,
        "max_downstream_keys must be a positive integer or None, got 0",
    ),
    (
        "`DayWindow expects decoded values of type 'datetime', but TemporalMapper decodes to 'Period'.",
        lambda: RollupMapper(upstream_mapper=TemporalMapper(Day()), window=DayWindow()),
        TypeError,
        "DayWindow expects decoded values of type 'datetime', but TemporalMapper decodes to 'Period'",
    ),
    (
        "`TemporalWindow works in airflow_partitions' TemporalRollupMapper, not in Airflow's RollupMapper",
        lambda: RollupMapper(upstream_mapper=StartOfDayMapper(), window=TemporalWindow(Hour())),
        TypeError,
        "TemporalWindow works in airflow_partitions' TemporalRollupMapper, not in Airflow's RollupMapper",
    ),
    (
        "or `TemporalWindow` or `SlidingWindow` there",
        lambda: RollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7)),
        TypeError,
        "SlidingWindow works in airflow_partitions' TemporalRollupMapper",
    ),
    ("`Hour(n=30)`", lambda: Hour(n=30), TypeError, "unexpected keyword argument 'n'"),
    ("`IsoWeek(start=…)`", lambda: IsoWeek(start="sunday"), TypeError, "unexpected keyword argument 'start'"),
    (
        "in `TemporalRollupMapper`, a mapper or window that is not ours",
        lambda: rollup(TemporalMapper(Day()), DayWindow()),
        ValueError,
        "got TemporalMapper and DayWindow",
    ),
    (
        "in `TemporalFanOutMapper`, a largest fan-out above the cap, naming the widest period",
        lambda: fan_out(TemporalMapper(Day()), TemporalWindow(Minutes(1))),
        ValueError,
        "period '2027-12-01' maps to 1440 downstream keys, more than",
    ),
    # -- Errors: at mapping time ----------------------------------------------------------------
    (
        "a key that is not a string",
        lambda: TemporalMapper(Day()).to_downstream(20260310),
        ValueError,
        "partition key 20260310 is not a string",
    ),
    (
        "that no rule of [keys in](grains.md#keys-in-what-upstream-keys-are-read) reads",
        lambda: TemporalMapper(Day()).to_downstream("yesterday"),
        ValueError,
        "partition key 'yesterday' is not an ISO 8601 date or time",
    ),
    (
        "that names no real date or time (`2026-02-30`)",
        lambda: TemporalMapper(Day()).to_downstream("2026-02-30"),
        ValueError,
        "partition key '2026-02-30'",
    ),
    (
        "or that does not match `input_format`",
        lambda: TemporalMapper(Day(), input_format="%Y%m%d").to_downstream("2026-03-10"),
        ValueError,
        "partition key '2026-03-10' is not a key in the format '%Y%m%d'",
    ),
    (
        "in `TemporalRollupMapper`, a key that names no member of the window it maps to (naming the "
        "downstream key and the keys awaited)",
        lambda: rollup(TemporalMapper(Day()), TemporalWindow(Hour())).to_downstream("2026-03-10"),
        ValueError,
        r"towards '2026-03-10'.*it awaits 24 keys: '2026-03-10T00' … '2026-03-10T23'",
    ),
    # -- Errors: when the scheduler expands a window ---------------------------------------------
    (
        "a downstream key that is not canonical",
        lambda: rollup(TemporalMapper(Month()), TemporalWindow(Day())).to_upstream("2026-03-01"),
        ValueError,
        "partition key '2026-03-01' is not a canonical Month.* key; the period it falls in is written "
        "'2026-03'",
    ),
    (
        "a fan-out with such a window fails at mapping time as above",
        lambda: fan_out(TemporalMapper(Month()), TemporalWindow(IsoWeek())).to_downstream("2026-03-10"),
        ValueError,
        "periods do not tile Month",
    ),
]


@pytest.mark.parametrize(
    ("phrase", "call", "error", "message"),
    REFUSALS,
    ids=[f"{i}: {r[0][:50]}" for i, r in enumerate(REFUSALS)],
)
def test_each_documented_refusal_is_on_the_page_and_raised_by_the_code(phrase, call, error, message):
    assert " ".join(phrase.split()) in PAGE, "the page no longer documents this refusal"
    with pytest.raises(error) as raised:
        call()
    text = str(raised.value)
    assert message in text or re.search(message, text), text


def test_a_naive_local_hour_format_in_a_dst_zone_is_accepted_as_the_page_says():
    # The page: no refusal at Dag parse; the fall-back night's 01:00 counts for both hours.
    hours = TemporalMapper(Hour(timezone=NEW_YORK), input_format="%Y-%m-%dT%H")
    assert hours.to_downstream("2026-11-01T01") == "2026-11-01T01-04:00"
    assert hours.to_downstream("2026-03-08T02") == "2026-03-08T03-04:00"
    days = rollup(
        TemporalMapper(Day(timezone=NEW_YORK), input_format="%Y-%m-%dT%H"),
        TemporalWindow(Hour(timezone=NEW_YORK)),
    )
    assert len(days.to_upstream("2026-11-01")) == 24
    assert len(days.to_upstream("2026-03-08")) == 23
    assert days.missing_keys("2026-11-01", [f"2026-11-01T{h:02d}" for h in range(24)]) == []
    with_offsets = rollup(
        TemporalMapper(Day(timezone=NEW_YORK), input_format="%Y-%m-%dT%H%z"),
        TemporalWindow(Hour(timezone=NEW_YORK)),
    )
    assert len(with_offsets.to_upstream("2026-11-01")) == 25
    for claim in (
        "awaits 24 keys on 2026-11-01, the key `2026-11-01T01` counting for both 01:00 hours, and 23 on "
        "2026-03-08",
        "is read as 03:00 (`2026-03-08T03-04:00`)",
        "(25 on 2026-11-01)",
    ):
        assert claim in PAGE
