r"""
What the commands print never acts on a terminal: control characters in keys, names and messages show escaped.

A partition key is any text Airflow accepted (``ESC [2J`` clears a screen, ``ESC ]0;…BEL`` sets a
window's title, U+202E reverses what follows). Each command's text goes through
:func:`~airflow_partitions.tools.commands.text.terminal`: here each command prints answers holding
such text, through its real printing path (``main`` with a source that answers them), and its
output must hold no control character but the line feeds between lines, each one shown as Python
spells it (``\x1b``), while ``--json`` keeps the text exact.
"""

from __future__ import annotations

import contextlib
import io
import json
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_partitions.tools.cli import main
from airflow_partitions.tools.commands.text import listed, terminal, wrap
from airflow_partitions.tools.errors import UnknownDag
from airflow_partitions.tools.state.model import ConsumerState
from airflow_partitions.tools.state.plain import rebuilt
from airflow_partitions.tools.write.backfill import Feed, Plan, PlannedPartition, Step
from airflow_partitions.tools.write.discard import Discarded, StrayRun
from airflow_partitions.tools.write.paced import Backfill, BackfillRun, Backfills
from airflow_partitions.tools.write.requeue import OrphanedEvent, Orphans

#: A key that clears the screen, sets the window's title, returns the carriage, reverses the text
#: after it and breaks the line: what a producer may have sent.
EVIL = "2026-05-01\x1b[2J\x1b]0;pwned\x07\r\u202e|x\ny"
#: The same as Python escapes it, as the text output must show it.
SHOWN = "2026-05-01\\x1b[2J\\x1b]0;pwned\\x07\\r\\u202e|x\\ny"
#: Unicode's bidirectional controls and line separators, escaped as the C0/C1 controls are.
BIDI = set("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def acts(c: str) -> bool:
    """Whether a terminal acts on *c* rather than showing it (worked out from Unicode's categories)."""
    return unicodedata.category(c) == "Cc" or c in BIDI


@given(st.text())
def test_every_control_character_is_escaped_as_python_spells_it(text):
    one_value = terminal(text, lines=False)
    assert not any(acts(c) for c in one_value)
    assert one_value == "".join(repr(c)[1:-1] if acts(c) else c for c in text)
    lines = terminal(text)
    assert lines.split("\n") == [terminal(part, lines=False) for part in text.split("\n")]


def test_a_key_shows_escaped_in_a_list_and_a_wrapped_line():
    assert listed(["a", EVIL]) == f"a, {SHOWN}"
    assert wrap("waits for", EVIL) == f"  {'waits for':<16}{SHOWN}"
    assert listed([EVIL] * 101).count(SHOWN) == 12  # the 6 first and last


def status_answer() -> ConsumerState:
    """The golden ``status --json`` of golden_ny_day, EVIL its partition key, asset, message and Dag id."""
    folder = Path(__file__).parent / "state_golden"
    data = json.loads((folder / "status_ny_day.json").read_text())["json"]
    data = json.loads(json.dumps(data).replace('"<read_at>"', '"2013-03-20T00:00:00+00:00"'))
    data["partitions"][0]["partition_key"] = EVIL
    data["dag_id"] = "golden\x1b[2J"  # what an api-server (--api-url) may answer, whatever Airflow allows
    data["refusals"][0] |= {"partition_key": EVIL, "asset": EVIL, "message": f"ValueError: {EVIL}"}
    return rebuilt(ConsumerState, data)


NOW = datetime(2026, 5, 2, tzinfo=UTC)
ANSWERS = {
    "status": ["status", "golden_ny_day", "--all"],
    "explain": ["explain", "--from-db", "--dag", "d", "--downstream", "2026-05-01"],
    "plan": ["backfill", "d", "--start", "2026-05-01", "--end", "2026-05-01"],
    "backfills": ["backfill", "--list"],
    "orphans": ["requeue", "d", "--start", "2026-05-01", "--end", "2026-05-01"],
    "stray": ["discard", "d"],
}


class Canned:
    """A source that answers each command with text holding :data:`EVIL`, and fails with it if asked to."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.failure = failure

    def _answer(self, answer: object) -> object:
        if self.failure:
            raise self.failure
        return answer

    def read(self, request: object) -> object:
        return self._answer(getattr(self, request.ROUTE)())  # type: ignore[attr-defined]

    def status(self) -> object:
        return status_answer()

    def explain(self) -> object:
        from airflow_partitions.tools import explain, load_mapper

        return explain(load_mapper("IdentityMapper()"), EVIL)

    def backfill(self) -> object:
        steps = (
            Step("re-run", "d", EVIL, run_id=EVIL, why=EVIL),
            Step("send", EVIL, EVIL, asset=EVIL, keys=(EVIL,), why=EVIL),
        )
        partition = PlannedPartition(EVIL, "failed", steps)
        return self._answer(
            Plan("d", EVIL, (partition,), 1, {"failed": 1}, feeds=(Feed(EVIL, EVIL, 1, (EVIL,)),))
        )

    def backfills(self) -> object:
        run = BackfillRun("re-run", EVIL, EVIL, EVIL, "queued", EVIL)
        return self._answer(
            Backfills(
                (
                    Backfill(
                        "backfill-1", EVIL, EVIL, NOW, EVIL, 2, "oldest", "running", (run,), {"queued": 1}
                    ),
                )
            )
        )

    def requeue(self) -> object:
        event = OrphanedEvent(1, EVIL, EVIL, NOW, (EVIL,), refused=f"ValueError: {EVIL}")
        return Orphans("d", NOW, NOW, (event,), runs={EVIL: ("success",)})

    def discard(self) -> object:
        return Discarded("d", f"keys {EVIL}", (StrayRun(EVIL, 1, NOW, (EVIL,), ("success",)),))


def printed(argv: list[str], source: Canned) -> tuple[int, str, str]:
    """Run ``airflow-partitions ARGV`` on *source*; return its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch("airflow_partitions.tools.cli.source", lambda *_: source),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("asked", sorted(ANSWERS))
def test_each_commands_text_shows_a_key_an_asset_and_a_message_escaped(asked):
    code, out, err = printed(ANSWERS[asked], Canned())
    assert code in (0, 1), err
    assert not any(acts(c) for c in out.replace("\n", "")), out
    assert "\\x1b[2J\\x1b]0;pwned\\x07" in out


@pytest.mark.parametrize("asked", sorted(ANSWERS))
def test_each_commands_json_keeps_the_key_exact(asked):
    code, out, err = printed([*ANSWERS[asked], "--json"], Canned())
    assert code in (0, 1), err
    assert EVIL in strings(json.loads(out))


def strings(value: object) -> set[str]:
    """Every string in a JSON value, its objects' names included."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings(v)}
    return set()


@pytest.mark.parametrize("failure", [UnknownDag(f"no Dag {EVIL}"), ValueError(f"--key {EVIL} is not one")])
def test_an_error_message_shows_escaped(failure):
    code, out, err = printed(ANSWERS["status"], Canned(failure))
    assert code in (1, 2) and out == ""
    assert SHOWN in err and not any(acts(c) for c in err.replace("\n", ""))


def test_check_shows_a_dag_files_message_escaped(tmp_path):
    # A Dag file that fails to import with EVIL in its error (its last line: check shows that).
    message = EVIL.replace("\r", "").replace("\n", " ")
    (tmp_path / "evil.py").write_text(f"# an airflow DAG file\nraise ValueError({message!r})\n")
    code, out, err = printed(["check", str(tmp_path)], Canned())
    assert code == 1, err
    assert "\\x1b[2J" in out and not any(acts(c) for c in out.replace("\n", "")), out


def test_a_line_feed_in_a_key_does_not_start_a_line_of_its_own():
    _, out, _ = printed(ANSWERS["stray"], Canned())
    assert not any(line.startswith("y") for line in out.splitlines()), out


def test_the_log_line_of_a_run_that_ran_incomplete_shows_an_asset_name_escaped():
    from airflow.sdk import Asset

    from airflow_partitions import CompletionDeadline, IncompleteRunNotifier
    from tests.unit.test_deadlines import TWO_HOURS, day_of_hours, hours
    from tests.unit.test_notifications import DAY, Recorder, callback_context

    hourly = Asset("hourly\x1b]0;pwned\x07")
    context = callback_context(
        hourly, {hourly: day_of_hours(CompletionDeadline(TWO_HOURS))}, DAY, {hourly: sorted(hours(DAY, (3,)))}
    )
    # The line the notifier hands its logger (Airflow's, through structlog: its level is the process's).
    logger = mock.Mock()
    with mock.patch.object(IncompleteRunNotifier, "log", new_callable=mock.PropertyMock, return_value=logger):
        IncompleteRunNotifier(Recorder("sent"))(context)
    [(message, *values)] = [c.args for c in logger.info.call_args_list]
    line = message % tuple(values)
    assert "hourly\\x1b]0;pwned\\x07" in line and not any(acts(c) for c in line), line


def test_the_log_line_of_a_variable_that_could_not_be_read_shows_the_error_escaped(caplog):
    from airflow_partitions.members import VariableMembers

    failure = RuntimeError(f"the secrets backend answered {EVIL}")
    with (
        mock.patch("airflow_partitions.members.read_variable", side_effect=failure),
        caplog.at_level("WARNING"),
        pytest.raises(ValueError, match="could not be read"),
    ):
        VariableMembers("it_stores").current()
    lines = [r.getMessage() for r in caplog.records if "it_stores" in r.getMessage()]
    assert len(lines) == 2  # the failed read (a warning), and the members broken since (an error)
    for line in lines:
        assert SHOWN in line and not any(acts(c) for c in line), line
