"""Every name has one home: no module of the product imports a name only to hand it on.

A module of ``bfr_core/``, ``ui/``, ``pages/`` or ``app.py`` uses every name it imports at module
level; callers import a name from the module that defines it. The one exception is a package's
``__init__.py`` that lists the name in ``__all__``: that is the package's declared surface
(``bfr_core.llm``: ``from bfr_core.llm import make_llm``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bfr_core", "ui", "pages")


def sources() -> list[Path]:
    files = [p for tree in PACKAGES for p in (ROOT / tree).rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(files) + [ROOT / "app.py"]


def declared(tree: ast.Module) -> set[str]:
    """The names of the module's ``__all__`` (empty without one)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
    return set()


def handed_on(src: str, package_init: bool = False) -> list[str]:
    """The names ``src`` imports at module level and never uses (for a package's ``__init__``, those
    not in its ``__all__`` either)."""
    tree = ast.parse(src)
    imported: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                imported[(alias.asname or alias.name).split(".")[0]] = node.lineno
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    public = declared(tree) if package_init else set()
    return [f"line {line}: {name}" for name, line in imported.items() if name not in used | public]


def test_the_check_finds_a_name_handed_on():
    src = "from bfr_core.runs import list_runs, write_batch\n\ndef f(s):\n    return write_batch(s)\n"
    assert handed_on(src) == ["line 1: list_runs"]
    facade = 'from bfr_core.llm.base import LLM, Secret\n__all__ = ["LLM"]\n'
    assert handed_on(facade, package_init=True) == ["line 1: Secret"]
    assert handed_on(facade) == ["line 1: LLM", "line 1: Secret"]


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_hands_on_a_name_it_does_not_use(path):
    bad = handed_on(path.read_text(encoding="utf-8"), path.name == "__init__.py")
    assert not bad, f"{path.relative_to(ROOT)} imports names it only hands on: " + "; ".join(bad)
