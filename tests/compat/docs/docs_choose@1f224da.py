# -- block 1 of docs/choose.md at 1f224da
from datetime import timedelta

from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    BusinessDayWindow,
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    FiscalQuarter,
    Hour,
    LookupMapper,
    Month,
    PrefixStripMapper,
    RegexMapper,
    SlidingWindow,
    TemporalFanOutMapper,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
)

# -- block 2 of docs/choose.md at 1f224da
PrefixStripMapper("eu")
# "eu::2026-03-10" -> "2026-03-10"   (PrefixAddMapper, PrefixReplaceMapper: the other ways)

# -- block 3 of docs/choose.md at 1f224da
RegexMapper(r"exports/(?P<region>[a-z]+)/(?P<day>\d{8})\.csv", "{region}|{day}")
# "exports/eu/20260310.csv" -> "eu|20260310"
LookupMapper({"store-001": "us", "store-002": "eu"})
# "store-002" -> "eu"   (a list as a value fans out)

# -- block 4 of docs/choose.md at 1f224da
TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC")
# "2026-03-10T03:00:00Z" -> "2026-03-09"   (the New York day holding that instant)
TemporalMapper(BusinessDay(BusinessCalendar(country="US")), offset=-1)
# "2026-11-27" -> "2026-11-25"   (T-1 business day over Thanksgiving)

# -- block 5 of docs/choose.md at 1f224da
TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))
# "2026-03-10T09:00:00Z" -> "2026-03-10"; it waits for "2026-03-10T00" … "2026-03-10T23" (24)
TemporalRollupMapper(upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow())
# "2026-03-10" -> "2026-03"; waits for "2026-03-02" … "2026-03-31" (22); "2026-03-07" refused

# -- block 6 of docs/choose.md at 1f224da
DimensionRollupMapper(
    upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
    window=DimensionWindow(time=TemporalWindow(Hour())),
)  # "eu|2026-03-10T09" -> "eu|2026-03-10"; waits for "eu|2026-03-10T00" … "eu|2026-03-10T23"

# -- block 7 of docs/choose.md at 1f224da
TemporalRollupMapper(upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7))
# "2026-03-09" -> the 7 windows ending "2026-03-09" … "2026-03-15"
# the window "2026-03-09" waits for "2026-03-03" … "2026-03-09"

# -- block 8 of docs/choose.md at 1f224da
TemporalRollupMapper(
    upstream_mapper=TemporalMapper(Day()),
    window=TemporalWindow(Hour()),
    wait_policy=CompletionDeadline(timedelta(hours=2), min_fraction=0.9),
)  # "2026-03-10T09" -> "2026-03-10": fires when complete, or 2 h after the day ends (90 %: see below)

# -- block 9 of docs/choose.md at 1f224da
TemporalFanOutMapper(upstream_mapper=TemporalMapper(Month()), window=TemporalWindow(Day()))
# "2026-03" -> "2026-03-01" … "2026-03-31" (31 runs)

# -- block 10 of docs/choose.md at 1f224da
TemporalMapper(FiscalQuarter(start_month=7))
# "2026-03-10" -> "FY2026-Q3"   (RetailWeek(), RetailMonth() … for NRF 4-5-4 calendars)
