"""Failures and Trace mark a question whose answer key an overlay disputes, with the finding's reason."""

import json

from conftest import app_test

from bfr_core.evaluation.overlay import ingest_overlay
from bfr_core.store import Store


def _overlay(path, tmp_path) -> None:
    store = Store(path)
    (tmp_path / "errors.json").write_text(json.dumps([
        {"question_id": "q3", "error_type": "HALLUCINATION", "correct_answer": "a corrected answer",
         "reasoning": "the conversation never says this"}]))
    ingest_overlay(store, tmp_path / "errors.json", dataset_id="demo")
    store.close()


def test_failures_has_a_disputed_key_column(app_db, tmp_path):
    _overlay(app_db, tmp_path)
    at = app_test().run()
    at.switch_page("pages/failures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    df = next(d.value for d in at.dataframe if "question_id" in d.value.columns)
    marked = dict(zip(df["question_id"], df["disputed key"], strict=True))
    assert "HALLUCINATION" in marked["q3"] and "never says" in marked["q3"]
    assert marked["q1"] == ""


def test_trace_warns_on_a_disputed_key(app_db, tmp_path):
    _overlay(app_db, tmp_path)
    at = app_test()
    at.query_params.update({"dataset": "demo", "question": "q3", "arm": "mem0"})
    at.run()
    at.switch_page("pages/trace.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Disputed key" in w.value and "corrected answer" in w.value for w in at.warning)


def test_no_overlay_no_column(app_db):
    at = app_test().run()
    at.switch_page("pages/failures.py").run()
    df = next(d.value for d in at.dataframe if "question_id" in d.value.columns)
    assert "disputed key" not in df.columns
