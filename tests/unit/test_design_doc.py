"""
docs/design.md says what the package is: every module its layout names exists, and the stored module
paths it lists are exactly those the golden stored forms (tests/golden/) name.
"""

from __future__ import annotations

import re
from pathlib import Path

import airflow_partitions
from tests.unit.support import REPO_ROOT

DESIGN = REPO_ROOT / "docs" / "design.md"
PACKAGE = Path(airflow_partitions.__file__).parent
GOLDEN = REPO_ROOT / "tests" / "golden"


def layout_paths(text: str) -> list[str]:
    """
    Return every path the layout block names, relative to the package (``tools/state/kept/cache.py``).

    The block under ``airflow_partitions/`` is a tree two spaces per level; a line starts with one
    or more names (``x.py``, ``folder/``) before its description.
    """
    block = text.split("```\nairflow_partitions/\n", 1)[1].split("```", 1)[0]
    folders: dict[int, str] = {}
    found = []
    for line in block.splitlines():
        level = (len(line) - len(line.lstrip(" "))) // 2
        names = []
        for token in line.split():
            if not re.fullmatch(r"\w+\.py:?|\w+/", token):
                break
            names.append(token.rstrip(":"))
        if not names or level < 1:
            continue  # a description's second line
        prefix = "".join(folders[lv] for lv in sorted(folders) if lv < level)
        folders = {lv: f for lv, f in folders.items() if lv < level}
        for name in names:  # names after a folder on its line are in it (write/  backfill.py …)
            found.append(prefix + name)
            if name.endswith("/"):
                folders[level] = name
                prefix += name
    return found


def golden_modules() -> set[str]:
    """Return the package's modules whose classes the golden stored forms name (``__type``)."""
    found = set()
    for path in GOLDEN.rglob("*.json"):
        found |= set(re.findall(r'"__type": "airflow_partitions\.(\w+)\.\w+"', path.read_text()))
    return found


def test_every_module_the_layout_names_exists():
    paths = layout_paths(DESIGN.read_text())
    assert len(paths) > 40
    missing = [p for p in paths if not (PACKAGE / p).exists()]
    assert missing == []


def test_the_stored_module_paths_it_lists_are_the_golden_ones():
    text = DESIGN.read_text()
    [line] = [line for line in text.splitlines() if "module paths are" in line]
    listed = text.splitlines()[text.splitlines().index(line) - 1]
    assert {m.removesuffix(".py") for m in re.findall(r"\w+\.py", listed)} == golden_modules()
    number = re.search(r"These (\w+) module paths", line)[1]
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    assert words.index(number) == len(golden_modules())


def test_the_checks_find_what_they_look_for():
    lines = [
        "```",
        "airflow_partitions/",
        "  tools/  3. x",
        "    state/",
        "      cache.py  y",
        "    w/  c.py: z",
    ]
    tree = "\n".join([*lines, "  a.py b.py  z", "```"])
    assert layout_paths(tree) == [
        "tools/",
        "tools/state/",
        "tools/state/cache.py",
        "tools/w/",
        "tools/w/c.py",
        "a.py",
        "b.py",
    ]
    assert {"temporal", "composite", "lateness"} <= golden_modules()
