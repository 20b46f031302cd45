"""
Golden files: the stored form of every public class, so that no release changes it by accident.

Airflow fingerprints a consumer's encoded partition mapper and deletes its pending rollups when
the fingerprint changes; timetables are stored in the serialized Dag too. So an unchanged
configuration must serialize to the same bytes in every release. ``tests/golden/v<N>/`` holds,
per module family, ``{case: {"build": <expression>, "serialize": <obj.serialize()>, "encode":
<what Airflow's encoder stores>}}`` for format version N. The current version's files must be
written byte for byte (``json.dumps``, key order kept); every version's files must still load.

Rule: a deliberate change of stored form bumps ``FORMAT_VERSION`` (``airflow_partitions/grains/stored.py``),
keeps reading the old form (``tests/golden/v<old>/`` stays and keeps loading) and is listed in
``CHANGELOG.md``. (Re)generate with ``python -m tests.unit.test_golden --write [--force]``.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

# Family -> case name -> Python expression building it (names from _namespace()).
CASES: dict[str, dict[str, str]] = {
    "grains": {
        "Minutes()": "Minutes()",
        "Minutes(15, Kathmandu)": "Minutes(15, timezone='Asia/Kathmandu')",
        "Hour()": "Hour()",
        "Hour(New York)": "Hour(timezone='America/New_York')",
        "Day()": "Day()",
        "Day(6, Berlin)": "Day(6, timezone='Europe/Berlin')",
        "Week()": "Week()",
        "Week(sunday, Sydney)": "Week('sunday', timezone='Australia/Sydney')",
        "IsoWeek()": "IsoWeek()",
        "IsoWeek(Kolkata)": "IsoWeek(timezone='Asia/Kolkata')",
        "Month()": "Month()",
        "Month(Santiago)": "Month(timezone='America/Santiago')",
        "Quarter()": "Quarter()",
        "Quarter(Chatham)": "Quarter(timezone='Pacific/Chatham')",
        "Year()": "Year()",
        "Year(Lord Howe)": "Year(timezone='Australia/Lord_Howe')",
        "Cron()": "Cron()",
        "Cron(weekday hours, New York)": "Cron('0 9-17 * * 1-5', timezone='America/New_York')",
    },
    "fiscal": {
        "FiscalMonth()": "FiscalMonth()",
        "FiscalMonth(26th, New York)": "FiscalMonth(timezone='America/New_York', start_day=26)",
        "FiscalQuarter(October)": "FiscalQuarter(start_month=10)",
        "FiscalQuarter(all options)": (
            "FiscalQuarter(timezone='Europe/London', start_month=4, start_day=6, "
            "named_by='start', prefix='FQ')"
        ),
        "FiscalYear(July)": "FiscalYear(start_month=7)",
        "FiscalYear(all options)": (
            "FiscalYear(timezone='Australia/Sydney', start_month=7, start_day=15, "
            "named_by='start', prefix='AY')"
        ),
    },
    "retail": {
        "RetailYear()": "RetailYear()",
        "RetailYear(5-4-4, RT, New York)": "RetailYear('5-4-4', 'RT', timezone='America/New_York')",
        "RetailQuarter()": "RetailQuarter()",
        "RetailQuarter(4-4-5, FQ, Chicago)": "RetailQuarter('4-4-5', 'FQ', timezone='America/Chicago')",
        "RetailMonth()": "RetailMonth()",
        "RetailMonth(4-4-5, RM, London)": "RetailMonth('4-4-5', 'RM', timezone='Europe/London')",
        "RetailWeek()": "RetailWeek()",
        "RetailWeek(5-4-4, W, Tokyo)": "RetailWeek('5-4-4', 'W', timezone='Asia/Tokyo')",
        "RetailCalendar()": "RetailCalendar()",
        "RetailCalendar(all options)": (
            "RetailCalendar(year_end_month=9, weekday='sunday', rule='last', named_by='end', "
            "prefix='FY', extra_week=3)"
        ),
        "RetailYear(NRF calendar)": "RetailYear(calendar=RetailCalendar())",
        "RetailYear(calendar ending nearest 30 June, Sydney)": (
            "RetailYear(calendar=RetailCalendar(year_end_month=6, named_by='end', prefix='FY'), "
            "timezone='Australia/Sydney')"
        ),
        "RetailQuarter(calendar ending last Saturday of September)": (
            "RetailQuarter('5-4-4', calendar=RetailCalendar(year_end_month=9, rule='last', "
            "named_by='end', prefix='FY', extra_week='first'))"
        ),
        "RetailMonth(4-4-5, calendar ending nearest 30 June)": (
            "RetailMonth('4-4-5', calendar=RetailCalendar(year_end_month=6, named_by='end', prefix='FY'))"
        ),
        "RetailWeek(calendar ending Sunday nearest 31 August)": (
            "RetailWeek(calendar=RetailCalendar(year_end_month=8, weekday='sunday', named_by='end'), "
            "prefix='FY')"
        ),
        "TemporalRollupMapper(4-4-5 month of weeks ending nearest 30 June)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(RetailMonth('4-4-5', "
            "calendar=RetailCalendar(year_end_month=6, named_by='end', prefix='FY'), "
            "timezone='Australia/Sydney')), window=TemporalWindow(RetailWeek(calendar=RetailCalendar("
            "year_end_month=6, named_by='end', prefix='FY'), timezone='Australia/Sydney')))"
        ),
    },
    "business": {
        "BusinessCalendar()": "BusinessCalendar()",
        "BusinessCalendar(US NY, extra dates, Saturdays)": (
            "BusinessCalendar(weekmask='1111110', country='US', subdiv='NY', "
            "extra_holidays=('2026-12-24', '2026-12-31'), extra_workdays=('2026-11-28',))"
        ),
        "BusinessCalendar(weekday names)": (
            "BusinessCalendar(weekmask=('sunday', 'monday', 'tuesday', 'wednesday', 'thursday'))"
        ),
        "BusinessCalendar(NYSE)": "BusinessCalendar(market='NYSE')",
        "BusinessDay()": "BusinessDay()",
        "BusinessDay(US, following, New York, 6h)": (
            "BusinessDay(BusinessCalendar(country='US'), 'following', "
            "timezone='America/New_York', start_hour=6)"
        ),
        "BusinessDayWindow()": "BusinessDayWindow()",
        "BusinessDayWindow(US NY)": "BusinessDayWindow(BusinessCalendar(country='US', subdiv='NY'))",
        "TemporalRollupMapper(Month, BusinessDayWindow(US NY))": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month(timezone='America/New_York')), "
            "window=BusinessDayWindow(BusinessCalendar(country='US', subdiv='NY')))"
        ),
    },
    "sessions": {
        "ExchangeCalendar(XNYS)": "ExchangeCalendar('XNYS')",
        "ExchangeCalendar(alias NYSE)": "ExchangeCalendar('NYSE')",
        "TradingSession(XNYS)": "TradingSession(ExchangeCalendar('XNYS'))",
        "TradingSession(XHKG, next)": "TradingSession(ExchangeCalendar('XHKG'), outside='next')",
        "TradingSession(XLON, previous)": "TradingSession(ExchangeCalendar('XLON'), outside='previous')",
        "TemporalMapper(TradingSession, offset -1)": (
            "TemporalMapper(TradingSession(ExchangeCalendar('XNYS')), offset=-1)"
        ),
        "TemporalRollupMapper(TradingSession of 30-minute bars)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(TradingSession(ExchangeCalendar('XNYS'))), "
            "window=TemporalWindow(Minutes(30, timezone='America/New_York')))"
        ),
        "TemporalRollupMapper(TradingSession of UTC bars, Tokyo)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(TradingSession(ExchangeCalendar('XTKS')), "
            "input_timezone='UTC'), window=TemporalWindow(Minutes(30)))"
        ),
        "TemporalRollupMapper(week of sessions)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Week(timezone='America/New_York')), "
            "window=TemporalWindow(TradingSession(ExchangeCalendar('XNYS'))))"
        ),
        "DimensionRollupMapper(symbol and session of bars)": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['symbol', 'session'], "
            "{'session': TemporalMapper(TradingSession(ExchangeCalendar('XNYS')))}), "
            "window=DimensionWindow(session=TemporalWindow(Minutes(30, timezone='America/New_York'))))"
        ),
        "BusinessDay(XNYS sessions)": "BusinessDay(ExchangeCalendar('XNYS'), timezone='America/New_York')",
        "BusinessDayWindow(XNYS sessions)": "BusinessDayWindow(ExchangeCalendar('XNYS'))",
        "GrainPartitionTimetable(TradingSession, 30 minutes after the close)": (
            "GrainPartitionTimetable(TradingSession(ExchangeCalendar('XNYS')), lag=timedelta(minutes=30))"
        ),
        "GrainPartitionTimetable(TradingSession, before the next open)": (
            "GrainPartitionTimetable(TradingSession(ExchangeCalendar('XLON')), offset=0, "
            "lag=timedelta(hours=2))"
        ),
    },
    "namespace": {
        "PrefixStripMapper(eu)": "PrefixStripMapper('eu')",
        "PrefixStripMapper(all options)": "PrefixStripMapper('eu', separator='/', max_downstream_keys=40)",
        "PrefixAddMapper(eu)": "PrefixAddMapper('eu')",
        "PrefixAddMapper(all options)": "PrefixAddMapper('eu', separator='.', max_downstream_keys=3)",
        "PrefixReplaceMapper(eu, us)": "PrefixReplaceMapper('eu', 'us')",
        "PrefixReplaceMapper(all options)": (
            "PrefixReplaceMapper('raw', 'clean', separator='/', max_downstream_keys=2)"
        ),
    },
    "keyshape": {
        "RegexMapper()": r"RegexMapper(r'(?P<day>\d{4}-\d{2}-\d{2})_(?P<store>\w+)', r'\g<store>|\g<day>')",
        "RegexMapper(max_downstream_keys)": (
            r"RegexMapper(r'^(\w+)/(\d+)$', r'\2-\1', max_downstream_keys=10)"
        ),
        "LookupMapper(many to one)": "LookupMapper({'store-2': 'eu', 'store-1': 'eu', 'store-9': 'us'})",
        "LookupMapper(one to many, default, cap)": (
            "LookupMapper({'us': ['store-9', 'store-3'], 'eu': 'store-1', 'apac': ('store-7', 'store-5')}, "
            "default='unassigned', max_downstream_keys=2)"
        ),
        "LookupMapper(pass_through)": "LookupMapper({'old-name': 'new-name'}, pass_through=True)",
    },
    "composite": {
        "CompositeKeyMapper(region, day)": "CompositeKeyMapper(['region', 'day'])",
        "CompositeKeyMapper(all options)": (
            "CompositeKeyMapper(['region', 'zone', 'time'], "
            "{'region': LookupMapper({'store-9': 'us', 'store-1': 'eu'}, pass_through=True), "
            "'time': TemporalMapper(Day(timezone='America/New_York'))}, "
            "output=['time', 'region'], delimiter='::', escape='~', max_downstream_keys=3)"
        ),
        "CompositeKeyMapper(core StartOfDayMapper)": (
            "CompositeKeyMapper(['store', 'day'], {'day': StartOfDayMapper()})"
        ),
        "DimensionWindow(values)": "DimensionWindow(region=['us', 'eu'])",
        "DimensionWindow(values, temporal)": (
            "DimensionWindow(zone=['west', 'east'], time=TemporalWindow(Hour(timezone='America/New_York')))"
        ),
        "DimensionRollupMapper()": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['region', 'day'], "
            "{'day': TemporalMapper(Day())}), window=DimensionWindow(day=TemporalWindow(Hour())))"
        ),
        "DimensionRollupMapper(max_upstream_keys)": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['region', 'day'], "
            "{'day': TemporalMapper(Day())}), window=DimensionWindow(day=TemporalWindow(Hour())), "
            "max_upstream_keys=100)"
        ),
        # HOLD is the default: given or not, the stored form of every rollup before rerun_policy.
        "DimensionRollupMapper(rerun_policy hold)": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['region', 'day'], "
            "{'day': TemporalMapper(Day())}), window=DimensionWindow(day=TemporalWindow(Hour())), "
            "rerun_policy='hold')"
        ),
        "DimensionRollupMapper(expected_within)": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['region', 'day'], "
            "{'day': TemporalMapper(Day(timezone='Europe/Berlin'))}), "
            "window=DimensionWindow(day=TemporalWindow(Hour(timezone='Europe/Berlin'))), "
            "expected_within=timedelta(hours=2))"
        ),
        "DimensionRollupMapper(MinimumCount)": (
            "DimensionRollupMapper("
            "upstream_mapper=CompositeKeyMapper(['region', 'zone'], output=['region']), "
            "window=DimensionWindow(zone=['west', 'east']), wait_policy=MinimumCount(1))"
        ),
        "DimensionRollupMapper(all options)": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['region', 'zone', 'time'], "
            "{'region': LookupMapper({'store-9': 'us', 'store-1': 'eu'}, pass_through=True), "
            "'time': TemporalMapper(Day(timezone='America/New_York'))}, "
            "output=['time', 'region'], delimiter='::', escape='~', max_downstream_keys=3), "
            "window=DimensionWindow(zone=['west', 'east'], "
            "time=TemporalWindow(Hour(timezone='America/New_York'))), "
            "wait_policy=CompletionDeadline(timedelta(hours=2), min_count=40, min_fraction=0.9), "
            "max_downstream_keys=5)"
        ),
        "DimensionFanOutMapper()": (
            "DimensionFanOutMapper(upstream_mapper=CompositeKeyMapper(['region', 'day'], "
            "{'day': TemporalMapper(Day(timezone='America/New_York'))}), "
            "window=DimensionWindow(day=TemporalWindow(Hour(timezone='America/New_York'))))"
        ),
        "DimensionFanOutMapper(all options)": (
            "DimensionFanOutMapper(upstream_mapper=CompositeKeyMapper(['day']), "
            "window=DimensionWindow(region=['eu', 'us']), "
            "downstream_mapper=CompositeKeyMapper(['region', 'day']), max_downstream_keys=25)"
        ),
    },
    "members": {
        "Member()": "Member('store-042')",
        "Member(all options)": "Member('store-009', '2026-04-06', '2027-01-01', 'vic')",
        "VariableMembers()": "VariableMembers('retail_stores')",
        "DimensionWindow(dated members)": (
            "DimensionWindow(store=['store-001', Member('store-009', start='2026-04-06', group='vic'), "
            "Member('store-003', end='2026-05-01')])"
        ),
        "DimensionWindow(VariableMembers)": "DimensionWindow(store=VariableMembers('retail_stores'))",
        "DimensionRollupMapper(through a lookup)": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['store', 'day'], "
            "{'store': LookupMapper({'store-001': 'nsw', 'store-005': 'vic'}), "
            "'day': TemporalMapper(Day(timezone='Australia/Sydney'))}), "
            "window=DimensionWindow(store=['store-001', 'store-005', Member('store-009', start='2026-04-06', "
            "group='vic')]))"
        ),
        "DimensionRollupMapper(VariableMembers per region)": (
            "DimensionRollupMapper(upstream_mapper=CompositeKeyMapper(['store', 'day'], "
            "{'day': TemporalMapper(Day(timezone='Australia/Sydney'))}, output=['day']), "
            "window=DimensionWindow(store=VariableMembers('nsw_stores')))"
        ),
    },
    "temporal": {
        "TemporalMapper(Day())": "TemporalMapper(Day())",
        "TemporalMapper(all options)": (
            "TemporalMapper(Day(6, timezone='Europe/Berlin'), input_timezone='Asia/Kolkata', "
            "input_format='%Y%m%dT%H%M%z', offset=-1, max_downstream_keys=40)"
        ),
        "TemporalMapper(FiscalQuarter)": (
            "TemporalMapper(FiscalQuarter(start_month=10, timezone='America/New_York'))"
        ),
        "TemporalMapper(BusinessDay US, offset -1)": (
            "TemporalMapper(BusinessDay(BusinessCalendar(country='US', subdiv='NY'), "
            "timezone='America/New_York'), offset=-1)"
        ),
        "TemporalWindow(Hour())": "TemporalWindow(Hour())",
        "TemporalWindow(Minutes(360, New York))": "TemporalWindow(Minutes(360, timezone='America/New_York'))",
        "SlidingWindow(Day(), 7)": "SlidingWindow(Day(), 7)",
        "SlidingWindow(leading)": "SlidingWindow(Day(timezone='America/New_York'), 5, align='leading')",
        "SlidingWindow(centred)": "SlidingWindow(Hour(), 3, align='centred')",
        "SlidingWindow(start)": "SlidingWindow(Day(), 7, start='2026-01-01')",
        "TemporalRollupMapper()": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))"
        ),
        "TemporalRollupMapper(MinimumCount, cap)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone='America/New_York'), "
            "input_timezone='UTC', offset=-1), window=TemporalWindow(Hour()), wait_policy=MinimumCount(20), "
            "max_downstream_keys=7)"
        ),
        "TemporalRollupMapper(max_upstream_keys)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), "
            "window=TemporalWindow(Minutes(15)), max_upstream_keys=3000)"
        ),
        "TemporalRollupMapper(rerun_policy hold)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), "
            "rerun_policy='hold')"
        ),
        "TemporalRollupMapper(sliding, CompletionDeadline)": (
            "TemporalRollupMapper("
            "upstream_mapper=TemporalMapper(Day(timezone='America/New_York'), offset=-1), "
            "window=SlidingWindow(Day(timezone='America/New_York'), 5, align='leading'), "
            "wait_policy=CompletionDeadline(timedelta(minutes=30), min_count=4), max_downstream_keys=6)"
        ),
        "TemporalRollupMapper(expected_within)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()), "
            "expected_within=timedelta(hours=2))"
        ),
        "TemporalRollupMapper(NYSE sessions, deadline, expected_within)": (
            "TemporalRollupMapper(upstream_mapper=TemporalMapper(BusinessDay("
            "BusinessCalendar(market='NYSE'), timezone='America/New_York')), "
            "window=TemporalWindow(Hour(timezone='America/New_York')), "
            "wait_policy=CompletionDeadline(timedelta(hours=1)), "
            "expected_within=timedelta(minutes=90, seconds=30))"
        ),
        "TemporalRollupMapper(retail quarter of weeks)": (
            "TemporalRollupMapper("
            "upstream_mapper=TemporalMapper(RetailQuarter(timezone='America/New_York')), "
            "window=TemporalWindow(RetailWeek(timezone='America/New_York')))"
        ),
        "TemporalFanOutMapper()": (
            "TemporalFanOutMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))"
        ),
        "TemporalFanOutMapper(all options)": (
            "TemporalFanOutMapper("
            "upstream_mapper=TemporalMapper(Week('sunday', timezone='Australia/Sydney')), "
            "window=TemporalWindow(Day(timezone='Australia/Sydney')), "
            "downstream_mapper=TemporalMapper(Day(timezone='Australia/Sydney'), input_format='%Y%m%d'), "
            "max_downstream_keys=9)"
        ),
        "TemporalFanOutMapper(core StartOfMonthMapper, BusinessDayWindow)": (
            "TemporalFanOutMapper(upstream_mapper=StartOfMonthMapper(), window=BusinessDayWindow())"
        ),
        "TemporalRollupMapper(FiscalQuarter of months, MinimumCount)": (
            "TemporalRollupMapper("
            "upstream_mapper=TemporalMapper(FiscalQuarter(start_month=10, timezone='America/New_York')), "
            "window=TemporalWindow(Month(timezone='America/New_York')), wait_policy=MinimumCount(2))"
        ),
        "core FanOutMapper(TemporalMapper, TemporalWindow)": (
            "FanOutMapper(upstream_mapper=TemporalMapper(Day(timezone='America/New_York')), "
            "window=TemporalWindow(Hour(timezone='America/New_York')), "
            "downstream_mapper=TemporalMapper(Hour(timezone='America/New_York')))"
        ),
    },
    "lateness": {
        "ExpectedWithinMapper(StartOfDayMapper)": (
            "ExpectedWithinMapper(StartOfDayMapper(), expected_within=timedelta(hours=2))"
        ),
        "ExpectedWithinMapper(StartOfMonthMapper, Berlin)": (
            "ExpectedWithinMapper(StartOfMonthMapper(timezone='Europe/Berlin'), "
            "expected_within=timedelta(days=3))"
        ),
    },
    "deadlines": {
        "CompletionDeadline(2h)": "CompletionDeadline(timedelta(hours=2))",
        "CompletionDeadline(min_count)": "CompletionDeadline(timedelta(minutes=30), min_count=4)",
        "CompletionDeadline(min_fraction)": "CompletionDeadline(timedelta(days=1), min_fraction=0.75)",
        "CompletionDeadline(both)": "CompletionDeadline(timedelta(hours=2), min_count=40, min_fraction=0.9)",
        "CompletionDeadline(settle)": "CompletionDeadline(timedelta(hours=6), settle=timedelta(minutes=2))",
    },
    "timetables": {
        "ScheduledRuntimePartitionTimetable(UTC)": (
            "ScheduledRuntimePartitionTimetable('0 6 * * *', timezone='UTC')"
        ),
        "ScheduledRuntimePartitionTimetable(all options)": (
            "ScheduledRuntimePartitionTimetable('0 6 * * 1-5', timezone='America/New_York', "
            "interval=timedelta(hours=6), run_immediately=timedelta(minutes=30))"
        ),
        "ScheduledRuntimePartitionTimetable(preset, relativedelta, True)": (
            "ScheduledRuntimePartitionTimetable('@daily', timezone=ZoneInfo('Europe/Berlin'), "
            "interval=relativedelta(months=1), run_immediately=True)"
        ),
        "IntervalRuntimePartitionTimetable(15 minutes)": (
            "IntervalRuntimePartitionTimetable(timedelta(minutes=15))"
        ),
        "IntervalRuntimePartitionTimetable(monthly, interval)": (
            "IntervalRuntimePartitionTimetable(relativedelta(months=1), interval=timedelta(hours=1))"
        ),
        "GrainPartitionTimetable(Day())": "GrainPartitionTimetable(Day())",
        "GrainPartitionTimetable(all options)": (
            "GrainPartitionTimetable(Hour(timezone='America/New_York'), offset=0, lag=timedelta(minutes=5))"
        ),
        "GrainPartitionTimetable(FiscalMonth)": (
            "GrainPartitionTimetable(FiscalMonth(start_day=26, timezone='Europe/London'), offset=-2, "
            "lag=timedelta(days=1, seconds=1800))"
        ),
        "ExplicitPartitionTimetable": (
            "ExplicitPartitionTimetable({"
            "'2026-11': datetime(2026, 12, 3, 18, tzinfo=ZoneInfo('America/New_York')), "
            "'2026-10': datetime(2026, 11, 4, 18, tzinfo=ZoneInfo('America/New_York'))})"
        ),
        "ExplicitPartitionTimetable(pairs, UTC)": (
            "ExplicitPartitionTimetable([('close-q1', datetime(2026, 4, 3, 12, 30, tzinfo=UTC))])"
        ),
    },
}


def _namespace() -> dict[str, Any]:
    """The names build expressions may use: ours, core's (as a Dag file imports them) and datetime."""
    from datetime import UTC, datetime, timedelta
    from zoneinfo import ZoneInfo

    from airflow import sdk
    from dateutil.relativedelta import relativedelta

    import airflow_partitions

    names = {name: getattr(airflow_partitions, name) for name in airflow_partitions.__all__}
    core = ("FanOutMapper", "MinimumCount", "RollupMapper", "StartOfDayMapper", "StartOfMonthMapper")
    names |= {name: getattr(sdk, name) for name in core}
    names |= {"UTC": UTC, "datetime": datetime, "timedelta": timedelta, "ZoneInfo": ZoneInfo}
    return names | {"relativedelta": relativedelta}


