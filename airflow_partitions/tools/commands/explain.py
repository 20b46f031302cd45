"""
``explain KEY``: what a partition mapper does with one key (or, ``--downstream``, what a key waits for).

The mapper comes from an expression (``--mapper``), a Dag folder (``--dag-folder``), or the
deployment's serialized Dag: the database (``--from-db``) or ``--api-url``, which ask
:class:`ExplainRequest` of a source.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, ClassVar

from airflow_partitions.tools.commands.base import (
    API_ARGS,
    FOUND,
    JSON_ARG,
    OK,
    Argument,
    Command,
    Opener,
    Request,
    UsageError,
    quiet,
    reading,
    show,
)
from airflow_partitions.tools.commands.text import count, listed, terminal, wrap


@dataclass(frozen=True)
class ExplainRequest(Request):
    """
    A key under the mapper a Dag's serialized Dag holds: ``ExplainRequest("weather_jfk", "2013-03-10T05")``.

    *asset* names the asset (name or URI) if the Dag reads several; *downstream*: *key* is a
    downstream key, and the answer lists what it waits for.
    """

    ROUTE: ClassVar[str] = "explain"

    dag_id: str
    key: str
    asset: str | None = None
    downstream: bool = False

    @staticmethod
    def answer_type() -> type:
        """Return :class:`~airflow_partitions.tools.explanation.Explanation`."""
        from airflow_partitions.tools.explanation import Explanation

        return Explanation

    def read(self, session: Any) -> Any:
        """
        Return the :class:`~airflow_partitions.tools.explanation.Explanation` of the key, read on *session*.

        *session* ``None``: one of its own (read-only).

        :raises UnknownDag: as :meth:`mapper`.
        :raises UnknownAsset: as :meth:`mapper`.
        :raises UsageError: as :meth:`mapper`; or for *downstream* under a mapper that is no rollup.
        """
        from airflow_partitions.tools import explain

        with reading(session) as opened:
            return explain(self.mapper(opened), self.key, downstream=self.downstream)

    def mapper(self, session: Any) -> Any:
        """
        Return the mapper the Dag's serialized Dag holds for the asset (deserialized, as the scheduler's).

        :raises UnknownDag: naming the Dag, if it is unknown or reads no assets
            (:func:`~airflow_partitions.tools.state.serialized.consumer_timetable`).
        :raises UnknownAsset: if it does not read *asset*
            (:func:`~airflow_partitions.tools.loading.chosen_asset`).
        :raises UsageError: if it reads several assets and *asset* is not given.
        """
        from airflow_partitions.tools.loading import chosen_asset
        from airflow_partitions.tools.state.serialized import consumer_timetable

        timetable, assets = consumer_timetable(self.dag_id, session, needs="assets")
        name, uri = chosen_asset(self.dag_id, assets, self.asset)
        return timetable.get_partition_mapper(name=name, uri=uri)


ARGUMENTS: list[Argument] = [
    (("key",), {"help": "the partition key: upstream (default) or, with --downstream, downstream"}),
    (("--mapper",), {"help": "a mapper as a Python expression (airflow_partitions and airflow.sdk names)"}),
    (("--dag-folder",), {"help": "a Dag folder (or file), loaded as the dag-processor does"}),
    (("--from-db",), {"action": "store_true", "help": "read --dag from the metadata database (read-only)"}),
    (("--dag",), {"help": "the consumer Dag id (with --dag-folder, --from-db or --api-url)"}),
    (("--asset",), {"help": "the asset name or URI the Dag reads (if it reads several)"}),
    (("--downstream",), {"action": "store_true", "help": "KEY is a downstream key: list what it waits for"}),
    JSON_ARG,
    *API_ARGS,
]

EXAMPLES = """\
examples:
  airflow-partitions explain --mapper 'TemporalRollupMapper(upstream_mapper=TemporalMapper(Day(timezone="America/New_York"), input_timezone="UTC"), window=TemporalWindow(Hour()))' 2026-03-08T05
  airflow-partitions explain --dag-folder example_dags --dag weather_local_day_jfk 2013-03-10T05
  airflow-partitions explain --dag-folder example_dags --dag weather_local_day_jfk --downstream 2013-03-10
  airflow-partitions explain --from-db --dag weather_local_day_jfk --asset weather_jfk_hourly 2013-03-10T05 --json

