"""
A write reaches the view only from the caller's own client: a JSON body; a cookie only from its origin.

:func:`~airflow_partitions.tools.ui.requests.from_own_client` guards every route of the view's
app; here every route of the real app that is not a ``GET`` is sent what a page on another site
can make a signed-in browser send (a form, ``text/plain``, a body without a type, a JSON ``fetch``
whose browser says it comes from another origin), and must refuse it before Airflow is even asked
who the caller is. What a real browser sends from another origin: ``tests/integration/test_ui.py``.
"""

from __future__ import annotations

import json

import pytest
from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from airflow_partitions.tools.commands.clean import CleanRequest
from airflow_partitions.tools.commands.discard import DiscardRequest
from airflow_partitions.tools.ui.app import app
from airflow_partitions.tools.ui.requests import SAFE_METHODS, answering, from_own_client, requested

SERVER = "testserver"  # the Host the test client sends
#: What a page on http://127.0.0.1:9999 makes a browser send with the user's ``_token`` cookie.
COOKIE = {"_token": "the-users-session"}
ELSEWHERE = {"Origin": "http://127.0.0.1:9999", "Sec-Fetch-Site": "same-site"}
JSON = {"Content-Type": "application/json"}


def writes() -> list[tuple[str, str]]:
    """Every (method, path) of the real app that is not GET, HEAD or OPTIONS, its Dag ``d``."""
    return sorted(
        (method, route.path.replace("{dag_id}", "d"))
        for route in app.routes
        if isinstance(route, APIRoute)
        for method in route.methods - SAFE_METHODS
    )


def test_the_writes_guarded_are_the_commands_writes():
    assert writes() == [
        ("POST", "/api/dags/d/backfill"),
        ("POST", "/api/dags/d/backfills"),
        ("POST", "/api/dags/d/clean"),
        ("POST", "/api/dags/d/discard"),
        ("POST", "/api/dags/d/requeue"),
    ]


REFUSED = [
    # A form: its three encodings; its inputs in the query string, as the routes once took them.
    ("form", {"Content-Type": "application/x-www-form-urlencoded"}, "keys=a", 415),
    ("multipart form", {"Content-Type": "multipart/form-data; boundary=x"}, "--x--", 415),
    ("text/plain fetch", {"Content-Type": "text/plain;charset=UTF-8"}, '{"before": "2100-01-01"}', 415),
    # fetch(url, {body: new Blob([json])}): no Content-Type, and FastAPI would read it as JSON.
    ("untyped body", {}, '{"before": "2100-01-01T00:00:00+00:00"}', 415),
    # A JSON fetch its browser says comes from another origin on the same site (another port).
    ("JSON from another origin", {**JSON, **ELSEWHERE}, "{}", 403),
    # A browser without Sec-Fetch-Site: its Origin names another host.
    ("JSON with another Origin", {**JSON, "Origin": "http://evil.example"}, "{}", 403),
    ("JSON with the Origin null", {**JSON, "Origin": "null"}, "{}", 403),
]


@pytest.mark.parametrize(("method", "path"), writes())
@pytest.mark.parametrize(("what", "headers", "body"), [r[:3] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_every_write_refuses_what_a_page_on_another_site_can_send(method, path, what, headers, body):
    status = {r[0]: r[3] for r in REFUSED}[what]
    client = TestClient(app, cookies=COOKIE)
    answer = client.request(method, path, headers=headers, content=body)
    assert answer.status_code == status, answer.text
    assert ("JSON body" if status == 415 else "own pages") in answer.json()["detail"]


@pytest.mark.parametrize(("method", "path"), writes())
def test_a_write_with_its_input_in_the_query_string_is_400(method, path):
    # An older --api-url sent a write's input as query parameters: the body would be empty and
    # a discard without --key would remove every stray run.
    answer = TestClient(app).request(
        method, f"{path}?key=a", headers={**JSON, "Authorization": "Bearer t"}, content="{}"
    )
    assert answer.status_code == 400
    assert "not the query string ('key=a')" in answer.json()["detail"]


def guarded() -> TestClient:
    """An app with the guard and one write that answers the DiscardRequest its body holds."""
    probe = FastAPI(dependencies=[Depends(from_own_client)])
    answering(probe)

    @probe.post("/dags/{dag_id}/discard")
    def discard(request=Depends(requested(DiscardRequest, body=True))) -> dict:  # noqa: B008
        return {"request": repr(request)}

    @probe.post("/dags/{dag_id}/clean")
    def clean(request=Depends(requested(CleanRequest, body=True))) -> dict:  # noqa: B008
        return {"request": repr(request)}

    @probe.get("/read")
    def read() -> dict:
        return {}

    return TestClient(probe)


PASSED = [
    # airflow-partitions --api-url: a bearer token (never sent by a browser on its own) and JSON.
    ("the command line", {**JSON, "Authorization": "Bearer t"}),
    # The same from a browser's page on another origin: a preflight let it send the header.
    ("a bearer token from another origin", {**JSON, "Authorization": "Bearer t", **ELSEWHERE}),
    ("the api-server's own page", {**JSON, "Origin": f"http://{SERVER}", "Sec-Fetch-Site": "same-origin"}),
    ("an older browser on the api-server's own page", {**JSON, "Origin": f"http://{SERVER}"}),
    ("a client that is no browser, with the cookie", JSON),
]


@pytest.mark.parametrize("headers", [p[1] for p in PASSED], ids=[p[0] for p in PASSED])
def test_a_write_from_the_callers_own_client_passes_with_its_body_as_the_request(headers):
    client = guarded()
    client.cookies.update(COOKIE)
    body = {"key": ["jfk|2013-03-10", "a&b=c"], "start": "2013"}
    answer = client.post("/dags/d/discard", headers=headers, content=json.dumps(body))
    assert answer.status_code == 200, answer.text
    assert answer.json()["request"] == repr(
        DiscardRequest("d", keys=("jfk|2013-03-10", "a&b=c"), start="2013")
    )


def test_a_read_passes_from_anywhere():
    assert guarded().get("/read", headers={**ELSEWHERE, "Content-Type": "text/plain"}).status_code == 200


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("", "body is required."),  # no body: a discard of every stray run, were it read as defaults
        # The field's name, not its parameter's.
        ('{"keys": ["a"]}', "keys ['a']: Extra inputs are not permitted."),
        ('{"key": "a"}', "key 'a': Input should be a valid list."),
        ('["a"]', "body ['a']: Input should be a valid dictionary or object to extract fields from."),
    ],
)
def test_a_write_body_that_is_not_the_requests_is_400_naming_it_and_does_nothing(body, named):
    # Bad input, as every route answers it (FastAPI's own answer is a 422).
    answer = guarded().post("/dags/d/discard", headers={**JSON, "Authorization": "Bearer t"}, content=body)
    assert answer.status_code == 400
    assert answer.json()["detail"] == named


def test_a_write_requests_own_checks_are_400_naming_the_input():
    answer = guarded().post(
        "/dags/~/clean", headers={**JSON, "Authorization": "Bearer t"}, content='{"before": "yesterday"}'
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("--before 'yesterday' is not an ISO 8601 date or time such as")
