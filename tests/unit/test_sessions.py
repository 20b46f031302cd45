"""
Trading sessions in the Airflow classes: mappers, rollups of bars, windows, fan-outs, timetables, tools.

Session hours are the exchanges' published ones (see tests/unit/grains/test_sessions.py for the
sources): New York 09:30 to 16:00 (13:00 on 2026-11-27, the day after Thanksgiving, 2026-11-26,
when it is closed), Hong Kong 09:30 to 12:00 and 13:00 to 16:00. Bars are worked out here from
those hours with zoneinfo, not with the package.
"""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from airflow.partition_mappers.base import RollupMapper
from airflow.partition_mappers.temporal import StartOfMonthMapper
from airflow.serialization.decoders import decode_partition_mapper, decode_timetable
from airflow.serialization.encoders import encode_partition_mapper, encode_timetable
from airflow.timetables.base import DagRunInfo, TimeRestriction
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions import (
    BusinessDay,
    BusinessDayWindow,
    CompositeKeyMapper,
    DimensionRollupMapper,
    DimensionWindow,
    ExchangeCalendar,
    GrainPartitionTimetable,
    Minutes,
    Month,
    OutsideCalendar,
    SlidingWindow,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    TradingSession,
    Week,
)
from airflow_partitions.tools import check, explain, load_mapper

NEW_YORK, HONG_KONG = ZoneInfo("America/New_York"), ZoneInfo("Asia/Hong_Kong")
NYSE = ExchangeCalendar("XNYS")
SESSIONS = TradingSession(NYSE)
BARS = "TemporalRollupMapper(upstream_mapper=TemporalMapper(TradingSession(ExchangeCalendar('XNYS'))), window=TemporalWindow(Minutes(30, timezone='America/New_York')))"  # noqa: E501


def bars(day: str, close: str, tz: ZoneInfo = NEW_YORK, opening: str = "09:30") -> list[str]:
    """The 30-minute bar keys from *opening* to *close* local time on *day*, spelled as Minutes(30, tz)."""
    start = datetime.fromisoformat(f"{day}T{opening}").replace(tzinfo=tz)
    end = datetime.fromisoformat(f"{day}T{close}").replace(tzinfo=tz)
    keys = []
    while start < end:
        offset = start.strftime("%z")
        keys.append(f"{start:%Y-%m-%dT%H:%M}{offset[:3]}:{offset[3:]}")
        start += timedelta(minutes=30)
    return keys


@pytest.fixture(scope="module")
def rollup() -> TemporalRollupMapper:
    return load_mapper(BARS)


# == Rolling bars up into sessions ================================================================


def test_a_full_new_york_session_awaits_13_bars_and_the_early_close_7(rollup):
    assert list(rollup.to_upstream("2026-11-25").in_order) == bars("2026-11-25", "16:00")
    assert len(rollup.to_upstream("2026-11-25")) == 13
    assert list(rollup.to_upstream("2026-11-27").in_order) == bars("2026-11-27", "13:00")
    assert len(rollup.to_upstream("2026-11-27")) == 7
    # The session closes at its close (13:00 EST is 18:00Z).
    assert rollup.to_upstream("2026-11-27").closes_at == datetime(2026, 11, 27, 18, tzinfo=UTC)


def test_each_bar_goes_to_its_session_whatever_its_spelling(rollup):
    assert rollup.to_downstream("2026-11-27T12:30-05:00") == "2026-11-27"
    assert rollup.to_downstream("2026-11-27T17:30Z") == "2026-11-27"  # 12:30 EST
    assert rollup.to_downstream("2026-11-27T12:30") == "2026-11-27"  # naive: New York time
    assert rollup.counts_as("2026-11-27T17:30:00+00:00") == ("2026-11-27T12:30-05:00",)
    received = [*bars("2026-11-27", "12:30"), "2026-11-27T17:30Z"]
    assert rollup.missing_keys("2026-11-27", received) == []
    assert rollup.missing_keys("2026-11-27", received[1:]) == ["2026-11-27T09:30-05:00"]


