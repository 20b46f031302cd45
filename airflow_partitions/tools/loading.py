"""
Where the tools find mappers: a Python expression, a Dag folder, or a metadata database.

What is explained and checked is what the scheduler runs: every Dag goes through Airflow's own
serialization round trip (``DagSerialization.to_dict`` then ``from_dict``), as the dag-processor
stores it and the scheduler reads it back.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from airflow_partitions.examples import declared_example_keys, forget_example_keys
from airflow_partitions.mapping import as_core
from airflow_partitions.task import assets_of, required_assets
from airflow_partitions.tools.errors import NotAConsumer, UnknownAsset, UsageError
from airflow_partitions.tools.samples import reads_assets

#: ``airflow.sdk`` names a mapper expression may use besides airflow-partitions' public names.
SDK_NAMES = (
    "AllowedKeyMapper",
    "ChainMapper",
    "DayWindow",
    "FanOutMapper",
    "FixedKeyMapper",
    "HourWindow",
    "IdentityMapper",
    "MinimumCount",
    "MonthWindow",
    "ProductMapper",
    "QuarterWindow",
    "RollupMapper",
    "SegmentWindow",
    "StartOfDayMapper",
    "StartOfHourMapper",
    "StartOfMonthMapper",
    "StartOfQuarterMapper",
    "StartOfWeekMapper",
    "StartOfYearMapper",
    "WaitForAll",
    "WeekWindow",
    "YearWindow",
)


#: A name a Dag file or an expression failed on: ``cannot import name 'X'``, ``name 'X' is not defined``.
_UNKNOWN_NAME = re.compile(r"cannot import name '(\w+)'|name '(\w+)' is not defined")


def did_you_mean(error: str) -> str:
    """
    Return ``"did you mean TemporalRollupMapper?"`` when *error* names an unknown class close to one we know.

    Known: the public names of ``airflow_partitions`` and the mappers, windows and policies of
    ``airflow.sdk`` (:data:`SDK_NAMES`). ``""`` when the error names none, or nothing is close.
    """
    import airflow_partitions

    found = _UNKNOWN_NAME.search(error)
    if found is None:
        return ""
    name = found[1] or found[2]
    close = difflib.get_close_matches(name, [*airflow_partitions.__all__, *SDK_NAMES], n=1, cutoff=0.75)
    if not close or close[0] == name:
        return ""
    where = "airflow_partitions" if close[0] in airflow_partitions.__all__ else "airflow.sdk"
    return f"did you mean {close[0]} (from {where})?"


def load_mapper(expression: str) -> Any:
    """
    Return the working (core) partition mapper a Python *expression* builds.

    Every public name of ``airflow_partitions`` and the mappers, windows and wait policies of
    ``airflow.sdk`` are in scope, and ``timedelta``: ``load_mapper('TemporalRollupMapper(
    upstream_mapper=TemporalMapper(Day()), window=TemporalWindow(Hour()))')``.
    ``airflow.sdk`` definitions (``RollupMapper(upstream_mapper=StartOfDayMapper(), window=DayWindow())``)
    are converted to the core classes the scheduler runs (:func:`~airflow_partitions._common.as_core`).

    :raises ValueError: naming the expression, if it does not parse, names something not in
        scope, raises (a mapper refusing its arguments: its message), or is not a partition mapper.
    """
    import airflow.sdk
    from airflow.partition_mappers.base import PartitionMapper

    import airflow_partitions

    scope: dict[str, Any] = {name: getattr(airflow.sdk, name) for name in SDK_NAMES}
    scope |= {name: getattr(airflow_partitions, name) for name in airflow_partitions.__all__}
    scope["timedelta"] = timedelta
    try:
        value = eval(expression, {"__builtins__": {}}, scope)  # a Dag author's own expression
        mapper = as_core(value, "partition_mapper")
    except Exception as err:
        hint = did_you_mean(str(err))
        # A mapper refusing its arguments has said what it expects; a malformed expression has not.
        expected = (
            "Expected a partition mapper such as 'TemporalMapper(Day())'."
            if isinstance(err, SyntaxError | NameError)
            else ""
        )
        message = f"mapper expression {expression!r}: {type(err).__name__}: {str(err).rstrip('.')}. "
        raise ValueError(
            (message + (hint[0].upper() + hint[1:] + " " if hint else "") + expected).rstrip()
        ) from None
    if not isinstance(mapper, PartitionMapper):
        raise ValueError(f"mapper expression {expression!r} builds {mapper!r}, not a partition mapper.")
    return mapper


@dataclass(frozen=True)
class Consumer:
    """One partitioned consumer: Dag *dag_id* reads asset *asset* (name) through *mapper* (core)."""

    dag_id: str
    asset: str
    uri: str
    mapper: Any
    #: The other assets the Dag's runs need too (``a & b``: ``b`` for ``a``'s consumer).
    needs_also: tuple[str, ...] = ()


@dataclass(frozen=True)
class Producer:
    """
    One producer of a partitioned asset: Dag *dag_id* writes *asset* (name) on *timetable*.

    *example_keys* are the keys its Dag file declares with :func:`~airflow_partitions.example_keys`;
    *retries*, the most retries of its tasks that write the asset (a retried or cleared task sends
    its keys again).
    """

    dag_id: str
    asset: str
    timetable: Any
    example_keys: tuple[str, ...] = ()
    retries: int = 0

    @property
    def at_runtime(self) -> bool:
        """Whether its tasks choose its keys (``PartitionedAtRuntime``, ours, or a plain schedule)."""
        return bool(getattr(self.timetable, "partitioned_at_runtime", False)) or not self.partitioned

    @property
    def partitioned(self) -> bool:
        """Whether its schedule is partitioned (else only ``add_partitions`` gives its events keys)."""
        tt = self.timetable
        return bool(getattr(tt, "partitioned", False) or getattr(tt, "partitioned_at_runtime", False))


@dataclass(frozen=True)
class DagFolder:
    """
    The partitioned consumers and producers of a Dag folder, its import errors (file -> error), its Dags.

    *dags* counts every Dag loaded, partitioned or not (0: the folder holds no Dag file).
    """

    consumers: tuple[Consumer, ...]
    producers: tuple[Producer, ...]
    import_errors: dict[str, str] = field(default_factory=dict)
    dags: int = 0

    def consumer(self, dag_id: str, asset: str | None = None) -> Consumer:
        """
        Return the consumer *dag_id* of *asset* (name or URI; optional if it reads one asset).

        :raises NotAConsumer: naming the Dag, if there is no such consumer (and a file of the folder
            that failed to import, which may hold it).
        :raises UnknownAsset: as :func:`chosen_asset`.
        :raises UsageError: as :func:`chosen_asset`.
        """
        read = [c for c in self.consumers if c.dag_id == dag_id]
        if not read:
            failed = ""
            if self.import_errors:
                file, error = next(iter(self.import_errors.items()))
                failed = (
                    f" {len(self.import_errors)} file(s) of the folder failed to import, which may hold it: "
                    f"{file}: {error.strip().splitlines()[-1]}"
                )
            raise NotAConsumer(
                f"Dag {dag_id!r}: is not a partitioned consumer here (expected a Dag scheduled on "
                f"PartitionedAssetTimetable).{failed}"
            )
        name, _ = chosen_asset(dag_id, [(c.asset, c.uri) for c in read], asset)
        return next(c for c in read if c.asset == name)


def chosen_asset(dag_id: str, assets: list[tuple[str, str]], asset: str | None) -> tuple[str, str]:
    """
    Return the ``(name, uri)`` of *assets* (what the Dag *dag_id* reads) that *asset* names: its name or URI.

    Without *asset*, the one asset the Dag reads. ``explain --asset`` in every mode (a Dag folder,
    the metadata database, ``--api-url``).

    :raises UnknownAsset: naming the Dag, *asset* and the assets it reads, if it reads no such asset.
    :raises UsageError: naming ``--asset`` and the assets it reads, if it reads several and *asset*
        is ``None``.
    """
    names = sorted(name for name, _ in assets)
    if asset is None:
        if len(assets) == 1:
            return assets[0]
        raise UsageError(f"Dag {dag_id!r}: reads partitioned assets {names}; pass one of them as --asset.")
    for name, uri in assets:
        if asset in (name, uri):
            return name, uri
    raise UnknownAsset(
        f"Dag {dag_id!r} reads no asset {asset!r}; it reads {names}: pass one of them as --asset "
        "(its name or URI)."
    )


def describe(dags: Iterable[Any], import_errors: dict[str, str] | None = None) -> DagFolder:
    """
    Return the consumers and producers of serialized Dags (``SerializedDAG``, as the scheduler reads them).

    A consumer is a Dag on a partitioned asset timetable; a producer is a Dag with an asset among
    its tasks' outlets, on a partitioned timetable or writing an asset a consumer reads (on any
    other schedule only its tasks' ``add_partitions`` give its events keys).
    """
    dags = list(dags)
    consumers = []
    for dag in dags:
        timetable = dag.timetable
        if reads_assets(timetable):
            required = required_assets(timetable.asset_condition)
            for asset in assets_of(timetable.asset_condition):
                if hasattr(asset, "name"):
                    mapper = timetable.get_partition_mapper(name=asset.name, uri=asset.uri)
                    also = tuple(sorted(required - {asset.name}))
                    consumers.append(Consumer(dag.dag_id, asset.name, asset.uri, mapper, also))
    read = {c.asset for c in consumers}
    producers = []
    for dag in dags:
        outlets = {a.name: a for task in dag.tasks for a in task.outlets or () if hasattr(a, "name")}
        for name, asset in sorted(outlets.items()):
            retries = max(
                (
                    t.retries or 0
                    for t in dag.tasks
                    if any(getattr(a, "name", None) == name for a in t.outlets or ())
                ),
                default=0,
            )
            keys = declared_example_keys(asset.name, asset.uri)
            producer = Producer(dag.dag_id, name, dag.timetable, keys, retries)
            if producer.partitioned or name in read:
                producers.append(producer)
    return DagFolder(tuple(consumers), tuple(producers), dict(import_errors or {}), len(dags))


def consumer_mappers(dag_folder: str | Path) -> DagFolder:
    """
    Load *dag_folder* as the dag-processor does and return its partitioned consumers and producers.

    The folder (or one Dag file) is parsed by Airflow's ``BundleDagBag`` (the folder on
    ``sys.path``, ``.airflowignore`` and safe mode as configured), then each Dag makes Airflow's
    serialization round trip: the mapper of each :class:`Consumer` is the one the scheduler
    runs. A Dag that fails to serialize (a class no plugin registers) is left out, its error in
    :attr:`DagFolder.import_errors` under its file, as the dag-processor reports it.

    :raises ValueError: if *dag_folder* does not exist, or holds a symbolic link back into itself
        (Airflow refuses to walk it, and so would the dag-processor).
    """
    from airflow.dag_processing.dagbag import BundleDagBag
    from airflow.serialization.serialized_objects import DagSerialization

    path = Path(dag_folder).resolve()
    if not path.exists():
        raise ValueError(f"Dag folder {str(dag_folder)!r} does not exist; expected a folder of Dag files.")
    forget_example_keys()
    try:
        bag = BundleDagBag(dag_folder=str(path), bundle_path=path if path.is_dir() else path.parent)
    except RuntimeError as err:  # Airflow's file discovery: "Detected recursive loop when walking ..."
        if "recursive loop" not in str(err):
            raise
        raise ValueError(
            f"Dag folder {str(dag_folder)!r} has a symbolic link back into itself, which Airflow refuses to "
            f"walk ({err}); expected a folder without such a loop: remove the link, or list it in the "
            "folder's .airflowignore."
        ) from None
    errors, dags = dict(bag.import_errors), []
    for dag_id, dag in sorted(bag.dags.items()):
        try:
            dags.append(DagSerialization.from_dict(DagSerialization.to_dict(dag)))
        except Exception as err:
            errors[dag.relative_fileloc or dag.fileloc or dag_id] = (
                f"Dag {dag_id!r}: {type(err).__name__}: {err}"
            )
    return describe(dags, errors)


def stored_dag(dag_id: str, *, session: Any = None) -> DagFolder:
    """
    Return the consumers and producers of the Dag *dag_id* as stored in the metadata database.

    Read-only, through Airflow's own session and ``SerializedDagModel`` (the deployment's
    ``airflow.cfg`` / ``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN``), or *session* if given.

    :raises UnknownDag: if no serialized Dag *dag_id* is stored
        (:func:`~airflow_partitions.tools.state.serialized.known_dag`).
    """
    from airflow.models.serialized_dag import SerializedDagModel

    from airflow_partitions.tools.state.serialized import known_dag

    if session is None:
        from airflow.utils.session import create_session

        with create_session() as new:
            return stored_dag(dag_id, session=new)
    known_dag(dag_id, session)
    stored = SerializedDagModel.get(dag_id, session=session)
    return describe([] if stored is None else [stored.dag])
