# -- block 1 of docs/fiscal.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import FiscalYear, Month, TemporalMapper, TemporalRollupMapper, TemporalWindow

# monthly keys ("2025-07" … "2026-06") -> one run for "FY2026" once all twelve have arrived
schedule = PartitionedAssetTimetable(
    assets=Asset("monthly_ledger"),
    default_partition_mapper=TemporalRollupMapper(
        upstream_mapper=TemporalMapper(FiscalYear(start_month=7)),  # July to June, named by end year
        window=TemporalWindow(Month()),
    ),
)
