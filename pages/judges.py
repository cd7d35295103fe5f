"""Judges: how every judge of some runs accepts, abstains, agrees and errs, under each answer key.

Reads the verdicts ``bfr import-answers`` and ``bfr judge`` stored (``evaluation.judge_report``);
answers of systems marked as known to be wrong make the false-accept column.
"""

import shlex

import pandas as pd
import streamlit as st

from bfr_core import plots
from bfr_core.evaluation.judge_report import answered_arms, judge_report
from bfr_core.evaluation.overlay import overlay_names
from bfr_core.verdicts import judged_runs
from ui import commands as C
from ui import markup
from ui import resources as R

R.require_frame()
st.title("Judges", anchor=False)
store = R.store()
path = R.store_path()
runs = judged_runs(store)
if not runs:
    # an eval run's own answers (Evaluate's "Answers") can be judged here too: name the newest such run
    answered = next((r for r in R.runs(path) if r.get("finished") and answered_arms(store, [r["run_id"]])), None)
    db = shlex.quote(path)
    if answered is not None:
        st.info(f"No judge verdicts in this store yet. Eval run {markup.code(answered['run_id'])} holds answers "
                "(its J on Failures and Home is the run's own answer judge); to compare judges on them, judge "
                "them and press Refresh:")
        st.code(f"{C.BFR} judge {shlex.quote(answered['run_id'])} --db {db} --judge rules", language="bash")
    else:
        st.info("No judged answers in this store yet. Run an evaluation with Answers (Evaluate page), or bring a "
                "system's answers, judge them, then press Refresh:")
        st.code(f"{C.BFR} import-answers eval_results.json --db {db} --dataset DATASET --name my-system\n"
                f"{C.BFR} judge RUN --db {db} --judge rules", language="bash")
    st.stop()
label = {r: f"{r} · {d} · {n:,} verdicts" for r, d, n in runs}
chosen = st.multiselect("Runs", list(label), default=list(label), format_func=label.get, key="judges_runs")
if not chosen:
    st.stop()
datasets = {d for r, d, _ in runs if r in chosen}
keys = ["original", *sorted({o for d in datasets for o in overlay_names(store, d)})]
c1, c2 = st.columns([0.35, 0.65])
key = c1.segmented_control("Answer key", keys, default="original", key="judges_key") or "original"
wrong = c2.multiselect("Systems whose every answer is wrong (their accepts are false accepts)",
                       answered_arms(store, chosen), key="judges_wrong",
                       help="For example answers written to be wrong: every acceptance of one is a false accept.")
rep = judge_report(store, chosen, [key], known_wrong=wrong)
sec = rep["keys"][key]
if key != "original":
    ceil = sec.get("ceiling_under_original_key", {})
    st.caption(f"Under overlay **{key}**: {sec['left_out_unanswerable']:,} answers to questions it calls unanswerable "
               "are left out. Best score the original key allows: "
               + "; ".join(f"{d} {c['ceiling_pct']} % ({c['answer_key_wrong']} of {c['questions']} keys changed)"
                           for d, c in ceil.items()))
rows = [{"judge": j, "answers": d["n"], "accept %": d["accept_pct"], "undecided %": d["undecided_pct"],
         "accept % (real answers)": d["real_answers"]["accept_pct"], "false accept %": d["false_accept_pct"],
         "not judged": d["not_judged"], "s / verdict": d["s_per_verdict"]} for j, d in sec["judges"].items()]
st.dataframe(pd.DataFrame(rows), hide_index=True, key="judges_table")
st.plotly_chart(plots.judge_accept_figure(sec["judges"], wrong), key="judges_plot")
st.subheader("Agreement on answers both judges decided", anchor=False)
st.dataframe(pd.DataFrame(sec["pairs"]).rename(columns={"n": "both decided", "agreement_pct": "agree %"}),
             hide_index=True, key="judges_pairs")
if "human" in sec:
    st.dataframe(pd.DataFrame([{"judge": j, **v} for j, v in sec["human"].items()]), hide_index=True,
                 key="judges_human")
with st.expander("By question type and by answer length"):
    for part, title in (("by_qtype", "question type"), ("by_length", "answer length")):
        table = {j: {g: v["accept_pct"] for g, v in d[part].items()} for j, d in sec["judges"].items()}
        st.markdown(f"Accept % by {title}")
        st.dataframe(pd.DataFrame(table).rename_axis(title).reset_index(), hide_index=True, key=f"judges_{part}")
