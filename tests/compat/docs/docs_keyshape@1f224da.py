# -- block 1 of docs/keyshape.md at 1f224da
from airflow_partitions import RegexMapper

RegexMapper(r"exports/(?P<region>[a-z]+)/(?P<day>\d{8})\.csv", "{region}|{day}")
# "exports/eu/20260310.csv" -> "eu|20260310"

# -- block 2 of docs/keyshape.md at 1f224da
from airflow.sdk import Asset, PartitionedAssetTimetable
from airflow_partitions import LookupMapper

# store -> region: "store-002" -> a run for "eu"
stores = LookupMapper({"store-001": "eu", "store-002": "eu", "store-101": "us"})

# region -> stores, a fan-out: "eu" -> two runs, "store-001" and "store-002"
regions = LookupMapper({"eu": ["store-001", "store-002"], "us": ["store-101"]})

schedule = PartitionedAssetTimetable(assets=Asset("store_sales"), default_partition_mapper=stores)