def test_bars_outside_the_session_are_refused_on_arrival_naming_the_key_and_the_sessions(rollup):
    with pytest.raises(ValueError) as after_close:
        rollup.to_downstream("2026-11-27T13:00-05:00")  # the early close
    assert str(after_close.value).startswith("partition key '2026-11-27T13:00-05:00': ")
    assert "outside the trading sessions of XNYS" in str(after_close.value)
    assert "2026-11-27, closed at 13:00" in str(after_close.value)
    with pytest.raises(ValueError, match=r"partition key '2026-11-26T10:00-05:00': .* closed at 16:00"):
        rollup.to_downstream("2026-11-26T10:00-05:00")  # Thanksgiving
    with pytest.raises(ValueError, match="is not a session date of XNYS"):
        rollup.to_downstream("2026-11-26")
    with pytest.raises(ValueError, match="would never count towards '2026-11-27'"):
        rollup.to_downstream("2026-11-27")  # a date names the session, not a bar of it


def test_refused_bars_are_outside_calendar_errors_as_the_view_and_status_list_them(rollup):
    for bar in ("2026-11-26T10:00-05:00", "2026-11-27T13:00-05:00"):  # Thanksgiving, after the early close
        with pytest.raises(OutsideCalendar):
            rollup.to_downstream(bar)
    with pytest.raises(OutsideCalendar):
        TemporalMapper(SESSIONS).to_downstream("2026-11-26")
    with pytest.raises(ValueError) as unreadable:
        rollup.to_downstream("2026-11-27T25:00")
    assert not isinstance(unreadable.value, OutsideCalendar)


def test_a_lunch_break_has_no_bars_and_a_bar_in_it_is_refused():
    hk = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(TradingSession(ExchangeCalendar("XHKG"))),
        window=TemporalWindow(Minutes(30, timezone="Asia/Hong_Kong")),
    )
    awaited = list(hk.to_upstream("2026-11-27").in_order)
    assert awaited == bars("2026-11-27", "12:00", HONG_KONG) + bars("2026-11-27", "16:00", HONG_KONG, "13:00")
    assert len(awaited) == 11
    with pytest.raises(ValueError, match="would never count towards '2026-11-27'"):
        hk.to_downstream("2026-11-27T12:00+08:00")
    assert hk.to_downstream("2026-11-27T13:00+08:00") == "2026-11-27"


# -- Early closes off the bar grid: a short last bar ----------------------------------------------

SYDNEY = ZoneInfo("Australia/Sydney")
#: The exchanges of these tests, and ASX, which closes at 14:10 on its early closes.
EXCHANGES = ["XNYS", "XLON", "XHKG", "XTKS", "XASX"]


def schedule_bars(exchange: str, label: str) -> list[tuple[datetime, datetime]]:
    """
    The 30-minute bars of a session as ``exchange_calendars`` schedules it: from the open (and the
    end of a lunch break) every 30 minutes, the last one cut at the close (or the break's start).
    """
    import exchange_calendars
    import pandas as pd

    row = exchange_calendars.get_calendar(exchange).schedule.loc[label]
    spans = [(row["open"], row["close"])]
    if not pd.isna(row["break_start"]):
        spans = [(row["open"], row["break_start"]), (row["break_end"], row["close"])]
    found = []
    for first, last in spans:
        start, end = first.to_pydatetime(), last.to_pydatetime()
        while start < end:
            found.append((start, min(start + timedelta(minutes=30), end)))
            start += timedelta(minutes=30)
    return found


def early_closes(exchange: str) -> list[str]:
    import exchange_calendars

    closes = exchange_calendars.get_calendar(exchange).early_closes
    return [f"{day:%Y-%m-%d}" for day in closes if 2020 <= day.year <= 2027]


def bar_rollup(exchange: str) -> TemporalRollupMapper:
    calendar = ExchangeCalendar(exchange)
    return TemporalRollupMapper(
        upstream_mapper=TemporalMapper(TradingSession(calendar)),
        window=TemporalWindow(Minutes(30, timezone=calendar.timezone)),
    )


