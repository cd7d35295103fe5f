"""bfr_core.retrieval.scope: ScopeViews attributes, alignment, the LRU, lazy encoding of uncached scopes."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn
from bfr_core.retrieval import scope as idx
from bfr_core.retrieval.embed import ensure_embeddings
from bfr_core.retrieval.scope import ScopeViews, clear_cache, scope_views
from bfr_core.retrieval.views.base import View
from bfr_core.store import Store

TEXTS = ["I ordered a remote shutter release", "Nice, which brand?", "It arrived today from Boston",
         "Great, enjoy it", "Caroline baked bread with Melanie"]


class BowEmbedder:
    """Hashed bag of words: deterministic, no model, counts encoded texts."""

    model_id = "bow@32"
    dim = 32

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts, progress=None):
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, sum(map(ord, w)) % self.dim] += 1
        n = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(n, 1e-12)


def bundle() -> Bundle:
    sessions = (Session("s1", datetime(2023, 2, 5)), Session("s2", datetime(2023, 2, 10)))
    turns = (
        Turn("s1_1", "s1", 0, "user", TEXTS[0]), Turn("s1_2", "s1", 1, "assistant", TEXTS[1]),
        Turn("s2_1", "s2", 0, "user", TEXTS[2]), Turn("s2_2", "s2", 1, "assistant", TEXTS[3]),
        Turn("s2_3", "s2", 2, "Caroline", TEXTS[4]),
    )
    scopes = (Scope("d", "h1", ("s2", "s1")), Scope("d", "h2", ("s1",)))
    qs = (Question("d", "q1", "h1", "When did the shutter release arrive?", "Feb 10", "temporal", ("s2_1",)),)
    return Bundle("d", "jsonl", "mem", "sha", sessions, turns, scopes, qs, IngestReport("d", "jsonl", "mem"))


@pytest.fixture
def store() -> Store:
    clear_cache()
    s = Store()
    s.write_bundle(bundle())
    yield s
    clear_cache()


def test_attributes_and_alignment(store):
    model = BowEmbedder()
    v = scope_views(store, "d", "h1", model=model)
    assert isinstance(v, ScopeViews)
    assert [t.turn_id for t in v.turns] == ["s2_1", "s2_2", "s2_3", "s1_1", "s1_2"]  # scope order
    assert v.position["s1_1"] == 3 and v.by_id["s2_3"].speaker == "Caroline"
    assert v.turn_vectors.shape == (5, 32) and v.turn_vectors.dtype == np.float32
    assert np.allclose(v.turn_vectors[3], model.encode([TEXTS[0]])[0])
    assert np.allclose(v.turn_vectors[2], model.encode([f"Caroline: {TEXTS[4]}"])[0])  # named speaker
    assert v.bm25_scores("shutter release").shape == (5,) and v.bm25_scores("shutter release")[3] > 0
    assert v.encode(["a b", "c"]).shape == (2, 32) and v.encode([]).shape[0] == 0
    for view in (v.bm25, v.dense, v.entity, v.session, v.hybrid):
        assert isinstance(view, View)
    assert v.dense.search("shutter release ordered", 1)[0].turn_id == "s1_1"
    assert [h.turn_id for h in v.session.search("s2_1", 5)] == ["s2_2", "s2_3"]
    assert v.scope.scope_id == "h1" and v.scope.dataset_id == "" and v.model is model


def test_lru_returns_the_same_object_and_encodes_once(store):
    model = BowEmbedder()
    a = scope_views(store, "d", "h1", model=model)
    assert scope_views(store, "d", "h1", model=model) is a
    assert model.encoded == 5
    scope_views(store, "d", "h2", model=model)  # h2's texts were cached in the store by h1
    assert model.encoded == 5


def test_lru_is_bounded(store, monkeypatch):
    monkeypatch.setattr(idx._CACHE, "maxsize", 1)
    model = BowEmbedder()
    a = scope_views(store, "d", "h1", model=model)
    scope_views(store, "d", "h2", model=model)
    assert scope_views(store, "d", "h1", model=model) is not a


def test_reingest_invalidates(store):
    model = BowEmbedder()
    a = scope_views(store, "d", "h1", model=model)
    import time

    time.sleep(0.01)
    store.write_bundle(bundle(), replace=True)
    assert scope_views(store, "d", "h1", model=model) is not a


def test_embeddings_from_ingest_are_reused(store):
    model = BowEmbedder()
    assert ensure_embeddings(store, "d", model=model) == 5
    scope_views(store, "d", "h1", model=model)
    assert model.encoded == 5  # nothing re-encoded at open


def test_unknown_scope_raises(store):
    from bfr_core.duck import StoreError

    with pytest.raises(StoreError):
        scope_views(store, "d", "nope", model=BowEmbedder())


def test_default_spec_adds_the_short_model_to_the_dense_view(store, monkeypatch):
    from bfr_core.retrieval import encoders
    from bfr_core.retrieval.encoders import ShortOnlyEmbedder
    from bfr_core.retrieval.views import dense

    monkeypatch.delenv("BFR_DENSE_MODEL", raising=False)
    base, short = BowEmbedder(), ShortOnlyEmbedder(BowEmbedder(), max_tokens=8)
    models = {encoders.STATIC: base, encoders.DenseSpec().short: short}
    monkeypatch.setattr(encoders, "_model", lambda model_id: models[model_id])
    dense.clear_query_cache()
    v = scope_views(store, "d", "h1")
    assert v.model is base and v.dense.short_model is short
    assert v.turn_vectors.shape == (5, 32)  # turn_vectors stay in the base space
    # "Caroline: Caroline baked bread with Melanie" is 9 word pieces with [CLS]/[SEP]: long.
    assert v.dense.short_mask.tolist() == [True, True, False, True, True]
    assert v.dense.search("shutter release ordered", 1)[0].turn_id == "s1_1"
    dense.clear_query_cache()
