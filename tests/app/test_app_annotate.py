"""Annotate page: blinding, save-on-click, persistence across sessions, reveal after labelling."""

import re

from conftest import app_test, texts

from bfr_core.pipeline import arm_names

FORBIDDEN = [*arm_names(), "C0", "C3", "C6", "budget", "s2_1", "s4_3", "demo-fake0001", "CORRECT", "WRONG"]


def _page(name=None):
    at = app_test().run()
    at.switch_page("pages/annotate.py").run()
    if name:
        at.text_input(key="annot_name").input(name).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _visible(at) -> str:
    """All rendered text, widget labels and options, and dataframe cells of the page."""
    parts = [texts(at)]
    for w in list(at.selectbox) + list(at.text_input) + list(at.button):
        parts.append(str(w.label))
        parts += [str(o) for o in getattr(w, "options", [])]
    for d in at.dataframe:
        parts.append(d.value.to_csv())
    return "\n".join(parts)


def test_blinded_item_shows_no_arm_budget_or_gold_id(app_db):
    at = _page("alice")
    body = _visible(at)
    assert "Reference answer" in body and "Evidence" in body
    for word in FORBIDDEN:
        assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", body), word
    assert "LLM judges" not in body


def test_label_is_saved_on_click_and_survives_a_fresh_session(app_db):
    at = _page("alice")
    note_key = next(t.key for t in at.text_input if t.key.startswith("annot_note_"))  # one per item
    at.text_input(key=note_key).input("both dates").run()
    at.button(key="annot_insufficient").click().run()
    assert not at.exception, [e.value for e in at.exception]
    # saved, with no verdict that could steer the next label; the next item is shown blinded
    assert any("Saved **insufficient**" in s.value for s in at.success)
    assert "judge A" not in texts(at) and "LLM judges (" not in texts(at)
    assert next(t.key for t in at.text_input if t.key.startswith("annot_note_")) != note_key

    import streamlit as st

    st.cache_resource.clear()  # drop the open store too: the label must come back from the file
    st.cache_data.clear()
    fresh = _page("alice")  # a new browser session: nothing in session state
    assert any("1 of" in (p.text or "") for p in fresh.get("progress")) or "1 of" in texts(fresh)
    fresh.segmented_control(key="annot_mode").set_value("My labels").run()
    body = texts(fresh)
    assert "Your label: **insufficient**" in body
    hist = next(d.value for d in fresh.dataframe if "note" in d.value.columns)
    assert list(hist["note"]) == ["both dates"]
    # edit: relabel the same item, history keeps both versions
    fresh.button(key="annot_sufficient").click().run()
    fresh.segmented_control(key="annot_mode").set_value("My labels").run()
    assert "Your label: **sufficient** (2 version(s))" in texts(fresh)


def test_agreement_disagreements_and_export(app_db):
    at = _page("alice")
    at.button(key="annot_sufficient").click().run()
    bob = _page("bob")
    bob.button(key="annot_insufficient").click().run()
    bob.segmented_control(key="annot_mode").set_value("Disagreements").run()
    assert "1 of your 1 labelled items have disagreeing labels" in texts(bob)
    agree = next(d.value for d in bob.dataframe if "kappa" in d.value.columns)
    assert {"alice", "bob"} <= set(agree["rater_a"]) | set(agree["rater_b"])
    assert bob.get("download_button") and len(bob.get("download_button")) == 2


def test_no_name_no_item(app_db):
    at = _page()
    assert "Enter your name" in texts(at)
    assert not any(m.value.startswith("**Question**") for m in at.markdown)


def test_label_lines_a_killed_save_left_are_reported_where_they_are_kept(app_db):
    from bfr_core.evaluation.labels import set_aside_path

    at = app_test().run()
    assert not at.sidebar.warning
    set_aside_path(app_db).write_text('{"item_id": "i2", "annot\n', encoding="utf-8")
    at.run()
    (warn,) = at.sidebar.warning
    assert "1 line(s) of the queued-label file could not be written" in warn.value
    assert str(set_aside_path(app_db)) in warn.value