def test_asx_closes_at_14_10_on_christmas_eve_so_its_last_bar_is_14_00_to_14_10():
    # ASX trading hours: the market closes early, at 2:10 pm, on the last trading days before
    # Christmas and New Year (https://www.asx.com.au/markets/market-resources/trading-hours-calendar).
    asx = bar_rollup("XASX")
    awaited = list(asx.to_upstream("2026-12-24").in_order)
    assert awaited == bars("2026-12-24", "14:10", SYDNEY, "10:00")
    assert awaited[-1] == "2026-12-24T14:00+11:00" and len(awaited) == 9
    last = asx.window.to_upstream(asx.upstream_mapper.decode_downstream("2026-12-24"))[-1]
    assert (last.start, last.end) == (
        datetime(2026, 12, 24, 14, tzinfo=SYDNEY),
        datetime(2026, 12, 24, 14, 10, tzinfo=SYDNEY),
    )
    assert asx.to_downstream("2026-12-24T14:00+11:00") == "2026-12-24"
    assert asx.to_downstream("2026-12-24T03:00Z") == "2026-12-24"  # the same bar in UTC
    assert asx.missing_keys("2026-12-24", awaited[:-1]) == ["2026-12-24T14:00+11:00"]
    assert asx.missing_keys("2026-12-24", [*awaited[:-1], "2026-12-24T03:00Z"]) == []
    # a full session still awaits its 12 bars, 10:00 to 16:00
    assert list(asx.to_upstream("2026-12-23").in_order) == bars("2026-12-23", "16:00", SYDNEY, "10:00")


def test_a_window_that_cannot_be_listed_is_refused_with_its_own_reason_not_the_years(monkeypatch):
    # Bars not cut at the close (as before 0.2): the window's reason is given, not "year 1 or 9999".
    from airflow_partitions.rollup import _expected
    from airflow_partitions.temporal import _members

    monkeypatch.setattr(TradingSession, "cuts_last_member", False)
    _expected.cache_clear()  # an equal rollup's windows, listed by the tests above, are memoized
    _members.cache_clear()
    asx = bar_rollup("XASX")
    with pytest.raises(ValueError) as refused:
        asx.to_downstream("2026-12-24T10:00+11:00")
    message = str(refused.value)
    assert message.startswith("partition key '2026-12-24T10:00+11:00' maps to '2026-12-24': ")
    assert "periods do not tile TradingSession(ExchangeCalendar('XASX')) period '2026-12-24'" in message
    assert "9999" not in message and "0003" not in message


@pytest.mark.parametrize(
    ("exchange", "session"), [(e, s) for e in EXCHANGES for s in early_closes(e)], ids=lambda v: v
)
def test_every_early_close_awaits_its_bars_as_exchange_calendars_schedules_them(exchange, session):
    rollup = bar_rollup(exchange)
    expected = schedule_bars(exchange, session)
    decoded = rollup.upstream_mapper.decode_downstream(session)
    members = rollup.window.to_upstream(decoded)
    assert [(m.utc[0], m.utc[1]) for m in members] == expected
    assert len(rollup.to_upstream(session)) == len(expected)
    utc_keys = [f"{start:%Y-%m-%dT%H:%M}Z" for start, _ in expected]
    assert all(rollup.to_downstream(key) == session for key in utc_keys)
    assert rollup.missing_keys(session, utc_keys) == []
    close = expected[-1][1].astimezone(ZoneInfo(ExchangeCalendar(exchange).timezone))
    for after in (close, close + timedelta(minutes=20)):
        with pytest.raises(OutsideCalendar, match=f"{session}, closed at {close:%H:%M}"):
            rollup.to_downstream(after.isoformat())


@given(
    st.sampled_from(EXCHANGES),
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2027, 11, 30), timezones=st.just(UTC)),
)
def test_the_bars_of_any_session_tile_its_trading_hours_the_last_cut_at_the_close(exchange, instant):
    rollup = bar_rollup(exchange)
    session = rollup.upstream_mapper.grain.period_at_or_after(instant)
    members = rollup.window.to_upstream(session)
    spans = session.grain.spans(session)
    assert members[0].utc[0] == spans[0][0] and members[-1].utc[1] == spans[-1][1] == session.utc[1]
    for bar, after in pairwise(members):
        assert bar.duration == timedelta(minutes=30)
        assert bar.utc[1] == after.utc[0] or (bar.utc[1], after.utc[0]) in [(spans[0][1], spans[-1][0])]
    assert timedelta(0) < members[-1].duration <= timedelta(minutes=30)
    assert len(rollup.to_upstream(session.key)) == len(members)