exit codes: 0 mapped (and counted), 1 refused or never counted, or the Dag or asset is unknown (or, with
  --api-url, too little access), 2 usage error"""  # noqa: E501 (commands)

#: What a key sent again for a period that ran does, per rerun policy (``explain``'s "sent again" line).
RERUN_MEANING = {
    "hold": "hold: a key for the period after it ran opens a pending run beside the run (discard removes it)",
    "refresh": "refresh: a key for the period after it ran fires a run at once with the keys sent again",
    "ignore": "ignore: a key for the period after it ran is dropped",
}


def run(args: argparse.Namespace, source: Opener) -> int:
    """Handle ``explain``: print what the mapper does with the key; exit 1 if refused or never counted."""
    sources = [bool(args.mapper), bool(args.dag_folder), bool(args.from_db), bool(args.api_url)]
    if sum(sources) != 1 or (args.mapper and args.dag) or (not args.mapper and not args.dag):
        raise UsageError(
            "pass --mapper EXPR, or --dag ID with one of --dag-folder PATH, --from-db and --api-url URL."
        )
    if args.mapper or args.dag_folder:  # worked out here; --from-db and --api-url: by the source
        from airflow_partitions.tools import consumer_mappers, explain, load_mapper
    if args.mapper:
        explanation = explain(load_mapper(args.mapper), args.key, downstream=args.downstream)
    elif args.dag_folder:
        with quiet():
            mapper = consumer_mappers(args.dag_folder).consumer(args.dag, args.asset).mapper
        explanation = explain(mapper, args.key, downstream=args.downstream)
    else:
        with quiet():
            explanation = source().read(
                ExplainRequest(args.dag, args.key, asset=args.asset, downstream=args.downstream)
            )
    show(explanation, format_explanation, as_json=args.json)
    return OK if explanation.ok else FOUND


def format_explanation(explanation: Any) -> str:
    """Return an :class:`~airflow_partitions.tools.Explanation` as text for a 120-column terminal."""
    e = explanation
    targets = ", ".join(repr(k.key) for k in e.keys[:5]) + (" …" if len(e.keys) > 5 else "")
    if e.downstream:
        lines = [f"{e.mapper}: downstream key {e.key!r}"]
    else:
        lines = [f"{e.mapper}: {e.key!r} → {targets or '(none)'}"]
    if e.refused:
        lines.append(wrap("REFUSED", e.refused))
    if e.never_counts:
        lines.append(wrap("NEVER COUNTS", e.never_counts))
    if e.counts_as:
        both = " and ".join([e.counts_as, *e.also_counts_as])
        lines.append(
            wrap("counts as", both + (" (both occurrences of a repeated hour)" if e.also_counts_as else ""))
        )
    if e.fan_out:
        f = e.fan_out
        verdict = "within" if f["count"] <= f["cap"] else "OVER"
        lines.append(
            wrap("fan-out", f"{f['count']} keys, {verdict} the cap of {f['cap']} ({f['cap_source']})")
        )
    if len(e.keys) > 1 and all(k.waits_for is None for k in e.keys):  # a fan-out: one line per field
        lines.append(wrap("keys", listed([k.key for k in e.keys])))
        dates = dict.fromkeys((e.keys[0].partition_date, e.keys[-1].partition_date))
        lines.append(wrap("partition_date", " … ".join(d or "(none)" for d in dates)))
        return "\n".join(lines)
    for k in e.keys:
        if len(e.keys) > 1:
            lines.append(f"  {terminal(k.key, lines=False)}")
        lines.append(wrap("partition_date", k.partition_date or "(none)"))
        lines.extend(_members(k.members or ()))  # which stores it awaits, before the keys they make
        if k.waits_for is not None:
            lines.append(
                wrap("waits for", f"{len(k.waits_for)} keys under {k.wait_policy}: {listed(k.waits_for)}")
            )
        if k.rerun_policy:
            # Under a deadline, the pending run a key opens after the run fires at its deadline.
            deadline = k.rerun_policy == "hold" and k.fires_at is not None
            meaning = RERUN_MEANING[k.rerun_policy] + ("; its deadline then fires it" if deadline else "")
            lines.append(wrap("sent again", meaning))
        if k.closes_at:
            lines.append(wrap("closes at", k.closes_at))
        if k.late_at:
            lines.append(wrap("late at", f"{k.late_at} without a successful run (expected_within)"))
        if k.fires_at:
            lines.append(wrap("fires at", f"{k.fires_at} with at least {count(k.needed, 'key')}"))
            lines.append(wrap("", f"{k.fires_at_below_minimum} with fewer (and at least one)"))
    return "\n".join(lines)


def _members(members: Any) -> list[str]:
    """Return the lines of the members a downstream key awaits, per dimension: ``stores  4 awaited …``."""
    lines = []
    for m in members:
        read = f", read {m['read_at']}" if m["read_at"] else ""
        group = f" of {m['group']}" if m["group"] else ""
        lines.append(
            wrap(
                f"{m['dimension']}s",
                f"{len(m['awaited'])} awaited{group} ({m['source']}{read}): {listed(m['awaited'])}",
            )
        )
        for d in m["dated"]:
            span = " ".join(f"{w} {d[f]}" for w, f in (("from", "start"), ("until", "end")) if f in d)
            state = "awaited" if d["awaited"] else f"not awaited by the period beginning {m['period_begins']}"
            lines.append(wrap("", f"{d['value']}: {span} (end exclusive), {state}"))
    return lines


COMMAND = Command(
    "explain",
    "explain what a partition mapper does with one key",
    "Show where an upstream key goes (downstream keys, partition_date, whether a rollup counts it or the "
    "refusal Airflow would audit-log, what its period waits for, a fan-out against its cap), or with "
    "--downstream what a downstream key waits for. The mapper comes from an expression, a Dag folder or "
    "the metadata database, after Airflow's serialization round trip.",
    EXAMPLES,
    ARGUMENTS,
    run,
    (ExplainRequest,),
)
