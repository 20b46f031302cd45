"""
A command's request goes over the REST API and comes back the same: ``params()`` out, ``requested`` in.

The route is a real FastAPI app with the dependency :func:`~airflow_partitions.tools.ui.requests.requested`
builds, called over HTTP (Starlette's test client) with the query string ``--api-url`` sends
(``urllib.parse.urlencode``, as :class:`~airflow_partitions.tools.source.Api` encodes it).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import asdict
from datetime import UTC, datetime, timedelta, timezone

import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_partitions.tools.commands.backfill import MOST_ACTIVE, ORDERS, BackfillRequest, BackfillsRequest
from airflow_partitions.tools.commands.clean import CleanRequest
from airflow_partitions.tools.commands.discard import DiscardRequest
from airflow_partitions.tools.commands.explain import ExplainRequest
from airflow_partitions.tools.commands.requeue import RequeueRequest
from airflow_partitions.tools.commands.status import MAX_ROWS, StatusRequest
from airflow_partitions.tools.state.model import STATES
from airflow_partitions.tools.ui.requests import requested
from airflow_partitions.tools.write.backfill import SELECTABLE

TYPES = (
    StatusRequest,
    ExplainRequest,
    BackfillRequest,
    BackfillsRequest,
    RequeueRequest,
    DiscardRequest,
    CleanRequest,
)
#: The requests of a command that writes (``--yes``, a backfill's ``--cancel`` …): sent as a JSON
#: body to a POST too.
WRITES = (BackfillRequest, BackfillsRequest, RequeueRequest, DiscardRequest, CleanRequest)


def app_for(cls: type) -> TestClient:
    """
    A FastAPI app whose ``dags/{dag_id}/{ROUTE}`` returns the request it was given, as its fields.

    ``GET`` reads it from the query string; for a write, ``POST`` from the JSON body.
    """
    app = FastAPI()

    @app.get(f"/dags/{{dag_id}}/{cls.ROUTE}")
    def route(request=Depends(requested(cls))) -> dict:  # noqa: B008 (FastAPI's way)
        return {"fields": repr(request)}

    if cls in WRITES:

        @app.post(f"/dags/{{dag_id}}/{cls.ROUTE}")
        def write(request=Depends(requested(cls, body=True))) -> dict:  # noqa: B008
            return {"fields": repr(request)}

    return TestClient(app)


CLIENTS = {cls: app_for(cls) for cls in TYPES}


def sent_back(request: object, method: str = "GET") -> str:
    """Return what the route rebuilt from *request*'s path and query parameters or body (its ``repr``)."""
    params = request.params()  # type: ignore[attr-defined]
    path = f"/{request.path()}"  # type: ignore[attr-defined]
    if method == "GET":
        answer = CLIENTS[type(request)].get(f"{path}?{urllib.parse.urlencode(params, doseq=True)}")
    else:
        answer = CLIENTS[type(request)].post(path, json=params)
    assert answer.status_code == 200, answer.text
    return answer.json()["fields"]


#: Text as keys are spelled: '|' composite separators, spaces, '/', '%', '&', '~', '+' in it.
text = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF), min_size=1, max_size=20)
#: Dag ids as Airflow allows them (letters, digits, '_', '.', '-'; not only dots: a path's '..').
dag_ids = st.from_regex(r"[A-Za-z0-9_.\-]{1,20}", fullmatch=True).filter(lambda d: d.strip("."))
#: Aware times (fold 0: a UTC time has no repeated hour, and the repr compared would differ).
times = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=7))]),
).map(lambda t: t.replace(fold=0))
rows = st.integers(0, MAX_ROWS)
#: ``(start, end)`` of a range, in order (a request refuses a start after its end).
ranges = st.lists(times, min_size=2, max_size=2).map(lambda pair: tuple(sorted(pair)))


@st.composite
def status_requests(draw: st.DrawFn) -> StatusRequest:
    # Any text: the Dag judges its key and range (tools.state.selection), not the request.
    start, end = draw(st.none() | text), draw(st.none() | text)
    states = draw(st.none() | st.lists(st.sampled_from(STATES), min_size=1, max_size=3).map(tuple))
    return StatusRequest(
        draw(dag_ids),
        key=draw(st.none() | text),
        start=start,
        end=end,
        states=states,
        limit=draw(st.none() | rows),
        offset=draw(rows),
    )


@st.composite
def backfill_requests(draw: st.DrawFn) -> BackfillRequest:
    # Keys or a range (not both), any text: the Dag judges them.
    keys = draw(st.none() | st.lists(text, min_size=1, max_size=3).map(tuple))
    start, end = (None, None) if keys else (draw(st.none() | text), draw(st.none() | text))
    return BackfillRequest(
        draw(dag_ids),
        start=start,
        end=end,
        keys=keys,
        states=draw(st.none() | st.lists(st.sampled_from(SELECTABLE), min_size=1, max_size=3).map(tuple)),
        include_open=draw(st.booleans()),
        limit=draw(st.none() | rows),
        offset=draw(rows),
        max_active=draw(st.integers(1, MOST_ACTIVE)),
        order=draw(st.sampled_from(ORDERS)),
        now=draw(st.none() | times),
    )


