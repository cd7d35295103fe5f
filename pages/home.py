"""Home: which store is open, what it holds, and where each page leads."""

import pandas as pd
import streamlit as st

from ui import resources as R

R.require_frame()

path = R.store_path()
st.title("BFR Workbench", anchor=False)
st.markdown("Inspect how memory-retrieval methods build evidence sets for long-term-memory QA: "
            "relevance is not sufficiency.")

file = R.resolve(path)
size = f"{file.stat().st_size / 1e6:.1f} MB" if file.exists() else "in memory"
st.subheader("Open store", anchor=False)
st.markdown(f"`{path}` · {size} · provider: **{R.provider()}**")

datasets = R.datasets(path)
if not datasets:
    st.info("This store holds no dataset yet. Load one on the Data page.")
else:
    rows = [{"dataset": d["dataset_id"], "kind": d["kind"], "scopes": d["counts"]["scopes"],
             "sessions": d["counts"]["sessions"], "turns": d["counts"]["turns"],
             "questions": d["counts"]["questions"], "scoreable": d["counts"]["scoreable"],
             "question types": ", ".join(f"{k} ({v})" for k, v in d["by_type"].items())} for d in datasets]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
runs = R.runs(path)
finished = sum(1 for r in runs if r.get("finished"))
st.caption(f"{len(runs)} evaluation run{'' if len(runs) == 1 else 's'} ({finished} finished) in this store.")

st.subheader("Pages", anchor=False)
LINKS = [
    ("pages/data.py", "Data", ":material/database:", "load LoCoMo, LongMemEval or JSONL; store statistics"),
    ("pages/trace.py", "Trace", ":material/account_tree:",
     "run one question step by step: pool, requirements, FCA context and lattice, selection, rounds"),
    ("pages/demo.py", "Demo", ":material/photo_camera:",
     "the shutter-release case: top-k misses the arrival, BFR-MV reaches both turns"),
    ("pages/failures.py", "Failures", ":material/table_view:", "arms side by side over a finished run, filters"),
    ("pages/annotate.py", "Annotate", ":material/rule:", "blinded sufficiency labels, agreement, export"),
]
for target, label, icon, text in LINKS:
    left, right = st.columns([0.22, 0.78], vertical_alignment="center")
    left.page_link(target, label=label, icon=icon)
    right.caption(text)
