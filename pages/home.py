"""Home: which store is open, what it holds (benchmarks and imported systems), the latest finished run's
per-arm figures at a common set size with a chart and links, and where each page leads."""

import shlex

import pandas as pd
import streamlit as st

from bfr_core import plots
from bfr_core.evaluation import report as REP
from ui import commands as C
from ui import markup, storepath
from ui import resources as R
from ui import widgets as W

R.require_frame()

path = R.store_path()
st.title("BFR Workbench", anchor=False)
st.markdown("Inspect how memory-retrieval methods build evidence sets for long-term-memory QA: "
            "relevance is not sufficiency.")

file = R.resolve(path)
size = f"{storepath.size_mb(file):.1f} MB on disk (with its .wal)" if file.exists() else "in memory"
datasets = R.datasets(path)
runs = R.runs(path)
finished = sum(1 for r in runs if r.get("finished"))

st.subheader("Start here", anchor=False)
DONE = ":green[:material/check_circle:]"  # a drawn mark (an icon font the app ships), not an emoji
STEPS = [
    ("pages/data.py", "Load a benchmark", bool(datasets), "LoCoMo, LongMemEval, BEAM, LoCoMo-Plus or JSONL",
     C.ingest_cmd(path)),
    ("pages/demo.py", "Watch one question being answered", False, "the shutter-release case; any question on Trace", ""),
    ("pages/evaluate.py", "Evaluate arms over a dataset", bool(finished),
     "or from a shell, then Refresh; compare them on Failures", (C.eval_cmds(path, datasets) or [""])[0]),
    ("pages/annotate.py", "Label evidence sets blind", False, "needs a finished run; `--suff` adds LLM judgments", ""),
]
for n, (target, what, done, where, cmd) in enumerate(STEPS, 1):
    left, right = st.columns([0.36, 0.64], vertical_alignment="center")
    left.page_link(target, label=f"{n}. {what}", icon=":material/check_circle:" if done else ":material/arrow_forward:")
    right.caption(("done · " if done else "") + where + (f"  \n{markup.code(cmd)}" if cmd and not done else ""))
if datasets:  # only where an eval command is shown
    st.caption("`bfr eval --benchmark locomo` (the README's form) and `--dataset locomo` name the same dataset; "
               "`--dataset NAME` names any dataset of this store.")

st.subheader("Open store", anchor=False)
st.markdown(f"{markup.code(path)} · {size} · provider: **{markup.text(R.provider())}**")

if not datasets:
    st.info("This store holds no dataset yet. Load one on the Data page, or from a shell:")
    st.code(C.ingest_cmd(path), language="bash")
else:
    rows = [{"dataset": d["dataset_id"], "kind": d["kind"], "scopes": d["counts"]["scopes"],
             "sessions": d["counts"]["sessions"], "turns": d["counts"]["turns"],
             "questions": d["counts"]["questions"], "scoreable": d["counts"]["scoreable"],
             "question types": len(d["by_type"])} for d in datasets]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="home_datasets")
    with st.expander("Question types per dataset"):  # one row each: nothing is cut off
        st.dataframe(pd.DataFrame([{"dataset": d["dataset_id"], "question type": k, "questions": v}
                                   for d in datasets for k, v in d["by_type"].items()]),
                     hide_index=True, key="home_types")
systems = R.imported_systems(path)
if systems:  # other systems' runs (`bfr import-run`): arms of a run, with stored evidence and no live run
    st.markdown("**Imported systems** (`bfr import-run`): shown beside the arms on Failures and Trace")
    st.dataframe(pd.DataFrame([{"system": s.arm, "dataset": s.dataset_id, "run": s.run_id, "format": s.fmt,
                                "questions": s.questions, "file": s.source} for s in systems]),
                 hide_index=True, key="home_imported")
stale = R.stale_runs(path)
st.caption(f"{len(runs)} evaluation run{'' if len(runs) == 1 else 's'} ({finished} finished) in this store."
           + (f" {len(stale)} more ran on data since replaced (`bfr ingest --replace`); they are kept but not "
              "shown beside current runs." if stale else ""))

done_runs = sorted((r for r in runs if r.get("finished")), key=lambda r: str(r.get("finished")), reverse=True)
if done_runs:
    st.subheader("Results", anchor=False)
    by_id = {r["run_id"]: r for r in done_runs}
    run_id = st.selectbox("Finished run", list(by_id), key="home_run", format_func=lambda i: (
        f"{i} · {by_id[i]['dataset_id']} · {by_id[i]['n_questions']} questions · {', '.join(by_id[i]['arms'] or [])}"
        f" · {by_id[i].get('provider') or 'offline rules'}"))
    caption, rows, figures = W.run_results(path, run_id)
    st.caption(caption)
    st.dataframe(rows, hide_index=True, key="home_results")
    shown = [(key, name) for key, name in REP.MEASURES if any(key in f for f in figures)]
    charted = [(key, name) for key, name in shown if key in REP.PROPORTION]
    names = dict(charted)
    measure = st.segmented_control("Chart", list(names), format_func=names.get, key="home_measure",
                                   default="cer" if "cer" in names else next(iter(names), None),
                                   help="CER: the share of questions whose set holds every gold turn") or "cer"
    st.plotly_chart(plots.arm_bars([{"arm": f["arm"], "value": f.get(measure), "lo": f.get(f"{measure}_lo"),
                                     "hi": f.get(f"{measure}_hi"), "size": f["set size"]} for f in figures],
                                   measure=names.get(measure, measure),
                                   title=f"{names.get(measure, measure)} per arm · {by_id[run_id]['dataset_id']}"),
                    key="home_chart")
    l1, l2, l3 = st.columns(3)
    l1.page_link("pages/failures.py", label="Per question on Failures", icon=":material/table_view:",
                 query_params={"run": run_id})
    l2.page_link("pages/annotate.py", label="Label these sets on Annotate", icon=":material/rule:")
    l3.caption(f"Tables with paired tests: `{C.BFR} report {shlex.quote(run_id)} --db {shlex.quote(path)}`")

st.subheader("Pages", anchor=False)
LINKS = [
    ("pages/data.py", "Data", ":material/database:", "load LoCoMo, LongMemEval, BEAM, LoCoMo-Plus or JSONL; store statistics"),
    ("pages/trace.py", "Trace", ":material/account_tree:",
     "run one question step by step: pool, requirements, FCA context and lattice, selection, rounds"),
    ("pages/demo.py", "Demo", ":material/photo_camera:",
     "the shutter-release case as it comes out in this store, and real relevance-vs-sufficiency cases"),
    ("pages/evaluate.py", "Evaluate", ":material/play_circle:",
     "run `bfr eval` in the background: dataset, arms, sample, provider; progress, Cancel"),
    ("pages/failures.py", "Failures", ":material/table_view:", "arms side by side over a finished run, filters"),
    ("pages/annotate.py", "Annotate", ":material/rule:", "blinded sufficiency labels, agreement, export"),
    ("pages/judges.py", "Judges", ":material/gavel:",
     "how answer judges accept, abstain and agree on a run's answers (after `bfr judge`)"),
]
for target, label, icon, text in LINKS:
    left, right = st.columns([0.22, 0.78], vertical_alignment="center")
    left.page_link(target, label=label, icon=icon)
    right.caption(text)
