"""
Any key Airflow accepted is shown or refused by what is behind every page; any argument is read or refused.

Airflow stores any partition key up to 250 characters (core's ``IdentityMapper`` passes them all,
and asset events are never deleted), so a key a page cannot place must still be shown, once, and
a key a mapper cannot read refused with a ``ValueError`` naming it (400 on a route, exit 2 on the
command line), never an ``IllegalMonthError`` or ``OverflowError`` (500, a traceback). Keys are
generated in the shapes the view reads (days, hours, minutes, periods of a year, composite keys)
with impossible and boundary values (month 13, day 45, hour 24, the years 0000, 0001 and 9999,
offsets past a day), and as any text. The same for the commands' arguments: every command's
parser and request, and the state reader's range and key checks, given generated values. What a
real api-server answers for such keys: ``tests/integration/test_ui.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from airflow_partitions import (
    BusinessDay,
    Day,
    FiscalQuarter,
    Hour,
    IsoWeek,
    Minutes,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)
from airflow_partitions.tools import RollupView, explain, load_mapper
from airflow_partitions.tools.cli import main
from airflow_partitions.tools.errors import UsageError
from airflow_partitions.tools.state import (
    STATES,
    awaited_by_date,
    bucket_label,
    bucket_length,
    has_period_on,
    in_time_range,
    progress_of,
    time_part,
)
from airflow_partitions.tools.state.selection import (
    checked_key,
    checked_times,
    selected_range,
    selected_times,
)
from airflow_partitions.tools.ui import layout

#: Years a key may name: the calendar's ends (0001, 9999), the year no date has (0000), any other.
years = st.sampled_from([0, 1, 2, 3, 1970, 2026, 9997, 9998, 9999]) | st.integers(0, 9999)
#: Two digits, impossible values included (month 13, day 45, hour 24, minute 60).
two = st.sampled_from([0, 1, 9, 10, 12, 13, 23, 24, 28, 29, 30, 31, 45, 59, 60, 99]).map("{:02d}".format)
offsets = st.sampled_from(["", "Z", "+00:00", "+02:00", "-05:00", "+14:00", "-12:00", "+0530", "+99:00"])


@st.composite
def shaped_keys(draw: st.DrawFn) -> str:
    """A key in a shape the view reads: a day, hour, minute, period of a year, or a composite of one."""
    year = f"{draw(years):04d}"
    day = f"{year}-{draw(two)}-{draw(two)}"
    shape = draw(st.sampled_from(["day", "hour", "minute", "period", "year"]))
    if shape == "day":
        key = day
    elif shape == "hour":
        key = f"{day}T{draw(two)}{draw(offsets)}"
    elif shape == "minute":
        key = f"{day}T{draw(two)}:{draw(two)}{draw(offsets)}"
    else:
        label = draw(st.sampled_from(["", "FY", "R"]))
        part = draw(st.sampled_from(["", "Q", "W", "M", "H", "X"])) + draw(
            st.sampled_from(["1", "3", "9"]) | two
        )
        key = f"{label}{year}" + ("" if shape == "year" else f"-{part}")
    prefix = draw(st.sampled_from(["", "", "jfk|", "a|b|", "|", "\x1b[2J|"]))
    return prefix + key


#: Any key Airflow accepts: any text up to 250 characters (control characters and "|" included),
#: or one of the view's shapes with impossible or boundary values.
keys = shaped_keys() | st.text(max_size=250)
zones = st.sampled_from(
    ["UTC", "America/New_York", "Europe/Berlin", "Pacific/Kiritimati", "Pacific/Pago_Pago"]
)
GRAINS = [
    None,
    Day(timezone="America/New_York"),
    BusinessDay(),
    Month(),
    IsoWeek(),
    FiscalQuarter(start_month=7),
]
MAPPERS = [
    load_mapper("IdentityMapper()"),  # core's: any key is its own partition
    TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
    TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),
    ),
    TemporalRollupMapper(upstream_mapper=TemporalMapper(BusinessDay()), window=TemporalWindow(Hour())),
    TemporalRollupMapper(upstream_mapper=TemporalMapper(Hour()), window=TemporalWindow(Minutes(15))),
]
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def partition(key: str, state: str) -> dict:
    """A partition as ``ConsumerState.to_dict()`` holds it, with nothing counted."""
    return {"partition_key": key, "state": state, "progress": [], "ran_with": None}


def shown_keys(blocks: list[dict]) -> Counter[str]:
    """The keys the grid's *blocks* show, each as often as it shows; a group of minutes as its count."""
    cells = []
    for block in blocks:
        cells += block.get("cells", [])
        cells += [c for row in block.get("rows", []) for c in row["cells"]]
        cells += [c for week in block.get("weeks", []) for c in week if c]
    shown: Counter[str] = Counter(c["key"] for c in cells if c["key"] is not None)
    shown["<grouped>"] = sum(int(c["count"]) for c in cells if c.get("zoom"))
    return shown


