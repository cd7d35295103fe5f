"""Failures: every arm of a finished eval run side by side, one row per question, with filters.

Selecting a row (or choosing a question below the table) opens it on the Trace page.
"""

import urllib.parse

import streamlit as st

from bfr_core import plots
from bfr_core.arm_names import canonical_arm
from bfr_core.evaluation import report as REP
from bfr_core.evaluation.cases import BFR_ARMS
from ui import commands as C
from ui import keys as K
from ui import resources as R
from ui import tables as T
from ui import widgets as W

R.require_frame()

NONE = "—"
ss = st.session_state
st.title("Failures", anchor=False)
path = R.store_path()
runs = sorted(R.runs(path), key=lambda r: r.get("finished") is None)
if not runs:
    sets = R.datasets(path)
    if not sets:
        st.info("No dataset and no evaluation run in this store yet. Load a dataset (Data page, or):")
        st.code(C.ingest_cmd(path), language="bash")
    else:
        W.eval_commands("No evaluation run in this store yet. Start one on the Evaluate page, or from a shell, "
                        "then press Refresh:", C.eval_cmds(path, sets))
    st.stop()
by_id = {r["run_id"]: r for r in runs}
if st.query_params.get("run") in by_id and "fail_run" not in ss:  # a link (Home's results) names the run
    ss["fail_run"] = st.query_params["run"]
run_id = st.selectbox("Eval run", list(by_id), key="fail_run", format_func=lambda i: (
    f"{i} · {by_id[i]['dataset_id']} · {by_id[i]['n_questions']} questions · {', '.join(by_id[i]['arms'] or [])}"
    f" · {by_id[i].get('provider') or 'offline rules'}"
    + ("" if by_id[i].get("finished") else " · unfinished")))
run = by_id[run_id]
if stale := R.stale_runs(path):
    st.caption(f"{len(stale)} run(s) computed on data since replaced (`bfr ingest --replace`) are not listed.")
sizes, common = R.set_sizes(path, run_id)
unequal = common is not None
OWN = "each arm's own set"
size_choice = st.segmented_control(
    "Compare at", [f"{common} turns each", OWN] if common else [OWN], key="fail_size",
    default=f"{common} turns each" if common else OWN,
    help="Arms are compared at one set size by default: every set is cut to its first k ids, k being the "
         "smallest arm's largest set, and its retrieval figures recomputed. “Each arm's own set” compares "
         "sets of different sizes.") or OWN
k = common if size_choice != OWN else None
df = K.with_column(R.failures_frame_at(path, run_id, k), R.store(), run["dataset_id"])  # an overlay's disputed keys
arms = [a for a in (run["arms"] or []) if f"{a} GH" in df.columns]
metrics = [m for m, s in T.SHORT.items() if arms and f"{arms[0]} {s}" in df.columns and m != "set size"]
largest = " · ".join(f"{W.esc(a)} {n}" for a, n in sizes.items())
if k is not None:
    st.caption(f"Every set cut to its first **{k}** turns (largest sets: {largest}); Gold Hit, ER and CER "
               "recomputed on the cut sets, F1, J and Suff are those of each arm's own set.")
elif unequal:
    st.warning(f"Not an equal-budget comparison: the arms' sets differ in size (largest sets: {largest}).",
               icon=":material/warning:")
else:
    st.caption(f"Every arm's largest set holds {next(iter(sizes.values()), 0)} turns.")

st.subheader("By question type", anchor=False)
metric = st.segmented_control("Metric", metrics, default="Gold Hit", key="fail_metric") or "Gold Hit"
summary, cut_rows = R.cut_summary(path, run_id, k)
KEY = {"Gold Hit": "gold_hit", "ER": "er", "CER": "cer", "F1": "f1", "judge": "judge", "Suff": "suff"}
st.dataframe(REP.type_rows(summary, cut_rows, KEY[metric]), hide_index=True, key="fail_types",
             column_config={a: st.column_config.TextColumn(a, help=T.MEANING.get(metric)) for a in arms})
st.caption(f"**{W.esc(metric)}**: {W.esc(T.MEANING.get(metric, ''))}"
           + (f" Judged by **{W.esc(T.judged_by(run['provider']))}**." if metric in ("judge", "Suff") else "")
           + f" [lo, hi]: Wilson 95% interval of a proportion; {REP.SMALL_MARK}: fewer than {REP.SMALL_N} "
             "questions of that type; “size”: the arm's mean set size.")
with st.expander("What every number on this page means"):
    st.markdown("\n".join(f"- **{name}** (`{T.SHORT.get(name, name)}` in the question table): {W.esc(text)}"
                           for name, text in T.MEANING.items()))

