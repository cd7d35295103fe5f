"""Judges page: the judges of imported and rejudged answers, false accepts, agreement, and the overlay key."""

import json

from conftest import app_test, texts

from bfr_core.evaluation.answer_import import import_answers
from bfr_core.evaluation.judging import judge_run, parse_judge
from bfr_core.evaluation.overlay import golds_under, ingest_overlay
from bfr_core.store import Store


def _judged(path, tmp_path):
    store = Store(path)
    qs = store.questions("demo")
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text("".join(json.dumps({"question_id": q.question_id, "answer": q.answer,
                                        "verdicts": {"lenient": True}}) + "\n" for q in qs))
    bad.write_text("".join(json.dumps({"question_id": q.question_id, "answer": "zebra crossing",
                                       "verdicts": {"lenient": i < 3}}) + "\n" for i, q in enumerate(qs)))
    run_id = import_answers(store, good, dataset_id="demo", name="good").run_id
    import_answers(store, bad, dataset_id="demo", name="wrong-answers", run_id=run_id)
    (tmp_path / "errors.json").write_text(json.dumps([
        {"question_id": qs[1].question_id, "error_type": "AMBIGUOUS", "correct_answer": "Unanswerable"}]))
    ingest_overlay(store, tmp_path / "errors.json", dataset_id="demo")
    judge_run(store, run_id, parse_judge("rules"), golds_under(store, run_id))
    store.close()
    return run_id


def test_judges_page_reports_each_judge_under_both_keys(app_db, tmp_path):
    _judged(app_db, tmp_path)
    at = app_test().run()
    at.switch_page("pages/judges.py").run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert set(table["judge"]) == {"lenient", "rules"}
    at.multiselect(key="judges_wrong").select("wrong-answers").run()
    table = at.dataframe[0].value.set_index("judge")
    assert table.loc["lenient", "false accept %"] == round(100 * 3 / 7, 2)
    assert table.loc["rules", "false accept %"] == 0.0
    assert table.loc["rules", "s / verdict"] >= 0 and table["s / verdict"].isna()["lenient"]  # imported: untimed
    pairs = at.dataframe[1].value
    assert list(pairs["a"]) == ["lenient"] and list(pairs["b"]) == ["rules"]
    at.segmented_control(key="judges_key").set_value("audit").run()
    assert not at.exception
    assert "are left out" in texts(at) and "keys changed" in texts(at)


def test_judges_page_without_verdicts_says_how(app_db):
    """No verdict yet, but an eval run with answers: the page names that run and the command that judges
    it, and that command fills the page."""
    from conftest import RUN_ID

    from bfr_core.cli import main

    at = app_test().run()
    at.switch_page("pages/judges.py").run()
    assert not at.exception and "No judge verdicts in this store yet" in texts(at)
    assert f"Eval run `{RUN_ID}` holds answers" in texts(at)
    cmd = at.code[0].value
    assert cmd == f".venv/bin/bfr judge {RUN_ID} --db {app_db} --judge rules"
    assert main(cmd.split()[1:]) == 0
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.dataframe[0].value["judge"]) == {"rules"}


def test_judges_page_on_a_store_without_answers_says_how(app_db):
    from bfr_core.store import Store

    s = Store(app_db)
    s.cursor().execute("UPDATE results SET answer = NULL")
    s.close()
    at = app_test().run()
    at.switch_page("pages/judges.py").run()
    assert not at.exception and "No judged answers in this store yet" in texts(at)
    assert "bfr import-answers" in at.code[0].value and "Evaluate page" in texts(at)
