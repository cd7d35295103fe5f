"""One home per primitive: rankings, z-scores and fusions are defined only in bfr_core/fusion.py, and
scope payloads only in bfr_core/retrieval/payload.py, for bfr_core and the benches alike."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUSION = ROOT / "bfr_core" / "fusion.py"
PAYLOAD = ROOT / "bfr_core" / "retrieval" / "payload.py"
FUSION_NAMES = re.compile(r"^_?(z|zs|zscore|z_?norm|z_?fusion|rrf|rank_fusion|rank_order|ranks)$")
PAYLOAD_NAMES = re.compile(r"(?i)^_?(ship(ped)?_?scope|scope_?payload|known_?ner|shipped_?ner|worker_views)$")


def _sources() -> list[Path]:
    return sorted(p for d in ("bfr_core", "bench") for p in (ROOT / d).rglob("*.py") if "out" not in p.parts)


def _defs(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.lineno, n.name) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)]


def test_rankings_zscores_and_fusions_live_only_in_fusion():
    bad = [f"{p.relative_to(ROOT)}:{line} {name}" for p in _sources() if p != FUSION
           for line, name in _defs(p) if FUSION_NAMES.match(name)]
    assert bad == []
    std = [str(p.relative_to(ROOT)) for p in _sources() if p != FUSION and ".std() +" in p.read_text(encoding="utf-8")]
    assert std == []


def test_scope_payloads_live_only_in_retrieval_payload():
    bad = [f"{p.relative_to(ROOT)}:{line} {name}" for p in _sources() if p != PAYLOAD
           for line, name in _defs(p) if PAYLOAD_NAMES.search(name)]
    assert bad == []