with st.expander(f"Budget frontier of this store ({run['dataset_id']})", expanded=True):
    other = st.text_input("… or show a `bfr sweep` output instead (path of its frontier.json)",
                          key="fail_sweep_path").strip()
    try:
        pts = T.load_sweep(other) if other else T.store_frontier(R.store(), run["dataset_id"])
    except (OSError, ValueError) as exc:
        st.error(f"cannot read {W.esc(other)}: {W.esc(exc)}")
        pts = []
    keys = T.quality_keys(pts) if pts else []
    if pts and not keys:
        st.info("No quality figure is defined for these runs (no question has gold turns), so there is no "
                "frontier to draw.")
    if keys:
        if ss.get("fail_fy") not in keys:  # a quality the previous run had and this one lacks
            ss.pop("fail_fy", None)
        s1, s2 = st.columns(2)
        fy = s1.selectbox("Quality", keys, index=keys.index("gold_hit") if "gold_hit" in keys else 0, key="fail_fy")
        fx = s2.segmented_control("Cost", ["calls", "size"], default="calls", key="fail_fx") or "calls"
        st.plotly_chart(plots.budget_frontier(pts, x=fx, y=fy, title=""), key="fail_frontier")
    if not other and len({p["budget"] for p in pts if canonical_arm(p["arm"]) in BFR_ARMS}) < 2:
        st.caption("Each arm here was run at one budget, so each is one point. For a frontier over C0…C9 "
                   "on this store, run the sweep and give its frontier.json above:")
        st.code(C.sweep_cmd(path, run["dataset_id"], "bench/out/sweep_" + run["dataset_id"]), language="bash")

st.subheader("Questions", anchor=False)
f1, f2, f3, f4 = st.columns([0.28, 0.18, 0.18, 0.36])
qtypes = f1.multiselect("Question type", sorted(df["qtype"].dropna().unique()), key="fail_qtypes")
hit = f2.selectbox("Arm A hit …", [NONE, *arms], key="fail_hit")
miss = f3.selectbox("… arm B missed", [NONE, *arms], key="fail_miss")
on = f4.segmented_control("on", ["Gold Hit", "CER"], default="Gold Hit", key="fail_on") or "Gold Hit"
g1, g2, g3, g4 = st.columns([0.28, 0.24, 0.12, 0.36])
suff_arms = [a for a in arms if f"{a} Suff" in df.columns]
hns = g1.selectbox("Gold Hit 1 but Suff 0 for", [NONE, *suff_arms], key="fail_hns",
                   disabled=not suff_arms, help="needs a run with --suff")
col = g2.selectbox("Any column", [NONE, *df.columns], key="fail_col")
op = g3.selectbox("op", T.OPS, key="fail_op")
val = g4.text_input("value", key="fail_val")
view = T.filter_frame(df, qtypes=qtypes, hit_arm=None if hit == NONE else hit, miss_arm=None if miss == NONE else miss,
                      metric=on, hit_not_suff=None if hns == NONE else hns, column=None if col == NONE else col,
                      op=op, value=val)
st.caption(f"{len(view)} of {len(df)} questions")
o1, o2, o3 = st.columns([0.45, 0.3, 0.25], vertical_alignment="bottom")
open_arm = o2.selectbox("with arm", arms, key="fail_open_arm")
link = {"dataset": run["dataset_id"], "arm": open_arm, "run": run_id, **R.store_param(path)}  # a new tab: a new session
view = view.assign(trace=["trace?" + urllib.parse.urlencode({**link, "question": q}) for q in view["question_id"]])
cfg = {"trace": st.column_config.LinkColumn("trace", display_text="open", width="small"),
       "question_id": st.column_config.TextColumn("question_id", pinned=True, width="small"),
       "qtype": st.column_config.TextColumn("qtype", width="small"),
       "question": st.column_config.TextColumn("question", width="large")}
cfg.update({c: st.column_config.NumberColumn(c, format="%.2f", width="small") for c in view.columns
            if c.endswith((" ER", " F1"))})
cfg.update({c: st.column_config.NumberColumn(c, width="small") for c in view.columns
            if c.endswith((" GH", " CER", " size", " J", " Suff"))})
all_cols = st.toggle("All columns", key="fail_all_cols",
                     help="Off: each arm's figure on the measure chosen above (Gold Hit or CER), and its set size when "
                          "the arms' sizes differ, so the table fits the page; on: every column, scrolled sideways")
compact = (f" {T.SHORT[on]}",) + ((" size",) if k is None and unequal else ())
order = list(view.columns) if all_cols else [c for c in view.columns if not c.startswith(tuple(f"{a} " for a in arms))
                                             or c.endswith(compact)]
if not all_cols and not (k is None and unequal):
    st.caption(f"Every set here holds at most {k or next(iter(sizes.values()), 0)} turns.")
ids = list(view["question_id"])
row = W.new_row_pick("fail_table", ids)  # a newly selected table row opens that question in Trace
if row is not None:
    st.switch_page("pages/trace.py", query_params={"dataset": run["dataset_id"], "question": row, "arm": open_arm,
                                                   "run": run_id})
if ss.get("fail_pick") not in ids and ids:
    ss["fail_pick"] = ids[0]
texts_by_id = dict(zip(view["question_id"], view["question"], strict=True))
pick = o1.selectbox("Open a question in Trace (or select a table row to open it)", ids, key="fail_pick",
                    format_func=lambda i: f"{i} · {texts_by_id.get(i) or ''}")
if o3.button("Open in Trace", type="primary", key="fail_open", icon=":material/account_tree:", disabled=not ids):
    st.switch_page("pages/trace.py", query_params={"dataset": run["dataset_id"], "question": pick, "arm": open_arm,
                                                   "run": run_id})
if st.toggle("Full question text", key="fail_wrap",
             help="A table that wraps each question's text (a grid cell cannot); select rows in the grid below"):
    st.table(view[[c for c in order if c != "trace"]].set_index("question_id"))
st.dataframe(view, hide_index=True, column_config=cfg, key="fail_table", on_select="rerun", column_order=order,
             selection_mode="single-row", height="auto" if len(view) <= 12 else 440)
