"""Demo page: every statement about the case is computed from the store; the gallery opens Trace."""

from conftest import app_test, shipped_recording, texts

from bfr_core.evaluation import cases as CS


def _demo(app_db):
    at = app_test().run()
    at.switch_page("pages/demo.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_ranks_and_verdict_come_from_the_store(app_db):
    from ui import resources as R
    from ui.democase import verdict

    at = _demo(app_db)
    assert "camera strap" in texts(at)
    store = R.open_store(str(app_db))
    ranks = CS.view_ranks(store, "demo", "q1")
    assert set(ranks) == {"bm25"}  # no embeddings in this store: BM25 only, and the page says so
    assert "BM25 only here" in texts(at) and at.button(key="demo_dense_btn")  # and a button computes them
    k = len(at.session_state["demo_topk"].evidence)
    turns = R.scope_turns(str(app_db), "demo", store.question("demo", "q1").scope_id)
    label = {g: turns[g].local_id or g for g in ranks["bm25"]}
    expected = verdict(ranks, k, label)
    shown = [m.value for m in list(at.success) + list(at.warning)]
    for _holds, sentence in expected:
        assert any(sentence.split(":")[0] in s and f"rank {min(ranks['bm25'].values())}" in s for s in shown), shown
    table = at.dataframe[0].value
    assert list(table["rank · BM25"]) == [ranks["bm25"][g] for g in store.question("demo", "q1").gold]


def test_run_all_ends_with_both_evidence_turns_held(app_db):
    at = _demo(app_db)
    at.button(key="demo_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    assert "holds **1 of 2** gold turns" in body  # the stand-in's top-k: the order, not the arrival
    assert any("holds 2 of 2 gold turns" in s.value for s in at.success)
    # the answer is what bfr_core.roles.answerer.answer (offline rules) gives on the set, rendered as eval does
    from bfr_core.llm.rules import RulesLLM
    from bfr_core.roles import answerer
    from bfr_core.roles.snippets import render as render_evidence
    from bfr_core.store import Store

    s = Store(app_db)
    q = s.question("demo", "q1")
    final = at.session_state["demo_trace"].evidence
    turns = s.turns_by_id("demo", list(final))
    expected = answerer.answer(RulesLLM(), q.text, render_evidence([turns[t] for t in final]))
    assert any(m.value.startswith("### ") and expected.split()[0] in m.value for m in at.markdown), body
    assert "in BFR-MV" in at.dataframe[0].value.columns  # the rank table gains BFR-MV once it has run
    assert "answered by **offline rules**" in body


def test_gallery_lists_mined_cases_and_opens_trace(app_db):
    from ui import resources as R

    at = _demo(app_db)
    mined = CS.load_cases(R.open_store(str(app_db)), "demo-fake0001", "demo", 10)  # mem0's 10 turns each
    assert "q1" in [c.question_id for c in mined]  # the camera-strap case: order held, arrival not
    gallery = at.dataframe(key="demo_gallery").value
    assert list(gallery["question"]) == [c.question_id for c in mined]
    assert list(gallery["top-k size"]) == list(gallery["built set"]) == [10] * len(mined)  # one set size per case
    # at the arms' own sizes (10 against larger built sets) more questions would pass for a case
    own = CS.load_cases(R.open_store(str(app_db)), "demo-fake0001", "demo")
    assert {c.bfr_size for c in own} != {10} and len(own) >= len(mined)
    at.session_state["demo_gallery"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Trace"
    assert at.selectbox(key="trace_question").value == mined[0].question_id
    assert at.selectbox(key="trace_arm").value == mined[0].bfr_arm


def test_next_step_on_the_demo(app_db):
    at = _demo(app_db)
    at.button(key="demo_next").click().run()
    assert [h.value for h in at.subheader][0].startswith("1\\.")  # the number escaped: no list


def test_offline_steps_show_the_shipped_recorded_requirements(app_db):
    """Demo page, BFR-MV step by step under the offline rules: the local model's recorded requirements
    for the case's question (data/demo_llm_cache.json), with where and when they came from."""
    at = _demo(app_db)
    at.button(key="demo_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert shipped_recording("q1") in texts(at).replace("\\", "")


def test_a_scope_smaller_than_k_is_named_as_the_reason():
    """In a 7-turn scope every top-10 holds every turn: the premise fails for that reason, and the page says it."""
    from ui.democase import small_scope

    assert small_scope(7, 10) == "The whole scope is 7 turns, fewer than mem0's k of 10, so any top-k holds all of it."
    assert small_scope(10, 10) == "" and small_scope(600, 10) == ""


def test_the_demo_compares_sets_of_one_size_only():
    import pytest

    from ui.democase import equal_size

    rows = equal_size(["a", "b"], [(("a", "x"), "E0", ("a", "b"))])
    assert rows == [{"set size": 2, "mem0 (BM25 top-k)": "1 / 2", "BFR-MV": "2 / 2", "BFR-MV set": "E0"}]
    with pytest.raises(ValueError, match="compare at one set size"):
        equal_size(["a"], [(("a",) * 10, "final", ("a",) * 40)])


def test_held_marks_are_drawn_checkboxes_not_glyphs(app_db):
    at = _demo(app_db)
    ranks = next(d for d in at.dataframe if "gold turn" in d.value.columns)
    assert ranks.value["in mem0"].dtype == bool and list(ranks.value["in mem0"]) == [True, False]
    body = texts(at)
    assert "✅" not in body and "✓" not in body


def test_the_first_visit_says_the_scopes_vectors_are_computed(app_db, monkeypatch):
    """The page's first mem0 run of a scope without vectors computes them (a model load first): the page
    says so, and once they are there it says they were computed on this visit; a later visit says nothing."""
    from conftest import cache_all_vectors, fake_run

    from bfr_core import pipeline

    at = _demo(app_db)
    assert "The dense view of this conversation is computed now (126 of 126 turn texts" in texts(at)

    def encoding_run(store, *args, **kwargs):
        cache_all_vectors(store)
        return fake_run(store, *args, **kwargs)

    monkeypatch.setattr(pipeline, "run", encoding_run)
    at = _demo(app_db)
    assert "were computed on this first visit" in texts(at) and "is computed now" not in texts(at)
    at = _demo(app_db)
    assert "were computed on this first visit" not in texts(at) and "is computed now" not in texts(at)


def test_a_run_without_a_case_at_one_set_size_is_said_so(app_db):
    """A finished run none of whose questions shows the gap at one set size: the page says that, not that
    no run exists."""
    from bfr_core.store import Store

    s = Store(app_db)
    s.cursor().execute("UPDATE results SET evidence = [] WHERE arm = 'mem0'")  # top-k holds no gold turn at all
    s.close()
    body = texts(_demo(app_db))
    assert "No question of this store's finished runs shows the gap at one set size" in body
    assert "No finished run in this store" not in body