def test_utc_bar_keys_need_the_mapper_to_read_naive_keys_in_utc():
    # Minutes(30) writes UTC keys without an offset; a session mapper reads naive keys in New York
    # time, so 2026-01-14T19:30 (14:30 EST) would be read as 19:30 EST, after the close: refused at parse.
    literal = "TemporalRollupMapper(upstream_mapper=TemporalMapper(TradingSession(ExchangeCalendar('XNYS'))), window=TemporalWindow(Minutes(30)))"  # noqa: E501
    with pytest.raises(ValueError, match=r"would wait forever.*input_timezone='UTC'"):
        load_mapper(literal)
    utc = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(SESSIONS, input_timezone="UTC"), window=TemporalWindow(Minutes(30))
    )
    awaited = list(utc.to_upstream("2026-11-27").in_order)
    assert awaited[0] == "2026-11-27T14:30" and awaited[-1] == "2026-11-27T17:30" and len(awaited) == 7
    assert utc.to_downstream("2026-11-27T09:30-05:00") == "2026-11-27"


@given(
    st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2028, 12, 31), timezones=st.just(UTC)),
    st.integers(-30, 30),
)
def test_a_bar_is_awaited_by_a_session_exactly_when_it_maps_to_it(instant, step):
    # u in to_upstream(D) <=> D in to_downstream(u) (CONTRACTS.md, Windows), for bars near a session.
    rollup = load_mapper(BARS)
    session = SESSIONS.period_at_or_after(instant)
    slot = Minutes(30, timezone="America/New_York")
    bar = slot.shift(slot.floor(session.start), step).key
    try:
        routed = rollup.to_downstream(bar)
    except ValueError:
        routed = None
    assert (bar in rollup.to_upstream(session.key)) == (routed == session.key)


def test_t_minus_one_session_skips_thanksgiving_and_the_weekend():
    previous = TemporalMapper(SESSIONS, offset=-1)
    assert previous.to_downstream("2026-11-30") == "2026-11-27"
    assert previous.to_downstream("2026-11-27T10:00") == "2026-11-25"
    assert previous.to_partition_date("2026-11-27") == datetime(2026, 11, 27, 9, 30, tzinfo=NEW_YORK)
    # A rollup over it waits, for 2026-11-27, for the keys of the session after it.
    assert previous.decode_downstream("2026-11-27").key == "2026-11-30"


def test_outside_next_maps_an_evening_key_to_the_next_session():
    evening = TemporalMapper(TradingSession(NYSE, outside="next"))
    assert evening.to_downstream("2026-11-25T18:00-05:00") == "2026-11-27"
    assert evening.to_downstream("2026-11-26") == "2026-11-27"


def test_a_week_waits_for_its_sessions_and_a_sliding_window_for_five_sessions():
    week = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Week(timezone="America/New_York")), window=TemporalWindow(SESSIONS)
    )
    assert list(week.to_upstream("2026-11-23").in_order) == [
        "2026-11-23",
        "2026-11-24",
        "2026-11-25",
        "2026-11-27",
    ]
    assert week.to_downstream("2026-11-27T10:00") == "2026-11-23"
    sliding = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(SESSIONS), window=SlidingWindow(SESSIONS, 5)
    )
    assert sliding.to_downstream("2026-11-25") == [
        "2026-11-25",
        "2026-11-27",
        "2026-11-30",
        "2026-12-01",
        "2026-12-02",
    ]
    assert list(sliding.to_upstream("2026-11-30").in_order) == [
        "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27", "2026-11-30",
    ]  # fmt: skip


def test_a_session_fans_out_to_its_bars():
    fan_out = TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(SESSIONS),
        window=TemporalWindow(Minutes(30, timezone="America/New_York")),
    )
    assert list(fan_out.to_downstream("2026-11-27T11:00-05:00")) == bars("2026-11-27", "13:00")
    assert fan_out.largest_fan_out == 13


def test_a_symbol_and_session_rollup_waits_for_that_symbols_bars():
    rollup = DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["symbol", "session"], {"session": TemporalMapper(SESSIONS)}),
        window=DimensionWindow(session=TemporalWindow(Minutes(30, timezone="America/New_York"))),
    )
    assert rollup.to_downstream("AAPL|2026-11-27T10:00-05:00") == "AAPL|2026-11-27"
    assert sorted(rollup.to_upstream("AAPL|2026-11-27")) == sorted(
        f"AAPL|{b}" for b in bars("2026-11-27", "13:00")
    )
    with pytest.raises(ValueError, match="outside the trading sessions of XNYS"):
        rollup.to_downstream("AAPL|2026-11-27T14:00-05:00")


