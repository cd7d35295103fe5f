"""Data: load LoCoMo, LongMemEval, BEAM, LoCoMo-Plus or generic JSONL into the open store; per-store statistics."""

import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from bfr_core import plots
from bfr_core.errors import BfrError
from bfr_core.ingest import default_name, ingest
from bfr_core.ingest.common import WARNING
from bfr_core.ingest.locomo_plus import STITCHES
from ui import commands as C
from ui import resources as R
from ui import widgets as W
from ui.ingesting import (
    TEXTS_NOTE,
    clash_message,
    corpus_file,
    export_name,
    guess_kind,
    gui_error,
    names_line,
    rest_line,
    shared_choices,
    shared_label,
    stopped_message,
    stopped_vectors_message,
    vectors_line,
)

R.require_frame()

MAX_UPLOAD_MB = 300  # LongMemEval-S is 277 MB; larger files should be loaded from a path
KINDS = ("locomo", "longmemeval", "jsonl", "beam", "locomo-plus")
KIND_HELP = ("locomo: locomo10.json · longmemeval: S / M / oracle .json or .json.gz · jsonl: docs/jsonl-format.md · "
             "beam: a BEAM folder (conversation, tier or root) · locomo-plus: locomo_plus.json, stitched into LoCoMo")

ss = st.session_state
st.title("Data", anchor=False)
path = R.store_path()

st.subheader("Load a benchmark", anchor=False)
sources = ["Path on this machine", "Upload a file"]
shared = shared_choices(R.SHARED_DATA)
if shared:
    sources.append("Shared copy (../shared/data)")
source = st.radio("Source", sources, horizontal=True, key="data_source")

file_path, upload, guess = None, None, "jsonl"
if source.startswith("Path"):
    file_path = st.text_input("File path", key="data_path", placeholder="/path/to/locomo10.json")
elif source.startswith("Upload"):
    upload = st.file_uploader(f"Benchmark file (at most {MAX_UPLOAD_MB} MB)", type=["json", "jsonl", "gz"],
                              key="data_upload", max_upload_size=MAX_UPLOAD_MB)
else:
    chosen = st.selectbox("Shared file or BEAM folder", shared, format_func=lambda p: shared_label(p, R.SHARED_DATA),
                          key="data_shared", help="BEAM: the whole copy, one tier (e.g. beam/100K) or one conversation "
                                                  "(e.g. beam/100K/1, the quickest to load)")
    file_path = str(chosen)
guess = guess_kind(file_path or (upload.name if upload else "")) if (file_path or upload) else "jsonl"

c1, c2, c3, c4 = st.columns([0.25, 0.35, 0.2, 0.2], vertical_alignment="bottom")
kind = c1.selectbox("Kind", KINDS, index=KINDS.index(guess), key=f"data_kind_{guess}", help=KIND_HELP)
name = c2.text_input("Dataset name", key="data_name", placeholder="default: the kind (or file name for JSONL)")
replace = c3.checkbox("Replace if present", key="data_replace")
embed = c4.checkbox("Compute vectors now", value=True, key="data_embed",
                    help="Untick to write now and compute vectors on first use: the dataset is usable as soon as "
                         "it is written, and each conversation's or haystack's vectors are computed on its first "
                         "use (or all at once later, below).")
options = {}
if kind == "locomo-plus":  # the LoCoMo file its items are stitched into
    options["locomo"] = st.text_input("LoCoMo file (locomo10.json)", key="data_locomo",
                                      value=str(R.SHARED_DATA / "locomo10.json")) or None
    options["stitch"] = st.radio(
        "Cue placement", STITCHES, horizontal=True, key="data_stitch",
        format_func=lambda s: "a session of its own (the benchmark's)" if s == "session" else "inside an existing session",
        help="The benchmark makes each cue a short session of its own, which a session-level score can find by its "
             "shape alone. Inside an existing session (the one before the cue's date) is a robustness variant, not "
             "the benchmark (loaded as locomo-plus-embedded unless named): compare to see which methods still find the cue.")

store = R.store()
dataset_id = name.strip() or (default_name(kind, file_path or (upload.name if upload else ""), options)
                              if (file_path or upload) else "")
clash = bool(dataset_id) and not replace and store.dataset(dataset_id) is not None
if clash:
    st.warning(W.esc(clash_message(dataset_id)), icon=":material/warning:")
if store.read_only:
    st.info("This store is open read-only (another process holds it), so nothing can be loaded into it now.")
stopped = ss.pop("data_running", None)  # left set only by a job a click stopped (a Streamlit rerun)
if stopped is not None and stopped.get("job") == "vectors":
    st.info(W.esc(stopped_vectors_message(stopped["dataset"], R.readiness(path, stopped["dataset"]))))
elif stopped is not None:
    st.info(W.esc(stopped_message(stopped["dataset"], stopped["before"], store.dataset(stopped["dataset"]))))


@contextmanager
def running(job: dict, cancel_help: str):
    """A Cancel button, the stop record and one progress bar (yielded) around a long job: an ingest or
    computing the rest of a dataset's vectors. A click (Cancel or any other) reruns the page, which stops
    the job inside its progress callback and leaves ``data_running`` set for the next run to report."""
    cancel = st.empty()  # emptied when the job ends: no Cancel left that would cancel nothing
    cancel.button("Cancel", key="data_cancel", icon=":material/cancel:", help=cancel_help)
    ss["data_running"] = job
    bar = W.ProgressBar("Starting…")
    note = st.empty()
    note.caption(TEXTS_NOTE)
    try:
        yield bar
    except Exception:
        ss.pop("data_running", None)  # ended by itself (this is not reached when a click stops the run)
        bar.clear()
        raise
    else:
        ss.pop("data_running", None)
        bar.clear()
    finally:
        cancel.empty()
        note.empty()
        R.refresh()  # Home and the other pages re-read the store (also after a cancel)


