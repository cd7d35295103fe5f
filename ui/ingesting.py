"""What the Data page says while and after it ingests: the bar's text, the name-clash check, and
errors in the GUI's words. No streamlit import (bench/bench_app_ingest.py uses the same text).

Covers: bar text with stage, count and ETA; a clash message that names the page's checkbox (not
``--replace``); an error's temporary upload path replaced by the uploaded file's name; what a
stopped ingest left (:func:`stopped_message`, from the dataset's row before and after); what a
dataset written before its vectors (``--no-embed``, or the page's "write now" option) still
computes on first use (:func:`vectors_line`, :func:`names_line`, :func:`rest_line`,
:func:`trace_note`, :func:`stopped_vectors_message`; counts from ``bfr_core.retrieval.readiness``); the
export it offers (:func:`export_name`, :func:`corpus_file`: ``bfr_core.ingest.corpus`` in a store session).
Does not cover: the ingest itself (``bfr_core.ingest.ingest``), drawing the bar (``ui.widgets``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bfr_core.ingest.corpus import corpus_lines
from bfr_core.progress import eta_seconds, fmt_eta
from bfr_core.retrieval.embed import model_family
from bfr_core.retrieval.readiness import LOAD_S, Readiness, first_use_seconds

CLI_CLASH = "Pass --replace to overwrite it or --name to keep both."
GUI_CLASH = "Tick “Replace if present” to overwrite it, or type another dataset name to keep both."


def bar_text(label: str, done: int, total: int, elapsed: float) -> str:
    """``"encoding short turns (MiniLM) · 1,280 of 9,310 texts: 14% · about 1 min 05 s left"``: the share
    done and the ETA from ``done / total`` (cost units for the encoding bar; the label counts texts)."""
    if total <= 1:  # a stage with no sub-steps (writing, checking)
        return f"{label}…"
    eta = fmt_eta(eta_seconds(elapsed, done, total))
    return f"{label}: {min(done / total, 1.0):.0%}" + (f" · {eta}" if eta and done < total else "")


def clash_message(dataset_id: str) -> str:
    return f"A dataset named '{dataset_id}' is already in this store. {GUI_CLASH}"


def gui_error(message: str, *, tmp_path: str | None = None, upload_name: str | None = None) -> str:
    """An ingest error as the page shows it: GUI wording, the uploaded file's name instead of its temporary path."""
    msg = message.replace(CLI_CLASH, GUI_CLASH)
    if tmp_path and upload_name:
        msg = msg.replace(tmp_path, upload_name)
    return msg


def stopped_message(dataset_id: str, before: dict | None, after: dict | None) -> str:
    """What an ingest stopped by Cancel (or another click) left in the store, read from the dataset's
    row before it started and now (``bfr_core.ingest.ingest`` takes back a new dataset, but a
    replacement stays once its write has committed)."""
    if after is None:
        return f"Ingest cancelled: nothing of that file was kept ('{dataset_id}' is not in the store)."
    if before is None:
        return f"Ingest stopped after '{dataset_id}' was written: it is in the store."
    if after.get("ingested_at") == before.get("ingested_at"):
        return f"Ingest cancelled: '{dataset_id}' is as it was (the copy loaded before is kept)."
    return f"Ingest stopped after the new copy of '{dataset_id}' was written: it replaced the old one."


def _model(model_id: str) -> str:
    return model_family(model_id) + (" on short turns" if model_id.endswith("-short") else "")


def vectors_line(r: Readiness) -> str:
    """``"Dense vectors: static word vectors 23,671 of 23,671 turn texts · MiniLM on short turns 12,400 of 23,671."``"""
    parts = [f"{_model(m)} {n:,} of {r.texts:,}" + (" turn texts" if i == 0 else "")
             for i, (m, n) in enumerate(r.vectors)]
    return "Dense vectors: " + " · ".join(parts) + "."


def names_line(r: Readiness) -> str:
    return (f"Names (entity view): {r.names:,} of {r.name_texts:,} turn texts parsed; a search parses the "
            "turns it needs on first use.")


def rest_line(r: Readiness) -> str:
    """What happens to the texts without vectors, with the per-scope time ``first_use_seconds`` gives."""
    each = first_use_seconds(r, loaded=True)
    return (f"The {r.missing:,} without them are computed on each conversation's or haystack's first use (about "
            f"{each:.0f} s each here; the first also loads MiniLM, about {LOAD_S:.0f} s), or all of them now:")


def trace_note(r: Readiness) -> str:
    """The Trace page's note when the question's scope has texts without vectors."""
    return (f"The dense view of this conversation is computed now ({r.missing:,} of {r.texts:,} turn texts have no "
            f"vectors yet): the first run takes longer, about {first_use_seconds(r):.0f} s; later ones read them back.")


def stopped_vectors_message(dataset_id: str, r: Readiness) -> str:
    """What "Compute the rest now" stopped by Cancel (or another click) left: every finished chunk is kept."""
    done = r.texts - r.missing
    return (f"Stopped: the vectors computed so far are kept ({done:,} of {r.texts:,} turn texts of '{dataset_id}' "
            "have them now); the rest are computed on first use, or by “Compute the rest now” again.")


def export_name(dataset_id: str, blind: bool) -> str:
    """The file name the Data page offers for ``bfr export-data`` of ``dataset_id`` (safe on any system)."""
    return re.sub(r"[^\w.-]+", "_", dataset_id) + ("-blind" if blind else "") + ".jsonl"


def corpus_file(store: Any, dataset_id: str, blind: bool) -> Callable[[], str]:
    """The export's text, made when the download is asked for (Streamlit calls it after the page's run has
    ended, so it holds a store session of its own: in team mode the store is open only inside one)."""
    def make() -> str:
        with store.session():
            return "".join(corpus_lines(store, dataset_id, blind))
    return make
