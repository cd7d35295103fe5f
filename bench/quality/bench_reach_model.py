"""Does a model's decomposition give the set's reach something to reach? `bfr` at 10 and 40 turns on LoCoMo.

The offline requirements are the question's own words, and every one of them is found in the ranking's 40-turn
head already (``bench_reach_misses``), so a reach below the head (``OursSettings.set_reach``) has nothing to bring
in. A model names requirements the question does not spell out (the arrival date beside the order date). This
bench runs ``bfr`` (``ours.run``) on LoCoMo's questions with at least two gold turns (all of them, or a seeded
sample of ``--n``) four ways: offline requirements or the model's (``--provider``, the local 1.5B model by
default: it decomposes; in the remark regime it also writes the antecedent), each at the shipped setting
(``turn_scores.DEFAULT``) and with a reach of ``--reach`` turns; and reports any gold / all gold among the set's
first 10 and 40 turns.

A development figure (the reach is a development rule, and the questions are drawn by gold count); no method
reads gold. Calls are cached in ``--cache`` (a rerun makes none). Writes ``bench/out/reach_model.json``.

Run: ``.venv/bin/python -m bench.quality.bench_reach_model`` (one decomposition call a question: about 8 minutes
for the 413 questions with the local model on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import replace
from pathlib import Path

from bench.lib.git_commit import commit
from bench.lib.ours_runs import OUT
from bfr_core.config import Config, LLMConfig
from bfr_core.evaluation.metrics import complete_evidence_recall, turn_hit
from bfr_core.llm import call_summary, make_llm
from bfr_core.method import ours
from bfr_core.method.arms import ArmContext
from bfr_core.method.budgets import budget_for
from bfr_core.method.turn_scores import DEFAULT
from bfr_core.pipeline import provider_label
from bfr_core.retrieval.scope import scope_views
from bfr_core.store import Store

DATASET, SEED, KS = "locomo", 20261207, (10, 40)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"), help="a store holding LoCoMo as 'locomo'")
    ap.add_argument("--cache", default=str(OUT / "cache" / "reach_model_calls.duckdb"), help="the model's call cache")
    ap.add_argument("--provider", default="local")
    ap.add_argument("--n", type=int, default=0, help="a seeded sample of N questions (0: all)")
    ap.add_argument("--reach", type=int, default=80)
    ap.add_argument("--out", default=str(OUT / "reach_model.json"))
    args = ap.parse_args()
    t0 = time.time()
    store = Store(args.db, read_only=True)
    calls = Store(args.cache)
    llm = make_llm(LLMConfig(provider=args.provider), calls, run_id="bench-reach-model")
    pool = sorted((q for q in store.questions(DATASET) if q.scoreable and len(q.gold) >= 2), key=lambda q: q.question_id)
    drawn = random.Random(SEED).sample(pool, args.n) if 0 < args.n < len(pool) else pool
    sample = sorted(drawn, key=lambda q: q.question_id)
    ways = {"offline requirements": (None, DEFAULT), f"offline requirements, reach {args.reach}": (None, replace(DEFAULT, set_reach=args.reach)),
            "model requirements": (llm, DEFAULT), f"model requirements, reach {args.reach}": (llm, replace(DEFAULT, set_reach=args.reach))}
    hits = {w: {k: [0, 0] for k in KS} for w in ways}  # way -> k -> [any gold, all gold]
    for n, q in enumerate(sample, 1):
        views = scope_views(store, DATASET, q.scope_id)
        for way, (model, settings) in ways.items():
            ctx = ArmContext(views, Config(), budget_for("conv-fusion", "C6"), "C6", model)
            evidence = list(ours.run(ctx, q.query(), settings)[-1].evidence)
            for k in KS:
                hits[way][k][0] += int(turn_hit(evidence[:k], q.gold))
                hits[way][k][1] += int(complete_evidence_recall(evidence[:k], q.gold) or 0)
        print(f"{n}/{len(sample)} {time.time() - t0:.0f} s", flush=True)
    pct = {w: {f"{m}@{k}": round(100 * v[k][i] / max(len(sample), 1), 2) for k in KS for i, m in enumerate(("any", "all"))}
           for w, v in hits.items()}
    out = {"benchmark": "reach_model", "label": "development figure (reads gold to draw the questions)",
           "commit": commit(), "dataset": DATASET, "sample": len(sample), "of": len(pool), "seed": SEED,
           "provider": provider_label(llm), "reach": args.reach, "figures (pct of the sample)": pct,
           "provider_calls": call_summary(calls, "bench-reach-model").provider_calls, "elapsed_s": round(time.time() - t0, 1)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(pct, indent=1))


if __name__ == "__main__":
    main()
