"""Demo: relevance is not sufficiency, as it really comes out in the open store.

The shutter-release case (paper, Figure 1): LongMemEval ``b3c15d39`` when loaded, else the demo
dataset's analogue. The page shows each gold turn's rank in every ranked view and what mem0
(BM25 top-k) and BFR-MV hold, states from those numbers whether Figure 1's premise holds here,
replays BFR-MV step by step, and lists real relevance-versus-sufficiency cases mined from the
store's finished runs (each opens in Trace). No sentence about the case is written ahead of time.
"""

import time

import streamlit as st

from bfr_core import pipeline, plots
from bfr_core.config import RetrievalConfig
from bfr_core.retrieval.readiness import readiness
from bfr_core.roles.decomposer import Replay
from ui import commands as C
from ui import democase as D
from ui import resources as R
from ui import steps as S
from ui import widgets as W
from ui.answering import answer_and_judge, reference_text, verdict_text
from ui.ingesting import trace_note
from ui.runner import stepper

R.require_frame()

ss = st.session_state
st.title("Demo: relevant is not sufficient", anchor=False)
path, store = R.store_path(), R.store()
case = D.find_case(store)
if case is None:
    st.info("Neither LongMemEval question b3c15d39 nor the demo dataset's camera-strap question is in this "
            "store. Open the default demo store (data/demo.duckdb), or load LongMemEval on the Data page:")
    st.code(C.ingest_cmd(path, "longmemeval"), language="bash")
    st.stop()
q = store.question(case.dataset_id, case.question_id)
turns = R.scope_turns(path, case.dataset_id, q.scope_id)
gold = [g for g in q.gold if g in turns]
label = {g: W.turn_label(g, turns) for g in gold}

st.markdown(("This is LongMemEval question `b3c15d39`, the paper's Figure 1." if case.real else
             "This is the demo dataset's analogue of LongMemEval's shutter-release case (paper, Figure 1); "
             "load LongMemEval on the Data page to replay the real question `b3c15d39`.")
            + f" Its reference answer rests on **{len(gold)}** gold turns. The paper's premise: a relevance "
              "top-k finds one of them and misses the other, so it is relevant but not sufficient. Below, "
              "that premise is tested on this store's own rankings.")
with st.container(border=True):
    st.markdown(f"**Question**: {W.esc(q.text)}  \n**Reference answer**: {W.esc(reference_text(q))}")
    st.caption(f"dataset {W.esc(case.dataset_id)} · {len(turns)} turns in scope · gold turns: "
               + ", ".join(W.esc(label[g]) for g in gold))

rec = S.recorded_for(store, q.text)
if rec is not None:
    source = st.radio("Requirements from", (D.RECORDED, D.RULES), horizontal=True, key="demo_source",
                      help="Stage I's requirements: a model's decomposition recorded in this store's LLM cache "
                           "and replayed (no model runs), or the offline rules' reading of the question's form")
else:
    source = D.RULES
if source == D.RECORDED:
    st.markdown(f"**Decomposition used**: the recorded decomposition of {W.esc(rec.model)} (recorded on "
                f"{W.esc(rec.date)}), replayed from this store's LLM cache; no model runs. Everything else "
                "(the cover, grounding, the rounds and the answer) is offline rules.")
else:
    st.markdown("**Decomposition used**: offline rules (the question's form), no model"
                + ("." if rec is not None else "; this store holds no recorded model decomposition of it."))

key = ("demo", path, case.dataset_id, case.question_id)
if ss.get("demo_topk_key") != key:
    # the first run of a scope also computes its turn vectors (a model load first): said before it starts
    before, note = readiness(store, case.dataset_id, q.scope_id), st.empty()
    if not before.dense_ready:
        note.caption(trace_note(before))
    t0 = time.perf_counter()
    with st.spinner("Running mem0 (BM25 top-k)…"):
        ss["demo_topk"], ss["demo_topk_key"] = pipeline.run(store, case.dataset_id, case.question_id, "mem0"), key
    if not before.dense_ready and readiness(store, case.dataset_id, q.scope_id).dense_ready:
        note.caption(f"This scope's turn vectors were computed on this first visit ({time.perf_counter() - t0:.0f} s); "
                     "later visits read them back.")
