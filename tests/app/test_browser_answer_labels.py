"""The real app in headless Chromium: Annotate's "Is this answer correct?" task on imported answers,
blind to the system and to every judge until the label is saved, the judges revealed only when asked.
Run alone with ``pytest -m browser``."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="needs playwright"),
]

SYSTEM = "their-system"
BLIND_WORDS = (SYSTEM, "lenient", "CORRECT", "WRONG", "eval judge")


def test_answer_task_blind_until_saved_then_reveals_on_request(bc, tmp_path):
    from bfr_core.evaluation.answer_import import import_answers
    from bfr_core.ingest.demo import ensure_demo_store

    db = tmp_path / "store.duckdb"
    store = ensure_demo_store(db, embed=False)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"question_id": q.question_id, "answer": f"maybe {q.answer}",
                                           "verdicts": {"lenient": True}}) + "\n" for q in store.questions("demo")))
    run_id = import_answers(store, answers, dataset_id="demo", name=SYSTEM).run_id
    store.con.execute("CHECKPOINT")
    store.close()
    log = tmp_path / "streamlit.log"
    with bc.serve(db, log=log) as (url, _), bc.browser() as page:
        page.goto(url + "/annotate")
        box = page.get_by_label("Annotator name")
        box.wait_for(timeout=60_000)
        box.fill("browser-ann")
        box.press("Enter")
        bc.wait_idle(page)
        page.get_by_text("Is this answer correct?", exact=True).click()
        page.get_by_text("Answer to judge", exact=False).first.wait_for(timeout=60_000)
        bc.wait_idle(page)
        before = bc.main_text(page)
        page.get_by_role("button", name="Wrong").click()
        page.get_by_text("Saved", exact=False).first.wait_for(timeout=30_000)
        bc.wait_idle(page)
        after_save = bc.main_text(page)
        page.get_by_text("My labels", exact=True).click()
        page.get_by_text("Your label", exact=False).first.wait_for(timeout=30_000)
        bc.wait_idle(page)
        labelled = bc.main_text(page)
        page.get_by_text("Show the judges' verdicts on this answer", exact=False).click()
        page.get_by_text("Judges:", exact=False).first.wait_for(timeout=30_000)
        bc.wait_idle(page)
        revealed = bc.main_text(page)
        errors = bc.exceptions(page)
    assert errors == [], log.read_text()[-3000:]
    assert "Gold answer" in before and "Answer to judge" in before and "maybe " in before
    for text in (before, after_save, labelled):
        for word in (*BLIND_WORDS, run_id):
            assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text), word
    assert "Saved wrong" in after_save.replace("*", "")
    assert re.search(r"lenient: CORRECT", revealed), revealed
