"""Hybrid view: reciprocal-rank fusion of BM25 and dense, ranks over the whole scope."""

from __future__ import annotations

import numpy as np
import pytest

from bfr_core.records import Turn
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.retrieval.views.dense import DenseView
from bfr_core.retrieval.views.hybrid import HybridView

TURNS = (
    Turn("t1", "s", 0, "user", "the remote shutter release was ordered online"),
    Turn("t2", "s", 1, "user", "my camera trigger finally arrived"),
    Turn("t3", "s", 2, "user", "we baked bread on sunday"),
    Turn("t4", "s", 3, "user", "shutter speed settings for night photos"),
)


class TableEmbedder:
    """Fixed vectors per text: makes the dense ranking explicit in the test."""

    model_id = "table@2"
    dim = 2
    table = {"trigger": [0.0, 1.0]}

    def encode(self, texts, progress=None):
        return np.asarray([self.table.get(t, [1.0, 0.0]) for t in texts], np.float32)


VECS = np.asarray([[0.6, 0.8], [0.0, 1.0], [1.0, 0.0], [0.8, 0.6]], np.float32)


def test_fusion_order_exclude_and_constant():
    view = HybridView(BM25View(TURNS), DenseView(TURNS, VECS, TableEmbedder()))
    hits = view.search("trigger", 4)
    # bm25: t2, then zeros in turn order (t1, t3, t4); dense: t2, t1, t4, t3. t3 and t4 tie on
    # 1/63 + 1/64, so turn order decides.
    assert [h.turn_id for h in hits] == ["t2", "t1", "t3", "t4"]
    assert hits[0].score == pytest.approx(2 / 61) and hits[0].view == "hybrid"
    assert [h.turn_id for h in view.search("trigger", 2, exclude={"t2"})] == ["t1", "t3"]
    assert HybridView(view.bm25, view.dense, c=1.0).scores("trigger")[1] == pytest.approx(1.0)


def test_mismatched_views_are_refused():
    with pytest.raises(ValueError):
        HybridView(BM25View(TURNS[:2]), DenseView(TURNS, VECS, TableEmbedder()))
