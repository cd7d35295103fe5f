"""Offline requirements under a reference sentence split and under the shared one, on every question.

``method.requirements`` finds a long question's last sentence with ``sentences.running_sentences``.
This bench runs ``decompose_rules`` on every question of LoCoMo, LongMemEval S dev50 and dev200,
LoCoMo-Plus dev and BEAM (every tier present) twice: once with ``running_sentences`` and once with
the reference split given here (``re.split(r"(?<=[.?!])\\s+", q)``, blank pieces dropped, pieces not
stripped), and counts the questions whose requirements differ (texts, kinds, terms, dates).
Offline, no model, no store; reads the benchmark files from ``$BFR_DATA`` (``../shared/data``).

    PYTHONPATH=. .venv/bin/python bench/bench_split_equivalence.py   # -> bench/out/split_equivalence.json

Does not cover: the arms' rows (``bench_arm_rows.py``), the offline answerer's sentence split.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bfr_core.ingest import load
from bfr_core.ingest.sources import data_dir
from bfr_core.method import requirements

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "split_equivalence.json"
_REFERENCE = re.compile(r"(?<=[.?!])\s+")


def reference_split(text: str) -> list[str]:
    return [s for s in _REFERENCE.split(text) if s.strip()]


def datasets() -> dict[str, list[str]]:
    """Question texts per dataset file found under the data folder."""
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
            out[name] = [q.text for q in load(kind, path, **options).questions]
    return out


def rows(texts: list[str]) -> list[list]:
    return [[r.to_dict() for r in requirements.decompose_rules(t)] for t in texts]


def main() -> int:
    result: dict = {"benchmark": "split_equivalence", "datasets": {}}
    shared = requirements.running_sentences
    for name, texts in datasets().items():
        new = rows(texts)
        requirements.running_sentences = reference_split
        try:
            old = rows(texts)
        finally:
            requirements.running_sentences = shared
        differ = [t for t, a, b in zip(texts, old, new, strict=True) if a != b]
        result["datasets"][name] = {"questions": len(texts), "differing": len(differ), "examples": differ[:5]}
        print(name, len(texts), "questions,", len(differ), "differ")
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
