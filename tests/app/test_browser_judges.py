"""The real app in headless Chromium: the Judges page on imported and rejudged answers, and a key an
overlay disputes marked on Trace. Run alone with ``pytest -m browser``."""

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="needs playwright"),
]


def test_judges_page_and_a_disputed_key(bc, tmp_path):
    from bfr_core.evaluation.answer_import import import_answers
    from bfr_core.evaluation.judging import judge_run, parse_judge
    from bfr_core.evaluation.overlay import golds_under, ingest_overlay
    from bfr_core.store import Store

    fake = not bc.pipeline_available()
    db = tmp_path / "store.duckdb"
    bc.build_store(db, fake=fake)
    store = Store(db)
    qs = store.questions("demo")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"question_id": q.question_id, "answer": q.answer,
                                           "verdicts": {"lenient": True}}) + "\n" for q in qs))
    run_id = import_answers(store, answers, dataset_id="demo", name="theirs").run_id
    judge_run(store, run_id, parse_judge("rules"), golds_under(store, run_id))
    (tmp_path / "errors.json").write_text(json.dumps([
        {"question_id": "q3", "error_type": "HALLUCINATION", "correct_answer": "a corrected answer",
         "reasoning": "the conversation never says this"}]))
    ingest_overlay(store, tmp_path / "errors.json", dataset_id="demo")
    store.con.execute("CHECKPOINT")
    store.close()
    log = tmp_path / "streamlit.log"
    with bc.serve(db, log=log, fake=fake) as (url, _), bc.browser() as page:
        page.goto(url + "/judges")
        page.wait_for_selector("text=Agreement on answers both judges decided", timeout=60_000)
        bc.wait_idle(page)
        page.wait_for_function(  # the judges' table may draw after the page goes idle on a loaded machine
            "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('lenient')", timeout=60_000)
        judges_text = bc.main_text(page)
        judges_errors = bc.exceptions(page)
        page.goto(url + "/trace?dataset=demo&question=q3&arm=mem0")
        page.wait_for_selector("text=Reference answer", timeout=60_000)
        bc.wait_idle(page)
        trace_text = bc.main_text(page)
        trace_errors = bc.exceptions(page)
    assert judges_errors == [] and trace_errors == [], log.read_text()[-3000:]
    assert "lenient" in judges_text and "rules" in judges_text
    assert "Disputed key" in trace_text and "HALLUCINATION" in trace_text
