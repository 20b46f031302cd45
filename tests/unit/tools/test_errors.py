"""
One error vocabulary, one mapping: each error's status on every route and exit code on the command line.

The command line's ``_guarded`` and the view's exception handlers (``answering``) read the same
table (:data:`~airflow_partitions.tools.errors.ANSWERS`); here each error is raised by a command's
handler and by a route of an app answering as the view does, and must give the status and exit
code worked out from what it is, with the same message. What a real api-server and database
answer for every command and route: ``tests/integration/test_ui.py``.
"""

from __future__ import annotations

import argparse

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from airflow_partitions.tools.cli import COMMANDS, _guarded
from airflow_partitions.tools.errors import (
    ApiError,
    Forbidden,
    NotAConsumer,
    UnknownAsset,
    UnknownDag,
    UnknownPartition,
    UsageError,
)
from airflow_partitions.tools.ui.requests import answering

#: Each error, what it is, and what it must answer: ``(error, HTTP status, exit code)``.
ERRORS = [
    (UnknownDag("no Dag 'nope' in this deployment's metadata database."), 404, 1),
    (NotAConsumer("'plain' is not a partitioned consumer Dag."), 404, 1),
    (UnknownAsset("No active asset is named 'nope'."), 404, 1),
    (UnknownPartition("'d' has no run or pending run of partition 'k'."), 404, 1),
    (UsageError("--state 'again' is not a state."), 400, 2),
    (ValueError("a mapper's refusal: --downstream of a mapper that is no rollup"), 400, 2),
    (Forbidden("a POST signed in by the session cookie must come from this api-server's own pages"), 403, 1),
]


def raised_by_a_route(error: Exception) -> TestClient:
    """An app answering as the view does, whose one route raises *error*."""
    app = FastAPI()
    answering(app)

    @app.get("/raise")
    def route() -> dict:
        raise error

    return TestClient(app, raise_server_exceptions=False)


def raised_by_a_command(error: Exception, capsys) -> tuple[int, str]:
    """Run ``status`` with a handler that raises *error*: its exit code and stderr."""

    def handler(args: argparse.Namespace, source: object) -> int:
        raise error

    code = _guarded(COMMANDS["status"]._replace(handler=handler), argparse.Namespace())
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("error", "status", "code"), ERRORS, ids=lambda v: type(v).__name__)
def test_each_error_answers_its_status_on_a_route_and_its_exit_code_on_the_command_line(
    capsys, error, status, code
):
    answer = raised_by_a_route(error).get("/raise")
    assert (answer.status_code, answer.json()) == (status, {"detail": str(error)})
    exit_code, err = raised_by_a_command(error, capsys)
    said = "error: " if code == 2 else ""  # argparse's words for a usage error
    assert (exit_code, err) == (code, f"airflow-partitions status: {said}{error}\n")


def test_an_api_server_that_did_not_answer_is_exit_1(capsys):
    # The command line's own (--api-url): no route raises it.
    code, err = raised_by_a_command(ApiError("the api-server at http://x did not answer."), capsys)
    assert (code, err) == (1, "airflow-partitions status: the api-server at http://x did not answer.\n")


def test_an_error_outside_the_vocabulary_is_a_bug_a_traceback_and_a_500(capsys):
    # A KeyError was a LookupError, once answered as an unknown Dag (404, exit 1): it is a bug.
    assert raised_by_a_route(KeyError("x")).get("/raise").status_code == 500
    with pytest.raises(KeyError):
        raised_by_a_command(KeyError("x"), capsys)
