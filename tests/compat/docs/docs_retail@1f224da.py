# -- block 1 of docs/retail.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import RetailMonth, RetailWeek, TemporalMapper, TemporalRollupMapper, TemporalWindow

# weekly keys ("R2025-W05" … "R2025-W09") -> one run for retail March, "R2025-M02"
schedule = PartitionedAssetTimetable(
    assets=Asset("weekly_sales"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(RetailMonth()),  # pattern="4-5-4"
        window=TemporalWindow(RetailWeek()),  # 4 or 5 weeks (5 for the last month of a 53-week year)
    ),
)