def _version() -> int:
    from airflow_partitions.grains.stored import FORMAT_VERSION

    return FORMAT_VERSION


def _encoder(obj: Any) -> Any:
    """Airflow's encoder for *obj* (what lands in the serialized Dag), or None if it is only nested."""
    from airflow.partition_mappers.base import PartitionMapper
    from airflow.partition_mappers.window import Window
    from airflow.sdk.bases.timetable import BaseTimetable
    from airflow.sdk.definitions.partition_mappers.base import PartitionMapper as SdkPartitionMapper
    from airflow.serialization import encoders
    from airflow.timetables.base import Timetable

    if isinstance(obj, PartitionMapper | SdkPartitionMapper):
        return encoders.encode_partition_mapper
    if isinstance(obj, Window):
        return encoders.encode_window
    if isinstance(obj, Timetable | BaseTimetable):
        return encoders.encode_timetable
    return None


def _decoder(obj: Any) -> Any:
    from airflow.serialization import decoders

    name = _encoder(obj).__name__.replace("encode_", "decode_")
    return getattr(decoders, name)


def stored_forms(obj: Any) -> dict[str, Any]:
    """What the code stores for *obj*: its ``serialize()`` (ours) and Airflow's encoding (registered)."""
    forms = {}
    if type(obj).__module__.startswith("airflow_partitions."):
        forms["serialize"] = obj.serialize()
    if (encode := _encoder(obj)) is not None:
        forms["encode"] = encode(obj)
    return forms


