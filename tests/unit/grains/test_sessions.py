"""
Exchange calendars and the trading-session grain: published calendars, keys, shifts, bars, lunch breaks.

Values are typed in from the exchanges' published calendars, not computed by exchange_calendars:

- NYSE, "Holidays and Trading Hours" (nyse.com/markets/hours-calendars), 2026: core trading
  09:30 to 16:00 New York time; closed on New Year's Day (Thu 1 Jan), Martin Luther King Jr. Day
  (19 Jan), Washington's Birthday (16 Feb), Good Friday (3 Apr), Memorial Day (25 May), Juneteenth
  (Fri 19 Jun), Independence Day observed (Fri 3 Jul), Labor Day (7 Sep), Thanksgiving (26 Nov)
  and Christmas (Fri 25 Dec); early closes at 13:00 on Friday 27 Nov and Thursday 24 Dec. 2026
  has 261 weekdays (it starts on a Thursday: 52 weeks and one day), so 251 sessions.
- London Stock Exchange, "Business days" and trading hours (londonstockexchange.com), 2026: order
  book trading 08:00 to 16:30 London time; closed on 1 Jan, Good Friday 3 Apr, Easter Monday 6 Apr,
  the bank holidays 4 May, 25 May and 31 Aug, 25 Dec and 28 Dec (Boxing Day, Saturday 26 Dec,
  substituted); half days closing at 12:30 on 24 and 31 Dec.
- HKEX, "Trading Hours" (hkex.com.hk): morning session 09:30 to 12:00, afternoon 13:00 to 16:00
  Hong Kong time; no afternoon session on Christmas Eve, New Year's Eve and Lunar New Year's Eve
  when they are trading days (2026: Mon 16 Feb, Thu 24 Dec, Thu 31 Dec).
- JPX, "Trading Hours" (jpx.co.jp) and its notice of the extension from 5 November 2024: Tokyo
  Stock Exchange morning session 09:00 to 11:30, afternoon 12:30 to 15:30 Tokyo time (until
  1 November 2024: 15:00); closed 31 Dec to 3 Jan.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.grains import (
    BusinessDay,
    Day,
    ExchangeCalendar,
    Grain,
    Minutes,
    Month,
    OutsideCalendar,
    TradingSession,
    Week,
    most_members,
)

NEW_YORK, LONDON = ZoneInfo("America/New_York"), ZoneInfo("Europe/London")
HONG_KONG, TOKYO = ZoneInfo("Asia/Hong_Kong"), ZoneInfo("Asia/Tokyo")
XNYS = TradingSession(ExchangeCalendar("XNYS"))
XLON = TradingSession(ExchangeCalendar("XLON"))
XHKG = TradingSession(ExchangeCalendar("XHKG"))
XTKS = TradingSession(ExchangeCalendar("XTKS"))

NYSE_2026_WEEKDAY_CLOSURES = [
    "2026-01-01", "2026-01-19", "2026-02-16", "2026-04-03", "2026-05-25",
    "2026-06-19", "2026-07-03", "2026-09-07", "2026-11-26", "2026-12-25",
]  # fmt: skip
LSE_2026_WEEKDAY_CLOSURES = [
    "2026-01-01", "2026-04-03", "2026-04-06", "2026-05-04", "2026-05-25",
    "2026-08-31", "2026-12-25", "2026-12-28",
]  # fmt: skip


def weekdays(year: int) -> list[date]:
    first = date(year, 1, 1)
    days = [first + timedelta(days=n) for n in range((date(year + 1, 1, 1) - first).days)]
    return [day for day in days if day.weekday() < 5]


def sessions_of(grain: TradingSession, year: int) -> list:
    """Every session dated in *year*, walked with shift from the first one."""
    session = grain.period_at_or_after(datetime(year, 1, 1, tzinfo=grain.tz))
    found = []
    while session.key.startswith(f"{year}-"):
        found.append(session)
        session = grain.shift(session, 1)
    return found


def local(session, tz: ZoneInfo) -> tuple[str, ...]:
    """The session's trading hours as local ``HH:MM-HH:MM`` strings."""
    return tuple(
        f"{a.astimezone(tz):%H:%M}-{b.astimezone(tz):%H:%M}" for a, b in session.grain.spans(session)
    )


