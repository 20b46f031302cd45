"""
Notifications: call any Airflow notifier when a partitioned Dag run ran without all its upstream keys.

A :class:`~airflow_partitions.CompletionDeadline` fires a rollup's run at its deadline with what
has arrived. :class:`IncompleteRunNotifier` wraps an Airflow notifier (``airflow.sdk.BaseNotifier``:
``SmtpNotifier``, ``SlackNotifier``, ...) so that it is called for such runs only, with the partition
key, the keys the run counted and the keys it missed in its template context
(``incomplete_run``, an :class:`IncompleteRun`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from airflow.partition_mappers.base import is_rollup
from airflow.sdk import BaseNotifier

from airflow_partitions.grains.keys import terminal
from airflow_partitions.task import _from_context, assets_of, missing_upstream_keys, run_mapper


@dataclass(frozen=True)
class IncompleteRun:
    """
    A partitioned Dag run that ran without all its upstream keys: what it counted and what it missed.

    For the run of ``2026-01-05`` of a day-of-hours rollup on asset ``hourly`` whose hours 03 and 17
    never came: ``partition_key="2026-01-05"``, ``ran_with={"hourly": ("2026-01-05T00", …)}`` (22
    keys) and ``missing={"hourly": ("2026-01-05T03", "2026-01-05T17")}``. Keys are spelled as the
    rollup awaits them (``to_upstream``), sorted; assets by name, those whose mapper is a rollup.
    ``str()`` of it is a one-line summary for a message.
    """

    dag_id: str
    run_id: str
    partition_key: str
    #: Asset name to the upstream keys the run counted.
    ran_with: dict[str, tuple[str, ...]]
    #: Asset name to the upstream keys it awaited and never received (only assets missing some).
    missing: dict[str, tuple[str, ...]]

    @property
    def ran_with_total(self) -> int:
        """How many upstream keys the run counted, over its rollup assets."""
        return sum(map(len, self.ran_with.values()))

    @property
    def missing_total(self) -> int:
        """How many awaited upstream keys the run missed, over its rollup assets."""
        return sum(map(len, self.missing.values()))

    def __str__(self) -> str:
        """Return ``"it_day 2026-01-05 ran with 22 of 24 keys; missing from hourly: 2026-01-05T03, …"``."""
        missing = "; ".join(
            f"missing from {asset}: {', '.join(keys)}" for asset, keys in self.missing.items()
        )
        awaited = self.ran_with_total + self.missing_total
        return (
            f"{self.dag_id} {self.partition_key} ran with {self.ran_with_total} of {awaited} keys; {missing}"
        )


def incomplete_run(context: Any) -> IncompleteRun | None:
    """
    Return what the Dag run of *context* counted and missed, if it ran without all its upstream keys.

    ``None`` for a run that had every key it awaits, a run of no partition key, and a run that
    received no asset event at all (triggered by hand with a partition key: it waited for
    nothing). Reads the run's triggering asset events and the Dag's rollups (as
    :func:`~airflow_partitions.missing_upstream_keys` does); Airflow's ``RollupMapper`` counts
    keys by spelling, ours as the members they name.

    :param context: An Airflow context: a task's, or a Dag callback's (``on_success_callback``).
    :raises ValueError: if *context* lacks ``dag``, ``dag_run`` or ``triggering_asset_events``.
    """
    owner = "IncompleteRunNotifier"
    run = _from_context(context, "dag_run", owner=owner)
    dag = _from_context(context, "dag", owner=owner)
    events = _from_context(context, "triggering_asset_events", owner=owner)
    key = getattr(run, "partition_key", None)
    condition = getattr(dag.timetable, "asset_condition", None)
    if not key or condition is None or not any(events.get(asset) for asset in assets_of(condition)):
        return None
    ran_with: dict[str, tuple[str, ...]] = {}
    missing: dict[str, tuple[str, ...]] = {}
    for asset in assets_of(condition):
        mapper = run_mapper(context, asset, owner=owner)
        if not is_rollup(mapper):
            continue
        lacking = missing_upstream_keys(context, asset)
        ran_with[asset.name] = tuple(sorted(set(mapper.to_upstream(key)) - set(lacking)))
        if lacking:
            missing[asset.name] = tuple(lacking)
    if not missing:
        return None
    return IncompleteRun(dag.dag_id, run.run_id, key, ran_with, missing)


class IncompleteRunNotifier(BaseNotifier):
    """
    Call an Airflow notifier once for each partitioned Dag run that ran without all its upstream keys.

    Put it on the consumer Dag as both ``on_success_callback`` and ``on_failure_callback`` (a run
    ends once, in one of the two states, so it is called once per run)::

        incomplete = IncompleteRunNotifier(
            SmtpNotifier(
                to="data-team@example.com",
                from_email="airflow@example.com",
                subject="{{ incomplete_run.partition_key }} of {{ dag.dag_id }} ran without "
                "{{ incomplete_run.missing_total }} keys",
                html_content="{{ incomplete_run }}",
            )
        )
        with DAG("daily_sales", schedule=PartitionedAssetTimetable(...), on_success_callback=incomplete,
                 on_failure_callback=incomplete):
            ...

    When the run ends, Airflow calls it (in the dag-processor, as every Dag callback) with the
    run's context. If the run ran incomplete (:func:`incomplete_run`: a
    :class:`~airflow_partitions.CompletionDeadline` fired it with keys missing), the wrapped
    notifier is called with that context plus ``incomplete_run`` (an :class:`IncompleteRun`), so
    its templated fields can name the partition, what it ran with and what it missed; a copy of it
    is rendered, each run afresh.
    Complete runs, runs without a partition key and runs that received no asset event call nothing.
    A run cleared and run again ends again, and is notified again.

    :param notifier: Any ``airflow.sdk.BaseNotifier`` (an instance), or a callable taking the context.
    :raises ValueError: at Dag parse, if *notifier* is not callable.
    """

    def __init__(self, notifier: Any) -> None:
        super().__init__()
        if not callable(notifier):
            raise ValueError(
                "IncompleteRunNotifier: notifier must be an Airflow notifier (an airflow.sdk.BaseNotifier "
                f"such as SmtpNotifier(...)) or a callable taking the context; got {notifier!r}."
            )
        self.notifier = notifier

    def notify(self, context: Any) -> None:
        """Call the wrapped notifier with ``incomplete_run`` in *context*, if the run ran incomplete."""
        found = incomplete_run(context)
        if found is None:
            return
        self.log.info("Partitioned Dag run ran incomplete, notifying: %s", terminal(str(found), lines=False))
        context["incomplete_run"] = found
        copy.copy(self.notifier)(context)