def build(expression: str) -> Any:
    return eval(expression, _namespace())


def _entries(version: int) -> list[tuple[str, str, dict[str, Any]]]:
    """``(family, case, entry)`` of every golden file of *version*."""
    return [
        (path.stem, case, entry)
        for path in sorted((GOLDEN / f"v{version}").glob("*.json"))
        for case, entry in json.loads(path.read_text()).items()
    ]


def _all_entries() -> list[tuple[int, str, str, dict[str, Any]]]:
    versions = sorted(int(d.name[1:]) for d in GOLDEN.glob("v*") if d.is_dir())
    return [(v, *e) for v in versions for e in _entries(v)]


ALL = _all_entries()
CURRENT = [e for e in ALL if e[0] == _version()]


def _id(entry: tuple) -> str:
    return f"v{entry[0]}/{entry[1]}/{entry[2]}"


@pytest.mark.parametrize("entry", CURRENT, ids=map(_id, CURRENT))
def test_the_code_writes_the_golden_form_byte_for_byte(entry):
    _, family, case, stored = entry
    assert stored["build"] == CASES[family][case]
    forms = stored_forms(build(stored["build"]))
    assert sorted(forms) == sorted(k for k in stored if k != "build")
    for form, value in forms.items():
        assert json.dumps(value) == json.dumps(stored[form]), f"{form}() of {stored['build']} changed"