@settings(max_examples=400)
@given(st.lists(keys, max_size=12, unique=True), st.lists(st.sampled_from(STATES), min_size=12, max_size=12))
@pytest.mark.parametrize("grain", GRAINS, ids=repr)
def test_every_key_is_shown_once_on_a_dags_grid(grain, page, states):
    blocks = layout.layout([partition(k, s) for k, s in zip(page, states, strict=False)], grain)
    shown = shown_keys(blocks)
    grouped = shown.pop("<grouped>")
    assert set(shown) <= set(page) and all(n == 1 for n in shown.values()), shown
    assert len(shown) + grouped == len(page)


@settings(max_examples=400)
@given(st.lists(keys, max_size=12, unique=True), zones, zones, st.sampled_from([None, *MAPPERS]))
def test_every_key_is_shown_once_on_an_assets_page(asset_keys, zone, input_zone, mapper):
    awaited = awaited_by_date(mapper) if mapper is not None else None
    laid = layout.coverage([{"partition_key": k, "events": 1} for k in asset_keys], zone, input_zone, awaited)
    placed = Counter(k for series in laid["series"] for day in series["days"] for k in day["keys"])
    assert placed + Counter(laid["other"]) == Counter(asset_keys)


@given(st.lists(keys, min_size=1, max_size=4), keys | st.none(), keys | st.none())
def test_a_keys_time_part_bucket_and_range_are_worked_out_for_any_key(some, start, end):
    first, last = min(some), max(some)
    length = bucket_length(first, last)
    for key in some:
        assert key.endswith(time_part(key))
        assert isinstance(bucket_label(time_part(key)[:length]), str)
        assert isinstance(in_time_range(key, start, end), bool)


@given(keys, st.sets(keys, max_size=5), st.sampled_from(MAPPERS), st.booleans())
def test_a_mapper_explains_or_refuses_any_key_and_counts_any_keys_received(key, received, mapper, downstream):
    try:
        explained = explain(mapper, key, downstream=downstream)
    except ValueError as err:  # --downstream under a mapper that is no rollup: 400, exit 2
        assert downstream and "is not a rollup" in str(err), err
    else:
        assert explained.key == key and (explained.ok or explained.refused or explained.never_counts)
    # A pending run's key is one the mapper wrote: what the keys received give it is worked out.
    try:
        written = mapper.to_downstream(key)
    except ValueError:
        return  # refused on arrival: no pending run (explain said why)
    for downstream_key in [written] if isinstance(written, str) else written:
        progress = progress_of("asset", RollupView.of(mapper), downstream_key, received)
        assert progress.received_total == len(received)


@given(keys, st.sampled_from(MAPPERS))
def test_whether_a_date_has_a_period_is_answered_for_any_key(day, mapper):
    for grain in GRAINS[1:]:
        assert has_period_on(grain, day) in (True, False)
    awaited = awaited_by_date(mapper)
    if awaited is not None:
        assert awaited(day) is None or isinstance(awaited(day), tuple)


#: Range bounds as the commands and the view take them: keys, calendar spellings, any text.
bounds = (
    st.none() | keys | st.sampled_from(["0001", "9999", "0001-01-01", "9999-12-31T23", "9999-12", "0000"])
)


@given(bounds, bounds, keys | st.none())
@pytest.mark.parametrize("grain", GRAINS, ids=repr)
def test_a_range_or_key_is_read_or_refused_naming_its_option(grain, start, end, key):
    try:
        first, last = selected_range("d", grain, start, end)
    except ValueError as err:
        assert str(err).startswith(("--start ", "--end ")), err
    else:
        assert (first is None) == (start is None) and (last is None) == (end is None)
    try:
        checked_key("d", grain, key)
    except ValueError as err:
        assert str(err).startswith("--key "), err


@given(bounds, bounds)
@example(None, "0001-01-01T00-0060")  # an offset that is none: a ValueError of strptime's, once
@pytest.mark.parametrize("grain", GRAINS, ids=repr)
def test_a_range_of_times_is_read_as_instants_or_refused_naming_its_option(grain, start, end):
    # requeue's --start/--end and clean's --before: any bound is a range of instants in order, or
    # a UsageError naming its option; what the request refuses without the Dag, so does the Dag.
    try:
        first, last = selected_times("d", grain, start, end)
    except UsageError as err:
        assert str(err).startswith(("--start ", "--end ")), err
    else:
        for bound, when in ((start, first), (end, last)):
            assert (when is None) == (bound is None) and (when is None or when.utcoffset() == timedelta(0))
        assert first is None or last is None or first <= last
    try:
        checked_times(start, end)
    except UsageError:
        with pytest.raises(UsageError):
            selected_times("d", grain, start, end)


