"""Trace: run one arm on one question and reveal its steps one at a time.

Query parameters ``?dataset=&question=&arm=`` (and ``&run=`` for a stored trace of a finished
eval run) preselect the question, so the Failures page can link here. An imported system (``bfr
import-run``) is listed beside the arms; it has no live run, so its stored evidence is shown at once.
"""

import streamlit as st

from bfr_core import pipeline, plots
from bfr_core.arm_names import CONV_FUSION, canonical_arm
from bfr_core.evaluation.evaluate import load_trace
from bfr_core.pipeline import DEFAULT_BUDGET, arm_names
from bfr_core.retrieval.readiness import readiness
from ui import commands as C
from ui import keys as K
from ui import markup
from ui import resources as R
from ui import steps as S
from ui import sufficiency as SUF
from ui import widgets as W
from ui.answering import answer_and_judge, reference_text, verdict_text
from ui.ingesting import trace_note
from ui.runner import stepper

R.require_frame()

ALL = "(all scopes)"
BUDGETS = ["default"] + [f"C{i}" for i in range(10)]
ss = st.session_state
st.title("Trace", anchor=False)
path = R.store_path()
datasets = [d["dataset_id"] for d in R.datasets(path)]
if not datasets:
    st.info("This store holds no dataset yet. Load one on the Data page, or from a shell:")
    st.code(C.ingest_cmd(path), language="bash")
    st.stop()
live = arm_names()

qp = {k: st.query_params.get(k) for k in ("dataset", "question", "arm", "run")}
qp["arm"] = qp["arm"] and canonical_arm(qp["arm"])  # a link may name an arm by its alias (arm_names)
if any(qp.values()) and ss.get("trace_qp") != qp:  # apply a link's preselection once
    ss["trace_qp"] = qp
    if qp["dataset"] in datasets:
        ss["trace_dataset"], ss["trace_scope"] = qp["dataset"], ALL
        if qp["question"]:
            ss["trace_question"] = qp["question"]
    if qp["arm"]:
        ss["trace_arm"] = qp["arm"]  # checked against the dataset's arms below
    # a link to a stored trace: that run's trace is shown while its question and arm stay chosen
    ss["trace_link"] = qp if qp["run"] else None

c1, c2, c3 = st.columns([0.18, 0.22, 0.6])
dataset = c1.selectbox("Dataset", datasets, key="trace_dataset")
qframe = R.questions(path, dataset)
scopes = [ALL, *sorted(qframe["scope_id"].unique())]
scope = c2.selectbox("Scope (conversation / haystack)", scopes, key="trace_scope")
shown_q = qframe if scope == ALL else qframe[qframe["scope_id"] == scope]
labels = {r.question_id: f"{r.question_id} · {r.qtype} · {r.text[:90]}" for r in shown_q.itertuples()}
if not labels:
    st.info("No question in this scope.")
    st.stop()
if ss.get("trace_question") not in labels:  # first a question with gold turns: there is something to find
    ss["trace_question"] = next((r.question_id for r in shown_q.itertuples() if r.n_gold), next(iter(labels)))
qid = c3.selectbox("Question (type to search)", list(labels), format_func=labels.get, key="trace_question")

imported = {}  # arm -> its newest imported run over this dataset
for system in R.imported_systems(path, dataset):
    if system.arm not in live:
        imported.setdefault(system.arm, system)
arms = [*live, *imported]
c4, c5, c6, c7 = st.columns([0.25, 0.2, 0.3, 0.25], vertical_alignment="bottom")
if ss.get("trace_arm") not in arms:
    ss["trace_arm"] = "bfr-mv" if "bfr-mv" in arms else arms[0]
arm = c4.selectbox("Arm", arms, key="trace_arm", format_func=lambda a: f"{a} (imported)" if a in imported else a)
budget = c5.selectbox("Budget", BUDGETS, key="trace_budget", disabled=arm not in DEFAULT_BUDGET,
                      help=f"default: {DEFAULT_BUDGET.get(arm, 'none (one-shot arm)')}")
providers = R.provider_options()
if ss.get("trace_provider") not in providers:
    ss["trace_provider"] = R.provider() if R.provider() in providers else providers[0]
provider = c6.selectbox("Provider", providers, key="trace_provider")
show_gold = c7.toggle("Mark gold turns", value=True, key="trace_show_gold",
                      help="Gold ids are read for display only; the arm never sees them.")

store = R.store()
q = store.question(dataset, qid)
turns = R.scope_turns(path, dataset, q.scope_id)
with st.container(border=True):
    asked = f" · asked {W.esc(W.fmt_date(q.date))}" if q.date else " · undated"
    st.markdown(f"**Question** · {W.esc(q.qtype)}{asked}  \n{W.esc(q.text)}")
    st.markdown(f"**Reference answer**: {W.esc(reference_text(q))}")
    K.note(store, dataset, qid)  # an overlay (bfr ingest overlay) disputes this key: say why
    if show_gold:
        st.caption("Gold turns: " + (", ".join(W.esc(W.turn_label(g, turns))
                                               for g in q.gold) or "none annotated"))