def _assert_same(rebuilt: Any, built: Any) -> None:
    """*rebuilt* equals *built* where the class compares values; else it is at least the same class."""
    if type(built).__module__.startswith("airflow_partitions.") and type(built).__eq__ is not object.__eq__:
        assert type(rebuilt) is type(built)
        assert rebuilt == built
    else:  # BusinessDayWindow (no __eq__) and core's classes (the Dag file's SDK class decodes to core's)
        assert type(rebuilt).__name__ == type(built).__name__


@pytest.mark.parametrize("entry", ALL, ids=map(_id, ALL))
def test_every_golden_form_loads_to_an_equal_object(entry):
    version, _, _, stored = entry
    built = build(stored["build"])
    if "serialize" in stored:
        rebuilt = type(built).deserialize(json.loads(json.dumps(stored["serialize"])))
        _assert_same(rebuilt, built)
        if version == _version():
            assert json.dumps(rebuilt.serialize()) == json.dumps(stored["serialize"])
    if "encode" in stored:
        decoded = _decoder(built)(json.loads(json.dumps(stored["encode"])))
        _assert_same(decoded, built)
        if "serialize" in stored:
            assert json.dumps(decoded.serialize()) == json.dumps(built.serialize())
        if version == _version():
            assert json.dumps(_encoder(decoded)(decoded)) == json.dumps(stored["encode"])


