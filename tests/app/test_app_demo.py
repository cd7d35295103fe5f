"""Demo page: one click replays the camera-strap (shutter-release analogue) case."""

from conftest import app_test, texts


def test_run_all_ends_with_both_evidence_turns_held(app_db):
    at = app_test().run()
    at.switch_page("pages/demo.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "camera strap" in texts(at)
    at.button(key="demo_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    # top-k holds the order but misses the arrival
    assert "holds **1 of 2** gold turns" in body
    assert any("arrived on March 14th" in e.value for e in at.error)
    # BFR-MV ends with both gold turns in its final evidence set
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
    assert "answered by **offline rules**" in body
    assert "dates read from the evidence" in body  # the interval was computed, and the page says so


def test_next_step_on_the_demo(app_db):
    at = app_test().run()
    at.switch_page("pages/demo.py").run()
    at.button(key="demo_next").click().run()
    assert [h.value for h in at.subheader][0].startswith("1.")
    assert not any(h.value.startswith("3 ·") for h in at.header)
