"""Trace page: a step advances the trace, Run all reveals everything, query params preselect."""

import json

from conftest import app_test, shipped_recording, texts


def _trace_page(at_query=None):
    at = app_test()
    if at_query:
        at.query_params.update(at_query)
    at.run()
    at.switch_page("pages/trace.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_next_step_advances_one_step_at_a_time(app_db):
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.selectbox(key="trace_arm").select("bfr-mv").run()
    assert not at.subheader, "nothing is revealed before the first click"
    at.button(key="trace_next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    heads = [h.value for h in at.subheader]
    assert len(heads) == 1 and heads[0].startswith("1\\.")
    at.button(key="trace_next").click().run()
    heads = [h.value for h in at.subheader]
    assert len(heads) == 2 and heads[1].startswith("2\\.")
    assert "step 2 of" in texts(at)
    # the metrics chart follows the revealed steps
    assert at.get("plotly_chart")


def test_run_all_shows_lattice_final_set_and_answer(app_db):
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    heads = [h.value for h in at.subheader]
    assert any(h.startswith("Final evidence set") for h in heads)
    # context heatmap, lattice, coverage matrix and the metrics line chart are plotly figures
    assert len(at.get("plotly_chart")) >= 4
    assert "Answer" in body and "Judge" in body
    assert "gold in the evidence set: 2/2" in body
    # q1 asks for the days between two events: the answer is computed, and the page says from what
    assert "the time between" in body and "dates read from the evidence" in body


def test_gold_toggle_hides_gold_marks(app_db):
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    assert "gold in the evidence set" in texts(at) and "Gold turns:" in texts(at)
    at.toggle(key="trace_show_gold").set_value(False).run()
    body = texts(at)
    assert "gold in the" not in body and "gold among" not in body and "Gold turns:" not in body and "★ gold" not in body


def test_query_params_preselect_and_load_stored_trace(app_db):
    at = _trace_page({"dataset": "demo", "question": "q3", "arm": "mem0", "run": "demo-fake0001"})
    assert at.selectbox(key="trace_question").value == "q3"
    assert at.selectbox(key="trace_arm").value == "mem0"
    at.button(key="trace_all").click().run()
    assert "Stored trace from eval run `demo-fake0001`" in texts(at)  # the id as is, not escaped
    assert at.query_params["arm"] == "mem0" and at.query_params["run"] == "demo-fake0001"


def test_the_url_follows_the_arm_and_a_switch_says_it_runs_live(app_db):
    at = _trace_page({"dataset": "demo", "question": "q3", "arm": "mem0", "run": "demo-fake0001"})
    at.selectbox(key="trace_arm").select("bfr-mv").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["arm"] == "bfr-mv" and "run" not in at.query_params  # no stale arm or run
    assert any("is run live here instead" in i.value for i in at.info)
    at.button(key="trace_all").click().run()
    assert "Stored trace from eval run" not in texts(at)
    at.selectbox(key="trace_arm").select("mem0").run()  # back: the linked stored trace again
    assert at.query_params["run"] == "demo-fake0001"
    at.button(key="trace_all").click().run()
    assert "Stored trace from eval run `demo-fake0001`" in texts(at)


def test_the_final_table_lists_gold_turns_first(app_db):
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    final = next(d.value for d in at.dataframe if "position" in d.value.columns)
    trace = at.session_state["trace_trace"]
    gold = [t for t in trace.evidence if t in {"s2_1", "s4_3"}]
    assert len(gold) >= 1
    assert list(final["position"])[: len(gold)] == [trace.evidence.index(g) + 1 for g in gold]


def test_turn_text_is_escaped(app_db):
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    md = "\n".join(m.value for m in at.markdown)
    # demo text "f/2" and "I'll" reach the page only with Markdown escaped
    assert "\\'" in md or "\\." in md
    assert "<b>" not in md


def test_session_button_opens_whole_session(app_db):
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    sess = [b for b in at.button if b.key and "_e0_sess_" in b.key]
    assert sess
    sess[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Session" in m.value and "turns" in m.value for m in at.markdown)


def test_selecting_a_final_row_opens_its_session(app_db):
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    at.session_state["trace_final"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(m.value.startswith("Session **") for m in at.markdown)


def test_offline_trace_shows_the_shipped_recorded_requirements(app_db):
    """The demo store loads data/demo_llm_cache.json: under the offline rules the Trace page shows
    the requirements the local model gave for the question, with where and when they came from."""
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert shipped_recording("q1") in texts(at).replace("\\", "")
    assert any("requirement" in d.value.columns and len(d.value) >= 2 for d in at.dataframe)


def test_trace_says_when_the_scopes_dense_view_is_computed_now(app_db):
    """Issue 26: on a dataset written without vectors the page says the first run of a scope computes
    them; once they are cached it says nothing."""
    from conftest import cache_all_vectors

    from bfr_core.store import Store

    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    note = "The dense view of this conversation is computed now (126 of 126 turn texts have no vectors yet)"
    assert note in texts(at)
    store = Store(app_db)
    cache_all_vectors(store)
    store.close()
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    assert "is computed now" not in texts(at)


def test_an_undated_question_says_so(app_db, tmp_path):
    """A question without a date read "asked " with nothing after it."""
    import json

    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    src = tmp_path / "undated.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in (
        {"type": "session", "session_id": "s", "turns": [{"turn_id": "t1", "speaker": "Sam", "text": "we saw a fox"}]},
        {"type": "question", "question_id": "u1", "question": "what did we see?", "answer": "a fox",
         "scope": "default", "gold": ["t1"]})) + "\n", encoding="utf-8")
    store = Store(app_db)
    ingest(store, "jsonl", src, name="undated", embed=False)
    store.close()
    at = _trace_page()
    at.selectbox(key="trace_dataset").select("undated").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at)
    assert "· undated" in shown and "asked  " not in shown and "asked \n" not in shown


