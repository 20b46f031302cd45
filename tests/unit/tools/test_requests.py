"""
A request goes over the REST API and comes back the same: ``params()`` out, ``requested`` in.

Every command's request and the view's own (its list of Dags, a partition's lists, an asset's
keys). The route is a real FastAPI app with the dependency
:func:`~airflow_partitions.tools.ui.requests.requested` builds and the view's error mapping
(:func:`~airflow_partitions.tools.ui.requests.answering`), called over HTTP (Starlette's test
client) with the query string ``--api-url`` sends (``urllib.parse.urlencode``, as
:class:`~airflow_partitions.tools.source.Api` encodes it).
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
from airflow_partitions.tools.ui.queries import AssetRequest, DagsRequest, PartitionListRequest
from airflow_partitions.tools.ui.requests import answering, requested
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
#: The view's own requests, by their routes (as tools/ui/app.py declares them).
VIEW = {
    DagsRequest: "/dags",
    PartitionListRequest: "/dags/{dag_id}/partitions/{partition_key:path}",
    AssetRequest: "/assets/{asset_name}",
}


def app_for(cls: type) -> TestClient:
    """
    A FastAPI app whose route of *cls* returns the request it was given, as its fields.

    ``GET`` reads it from the query string; for a write, ``POST`` from the JSON body. Errors are
    answered as the view answers them.
    """
    app = FastAPI()
    answering(app)
    path = VIEW.get(cls, f"/dags/{{dag_id}}/{cls.ROUTE}")

    @app.get(path)
    def route(request=Depends(requested(cls))) -> dict:  # noqa: B008 (FastAPI's way)
        return {"fields": repr(request)}

    if cls in WRITES:

        @app.post(path)
        def write(request=Depends(requested(cls, body=True))) -> dict:  # noqa: B008
            return {"fields": repr(request)}

    return TestClient(app)


CLIENTS = {cls: app_for(cls) for cls in (*TYPES, *VIEW)}


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
#: Dag ids as Airflow allows them (letters, digits, '_', '.', '-'; '..' too).
dag_ids = st.from_regex(r"[A-Za-z0-9_.\-]{1,20}", fullmatch=True)
#: Aware times (fold 0: a UTC time has no repeated hour, and the repr compared would differ).
times = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=7))]),
).map(lambda t: t.replace(fold=0))
rows = st.integers(0, MAX_ROWS)
#: ``(start, end)`` of a range, in order (a request refuses a start after its end).
ranges = st.lists(times, min_size=2, max_size=2).map(lambda pair: tuple(sorted(pair)))
#: Bounds of times as ``requeue`` and ``clean`` send them: ISO 8601 times, or text with a year (a
#: key of the Dag's grain, its leading part: the Dag judges it, not the request).
bounds = times.map(datetime.isoformat) | st.builds("{}{}".format, text, st.integers(1000, 9999))


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
    st.builds(lambda d, r: RequeueRequest(d, *(t.isoformat() for t in r)), dag_ids, ranges),
    st.builds(RequeueRequest, dag_ids, bounds.filter(lambda b: "W" not in b), st.none()),
    st.builds(
        DiscardRequest,
        dag_ids,
        keys=st.none() | st.lists(text, min_size=1, max_size=3).map(tuple),
        start=st.none() | text,
        end=st.none() | text,
    ),
    st.builds(CleanRequest, times.map(datetime.isoformat), st.none() | dag_ids),
    st.builds(CleanRequest, bounds.filter(lambda b: "W" not in b), dag_ids),
    st.builds(DagsRequest, st.none() | st.lists(st.sampled_from(STATES), min_size=1, max_size=3).map(tuple)),
    st.builds(
        PartitionListRequest,
        dag_ids,
        text,
        st.sampled_from(["awaited", "missing", "received", "never counting"]),
        st.none() | rows,
        rows,
    ),
    # An asset name with a "/" is a path of its own to the api-server (it decodes %2F): not one.
    st.builds(AssetRequest, text.filter(lambda t: "/" not in t), st.none() | text, st.none() | text),
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
    assert CleanRequest("2026-01-01").path() == "dags/~/clean"
    assert CleanRequest("2026-01-01").params() == {"before": "2026-01-01"}
    assert CleanRequest("2026-W01", "d").path() == "dags/d/clean"
    assert sent_back(CleanRequest("2026-01-01T05:00:00+00:00")) == repr(
        CleanRequest("2026-01-01T05:00:00+00:00")
    )


def test_the_views_requests_are_sent_under_their_own_paths():
    assert DagsRequest(("failed",)).path() == "dags"
    assert DagsRequest(("failed",)).params() == {"state": ["failed"]}
    listed = PartitionListRequest("d", "jfk|2026-05-01", "received", limit=0)
    assert listed.path() == "dags/d/partitions/jfk%7C2026-05-01"
    assert listed.params() == {"list": "received", "limit": 0, "offset": 0}
    assert AssetRequest("a b/c", start="2026-05").path() == "assets/a%20b%2Fc"
    for request in (listed, AssetRequest("a b|c", start="2026-05"), DagsRequest()):
        assert sent_back(request) == repr(request)


@pytest.mark.parametrize("key", [".", "..", "...", "./.", ".a"])
def test_a_key_of_dots_is_not_taken_for_a_folder(key):
    # As they are, "." and ".." segments are dropped from a URL (RFC 3986 5.2.4): the key was ''.
    listed = PartitionListRequest("..", key, "received")
    assert sent_back(listed) == repr(listed)


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


@pytest.mark.parametrize(
    ("path", "message"),
    [
        # The list of Dags' state is checked as status --state is (it was an empty list).
        ("/dags?state=again", "--state 'again' is not a state; states: failed, ran incomplete"),
        (
            "/dags/d/partitions/2026-05-01?list=nope",
            "list 'nope' is not one of 'awaited', 'missing', 'received', 'never counting'.",
        ),
        # A partition's list takes limit and offset as status does (it was a 422 from FastAPI).
        ("/dags/d/partitions/2026-05-01?limit=-1", f"--limit -1 is not a whole number from 0 to {MAX_ROWS}."),
        (
            "/dags/d/partitions/2026-05-01?offset=-1",
            f"--offset -1 is not a whole number from 0 to {MAX_ROWS}.",
        ),
    ],
)
def test_the_views_requests_refuse_bad_input_as_the_commands_do(path, message):
    answer = CLIENTS[
        VIEW_OF[path.split("?")[0].split("/")[1] + ("/p" if "/partitions/" in path else "")]
    ].get(path)
    assert answer.status_code == 400, answer.text
    assert message in answer.json()["detail"]


#: The view's request type of a path's first segment (``dags/…/partitions/…``: the partition list's).
VIEW_OF = {"dags": DagsRequest, "dags/p": PartitionListRequest, "assets": AssetRequest}


def test_a_limit_of_0_is_every_partition_on_every_face():
    from airflow_partitions.tools.cli import build_parser
    from airflow_partitions.tools.commands.status import request_of
    from airflow_partitions.tools.ui.queries import DEFAULT_LIMIT, page_limit

    # The command line's --limit 0, the commands' route's limit=0 and the view's: no limit.
    assert request_of(build_parser().parse_args(["status", "d", "--limit", "0"])).limit == 0
    assert sent_back(StatusRequest("d", limit=0)) == repr(StatusRequest("d", limit=0))
    assert page_limit(0) is None and page_limit(None) == DEFAULT_LIMIT and page_limit(7) == 7


def test_a_range_of_times_whose_start_is_after_its_end_is_400_naming_both_options():
    # Requeue's bounds are instants (event times); backfill's, as status's, are judged by the Dag.
    cls = RequeueRequest
    message = "--start '2026-05-01T00:00:00+00:00' is after --end '2026-04-30T00:00:00+00:00'."
    query = "start=2026-05-01T00:00:00%2B00:00&end=2026-04-30T00:00:00%2B00:00"
    answer = CLIENTS[cls].get(f"/dags/d/{cls.ROUTE}?{query}")
    assert answer.status_code == 400
    assert answer.json()["detail"] == message


def test_a_status_range_is_the_dags_to_judge_not_the_requests():
    # Whether 2026-W10 lies after 2026-03 depends on the Dag's keys (ISO weeks: it does not), so
    # the request takes any text; the Dag's read refuses what its keys cannot match.
    assert StatusRequest("d", start="2026-W10", end="2026-03").end == "2026-03"


def test_a_time_that_names_no_year_is_400_naming_it():
    answer = CLIENTS[RequeueRequest].get("/dags/d/requeue?start=yesterday&end=2026-01-01T00:00:00%2B00:00")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("--start 'yesterday' is not an ISO 8601 date or time such as")


def test_a_value_of_the_wrong_type_is_400_naming_it_as_every_bad_input():
    answer = CLIENTS[StatusRequest].get("/dags/d/status?limit=ten")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("limit 'ten': Input should be a valid integer")
    missing = CLIENTS[ExplainRequest].get("/dags/d/explain")
    assert (missing.status_code, missing.json()["detail"]) == (400, "key is required.")


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
    # Backfill's now is an ISO 8601 time; requeue's and clean's bounds may be a key of the Dag's
    # grain, which the Dag judges: the request refuses only what names no year.
    if cls is BackfillRequest and not _an_instant(query["now"]):
        assert answer.status_code == 400, answer.text
    sent = [t for name, t in query.items() if name != "now"]
    if not all(any(c.isdigit() for c in t) for t in sent):
        assert answer.status_code == 400, answer.text


def _an_instant(text: str) -> bool:
    """Whether *text* is an ISO 8601 time (naive: UTC) whose UTC instant a datetime holds."""
    try:
        when = datetime.fromisoformat(text)
        (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):
        return False
    return True


@pytest.mark.parametrize(
    ("cls", "query", "message"),
    [
        # A misspelt filter was dropped, and the answer was of every partition (a new user's trial).
        (StatusRequest, "stat=failed", "unknown query parameter 'stat': it takes end, key, "),
        (
            BackfillRequest,
            "keys=2026-01-06",
            "unknown query parameter 'keys': it takes end, include_open, key, ",
        ),
        (DagsRequest, "state=failed&page=2", "unknown query parameter 'page': it takes "),
    ],
)
def test_a_query_parameter_no_field_takes_is_400_naming_it(cls, query, message):
    path = VIEW.get(cls, f"/dags/d/{cls.ROUTE}")
    answer = CLIENTS[cls].get(f"{path}?{query}")
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"].startswith(message), answer.json()["detail"]


def test_a_write_takes_nothing_from_its_query_and_a_body_that_is_no_json_is_named():
    in_query = CLIENTS[DiscardRequest].post("/dags/d/discard?key=2026-01-06", json={})
    assert in_query.status_code == 400
    assert in_query.json()["detail"] == (
        "unknown query parameter 'key': a write takes its input in its JSON body."
    )
    broken = CLIENTS[DiscardRequest].post(
        "/dags/d/discard", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert broken.status_code == 400
    assert broken.json()["detail"].startswith("the body is not JSON (")
    assert broken.json()["detail"].endswith("): expected a JSON object of the request's fields.")
