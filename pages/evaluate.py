"""Evaluate: pick dataset, arms, sample and provider; run ``bfr eval`` in the background with the
CLI's own progress line; Cancel; when it ends the results are on Failures. The command is shown as
the alternative for a shell, and the page runs exactly that command (``ui.evaluating``)."""

import streamlit as st

from bfr_core.pipeline import arm_names
from ui import commands as C
from ui import evaluating as E
from ui import markup
from ui import resources as R
from ui import widgets as W

R.require_frame()

ss = st.session_state
st.title("Evaluate", anchor=False)
path = R.store_path()
key = str(R.resolve(path))
scoreable = {d["dataset_id"]: d["counts"]["scoreable"] for d in R.datasets(path)}
sets = sorted(scoreable, key=lambda d: (d == "demo", d))
if not sets:
    st.info("This store holds no dataset yet. Load one on the Data page, or from a shell:")
    st.code(C.ingest_cmd(path), language="bash")
    st.stop()

job = E.JOBS.get(key)
busy = job is not None and job.running
c1, c2 = st.columns([0.3, 0.7])
dataset = c1.selectbox("Dataset", sets, key="eval_dataset", disabled=busy)
arms = c2.multiselect("Arms", arm_names(), default=C.DEFAULT_ARMS.split(","), key="eval_arms", disabled=busy)
c3, c4 = st.columns([0.3, 0.7])
sample = c3.number_input("Sample (questions; 0 = all)", min_value=0, value=C.SAMPLE, step=10, key="eval_sample",
                         disabled=busy, help="a seeded sample stratified by question type")
options = R.provider_options()
provider = c4.selectbox("Provider", options, key="eval_provider", disabled=busy,
                        help="offline rules: no model; a model provider comes from bfr.toml (README, “Using a model”)")
cmd = C.eval_cmd(path, dataset, arms=",".join(arms), sample=int(sample) or None,
                 provider=None if provider == R.OFFLINE else provider)
st.caption("The same run from a shell, in the repository folder:")
st.code(cmd, language="bash")
if not scoreable[dataset]:
    st.info(f"No question of {markup.code(dataset)} has gold turns, so a run has nothing to score (`bfr eval` refuses it).")
if R.store().read_only and not busy:
    st.info("Another process holds this store now (a running `bfr eval` or `bfr ingest`): start this when it ends.")
if st.button("Run", type="primary", key="eval_run", icon=":material/play_arrow:",
             disabled=busy or not arms or R.store().read_only or not scoreable[dataset]):
    try:
        E.start(key, cmd)
    except RuntimeError as exc:
        st.error(markup.text(exc))
    else:
        st.rerun()


@st.fragment(run_every=1.0 if busy else None)
def watch() -> None:
    """The running job's progress, redrawn every second; once it has ended, what came of it."""
    job = E.JOBS.get(key)
    if job is None:
        return
    if job.running:
        st.markdown(f"**Running** for {W.esc(f'{job.elapsed():.0f}')} s: {markup.code(job.command)}")
        st.code(job.progress(), language=None)
        if st.button("Cancel", key="eval_cancel", icon=":material/cancel:",
                     help="Stops it as Ctrl-C would: the questions finished so far stay stored; Run resumes it"):
            job.cancel()
            st.rerun(scope="app")
        return
    if ss.get("eval_seen") != job.proc.pid:  # it has just ended: every page re-reads the store, once
        ss["eval_seen"] = job.proc.pid
        R.refresh()
        st.rerun(scope="app")
    ok, message = job.outcome()
    if ok:
        st.success(f"Finished: {W.esc(message)}. The run is on the Failures page.", icon=":material/check:")
        st.page_link("pages/failures.py", label="Open Failures", icon=":material/table_view:")
    else:
        st.error(f"The evaluation did not finish: {W.esc(message)}", icon=":material/error:")


watch()
