"""No import circle among the modules of ``bfr_core``: no two modules import each other, nor do longer loops.

Every import counts, at module level or inside a function (a function-local import hides a circle
from Python's import machinery, not from the reader). An edge runs from a module to each
``bfr_core`` module it names: ``import bfr_core.x``, ``from bfr_core.x import name`` and
``from bfr_core.pkg import module`` (then the module, not the package). Importing a package means
its ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bfr_core"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def imported(path: Path, known: set[str], src: str | None = None) -> set[str]:
    """The ``bfr_core`` modules ``path`` (or ``src`` read as that file) imports anywhere in its body,
    relative imports resolved."""
    me = module_name(path)
    package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    out = set()
    text = path.read_text(encoding="utf-8") if src is None else src
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    out.add(f"{base}.{alias.name}")
                elif base in known:
                    out.add(base)
    out.discard(me)
    return out


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imported(path, set(found)) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One loop per strongly connected group of more than one module (Tarjan's algorithm), each as
    the sorted module names of the group."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def test_the_check_finds_a_pair_and_a_longer_loop():
    edges = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(cycles(edges)) == [["a", "b"], ["c", "d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_local_and_relative_imports_count():
    known = {"bfr_core.llm", "bfr_core.llm.base", "bfr_core.llm.secrets", "bfr_core.records"}
    here = PACKAGE / "llm" / "base.py"
    assert imported(here, known, "def f():\n    from bfr_core.llm.secrets import Redactor\n") == {"bfr_core.llm.secrets"}
    assert imported(here, known, "from . import secrets\n") == {"bfr_core.llm.secrets"}
    assert imported(here, known, "from .. import records\nimport bfr_core.llm\n") == {"bfr_core.records", "bfr_core.llm"}


def test_no_two_modules_import_each_other():
    edges = graph()
    pairs = sorted({tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges.get(b, set())})
    assert not pairs, f"modules importing each other: {pairs}"


def test_no_longer_import_loop():
    loops = cycles(graph())
    assert not loops, f"import loops: {loops}"
