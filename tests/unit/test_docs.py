"""
Every ``python`` code block of ``README.md`` and ``docs/*.md`` runs, so the docs cannot go stale.

One case per block (id ``file:line``). The blocks of one page run in order and share a
namespace, in a temporary working directory (holding a link to the repository's
``example_dags``, which the pages use as "the example Dags"); Dag-file blocks that build ``DAG(...)`` objects
just run, they need no Airflow services. A block that cannot run on its own is marked by an
HTML comment on the line before its fence, ``<!-- not run: reason -->``; the reason is required.
``console`` and ``bash`` blocks are not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<ticks>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
_NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    source: str
    skip_reason: str | None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, lang = len(m["indent"]), m["ticks"], m["lang"].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        if lang not in ("python", "py"):
            continue
        reason = None
        if start > 0 and (n := _NOT_RUN.match(lines[start - 1])):
            reason = n["reason"]
            assert reason, f"{page.name}:{start + 1}: '<!-- not run: -->' needs a reason"
        found.append(Block(page, start + 1, "\n".join(body) + "\n", reason))
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks_of(page)]
_NAMESPACES: dict[Path, dict] = {}


def test_blocks_are_collected():
    assert len(ALL_BLOCKS) >= 30
    assert all(block.source.strip() for block in ALL_BLOCKS)


def test_not_run_markers_give_a_reason():
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if "not run" in line and line.lstrip().startswith("<!--"):
                m = _NOT_RUN.match(line)
                assert m and m["reason"], f"{page.name}:{number}: not run needs a reason"


@pytest.fixture(scope="module")
def docs_workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("docs")


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda block: block.id)
def test_doc_block_runs(block: Block, docs_workdir, monkeypatch):
    if block.skip_reason:
        pytest.skip(f"not run: {block.skip_reason}")
    page_dir = docs_workdir / block.page.stem
    if not page_dir.exists():
        page_dir.mkdir()
        (page_dir / "example_dags").symlink_to(ROOT / "example_dags", target_is_directory=True)
    monkeypatch.chdir(page_dir)
    namespace = _NAMESPACES.setdefault(
        block.page, {"__name__": f"docs_{block.page.stem}", "__file__": str(block.page)}
    )
    code = compile(block.source, block.id, "exec")
    exec(code, namespace)


@dataclass(frozen=True)
class Example:
    """
    One ``$ airflow-partitions explain …`` or ``check …`` of a ``console`` block, with its output.

    Shown with its exit code (``# exit code 0``), the output is the whole of it; without, it may be
    an excerpt (``check --json``'s first findings), the start of what is printed. Variables set
    before the command (``$ AIRFLOW_VAR_RETAIL_STORES='[…]' airflow-partitions check …``) are
    set for it.
    """

    page: Path
    line: int  # 1-based line of the command
    argv: tuple[str, ...]
    output: str
    exit_code: int | None  # from a ``# exit code N`` line, if the page shows one
    env: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


#: Options of ``explain`` that read a deployment (its database, its api-server): no example of
#: those runs here.
_DEPLOYMENT = ("--from-db", "--api-url")
_EXIT_CODE = re.compile(r"^# exit code (?P<code>\d+)$")
#: A variable set for the command it comes before: ``AIRFLOW_VAR_RETAIL_STORES='["store-001"]'``.
_ASSIGNMENT = re.compile(r"(?P<name>[A-Z_][A-Z0-9_]*)=(?P<value>.*)", re.DOTALL)


def command_examples(page: Path) -> list[Example]:
    """The ``explain`` and ``check`` examples of *page*'s ``console`` blocks that need no deployment."""
    import shlex

    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    inside = False
    for number, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        if m:
            inside = not inside and m["lang"].lower() == "console"
            continue
        ours = re.search(r"\bairflow-partitions (explain|check) ", line)
        if not (inside and line.startswith("$ ") and ours):
            continue
        words = shlex.split(line.removeprefix("$ "))
        env = []
        while words and (assigned := _ASSIGNMENT.fullmatch(words[0])):
            env.append((assigned["name"], assigned["value"]))
            words.pop(0)
        if words[:1] != ["airflow-partitions"] or words[1:2] not in (["explain"], ["check"]):
            continue
        argv = tuple(words[1:])
        if any(option in argv for option in _DEPLOYMENT):
            continue
        output, code = [], None
        for after in lines[number:]:
            if after.startswith(("$ ", "```")):
                break
            if ended := _EXIT_CODE.match(after):
                code = int(ended["code"])
                break
            output.append(after)
        found.append(Example(page, number, argv, "\n".join(output) + "\n", code, tuple(env)))
    return found


ALL_EXAMPLES = [example for page in PAGES for example in command_examples(page)]


def test_command_examples_are_collected():
    # explain: README.md's one, docs/cli.md's six (three of a mapper expression, among them a
    # fan-out and a --json, three of the example Dags), docs/trading.md's one; check: docs/cli.md's
    # two (text, and the start of --json), docs/deployment.md's with a Variable in the environment.
    assert sum(e.argv[0] == "explain" for e in ALL_EXAMPLES) >= 8
    assert sum(e.argv[0] == "check" for e in ALL_EXAMPLES) >= 3
    assert any(e.env and e.argv[0] == "check" for e in ALL_EXAMPLES)


@pytest.mark.parametrize("example", ALL_EXAMPLES, ids=lambda example: example.id)
def test_a_command_example_prints_what_its_page_shows(example: Example, capsys, monkeypatch):
    # The pages' "example_dags" is the repository's: run from its root, as the pages' readers do.
    from airflow_partitions.members import forget_reads
    from airflow_partitions.tools.cli import main

    monkeypatch.chdir(ROOT)
    for name, value in example.env:
        monkeypatch.setenv(name, value)
    forget_reads()  # a Variable read before, by another test, is not the one this command is given
    try:
        code = main(list(example.argv))
    finally:
        forget_reads()
    printed = capsys.readouterr().out
    if example.exit_code is None:  # an excerpt: what is printed starts with it
        assert printed[: len(example.output)] == example.output
    else:
        assert (printed, code) == (example.output, example.exit_code)
