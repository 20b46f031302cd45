"""
The commands of ``airflow-partitions`` and ``airflow partition-tools``: one module per command.

Each module holds the command's frozen request (what it asks a
:class:`~airflow_partitions.tools.source.Source`), its arguments, its text formatter and its
handler, and ends with its :class:`~airflow_partitions.tools.commands.base.Command`:
:mod:`.explain`, :mod:`.check`, :mod:`.status`, :mod:`.backfill` (its text in
:mod:`.backfill_text`), :mod:`.requeue`, :mod:`.discard`, :mod:`.clean`. What they share:
:mod:`.base` (exit codes, the request type, ``--api-url``) and :mod:`.text` (wrapping and
counting for 120 columns). :mod:`airflow_partitions.tools.cli` builds
the parsers from them; the REST routes (:mod:`airflow_partitions.tools.ui.commands`) build the
same requests from query parameters.
"""
