# -- block 1 of docs/business.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import BusinessCalendar, BusinessDay, TemporalMapper

NEW_YORK = BusinessCalendar(country="US", subdiv="NY")

# files landing on business day T hold T-1's data: "2026-11-27" -> a run for "2026-11-25"
schedule = PartitionedAssetTimetable(
    assets=Asset("landed_files"),
    default_partition_mapper=TemporalMapper(BusinessDay(NEW_YORK, timezone="America/New_York"), offset=-1),
)

# -- block 2 of docs/business.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import (
    BusinessCalendar,
    BusinessDay,
    TemporalMapper,
    TemporalRollupMapper,
    TemporalWindow,
    Week,
)

US = BusinessCalendar(country="US")
# daily keys "2026-11-23" … -> one run for the week "2026-11-23", once its 4 working days arrived
schedule = PartitionedAssetTimetable(
    assets=Asset("daily_sales"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Week()), window=TemporalWindow(BusinessDay(US))
    ),
)

# -- block 3 of docs/business.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import (
    BusinessCalendar,
    BusinessDayWindow,
    Month,
    TemporalMapper,
    TemporalRollupMapper,
)

schedule = PartitionedAssetTimetable(
    assets=Asset("daily_sales"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month()),  # "2026-03-10" -> "2026-03"
        window=BusinessDayWindow(BusinessCalendar(country="US")),  # waits for the 22 business days
    ),
)

# -- block 4 of docs/business.md at 1f224da
from airflow.sdk import FanOutMapper, StartOfDayMapper, StartOfMonthMapper
from airflow_partitions import BusinessDayWindow, TemporalFanOutMapper

FanOutMapper(
    upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"),
    window=BusinessDayWindow(),
    downstream_mapper=StartOfDayMapper(),  # required: core has no default for our window
)  # "2026-03" -> "2026-03-02", "2026-03-03", … "2026-03-31"

TemporalFanOutMapper(  # the same, with StartOfDayMapper() as the default downstream mapper
    upstream_mapper=StartOfMonthMapper(input_format="%Y-%m"), window=BusinessDayWindow()
)