def test_business_day_windows_of_an_exchange_wait_for_its_session_dates():
    # November 2026 has 21 weekdays; the NYSE is closed on Thanksgiving, 2026-11-26.
    ours = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(timezone="America/New_York")), window=BusinessDayWindow(NYSE)
    )
    awaited = sorted(ours.to_upstream("2026-11"))
    assert len(awaited) == 20 and "2026-11-26" not in awaited and "2026-11-27" in awaited
    core = RollupMapper(
        upstream_mapper=StartOfMonthMapper(input_format="%Y-%m-%d"), window=BusinessDayWindow(NYSE)
    )
    assert sorted(core.to_upstream("2026-11")) == awaited
    # April 2026: 22 weekdays less Good Friday, 2026-04-03.
    assert len(ours.to_upstream("2026-04")) == 21
    previous = TemporalMapper(BusinessDay(NYSE, timezone="America/New_York"), offset=-1)
    assert previous.to_downstream("2026-11-27") == "2026-11-25"


@pytest.mark.parametrize(
    "mapper",
    [
        BARS,
        "TemporalMapper(TradingSession(ExchangeCalendar('XHKG'), outside='previous'), offset=-2)",
        "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month(timezone='America/New_York')), "
        "window=BusinessDayWindow(ExchangeCalendar('NYSE')))",
    ],
)
def test_the_classes_round_trip_through_airflows_serialization(mapper):
    built = load_mapper(mapper)
    stored = json.loads(json.dumps(encode_partition_mapper(built)))
    rebuilt = decode_partition_mapper(stored)
    assert json.dumps(rebuilt.serialize()) == json.dumps(built.serialize())
    assert rebuilt.to_downstream("2026-11-27T10:00-05:00") == built.to_downstream("2026-11-27T10:00-05:00")


# == The producer timetable ======================================================================

EVERY_SESSION = GrainPartitionTimetable(SESSIONS, lag=timedelta(minutes=30))


def restriction(earliest=None, latest=None, catchup=True) -> TimeRestriction:
    return TimeRestriction(earliest=earliest, latest=latest, catchup=catchup)


def ny(day: int, hour: int, minute: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=NEW_YORK).astimezone(UTC)


def test_a_session_timetable_runs_30_minutes_after_each_close_for_that_session_at_the_early_close_too():
    runs, last = [], None
    for _ in range(5):
        last = EVERY_SESSION.next_dagrun_info_v2(last_dagrun_info=last, restriction=restriction(ny(23, 0)))
        runs.append((last.partition_key, last.run_after, last.partition_date))
    assert runs == [
        ("2026-11-23", ny(23, 16, 30), ny(23, 9, 30)),
        ("2026-11-24", ny(24, 16, 30), ny(24, 9, 30)),
        ("2026-11-25", ny(25, 16, 30), ny(25, 9, 30)),
        ("2026-11-27", ny(27, 13, 30), ny(27, 9, 30)),  # no run for Thanksgiving; the early close
        ("2026-11-30", ny(30, 16, 30), ny(30, 9, 30)),
    ]
    assert EVERY_SESSION.due("2026-11-27") == ny(27, 13, 30)
    assert EVERY_SESSION.summary == "TradingSession T-1 +0:30:00 (America/New_York)"
    assert (
        "30:00 (real time) after it closes in America/New_York, for that session" in EVERY_SESSION.description
    )


def test_without_catchup_the_latest_due_session_runs(monkeypatch):
    monkeypatch.setattr("airflow_partitions.timetables._utcnow", lambda: ny(28, 12))  # Saturday
    info = EVERY_SESSION.next_dagrun_info_v2(
        last_dagrun_info=None, restriction=restriction(ny(1, 0), catchup=False)
    )
    assert (info.partition_key, info.run_after) == ("2026-11-27", ny(27, 13, 30))
    monkeypatch.setattr("airflow_partitions.timetables._utcnow", lambda: ny(27, 13, 15))  # before its run
    info = EVERY_SESSION.next_dagrun_info_v2(
        last_dagrun_info=DagRunInfo.exact(ny(25, 16, 30)), restriction=restriction(ny(1, 0), catchup=False)
    )
    # After Wednesday's run, Friday's: due at 13:30, after its early close (the scheduler waits for it).
    assert (info.partition_key, info.run_after) == ("2026-11-27", ny(27, 13, 30))


