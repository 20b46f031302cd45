# -- block 1 of docs/namespace.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import PrefixStripMapper

schedule = PartitionedAssetTimetable(
    assets=Asset("weather_jfk_landing"),
    default_partition_mapper=PrefixStripMapper("jfk"),  # "jfk::2013-03-10" -> "2013-03-10"
)
