"""
Dags of the member integration tests (test_members.py): stores that report daily, grouped into regions.

Eight stores in two regions (store-001 to store-004 in nsw, store-005 to store-008 in vic), and
store-009, a vic store open from 2026-04-06.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, PartitionedAtRuntime, task

from airflow_partitions import (
    CompositeKeyMapper,
    Day,
    DimensionRollupMapper,
    DimensionWindow,
    LookupMapper,
    Member,
    TemporalMapper,
    VariableMembers,
)

#: As integration_dags.RETRY_TRANSIENT_FAILURES: tasks retry the SQLite lock waits of a loaded machine.
RETRY_TRANSIENT_FAILURES = {"retries": 2, "retry_delay": timedelta(seconds=5)}
SYDNEY_DAY = TemporalMapper(Day(timezone="Australia/Sydney"))
STORE_TO_REGION = {f"store-00{i}": "nsw" if i <= 4 else "vic" for i in range(1, 9)}

store_days = Asset("it_store_days")
vic_store_days = Asset("it_vic_store_days")


@task
def record_partition(dag_run=None) -> str:
    """Return the run's partition key, for the test to read back as XCom."""
    return dag_run.partition_key


# A producer of store days in batches: one asset event per key of the run's conf ({"keys": [...]}).
with DAG(
    "it_produce_store_days",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAtRuntime(),
    catchup=False,
):

    @task(outlets=[store_days])
    def add_keys(outlet_events=None, dag_run=None) -> int:
        """Emit the run's keys on it_store_days, in one task: a batch."""
        keys = dag_run.conf["keys"]
        outlet_events[store_days].add_partitions(keys)
        return len(keys)

    add_keys()

# One Dag for every region: a store's day rolls up into its region's day through the lookup.
with DAG(
    "it_region_day_by_lookup",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAssetTimetable(
        assets=store_days,
        default_partition_mapper=DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(
                ["store", "day"], {"store": LookupMapper(STORE_TO_REGION), "day": SYDNEY_DAY}
            ),
            window=DimensionWindow(
                store=[*STORE_TO_REGION, Member("store-009", start="2026-04-06", group="vic")]
            ),
        ),
    ),
    catchup=False,
):
    record_partition()

# vic's days, its stores listed in the Airflow Variable it_vic_stores (set by the test).
with DAG(
    "it_vic_day_from_variable",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAssetTimetable(
        assets=vic_store_days,
        default_partition_mapper=DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": SYDNEY_DAY}, output=["day"]),
            window=DimensionWindow(store=VariableMembers("it_vic_stores")),
        ),
    ),
    catchup=False,
):
    record_partition()

region_store_days = Asset("it_region_store_days")

# Each region's days, its stores and their regions listed in the Airflow Variable it_region_stores
# ([{"value": "s001", "group": "north"}, ...], set by the test), which the test changes while days
# are pending: a store moves, loses its group, the Variable is malformed or empty, and is fixed.
with DAG(
    "it_region_day_from_variable",
    default_args=RETRY_TRANSIENT_FAILURES,
    schedule=PartitionedAssetTimetable(
        assets=region_store_days,
        default_partition_mapper=DimensionRollupMapper(
            upstream_mapper=CompositeKeyMapper(["store", "day"], {"day": SYDNEY_DAY}),
            window=DimensionWindow(store=VariableMembers("it_region_stores")),
        ),
    ),
    catchup=False,
):
    record_partition()
