"""No module of the product reaches into another module's private names.

A name that starts with one underscore is its module's own: another module of ``bfr_core/``, ``ui/``,
``pages/`` or ``app.py`` neither imports it (``from X import _name``) nor reads it off an imported
module (``X._name``). A name another module needs is public in its home.
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


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of this repository."""
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def absolute(node: ast.ImportFrom, path: Path) -> str:
    """The absolute module an ``ImportFrom`` names (relative ones resolved against ``path``)."""
    if not node.level:
        return node.module or ""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)[:-node.level]
    return ".".join(parts + ([node.module] if node.module else []))


def crossings(src: str, path: Path) -> list[str]:
    """Every import of a private name of another project module in ``src``, and every ``module._name``
    read off a project module it imported."""
    tree = ast.parse(src)
    bad, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            home = absolute(node, path)
            if home.split(".")[0] not in PACKAGES:
                continue
            for alias in node.names:
                if private(alias.name):
                    bad.append(f"line {node.lineno}: from {home} import {alias.name}")
                elif is_module(f"{home}.{alias.name}"):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute) and not private(base.attr):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                bad.append(f"line {node.lineno}: {ast.unparse(node)}")
    return bad


def test_the_check_sees_both_forms():
    here = ROOT / "bfr_core" / "x.py"
    src = ("from bfr_core.retrieval.views.dense import _remember\nfrom bfr_core.retrieval import embed\n"
           "import bfr_core.retrieval.encoders as enc\nfrom . import store\n"
           "embed._CALIBRATED\nenc._static_table()\nstore.Store\nembed.encode_texts\nself._x\n")
    assert crossings(src, here) == ["line 1: from bfr_core.retrieval.views.dense import _remember",
                                    "line 5: embed._CALIBRATED", "line 6: enc._static_table"]


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_crosses_modules(path):
    bad = crossings(path.read_text(encoding="utf-8"), path)
    assert not bad, f"{path.relative_to(ROOT)} uses another module's private names: " + "; ".join(bad)
