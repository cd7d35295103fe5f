"""Annotate: two blinded labelling tasks, chosen at the top.

"Is this evidence sufficient?" labels (question, evidence set) snapshots of finished runs (below);
"Is this answer correct?" labels (question, gold answer, one system's answer) items (``ui.answer_task``).

The item shows the question, the reference answer and anonymised evidence only (no method,
budget, system answer or ids), every set of a question cut to one size (``evaluation.labels``).
Each click saves at once; the LLM judges' labels on an item appear only when the annotator asks,
after their own label on it, and the Agreement panel counts only items the annotator has labelled
(nothing about an item is shown before). Shortcuts: S sufficient, I insufficient, U uncertain
(Streamlit button shortcuts; they do not fire while the cursor is in the note box).
"""

import streamlit as st

from bfr_core import plots
from bfr_core.errors import BfrError
from bfr_core.evaluation import agreement as AG
from bfr_core.evaluation import labels as L
from ui import access, answer_task
from ui import commands as C
from ui import resources as R
from ui import widgets as W

R.require_frame()

def save(item_id: str, name: str, label: str) -> None:
    """A label button's callback (it runs before the page, with the note as typed): save, and remember
    what for the success line, or the error."""
    state, store = st.session_state, R.store()
    try:
        with store.session():
            saved = L.save_label(store, item_id, name, label, state.get(f"annot_note_{item_id}", ""))
    except BfrError as exc:
        state["annot_error"] = str(exc)
    else:
        state["annot_last"] = (name, item_id, label, saved == L.QUEUED)


def export(fmt, annotator: str | None) -> str:
    """``annotator``'s label versions (every annotator's for ``None``) with the LLM judges' labels beside
    them, as ``fmt`` renders them, read in a session of its own (a download runs apart from the page)."""
    store = R.store()
    with store.session():
        return fmt(L.export_rows(store, annotator, judges=lambda i: AG.judge_labels(store, i), tasks=(L.SUFFICIENCY,)))


BUTTONS = (("sufficient", "Sufficient", "S"), ("insufficient", "Insufficient", "I"), ("uncertain", "Uncertain", "U"))
ss = st.session_state
st.title("Annotate", anchor=False)
path, store = R.store_path(), R.store()
name = access.identity() or st.text_input(
    "Annotator name", key="annot_name", placeholder="your name (labels are saved under it)").strip()
if access.identity():
    st.caption(f"Labelling as **{W.esc(name)}** (your login).")
TASKS = {"Is this evidence sufficient?": "sufficiency", "Is this answer correct?": "answer"}
task = TASKS[st.segmented_control("Task", list(TASKS), default=next(iter(TASKS)), key="annot_task")
             or next(iter(TASKS))]
if task == "answer":
    answer_task.render(name)
    st.stop()
stamp = L.queue_stamp(store)  # a run finished or judged meanwhile shows without Refresh
total = R.label_queue_size(path, stamp)
sets = R.datasets(path)
if not total:
    if store.read_only:
        st.info("This store is open read-only (another process holds it, for example a running `bfr eval`) "
                "and its annotation queue has not been built yet. When that process ends, press Refresh.")
    elif not sets:
        st.info("This store holds no dataset yet, so there is nothing to label. Load one (Data page, or):")
        st.code(C.ingest_cmd(path), language="bash")
    else:
        W.eval_commands("No finished eval run to label yet: the queue is built from finished `bfr eval` runs. "
                        "Run one with `--suff`, so that LLM judgments can be revealed after your labels, then press "
                        "Refresh:", C.eval_cmds(path, sets, suff=True))
    st.stop()
if not R.judged_item_count(path, stamp):
    st.caption("No item has LLM Suff@Set judgments yet, so none will be revealed after your labels. For them, "
               "run your `bfr eval` again with `--suff` added (the command is not shown here: it names the arms, "
               "which this page keeps hidden).")
if not name:
    st.info(f"{total} items are waiting. Enter your name to start.")
    st.stop()

raters = AG.rater_labels(store)
asked = R.label_item_questions(path, stamp)  # the queue's items in order, read once per sync
todo, done = L.standing(list(asked), raters.get(name, {}), L.waiting_items(store, name))
total = len(asked)
st.progress(done / total if total else 0.0, text=f"{done} of {total} items labelled by {name}")
mode = st.segmented_control("Show", ["Queue", "My labels", "Disagreements"], default="Queue", key="annot_mode") or "Queue"

last = ss.get("annot_last")
if mode == "Queue" and last and last[0] == name:  # no verdict here: it would steer the next label
    queued = " (queued: written to the store when the other process lets go)" if last[3:] and last[3] else ""
    st.success(f"Saved **{last[2]}**{queued}. Its LLM judges' labels are under “My labels”, on request.")

mine = [i for i in asked if i in raters.get(name, {})]
if mode == "Queue":
    item_id = todo[0] if todo else None
    if item_id is None:
        st.success("Queue done: every item has your label. Review them under “My labels”.")
elif mode == "My labels":
    item_id = st.selectbox("Item", mine, key="annot_pick", format_func=lambda i: f"{mine.index(i) + 1}. {asked[i][:90]}")
else:
    dis = AG.disagreements(store, raters, among=mine)
    st.caption(f"{len(dis)} of your {len(mine)} labelled items have disagreeing labels.")
    if dis:
        st.dataframe([{"question": asked[d["item_id"]], **d} for d in dis], hide_index=True,
                     column_config={"item_id": None}, key="annot_dis")
    item_id = st.selectbox("Item", [d["item_id"] for d in dis], key="annot_dpick", format_func=lambda i: asked[i][:90])

