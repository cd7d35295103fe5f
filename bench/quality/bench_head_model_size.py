"""How large should the head model's trees be? Chosen inside the folds, on a grid fixed before any figure of it.

``bench_head_model`` trains at one fixed size (``head_training.CONFIG``), the size this bench chooses on all folds. This bench chooses the size by nested cross-validation over :data:`SIZES`
(leaves x iterations, fixed before this bench first ran): in each of the five outer conversation folds, every
size is scored by leave-one-fold-out over the other four folds (the trees fitted on three, scored on the fourth,
their objective pooled), the best is fitted on the four and scored on the outer fold. The objective is the mean,
over the benchmarks the trees learn from (``head_training.TRAIN``), of (any gold @10 + all gold @10) / 2 on the
questions left out. Then the same choice over all five folds gives the size to ship. Iterations are read from one
fit of the largest count (the trainer's staged decision values), so each leaf count costs one fit per split.

Development figures, as ``bench_head_model``'s are (the base ranking was chosen on every conversation).

Run: ``.venv/bin/python -m bench.quality.bench_head_model_size`` (writes ``bench/out/head_model_size.json``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.lib.git_commit import commit
from bench.lib.head_training import CONFIG, TRAIN, Example, add_held_out, examples_of, fit, fold_of
from bench.lib.ours_runs import OUT
from bench.lib.selection import (
    FOLDS,
    SEARCHED,
    RankCase,
    cases_in,
    order_row,
    summarize,
)
from bfr_core.method.head_model import reorder

SIZES = {"max_leaf_nodes": (7, 15, 31), "max_iter": (100, 200, 400)}
SHOWN = ("hit@10", "cer@10", "hit@5", "cer@5", "session_recall_all@5", "session_recall_all@10")


def objective(rows: dict[str, list[np.ndarray]]) -> float:
    """Mean over the benchmarks given of (hit@10 + cer@10) / 2 over their rows."""
    means = []
    for r in rows.values():
        s = summarize(np.array(r))
        means.append((s["hit@10"] + s["cer@10"]) / 2)
    return float(np.mean(means))


def scores_by_size(train: Sequence[Example], test: Sequence[tuple[str, RankCase, Example]],
                   leaves: int) -> dict[int, dict[str, list[np.ndarray]]]:
    """One fit at the largest iteration count; per iteration count of :data:`SIZES`, the test questions' rows by
    benchmark with their heads re-ordered by the trees up to that iteration."""
    model = fit([e.x for e in train], [e.y for e in train], max_leaf_nodes=leaves, max_iter=max(SIZES["max_iter"]))
    x = np.vstack([e.x for _, _, e in test])
    cuts = np.cumsum([0] + [len(e.x) for _, _, e in test])
    out: dict[int, dict[str, list[np.ndarray]]] = {}
    for i, values in enumerate(model.staged_decision_function(x), start=1):
        if i in SIZES["max_iter"]:
            rows: dict[str, list[np.ndarray]] = {}
            for j, (d, c, e) in enumerate(test):
                rows.setdefault(d, []).append(order_row(c, reorder(e.order, np.ravel(values)[cuts[j]:cuts[j + 1]])))
            out[i] = rows
    return out


def choose(items: Sequence[tuple[str, RankCase, Example, int]], folds: Sequence[int]) -> tuple[dict, dict]:
    """The size with the best leave-one-fold-out objective over ``folds`` (ties: the smaller trees, then fewer
    iterations), and every size's objective."""
    pooled: dict[tuple[int, int], dict[str, list[np.ndarray]]] = {}
    for leaves in SIZES["max_leaf_nodes"]:
        for f in folds:
            train = [e for _, _, e, g in items if g in folds and g != f]
            test = [(d, c, e) for d, c, e, g in items if g == f]
            for iters, rows in scores_by_size(train, test, leaves).items():
                for d, r in rows.items():
                    pooled.setdefault((leaves, iters), {}).setdefault(d, []).extend(r)
    objectives = {k: objective(v) for k, v in pooled.items()}
    best = max(objectives, key=lambda k: (objectives[k], -k[0], -k[1]))
    return ({"max_leaf_nodes": best[0], "max_iter": best[1]},
            {f"{k[0]} leaves x {k[1]}": round(v, 3) for k, v in sorted(objectives.items())})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--out", default=str(OUT / "head_model_size.json"))
    args = ap.parse_args()
    t0 = time.time()
    cases = cases_in(Path(args.db))
    folds = fold_of(cases, FOLDS)
    examples = examples_of(cases, SEARCHED)
    items = [(d, c, e, g) for d in TRAIN if d in cases
             for c, e, g in zip(cases[d], examples[d], folds[d], strict=True) if e is not None]
    per_fold, held = [], {d: ([], []) for d in cases}
    for f in range(FOLDS):
        inner = [g for g in range(FOLDS) if g != f]
        size, objectives = choose(items, inner)
        model = fit([e.x for _, _, e, g in items if g != f], [e.y for _, _, e, g in items if g != f], **size)
        add_held_out(held, cases, examples, folds, f, SEARCHED,
                     lambda e, model=model: np.ravel(model.decision_function(e.x)))
        per_fold.append({"fold": f, "chosen": size, "inner objectives": objectives})
        print(f"  fold {f}: {size} ({time.time() - t0:.0f} s)", flush=True)
    figures = {}
    for d, (b, m) in held.items():
        sb, sm = summarize(np.array(b)), summarize(np.array(m))
        figures[d] = {"questions": len(b), "base": {k: sb[k] for k in SHOWN}, "head model": {k: sm[k] for k in SHOWN}}
    size, objectives = choose(items, list(range(FOLDS)))
    out = {"benchmark": "head_model_size", "commit": commit(), "sizes": {k: list(v) for k, v in SIZES.items()},
           "fixed": {k: v for k, v in CONFIG.items() if k not in SIZES},
           "shipped size (head_training.CONFIG)": {k: CONFIG[k] for k in SIZES},
           "label": "development figures (the base ranking was chosen on every conversation)",
           "held out (nested cross-validation, held-out folds pooled)": figures, "per_fold": per_fold,
           "chosen on all folds": size, "objectives on all folds": objectives,
           "elapsed_s": round(time.time() - t0, 1)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"chosen": size, "figures": figures}, indent=1))


if __name__ == "__main__":
    main()
