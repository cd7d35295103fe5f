"""Hybrid view: reciprocal-rank fusion (RRF) of the BM25 and dense views.

Covers: score(t) = sum over views of w_v / (c + rank_v(t)), with rank 1-based over the whole scope
(ties by turn order), c = 60 as in Cormack et al. (2009), weights 1 by default. Ranks are taken
before ``exclude``, so excluding a turn never reshuffles the others; then excluded turns are
skipped and the list is cut at k. Lexical and dense retrieval fail on different questions
(exact names and numbers vs paraphrase), which is why fusion helps (bench/quality/bench_retrieval.py).

Does not cover: score-level (convex) fusion, learned weights, more than two views.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from bfr_core.fusion import RRF_C, rrf
from bfr_core.records import Hit
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.retrieval.views.common import top_hits
from bfr_core.retrieval.views.dense import DenseView


class HybridView:
    """``search(cue, k, exclude)`` by RRF of BM25 and dense rankings."""

    name = "hybrid"

    def __init__(self, bm25: BM25View, dense: DenseView, *, c: float = RRF_C,
                 weights: tuple[float, float] = (1.0, 1.0)) -> None:
        if bm25.turn_ids != dense.turn_ids:
            raise ValueError("BM25 and dense views must cover the same turns in the same order")
        self.bm25, self.dense, self.c, self.weights = bm25, dense, c, weights
        self.turn_ids = bm25.turn_ids

    def scores(self, cue: str) -> np.ndarray:
        if not self.turn_ids:
            return np.zeros(0)
        return rrf([self.bm25.scores(cue), self.dense.scores(cue)], self.c, list(self.weights))

    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]:
        return top_hits(self.scores(cue), self.turn_ids, k, exclude, self.name)
