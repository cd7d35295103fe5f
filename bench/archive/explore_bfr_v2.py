"""Exploration for issue 16: which scoring pieces of ``bfr`` carry across LoCoMo and LongMemEval dev50.

Ranking-only (no Stage I cover, no Stage II filter): every question's score parts are computed once
through the real store views (stemmed BM25, the dense view, the static turn vectors, speaker and
date masks, sessions, roles, lengths) and cached in memory; each variant combines them and the top-k
of its ranking is scored (LoCoMo Gold Hit / CER, dev50 Turn Hit / recall_all). Gold ids are read by
the scorer only. Not a product benchmark: the figures that ship come from bench/quality/bench_ours.py.

Run: .venv/bin/python -m bench.archive.explore_bfr_v2 [--db bench/out/cache/ours.duckdb]
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import dataclass, replace
from pathlib import Path

from bfr_core.method import turn_scores
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Case:
    qid: str
    qtype: str
    scope: str
    gold: frozenset[str]
    ids: list[str]
    parts: object  # turn_scores.ScoreParts


def load(store: Store, dataset: str) -> list[Case]:
    from bench.lib.ours_runs import Views, questions

    views = Views(store, dataset)
    out = []
    for q in questions(store, dataset):
        v = views(q.scope_id)
        out.append(Case(q.question_id, q.qtype, q.scope_id, frozenset(q.gold), [t.turn_id for t in v.turns],
                        turn_scores.score_parts(v, q.query())))
    return out


def evaluate(cases: list[Case], s: turn_scores.OursSettings, ks=(10, 40)) -> dict:
    res = {}
    for k in ks:
        hit = cer = n_g = 0
        for c in cases:
            sc = turn_scores.combine(c.parts, s)
            top = {c.ids[i] for i in turn_scores.ranking(sc.final)[:k]}
            if c.gold:
                n_g += 1
                hit += bool(top & c.gold)
                cer += c.gold <= top
        res[k] = (round(100 * hit / len(cases), 1), round(100 * cer / max(n_g, 1), 1))
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "ours.duckdb"))
    ap.add_argument("--grid", default="")
    args = ap.parse_args()
    store = Store(args.db)
    data = {d: load(store, d) for d in ("locomo", "longmemeval")}
    grid = json.loads(args.grid) if args.grid else {}
    names = list(grid)
    for combo in itertools.product(*(grid[n] for n in names)) if names else [()]:
        s = replace(turn_scores.DEFAULT, **dict(zip(names, combo, strict=True)))
        r = {d: evaluate(cs, s) for d, cs in data.items()}
        print(dict(zip(names, combo, strict=True)), "LoCoMo", r["locomo"], "LME", r["longmemeval"], flush=True)


if __name__ == "__main__":
    main()
