"""
Keep what users wrote against a release as the compatibility test set: example Dags and doc snippets.

A Dag file that parsed under an earlier release must still parse. For each version of
``example_dags/`` and of each documentation page's ``python`` blocks on main (``git log``), this
writes ``tests/compat/example_dags/<commit>/`` (the folder as it was) and
``tests/compat/docs/<page>@<commit>.py`` (the page's blocks in order); ``tests/unit/test_compat.py``
parses every one with the current package. Run it at each release (it only adds what is new)::

    python scripts/snapshot_compat.py --until <released commit>        # every version up to it
    python scripts/snapshot_compat.py --since <last release> --until <this release>
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "compat"
#: A block marked as not runnable on its own (it needs a running Airflow, say): left out.
_NOT_RUN = re.compile(r"^\s*<!--\s*not run:")


def python_blocks(text: str) -> tuple[str, ...]:
    """Return the page's ``python`` blocks (at the margin) that run on their own, in order."""
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        if lines[i].strip() != "```python":
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        skipped = i > 0 and _NOT_RUN.match(lines[i - 1]) is not None
        body, i = [], i + 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:])
            i += 1
        i += 1
        if not skipped:
            blocks.append("\n".join(body) + "\n")
    return tuple(blocks)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def commits(paths: list[str], since: str | None, until: str) -> list[str]:
    """Return the commits of main up to *until* (oldest first, after *since*) that changed *paths*."""
    span = f"{since}..{until}" if since else until
    return git("log", "--first-parent", "--reverse", "--format=%h", span, "--", *paths).split()


def snapshot_example_dags(since: str | None, until: str) -> int:
    seen: set[str] = set()
    written = 0
    for commit in commits(["example_dags"], since, until):
        tree = git("rev-parse", f"{commit}:example_dags").strip()
        if tree in seen:
            continue
        seen.add(tree)
        target = OUT / "example_dags" / commit
        if target.exists():
            continue
        for path in git("ls-tree", "-r", "--name-only", commit, "example_dags").split():
            (target / Path(path).relative_to("example_dags")).parent.mkdir(parents=True, exist_ok=True)
            (target / Path(path).relative_to("example_dags")).write_text(git("show", f"{commit}:{path}"))
        written += 1
    return written


#: The first commit after which every python block of the docs ran in the unit suite (test_docs.py):
#: before it, pages held fragments that never ran on their own.
RUNNABLE_DOCS_SINCE = "1f224da"


def snapshot_docs(since: str | None, until: str) -> int:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    written = 0
    for commit in [RUNNABLE_DOCS_SINCE, *commits(["docs", "README.md"], since or RUNNABLE_DOCS_SINCE, until)]:
        pages = [p for p in git("ls-tree", "-r", "--name-only", commit).split() if p.endswith(".md")]
        for page in (p for p in pages if p == "README.md" or p.startswith("docs/")):
            blocks = python_blocks(git("show", f"{commit}:{page}"))
            if not blocks or (page, blocks) in seen:
                continue
            seen.add((page, blocks))
            target = OUT / "docs" / f"{page.replace('/', '_').removesuffix('.md')}@{commit}.py"
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            body = "\n".join(
                f"# -- block {n} of {page} at {commit}\n{block}" for n, block in enumerate(blocks, 1)
            )
            target.write_text(body)
            written += 1
    return written


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--since", help="only versions after this commit")
    parser.add_argument("--until", default="HEAD", help="the released commit to stop at (default HEAD)")
    args = parser.parse_args()
    folders, pages = snapshot_example_dags(args.since, args.until), snapshot_docs(args.since, args.until)
    print(f"wrote {folders} example_dags folders and {pages} doc pages under {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