def test_trace_opens_on_a_question_with_gold_turns(app_db, tmp_path):
    """A dataset whose first question has no gold turn (an abstention item, say): Trace opens on the
    first question that has some, where the steps have something to find."""
    import json

    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    src = tmp_path / "abstain.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in (
        {"type": "session", "session_id": "s", "turns": [{"turn_id": "t1", "speaker": "Sam", "text": "we saw a fox"}]},
        {"type": "question", "question_id": "a0", "question": "what did we eat?", "answer": "not said",
         "scope": "default", "gold": []},
        {"type": "question", "question_id": "a1", "question": "what did we see?", "answer": "a fox",
         "scope": "default", "gold": ["t1"]})) + "\n", encoding="utf-8")
    store = Store(app_db)
    ingest(store, "jsonl", src, name="abstain", embed=False)
    store.close()
    at = _trace_page()
    at.selectbox(key="trace_dataset").select("abstain").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="trace_question").value == "a1"
    at.selectbox(key="trace_question").select("a0").run()  # still offered, and kept once chosen
    assert at.selectbox(key="trace_question").value == "a0" and "none annotated" in texts(at)


def test_a_rounds_retained_turns_are_drawn_checkboxes_not_glyphs(app_db):
    """A ✓ needs a font that has it (an empty box otherwise): the round table's "retained" column is a
    boolean, which the table draws as a checkbox."""
    at = _trace_page()
    at.selectbox(key="trace_question").select("q1").run()
    at.button(key="trace_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    rounds = [d.value for d in at.dataframe if "retained" in d.value.columns]
    assert rounds and all(r["retained"].dtype == bool for r in rounds)
    assert any(r["retained"].any() and not r["retained"].all() for r in rounds)
    assert "✓" not in texts(at) and not any("✓" in r.to_csv() for r in rounds)


def test_the_sufficiency_expander_draws_the_datasets_benchmark_or_says_how_to_measure(app_db, tmp_path, monkeypatch):
    from bfr_core.store import Store
    from ui import sufficiency

    monkeypatch.setattr(sufficiency, "PATH", tmp_path / "absent.json")
    at = _trace_page()
    assert "Not measured yet" in texts(at) and any("bench.quality.bench_ours_sufficiency" in c.value for c in at.code)
    kind = Store(str(app_db)).dataset("demo")["kind"]
    point = {"any": 70.0, "all": 60.0, "reached": 1.0}
    measured = {"commit": "abc1234", "benchmarks": {
        "other": {"name": "Other bench", "kind": "elsewhere", "systems": {"bfr": {"budgets": {"5": point}}}},
        "mine": {"name": "Demo bench", "kind": kind, "n": 3, "in_sample": {"10": {"any": 90.0, "all": 85.0}},
                 "systems": {"bfr": {"label": "development, cross-fitted", "budgets": {"5": point, "10": point}}}}}}
    (tmp_path / "s.json").write_text(json.dumps(measured), encoding="utf-8")
    monkeypatch.setattr(sufficiency, "PATH", tmp_path / "s.json")
    at.run()
    assert not at.exception and "Not measured yet" not in texts(at)
    assert at.selectbox(key="trace_suff_mine").value == "mine"  # the open dataset's benchmark, not the first
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Demo bench" in c.proto.spec)
    assert "gap at 10: 10.0" in json.dumps(spec["layout"]["annotations"])
    assert any("60.0 cross-fitted against 85.0 in-sample" in c.value for c in at.caption)  # the plotted figures' kind
    del measured["benchmarks"]["mine"]  # no measurement of this dataset's kind: a choice, no plot until made
    (tmp_path / "s.json").write_text(json.dumps(measured), encoding="utf-8")
    at.run()
    assert "No measurement for" in texts(at) and at.selectbox(key="trace_suff_None").value is None
    assert not any("Other bench" in c.proto.spec for c in at.get("plotly_chart"))