def test_golden_files_hold_exactly_the_cases():
    written = {(family, case) for _, family, case, _ in CURRENT}
    assert written == {(family, case) for family, cases in CASES.items() for case in cases}


def _public_serializable_classes() -> set[type]:
    import airflow_partitions
    from airflow_partitions.plugin import AirflowPartitionsPlugin as Plugin

    public = {getattr(airflow_partitions, name) for name in airflow_partitions.__all__}
    public = {c for c in public if inspect.isclass(c) and hasattr(c, "serialize")}
    public = {c for c in public if not inspect.isabstract(c)}  # Grain: its subclasses have cases
    return public | {*Plugin.partition_mappers, *Plugin.windows, *Plugin.timetables}


def _calls(expression: str) -> list[ast.Call]:
    tree = ast.parse(expression, mode="eval")
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


PUBLIC = sorted(_public_serializable_classes(), key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_every_public_serializable_class_has_golden_cases_for_every_option(cls):
    cases = [c for family in CASES.values() for c in family.values() if type(build(c)) is cls]
    assert cases, f"no golden case builds a {cls.__name__}: add one to CASES and run --write"
    params = [p for p in inspect.signature(cls).parameters.values() if p.kind is not p.VAR_KEYWORD]
    required = {p.name for p in params if p.default is p.empty}
    used, bare = set(), False
    for call in (c for case in cases for c in _calls(case) if c.func.id == cls.__name__):
        given = {p.name for p in params[: len(call.args)]} | {k.arg for k in call.keywords}
        used |= given
        bare |= given <= required
    missing = {p.name for p in params} - used
    assert not missing, f"{cls.__name__}: no golden case sets {sorted(missing)}"
    assert bare or not params, f"{cls.__name__}: no golden case of its all-defaults form"


def write(force: bool) -> int:
    """Write ``tests/golden/v<FORMAT_VERSION>/``; refuse to change an entry unless *force*."""
    folder = GOLDEN / f"v{_version()}"
    files, changed = {}, []
    for family, cases in CASES.items():
        path = folder / f"{family}.json"
        old = json.loads(path.read_text()) if path.exists() else {}
        new = {case: {"build": expr, **stored_forms(build(expr))} for case, expr in cases.items()}
        files[path] = new
        changed += [f"{family}/{case}" for case in old if json.dumps(old[case]) != json.dumps(new.get(case))]
    if force or not changed:
        folder.mkdir(parents=True, exist_ok=True)
        for path, new in files.items():
            path.write_text(json.dumps(new, indent=2) + "\n")
    print(
        "Rule: a stored form never changes for an unchanged configuration (Airflow deletes pending "
        "rollups when a mapper's fingerprint changes). A deliberate change bumps FORMAT_VERSION in "
        "airflow_partitions/grains/stored.py, keeps reading the old form (tests/golden/v<old>/ stays) and "
        "is listed in CHANGELOG.md."
    )
    if changed and not force:
        print(
            "Refused, these entries would change (--force once the rule is followed):", *changed, sep="\n  "
        )
        return 1
    return 0


if __name__ == "__main__":
    if "--write" not in sys.argv[1:]:
        sys.exit("usage: python -m tests.unit.test_golden --write [--force]")
    sys.exit(write(force="--force" in sys.argv[1:]))
