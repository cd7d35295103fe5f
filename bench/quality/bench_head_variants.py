"""Two ways past the shipped head model, measured in its folds and not shipped: a wider head, and a set-aware pass.

Over the selection's cases and folds (``bench.lib.head_training``; the base is the shipped setting without a head
model), every figure is held out by conversation fold and sits beside the shipped head model's on the same
questions (:data:`REFERENCE`: per-turn trees over the set order's first ``budget_set.WINDOW`` turns):

* **wider head** (:data:`WINDOWS`): the same features and trainer over the first 60 or 80 turns, so the trees can
  lift a turn from below 40 into the small sets (and the set at 40 changes);
* **set-aware pass**: after the per-turn trees, the first :data:`STEPS` turns are picked greedily, each by a second
  model that reads what the picks so far hold (:data:`SET_FEATURES`: the requirements no pick supplies yet, the
  closest pick's cosine, picks in the turn's session, a pick within two turns of it). The second model is trained
  on the states the per-turn order passes through (its first t turns picked), with the per-turn scores of its
  training questions from trees that saw neither them nor the held-out fold (no score it learns from is
  in-sample).

Both were fixed before their figures were read (windows 60 and 80; the pass with :data:`STEPS` = 10 and
:data:`SECOND` as its trainer). The base ranking and the features are development choices: these are
development figures. Writes ``bench/out/head_variants.json``.

Run: ``.venv/bin/python -m bench.quality.bench_head_variants`` (it reuses the selection's cached cases when this code built them).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.lib.git_commit import commit
from bench.lib.head_training import (
    CONFIG,
    TRAIN,
    Example,
    cross_fitted,
    examples_of,
    fold_of,
    fold_trees,
    train_without,
)
from bench.lib.ours_runs import OUT
from bench.lib.selection import FOLDS, SEARCHED, RankCase, case_order, cases_in, order_row, summarize
from bfr_core.fusion import rank_order, ranks
from bfr_core.method.budget_set import WINDOW, unit_rows
from bfr_core.method.head_model import Trees
from bfr_core.method.stage1 import latest_rows

REFERENCE = f"shipped: per-turn trees over the first {WINDOW} turns"
WINDOWS = (60, 80)
STEPS = 10
SECOND = {**CONFIG, "max_iter": 200}  # the per-turn trainer at half its iterations
SET_FEATURES = ("per_turn_score", "log_per_turn_rank", "new_requirements", "covered_requirements",
                "requirements", "max_cos_picked", "mean_cos_picked", "log_picks_in_session", "next_to_a_pick",
                "step", "n_requirements")
SHOWN = ("hit@10", "cer@10", "hit@40", "cer@40", "hit@5", "cer@5", "session_recall_all@5", "session_recall_all@10")


def figures(rows: dict[str, list[np.ndarray]]) -> dict[str, dict[str, float]]:
    """Per benchmark, :data:`SHOWN` of its held-out rows."""
    out = {}
    for d, r in rows.items():
        s = summarize(np.array(r))
        out[d] = {"questions": len(r), **{k: s[k] for k in SHOWN}}
    return out


def held_out(cases: dict[str, list[RankCase]], examples: dict[str, list[Example | None]],
             folds: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    """The per-turn trees over each example's head, cross-fitted by fold (``head_training.cross_fitted``)."""
    orders = cross_fitted(cases, examples, folds, fold_trees(examples, folds, FOLDS))
    return figures({d: [order_row(c, orders[d][c.question_id] if e is not None else case_order(c, SEARCHED))
                        for c, e in zip(cs, examples[d], strict=True)] for d, cs in cases.items()})


class Head:
    """What the set features read over one question's head: requirement bitmasks, unit vectors, sessions and
    turn positions in the scope."""

    def __init__(self, c: RankCase, e: Example) -> None:
        head = np.asarray(e.order[: len(e.y)], dtype=np.int64)
        reqs = c.reqs
        self.rows = ([int(r) for r in latest_rows([int(c.req_rows[i]) for i in head], reqs,
                                                 [c.dates[int(i)] for i in head])]
                     if reqs else [0] * len(head))
        self.n_reqs = len(reqs)
        self.unit = unit_rows(np.asarray(c.vectors)[head])
        self.sessions = np.asarray(c.parts.core.session)[head]
        self.position = head

    def state(self, scores: np.ndarray, picked: Sequence[int], step: int) -> np.ndarray:
        """(head, :data:`SET_FEATURES`) given the head positions ``picked`` so far."""
        k, bits = len(scores), (lambda x: bin(x).count("1"))
        covered = 0
        for j in picked:
            covered |= self.rows[j]
        out = np.full((k, len(SET_FEATURES)), np.nan)
        out[:, 0], out[:, 1], out[:, 9], out[:, 10] = scores, np.log1p(ranks(scores) - 1), step, self.n_reqs
        n = max(self.n_reqs, 1)
        out[:, 2] = [bits(r & ~covered) / n for r in self.rows]
        out[:, 3] = bits(covered) / n
        out[:, 4] = [bits(r) / n for r in self.rows]
        if picked:
            cos = self.unit @ self.unit[list(picked)].T
            out[:, 5], out[:, 6] = cos.max(axis=1), cos.mean(axis=1)
            ps, pp = self.sessions[list(picked)], self.position[list(picked)]
            out[:, 7] = np.log1p([(ps == s).sum() for s in self.sessions])
            out[:, 8] = [float(np.any((ps == s) & (np.abs(pp - p) <= 2))) for s, p in zip(self.sessions, self.position,
                                                                                           strict=True)]
        return out