# == Published calendars ==========================================================================


def test_nyse_2026_has_251_sessions_the_weekdays_less_its_ten_weekday_holidays():
    sessions = sessions_of(XNYS, 2026)
    assert len(weekdays(2026)) == 261
    assert len(sessions) == 251
    expected = [d.isoformat() for d in weekdays(2026) if d.isoformat() not in NYSE_2026_WEEKDAY_CLOSURES]
    assert [s.key for s in sessions] == expected


def test_nyse_2026_trades_0930_to_1600_and_closes_at_1300_on_27_november_and_24_december():
    hours = {s.key: local(s, NEW_YORK) for s in sessions_of(XNYS, 2026)}
    early = {key for key, h in hours.items() if h != ("09:30-16:00",)}
    assert early == {"2026-11-27", "2026-12-24"}
    assert hours["2026-11-27"] == hours["2026-12-24"] == ("09:30-13:00",)
    # As instants: 09:30 EST is 14:30Z, 13:00 EST 18:00Z; 09:30 EDT (July) 13:30Z.
    assert XNYS.parse("2026-11-27").utc == (
        datetime(2026, 11, 27, 14, 30, tzinfo=UTC),
        datetime(2026, 11, 27, 18, tzinfo=UTC),
    )
    assert XNYS.parse("2026-07-02").utc[0] == datetime(2026, 7, 2, 13, 30, tzinfo=UTC)


def test_london_2026_closes_on_its_bank_holidays_and_at_1230_on_24_and_31_december():
    sessions = sessions_of(XLON, 2026)
    assert [s.key for s in sessions] == [
        d.isoformat() for d in weekdays(2026) if d.isoformat() not in LSE_2026_WEEKDAY_CLOSURES
    ]
    hours = {s.key: local(s, LONDON) for s in sessions}
    assert {key for key, h in hours.items() if h != ("08:00-16:30",)} == {"2026-12-24", "2026-12-31"}
    assert hours["2026-12-24"] == hours["2026-12-31"] == ("08:00-12:30",)


def test_hong_kong_breaks_for_lunch_and_trades_mornings_only_on_the_eves():
    hours = {s.key: local(s, HONG_KONG) for s in sessions_of(XHKG, 2026)}
    assert hours["2026-11-27"] == ("09:30-12:00", "13:00-16:00")
    half_days = {key for key, h in hours.items() if h == ("09:30-12:00",)}
    assert half_days == {"2026-02-16", "2026-12-24", "2026-12-31"}
    assert set(map(len, hours.values())) == {1, 2}  # every other session has the lunch break
    # The lunch break is inside its session's period: an instant in it maps to that session.
    assert XHKG.key_at(datetime(2026, 11, 27, 12, 30, tzinfo=HONG_KONG)) == "2026-11-27"


def test_tokyo_trades_0900_to_1130_and_1230_to_1530_since_5_november_2024():
    assert local(XTKS.parse("2026-11-27"), TOKYO) == ("09:00-11:30", "12:30-15:30")
    assert local(XTKS.parse("2024-11-05"), TOKYO) == ("09:00-11:30", "12:30-15:30")
    assert local(XTKS.parse("2024-11-01"), TOKYO) == ("09:00-11:30", "12:30-15:00")
    assert XTKS.shift(XTKS.parse("2026-12-30"), 1).key == "2027-01-04"  # closed 31 Dec to 3 Jan