def test_every_set_of_a_question_shows_the_same_number_of_snippets(app_db):
    """The set size tells no arm: for each question, every item (whichever arm it came from) shows as
    many snippets, although the arms' stored sets differ in size."""
    from collections import defaultdict

    from bfr_core.evaluation import labels as L
    from bfr_core.store import Store

    s = Store(app_db)
    L.sync_queue(s)
    sizes, stored = defaultdict(set), defaultdict(set)
    for item_id in L.items(s):
        q = s.cursor().execute("SELECT question_id FROM label_items WHERE item_id = ?", [item_id]).fetchone()[0]
        sizes[q].add(len(L.blinded_item(s, item_id).evidence))
    for q, n in s.cursor().execute("SELECT question_id, len(evidence) FROM results").fetchall():
        stored[q].add(n)
    s.close()
    assert any(len(v) > 1 for v in stored.values())  # the arms' own sets differ in size
    assert sizes and all(len(v) == 1 for v in sizes.values()), dict(sizes)


def test_no_judge_label_or_agreement_before_own_label_and_request(app_db):
    at = _page("carol")
    body = _visible(at)
    assert "judge A" not in body and "kappa" not in body and "Cohen" not in body
    assert "Agreement appears once you have labelled items" in body
    from bfr_core.evaluation import agreement as AG
    from bfr_core.evaluation import labels as L
    from bfr_core.store import Store

    s = Store(app_db, read_only=True)
    judged = {i for r, labs in AG.rater_labels(s).items() if r.startswith(L.JUDGE_PREFIX) for i in labs}
    s.close()
    assert judged  # some sets of the run were judged whole
    for _ in range(12):  # label through the queue until one of the judged sets has carol's label
        at.button(key="annot_sufficient").click().run()
        assert "judge A" not in _visible(at) and "llm:" not in _visible(at)  # not after a label either, until asked
        assert "or the LLM judges when you compare with them" in texts(at)  # and the page says how to ask
        s = Store(app_db, read_only=True)
        mine = set(AG.rater_labels(s).get("carol", {}))
        s.close()
        if mine & judged:
            break
    assert mine & judged
    at.toggle(key="annot_agree_llm").set_value(True).run()  # asked: the judges join the agreement panel
    assert not at.exception, [e.value for e in at.exception]
    assert "llm:" in _visible(at)
    at.toggle(key="annot_agree_llm").set_value(False).run()
    at.segmented_control(key="annot_mode").set_value("My labels").run()
    assert "judge A" not in _visible(at) and "Your label: **sufficient**" in texts(at)
    reveal = next(t for t in at.toggle if t.key.startswith("annot_reveal_"))
    reveal.set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "LLM judges" in texts(at)


def test_judgments_written_meanwhile_show_without_refresh(app_db):
    """A --suff run judging the sets after the page was opened: the next page run sees it (no Refresh)."""
    from bfr_core.store import Store

    s = Store(app_db)
    saved = s.cursor().execute("SELECT run_id, question_id, arm, suff, suff_detail FROM results").fetchall()
    s.cursor().execute("UPDATE results SET suff = NULL, suff_detail = NULL")
    s.close()
    at = _page("dave")
    assert "No item has LLM Suff@Set judgments yet" in texts(at)
    s = Store(app_db)
    s.cursor().executemany("UPDATE results SET suff = ?, suff_detail = ? WHERE run_id = ? AND question_id = ? AND arm = ?",
                           [[suff, detail, run, q, arm] for run, q, arm, suff, detail in saved])
    s.close()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "No item has LLM Suff@Set judgments yet" not in texts(at)


# -- the answer-correctness task ------------------------------------------------------------------
ANSWER_TASK = "Is this answer correct?"