def roll_in(h: Head, scores: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The second model's rows: at each of the first :data:`STEPS` states of the per-turn order, every turn not
    yet picked, labelled gold or not."""
    order = list(rank_order(scores))
    xs, ys = [], []
    for t in range(min(STEPS, len(order))):
        keep = np.ones(len(scores), dtype=bool)
        keep[order[:t]] = False
        xs.append(h.state(scores, order[:t], t)[keep])
        ys.append(y[keep])
    return np.vstack(xs), np.concatenate(ys)


def greedy(h: Head, scores: np.ndarray, model: object) -> np.ndarray:
    """Head positions: :data:`STEPS` picks by the second model, then the rest by the per-turn scores."""
    picked: list[int] = []
    for t in range(min(STEPS, len(scores))):
        s = np.asarray(model.decision_function(h.state(scores, picked, t)), dtype=np.float64)
        s[picked] = -np.inf
        picked.append(int(rank_order(s)[0]))
    rest = [int(i) for i in rank_order(scores) if int(i) not in picked]
    return np.array(picked + rest, dtype=np.int64)


def set_aware(cases: dict[str, list[RankCase]], examples: dict[str, list[Example | None]],
              folds: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    """The set-aware pass, held out by fold (the module docstring)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    heads = {(d, i): Head(c, e) for d, cs in cases.items() for i, (c, e) in enumerate(zip(cs, examples[d], strict=True))
             if e is not None}
    outer = fold_trees(examples, folds, FOLDS)
    rows: dict[str, list[np.ndarray]] = {}
    for f in range(FOLDS):
        xs, ys = [], []
        for g in range(FOLDS):
            if g == f:
                continue
            # per-turn scores of fold g from trees that saw neither g nor f
            inner = {d: [e if e is not None and folds[d][i] != f else None for i, e in enumerate(es)]
                     for d, es in examples.items()}
            trees: Trees = train_without(inner, folds, g)
            for d in TRAIN:
                for i, (e, gg) in enumerate(zip(examples.get(d, ()), folds.get(d, ()), strict=True)):
                    if e is not None and gg == g:
                        x, y = roll_in(heads[(d, i)], trees.raw(e.x), e.y)
                        xs.append(x)
                        ys.append(y)
        second = HistGradientBoostingClassifier(**SECOND).fit(np.vstack(xs), np.concatenate(ys))
        for d, cs in cases.items():
            for i, (c, e, g) in enumerate(zip(cs, examples[d], folds[d], strict=True)):
                if g != f:
                    continue
                if e is None:
                    rows.setdefault(d, []).append(order_row(c, case_order(c, SEARCHED)))
                    continue
                head = np.asarray(e.order[: len(e.y)])
                picks = greedy(heads[(d, i)], outer[f].raw(e.x), second)
                rows.setdefault(d, []).append(order_row(c, np.concatenate([head[picks], e.order[len(e.y):]])))
        print(f"  set-aware fold {f}", flush=True)
    return figures(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--out", default=str(OUT / "head_variants.json"))
    args = ap.parse_args()
    t0, code = time.time(), commit()
    cases = cases_in(Path(args.db))
    folds = fold_of(cases, FOLDS)
    examples = examples_of(cases, SEARCHED)
    out: dict[str, object] = {
        "benchmark": "head_variants", "commit": code, "folds": FOLDS,
        "label": "development figures (held out by conversation fold; the base ranking and the features were "
                 "chosen on these questions); neither variant is shipped",
        REFERENCE: held_out(cases, examples, folds)}
    for w in WINDOWS:
        wide = examples_of(cases, SEARCHED, w)
        out[f"wider head: per-turn trees over the first {w} turns"] = held_out(cases, wide, folds)
        print(f"  window {w}: {time.time() - t0:.0f} s", flush=True)
    out[f"set-aware pass: {STEPS} greedy picks by a second model"] = {
        "features": list(SET_FEATURES), "trainer": SECOND, **set_aware(cases, examples, folds)}
    out["elapsed_s"] = round(time.time() - t0, 1)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in out.items() if isinstance(v, dict)}, indent=1))


if __name__ == "__main__":
    main()
