"""Annotate's answer-correctness task: "Is this answer correct?" on blinded (question, gold, answer) items.

An item shows the question, the dataset's original answer key, the turns that key cites and one
answer (``evaluation.answer_labels``); never the system, run or arm, and no judge's verdict. Each click
saves at once through the shared label journal (``evaluation.labels`` with ``task=ANSWER``). The
judges' verdicts on an answer appear only under "My labels", after the annotator's own label, and only
when asked. Shortcuts: Y correct (C is taken by Streamlit), W wrong, U undecided (not while typing a note).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from bfr_core.errors import BfrError
from bfr_core.evaluation import answer_labels as AL
from bfr_core.evaluation import labels as L
from ui import access
from ui import resources as R
from ui import widgets as W

BUTTONS = (("correct", "Correct", "Y"), ("wrong", "Wrong", "W"), ("undecided", "Undecided", "U"))


@st.cache_data(show_spinner="Building the answer queue…")
def queue_size(path: str, stamp: Any = None) -> int:  # noqa: ARG001 - part of the cache key
    """Sync the answer queue with finished runs' answers; returns its size."""
    return AL.sync_queue(R.open_store(path))


@st.cache_data(show_spinner=False)
def item_questions(path: str, stamp: Any = None) -> dict[str, str]:  # noqa: ARG001 - part of the cache key
    """The answer queue's items in order -> their question text (read once per sync)."""
    return L.item_questions(R.open_store(path), L.ANSWER)


@st.cache_data(show_spinner=False, max_entries=256)
def blinded_item(path: str, item_id: str) -> AL.AnswerItem:
    """An answer item as annotators see it (fixed once queued)."""
    return AL.blinded_item(R.open_store(path), item_id)


def save(item_id: str, name: str, label: str) -> None:
    """A label button's callback (it runs before the page, with the note as typed)."""
    state, store = st.session_state, R.store()
    try:
        with store.session():
            saved = L.save_label(store, item_id, name, label, state.get(f"ans_note_{item_id}", ""), task=L.ANSWER)
    except BfrError as exc:
        state["ans_error"] = str(exc)
    else:
        state["ans_last"] = (name, item_id, label, saved == L.QUEUED)


def export(fmt: Any, annotator: str | None) -> str:
    """``annotator``'s answer labels (everyone's for ``None``) with the judges' verdicts beside them."""
    store = R.store()
    with store.session():
        return fmt(L.export_rows(store, annotator, judges=lambda i: AL.judge_verdicts(store, i), tasks=(L.ANSWER,)))


