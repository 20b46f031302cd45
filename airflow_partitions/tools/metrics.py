"""
Partition metrics in Prometheus' text format: what ``GET /partitions/metrics`` serves.

Per partitioned Dag (those the caller may read), from the state reader
(:mod:`airflow_partitions.tools.state`), so a partition counted ``late`` here is the one the
Partitions view and ``status`` show late:

- ``airflow_partitions_partitions{dag_id,state}`` (gauge): its partitions by state, every state
  of :data:`~airflow_partitions.tools.state.STATES` (0 when none), as the view counts them;
- ``airflow_partitions_late{dag_id}`` (gauge): partitions late now (their period ended longer ago
  than their mapper's ``expected_within`` and their latest Dag run has not succeeded);
- ``airflow_partitions_oldest_pending_age_seconds{dag_id}`` (gauge): how long ago its oldest
  pending partitioned Dag run was opened, in seconds (0 when it has none);
- ``airflow_partitions_ran_incomplete{dag_id}`` (gauge): partitions whose runs succeeded without
  every key they awaited (fired by a :class:`~airflow_partitions.CompletionDeadline`);
- ``airflow_partitions_refused_keys_total{dag_id,reason}`` (counter): upstream keys its mappers
  refused on arrival (Airflow's audit-log rows ``failed to map partition_key``), by reason:
  ``outside_calendar`` (the rule at work: a Saturday into a business-day month), ``other_member``
  (a member the window does not list), ``mapping_error`` (a key the mapper cannot read, or any
  other error). Counted by this process from the rows it has read, so it never goes down while
  the process lives; a restarted api-server counts the rows that are left again (Prometheus
  reads that as a counter reset);
- ``airflow_partitions_blocked{dag_id}`` (gauge): its pending partitioned Dag runs beyond the 500
  oldest of the deployment that the scheduler evaluates per loop (not evaluated this loop);
- ``airflow_partitions_members_broken{dag_id,variable}`` (gauge): 1 while an Airflow Variable its
  rollups read members from cannot give them (missing, not JSON, a bad entry, a member without
  its group): its keys are refused and its pending runs wait; a series only while it is broken;
- ``airflow_partitions_warming{dag_id}`` (gauge): 1 while the api-server reads the Dag for the
  first time in the background after an install or upgrade (:mod:`~airflow_partitions.tools.
  warming`): then the Dag has no other series (none is known yet), else 0.

Label values are escaped as the format requires (backslash, double quote, line feed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from airflow_partitions.tools.state import STATES, ConsumerDag, Refusal, consumer_dags
from airflow_partitions.tools.state.audit_log import refusals_after
from airflow_partitions.tools.state.database import engine_of
from airflow_partitions.tools.state.kept import cache
from airflow_partitions.tools.state.pending import oldest_pending, starved_counts

#: The media type of Prometheus' text exposition format, version 0.0.4.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Each metric: its type, help text and labels, in the order they are written.
METRICS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "airflow_partitions_partitions": (
        "gauge",
        "Partitions of a partitioned Dag by state, as the Partitions view counts them.",
        ("dag_id", "state"),
    ),
    "airflow_partitions_late": (
        "gauge",
        "Partitions without a successful Dag run though their period ended over expected_within ago.",
        ("dag_id",),
    ),
    "airflow_partitions_oldest_pending_age_seconds": (
        "gauge",
        "Seconds since the Dag's oldest pending partitioned Dag run was opened (0: none).",
        ("dag_id",),
    ),
    "airflow_partitions_ran_incomplete": (
        "gauge",
        "Partitions whose Dag runs succeeded without every upstream key they awaited.",
        ("dag_id",),
    ),
    "airflow_partitions_refused_keys_total": (
        "counter",
        "Upstream keys the Dag's mappers refused on arrival (failed to map partition_key), by reason.",
        ("dag_id", "reason"),
    ),
    "airflow_partitions_blocked": (
        "gauge",
        "Pending partitioned Dag runs beyond the 500 oldest the scheduler evaluates per loop.",
        ("dag_id",),
    ),
    "airflow_partitions_members_broken": (
        "gauge",
        "1 while a Variable the Dag's rollups read members from is broken: keys refused, pending runs wait.",
        ("dag_id", "variable"),
    ),
    "airflow_partitions_warming": (
        "gauge",
        "1 while the Dag is read for the first time after an install or upgrade: no other series of it yet.",
        ("dag_id",),
    ),
}

#: The values of the ``reason`` label of refused keys.
REASONS = ("outside_calendar", "other_member", "mapping_error")


def reason_of(refusal: Refusal) -> str:
    """Return the ``reason`` label of a refused key (:data:`REASONS`)."""
    if refusal.other_member:
        return "other_member"
    return "outside_calendar" if refusal.expected else "mapping_error"


def refused_counts(session: Any) -> Counter[tuple[str, str]]:
    """
    Return the keys refused on arrival so far, by (Dag id, reason): only rows not read before are read.

    The audit-log rows of refused keys are counted once per process, from the last row counted on
    (by id, :data:`~airflow_partitions.tools.state.kept.cache.REFUSED`), so each scrape reads only the
    rows written since the previous one.
    """
    database = str(engine_of(session).url)
    last, counts = cache.REFUSED.get(database, (0, Counter()))
    counts = Counter(counts)
    for row_id, refusal in refusals_after(session, last):
        if refusal.dag_id is not None:
            counts[refusal.dag_id, reason_of(refusal)] += 1
        last = row_id
    cache.REFUSED[database] = (last, counts)
    return counts


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _format(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def exposition(samples: Mapping[str, Iterable[tuple[tuple[str, ...], float]]]) -> str:
    """
    Return *samples* (metric name to ``(label values, value)`` pairs) in Prometheus' text format.

    Each metric of :data:`METRICS` gets its ``# HELP`` and ``# TYPE`` lines, then one line per
    sample: ``airflow_partitions_late{dag_id="daily_sales"} 1``.
    """
    lines = []
    for name, (kind, text, labels) in METRICS.items():
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
        for values, value in samples.get(name, ()):
            pairs = ",".join(f'{label}="{_escaped(v)}"' for label, v in zip(labels, values, strict=True))
            lines.append(f"{name}{{{pairs}}} {_format(value)}")
    return "\n".join(lines) + "\n"


def metrics_text(
    session: Any,
    *,
    only: Collection[str] | None = None,
    now: datetime | None = None,
    dags: list[ConsumerDag] | None = None,
) -> str:
    """
    Return the metrics of the partitioned Dags (of *only*, if given) in Prometheus' text format.

    One read of the overview (:func:`~airflow_partitions.tools.state.consumer_dags` with its
    summaries: grouped queries for all the Dags, kept while their rows hold), two grouped queries
    on the pending runs, and the audit-log rows written since the last scrape.

    :param session: An Airflow ORM session.
    :param now: The time the oldest pending runs' ages are measured at (UTC); the clock if omitted.
    :param dags: The Dags read already with their summaries, some maybe warming
        (:func:`~airflow_partitions.tools.warming.summed_dags`); read here if omitted.
    """
    now = now or datetime.now(UTC)
    if dags is None:
        dags = consumer_dags(session, summary=True, only=only)
    samples: dict[str, list[tuple[tuple[str, ...], float]]] = {name: [] for name in METRICS}
    samples["airflow_partitions_warming"] = [((dag.dag_id,), int(dag.warming)) for dag in dags]
    dags = [dag for dag in dags if not dag.warming]
    dag_ids = [dag.dag_id for dag in dags]
    oldest = oldest_pending(session, dag_ids) if dag_ids else {}
    beyond = starved_counts(session, dag_ids) if dag_ids else Counter()
    refused = refused_counts(session)
    for dag in dags:
        one = (dag.dag_id,)
        samples["airflow_partitions_partitions"] += [
            ((dag.dag_id, state), dag.states.get(state, 0)) for state in STATES
        ]
        samples["airflow_partitions_late"].append((one, dag.late))
        opened = oldest.get(dag.dag_id)
        age = max(0.0, (now - opened).total_seconds()) if opened is not None else 0
        samples["airflow_partitions_oldest_pending_age_seconds"].append((one, age))
        samples["airflow_partitions_ran_incomplete"].append((one, dag.states.get("ran incomplete", 0)))
        samples["airflow_partitions_refused_keys_total"] += [
            ((dag.dag_id, reason), refused[dag.dag_id, reason]) for reason in REASONS
        ]
        samples["airflow_partitions_blocked"].append((one, beyond[dag.dag_id]))
        samples["airflow_partitions_members_broken"] += [
            ((dag.dag_id, problem.variable), 1) for problem in dag.members_problems
        ]
    return exposition(samples)
