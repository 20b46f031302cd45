# -- block 1 of docs/cli.md at 1f224da
from airflow.sdk import Asset, task

from airflow_partitions import example_keys

hourly = Asset("weather_hourly")


@task(outlets=[example_keys(hourly, ["2013-03-10T05", "2013-03-10T06"])])
def land(outlet_events=None): ...

# -- block 2 of docs/cli.md at 1f224da
from airflow_partitions.inspect import check, consumer_mappers, explain, load_mapper

explain(load_mapper("TemporalMapper(Day())"), "2026-03-10T09:15Z").keys[0].key  # '2026-03-10'
mapper = consumer_mappers("example_dags").consumer("weather_local_day_jfk").mapper
[f for f in check("example_dags") if f.severity == "error"]  # []
