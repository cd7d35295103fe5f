"""Home: which store is open, what it holds (benchmarks and imported systems), and where each page leads."""

import pandas as pd
import streamlit as st

from ui import commands as C
from ui import markup, storepath
from ui import resources as R

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
STEPS = [
    ("Load a benchmark", bool(datasets), "Data page (LoCoMo, LongMemEval, BEAM, LoCoMo-Plus or JSONL)", C.ingest_cmd(path)),
    ("Watch one question being answered", False, "Demo page (the shutter-release case) or Trace", ""),
    ("Evaluate arms over a dataset", bool(finished), "Evaluate page, or from a shell, then Refresh; compare them on Failures",
     (C.eval_cmds(path, datasets) or [""])[0]),  # none before a dataset is loaded
    ("Label evidence sets blind", False, "Annotate (needs a finished run; `--suff` adds LLM judgments)", ""),
]
for n, (what, done, where, cmd) in enumerate(STEPS, 1):
    st.markdown(f"{n}. {'✅ ' if done else ''}**{what}** · {where}" + (f"  \n{markup.code(cmd)}" if cmd and not done else ""))

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
]
for target, label, icon, text in LINKS:
    left, right = st.columns([0.22, 0.78], vertical_alignment="center")
    left.page_link(target, label=label, icon=icon)
    right.caption(text)
