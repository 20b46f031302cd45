# -- block 1 of docs/index.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import PrefixStripMapper
