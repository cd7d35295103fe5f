"""bench/bench_associative.py: the paired figures of the ranking with and without the antecedent."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_associative as B  # noqa: E402
from bench_ours_selection import COLS  # noqa: E402


def _rows(hits10: list[int], hits40: list[int]) -> np.ndarray:
    rows = np.zeros((len(hits10), len(COLS)), dtype=np.int8)
    rows[:, 0] = 1
    rows[:, COLS.index("hit@10")] = hits10
    rows[:, COLS.index("hit@40")] = hits40
    return rows


def test_figures_pair_the_same_questions_with_and_without_the_step():
    plain, assoc = _rows([1, 0, 0, 1], [1, 1, 0, 1]), _rows([1, 1, 1, 0], [1, 1, 0, 1])
    out = B.figures(plain, assoc)
    assert out["without the step"]["hit@10"] == 50.0 and out["with the antecedent"]["hit@10"] == 75.0
    assert out["hit@10 paired"] == {"only with the antecedent": 2, "only without": 1, "mcnemar_p": 1.0}
    assert out["hit@40 paired"]["only with the antecedent"] == out["hit@40 paired"]["only without"] == 0
    empty = B.figures(_rows([], []), _rows([], []))
    assert empty["hit@10 paired"]["mcnemar_p"] == 1.0
