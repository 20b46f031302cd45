"""
The Partitions view inside Airflow's UI: a FastAPI app the plugin mounts at ``/partitions``.

- :mod:`~airflow_partitions.tools.ui.layout`: partitions laid out as a grid (pure functions);
- :mod:`~airflow_partitions.tools.ui.app`: the read-only JSON API and the page, guarded by Airflow's
  auth manager like Airflow's own API;
- :mod:`~airflow_partitions.tools.ui.commands`: the commands' routes (``airflow-partitions ...
  --api-url``), and the one redaction of refused keys;
- :mod:`~airflow_partitions.tools.ui.requests`: the commands' requests built from query parameters,
  and the one error mapping of the routes that answer them;
- ``static/``: the page (HTML, JavaScript, CSS; no build step).
"""