def _answer_page(name=None):
    at = app_test().run()
    at.switch_page("pages/annotate.py").run()
    if name:
        at.text_input(key="annot_name").input(name).run()
    at.segmented_control(key="annot_task").set_value(ANSWER_TASK).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_answer_task_shows_question_gold_and_answer_never_the_system_or_a_verdict(app_db):
    at = _answer_page("alice")
    body = _visible(at)
    assert "Gold answer" in body and "Answer to judge" in body
    assert any("answers labelled by alice" in (p.text or "") for p in at.get("progress"))
    for word in [*FORBIDDEN, "eval judge"]:
        assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", body), word
    assert "Judges:" not in body and not at.toggle


def test_answer_label_saves_blind_then_reveals_the_judges_only_on_request(app_db):
    at = _answer_page("alice")
    first = next(m.value for m in at.markdown if m.value.startswith("**Answer to judge**"))
    note_key = next(t.key for t in at.text_input if t.key.startswith("ans_note_"))
    at.text_input(key=note_key).input("says unknown").run()
    at.button(key="ans_wrong").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Saved **wrong**" in s.value for s in at.success)
    body = _visible(at)  # nothing that could steer the next label: no verdict, no system
    for word in [*FORBIDDEN, "eval judge"]:
        assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", body), word
    assert next(t.key for t in at.text_input if t.key.startswith("ans_note_")) != note_key

    import streamlit as st

    st.cache_resource.clear()  # the label must come back from the file
    st.cache_data.clear()
    fresh = _answer_page("alice")
    assert "1 of" in texts(fresh) or any("1 of" in (p.text or "") for p in fresh.get("progress"))
    fresh.segmented_control(key="ans_mode").set_value("My labels").run()
    assert "Your label: **wrong**" in texts(fresh)
    assert next(m.value for m in fresh.markdown if m.value.startswith("**Answer to judge**")) == first
    assert "eval judge" not in _visible(fresh)  # labelled, but not asked yet
    hist = next(d.value for d in fresh.dataframe if "note" in d.value.columns)
    assert list(hist["note"]) == ["says unknown"]
    reveal = next(t for t in fresh.toggle if t.key.startswith("ans_reveal_"))
    reveal.set_value(True).run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert re.search(r"eval judge: \*\*(CORRECT|WRONG)\*\*", texts(fresh))
    assert fresh.get("download_button") and len(fresh.get("download_button")) == 2
    # the sufficiency task is untouched by the answer label
    fresh.segmented_control(key="annot_task").set_value("Is this evidence sufficient?").run()
    assert "0 of" in " ".join(p.text or "" for p in fresh.get("progress")) or "0 of" in texts(fresh)


def test_answer_queue_order_is_the_same_for_every_annotator(app_db):
    firsts = []
    for who in ("bob", "carol"):
        at = _answer_page(who)
        firsts.append(next(m.value for m in at.markdown if m.value.startswith("**Answer to judge**")))
    assert firsts[0] == firsts[1]


def test_answer_task_without_a_name_shows_no_item(app_db):
    at = _answer_page()
    assert "answers are waiting. Enter your name to start." in texts(at)
    assert not any(m.value.startswith("**Answer to judge**") for m in at.markdown)


def _evidence_height(at) -> int:
    """The pixel height of the evidence block (0: as tall as its content)."""
    def walk(node):
        proto = getattr(node, "proto", None)
        if getattr(node, "key", None) == "annot_evidence" or (proto is not None and "annot_evidence" in getattr(proto, "id", "")):
            return proto.height_config.pixel_height
        for child in getattr(node, "children", {}).values():
            found = walk(child)
            if found is not None:
                return found
        return None

    found = walk(at.main)
    assert found is not None, "no evidence block"
    return found


def test_long_evidence_scrolls_in_its_box_so_the_label_buttons_stay_in_view(app_db):
    """Ten long turns (a BEAM item: code and lists) made the page 16,000 px tall with the buttons at its foot."""
    from bfr_core.store import Store

    assert _evidence_height(_page("erin")) == 0  # the demo's short turns: the page as tall as they are
    s = Store(app_db)
    s.cursor().execute("UPDATE turns SET text = repeat(text || ' ', 40)")
    s.close()
    import streamlit as st

    st.cache_data.clear()
    assert _evidence_height(_page("erin")) == 560
