"""Dense view: cosine ranking over given vectors, the query LRU, exclude-before-k."""

from __future__ import annotations

import numpy as np
import pytest

from bfr_core.records import Turn
from bfr_core.views.base import View
from bfr_core.views.dense import DenseView, query_vector

TURNS = tuple(Turn(f"t{i}", "s", i, "user", f"text {i}") for i in range(4))
VECS = np.asarray([[1, 0], [0, 1], [0.6, 0.8], [0, 1]], np.float32)


class Counting:
    model_id = "counting-dense@2"
    dim = 2

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts, progress=None):
        self.calls += 1
        return np.asarray([[0.0, 1.0] if "up" in t else [1.0, 0.0] for t in texts], np.float32)


def test_cosine_order_ties_by_turn_order():
    view = DenseView(TURNS, VECS, Counting())
    assert isinstance(view, View)
    hits = view.search("up", 4)
    assert [h.turn_id for h in hits] == ["t1", "t3", "t2", "t0"]  # t1 and t3 tie: earlier first
    assert hits[2].score == pytest.approx(0.8) and hits[0].view == "dense"


def test_exclude_before_k():
    view = DenseView(TURNS, VECS, Counting())
    assert [h.turn_id for h in view.search("up", 2, exclude={"t1"})] == ["t3", "t2"]
    assert view.search("up", 0) == []


def test_length_mismatch_and_empty_scope():
    with pytest.raises(ValueError):
        DenseView(TURNS, VECS[:2], Counting())
    empty = DenseView((), np.zeros((0, 2), np.float32), Counting())
    assert empty.search("up", 3) == []


def test_query_vectors_of_registered_models_are_cached(monkeypatch):
    from bfr_core import embed

    model = Counting()
    monkeypatch.setattr(embed, "_model", lambda model_id: model)  # pretend it is registered
    from bfr_core.views import dense

    monkeypatch.setattr(dense, "get_model", lambda model_id=None: model)
    dense._query_vector.cache_clear()
    a = query_vector(model, "going up")
    b = query_vector(model, "going up")
    assert model.calls == 1 and a is b and not a.flags.writeable
    dense._query_vector.cache_clear()


def test_unregistered_models_are_not_cached():
    model = Counting()
    query_vector(model, "up")
    query_vector(model, "up")
    assert model.calls == 2
