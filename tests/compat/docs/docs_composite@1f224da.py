# -- block 1 of docs/composite.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    Hour,
    TemporalMapper,
    TemporalWindow,
)

# "eu|2026-03-10T00" … "eu|2026-03-10T23" -> one run for "eu|2026-03-10", whatever "us" has sent
schedule = PartitionedAssetTimetable(
    assets=Asset("regional_hourly_sales"),
    default_partition_mapper=DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "time"], {"time": TemporalMapper(Day())}),
        window=DimensionWindow(time=TemporalWindow(Hour())),
    ),
)

# -- block 2 of docs/composite.md at 1f224da
from airflow_partitions import CompositeKeyMapper, Day, TemporalMapper

sites = CompositeKeyMapper(["site", "day"], {"day": TemporalMapper(Day())}, escape="\\")
sites.split(r"a\|b|2026-03-10T09")  # {"site": "a|b", "day": "2026-03-10T09"}
sites.to_downstream(r"a\|b|2026-03-10T09")  # r"a\|b|2026-03-10"
sites.to_downstream(r"a\\b|2026-03-10T09")  # r"a\\b|2026-03-10" (a literal backslash)
# sites.to_downstream(r"a\xb|2026-03-10T09") raises ValueError: CompositeKeyMapper: partition key
# 'a\\xb|2026-03-10T09' has '\\' at position 1 before neither '|' nor '\\'.

# -- block 3 of docs/composite.md at 1f224da
from datetime import timedelta

from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import (
    CompletionDeadline,
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    TemporalMapper,
)

# "eu|2026-03-10", "us|2026-03-10", "apac|2026-03-10" -> one run for "2026-03-10" when all three
# regions have sent the day, or from 2026-03-11T06:00Z on with at least two of them
schedule = PartitionedAssetTimetable(
    assets=Asset("regional_daily_sales"),
    default_partition_mapper=DimensionRollupMapper(
        upstream_mapper=CompositeKeyMapper(["region", "day"], {"day": TemporalMapper(Day())}, output=["day"]),
        window=DimensionWindow(region=["eu", "us", "apac"]),
        wait_policy=CompletionDeadline(timedelta(hours=6), min_count=2),
    ),
)

# -- block 4 of docs/composite.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionFanOutMapper,
    DimensionWindow,
    Hour,
    TemporalMapper,
    TemporalWindow,
)

# "eu|2026-03-10" -> 24 runs, "eu|2026-03-10T00" … "eu|2026-03-10T23"
schedule = PartitionedAssetTimetable(
    assets=Asset("regional_daily_plan"),
    default_partition_mapper=DimensionFanOutMapper(
        upstream_mapper=CompositeKeyMapper(["region", "day"], {"day": TemporalMapper(Day())}),
        window=DimensionWindow(day=TemporalWindow(Hour())),
    ),
)
