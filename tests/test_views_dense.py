"""Dense view: cosine ranking over given vectors, the query LRU, exclude-before-k."""

from __future__ import annotations

import numpy as np
import pytest

from bfr_core.records import Turn
from bfr_core.retrieval.views.base import View
from bfr_core.retrieval.views.dense import DenseView, query_vector

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
    from bfr_core.retrieval import encoders

    model = Counting()
    monkeypatch.setattr(encoders, "_model", lambda model_id: model)  # pretend it is registered
    from bfr_core.retrieval.views import dense

    monkeypatch.setattr(dense, "get_model", lambda model_id=None: model)
    dense.clear_query_cache()
    a = query_vector(model, "going up")
    b = query_vector(model, "going up")
    assert model.calls == 1 and a is b and not a.flags.writeable
    dense.clear_query_cache()


def test_unregistered_models_are_not_cached():
    model = Counting()
    query_vector(model, "up")
    query_vector(model, "up")
    assert model.calls == 2


class Fixed:
    """Encodes every query to one fixed vector."""

    def __init__(self, model_id: str, vec) -> None:
        self.model_id, self.dim, self.vec = model_id, len(vec), np.asarray(vec, np.float32)

    def encode(self, texts, progress=None):
        return np.tile(self.vec, (len(texts), 1))


def test_short_companion_merges_z_scores_per_group():
    base = np.asarray([[1, 0], [0.9, 0.1], [0, 1], [0.5, 0.5]], np.float32)  # base cos: 1, .9, 0, .5
    short = np.asarray([[0, 0], [0, 0], [1, 0], [0.8, 0.6]], np.float32)  # t0, t1 are long (zero rows)
    view = DenseView(TURNS, base, Fixed("b@2", [1, 0]), short, Fixed("s@2", [1, 0]))
    assert view.short_mask.tolist() == [False, False, True, True]
    scores = view.scores("q")
    # Within each group the z-scores are +1 / -1: each group's best turn comes first.
    assert np.allclose(scores, [1, -1, 1, -1], atol=1e-6)
    order = [h.turn_id for h in view.search("q", 4)]
    assert set(order[:2]) == {"t0", "t2"} and set(order[2:]) == {"t1", "t3"}


def test_all_short_ranks_like_the_short_model_and_none_short_like_the_base():
    base = VECS
    all_short = np.asarray([[0.1, 0.99], [1, 0], [0.6, 0.8], [0.2, 0.98]], np.float32)
    view = DenseView(TURNS, base, Fixed("b2@2", [0, 1]), all_short, Fixed("s2@2", [1, 0]))
    assert [h.turn_id for h in view.search("q", 4)] == ["t1", "t2", "t3", "t0"]
    none_short = np.zeros_like(base)
    view = DenseView(TURNS, base, Fixed("b3@2", [0, 1]), none_short, Fixed("s3@2", [1, 0]))
    assert np.allclose(view.scores("q"), base @ np.asarray([0, 1], np.float32))
    with pytest.raises(ValueError):
        DenseView(TURNS, base, Fixed("b4@2", [0, 1]), none_short[:2], Fixed("s4@2", [1, 0]))


class CountingQueries:
    """A registered-looking query encoder that records each batch it is asked to encode."""

    model_id, dim = "counting", 4

    def __init__(self):
        self.calls = []

    def encode(self, texts, progress=None):
        self.calls.append(list(texts))
        return np.ones((len(texts), 4), np.float32) / 2


def test_prime_batches_a_scopes_queries_into_the_cache(monkeypatch):
    from bfr_core.retrieval import encoders
    from bfr_core.retrieval.views import dense

    m = CountingQueries()
    monkeypatch.setattr(encoders, "_model", lambda model_id: m)
    dense.clear_query_cache()
    dense.prime_queries(m, ["a", "b", "a"])
    assert m.calls == [["a", "b"]]  # one batch, each text once
    dense.query_vector(m, "a"), dense.query_vector(m, "b")
    assert m.calls == [["a", "b"]]  # served from the cache
    dense.query_vector(m, "c")
    assert m.calls[-1] == ["c"]
    dense.clear_query_cache()


def test_prime_reads_question_vectors_from_the_store_and_writes_new_ones(monkeypatch):
    from bfr_core.retrieval import embed, encoders
    from bfr_core.retrieval.views import dense
    from bfr_core.store import Store, text_hash

    m = CountingQueries()
    monkeypatch.setattr(encoders, "_model", lambda model_id: m)
    store = Store()
    cached = np.asarray([[1, 0, 0, 0]], np.float32)
    embed.store_vectors(store, "counting", [text_hash("asked before")], cached)
    dense.clear_query_cache()
    dense.prime_queries(m, ["asked before", "new"], store, encode=False)
    assert m.calls == []  # read back, nothing encoded; "new" is left for its first search
    assert np.array_equal(dense.query_vector(m, "asked before"), cached[0]) and m.calls == []
    dense.prime_queries(m, ["asked before", "new", "other"], store)
    assert m.calls == [["new", "other"]]  # one batch of what the store lacked, then written to it
    assert set(embed.cached_vectors(store, "counting", [text_hash("new"), text_hash("other")])) == {
        text_hash("new"), text_hash("other")}
    dense.clear_query_cache()
