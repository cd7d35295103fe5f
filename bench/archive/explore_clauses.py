"""Exploration (2026-12-03): does a remark's dense ranking gain from scoring its clauses apart?

A remark ("I finally signed up for the pottery class, and now my weekends are packed.") can join two
states, each presupposing a different earlier statement; one vector for the whole sentence averages
them. Here each LoCoMo-Plus dev item's trigger is split into clauses (sentence ends, commas, semicolons,
and clause-joining conjunctions; a clause keeps at least MIN_WORDS words) and the store's dense view
scores each; the whole-text z-score is compared with the clauses' max, their mean and the whole plus
the max. Ranking-only, hit@10 / hit@40 over the item's whole stitched scope (as the selection scores).
All figures are **development** figures (the dev half). The splitter below is the one measured then,
kept as it ran; the shipped rule is ``bfr_core.sentences.clauses`` (the same breaks and MIN_WORDS,
applied per sentence and to remarks only), chosen by the selection protocol (``remark_clauses``).

Writes ``bench/out/explore_clauses.json``. Run (after bench_ours_selection.py built its store):
``.venv/bin/python -m bench.archive.explore_clauses``. Not a product benchmark.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from bench.lib.ours_runs import OUT, Views, questions
from bench.lib.selection import PLUS, open_all
from bfr_core.fusion import zscore
from bfr_core.method import turn_scores as T
from bfr_core.sentences import form
from bfr_core.text import words

ROOT = Path(__file__).resolve().parents[2]

MIN_WORDS = 3
_SPLIT = re.compile(r"[.!?;,]+|\b(?:and|but|so|because|since|though|although|while)\b", re.IGNORECASE)


def clauses(text: str) -> list[str]:
    """The text's clauses of at least MIN_WORDS words (the whole text when fewer than two)."""
    parts = [p.strip() for p in _SPLIT.split(text) if len(words(p)) >= MIN_WORDS]
    return parts if len(parts) > 1 else [text]


def hits(scores: np.ndarray, ids: tuple[str, ...], gold: frozenset[str]) -> tuple[int, int]:
    order = T.ranking(scores)
    return tuple(int(any(ids[int(i)] in gold for i in order[:k])) for k in (10, 40))  # type: ignore[return-value]


def main() -> None:
    store = open_all(OUT / "cache" / "ours.duckdb")
    views = Views(store, PLUS)
    variants = ("whole", "clause max", "clause mean", "whole + clause max")
    rows: dict[str, dict[str, list[tuple[int, int]]]] = {}
    split = 0
    for q in questions(store, PLUS):
        v = views(q.scope_id, q.text)
        ids = tuple(t.turn_id for t in v.turns)
        whole = zscore(np.asarray(v.dense.scores(q.text), dtype=np.float64))
        cs = clauses(q.text)
        split += len(cs) > 1
        zs = np.stack([zscore(np.asarray(v.dense.scores(c), dtype=np.float64)) for c in cs])
        scored = {"whole": whole, "clause max": zs.max(axis=0), "clause mean": zs.mean(axis=0),
                  "whole + clause max": whole + zs.max(axis=0)}
        f = form(q.text)
        for name in variants:
            for key in ("all", f):
                rows.setdefault(key, {}).setdefault(name, []).append(hits(scored[name], ids, frozenset(q.gold)))
    out = {"benchmark": "explore_clauses", "figures": "development (LoCoMo-Plus dev half), ranking-only hit@10 / hit@40",
           "items split into clauses": split,
           "by form": {key: {"n": len(next(iter(r.values()))),
                             **{name: [round(100 * float(np.mean([h[j] for h in hs])), 2) for j in (0, 1)]
                                for name, hs in r.items()}} for key, r in rows.items()}}
    (OUT / "explore_clauses.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
