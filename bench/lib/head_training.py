"""Training the head model (``bfr_core.method.head_model``) from the selection's cases: its examples, the folds, the
trainer and the export of a trained model to ``head_model.Trees``.

An example is a head turn of a words-regime question with gold: its :data:`head_model.FEATURES` row and whether
it is gold.
The trainer is scikit-learn's histogram gradient boosting (pinned in requirements.lock) at :data:`CONFIG`; :func:`trees_of` copies its fitted trees into the workbench's own
numpy form, and :func:`check_export` proves the copy gives the trainer's decision values.

Does not cover: the figures (bench/quality/bench_head_model.py), evaluating a model at run time (``head_model``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.lib.selection import BENCHMARKS, OFFICIAL, PLUS, RankCase, case_order, folds_of, order_row
from bfr_core.method.budget_set import WINDOW
from bfr_core.method.head_model import FEATURES, Trees, features, reorder
from bfr_core.method.stage1 import latest_rows
from bfr_core.method.variants import Variant, combine

# What the trainer fits on: every development benchmark whose gold is turns (LoCoMo-Plus's gold is one cue
# dialogue: its figures are reported, its questions not trained on)
TRAIN = ("locomo", "beam-100k", "longmemeval", OFFICIAL)
# The trainer: its size (iterations, leaves) is the one bench/quality/bench_head_model_size.py chose on all folds by
# nested cross-validation (bench/out/head_model_size.json); the rest was fixed before any held-out figure was read
CONFIG = {"max_iter": 400, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 50,
          "early_stopping": False, "random_state": 0}

# bench_head_model's key for the shipped pipeline held out twice: in each fold, the set weights the selection chose
# without it and trees trained without it (read by the README and results generators)
TWICE = "held out twice (set weights chosen and trees trained without the fold)"
BY_FILE = "longmemeval by file"  # under TWICE: LongMemEval's figures per question file (dev50, dev200)


@dataclass(frozen=True)
class Example:
    """One question's head: its feature rows, which of them are gold, and the order they were taken from."""

    x: np.ndarray
    y: np.ndarray
    order: np.ndarray


def example(c: RankCase, base: Variant, window: int = WINDOW) -> Example | None:
    """The head (first ``window`` turns) of ``base``'s set order for ``c`` (``base`` must name no head model) as an
    :class:`Example`; None for a question in the remark regime, where no head model applies
    (``OursSettings.head_in``)."""
    if base.settings.head_model:
        raise ValueError("the examples come from the set order without a head model")
    sc = combine(c.parts, base)
    if sc.regime == "remark":
        return None
    order = case_order(c, base)
    head = order[:window]
    reqs = c.reqs
    rows = latest_rows([int(c.req_rows[i]) for i in head], reqs, [c.dates[int(i)] for i in head]) if reqs else []
    x = features(order, sc, c.parts, rows, len(reqs), c.vectors, c.asking, window)
    y = np.array([c.ids[int(i)] in c.gold for i in head], dtype=np.int8)
    return Example(x, y, order)


def examples_of(cases: dict[str, Sequence[RankCase]], base: Variant,
                window: int = WINDOW) -> dict[str, list[Example | None]]:
    """Every case's :func:`example` (its head of ``window`` turns under ``base``), aligned with ``cases``; None for
    a case without gold turns or in the remark regime."""
    return {d: [example(c, base, window) if c.gold else None for c in cs] for d, cs in cases.items()}


def add_held_out(rows: dict[str, tuple[list, list]], cases: dict[str, Sequence[RankCase]],
                 examples: dict[str, Sequence[Example | None]], folds: dict[str, Sequence[int]], fold: int,
                 base: Any, scores: Callable[[Example], np.ndarray]) -> None:
    """Append to ``rows[benchmark]`` (base rows, model rows) every case of ``fold``: its row under ``base``'s set
    order and under that order's head re-ordered by ``scores(example)`` (a case without an example, no gold or a
    remark, keeps the base order in both)."""
    for d, cs in cases.items():
        base_rows, model_rows = rows.setdefault(d, ([], []))
        for c, e, g in zip(cs, examples[d], folds[d], strict=True):
            if g != fold:
                continue
            order = case_order(c, base) if e is None else e.order
            base_rows.append(order_row(c, order))
            model_rows.append(order_row(c, order if e is None else reorder(order, scores(e), len(e.y))))