class Reached(Exception):
    """The command built its request and asked the deployment: what a valid argument gets to."""


class Deployment:
    """A source every method of which stops the command once its request is built, checking its times."""

    def __getattr__(self, name: str):
        def asked(*args: object) -> None:
            for request in args:
                for value in vars(request).values() if dataclasses.is_dataclass(request) else ():
                    if isinstance(value, datetime):
                        value.astimezone(UTC)  # the tools' first step: an instant a datetime holds
            raise Reached(name, args)

        return asked


#: Dates and times as the commands take them: ISO 8601 with the calendar's ends, and any text.
dates = st.sampled_from(
    [
        "0001-01-01",
        "9999-12-31",
        "0001-01-01T00:00",
        "9999-12-31T23:59:59",
        "9999-12-31T23:59-12:00",  # past 9999 in UTC
        "0001-01-01T00:00+14:00",  # before 0001 in UTC
        "2026-03-10",
        "2026-13-45",
        "2021-W53",
        "yesterday",
        "",
    ]
) | st.text(max_size=30)
argvs = st.one_of(
    st.tuples(
        st.just("status"), st.just("d"), st.sampled_from(["--start", "--end", "--key"]), bounds.filter(bool)
    ),
    st.tuples(
        st.just("discard"), st.just("d"), st.sampled_from(["--start", "--end", "--key"]), bounds.filter(bool)
    ),
    st.tuples(st.just("requeue"), st.just("d"), st.just("--start"), dates, st.just("--end"), dates),
    st.tuples(
        st.just("backfill"),
        st.just("--missing"),
        st.just("d"),
        st.just("--start"),
        dates,
        st.just("--end"),
        dates,
    ),
    st.tuples(st.just("clean"), st.just("--before"), dates),
    st.tuples(
        st.just("explain"),
        st.just("--from-db"),
        st.just("--dag"),
        st.just("d"),
        keys.filter(lambda k: not k.startswith("-")),
    ),
)


@settings(max_examples=300)
@given(argvs)
def test_a_commands_arguments_are_its_request_or_a_usage_error_naming_them(argv):
    err = io.StringIO()
    with (
        mock.patch("airflow_partitions.tools.cli.source", lambda *_: Deployment()),
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        try:
            code = main([*argv, "--json"])
        except Reached:
            return
        except SystemExit as exited:  # argparse's own refusal
            code = exited.code
    assert code == 2, (argv, err.getvalue())
    assert "error:" in err.getvalue()


@pytest.mark.parametrize(
    ("option", "bound", "last", "named"),
    [
        ("--start", "0001-01-01", False, "--start '0001-01-01' is outside the years partitions are made in"),
        ("--start", "0002-12-31", False, "--start '0002-12-31' is outside the years"),
        ("--end", "9998-01-01", True, "--end '9998-01-01' is outside the years partitions are made in"),
        ("--end", "9999-12", True, "--end '9999-12' is outside the years"),
    ],
)
def test_a_range_walked_past_the_years_partitions_are_made_in_is_refused_naming_its_bound(
    option, bound, last, named
):
    # What backfill --state missing walks from (bound_instant), under a grain and without one.
    from airflow_partitions.tools.state.selection import bound_instant

    for grain in (Day(), None):
        if grain is None and len(bound) < 10:
            continue  # an ISO month is no time without a grain to read it by
        with pytest.raises(ValueError, match=re.escape(named)):
            bound_instant(grain, option, bound, last=last)
    assert bound_instant(Day(), "--start", "0003-01-01", last=False).year == 3


@pytest.mark.parametrize("grain", [*GRAINS[1:], Hour(timezone="Pacific/Kiritimati")], ids=repr)
def test_the_timetable_walks_a_backfill_range_at_either_end_of_those_years(grain):
    # What backfill --missing walks (missing_partitions): every period of the range, none past it.
    from airflow_partitions import GrainPartitionTimetable

    timetable = GrainPartitionTimetable(grain)
    for earliest, latest in (("0003-01-01", "0003-12-31"), ("9997-01-01", "9997-12-31T23:59:59.999999")):
        first, last = (datetime.fromisoformat(t).replace(tzinfo=UTC) for t in (earliest, latest))
        infos = list(timetable.iter_partition_dagrun_infos(earliest=first, latest=last))
        starts = [i.partition_date for i in infos]
        # Periods start at the bounds' wall-clock readings in the grain's zone: within 14 hours of UTC.
        assert starts and starts == sorted(set(starts)), starts
        assert first - timedelta(hours=14) <= starts[0] and starts[-1] <= last + timedelta(hours=14)
