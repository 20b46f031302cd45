# -- block 1 of docs/temporal.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import Day, Hour, TemporalMapper, TemporalRollupMapper, TemporalWindow

# UTC hour keys ("2026-03-08T05") -> one run per New York day, once all its real hours arrived
schedule = PartitionedAssetTimetable(
    assets=Asset("hourly_sales"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
        window=TemporalWindow(Hour()),  # 23 hours on 2026-03-08, 25 on 2026-11-01, else 24
    ),
)

# -- block 2 of docs/temporal.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import Day, TemporalMapper

# files landing on day T hold day T-1's data: "2026-03-10T09:00" -> a run for "2026-03-09"
schedule = PartitionedAssetTimetable(
    assets=Asset("landed_files"), default_partition_mapper=TemporalMapper(Day(), offset=-1)
)

# -- block 3 of docs/temporal.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import Hour, Minutes, TemporalMapper, TemporalRollupMapper, TemporalWindow

# "2026-03-10T09:00", "…T09:15", "…T09:30", "…T09:45" -> one run for "2026-03-10T09"
schedule = PartitionedAssetTimetable(
    assets=Asset("quarter_hour_readings"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Hour()), window=TemporalWindow(Minutes(15))
    ),
)

# -- block 4 of docs/temporal.md at 1f224da
from airflow_partitions import Day, Hour, TemporalMapper, TemporalRollupMapper, TemporalWindow

TemporalRollupMapper(
    upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"),
    window=TemporalWindow(Hour()),
)

# -- block 5 of docs/temporal.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import Day, SlidingWindow, TemporalMapper, TemporalRollupMapper

# "2026-03-03" … "2026-03-09" all arrived -> a run for "2026-03-09" (the week ending that day);
# "2026-03-05" counts towards the runs "2026-03-05" … "2026-03-11"
schedule = PartitionedAssetTimetable(
    assets=Asset("daily_metrics"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Day()), window=SlidingWindow(Day(), 7)
    ),
)

# -- block 6 of docs/temporal.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import Day, Hour, TemporalFanOutMapper, TemporalMapper, TemporalWindow

# "2026-03-10" (or any key in that day) -> 24 runs, "2026-03-10T00" … "2026-03-10T23"
schedule = PartitionedAssetTimetable(
    assets=Asset("daily_export"),
    default_partition_mapper=TemporalFanOutMapper(
        upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour())
    ),
)