def test_an_exchange_calendar_is_a_business_calendar_of_session_dates():
    nyse = ExchangeCalendar("XNYS")
    assert not nyse.is_business_day(date(2026, 11, 26))
    assert nyse.is_business_day(date(2026, 11, 27))
    assert nyse.business_days(date(2026, 11, 23), date(2026, 11, 30)) == [
        date(2026, 11, 23), date(2026, 11, 24), date(2026, 11, 25), date(2026, 11, 27),
    ]  # fmt: skip
    assert nyse.roll(date(2026, 11, 26), "following") == date(2026, 11, 27)
    assert nyse.roll(date(2026, 11, 26), "preceding") == date(2026, 11, 25)
    # Modified following: Saturday 31 October 2026 rolls back to Friday the 30th, not into November.
    assert nyse.roll(date(2026, 10, 31), "modifiedfollowing") == date(2026, 10, 30)
    assert nyse.roll(date(2026, 11, 1), "modifiedpreceding") == date(2026, 11, 2)
    assert nyse.shift(date(2026, 11, 30), -1) == date(2026, 11, 27)
    assert nyse.shift(date(2026, 11, 27), -1) == date(2026, 11, 25)
    assert nyse.shift(date(2026, 12, 31), 1) == date(2027, 1, 4)  # across the year: 1 Jan 2027 closed
    with pytest.raises(ValueError, match=r"2026-11-26 is not a session date .*2026-11-25.*2026-11-27"):
        nyse.roll(date(2026, 11, 26))
    with pytest.raises(ValueError, match="roll must be one of"):
        nyse.roll(date(2026, 11, 26), "next")
    with pytest.raises(ValueError, match="whole number of sessions"):
        nyse.shift(date(2026, 11, 27), 1.5)


def test_business_days_of_an_exchange_are_its_session_dates_as_whole_local_days():
    grain = BusinessDay(ExchangeCalendar("XNYS"), timezone="America/New_York")
    month = Month(timezone="America/New_York").parse("2026-11")
    days = [p.key for p in grain.members(month)]
    # November 2026: 21 weekdays, less Thanksgiving.
    assert len(days) == 20 and "2026-11-26" not in days and "2026-11-27" in days
    assert grain.parse("2026-11-27").duration == timedelta(hours=24)  # a whole day, not the half session
    assert grain.shift(grain.parse("2026-11-27"), -1).key == "2026-11-25"
    rebuilt = Grain.deserialize(json.loads(json.dumps(grain.serialize())))
    assert rebuilt == grain and rebuilt.calendar == ExchangeCalendar("XNYS")


# == The grain ====================================================================================


def test_keys_are_session_dates_and_name_the_session_open_at_their_instant():
    session = XNYS.parse("2026-11-27")
    assert (session.key, session.start.isoformat(), session.end.isoformat()) == (
        "2026-11-27",
        "2026-11-27T09:30:00-05:00",
        "2026-11-27T13:00:00-05:00",
    )
    assert XNYS.floor(datetime(2026, 11, 27, 12, 59, tzinfo=NEW_YORK)) == session
    assert XNYS.key_at(datetime(2026, 11, 27, 14, 30, tzinfo=UTC)) == "2026-11-27"  # the open
    assert XNYS.key_at(datetime(2026, 11, 27, 10)) == "2026-11-27"  # naive: the exchange's zone
    assert XNYS.floor_key("2026-11-27T15:15Z") == session


def test_an_instant_outside_every_session_is_refused_naming_the_exchange_and_the_sessions_around_it():
    after_the_early_close = datetime(2026, 11, 27, 13, tzinfo=NEW_YORK)  # the close is not in the session
    with pytest.raises(ValueError) as refused:
        XNYS.floor(after_the_early_close)
    message = str(refused.value)
    assert "2026-11-27T13:00:00-05:00 is outside the trading sessions of XNYS (America/New_York)" in message
    assert "2026-11-27, closed at 13:00" in message and "2026-11-30, opens at 09:30" in message
    assert "outside='next'" in message
    with pytest.raises(ValueError, match="the session before it, 2026-11-25, closed at 16:00"):
        XNYS.floor(datetime(2026, 11, 26, 11, tzinfo=NEW_YORK))  # Thanksgiving


