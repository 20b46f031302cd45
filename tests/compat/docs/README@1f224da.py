# -- block 1 of README.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable

from airflow_partitions import (
    BusinessDayWindow,
    Month,
    PrefixStripMapper,
    TemporalMapper,
    TemporalRollupMapper,
)

# "eu::2026-03-10" -> a consumer run with partition_key "2026-03-10"
PartitionedAssetTimetable(assets=Asset("eu_sales"), default_partition_mapper=PrefixStripMapper("eu"))

# daily keys -> one run per month, once the month's Monday-to-Friday keys have all arrived;
# a weekend key ("2026-03-07") is refused when it arrives (audit-logged), never held
PartitionedAssetTimetable(
    assets=Asset("daily_sales"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(Month()), window=BusinessDayWindow()
    ),
)
