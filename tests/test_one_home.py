"""One home per primitive: rankings, z-scores and fusions are defined only in bfr_core/fusion.py, and
scope payloads only in bfr_core/retrieval/payload.py, for bfr_core and the benches alike; text is cut
into sentences only by bfr_core/sentences.py, and questions into requirements offline only by
bfr_core/llm/rules_requirements.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUSION = ROOT / "bfr_core" / "fusion.py"
PAYLOAD = ROOT / "bfr_core" / "retrieval" / "payload.py"
FUSION_NAMES = re.compile(r"^_?(z|zs|zscore|z_?norm|z_?fusion|rrf|rank_fusion|rank_order|ranks)$")
SENTENCES = ROOT / "bfr_core" / "sentences.py"
SENTENCE_NAMES = re.compile(r"(?i)^_?(sentences|\w*_sentences|split_?sentences?|sentence_?split\w*)$")
# a break after a sentence end mark ("(?<=[.!?])") or a run up to one ("[^.!?"): the shape of a splitter
SENTENCE_BREAK = re.compile(r"\(\?<=\[[^\]]*[!?][^\]]*\]\)|\[\^[^\]]*\.[^\]]*[!?]")
DECOMPOSER = ROOT / "bfr_core" / "llm" / "rules_requirements.py"
MODEL_DECOMPOSER = ROOT / "bfr_core" / "roles" / "decomposer.py"  # the role that asks a model
DECOMPOSER_NAMES = re.compile(r"^_?(decompose\w*|\w*interval_events|\w*temporal_endpoints|split_core)$")
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


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_one_sentence_splitter_in_bfr_core():
    core = [p for p in _sources() if p.is_relative_to(ROOT / "bfr_core")]
    named = [(str(p.relative_to(ROOT)), name) for p in core for _, name in _defs(p) if SENTENCE_NAMES.match(name)]
    assert named == [("bfr_core/sentences.py", "sentences")]
    breaks = [f"{p.relative_to(ROOT)}:{line}" for p in core for line, text in _strings(p)
              if SENTENCE_BREAK.search(text)]
    assert [b.split(":")[0] for b in breaks] == [str(SENTENCES.relative_to(ROOT))], breaks


def test_the_splitter_shape_is_recognised():
    assert SENTENCE_BREAK.search(r"(?<=[.!?])\s+|\n+") and SENTENCE_BREAK.search(r"[^.!?\n]+[.!?]*")
    assert not SENTENCE_BREAK.search(r"(?<=[.;])\s+") and not SENTENCE_BREAK.search(r"(^|[.!?:;\"(\n]\s*)$")
    assert SENTENCE_NAMES.match("running_sentences") and SENTENCE_NAMES.match("sentences")
    assert not SENTENCE_NAMES.match("sentence_form")


def _imported(path: Path) -> set[str]:
    """Dotted names ``path`` imports (``module.name`` for a from-import)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
            for a in n.names}


def test_one_offline_decomposer_in_bfr_core():
    core = [p for p in _sources() if p.is_relative_to(ROOT / "bfr_core")]
    grammar = [str(p.relative_to(ROOT)) for p in core if "bfr_core.llm.rules_forms.parts" in _imported(p)]
    assert grammar == [str(DECOMPOSER.relative_to(ROOT))]  # the question forms feed one decomposer
    defining = [p for p in core if p not in (DECOMPOSER, MODEL_DECOMPOSER)
                and any(DECOMPOSER_NAMES.match(name) for _, name in _defs(p))]
    # any other decompose function reads the one decomposer's requirements
    assert {str(p.relative_to(ROOT)) for p in defining} == {"bfr_core/llm/rules.py", "bfr_core/method/requirements.py"}
    assert all("bfr_core.llm.rules_requirements.decompose_rules" in _imported(p) for p in defining)