topk = ss["demo_topk"]
k = len(topk.evidence)
ranks = D.view_ranks(path, case.dataset_id, case.question_id, dense=True if ss.get("demo_dense") else None)

st.header("1 · Where the gold turns rank in this store", anchor=False)
rank_slot = st.container()  # filled once BFR-MV's state is known (after its buttons, below)
for gid in gold:
    with st.expander(f"{label[gid]} · " + " · ".join(f"{D.VIEW_NAMES.get(v, v)} rank {r.get(gid, '—')}"
                                                     for v, r in ranks.items())):
        st.markdown(W.turn_header(turns[gid], gold=True) + "  \n" + W.esc(turns[gid].text))
if "dense" not in ranks:
    c1, c2 = st.columns([0.68, 0.32], vertical_alignment="center")
    c1.caption("Dense and hybrid ranks need this scope's vectors, not computed yet (the demo store is built "
               "without them so that it opens at once; other datasets: ingest with “Embed”); BM25 only here.")
    if c2.button("Rank by dense and hybrid too", key="demo_dense_btn", icon=":material/calculate:",
                 help="Encodes this scope's turns once and caches them in the store (a model load first: "
                      "about 30 s on two busy cores)"):
        ss["demo_dense"] = True
        st.rerun()
for holds, sentence in D.verdict(ranks, k, label):
    (st.success if holds else st.warning)(W.esc(sentence), icon=":material/check:" if holds else ":material/close:")
if not any(h for h, _ in D.verdict(ranks, k, label)):
    parts = (f"**Here, Figure 1's premise does not hold** in any ranked view at k = {k}: the case shows no "
             "relevance-versus-sufficiency gap in this store.", D.small_scope(len(turns), RetrievalConfig().k),
             "The gallery below lists questions of a finished run where one does occur.")
    st.markdown(" ".join(p for p in parts if p))

rules = R.llm(R.OFFLINE)
top_ans = answer_and_judge(rules, q, [turns[t] for t in topk.evidence if t in turns], R.OFFLINE)
held = [g for g in gold if g in topk.evidence]
st.header(f"2 · Relevance top-{k} (mem0)", anchor=False)
st.markdown(f"The BM25 top-{k} holds **{len(held)} of {len(gold)}** gold turns · answer (offline rules): "
            f"**{W.esc(top_ans.answer or top_ans.error)}** · judge: {W.esc(verdict_text(top_ans))}")
W.show_turns_table(W.turns_frame([{"rank": i + 1, "turn_id": t} for i, t in enumerate(topk.evidence)], turns,
                                 gold=gold), key="demo_topk_table", dataset_id=case.dataset_id)



def mem0_at(n: int) -> tuple[str, ...]:
    """mem0's top-``n`` on this question (its top-k at the page's k is already computed)."""
    if n == k:
        return topk.evidence
    cache = ss.setdefault("demo_mem0_at", {})
    if (key, n) not in cache:
        cache[(key, n)] = pipeline.run(store, case.dataset_id, case.question_id, "mem0", k=n).evidence
    return cache[(key, n)]


st.header("3 · BFR-MV, step by step", anchor=False)
trace, shown = stepper("demo_", (*key, source), lambda: pipeline.run(
    store, case.dataset_id, case.question_id, "bfr-mv", llm=Replay(store) if source == D.RECORDED else None),
                       spinner="Running BFR-MV…")