def test_refusals_by_the_calendar_are_outside_calendar_errors_and_unreadable_years_are_not():
    # OutsideCalendar (a ValueError) tells "the exchange does not trade then" from a mistake.
    with pytest.raises(OutsideCalendar):
        XNYS.floor(datetime(2026, 11, 28, 10, tzinfo=NEW_YORK))
    with pytest.raises(OutsideCalendar):
        XNYS.parse("2026-11-26")
    with pytest.raises(OutsideCalendar):
        ExchangeCalendar("XNYS").roll(date(2026, 11, 26))
    with pytest.raises(OutsideCalendar):
        BusinessDay(ExchangeCalendar("XNYS"), timezone="America/New_York").parse("2026-11-26")
    with pytest.raises(ValueError) as beyond:
        XHKG.dated_instant(datetime(2050, 3, 1))
    assert not isinstance(beyond.value, OutsideCalendar)


def test_outside_next_and_previous_take_the_session_after_or_before_the_instant():
    nxt = TradingSession(ExchangeCalendar("XNYS"), outside="next")
    prev = TradingSession(ExchangeCalendar("XNYS"), outside="previous")
    saturday = datetime(2026, 11, 28, 10, tzinfo=NEW_YORK)
    assert (nxt.key_at(saturday), prev.key_at(saturday)) == ("2026-11-30", "2026-11-27")
    before_the_open = datetime(2026, 11, 27, 9, 29, tzinfo=NEW_YORK)
    assert (nxt.key_at(before_the_open), prev.key_at(before_the_open)) == ("2026-11-27", "2026-11-25")
    during = datetime(2026, 11, 27, 9, 30, tzinfo=NEW_YORK)
    assert nxt.key_at(during) == prev.key_at(during) == "2026-11-27"
    # Canonical keys are session dates whatever outside says.
    with pytest.raises(ValueError, match="2026-11-26 is not a session date of XNYS"):
        nxt.parse("2026-11-26")


def test_dates_name_their_session_and_a_date_without_one_follows_outside():
    assert XNYS.dated_instant(datetime(2026, 11, 27)) == datetime(2026, 11, 27, 14, 30, tzinfo=UTC)
    with pytest.raises(ValueError, match=r"2026-11-26 is not a session date of XNYS \(the session before it"):
        XNYS.dated_instant(datetime(2026, 11, 26))
    nxt = TradingSession(ExchangeCalendar("XNYS"), outside="next")
    prev = TradingSession(ExchangeCalendar("XNYS"), outside="previous")
    assert nxt.dated_instant(datetime(2026, 11, 26)) == datetime(2026, 11, 27, 14, 30, tzinfo=UTC)
    assert prev.dated_instant(datetime(2026, 11, 26)) == datetime(2026, 11, 25, 14, 30, tzinfo=UTC)


def test_parse_refuses_spellings_other_than_the_session_date():
    with pytest.raises(
        ValueError, match=r"is not a canonical .* key; the period it falls in is written '2026-11-27'"
    ):
        XNYS.parse("2026-11-27T10:00")
    with pytest.raises(ValueError, match="is not a canonical"):
        XNYS.parse("20261127")


def test_shifts_count_sessions_across_holidays_weekends_and_years():
    assert XNYS.shift(XNYS.parse("2026-11-30"), -1).key == "2026-11-27"
    assert XNYS.shift(XNYS.parse("2026-11-27"), -1).key == "2026-11-25"
    assert XNYS.shift(XNYS.parse("2026-12-31"), 1).key == "2027-01-04"  # 2027-01-01 is a Friday holiday
    assert XNYS.shift(XNYS.parse("2026-01-02"), 251).key == XNYS.parse("2027-01-04").key
    assert XNYS.shift(XNYS.parse("2027-01-04"), -251).key == "2026-01-02"


def test_sessions_of_a_week_or_month_are_those_opening_in_it():
    week = Week(timezone="America/New_York").parse("2026-11-23")
    assert [s.key for s in XNYS.members(week)] == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27"]
    assert len(XNYS.members(Month(timezone="America/New_York").parse("2026-11"))) == 20


