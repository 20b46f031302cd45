"""
SlotKeys: the keys of a run of fixed-length slots, counted out, answer as the frozenset of the keys listed.

The reference is the grain's own keys of each slot, found by ``floor`` of each slot's start (the
period holding that instant), one at a time: no tables. Runs are drawn anywhere from 1900 to 2200
and half of them across one of the zone's offset changes (the days SlotKeys keeps tables of their
own for), in zones with and without DST, with half-hour offsets, and with a DST change at midnight
(Santiago); Lord Howe's 30-minute DST for slots of 30 minutes or less.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from airflow_partitions.grains import Hour, Minutes
from airflow_partitions.grains.clock import SlotKeys
from tests.unit.grains.strategies import instants
from tests.unit.support import known_bug, offset_changes

#: Zones whose slots of these lengths are all one length (Minutes.fixed_length is not None).
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "America/Santiago", "Australia/Sydney"]
#: Zones whose offsets are whole slots apart only for slots of 30 minutes or less.
HALF_HOUR_ZONES = ["Australia/Lord_Howe"]
SLOTS = (1, 5, 15, 30, 60)


@st.composite
def runs(draw):
    """A grain of one slot length, a slot's start (UTC) and how many slots (up to five days' worth)."""
    zone = draw(st.sampled_from(ZONES + HALF_HOUR_ZONES))
    n = draw(st.sampled_from(SLOTS if zone in ZONES else SLOTS[:-1]))
    grain = Hour(timezone=zone) if n == 60 else Minutes(n, timezone=zone)
    # Up to five days: whole days between the first and the last, one of them the change's.
    count = draw(st.integers(0, 5 * 1440 // n))
    anchor = draw(instants(zone))
    # A run around the anchor: the anchor (often an offset change) anywhere inside it.
    start = grain.floor(anchor - grain.fixed_length * draw(st.integers(0, max(count - 1, 0)))).utc[0]
    return grain, start, count


def listed(grain: Minutes, start: datetime, count: int) -> list[str]:
    """The keys of the *count* slots from *start*, each from the grain's floor of its start."""
    return [grain.floor(start + grain.fixed_length * i).key for i in range(count)]


def other_spellings(key: str, grain: Minutes) -> list[str]:
    """Keys naming the same slot start (or none), spelled otherwise: never the listed keys."""
    start = grain.floor_key(key).start
    return [
        start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        start.isoformat(),  # with seconds
        start.strftime("%Y-%m-%dT%H:%M"),  # naive local time (the key itself in UTC)
        key + "Z",
        key.replace("T", " "),
        key[:10],
        key[10:],
        " " + key,
        key + ":00",
    ]


@given(runs(), st.data())
def test_slot_keys_answer_as_the_frozenset_of_the_listed_keys(run, data):
    grain, start, count = run
    # Near a local mean time (Santiago's -04:42:45 until 1910) the grain's own keys may repeat:
    # SlotKeys refuses such runs (test below) and the rollups list them, as before.
    assume(known_bug(grain, start - timedelta(days=1), start + grain.fixed_length * count) is None)
    keys = listed(grain, start, count)
    slots = SlotKeys(grain, start, count)
    expected = frozenset(keys)
    assert len(keys) == len(expected) == count  # distinct keys: one per slot
    assert list(slots) == keys  # time order, not sorted text
    assert len(slots) == count
    assert all(key in slots for key in keys)
    assert slots == expected and expected == slots and (slots != expected) is False
    assert hash(slots) == hash(expected)
    assert slots.among(keys) == set(keys)
    # Neighbours outside the run, other spellings, other texts and other types are not in it.
    slot = grain.fixed_length
    outside = [grain.floor(start - slot).key, grain.floor(start + slot * count).key]
    near = [spelled for key in keys[:2] + keys[-2:] for spelled in other_spellings(key, grain)]
    noise = data.draw(st.lists(st.text(max_size=30), max_size=5))
    others = [k for k in outside + near + noise if k not in expected]
    assert len(others) >= 2
    assert not any(key in slots for key in others)
    assert None not in slots and 1 not in slots and ("2026",) not in slots
    # Set operations with received keys: some listed, some not.
    received = set(data.draw(st.lists(st.sampled_from(keys), max_size=50)) if keys else []) | set(
        data.draw(st.lists(st.sampled_from(others), max_size=5))
    )
    for got, want in [
        (received & slots, received & expected),
        (slots & received, expected & received),
        (received - slots, received - expected),
        (slots - received, expected - received),
        (slots | received, expected | received),
        (received | slots, received | expected),
        (slots ^ received, expected ^ received),
        (slots.among(received), received & expected),
    ]:
        assert got == want and isinstance(got, set | frozenset)
    for got, want in [
        (slots <= received, expected <= received),
        (received <= slots, received <= expected),
        (slots < received, expected < received),
        (slots >= received, expected >= received),
        (slots.isdisjoint(received), expected.isdisjoint(received)),
        (slots == received, expected == received),
        (bool(slots), bool(expected)),
    ]:
        assert got is want
    if not keys:
        with pytest.raises(ValueError, match="no keys"):
            slots.text_bounds()
    else:
        assert slots.text_bounds() == (min(slots), max(slots)) == (min(keys), max(keys))
        assert repr(slots) == f"SlotKeys({keys[0]!r} … {keys[-1]!r}, {count:,} keys)"


