"""Demo: the shutter-release case (paper, Figure 1) replayed on the open store.

Relevance top-k (mem0) finds the order but not the arrival; BFR-MV composes and completes the set
until both are held, and the offline rules answerer computes the interval.
"""

import streamlit as st

from bfr_core import pipeline, plots
from ui import resources as R
from ui import steps as S
from ui import widgets as W
from ui.answering import answer_and_judge, verdict_text
from ui.democase import find_case
from ui.runner import stepper

R.require_frame()

ss = st.session_state
st.title("Demo: relevant is not sufficient", anchor=False)
path, store = R.store_path(), R.store()
case = find_case(store)
if case is None:
    st.info("Neither LongMemEval question b3c15d39 nor the demo dataset's camera-strap question is in this "
            "store. Open the default demo store (data/demo.duckdb) or load LongMemEval on the Data page.")
    st.stop()
q = store.question(case.dataset_id, case.question_id)
turns = R.scope_turns(path, case.dataset_id, q.scope_id)
gold = [g for g in q.gold if g in turns]

st.markdown(
    ("This is LongMemEval question `b3c15d39`, the paper's Figure 1." if case.real else
     "This is the demo dataset's analogue of LongMemEval's shutter-release case (paper, Figure 1); "
     "load LongMemEval on the Data page to replay the real question `b3c15d39`.")
    + " Answering needs **two** turns from different sessions: when the item was ordered and when it "
      "arrived. A relevance ranking returns the order among other similar memories, but the arrival shares "
      "few words with the question and falls below the cut-off.")
with st.container(border=True):
    st.markdown(f"**Question**: {W.esc(q.text)}  \n**Reference answer**: {W.esc(q.answer)}")
    st.caption(f"dataset {W.esc(case.dataset_id)} · {len(turns)} turns in scope · gold turns: "
               + ", ".join(W.esc(g) for g in gold))

key = ("demo", path, case.dataset_id, case.question_id)
trace, shown = stepper("demo_", key, lambda: pipeline.run(store, case.dataset_id, case.question_id, "bfr-mv"),
                       spinner="Running mem0 and BFR-MV…")
if trace is None:
    st.stop()
if ss.get("demo_topk_key") != key:
    ss["demo_topk"], ss["demo_topk_key"] = pipeline.run(store, case.dataset_id, case.question_id, "mem0"), key
topk = ss["demo_topk"]
rules = R.llm(R.OFFLINE)
held = [g for g in gold if g in topk.evidence]
missed = [g for g in gold if g not in topk.evidence]
final = [turns[t] for t in trace.evidence if t in turns]
done = shown == len(trace.steps)
top_ans = answer_and_judge(rules, q, [turns[t] for t in topk.evidence if t in turns], R.OFFLINE)
ans = answer_and_judge(rules, q, final, R.OFFLINE) if done else None
now = trace.steps[shown - 1].evidence if shown else ()
left, right = st.columns(2)
left.metric("mem0 top-k: gold turns held", f"{len(held)} / {len(gold)}", help="BM25 top-k over the scope")
left.caption(f"answer (offline rules): **{W.esc(top_ans.answer or top_ans.error)}**")
right.metric(f"BFR-MV after step {shown}: gold turns held", f"{sum(g in now for g in gold)} / {len(gold)}")
right.caption(f"answer (offline rules): **{W.esc(ans.answer or ans.error)}**" if ans else "answer after the last step")

st.header("1 · Relevance top-k (mem0)", anchor=False)
st.markdown(f"The BM25 top-{len(topk.evidence)} holds **{len(held)} of {len(gold)}** gold turns.")
for g in held:
    st.success("Held: " + W.esc(turns[g].text))
for g in missed:
    st.error("Missed: " + W.esc(turns[g].text))
W.show_turns_table(W.turns_frame([{"turn_id": t} for t in topk.evidence], turns, gold=gold), key="demo_topk_table",
                   dataset_id=case.dataset_id)

st.header("2 · BFR-MV, step by step", anchor=False)
view = S.StepView(case.dataset_id, turns, frozenset(gold), True, key="demo_s")
prev: tuple[str, ...] = ()
for i, step in enumerate(trace.steps[:shown]):
    S.render_step(i, step, view, prev)
    prev = step.evidence
    st.divider()
if shown:
    st.plotly_chart(plots.metrics_by_step(S.metric_rows(trace, gold, shown), title="BFR-MV: Gold Hit, ER, CER"),
                    key="demo_metrics")

if done:
    st.header("3 · The answer", anchor=False)
    both = all(g in trace.evidence for g in gold)
    (st.success if both else st.warning)(
        f"BFR-MV holds {sum(g in trace.evidence for g in gold)} of {len(gold)} gold turns in "
        f"{len(trace.evidence)} turns after {trace.calls} retrieval calls.")
    st.markdown(f"### {W.esc(ans.answer or ans.error)}")
    st.caption(f"answered by **offline rules** (deterministic, no model) · judge: {W.esc(verdict_text(ans))} · "
               f"reference: {W.esc(q.answer)}" + (f"  \n{W.esc(ans.how)}" if ans.how else ""))