def test_offset_zero_runs_at_the_close_before_a_session_for_that_session():
    before_the_open = GrainPartitionTimetable(SESSIONS, offset=0, lag=timedelta(hours=1))
    assert before_the_open.due("2026-11-27") == ny(25, 17)  # an hour after Wednesday's close
    assert before_the_open.due("2026-11-30") == ny(27, 14)  # an hour after Friday's early close
    assert "for the next session" in before_the_open.description


def test_backfill_yields_each_session_between_the_dates_and_nothing_for_thanksgiving():
    infos = list(
        EVERY_SESSION.iter_partition_dagrun_infos(
            earliest=datetime(2026, 11, 23), latest=datetime(2026, 11, 30, 12)
        )
    )
    assert [(i.partition_key, i.run_after) for i in infos] == [
        (key, ny(int(key[-2:]), 9, 30))
        for key in ("2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27", "2026-11-30")
    ]
    assert all(i.partition_date == i.run_after for i in infos)


def test_the_timetable_round_trips_through_airflows_serialization():
    stored = json.loads(json.dumps(encode_timetable(EVERY_SESSION)))
    rebuilt = decode_timetable(stored)
    assert rebuilt == EVERY_SESSION and rebuilt.due("2026-11-27") == ny(27, 13, 30)


# == The tools: explain and check ================================================================


def test_explain_shows_where_a_bar_goes_and_what_its_session_waits_for():
    explained = explain(load_mapper(BARS), "2026-11-27T17:30Z")
    assert explained.ok and explained.counts_as == "2026-11-27T12:30-05:00"
    (session,) = explained.keys
    assert session.key == "2026-11-27" and session.partition_date == "2026-11-27T09:30:00-05:00"
    assert list(session.waits_for) == bars("2026-11-27", "13:00")
    assert session.closes_at == "2026-11-27T18:00:00+00:00"
    refused = explain(load_mapper(BARS), "2026-11-26T10:00-05:00")
    assert not refused.ok and "outside the trading sessions of XNYS" in refused.refused


SESSION_DAGS = """\
from datetime import timedelta
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, task
from airflow_partitions import *

XNYS = ExchangeCalendar("XNYS")
closes = Asset("closes")

with DAG("closes", schedule=GrainPartitionTimetable(TradingSession(XNYS), lag=timedelta(minutes=30))):
    @task(outlets=[closes])
    def land():
        pass
    land()

for dag_id, mapper in {CONSUMERS}.items():
    with DAG(dag_id, schedule=PartitionedAssetTimetable(assets=closes, default_partition_mapper=mapper)):
        @task
        def read():
            pass
        read()
"""


def session_folder(tmp_path, consumers: str):
    (tmp_path / "dags.py").write_text(SESSION_DAGS.replace("{CONSUMERS}", textwrap.dedent(consumers)))
    return tmp_path


def test_check_finds_a_session_producer_and_its_consumers_clean(tmp_path):
    consumers = """{
        "previous_session": TemporalMapper(TradingSession(XNYS), offset=-1),
        "week_of_sessions": TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Week(timezone="America/New_York")),
            window=TemporalWindow(TradingSession(XNYS)),
        ),
        "month_of_sessions": TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Month(timezone="America/New_York")), window=BusinessDayWindow(XNYS)
        ),
    }"""
    assert [f for f in check(session_folder(tmp_path, consumers)) if f.severity != "info"] == []


def test_check_reports_a_week_of_business_days_fed_by_sessions_as_never_completing(tmp_path):
    # Monday to Friday awaits Thanksgiving, which no session (and so no key) ever names.
    consumers = """{
        "weekdays": TemporalRollupMapper(
            upstream_mapper=TemporalMapper(Week(timezone="America/New_York")),
            window=TemporalWindow(BusinessDay(timezone="America/New_York")),
        ),
    }"""
    findings = [f for f in check(session_folder(tmp_path, consumers)) if f.severity == "error"]
    assert findings and all(f.dag_id == "weekdays" for f in findings)
    assert any("wait forever" in f.message for f in findings), [f.message for f in findings]