def test_a_new_york_fall_back_day_holds_its_repeated_hour_once_per_offset():
    grain = Hour(timezone="America/New_York")
    slots = SlotKeys(grain, datetime(2026, 11, 1, 4, tzinfo=UTC), 25)  # local midnight, EDT
    assert list(slots)[:4] == [
        "2026-11-01T00-04:00",
        "2026-11-01T01-04:00",
        "2026-11-01T01-05:00",
        "2026-11-01T02-05:00",
    ]
    assert list(slots)[-1] == "2026-11-01T23-05:00"
    assert "2026-11-01T01-05:00" in slots and "2026-11-01T02-04:00" not in slots  # 02:00 EDT never was
    spring = SlotKeys(grain, datetime(2026, 3, 8, 5, tzinfo=UTC), 23)
    assert "2026-03-08T01-05:00" in spring and "2026-03-08T03-04:00" in spring
    assert "2026-03-08T02-05:00" not in spring and "2026-03-08T02-04:00" not in spring  # skipped


@pytest.mark.parametrize("zone", ["America/New_York", "America/Santiago", "Europe/Berlin"])
def test_a_week_of_hours_across_each_offset_change_of_a_year_is_the_listed_week(zone):
    grain = Hour(timezone=zone)
    for at, _, _ in offset_changes(zone, datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)):
        start = grain.floor(at - timedelta(days=3, hours=7)).utc[0]  # the change in the middle day
        assert list(SlotKeys(grain, start, 24 * 7)) == listed(grain, start, 24 * 7)


def test_a_year_of_minutes_is_every_minute_of_the_calendar_year():
    start = datetime(2028, 1, 1, tzinfo=UTC)
    slots = SlotKeys(Minutes(1), start, 527_040)  # 2028 is a leap year: 366 days
    calendar = [
        (datetime(2028, 1, 1) + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M") for i in range(527_040)
    ]
    assert list(slots) == calendar
    assert slots == frozenset(calendar)
    assert "2028-02-29T12:00" in slots and "2029-01-01T00:00" not in slots and "2027-12-31T23:59" not in slots


@pytest.mark.parametrize(
    ("grain", "start", "count"),
    [
        (Hour(timezone="Australia/Lord_Howe"), datetime(2026, 1, 1, tzinfo=UTC), 24),  # 30-minute DST
        (Minutes(90), datetime(2026, 1, 1, tzinfo=UTC), 16),  # cut at local times, not one length
        (Minutes(1), datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC), 60),  # not a slot's start
        (Minutes(1), datetime(2026, 1, 1), 60),  # naive
        (Minutes(1), datetime(2026, 1, 1, tzinfo=UTC), -1),
    ],
)
def test_slot_keys_refuse_slots_of_no_one_length_or_a_start_that_is_no_slots(grain, start, count):
    with pytest.raises(ValueError, match="SlotKeys: needs a grain of one slot length"):
        SlotKeys(grain, start, count)


def test_a_run_reaching_a_local_mean_time_is_refused_and_a_rollup_period_of_it_listed():
    # Santiago kept local mean time, -04:42:45, until 1910-01-10T04:42:45Z (IANA), then -05:00.
    grain = Minutes(1, timezone="America/Santiago")
    start = datetime(1910, 1, 10, 4, 30, 45, tzinfo=UTC)  # 1910-01-09T23:48 local mean time
    with pytest.raises(ValueError, match="local mean time"):
        SlotKeys(grain, start, 60)
    later = datetime(1910, 2, 1, 5, tzinfo=UTC)  # 00:00 at -05:00, past the change
    assert len(SlotKeys(grain, later, 60)) == 60

    from airflow_partitions import TemporalMapper, TemporalRollupMapper, TemporalWindow
    from airflow_partitions.grains import Month, Week
    from airflow_partitions.windowing import ExpectedKeys, ExpectedSlots

    rollup = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month(timezone="America/Santiago")), window=TemporalWindow(grain)
    )
    # A month reaching the mean time is listed, whose minutes do not tile it (a seconds offset).
    with pytest.raises(ValueError, match="do not tile"):
        rollup.to_upstream("1910-01")
    march = rollup.to_upstream("1910-03")
    assert isinstance(march, ExpectedSlots) and len(march) == 31 * 1440  # -05:00 all month
    # A week wholly in the mean time tiles (its minutes start at :45 s past the UTC minute) and is
    # listed, as before: 7 x 1440 keys from 1909-06-07T00:00-04:42:45.
    weekly = TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Week(timezone="America/Santiago")), window=TemporalWindow(grain)
    )
    week = weekly.to_upstream("1909-06-07")
    assert isinstance(week, ExpectedKeys) and len(week) == 7 * 1440
    assert week.in_order[0] == "1909-06-07T00:00-04:42:45"
    assert week.in_order[-1] == "1909-06-13T23:59-04:42:45"
