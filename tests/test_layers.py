"""The package layers of bfr_core: every import (lazy ones included) runs down, never up or across.

Layers, lowest first; a module may import its own package and any lower layer:
base modules (records, config, errors, progress, text, plots, dates, lru, jsonl, fusion, arm_names) < lexicon, duck < store, runs, outfile,
sentences, verdicts < llm,
retrieval < ingest, roles < method < baselines < pipeline < evaluation < commands, cli.
``bfr_core`` never imports streamlit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "bfr_core"
BASE = {"records", "config", "errors", "progress", "text", "plots", "dates", "lru", "jsonl", "fusion", "arm_names"}
LAYER = {
    **dict.fromkeys(BASE, 0),
    "lexicon": 1, "duck": 1,
    "store": 2, "runs": 2, "outfile": 2, "sentences": 2, "verdicts": 2,
    "llm": 3, "retrieval": 3,
    "ingest": 4, "roles": 4,
    "method": 5,
    "baselines": 6,
    "pipeline": 7,
    "evaluation": 8,
    "commands": 9, "cli": 9,
}


def _unit(module: str) -> str:
    """The layer unit of a dotted bfr_core module: its sub-package, or the top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "bfr_core":
                out += [(node.lineno, f"bfr_core.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, node.module))
    return out


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_belongs_to_a_layer():
    units = {_unit("bfr_core." + ".".join(p.relative_to(ROOT).with_suffix("").parts)) for p in _modules()}
    assert units - {"__init__", ""} <= set(LAYER), units - set(LAYER)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_run_down_the_layers(path):
    me = _unit("bfr_core." + ".".join(path.relative_to(ROOT).with_suffix("").parts))
    bad = []
    for line, name in _imports(path):
        assert not name.startswith("streamlit"), f"{path.name}:{line} imports streamlit"
        if not name.startswith("bfr_core.") or me in ("__init__", ""):
            continue
        other = _unit(name)
        if other == me:
            continue
        if LAYER[other] >= LAYER[me]:
            bad.append(f"line {line}: {name} (layer {LAYER[other]} from layer {LAYER[me]})")
    assert not bad, f"{path.relative_to(ROOT)} imports up or across: " + "; ".join(bad)


def test_the_arm_registry_names_functions():
    from bfr_core import pipeline

    assert all(callable(fn) for fn in pipeline.ARMS.values())
