"""The metadata database's URL found as Airflow finds it, without importing Airflow, or left to Airflow."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_partitions.tools.state.database import plain_url

PG = "postgresql+psycopg2://airflow:airflow@db.example.com/airflow"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty AIRFLOW_HOME, no AIRFLOW_CONFIG, no ``AIRFLOW__…`` variable."""
    import os

    for name in list(os.environ):
        if name.startswith("AIRFLOW__") or name == "AIRFLOW_CONFIG":
            monkeypatch.delenv(name)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    return tmp_path


def _config(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_airflows_default_is_the_sqlite_file_in_airflow_home(home: Path) -> None:
    assert plain_url() == f"sqlite:///{home}/airflow.db"


def test_the_environment_comes_first(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(home / "airflow.cfg", "[database]\nsql_alchemy_conn = sqlite:////elsewhere.db\n")
    monkeypatch.setenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", PG)
    assert plain_url() == PG


def test_the_config_file_in_airflow_home(home: Path) -> None:
    _config(home / "airflow.cfg", f"[core]\ndags_folder = /dags\n[database]\nsql_alchemy_conn = {PG}\n")
    assert plain_url() == PG


def test_airflow_config_names_another_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(home / "airflow.cfg", "[database]\nsql_alchemy_conn = sqlite:////not-this.db\n")
    other = _config(home / "other.cfg", f"[database]\nsql_alchemy_conn = {PG}\n")
    monkeypatch.setenv("AIRFLOW_CONFIG", str(other))
    assert plain_url() == PG


def test_variables_in_a_value_are_expanded(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_HOST", "db.example.com")
    monkeypatch.setenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", PG.replace("db.example.com", "${DB_HOST}"))
    assert plain_url() == PG


@pytest.mark.parametrize(
    "variable",
    [
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_CMD",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_SECRET",
        "AIRFLOW__CORE__SQL_ALCHEMY_CONN",
    ],
)
def test_a_command_a_secret_or_the_old_spelling_is_left_to_airflow(
    home: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "echo sqlite:////x.db")
    assert plain_url() is None


@pytest.mark.parametrize(
    "text",
    [
        "[database]\nsql_alchemy_conn_cmd = cat /run/secrets/db\n",
        f"[database]\nsql_alchemy_conn = {PG}\nsql_alchemy_schema = airflow\n",
        f'[database]\nsql_alchemy_conn = {PG}\nsql_alchemy_connect_args = {{"sslmode": "require"}}\n',
        "[database]\nsql_alchemy_conn = postgresql://u:p%%40ss@db/airflow\n",
    ],
    ids=["command", "schema", "connect args", "interpolation"],
)
def test_what_airflow_resolves_itself_in_the_file_is_left_to_it(home: Path, text: str) -> None:
    _config(home / "airflow.cfg", text)
    assert plain_url() is None


def test_engine_options_in_the_file_hold_with_a_url_from_the_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(home / "airflow.cfg", "[database]\nsql_alchemy_schema = airflow\n")
    monkeypatch.setenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", PG)
    assert plain_url() is None


def test_an_unreadable_file_is_left_to_airflow(home: Path) -> None:
    _config(home / "airflow.cfg", "sql_alchemy_conn = no section header\n")
    assert plain_url() is None


@pytest.mark.parametrize("over", [False, True])
def test_a_write_after_a_read_at_one_moment_goes_in_a_transaction_of_its_own(
    tmp_path: Path, over: bool
) -> None:
    # backfill --yes from the view failed in CI with "database is locked": its plan was read at one
    # moment (a SQLite read transaction), the scheduler wrote, then the backfill's audit row could not.
    import sqlite3

    from sqlalchemy import create_engine, text
    from sqlalchemy.orm import Session

    from airflow_partitions.tools.state.database import moment_over, one_moment

    path = tmp_path / "airflow.db"
    with sqlite3.connect(path) as setup:
        setup.execute("PRAGMA journal_mode=WAL")  # as Airflow's on SQLite in the integration tests
        setup.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, event TEXT)")
    engine = create_engine(f"sqlite:///{path}?timeout=1")
    with Session(engine) as session:
        one_moment(session)
        assert session.scalar(text("SELECT count(*) FROM log")) == 0
        with sqlite3.connect(path) as scheduler:  # another process writes meanwhile
            scheduler.execute("INSERT INTO log (event) VALUES ('scheduler')")
        assert session.scalar(text("SELECT count(*) FROM log")) == 0  # the moment holds
        if over:
            moment_over(session)
            session.execute(text("INSERT INTO log (event) VALUES ('partition-tools backfill')"))
            session.commit()
        else:
            with pytest.raises(Exception, match="database is locked"):
                session.execute(text("INSERT INTO log (event) VALUES ('partition-tools backfill')"))
    with sqlite3.connect(path) as check:
        written = [e for (e,) in check.execute("SELECT event FROM log ORDER BY id")]
    assert written == (["scheduler", "partition-tools backfill"] if over else ["scheduler"])
    engine.dispose()
