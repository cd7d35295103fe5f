"""bench/lib/head_training.py: the trainer's trees copied into the workbench's form give its decision values, a
copy that differs is caught, and the folds follow the selection's."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bench.lib import head_training as T
from bench.lib.selection import folds_of
from bfr_core.method.head_model import FEATURES, reorder

ROOT = Path(__file__).resolve().parents[1]


def _data(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, len(FEATURES)))
    x[rng.random(n) < 0.05, 3] = np.nan  # some missing values, which the trees route by their own rule
    logit = 1.5 * x[:, 0] - x[:, 1] * (x[:, 2] > 0) + np.nan_to_num(x[:, 3])
    return x, (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int8)


def test_exported_trees_give_the_trainers_decision_values():
    x, y = _data()
    model = T.fit([x[:2000]], [y[:2000]])
    trees = T.trees_of(model)
    assert trees.feature.shape[0] == T.CONFIG["max_iter"]
    assert T.check_export(model, trees, x) <= 1e-9  # rows it was not fitted on too


def test_a_copy_that_differs_is_caught():
    x, y = _data(1200)
    model = T.fit([x], [y])
    trees = T.trees_of(model)
    with pytest.raises(AssertionError, match="differ"):
        T.check_export(model, replace(trees, baseline=trees.baseline + 1e-6), x)


def test_the_same_data_fits_the_same_trees():
    x, y = _data(1500)
    a, b = T.trees_of(T.fit([x], [y])), T.trees_of(T.fit([x], [y]))
    assert a.to_dict() == b.to_dict()


def test_the_trainers_size_is_the_nested_choice_on_all_folds():
    chosen = json.loads((ROOT / "bench" / "out" / "head_model_size.json").read_text(encoding="utf-8"))
    assert {k: T.CONFIG[k] for k in chosen["chosen on all folds"]} == chosen["chosen on all folds"]


def test_folds_follow_the_selections_assignment():
    def case(group: str) -> SimpleNamespace:
        return SimpleNamespace(group=group)

    locomo = [case(f"conv-{i}") for i in (1, 2, 3, 1)]
    lme = [case(f"q{i}") for i in range(4)]
    cases = {"locomo": locomo, "longmemeval": lme, "official": [lme[2], lme[0]],
             "locomo-plus": [case("conv-3"), case("conv-9")]}
    out = T.fold_of(cases, 2)
    loc = folds_of([c.group for c in locomo], 2)
    assert out["locomo"] == [loc[c.group] for c in locomo]
    lm = folds_of([c.group for c in lme], 2)
    assert out["official"] == [lm["q2"], lm["q0"]]
    assert out["locomo-plus"][0] == loc["conv-3"]  # an item goes with the chat it is stitched into
    assert out["locomo-plus"][1] == folds_of(["conv-3", "conv-9"], 2)["conv-9"]


def _examples(n: int, seed: int) -> list[T.Example]:
    x, y = _data(n * 40, seed)
    order = np.arange(60)
    return [T.Example(x[i * 40:(i + 1) * 40], y[i * 40:(i + 1) * 40], order) for i in range(n)]


def test_each_folds_trees_are_fit_without_that_folds_questions():
    examples = {"locomo": _examples(30, 1), "locomo-plus": _examples(4, 2)}  # locomo-plus is not trained on
    folds = {"locomo": [i % 2 for i in range(30)], "locomo-plus": [0, 1, 0, 1]}
    trees = T.fold_trees(examples, folds, 2, max_iter=20)
    for f in (0, 1):
        rest = [e for e, g in zip(examples["locomo"], folds["locomo"], strict=True) if g != f]
        alone = T.trees_of(T.fit([e.x for e in rest], [e.y for e in rest], max_iter=20))
        assert trees[f].to_dict() == alone.to_dict()
    assert trees[0].to_dict() != trees[1].to_dict()


def test_cross_fitted_orders_use_the_trees_of_the_questions_own_fold():
    examples = {"locomo": _examples(30, 3)}
    folds = {"locomo": [i % 2 for i in range(30)]}
    cases = {"locomo": [SimpleNamespace(question_id=f"q{i}") for i in range(30)]}
    examples["locomo"][5] = None  # a question without an example (no gold, or a remark) has no cross-fitted order
    trees = T.fold_trees(examples, folds, 2, max_iter=20)
    orders = T.cross_fitted(cases, examples, folds, trees)["locomo"]
    assert "q5" not in orders and len(orders) == 29
    e = examples["locomo"][3]
    assert np.array_equal(orders["q3"], reorder(e.order, trees[1].raw(e.x)))
    assert list(orders["q3"][40:]) == list(range(40, 60))  # the turns below the head keep their order


def test_held_out_twice_starts_from_the_selections_own_held_out_figures():
    out = json.loads((ROOT / "bench" / "out" / "head_model.json").read_text(encoding="utf-8"))
    twice = out["held out twice (set weights chosen and trees trained without the fold)"]
    checked = 0
    for d, v in twice["benchmarks"].items():
        for k, figure in v["selection's held-out figures"].items():
            assert v["base"][k] == figure, (d, k)  # the per-fold weights reproduce the selection's set order
            checked += 1
    assert checked >= 4 * len(("hit@10", "cer@10", "hit@40", "cer@40", "hit@5", "cer@5"))
