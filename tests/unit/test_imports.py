"""
No import circles among the modules of airflow_partitions.

Every import statement counts, wherever it stands: at the top of a module, under ``if
TYPE_CHECKING:``, or inside a function (a lazy import is a circle put off until it runs, and a
type-only one still ties the two modules together). An import of a module's name from its
package (``from airflow_partitions import task``) counts as an import of that module; a package's
``__init__`` is not counted as imported by its own modules (Python runs it first either way).
"""

from __future__ import annotations

import ast
from pathlib import Path

import airflow_partitions

PACKAGE = Path(airflow_partitions.__file__).parent


def modules(root: Path) -> dict[str, Path]:
    """Return every module of the package at *root*, by dotted name (a package by its own name)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Return the modules of *known* that the module *name* (at *path*) imports, anywhere in it."""

    def nearest(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(nearest(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else nearest(base))
    return {module for module in found if module is not None and module != name}


def circles(root: Path) -> list[list[str]]:
    """Return the import circles among the modules of the package at *root* (each sorted), if any."""
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    # Tarjan's strongly connected components: a component of two or more modules is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_module_of_the_package_imports_itself_back_through_others():
    assert circles(PACKAGE) == []


def test_a_circle_through_a_lazy_or_type_only_import_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.a import A\n")
    (package / "a.py").write_text("from pkg.sub.b import B\nA = 1\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("def f():\n    from ..c import C\nB = 2\n")
    type_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n"
    (package / "c.py").write_text(type_only)
    (package / "d.py").write_text("import pkg.a\n")  # imports into the circle, not part of it
    assert circles(package) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
