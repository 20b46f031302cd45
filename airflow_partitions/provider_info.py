"""
Provider metadata, found through the ``apache_airflow_provider`` entry point.

Airflow calls :func:`get_provider_info` while its configuration is still initialising, so this
module must not import Airflow, directly or through :mod:`airflow_partitions`'s classes.
"""

from __future__ import annotations

from importlib.metadata import version


def get_provider_info() -> dict[str, object]:
    """
    Return this package's provider record, as ``airflow providers list`` shows it.

    The record follows Airflow's runtime ``provider_info.schema.json``: ``package-name`` must
    equal the distribution name (``airflow-partitions``) or Airflow refuses to load it.
    Its ``cli`` entry adds ``airflow partition-tools``
    (:func:`airflow_partitions.tools.cli.get_cli_commands`).
    The classes themselves are registered by :mod:`airflow_partitions.plugin`, not here.
    """
    return {
        "package-name": "airflow-partitions",
        "name": "Airflow Partitions",
        "description": (
            "Partition mappers, rollup and fan-out windows and partitioned timetables "
            "for Apache Airflow 3.3+."
        ),
        "versions": [version("airflow-partitions")],
        # `airflow partition-tools explain|check`; the function imports Airflow only when called.
        "cli": ["airflow_partitions.tools.cli.get_cli_commands"],
    }
