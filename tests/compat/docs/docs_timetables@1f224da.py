# -- block 1 of docs/timetables.md at 1f224da
from airflow.sdk import DAG, Asset, task
from airflow_partitions import ScheduledRuntimePartitionTimetable

exports = Asset("weather_daily_export")

with DAG(
    "weather_daily_export",
    schedule=ScheduledRuntimePartitionTimetable("0 6 * * *", timezone="America/New_York"),
):

    @task(outlets=[exports])
    def export(outlet_events=None):
        ...  # find what arrived
        outlet_events[exports].add_partitions(["jfk::2013-03-10", "lga::2013-03-10"])

# -- block 2 of docs/timetables.md at 1f224da
from datetime import timedelta

from airflow_partitions import IntervalRuntimePartitionTimetable

schedule = IntervalRuntimePartitionTimetable(timedelta(minutes=15))

# -- block 3 of docs/timetables.md at 1f224da
from datetime import timedelta

from airflow_partitions import BusinessCalendar, BusinessDay, GrainPartitionTimetable

schedule = GrainPartitionTimetable(
    BusinessDay(BusinessCalendar(country="US", subdiv="NY"), timezone="America/New_York"),
    offset=-1,
    lag=timedelta(hours=6),
)

# -- block 4 of docs/timetables.md at 1f224da
from datetime import timedelta

from airflow_partitions import Day, FiscalQuarter, GrainPartitionTimetable, Hour, Minutes

# 15-minute slots, each processed 5 minutes after it ends: slot 09:00 runs at 09:20.
GrainPartitionTimetable(Minutes(15), lag=timedelta(minutes=5))

# Operations days from 06:00 to 06:00 New York time, run as each one ends (06:00 local).
GrainPartitionTimetable(Day(start_hour=6, timezone="America/New_York"))

# Fiscal quarters of a year starting in October, two days after each quarter ends:
# FY2026-Q4 (July-September 2026) runs on 2026-10-03 at 00:00.
GrainPartitionTimetable(FiscalQuarter(start_month=10), lag=timedelta(days=2))

# New York hours: the fall-back night has two 01:00 hours with two keys,
# 2026-11-01T01-04:00 (run at 06:00 UTC) and 2026-11-01T01-05:00 (run at 07:00 UTC).
GrainPartitionTimetable(Hour(timezone="America/New_York"))

# -- block 5 of docs/timetables.md at 1f224da
from datetime import datetime
from zoneinfo import ZoneInfo

from airflow_partitions import ExplicitPartitionTimetable

NY = ZoneInfo("America/New_York")
schedule = ExplicitPartitionTimetable(
    {
        "2026-10": datetime(2026, 11, 4, 18, tzinfo=NY),
        "2026-11": datetime(2026, 12, 3, 18, tzinfo=NY),
        "2026-12": datetime(2027, 1, 6, 18, tzinfo=NY),
    }
)
