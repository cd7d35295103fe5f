"""Does a learned re-selection of the set's 40-turn head (``bfr_core.method.head_model``) make small sets sufficient?

Over the selection's cases (``bench.lib.selection``: LoCoMo, dev50 + dev200 and their official user-turn corpus,
LoCoMo-Plus dev, BEAM 100K; the pickle ``bench_ours_selection`` writes, built here from ``--db`` when missing or
of other code), the base is the shipped setting without a head model. Five conversation folds, assigned as the
selection's cross-validation assigns them: in each, the trainer (``bench.lib.head_training``, at the size
``bench_head_model_size`` chose on all folds) fits on the other folds' heads and re-orders the held-out
questions' heads (words-regime questions: a remark's set keeps its own order, ``OursSettings.head_in``); the
pooled held-out figures stand beside the base's on the same questions, with how many
questions each figure at 10 gains and loses. Then it fits on every question and, with ``--write-model``, writes
the trees to ``bfr_core/method/head_model.json`` (the file ``ours.toml`` names), after checking that the exported
trees give the trainer's decision values.

What the figures are: the model is trained in folds, but the base ranking's weights were chosen on every
conversation of these benchmarks, the features were chosen after reading held-out figures of earlier versions
of this bench on them, and the trainer's size was chosen on every fold (``bench_head_model_size``'s nested
figures choose it inside the folds): development figures. BEAM 500K and 1M, which no
step of this saw, are the held-out test (bench/quality/bench_beam.py with the shipped setting).

Held out twice: ``--selection`` names the selection run that chose the shipped set weights (its chosen setting
must be the shipped one). In each fold, the weights that run chose without the fold (its ``per_fold`` knobs)
give the set order, and trees trained without the fold (over that order's heads) re-order it: neither the
weights nor the trees saw the fold's conversations. Its base is the selection's own held-out figure (recorded
beside it as a check); its figures are the shipped pipeline's cross-validated ones (the features and the
trainer's size stay development choices).

Run: ``.venv/bin/python -m bench.quality.bench_head_model [--write-model]`` (writes ``bench/out/head_model.json``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bench.lib.git_commit import commit
from bench.lib.head_training import (
    BY_FILE,
    CONFIG,
    TRAIN,
    TWICE,
    add_held_out,
    check_export,
    examples_of,
    fit,
    fold_of,
    fold_trees,
    train_without,
    trees_of,
)
from bench.lib.ours_runs import OUT
from bench.lib.selection import (
    CHOSEN,
    COLS,
    FOLDS,
    HELD_OUT,
    SEARCHED,
    cases_in,
    part_figures,
    summarize,
    variant_of,
)
from bfr_core.method import head_model
from bfr_core.method.budget_set import WINDOW
from bfr_core.method.head_model import FEATURES

LABEL = ("development figures: a model trained in conversation folds over a base ranking chosen on every "
         "conversation, its features and configuration chosen after reading earlier held-out figures of this bench")
SHOWN = ("hit@10", "cer@10", "hit@40", "cer@40", "hit@5", "cer@5", "session_recall_all@5", "session_recall_all@10")
MODEL_FILE = "head_model.json"
SELECTION = "ours_selection_asks_guard_rerun.json"  # the selection run whose chosen setting ships (ours.toml)


def paired(base: np.ndarray, model: np.ndarray, figure: str) -> dict[str, int]:
    """Questions ``figure`` counts under the model and not the base (gained), and the other way (lost)."""
    j = COLS.index(figure)
    return {"gained": int(((model[:, j] == 1) & (base[:, j] == 0)).sum()),
            "lost": int(((model[:, j] == 0) & (base[:, j] == 1)).sum())}


def held_out_twice(cases: dict, folds: dict[str, list[int]], selection: dict) -> dict:
    """The base and head-model figures with the set weights ``selection`` chose without each fold and trees
    trained without it (the module docstring): per benchmark (``benchmarks``) and per LongMemEval question file
    (:data:`BY_FILE`); raises when the selection's folds are not these."""
    if variant_of(selection[CHOSEN]["knobs"]) != SEARCHED:
        raise SystemExit("the selection run's chosen setting is not the shipped one: name the run that chose it")
    rows: dict[str, tuple[list, list]] = {d: ([], []) for d in cases}
    index: dict[str, list[int]] = {d: [] for d in cases}  # the case of each row, in add_held_out's order
    for p in selection["cross_validation"]["per_fold"]:
        f, variant = p["fold"], variant_of(p["knobs"])
        held = sorted({c.group for c, g in zip(cases["locomo"], folds["locomo"], strict=True) if g == f})
        if held != sorted(p["held_out"]["locomo"]):
            raise SystemExit(f"fold {f} holds other LoCoMo conversations in the selection run")
        examples = examples_of(cases, variant)
        trees = train_without(examples, folds, f)
        add_held_out(rows, cases, examples, folds, f, variant, lambda e, trees=trees: trees.raw(e.x))
        for d in cases:
            index[d] += [i for i, g in enumerate(folds[d]) if g == f]
    cv = selection["cross_validation"][HELD_OUT]
    out = {}
    for d, (b, m) in rows.items():
        sb, sm = summarize(np.array(b)), summarize(np.array(m))
        out[d] = {"questions": len(b), "base": {k: sb[k] for k in SHOWN}, "head model": {k: sm[k] for k in SHOWN},
                  "paired": {k: paired(np.array(b), np.array(m), k) for k in ("hit@10", "cer@10")},
                  "selection's held-out figures": {k: cv[d][k] for k in SHOWN if k in cv.get(d, {})}}
    files = {k: part_figures(cases, {d: np.array(r[j]) for d, r in rows.items()},
                             {d: np.array(i) for d, i in index.items()}) for j, k in ((0, "base"), (1, "head model"))}
    return {"benchmarks": out, BY_FILE: files}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--out", default=str(OUT / "head_model.json"))
    ap.add_argument("--write-model", action="store_true", help=f"write bfr_core/method/{MODEL_FILE}")
    ap.add_argument("--selection", default=str(OUT / SELECTION),
                    help="the selection run that chose the shipped set weights (its per-fold choices)")
    args = ap.parse_args()
    t0 = time.time()
    cases = cases_in(Path(args.db))
    base = SEARCHED
    examples = examples_of(cases, base)  # None: no gold or a remark
    folds = fold_of(cases, FOLDS)
    t_examples = time.time() - t0
    rows: dict[str, tuple[list, list]] = {d: ([], []) for d in cases}
    for f, trees in enumerate(fold_trees(examples, folds, FOLDS)):
        add_held_out(rows, cases, examples, folds, f, base, lambda e, trees=trees: trees.raw(e.x))
    print(f"  folds: {time.time() - t0:.0f} s", flush=True)
    figures = {}
    for d, (b, m) in rows.items():
        b_arr, m_arr = np.array(b), np.array(m)
        sb, sm = summarize(b_arr), summarize(m_arr)
        figures[d] = {"questions": len(b), "base": {k: sb[k] for k in SHOWN}, "head model": {k: sm[k] for k in SHOWN},
                      "paired": {k: paired(b_arr, m_arr, k) for k in ("hit@10", "cer@10", "hit@5", "cer@5")}}
    out = {"benchmark": "head_model", "label": LABEL, "commit": commit(), "window": WINDOW, "folds": FOLDS,
           "features": list(FEATURES), "trainer": {"estimator": "sklearn HistGradientBoostingClassifier", **CONFIG},
           "trained on": list(TRAIN), "base": "the shipped setting (ours.toml) without a head model",
           HELD_OUT: figures}
    selection = json.loads(Path(args.selection).read_text(encoding="utf-8"))
    out[TWICE] = {"selection": Path(args.selection).name, **held_out_twice(cases, folds, selection)}
    print(f"  held out twice: {time.time() - t0:.0f} s", flush=True)
    train = [(e.x, e.y) for d in TRAIN if d in cases for e in examples[d] if e is not None]
    x_all = np.vstack([x for x, _ in train])
    model = fit([x for x, _ in train], [y for _, y in train])
    trees = trees_of(model)
    out["final model"] = {"examples": int(len(x_all)), "gold": int(sum(int(y.sum()) for _, y in train)),
                          "trees": int(trees.feature.shape[0]), "export gap": check_export(model, trees, x_all),
                          "written": bool(args.write_model)}
    if args.write_model:
        (head_model.HERE / MODEL_FILE).write_text(json.dumps(trees.to_dict()) + "\n", encoding="utf-8")
    out["elapsed_s"] = {"examples": round(t_examples, 1), "total": round(time.time() - t0, 1)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