requests = st.one_of(
    status_requests(),
    st.builds(
        ExplainRequest,
        dag_ids,
        text,
        asset=st.none() | text,
        downstream=st.booleans(),
    ),
    backfill_requests(),
    st.builds(
        BackfillsRequest,
        st.none() | dag_ids,
        st.none() | text,
    ),
    st.builds(BackfillsRequest, st.none() | dag_ids, text, st.sampled_from(["pause", "resume", "cancel"])),
    st.builds(lambda d, r: RequeueRequest(d, *r), dag_ids, ranges),
    st.builds(
        DiscardRequest,
        dag_ids,
        keys=st.none() | st.lists(text, min_size=1, max_size=3).map(tuple),
        start=st.none() | text,
        end=st.none() | text,
    ),
    st.builds(CleanRequest, times, st.none() | dag_ids),
)


@settings(max_examples=300, deadline=None)
@given(requests)
def test_every_request_comes_back_from_its_route_as_it_was_sent(request):
    assert sent_back(request) == repr(request)
    if isinstance(request, WRITES):  # --yes: the same request as a JSON body
        assert sent_back(request, "POST") == repr(request)


def test_a_status_request_is_sent_under_the_parameter_names_the_view_reads():
    request = StatusRequest("a.b-c", key="k|2013-03-10", states=("failed", "ran incomplete"), limit=5)
    assert request.path() == "dags/a.b-c/status"
    assert request.params() == {
        "key": "k|2013-03-10",
        "state": ["failed", "ran incomplete"],
        "limit": 5,
        "offset": 0,
    }
    assert sent_back(request) == repr(request)


def test_clean_of_every_dag_is_the_tilde_airflow_names_every_dag_with():
    before = datetime(2026, 1, 1, tzinfo=UTC)
    assert CleanRequest(before).path() == "dags/~/clean"
    assert CleanRequest(before).params() == {"before": "2026-01-01T00:00:00+00:00"}
    assert CleanRequest(before, "d").path() == "dags/d/clean"
    assert sent_back(CleanRequest(before + timedelta(hours=5))) == repr(
        CleanRequest(before + timedelta(hours=5))
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("state=again", "--state 'again' is not a state; states: failed, ran incomplete"),
        ("limit=-1", f"--limit -1 is not a whole number from 0 to {MAX_ROWS}."),
        (f"offset={MAX_ROWS + 1}", f"--offset {MAX_ROWS + 1} is not a whole number from 0 to {MAX_ROWS}."),
    ],
)
def test_a_request_the_type_refuses_is_400_naming_the_input(query, message):
    answer = CLIENTS[StatusRequest].get(f"/dags/d/status?{query}")
    assert answer.status_code == 400
    assert message in answer.json()["detail"]


def test_a_range_of_times_whose_start_is_after_its_end_is_400_naming_both_options():
    cls = RequeueRequest
    query = "start=2026-05-01T00:00:00%2B00:00&end=2026-04-30T00:00:00%2B00:00"
    answer = CLIENTS[cls].get(f"/dags/d/{cls.ROUTE}?{query}")
    assert answer.status_code == 400
    assert (
        answer.json()["detail"]
        == "--start 2026-05-01T00:00:00+00:00 is after --end 2026-04-30T00:00:00+00:00."
    )


def test_a_status_range_is_the_dags_to_judge_not_the_requests():
    # Whether 2026-W10 lies after 2026-03 depends on the Dag's keys (ISO weeks: it does not), so
    # the request takes any text; the Dag's read refuses what its keys cannot match.
    assert StatusRequest("d", start="2026-W10", end="2026-03").end == "2026-03"


def test_a_time_that_is_not_iso_8601_is_400_naming_it():
    answer = CLIENTS[RequeueRequest].get("/dags/d/requeue?start=yesterday&end=2026-01-01T00:00:00%2B00:00")
    assert answer.status_code == 400
    assert "'yesterday' is not an ISO 8601 time" in answer.json()["detail"]


def test_a_value_of_the_wrong_type_is_422_as_fastapi_answers():
    assert CLIENTS[StatusRequest].get("/dags/d/status?limit=ten").status_code == 422


def test_the_requests_fields_are_their_dataclass_fields():
    # asdict: every field a plain value (what params() sends, one parameter each but dag_id).
    request = DiscardRequest("d", keys=("a", "b"), start="2013")
    assert asdict(request) == {"dag_id": "d", "keys": ("a", "b"), "start": "2013", "end": None}
    assert request.params() == {"key": ["a", "b"], "start": "2013"}


#: Times as a hand-made call may send them: the calendar's ends with offsets that take them past
#: what a datetime holds in UTC, impossible dates, any text.
sent_times = st.sampled_from(
    [
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-12:00",
        "0001-01-01T00:00:00+00:00",
        "9999-12-31T23:59:59.999999+00:00",
        "2026-13-45",
        "yesterday",
    ]
) | st.text(max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([RequeueRequest, BackfillRequest, CleanRequest]), sent_times, sent_times)
def test_any_time_a_route_is_sent_is_its_request_or_400_never_500(cls, first, second):
    # The test client raises what the route raised: an OverflowError would fail the test.
    names = {RequeueRequest: ("start", "end"), BackfillRequest: ("now",), CleanRequest: ("before",)}
    query = dict(zip(names[cls], (first, second), strict=False))
    answer = CLIENTS[cls].get(f"/dags/d/{cls.ROUTE}?{urllib.parse.urlencode(query)}")
    assert answer.status_code in (200, 400), answer.text
    if not all(_an_instant(t) for t in query.values()):
        assert answer.status_code == 400, answer.text


def _an_instant(text: str) -> bool:
    """Whether *text* is an ISO 8601 time (naive: UTC) whose UTC instant a datetime holds."""
    try:
        when = datetime.fromisoformat(text)
        (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):
        return False
    return True