def test_thirty_minute_bars_of_a_session_start_within_its_trading_hours():
    bars = Minutes(30, timezone="America/New_York")
    full = [p.key for p in bars.members(XNYS.parse("2026-11-25"))]
    assert len(full) == 13 and (full[0], full[-1]) == ("2026-11-25T09:30-05:00", "2026-11-25T15:30-05:00")
    early = [p.key for p in bars.members(XNYS.parse("2026-11-27"))]
    assert early == [
        f"2026-11-27T{t}-05:00" for t in ("09:30", "10:00", "10:30", "11:00", "11:30", "12:00", "12:30")
    ]
    # UTC bars are the same instants, spelled in UTC.
    assert Minutes(30).members(XNYS.parse("2026-11-27"))[0].key == "2026-11-27T14:30"


def test_no_bar_starts_in_a_lunch_break():
    hk = [p.key[11:16] for p in Minutes(30, timezone="Asia/Hong_Kong").members(XHKG.parse("2026-11-27"))]
    assert hk == [
        "09:30",
        "10:00",
        "10:30",
        "11:00",
        "11:30",
        "13:00",
        "13:30",
        "14:00",
        "14:30",
        "15:00",
        "15:30",
    ]
    tokyo = [p.key[11:16] for p in Minutes(30, timezone="Asia/Tokyo").members(XTKS.parse("2026-11-27"))]
    assert tokyo == [
        "09:00",
        "09:30",
        "10:00",
        "10:30",
        "11:00",
        "12:30",
        "13:00",
        "13:30",
        "14:00",
        "14:30",
        "15:00",
    ]
    half_day = Minutes(30, timezone="Asia/Hong_Kong").members(XHKG.parse("2026-12-24"))
    assert len(half_day) == 5  # 09:30 … 11:30, no afternoon


def test_bars_that_do_not_tile_the_trading_hours_are_refused_naming_the_hours():
    with pytest.raises(
        ValueError, match=r"do not tile TradingSession\(ExchangeCalendar\('XNYS'\)\) period '2026-11-25'"
    ):
        Minutes(60, timezone="America/New_York").members(XNYS.parse("2026-11-25"))  # 09:30 is no hour mark
    with pytest.raises(ValueError, match=r"'2026-11-27' in its hours 09:00-11:30"):
        Minutes(20, timezone="Asia/Tokyo").members(XTKS.parse("2026-11-27"))  # 150 minutes to lunch


def test_most_members_counts_the_bars_of_the_longest_session_and_skips_lunch_breaks():
    assert most_members(XNYS, Minutes(30, timezone="America/New_York"))[0] == 13
    assert most_members(XHKG, Minutes(30, timezone="Asia/Hong_Kong"))[0] == 11
    assert most_members(Month(timezone="America/New_York"), XNYS)[0] <= 23


def test_years_without_sessions_are_refused_naming_the_years_the_exchange_has():
    hong_kong = ExchangeCalendar("XHKG")
    assert (hong_kong.first_year, hong_kong.last_year) == (1960, 2049)  # exchange_calendars' bounds
    with pytest.raises(
        ValueError, match=r"has sessions for the years 1960 to 2049 only .* got a date in 2050"
    ):
        XHKG.dated_instant(datetime(2050, 3, 1))
    assert ExchangeCalendar("XNYS").last_year == 2261  # pandas' nanosecond timestamps end in 2262