with st.expander(f"Any gold against all gold by budget, measured: {CONV_FUSION}, the paper's arms, the top-k rankings"):
    try:
        measured = SUF.load()
    except ValueError as exc:  # a damaged file: say so, as for an absent one
        st.warning(str(exc))
        measured = None
    if measured is None or not measured["benchmarks"]:
        st.info(f"Not measured yet: `{SUF.RELATIVE}` is absent. Measure a benchmark's "
                "dataset in a store (offline, minutes) with:")
        st.code(SUF.COMMAND, language="bash")
    else:
        kinds = {d["dataset_id"]: d["kind"] for d in R.datasets(path)}
        found = SUF.benchmark_for(measured, kinds.get(dataset, ""))
        keys = list(measured["benchmarks"])
        if found is None:
            st.caption(f"No measurement for {W.esc(kinds.get(dataset, dataset))} datasets; choose a measured benchmark.")
        shown_key = st.selectbox("Benchmark", keys, index=keys.index(found) if found else None, key=f"trace_suff_{found}",
                                 format_func=lambda k: measured["benchmarks"][k].get("name", k))
        if shown_key is not None:
            entry = measured["benchmarks"][shown_key]
            st.caption(f"{entry.get('n', '?')} questions; each evidence set cut to its first k turns, offline (the "
                       "rules stand-in for any model call); a system is drawn at the budgets at least half its sets "
                       f"reach. {CONV_FUSION}: {SUF.ours_note(entry)}. No other system chose a weight on them. "
                       f"Commit {markup.code(str(measured.get('commit', '?')))}.")
            st.plotly_chart(plots.sufficiency_gap(SUF.curves(entry), title=f"{entry.get('name', shown_key)}: any gold "
                                                  "(solid) against all gold (dashed) in the first k turns"),
                            key="trace_sufficiency")

link = ss.get("trace_link")
linked = link["run"] if link and (link["dataset"], link["question"], link["arm"]) == (dataset, qid, arm) else None
if link and not linked and (link["dataset"], link["question"]) == (dataset, qid) and arm not in imported:
    st.info(f"The link opened the stored trace of **{W.esc(link['arm'])}** from eval run `{link['run']}`. "
            f"**{W.esc(arm)}** is run live here instead (Next step / Run all); choose {W.esc(link['arm'])} again "
            "to go back to the stored trace.", icon=":material/info:")
url = {"dataset": dataset, "question": qid, "arm": arm, "run": linked}  # the address follows what is shown
if {k: st.query_params.get(k) for k in url} != url:
    keep = {k: v for k, v in st.query_params.to_dict().items() if k not in url}  # e.g. ?store=
    st.query_params.from_dict({**keep, **{k: v for k, v in url.items() if v}})
ss["trace_qp"] = url  # not a new link: the preselection above is not applied again
if arm in imported:  # no live run: the evidence its file gave, as stored by `bfr import-run`
    system = imported[arm]
    run_id = (link["run"] if link and link["arm"] == arm else None) or system.run_id
    trace = load_trace(store, run_id, qid, arm)
    about = (f"**{W.esc(arm)}** is an imported system ({W.esc(system.fmt)} file {W.esc(system.source)}, "
             f"eval run {W.esc(run_id)}): its stored evidence is shown; it cannot be run live here.")
    if trace is None:
        why = ("it is not in that run (the run scores the dataset's scoreable questions; an entry of the file for "
               "another question was skipped on import)" if not q.scoreable else "its file gave none for this question")
        st.info(about + f" No evidence is stored for this question: {why}.")
        st.stop()
    st.caption(about)
    shown = len(trace.steps)
else:
    run_id = linked
    key = (path, dataset, qid, arm, budget, provider, run_id)
    if not run_id and (ss.get("trace_key") != key or ss.get("trace_trace") is None):  # a live run is still to come
        ready = readiness(store, dataset, q.scope_id)
        if not ready.dense_ready:
            st.caption(trace_note(ready))
    trace, shown = stepper("trace_", key, lambda: (run_id and load_trace(store, run_id, qid, arm)) or pipeline.run(
        store, dataset, qid, arm, budget=None if budget == "default" else budget, llm=R.pipeline_llm(provider)))
    if trace is None:
        st.stop()
    if run_id:
        st.caption(f"Stored trace from eval run {markup.code(run_id)}.")

view = S.StepView(dataset, turns, frozenset(q.gold), show_gold, key="trace_s", recorded=S.recorded_for(store, q.text))
if shown and q.gold and show_gold:
    st.plotly_chart(plots.metrics_by_step(S.metric_rows(trace, q.gold, shown)), key="trace_metrics")
prev: tuple[str, ...] = ()
for i, step in enumerate(trace.steps[:shown]):
    S.render_step(i, step, view, prev)
    prev = step.evidence
    st.divider()

if shown == len(trace.steps) and trace.steps:
    st.subheader(f"Final evidence set: {len(trace.evidence)} turns, {trace.calls} calls", anchor=False)
    final = view.pick(trace.evidence)
    result = answer_and_judge(R.llm(provider), q, final, provider)
    with st.container(border=True):
        if result.error:
            st.warning(f"Answer ({provider}): {W.esc(result.error)}")
        else:
            st.markdown(f"**Answer** ({W.esc(provider)}): {W.esc(result.answer)}  \n"
                        f"**Judge**: {W.esc(verdict_text(result))} · reference: {W.esc(q.answer)}")
            if result.how:
                st.caption(W.esc(result.how))
    st.caption("Gold turns first (when marked), then the rest; “position”: the turn's place in the evidence set. "
               "Select a row to open the turn's whole session.")
    W.show_turns_table(W.turns_frame(S.gold_first(trace.evidence, q.gold if show_gold else ()), turns, gold=q.gold,
                                     show_gold=show_gold), key="trace_final", dataset_id=dataset)