def fold_of(cases: dict[str, Sequence[RankCase]], k: int) -> dict[str, list[int]]:
    """Each case's fold, as the selection's cross-validation assigns them: a benchmark's conversations sorted and
    dealt round-robin; the official cases with their LongMemEval questions; a LoCoMo-Plus item with the LoCoMo
    chat it is stitched into."""
    maps = {d: folds_of([c.group for c in cases[d]], k) for d in BENCHMARKS if d in cases and d != PLUS}
    out = {d: [maps[d][c.group] for c in cases[d]] for d in maps}
    if OFFICIAL in cases:
        out[OFFICIAL] = [maps["longmemeval"][c.group] for c in cases[OFFICIAL]]
    if PLUS in cases:
        own = folds_of([c.group for c in cases[PLUS]], k)
        out[PLUS] = [maps.get("locomo", {}).get(c.group, own[c.group]) for c in cases[PLUS]]
    return out


def fold_trees(examples: dict[str, Sequence[Example | None]], folds: dict[str, Sequence[int]], k: int,
               **size: int) -> list[Trees]:
    """For each of the ``k`` folds, :func:`train_without` that fold: entry ``f`` never saw a question of fold ``f``."""
    return [train_without(examples, folds, f, **size) for f in range(k)]


def train_without(examples: dict[str, Sequence[Example | None]], folds: dict[str, Sequence[int]], fold: int,
                  **size: int) -> Trees:
    """The trainer (:func:`fit`) over the :data:`TRAIN` benchmarks' examples outside ``fold``, exported
    (:func:`trees_of`)."""
    train = [(e.x, e.y) for d in TRAIN if d in examples
             for e, g in zip(examples[d], folds[d], strict=True) if e is not None and g != fold]
    return trees_of(fit([x for x, _ in train], [y for _, y in train], **size))


def cross_fitted(cases: dict[str, Sequence[RankCase]], examples: dict[str, Sequence[Example | None]],
                 folds: dict[str, Sequence[int]], trees: Sequence[Trees]) -> dict[str, dict[str, np.ndarray]]:
    """Benchmark -> question id -> its set order with the head re-ordered by the trees of its own fold
    (:func:`fold_trees`), for every case with an example: each order comes from trees that never saw its
    conversation."""
    return {d: {c.question_id: reorder(e.order, trees[g].raw(e.x), len(e.y))
                for c, e, g in zip(cs, examples[d], folds[d], strict=True) if e is not None}
            for d, cs in cases.items()}


def fit(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], **size: int) -> Any:
    """The trainer at :data:`CONFIG` (``size`` overriding its iterations or leaves) over the rows given."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(**{**CONFIG, **size}).fit(np.vstack(xs), np.concatenate(ys))


def trees_of(model: Any) -> Trees:
    """A fitted ``HistGradientBoostingClassifier`` (binary, numeric features) as :class:`Trees`. Its trees are
    read from the estimator's fitted predictors, the attribute scikit-learn's own ``predict`` walks; the
    version is pinned and :func:`check_export` fails on any difference."""
    predictors = [p[0] for p in model._predictors]  # one tree per boosting iteration (a single class score)
    width = max(len(p.nodes) for p in predictors)
    arrays = {f: np.zeros((len(predictors), width), dtype=dtype)
              for f, dtype in (("feature", np.int64), ("threshold", np.float64), ("left", np.int64),
                               ("right", np.int64), ("leaf", bool), ("value", np.float64),
                               ("missing_left", bool))}
    arrays["leaf"][:] = True  # padding nodes are leaves of value 0 that no descent reaches
    for t, p in enumerate(predictors):
        nodes, n = p.nodes, len(p.nodes)
        arrays["feature"][t, :n] = nodes["feature_idx"]
        arrays["threshold"][t, :n] = nodes["num_threshold"]
        arrays["left"][t, :n] = nodes["left"]
        arrays["right"][t, :n] = nodes["right"]
        arrays["leaf"][t, :n] = nodes["is_leaf"]
        arrays["value"][t, :n] = np.where(nodes["is_leaf"], nodes["value"], 0.0)
        arrays["missing_left"][t, :n] = nodes["missing_go_to_left"]
    baseline = float(np.ravel(model._baseline_prediction)[0])
    return Trees(baseline, **arrays, features=FEATURES)


def check_export(model: Any, trees: Trees, x: np.ndarray) -> float:
    """The largest difference between the trainer's decision values and ``trees.raw`` over ``x``; raises
    when it exceeds 1e-9."""
    gap = float(np.max(np.abs(np.ravel(model.decision_function(x)) - trees.raw(x)))) if len(x) else 0.0
    if gap > 1e-9:
        raise AssertionError(f"exported trees differ from the trainer by {gap}")
    return gap