if st.button("Ingest", type="primary", key="data_ingest", icon=":material/upload:",
             disabled=not (file_path or upload) or clash or store.read_only):
    tmp = None
    try:
        with running({"dataset": dataset_id, "before": store.dataset(dataset_id)},
                     "Stops the ingest and takes back everything it added. Any other click on this page "
                     "while it runs cancels it too.") as bar:
            if upload is not None:
                if upload.size > MAX_UPLOAD_MB * 1024 * 1024:  # refused before reading it
                    raise BfrError(f"{upload.name}: {upload.size / 1e6:.0f} MB is over the {MAX_UPLOAD_MB} MB "
                                   "upload limit; load it from a path instead")
                tmp = tempfile.TemporaryDirectory(prefix="bfr-upload-")
                target = Path(tmp.name) / Path(upload.name).name
                with open(target, "wb") as fh:
                    shutil.copyfileobj(upload, fh, 1 << 20)
                file_path = str(target)
            t0 = time.perf_counter()
            report = ingest(store, kind, file_path, name=name.strip() or None, replace=replace, embed=embed,
                            progress=bar, options=options)
    except BfrError as exc:
        st.error(W.esc(gui_error(str(exc), tmp_path=file_path if upload is not None else None,
                           upload_name=upload.name if upload is not None else None)))
    else:
        ss["data_dataset"] = report.dataset_id  # "What the store holds" below opens on the new dataset
        st.success(f"Loaded **{W.esc(report.dataset_id)}** in {time.perf_counter() - t0:.0f} s: {report.scopes} "
                   f"scopes, {report.sessions} sessions, {report.turns} turns, {report.questions} questions "
                   f"({report.scoreable} scoreable).")
        for note in report.notes:
            if note.startswith(WARNING):
                st.warning(W.esc(note.removeprefix(WARNING).strip()), icon=":material/warning:")
            else:
                st.caption(W.esc(note))
    finally:
        if tmp is not None:
            tmp.cleanup()
if not embed:
    st.caption("Write now, compute vectors on first use: the dataset is usable as soon as it is written; each "
               "conversation's or haystack's vectors are computed on its first use (or all at once below).")

st.subheader("What the store holds", anchor=False)
datasets = R.datasets(path)
if not datasets:
    st.info("No dataset yet. Load one above, or from a shell:")
    st.code(C.ingest_cmd(path), language="bash")
    st.stop()
ids = [d["dataset_id"] for d in datasets]
chosen_id = st.selectbox("Dataset", ids, key="data_dataset") if len(ids) > 1 else ids[0]
d = next(x for x in datasets if x["dataset_id"] == chosen_id)
cols = st.columns(5)
for col, (label, key) in zip(cols, [("Conversations / haystacks", "scopes"), ("Sessions", "sessions"),
                                    ("Turns", "turns"), ("Questions", "questions"), ("Scoreable", "scoreable")],
                             strict=True):
    col.metric(label, f"{d['counts'][key]:,}")
st.caption(f"kind {W.esc(d['kind'])} · source {W.esc(d['source'])} · ingested {str(d['ingested_at'])[:16]}")
st.plotly_chart(plots.bar_counts(d["by_type"], title=f"Questions by type in {d['dataset_id']}",
                                 x_title="question type"), key="data_bar")

ready = R.readiness(path, chosen_id)
st.caption(vectors_line(ready) + "  \n" + names_line(ready))
if not ready.dense_ready:
    st.caption(rest_line(ready))
    if st.button("Compute the rest now", key="data_finish", icon=":material/bolt:", disabled=store.read_only,
                 help="Encodes the turn texts that have no vectors yet, as a full ingest does; a Cancel keeps "
                      "what is done."):
        from bfr_core.retrieval.embed import finish_embeddings

        try:
            with running({"dataset": chosen_id, "job": "vectors"},
                         "Stops computing; the vectors computed so far are kept.") as bar:
                n = finish_embeddings(store, chosen_id, progress=bar)
        except BfrError as exc:
            st.error(W.esc(exc))
        else:
            st.success(f"Computed {n:,} vectors: every turn text of **{W.esc(chosen_id)}** has them now.")
    if Path(d["source"]).is_file():
        st.caption("The same from a shell (`bfr ingest` on the same file computes only what is missing):")
        st.code(C.finish_cmd(path, d["kind"], d["source"], chosen_id), language="bash")

with st.expander("Your system on these conversations: export what each question searches"):
    st.caption("One JSON line per conversation or haystack: its sessions in order, dated as it dates them, with the "
               "store's turn ids, and its questions. A run your system makes over it imports with `bfr import-run` "
               "and shows beside the arms on Failures and Trace.")
    blind = st.checkbox("Blind: leave out answers, gold, question types and source ids, and hash every id", key="data_export_blind")
    out_name = export_name(chosen_id, blind)
    st.download_button("Download JSONL", data=corpus_file(store, chosen_id, blind),
                       file_name=out_name, mime="application/jsonl", key="data_export", icon=":material/download:",
                       on_click="ignore")
    st.code(C.export_data_cmd(path, chosen_id, out_name, blind=blind), language="bash")
