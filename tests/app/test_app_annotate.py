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
    q_before = next(m.value for m in at.markdown if m.value.startswith("**Question**"))
    at.text_input(key=next(t.key for t in at.text_input if t.key.startswith("annot_note_"))).input("both dates").run()
    at.button(key="annot_insufficient").click().run()
    assert not at.exception, [e.value for e in at.exception]
    # the judges are revealed for the item just labelled, and the next item is shown blinded
    assert any("Saved **insufficient**" in s.value and "judge A" in s.value for s in at.success)
    assert next(m.value for m in at.markdown if m.value.startswith("**Question**")) != q_before

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
