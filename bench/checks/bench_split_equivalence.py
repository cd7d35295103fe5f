"""Offline requirements under a reference sentence split and under the shared one, on every question.

``method.requirements`` finds a long question's last sentence with ``sentences.running_sentences``.
This bench runs ``decompose_rules`` on every question of LoCoMo, LongMemEval S dev50 and dev200,
LoCoMo-Plus dev and BEAM (every tier present) twice: once with ``running_sentences`` and once with
the reference split given here (``re.split(r"(?<=[.?!])\\s+", q)``, blank pieces dropped, pieces not
stripped), and counts the questions whose requirements differ (texts, kinds, terms, dates). It also
counts the turn texts that the offline answerer's own split (``llm.rules.sentences``: only before a
capital or a quote) cuts otherwise than ``running_sentences``: what folding that one too would change.
Offline, no model, no store; reads the benchmark files from ``$BFR_DATA`` (``../shared/data``).

    .venv/bin/python -m bench.checks.bench_split_equivalence   # -> bench/out/split_equivalence.json

Does not cover: the arms' rows (``bench_arm_rows.py``), the offline answerer's sentence split.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bfr_core.ingest import load
from bfr_core.ingest.sources import data_dir
from bfr_core.llm import rules
from bfr_core.method import requirements
from bfr_core.sentences import running_sentences

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "split_equivalence.json"
_REFERENCE = re.compile(r"(?<=[.?!])\s+")


def reference_split(text: str) -> list[str]:
    return [s for s in _REFERENCE.split(text) if s.strip()]


def datasets() -> dict[str, tuple[list[str], list[str]]]:
    """(question texts, turn texts) per dataset file found under the data folder."""
    d = Path(data_dir())
    files = {"locomo": ("locomo", d / "locomo10.json", {}),
             "longmemeval_s_dev50": ("longmemeval", d / "longmemeval_s_dev50.json.gz", {}),
             "longmemeval_s_dev200": ("longmemeval", d / "longmemeval_s_dev200.json.gz", {}),
             "locomo_plus_dev": ("locomo-plus", d / "locomo_plus_dev.json", {"locomo": d / "locomo10.json"})}
    files.update({f"beam_{t.name}": ("beam", t, {}) for t in sorted((d / "beam").iterdir()) if t.is_dir()}
                 if (d / "beam").is_dir() else {})
    out = {}
    for name, (kind, path, options) in files.items():
        if path.exists():
            bundle = load(kind, path, **options)
            out[name] = ([q.text for q in bundle.questions], list(dict.fromkeys(t.text for t in bundle.turns)))
    return out


def rows(texts: list[str]) -> list[list]:
    return [[r.to_dict() for r in requirements.decompose_rules(t)] for t in texts]


def main() -> int:
    result: dict = {"benchmark": "split_equivalence", "datasets": {}}
    shared = requirements.running_sentences
    for name, (texts, turns) in datasets().items():
        new = rows(texts)
        requirements.running_sentences = reference_split
        try:
            old = rows(texts)
        finally:
            requirements.running_sentences = shared
        differ = [t for t, a, b in zip(texts, old, new, strict=True) if a != b]
        other = sum(rules.sentences(t) != running_sentences(t) for t in turns)
        result["datasets"][name] = {"questions": len(texts), "differing": len(differ), "examples": differ[:5],
                                    "distinct_turn_texts": len(turns), "turn_texts_split_otherwise_by_rules": other}
        print(name, len(texts), "questions,", len(differ), "differ;", other, "of", len(turns), "turn texts split otherwise")
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