if trace is not None:
    view = S.StepView(case.dataset_id, turns, frozenset(gold), True, key="demo_s", recorded=S.recorded_for(store, q.text))
    prev: tuple[str, ...] = ()
    for i, step in enumerate(trace.steps[:shown]):
        S.render_step(i, step, view, prev)
        prev = step.evidence
        st.divider()
    facts = D.stage_one_facts(trace, gold)
    stage_one_done = facts is not None and any(s.kind == "grounding" for s in trace.steps[:shown])
    if stage_one_done:
        st.subheader("The paper's point, read from this run's Stage I", anchor=False)
        for holds, sentence in D.point(facts, gold, label):
            (st.success if holds else st.warning)(W.esc(sentence), icon=":material/check:" if holds else ":material/close:")
    if shown:
        st.plotly_chart(plots.metrics_by_step(S.metric_rows(trace, gold, shown), title="BFR-MV: Gold Hit, ER, CER"),
                        key="demo_metrics")
    if shown == len(trace.steps):
        both = all(g in trace.evidence for g in gold)
        ans = answer_and_judge(rules, q, [turns[t] for t in trace.evidence if t in turns], R.OFFLINE)
        same = mem0_at(len(trace.evidence))
        (st.success if both else st.warning)(
            f"BFR-MV holds {sum(g in trace.evidence for g in gold)} of {len(gold)} gold turns in "
            f"{len(trace.evidence)} turns after {trace.calls} retrieval calls; mem0's top-{len(same)} holds "
            f"{sum(g in same for g in gold)}.")
        st.markdown("**At a common set size** (each row compares sets of one size):")
        pairs = [(mem0_at(len(facts.e0)), "E0, after Stage I", facts.e0)] if facts else []
        st.dataframe(D.equal_size(gold, [*pairs, (same, "final, after the rounds", trace.evidence)]),
                     hide_index=True, key="demo_equal")
        st.markdown(f"### {W.esc(ans.answer or ans.error)}")
        st.caption(f"answered by **offline rules** (deterministic, no model) · judge: {W.esc(verdict_text(ans))} · "
                   f"reference: {W.esc(q.answer)}" + (f"  \n{W.esc(ans.how)}" if ans.how else ""))
done = trace is not None and shown == len(trace.steps)
held_by = {"mem0": topk.evidence, **({"BFR-MV": trace.evidence} if done else {})}
rank_slot.dataframe(D.rank_rows(gold, ranks, held_by, label), hide_index=True, key="demo_ranks",
                    column_config={f"in {a}": st.column_config.CheckboxColumn(f"in {a}", help=f"{a}'s set holds it")
                                   for a in held_by})

st.header("4 · Real cases from this store's runs", anchor=False)
found = D.gallery(path)
if not found:
    sets = R.datasets(path)
    gap = ("a top-k arm holding some gold turns but not all, and a set-building arm (bfr-text, bfr-mv or "
           "conv-fusion) holding them all")
    if any(r.get("finished") for r in R.runs(path)):  # runs there are: none shows the gap at one set size
        st.info(f"No question of this store's finished runs shows the gap at one set size ({gap}, both sets cut "
                "to the run's smallest arm's largest set). Other questions may: run more of them, or another "
                "dataset, with a top-k and a set-building arm, then press Refresh:")
    else:
        st.info(f"No finished run in this store shows the gap yet ({gap}). Run an evaluation with a top-k and "
                "a set-building arm, then press Refresh:")
    st.code("\n".join(C.eval_cmds(path, sets)) or C.eval_cmd(path, "demo"), language="bash")
    st.stop()
st.caption(f"{len(found)} cases (CER 0 → 1) at one set size (each run's sets cut to its smallest arm's largest "
           "set, as on Failures), clearest first: top-k holds exactly one of two gold turns, then "
           "fewer gold turns, then the smaller built set, then the held turn's distance above the cut-off. "
           "Select a row to open it in Trace.")
rows = [{"run": c["run_id"], "question": c["question_id"], "type": c["qtype"], "top-k arm": c["topk_arm"],
         "held": f"{c['topk_held']} / {c['gold_n']}", "held at rank": c["held_rank"], "top-k size": c["topk_size"],
         "set-building arm": c["bfr_arm"], "built set": c["bfr_size"]} for c in found]
ids = [f"{c['run_id']}/{c['question_id']}/{c['topk_arm']}/{c['bfr_arm']}" for c in found]
picked = W.new_row_pick("demo_gallery", ids)
if picked is not None:
    c = found[ids.index(picked)]
    st.switch_page("pages/trace.py", query_params={"dataset": c["dataset_id"], "question": c["question_id"],
                                                   "arm": c["bfr_arm"], "run": c["run_id"]})
st.dataframe(rows, hide_index=True, key="demo_gallery", on_select="rerun", selection_mode="single-row",
             height="auto" if len(rows) <= 12 else 440)
