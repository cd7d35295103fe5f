"""The demo dataset: the generated file kept current, shape, the BM25 trap, and ensure_demo_store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rank_bm25 import BM25Okapi

from bfr_core.ingest.demo import (
    DATASET_ID,
    DEMO_PATH,
    QUESTIONS,
    SESSIONS,
    demo_file,
    demo_records,
    ensure_demo_store,
    load_recorded,
    write_demo,
)
from bfr_core.ingest.generic_jsonl import load_jsonl
from bfr_core.store import Store
from bfr_core.text import tokenize


@pytest.fixture(scope="module")
def bundle():
    return load_jsonl(demo_file(), dataset_id=DATASET_ID)


def test_demo_file_is_written_current_and_deterministic(tmp_path: Path) -> None:
    fresh = write_demo(tmp_path / "demo.jsonl")
    assert write_demo(tmp_path / "again.jsonl").read_bytes() == fresh.read_bytes()  # deterministic
    DEMO_PATH.write_text("stale\n", encoding="utf-8")
    assert demo_file() == DEMO_PATH and DEMO_PATH.read_bytes() == fresh.read_bytes()  # rewritten when stale
    DEMO_PATH.unlink()
    assert demo_file().read_bytes() == fresh.read_bytes()  # and when missing


def test_shape(bundle) -> None:
    r = bundle.report
    assert r.scopes == 1 and 6 <= r.sessions <= 8 and 5 <= r.questions <= 8
    assert all(15 <= len(turns) <= 25 for _, _, turns in SESSIONS)
    assert {t.speaker for t in bundle.turns} == {"Sam", "assistant"}
    dates = [s.date for s in bundle.sessions]
    assert all(dates) and dates == sorted(dates)
    qs = {q.question_id: q for q in bundle.questions}
    temporal = [q for q in qs.values() if q.qtype == "temporal-reasoning" and len(q.gold) == 2]
    assert len(temporal) >= 2  # the delivery interval and another two-evidence temporal question
    assert any(q.qtype == "multi-hop" and len(q.gold) >= 2 for q in qs.values())
    assert any(q.is_abstention and not q.gold for q in qs.values())
    sessions_of = {t.turn_id: t.session_id for t in bundle.turns}
    assert len({sessions_of[g] for g in qs["q1"].gold}) == 2  # order and arrival in different sessions
    assert len(QUESTIONS) == len(qs) and len(demo_records()) == r.sessions + r.questions


def test_bm25_top10_finds_order_but_misses_arrival(bundle) -> None:
    turns = list(bundle.turns)  # the whole scope: one scope holds every session
    text = {t.turn_id: t.text for t in turns}
    q = next(q for q in bundle.questions if q.question_id == "q1")
    assert q.text == "How many days did it take for my new camera strap to arrive after I ordered it?"
    order, arrival = q.gold
    assert "March 3rd" in text[order] and text[arrival].startswith("It finally arrived on March 14th")
    bm25 = BM25Okapi([tokenize(t.text) for t in turns])
    scores = bm25.get_scores(tokenize(q.text))
    ranked = sorted(range(len(turns)), key=lambda i: (-scores[i], i))
    top10 = [turns[i].turn_id for i in ranked[:10]]
    assert order in top10
    assert arrival not in top10
    # and it is the lexical distractors about straps, cameras and orders that push it out
    distractors = [tid for tid in top10 if tid not in q.gold]
    assert sum(any(w in text[tid].lower() for w in ("strap", "camera", "order")) for tid in distractors) >= 5


def test_ensure_demo_store_is_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "app.duckdb"
    store = ensure_demo_store(db, embed=False)
    first = store.dataset(DATASET_ID)
    assert store.counts(DATASET_ID) == {"scopes": 1, "sessions": 7, "turns": 126, "questions": 7, "scoreable": 6}
    store.close()
    store = ensure_demo_store(db, embed=False)
    assert store.dataset(DATASET_ID)["ingested_at"] == first["ingested_at"]  # not re-ingested
    assert len(store.questions(DATASET_ID)) == 7
    store.close()


def _entry(question: str, reply: dict, provider: str = "local", model: str = "tiny") -> dict:
    from bfr_core.roles import decomposer

    return {"provider": provider, "model": model, "temperature": 0.0,
            "prompt_sha256": decomposer.request(question).sha256(), "response": json.dumps(reply),
            "tokens_in": 10, "tokens_out": 5, "created": "2026-12-02T01:00:00"}


def test_recorded_decompositions_load_once_and_are_found(tmp_path: Path) -> None:
    from bfr_core.roles import decomposer

    q1, q6 = QUESTIONS[0][2], QUESTIONS[5][2]
    path = tmp_path / "rec.json"
    path.write_text(json.dumps({"entries": [
        _entry(q1, {"requirements": ["date the strap was ordered", "date the strap arrived"]}),
        _entry(q6, {"requirements": ["oil for searing"]}, provider="rules", model="rules-v3"),
    ]}))
    store = Store(tmp_path / "app.duckdb")  # no shipped recording in it (ensure_demo_store loads that)
    assert load_recorded(store, path) == 2
    assert load_recorded(store, path) == 0  # already there
    got = decomposer.recorded(store, q1)
    assert got == decomposer.Recorded(("date the strap was ordered", "date the strap arrived"), "local:tiny",
                                      "2026-12-02")
    assert decomposer.recorded(store, q6) is None  # the offline rules' reply is not a model's
    assert decomposer.recorded(store, "What is my cat's name?") is None
    store.close()


def test_the_demo_store_holds_the_shipped_model_decompositions(tmp_path: Path) -> None:
    """data/demo_llm_cache.json: a model's (not the rules') decomposition of every demo question,
    loaded by ensure_demo_store and found by its question text."""
    from bfr_core.roles import decomposer

    store = ensure_demo_store(tmp_path / "app.duckdb", embed=False)
    for _qid, _qtype, question, *_ in QUESTIONS:
        got = decomposer.recorded(store, question)
        assert got is not None and got.requirements and not got.model.startswith("rules:"), question
    store.close()


def test_a_malformed_recorded_file_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    from bfr_core.llm.cache import DDL

    store = ensure_demo_store(tmp_path / "app.duckdb", embed=False)
    store.ensure(DDL)
    before = store.cursor().execute("SELECT count(*) FROM llm_cache").fetchone()[0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"entries": [{"provider": "local"}]}))
    with pytest.raises(ValueError, match="bad.json"):
        load_recorded(store, bad)
    assert store.cursor().execute("SELECT count(*) FROM llm_cache").fetchone()[0] == before
    assert load_recorded(store, tmp_path / "missing.json") == 0
    store.close()
