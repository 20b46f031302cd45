# -- block 1 of docs/migrating.md at ee5dd0b
from airflow.partition_mappers import (
    DayWindow,
    FanOutMapper,
    MonthWindow,
    RollupMapper,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfQuarterMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
    WeekWindow,
)

from airflow_partitions import (
    Day,
    Hour,
    IsoWeek,
    Month,
    Quarter,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
    Year,
)

# -- block 2 of docs/migrating.md at ee5dd0b
key = "2026-03-10T09:15:00"  # core's default input_format, %Y-%m-%dT%H:%M:%S
pairs = [
    (StartOfHourMapper(), TemporalMapper(Hour())),
    (StartOfDayMapper(), TemporalMapper(Day())),
    (StartOfWeekMapper(), TemporalMapper(Week())),
    (StartOfMonthMapper(), TemporalMapper(Month())),
    (StartOfQuarterMapper(), TemporalMapper(Quarter())),
    (StartOfYearMapper(), TemporalMapper(Year())),
]
assert [(core.to_downstream(key), ours.to_downstream(key)) for core, ours in pairs] == [
    ("2026-03-10T09", "2026-03-10T09"),
    ("2026-03-10", "2026-03-10"),
    ("2026-03-09 (W11)", "2026-03-09"),
    ("2026-03", "2026-03"),
    ("2026-Q1", "2026-Q1"),
    ("2026", "2026"),
]
assert TemporalMapper(IsoWeek()).to_downstream(key) == "2026-W11"

# -- block 3 of docs/migrating.md at ee5dd0b
for spelling in ["2026-03-10", "2026-03-10T09", "2026-03-10T09:15:00Z", "2026-03-10T09:15+01:00"]:
    assert TemporalMapper(Day()).to_downstream(spelling) == "2026-03-10"
    try:
        StartOfDayMapper().to_downstream(spelling)
    except ValueError:
        pass  # core: "time data ... does not match format" or "unconverted data remains"
    else:
        raise AssertionError(spelling)

# -- block 4 of docs/migrating.md at ee5dd0b
core_day = RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())
our_day = TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))
assert sorted(core_day.to_upstream("2026-03-10"))[:2] == ["2026-03-10T00:00:00", "2026-03-10T01:00:00"]
assert sorted(our_day.to_upstream("2026-03-10"))[:2] == ["2026-03-10T00", "2026-03-10T01"]

core_month = RollupMapper(upstream_mapper=StartOfMonthMapper(), window=MonthWindow())
our_month = TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()))
assert sorted(core_month.to_upstream("2026-03"))[:2] == ["2026-03-01T00:00:00", "2026-03-02T00:00:00"]
assert sorted(our_month.to_upstream("2026-03"))[:2] == ["2026-03-01", "2026-03-02"]

core_week = RollupMapper(upstream_mapper=StartOfWeekMapper(), window=WeekWindow())
our_week = TemporalRollupMapper(upstream_mapper=TemporalMapper(Week()), window=TemporalWindow(Day()))
assert core_week.to_downstream(key) == "2026-03-09 (W11)"
assert our_week.to_downstream(key) == "2026-03-09"

# -- block 5 of docs/migrating.md at ee5dd0b
assert our_day.to_downstream("2026-03-10T09:00:00") == "2026-03-10"
assert our_day.member_key("2026-03-10T09:00:00") == "2026-03-10T09"

# -- block 6 of docs/migrating.md at ee5dd0b
core_fan = FanOutMapper(upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"), window=MonthWindow())
our_fan = TemporalFanOutMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()))
assert list(core_fan.to_downstream("2026-03")) == list(our_fan.to_downstream("2026-03"))
core_hours = FanOutMapper(upstream_mapper=StartOfDayMapper(input_format="%Y-%m-%d"), window=DayWindow())
our_hours = TemporalFanOutMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))
assert list(core_hours.to_downstream("2026-03-10")) == list(our_hours.to_downstream("2026-03-10"))

# -- block 7 of docs/migrating.md at ee5dd0b
assert StartOfMonthMapper(input_format="%Y-%m-%d").to_downstream("2026-03-10") == "2026-03"
