"""retrieval.payload: a scope's views rebuilt in a worker from what the driver read from the store."""

from __future__ import annotations

import numpy as np

from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.retrieval import payload as pl
from bfr_core.retrieval.scope import scope_views
from bfr_core.retrieval.views import entity as ent
from bfr_core.store import Store


def test_payload_views_rank_as_the_drivers_views(tmp_path):
    store = ensure_demo_store(tmp_path / "demo.duckdb")
    qs = store.questions("demo")
    scope_id = qs[0].scope_id
    asked = [q.text for q in qs if q.scope_id == scope_id]
    payload = pl.scope_payload(store, "demo", scope_id, asked)
    views = scope_views(store, "demo", scope_id, asking=asked)
    built, ner = pl.payload_views(payload)
    assert pl.payload_views(payload)[0] is built  # built once per scope per process
    assert payload.key[:2] == ("demo", scope_id) and built.turns == views.turns
    assert np.array_equal(built.turn_vectors, views.turn_vectors)
    for text in asked:
        assert np.array_equal(built.dense.scores(text), views.dense.scores(text))
        assert np.array_equal(built.bm25.scores(text), views.bm25.scores(text))
    store.close()


def test_ner_a_worker_parses_goes_back_to_the_parent_and_is_cached(monkeypatch):
    """A worker parses only the texts the payload's cache lacked, once each, and hands them back;
    ``store_entities`` (what the parent calls) caches them, so the next run's payload holds them."""
    seen: list[str] = []
    monkeypatch.setattr(ent, "run_ner", lambda texts: seen.extend(texts) or [[("PERSON", t.split()[0])] for t in texts])
    ner = pl.KnownNer({"Ann came": [("PERSON", "Ann")]})
    assert ner(["Ann came", "Bob left", "Bob left"]) == [[("PERSON", "Ann")], [("PERSON", "Bob")], [("PERSON", "Bob")]]
    assert ner(["Bob left"]) == [[("PERSON", "Bob")]] and seen == ["Bob left"]
    assert ner.parsed == {"Bob left": [("PERSON", "Bob")]}
    store = Store()
    ent.store_entities(store, [ent.text_hash(t) for t in ner.parsed], list(ner.parsed.values()))
    assert ent.known_entities(store, ["Bob left", "Ann came"]) == {"Bob left": [("PERSON", "Bob")]}
