"""
The tools read in one screen, and what outlives a request is in one place (issues 37 and 49).

No module of ``airflow_partitions/tools/`` over 500 lines; ``composite.py`` and ``temporal.py``
(the Airflow classes, whose stored import paths keep them whole) under 600, their private helpers
in modules of their own; no function over 80 anywhere in the
package, nor in the Partitions view's scripts (``partitions.js``, ``actions.js``); no
module-level state that a function changes (a memo, a cursor) outside ``tools/state/kept/cache.py``.
Read from the source (``ast``; a script by its top-level functions), as ``test_imports`` reads
the imports.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import airflow_partitions

PACKAGE = Path(airflow_partitions.__file__).parent
TOOLS = PACKAGE / "tools"
MODULES = sorted(TOOLS.rglob("*.py"))
#: The view's scripts (``partitions.js``, ``actions.js``): their functions are held to the same length.
SCRIPTS = sorted((TOOLS / "ui" / "static").glob("*.js"))

MODULE_LINES = 500
FUNCTION_LINES = 80
#: Modules of the Airflow layer held under a number of lines (fewer than it), by path in the package.
LIMITED_MODULES = {"composite.py": 600, "temporal.py": 600}

#: The one module whose module-level values functions may change.
CACHE = TOOLS / "state" / "kept" / "cache.py"

#: Methods that change a dict, list, set or deque in place.
MUTATING = {
    "add",
    "append",
    "appendleft",
    "clear",
    "discard",
    "extend",
    "insert",
    "move_to_end",
    "pop",
    "popitem",
    "popleft",
    "remove",
    "setdefault",
    "update",
}


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def long_functions(source: str) -> list[tuple[str, int]]:
    """Return each function of *source* over :data:`FUNCTION_LINES` lines, with its length."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > FUNCTION_LINES
    ]


def module_state(source: str) -> list[str]:
    """
    Return the module-level names of *source* that its code changes: module state.

    A name is changed by a ``global`` statement, an item assigned or deleted (``NAME[k] = v``), an
    augmented assignment (``NAME += …``), or a method that changes a container in place
    (``NAME.popitem()``), anywhere in the module.
    """
    tree = ast.parse(source)
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names |= {target.id for target in targets if isinstance(target, ast.Name)}
    changed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            changed |= set(node.names)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            changed.add(getattr(node.value, "id", None))
        elif isinstance(node, ast.AugAssign):
            changed.add(getattr(node.target, "id", None))
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING
        ):
            changed.add(getattr(node.func.value, "id", None))
    return sorted(names & changed)


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_a_tools_module_reads_in_one_screen(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MODULE_LINES


@pytest.mark.parametrize("name", sorted(LIMITED_MODULES))
def test_the_airflow_layers_largest_modules_stay_under_their_limit(name):
    assert len((PACKAGE / name).read_text(encoding="utf-8").splitlines()) < LIMITED_MODULES[name]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=_name)
def test_no_function_of_the_package_is_over_80_lines(path):
    assert long_functions(path.read_text(encoding="utf-8")) == []


def long_script_functions(source: str) -> list[tuple[str, int]]:
    """
    Return each top-level function of a script over :data:`FUNCTION_LINES` lines, with its length.

    A function starts at a line ``function name(`` or ``async function name(`` at the left margin
    and ends at the next line that is ``}`` at the left margin (the script's own layout).
    """
    found, name, start = [], None, 0
    for number, line in enumerate(source.splitlines(), 1):
        if match := re.match(r"(?:async )?function (\w+)", line):
            name, start = match[1], number
        elif line.startswith("}") and name is not None:
            if number - start + 1 > FUNCTION_LINES:
                found.append((name, number - start + 1))
            name = None
    return found


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_function_of_the_views_scripts_is_over_80_lines(script):
    assert long_script_functions(script.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", [p for p in MODULES if p != CACHE], ids=_name)
def test_no_tools_module_but_the_cache_keeps_state(path):
    assert module_state(path.read_text(encoding="utf-8")) == []


def test_the_checks_find_what_they_look_for():
    long = "def f():\n" + "    x = 1\n" * FUNCTION_LINES
    assert long_functions(long) == [("f", FUNCTION_LINES + 1)]
    script = "function f(a) {\n" + "  a += 1;\n" * (FUNCTION_LINES - 1) + "}\n"
    assert long_script_functions(script) == [("f", FUNCTION_LINES + 1)]
    assert long_script_functions("async function g() {\n  return 1;\n}\n") == []
    assert long_functions("def f():\n" + "    x = 1\n" * (FUNCTION_LINES - 1)) == []
    kept = "SEEN: dict[str, int] = {}\nLAST = 0\ndef f(k):\n    SEEN[k] = 1\n    global LAST\n    LAST = 1\n"
    assert module_state(kept) == ["LAST", "SEEN"]
    assert module_state("MEMO = {}\ndef f(k):\n    MEMO.popitem()\n") == ["MEMO"]
    assert module_state("TABLE = {'a': 1}\ndef f(k):\n    return TABLE[k]\n") == []
    assert module_state(CACHE.read_text(encoding="utf-8")) != []  # the cache does keep state