def test_exchange_calendars_are_frozen_values_named_by_their_canonical_mic():
    assert ExchangeCalendar("NYSE") == ExchangeCalendar("XNYS")
    assert hash(ExchangeCalendar("NYSE")) == hash(ExchangeCalendar("XNYS"))
    assert ExchangeCalendar("XNYS").timezone == "America/New_York"
    assert repr(XNYS) == "TradingSession(ExchangeCalendar('XNYS'))"
    assert XNYS.timezone == "America/New_York"
    with pytest.raises(ValueError, match=r"'XXXX' is not an exchange of exchange_calendars .* 'XNYS'"):
        ExchangeCalendar("XXXX")
    with pytest.raises(ValueError, match="must be an ISO 10383 MIC"):
        ExchangeCalendar(42)
    with pytest.raises(ValueError, match="calendar must be an ExchangeCalendar"):
        TradingSession("XNYS")
    with pytest.raises(ValueError, match="outside must be one of 'raise', 'next', 'previous'"):
        TradingSession(ExchangeCalendar("XNYS"), outside="following")
    with pytest.raises(TypeError):
        TradingSession(ExchangeCalendar("XNYS"), timezone="UTC")  # the exchange's zone, not a parameter


def test_an_exchange_whose_sessions_the_library_cannot_compute_is_refused_when_built(monkeypatch):
    import airflow_partitions.grains.sessions as sessions

    class Failing:  # as exchange_calendars 4.13 under pandas 3 for Athens: a rule pandas cannot apply
        def __init__(self, start, end):
            raise NotImplementedError(
                "DateOffset subclass OrthodoxEaster does not have a vectorized implementation"
            )

    monkeypatch.setattr(
        sessions, "_exchange", lambda code: sessions._Exchange(code, Failing, "UTC", 1990, 2040)
    )
    with pytest.raises(
        ValueError, match=r"could not compute the sessions of XFAIL for 2020 to 2029: NotImplementedError"
    ):
        ExchangeCalendar("XFAIL")


def test_the_stored_form_is_sorted_versioned_and_rebuilds_an_equal_grain():
    grain = TradingSession(ExchangeCalendar("NYSE"), outside="next")
    assert json.dumps(grain.serialize()) == (
        '{"calendar": {"exchange": "XNYS", "format_version": 1}, "format_version": 1, '
        '"kind": "trading_session", "outside": "next"}'
    )
    assert Grain.deserialize(json.loads(json.dumps(grain.serialize()))) == grain
    with pytest.raises(ValueError, match="format_version 2"):
        ExchangeCalendar.deserialize({"exchange": "XNYS", "format_version": 2})


# == Properties (CONTRACTS.md) ====================================================================

EXCHANGES = [XNYS, XLON, XHKG, XTKS, TradingSession(ExchangeCalendar("CMES"))]
#: Sessions dated 2020 through 2030 (CME's open the evening before their date).
SESSION_INSTANTS = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(UTC)
)


@given(st.sampled_from(EXCHANGES), SESSION_INSTANTS)
def test_a_session_key_round_trips_and_its_session_holds_the_instant(grain, instant):
    session = grain.period_at_or_after(instant)
    assert session.start.astimezone(UTC) <= session.end.astimezone(UTC)
    assert grain.parse(session.key) == session
    assert grain.key(session) == session.key
    date.fromisoformat(session.key)  # a session date
    if session.utc[0] <= instant:
        assert instant in session and grain.floor(instant) == session
        assert grain.key_at(instant) == session.key
    else:  # between sessions: the next one opens after the instant, the previous closed before it
        before = grain.shift(session, -1)
        assert before.utc[1] <= instant < session.utc[0]
        with pytest.raises(ValueError, match="is outside the trading sessions of"):
            grain.floor(instant)


@given(st.sampled_from(EXCHANGES), SESSION_INSTANTS, st.integers(-400, 400), st.integers(-400, 400))
def test_shifts_add_up_and_keep_sessions_in_order(grain, instant, a, b):
    session = grain.period_at_or_after(instant)
    assert grain.shift(grain.shift(session, a), b) == grain.shift(session, a + b)
    assert grain.shift(grain.shift(session, a), -a) == session
    after = grain.shift(session, 1)
    assert session.utc[1] <= after.utc[0] and session.key < after.key