if item_id is not None:
    item = R.blinded_item(path, item_id)
    with st.container(border=True):
        st.markdown(f"**Question**: {W.esc(item.question)}" + (f"  \nAsked on {W.esc(item.question_date)}"
                                                              if item.question_date else ""))
        st.markdown(f"**Reference answer**: {W.esc(item.reference)}")
        st.markdown(f"**Evidence** ({len(item.evidence)} snippets, in time order)")
        long = sum(len(e.text) for e in item.evidence) > 4000  # long turns scroll here: the buttons stay in view
        with st.container(height=560 if long else "content", border=False, key="annot_evidence"):
            for e in item.evidence:
                st.markdown(f"`{e.n}` {W.esc(e.date or 'undated')} · **{W.esc(e.speaker)}**: {W.esc(e.text)}")
    st.markdown("Is the **complete reference answer** supported by this evidence alone?")
    st.caption("Keyboard: **S** sufficient · **I** insufficient · **U** uncertain (not while typing a note). "
               "A click saves at once; relabel any time under “My labels”.")
    st.text_input("Note (optional)", key=f"annot_note_{item_id}")
    cols = st.columns(len(BUTTONS) + 1)
    locked = store.read_only and not store.snapshot_of  # a snapshot queues labels (labels.save_label)
    for col, (label, text, key) in zip(cols, BUTTONS, strict=False):
        # saved in the click's callback, before the page runs: one run shows the next item (a
        # st.rerun after saving ran the page twice per label)
        col.button(f"{text}", key=f"annot_{label}", shortcut=key, width="stretch", disabled=locked,
                   help="read-only store: labels cannot be saved" if locked else None,
                   on_click=save, args=(item_id, name, label))
    if ss.get("annot_error"):
        st.error(W.esc(ss.pop("annot_error")))
    cur = L.current_label(store, item_id, name)
    if cur is not None:  # the judges only once this annotator has labelled the item, and asks
        st.markdown(f"Your label: **{cur['label']}** ({cur['versions']} version(s))")
        if st.toggle("Show the LLM judges' labels on this item", key=f"annot_reveal_{item_id}"):
            judged, by = AG.judged_item(store, item_id)
            st.markdown("LLM judges" + (f" ({W.esc(by)})" if by else "") + ": "
                        + (", ".join(f"{W.esc(k)}: **{v}**" for k, v in judged.items())
                           or "not judged (no `--suff` run judged this set whole)"))
        st.dataframe(L.history(store, item_id, name), hide_index=True, key="annot_hist",
                     column_config={"label_id": None, "annotator": None})

st.divider()
st.subheader("Agreement", anchor=False)
# over the items this annotator has labelled only: nothing about an item shows before their own label
mine_set = set(mine)
shared = {r: {i: v for i, v in labs.items() if i in mine_set} for r, labs in raters.items()}
# the LLM judges' labels on one's items only when asked: they would steer the next labels
with_llm = bool(mine) and st.toggle("Compare with the LLM judges", key="annot_agree_llm",
                                    help="Their labels on the items you labelled; off, only annotators are compared")
raters = {r: labs for r, labs in shared.items() if labs and (with_llm or not r.startswith(L.JUDGE_PREFIX))}
agree = AG.agreement(store, raters) if mine else []
if not mine:
    st.caption("Agreement appears once you have labelled items: it compares raters on your labelled items only.")
elif agree:
    names = sorted(raters)
    c1, c2 = st.columns([0.55, 0.45])
    c1.dataframe(agree, hide_index=True, key="annot_agree",
                 column_config={"agreement": st.column_config.NumberColumn(format="%.2f"),
                                "kappa": st.column_config.NumberColumn("Cohen's κ", format="%.2f")})
    a = c2.selectbox("Confusion matrix: rows", names, key="annot_ra")
    b = c2.selectbox("columns", names, index=min(1, len(names) - 1), key="annot_rb")
    if AG.paired(raters, a, b)[0]:
        labs, counts = AG.confusion(raters, a, b)
        c2.plotly_chart(plots.confusion_figure(labs, counts, rows=a, cols=b, title=""), key="annot_cm")
    else:
        c2.caption(f"{W.esc(a)} and {W.esc(b)} have labelled no item in common yet.")
else:
    st.caption("Agreement appears once two raters share labelled items: another annotator, or the LLM judges "
               "when you compare with them.")
st.subheader("Export", anchor=False)
e1, e2 = st.columns(2)  # the files are made on click, not on every label saved
e1.download_button("My labels (CSV)", lambda: export(L.to_csv, name), file_name="my-labels.csv", mime="text/csv",
                   key="annot_csv")
e2.download_button("My labels (JSONL)", lambda: export(L.to_jsonl, name), file_name="my-labels.jsonl",
                   mime="application/jsonl", key="annot_jsonl")
if access.may_export_all(own_done=not todo):
    e1.download_button("Every annotator's labels (CSV)", lambda: export(L.to_csv, None), file_name="labels.csv",
                       mime="text/csv", key="annot_all_csv")
    e2.download_button("Every annotator's labels (JSONL)", lambda: export(L.to_jsonl, None), file_name="labels.jsonl",
                       mime="application/jsonl", key="annot_all_jsonl")
else:
    st.caption("Every annotator's labels, with the runs and arms behind each item: "
               + ("for a lead ([bfr] leads in the team's secrets), " if access.team_mode() else "")
               + "once your own queue is done.")