def render(name: str) -> None:
    """The whole task below the page's title, name and task choice."""
    ss, path, store = st.session_state, R.store_path(), R.store()
    stamp = AL.queue_stamp(store)  # answers imported or judged meanwhile show without Refresh
    total = queue_size(path, stamp)
    if not total:
        if store.read_only:
            st.info("This store is open read-only (another process holds it) and its answer queue has not been "
                    "built yet. When that process ends, press Refresh.")
        else:
            st.info("No finished run with answers yet. Import a system's answers (`bfr import-answers FILE --db "
                    "STORE --dataset NAME --name SYSTEM`) or run `bfr eval` with `--answer`, then press Refresh.")
        return
    if not name:
        st.info(f"{total} answers are waiting. Enter your name to start.")
        return
    asked = item_questions(path, stamp)
    mine_labels = L.current_labels(store, L.ANSWER).get(name, {})
    todo, done = L.standing(list(asked), mine_labels, L.waiting_items(store, name, L.ANSWER))
    st.progress(done / len(asked) if asked else 0.0, text=f"{done} of {len(asked)} answers labelled by {name}")
    mode = st.segmented_control("Show", ["Queue", "My labels"], default="Queue", key="ans_mode") or "Queue"
    last = ss.get("ans_last")
    if mode == "Queue" and last and last[0] == name:  # no verdict here: it would steer the next label
        queued = " (queued: written to the store when the other process lets go)" if last[3] else ""
        st.success(f"Saved **{last[2]}**{queued}. The judges' verdicts on it are under “My labels”, on request.")
    mine = [i for i in asked if i in mine_labels]
    if mode == "Queue":
        item_id = todo[0] if todo else None
        if item_id is None:
            st.success("Queue done: every answer has your label. Review them under “My labels”.")
    else:
        item_id = st.selectbox("Answer", mine, key="ans_pick", format_func=lambda i: f"{mine.index(i) + 1}. {asked[i][:90]}")
    if item_id is not None:
        _item(store, path, item_id, name)
    st.subheader("Export", anchor=False)
    e1, e2 = st.columns(2)
    e1.download_button("My answer labels (CSV)", lambda: export(L.to_csv, name), file_name="my-answer-labels.csv",
                       mime="text/csv", key="ans_csv")
    e2.download_button("My answer labels (JSONL)", lambda: export(L.to_jsonl, name), file_name="my-answer-labels.jsonl",
                       mime="application/jsonl", key="ans_jsonl")
    if access.may_export_all(own_done=not todo):
        e1.download_button("Every annotator's answer labels (CSV)", lambda: export(L.to_csv, None),
                           file_name="answer-labels.csv", mime="text/csv", key="ans_all_csv")
        e2.download_button("Every annotator's answer labels (JSONL)", lambda: export(L.to_jsonl, None),
                           file_name="answer-labels.jsonl", mime="application/jsonl", key="ans_all_jsonl")


def _item(store: Any, path: str, item_id: str, name: str) -> None:
    item = blinded_item(path, item_id)
    with st.container(border=True):
        st.markdown(f"**Question**: {W.esc(item.question)}" + (f"  \nAsked on {W.esc(item.question_date)}"
                                                              if item.question_date else ""))
        st.markdown(f"**Gold answer**: {W.esc(item.gold)}")
        if item.evidence:
            with st.expander(f"Evidence the answer key cites ({len(item.evidence)} turns, in time order)"):
                for e in item.evidence:
                    st.markdown(f"`{e.n}` {W.esc(e.date or 'undated')} · **{W.esc(e.speaker)}**: {W.esc(e.text)}")
        st.markdown(f"**Answer to judge**: {W.esc(item.answer)}")
    st.markdown("Is this **answer correct**, judged against the gold answer?")
    st.caption("Keyboard: **Y** correct · **W** wrong · **U** undecided (not while typing a note). "
               "A click saves at once; relabel any time under “My labels”.")
    st.text_input("Note (optional)", key=f"ans_note_{item_id}")
    locked = store.read_only and not store.snapshot_of  # a snapshot queues labels (labels.save_label)
    for col, (label, text, key) in zip(st.columns(len(BUTTONS) + 1), BUTTONS, strict=False):
        col.button(text, key=f"ans_{label}", shortcut=key, width="stretch", disabled=locked,
                   help="read-only store: labels cannot be saved" if locked else None,
                   on_click=save, args=(item_id, name, label))
    if st.session_state.get("ans_error"):
        st.error(W.esc(st.session_state.pop("ans_error")))
    cur = L.current_label(store, item_id, name, L.ANSWER)
    if cur is not None:  # the judges only once this annotator has labelled the answer, and asks
        st.markdown(f"Your label: **{cur['label']}** ({cur['versions']} version(s))")
        if st.toggle("Show the judges' verdicts on this answer", key=f"ans_reveal_{item_id}"):
            verdicts = AL.judge_verdicts(store, item_id)
            st.markdown("Judges: " + (", ".join(f"{W.esc(k)}: **{W.esc(v)}**" for k, v in verdicts.items())
                                      or "no judge has judged this answer yet (`bfr judge RUN`)"))
        st.dataframe(L.history(store, item_id, name, L.ANSWER), hide_index=True, key="ans_hist",
                     column_config={"label_id": None, "annotator": None})
