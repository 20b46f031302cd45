"""
What the state reader keeps between reads, and how it knows a kept answer still holds.

Apart from the readers (:mod:`airflow_partitions.tools.state`), which read Airflow's rows:

- :mod:`~airflow_partitions.tools.state.kept.cache`: what is kept while a Dag's fingerprint
  holds, in the process and in the store; the tools' only module-level state (memos, the
  metrics' cursor);
- :mod:`~airflow_partitions.tools.state.kept.fingerprint`: what moves whenever a Dag's runs or
  pending runs do, read from Airflow's indexes;
- :mod:`~airflow_partitions.tools.state.kept.store`: a SQLite file per metadata database of answers
  kept across processes, keyed by everything they depend on;
  :mod:`~airflow_partitions.tools.state.kept.uses` each key's last day of use;
  :mod:`~airflow_partitions.tools.state.kept.store_faults` a damaged or unusable file, said once;
- :mod:`~airflow_partitions.tools.state.kept.answers`: what a Dag's mappers answer, from the store;
- :mod:`~airflow_partitions.tools.state.kept.mirror`: a copy of Airflow's pending runs in the
  store's file, kept in step by id; :mod:`~airflow_partitions.tools.state.kept.key_stamps` the open
  runs' key-log stamps, :mod:`~airflow_partitions.tools.state.kept.gaps` the ids both read again,
  :mod:`~airflow_partitions.tools.state.kept.moments` the newest snapshot it synced from.

Set ``AIRFLOW_PARTITIONS_CACHE=off`` to read everything from the database (the differential test
compares both ways).
"""
