"""bfr_core.retrieval.readiness: what a dataset's (or a scope's) vector and name caches hold, counted in SQL."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn
from bfr_core.retrieval.embed import store_vectors
from bfr_core.retrieval.encoders import default_spec
from bfr_core.retrieval.readiness import LOAD_S, PER_TEXT_S, Readiness, first_use_seconds, readiness
from bfr_core.retrieval.views.common import index_text
from bfr_core.retrieval.views.entity import store_entities
from bfr_core.store import Store, text_hash

TURNS = (
    Turn("a1_1", "a1", 0, "user", "I adopted a cat named Miso."),
    Turn("a1_2", "a1", 1, "assistant", "Lovely name!"),
    Turn("a1_3", "a1", 2, "user", "I adopted a cat named Miso."),  # a duplicate: one text
    Turn("b1_1", "b1", 0, "Caroline", "I went to the pottery class."),  # indexed as "Caroline: ..."
    Turn("b1_2", "b1", 1, "Melanie", "Lovely name!"),  # same raw text as a1_2, another index text
)


def _store() -> Store:
    sessions = (Session("a1", datetime(2024, 1, 2)), Session("b1", datetime(2024, 1, 3)))
    scopes = (Scope("toy", "x", ("a1",), ("user", "assistant")), Scope("toy", "y", ("b1",), ("Caroline", "Melanie")))
    questions = (Question("toy", "q1", "x", "What is my cat called?", "Miso", "single-hop", ("a1_1",)),)
    bundle = Bundle("toy", "jsonl", "mem", "sha", sessions, TURNS, scopes, questions,
                    IngestReport("toy", "jsonl", "mem", 2, 2, len(TURNS), 1, 1))
    store = Store()
    store.write_bundle(bundle)
    return store


def _models() -> list[str]:
    spec = default_spec()
    return [spec.base] + ([spec.short] if spec.short else [])


def _cache_vectors(store: Store, model_id: str, turns) -> None:
    hashes = sorted({text_hash(index_text(t)) for t in turns})
    store_vectors(store, model_id, hashes, np.zeros((len(hashes), 4), np.float32))


def test_a_store_without_caches_counts_unique_texts_and_nothing_cached():
    r = readiness(_store(), "toy")
    # 4 index texts (the duplicate once; "Lovely name!" twice: bare and "Melanie: ..."), 3 raw texts
    assert r.texts == 4 and r.name_texts == 3 and r.scopes == 2
    assert r.vectors == tuple((m, 0) for m in _models())
    assert r.names == 0 and r.missing == 4 and not r.dense_ready


def test_vectors_are_counted_per_model_and_per_scope():
    store = _store()
    base, *rest = _models()
    _cache_vectors(store, base, TURNS)  # the base model: every text
    if rest:
        _cache_vectors(store, rest[0], TURNS[:3])  # the short model: scope x only
    _cache_vectors(store, "another-model", TURNS)  # another model's rows never count
    r = readiness(store, "toy")
    assert dict(r.vectors)[base] == 4
    if rest:
        assert dict(r.vectors)[rest[0]] == 2 and r.missing == 2 and not r.dense_ready
        x, y = readiness(store, "toy", "x"), readiness(store, "toy", "y")
        assert (x.texts, x.missing, x.dense_ready, x.scopes) == (2, 0, True, 1)
        assert (y.texts, y.missing, y.dense_ready) == (2, 2, False)
        _cache_vectors(store, rest[0], TURNS[3:])
    assert readiness(store, "toy").dense_ready


def test_names_are_keyed_by_the_raw_text():
    store = _store()
    store_entities(store, [text_hash("Lovely name!")], [[]])  # parsed, no names found: it still counts
    r = readiness(store, "toy")
    assert (r.names, r.name_texts) == (1, 3)
    assert readiness(store, "toy", "y").names == 1 and readiness(store, "toy", "x").names == 1


def test_an_unknown_dataset_or_scope_counts_nothing():
    r = readiness(_store(), "nope")
    assert (r.texts, r.name_texts, r.scopes, r.missing) == (0, 0, 0, 0) and r.dense_ready
    assert readiness(_store(), "toy", "nope").texts == 0


@pytest.mark.parametrize("loaded", [False, True])
def test_first_use_seconds_follows_the_missing_texts_per_scope(loaded):
    ready = Readiness(100, (("m", 100),), 100, 0, 4)
    assert first_use_seconds(ready, loaded=loaded) == 0.0
    half = Readiness(100, (("m", 100), ("s", 20)), 100, 0, 4)
    assert first_use_seconds(half, loaded=loaded) == pytest.approx(20 * PER_TEXT_S + (0 if loaded else LOAD_S))
