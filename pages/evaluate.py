"""Evaluate: pick dataset, arms, sample, provider and what to score beyond retrieval (answers, the
answer judge, LLM Suff@Set); run ``bfr eval`` in the background, saying what each phase does, with
the CLI's own progress line; Cancel; when it ends, the run id, per-arm figures, spend, and links to
Failures and Trace. The command is shown as the alternative for a shell, and the page runs exactly
that command (``ui.evaluating``). In team mode a job is its starter's: only they and the leads see
its command and spend and may cancel it (``ui.access.may_see_job``)."""

import pandas as pd
import streamlit as st

from bfr_core.pipeline import arm_names
from ui import access, markup
from ui import commands as C
from ui import evaluating as E
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
options = R.provider_options()  # offline rules only, for a user who may not call models (ui.access)
provider = c4.selectbox("Provider", options, key="eval_provider", disabled=busy,
                        help="offline rules: no model; a model provider comes from bfr.toml (README, “Using a model”)")
a1, a2, a3 = st.columns(3)
answer = a1.checkbox("Answers", key="eval_answer", disabled=busy,
                     help="an answer from each arm's evidence set, and its token F1 against the reference")
judge = a2.checkbox("Answer judge", key="eval_judge", disabled=busy,
                    help="CORRECT / WRONG against the reference answer (J on Failures); implies answers")
suff = a3.checkbox("Suff@Set", key="eval_suff", disabled=busy,
                   help="two LLM judges and an adjudicator: does the evidence set support the whole answer? "
                        "Annotate reveals these after an annotator's own label")
if provider == R.OFFLINE and (answer or judge or suff):
    st.caption("With offline rules these are rule-based stand-ins, labelled so on Failures and Annotate; a rule "
               "that cannot decide says “undecided” rather than guessing.")
cmd = C.eval_cmd(path, dataset, arms=",".join(arms), sample=int(sample) or None,
                 provider=None if provider == R.OFFLINE else provider, answer=answer, judge=judge, suff=suff)
st.caption("The same run from a shell, in the repository folder:")
st.code(cmd, language="bash")
if not scoreable[dataset]:
    st.info(f"No question of {markup.code(dataset)} has gold turns, so a run has nothing to score "
            "(`bfr eval` refuses it).")
if R.store().read_only and not busy:
    st.info("Another process holds this store now (a running `bfr eval` or `bfr ingest`): start this when it ends.")
if st.button("Run", type="primary", key="eval_run", icon=":material/play_arrow:",
             disabled=busy or not arms or R.store().read_only or not scoreable[dataset]):
    try:
        E.start(key, cmd, owner=access.identity())
    except RuntimeError as exc:
        st.error(markup.text(exc))
    else:
        st.rerun()


def finished(job: E.Job) -> None:
    """What a run that ended well gives: its id, per-arm figures, spend, and where to look next."""
    summary = job.summary()
    if summary is None:
        ok, message = job.outcome()
        st.success(f"Finished: {markup.text(message)}. The run is on the Failures page.", icon=":material/check:")
        st.page_link("pages/failures.py", label="Open Failures", icon=":material/table_view:")
        return
    run_id, figures = summary["run_id"], summary.get("arms", {})
    st.success(f"Finished: run {markup.code(run_id)} · {markup.text(summary.get('dataset_id', ''))} · "
               f"{summary.get('n_questions', '?')} questions · provider {markup.text(summary.get('provider') or '')}",
               icon=":material/check:")
    # the figures at the run's common set size, as Home shows them: never arms side by side at different budgets
    caption, rows, _ = W.run_results(path, run_id)
    failed = {arm: f.get("failed") for arm, f in figures.items()}
    if any(failed.values()):
        rows = [{**r, "failed": failed.get(r["arm"], 0)} for r in rows]
    st.table(pd.DataFrame(rows).set_index("arm").style.format({"set size": "{:.1f}", "calls": "{:.2f}"}, na_rep="—"))
    st.caption(caption + " J and Suff are over the rows their judges decided.")
    spent = summary.get("llm_calls")
    if spent and (summary.get("provider") or "offline rules") == "offline rules":
        st.caption(f"Offline rules answered {spent.get('calls', 0)} role calls: no model, no cost.")
    elif spent:
        st.caption(f"Model calls: {spent.get('calls', 0)} ({spent.get('cached', 0)} from the cache, "
                   f"{spent.get('failed', 0)} failed) · tokens {spent.get('tokens_in', 0):,} in, "
                   f"{spent.get('tokens_out', 0):,} out · cost ${spent.get('cost_usd', 0.0):.4f}")
    l1, l2 = st.columns(2)
    l1.page_link("pages/failures.py", label="Open Failures (this run, question by question)",
                 icon=":material/table_view:")
    first = next(iter(figures), None)
    question = next(iter(R.failures_frame(path, run_id)["question_id"]), None)
    if first and question:  # the run's stored trace of that question and arm (a link without a question runs live)
        l2.page_link("pages/trace.py", label=f"Trace a question of it ({first})", icon=":material/account_tree:",
                     query_params={"dataset": summary.get("dataset_id", ""), "question": question, "arm": first,
                                   "run": run_id})


@st.fragment(run_every=1.0 if busy else None)
def watch() -> None:
    """The running job's phase and progress, redrawn every second; once it has ended, what came of it.
    Another user's job (team mode) shows only that the store is busy."""
    job = E.JOBS.get(key)
    if job is None:
        return
    mine = access.may_see_job(job.owner)
    if job.running:
        if not mine:
            st.info("Another user's evaluation of this store is running; Run is possible when it ends.",
                    icon=":material/hourglass_top:")
            return
        st.markdown(f"**Running** for {job.elapsed():.0f} s: {markup.code(job.command)}")
        st.caption(job.phase())
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
    if not mine:
        return
    ok, message = job.outcome()
    if ok:
        finished(job)
    else:
        st.error(f"The evaluation did not finish: {markup.text(message)}", icon=":material/error:")


watch()