@given(st.sampled_from([XNYS, XHKG, XTKS]), SESSION_INSTANTS, st.integers(-60, 60))
def test_a_bar_is_a_member_of_a_session_exactly_when_it_maps_to_it(grain, instant, step):
    # u in to_upstream(D) <=> D in to_downstream(u), for 30-minute bars around a session D:
    # a bar maps (floor) to the session holding its start, and is a member if it starts in its hours.
    bars = Minutes(30, timezone=grain.timezone)
    session = grain.period_at_or_after(instant)
    members = {bar.key for bar in bars.members(session)}
    bar = bars.shift(bars.floor(session.start), step)
    try:
        mapped = grain.floor(bar.start)
    except ValueError:
        mapped = None
    in_hours = any(start <= bar.utc[0] < end for start, end in grain.spans(session))
    assert (bar.key in members) == (mapped == session and in_hours)


@given(st.sampled_from(EXCHANGES), SESSION_INSTANTS)
def test_outside_next_and_previous_bracket_the_instant(grain, instant):
    nxt = TradingSession(grain.calendar, outside="next").floor(instant)
    prev = TradingSession(grain.calendar, outside="previous").floor(instant)
    assert prev.utc[0] <= instant and (instant < nxt.utc[1])
    assert nxt == prev or grain.shift(prev, 1) == nxt


@given(st.sampled_from([XNYS, XLON]), st.dates(date(2020, 1, 1), date(2030, 12, 31)))
def test_the_business_days_of_a_month_are_the_sessions_opening_in_it(grain, day):
    month = Month(timezone=grain.timezone).floor(datetime(day.year, day.month, 15, tzinfo=grain.tz))
    sessions = [s.key for s in grain.members(month)]
    following = date(day.year + day.month // 12, day.month % 12 + 1, 1)
    business = grain.calendar.business_days(date(day.year, day.month, 1), following)
    assert sessions == [d.isoformat() for d in business]


# == Loading: once per process, no I/O, no pandas at import ======================================

_NO_NETWORK = """
import socket, sys
def refuse(*args, **kwargs):
    raise RuntimeError("network I/O attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from datetime import datetime, UTC
import airflow_partitions.grains as grains
assert "exchange_calendars" not in sys.modules and "pandas" not in sys.modules, "imported with the grains"
from airflow_partitions.grains import ExchangeCalendar, Minutes, TradingSession
import airflow_partitions.grains.sessions as sessions
grain = TradingSession(ExchangeCalendar("XNYS"))
keys = {grain.key_at(datetime(2026, 11, d, 15, tzinfo=UTC)) for d in (23, 24, 25, 27)}
bars = Minutes(30, timezone="America/New_York").members(grain.parse("2026-11-27"))
grain.parse("2029-06-01"); grain.parse("2021-06-01")
info = sessions._chunk.cache_info()
print(sorted(keys), len(bars), info.misses, "airflow" in sys.modules)
"""


def test_sessions_load_without_network_once_per_decade_and_pandas_only_when_needed():
    done = subprocess.run([sys.executable, "-c", _NO_NETWORK], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    # The four sessions, 7 bars on the early close, one computation for the 2020s, no Airflow.
    assert done.stdout.split() == [
        "['2026-11-23',",
        "'2026-11-24',",
        "'2026-11-25',",
        "'2026-11-27']",
        "7",
        "1",
        "False",
    ]


_WITHOUT_THE_EXTRA = """
import sys
sys.modules["exchange_calendars"] = None  # as if not installed
from airflow_partitions.grains import ExchangeCalendar
try:
    ExchangeCalendar("XNYS")
except ImportError as err:
    print(err)
"""


def test_without_the_extra_building_an_exchange_calendar_names_the_extra_to_install():
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_THE_EXTRA], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert 'pip install "airflow-partitions[exchanges]"' in done.stdout


def test_a_day_grain_of_the_exchange_zone_holds_each_session():
    # Sessions nest in the exchange's local days (XNYS): the day of a session's open is its date.
    day = Day(timezone="America/New_York")
    for session in sessions_of(XNYS, 2026)[:30]:
        assert day.floor(session.start).key == session.key
        assert session.end <= day.floor(session.start).end
