"""What the Data page says while and after it ingests: the bar's text, the name-clash check, and
errors in the GUI's words. No streamlit import (bench/speed/bench_app_ingest.py uses the same text).

Covers: bar text with stage, count and ETA (none in a stage's first seconds), what its texts count
(:data:`TEXTS_NOTE`), the kind a path suggests (:func:`guess_kind`) and the shared copies offered
(:func:`shared_choices`, :func:`shared_label`); a clash message that names the page's checkbox (not
``--replace``); an error's temporary upload path replaced by the uploaded file's name; what a
stopped ingest left (:func:`stopped_message`, from the dataset's row before and after); what a
dataset written before its vectors (``--no-embed``, or the page's "write now" option) still
computes on first use (:func:`vectors_line`, :func:`names_line`, :func:`rest_line`,
:func:`trace_note`, :func:`stopped_vectors_message`; counts from ``bfr_core.retrieval.readiness``); the
export it offers (:func:`export_name`, :func:`corpus_file`: ``bfr_core.ingest.corpus`` inside ``Store.held``).
Does not cover: the ingest itself (``bfr_core.ingest.ingest``), drawing the bar (``ui.widgets``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bfr_core.ingest.corpus import corpus_lines
from bfr_core.progress import eta_seconds, fmt_eta
from bfr_core.retrieval.embed import model_family
from bfr_core.retrieval.readiness import LOAD_S, Readiness, first_use_seconds

CLI_CLASH = "Pass --replace to overwrite it or --name to keep both."
GUI_CLASH = "Tick “Replace if present” to overwrite it, or type another dataset name to keep both."


ETA_AFTER_S = 20.0  # before this much of a stage has run, its pace (model loading, warm-up) says little


def bar_text(label: str, done: int, total: int, elapsed: float) -> str:
    """``"encoding short turns (MiniLM) · 1,280 of 9,310 texts: 14% · about 1 min 05 s left"``: the share
    done and the ETA from ``done / total`` (cost units for the encoding bar; the label counts texts).
    In a stage's first :data:`ETA_AFTER_S` seconds the ETA reads "estimating time left" instead: the
    early pace includes loading and warm-up and overstated the time left several-fold."""
    if total <= 1:  # a stage with no sub-steps (writing, checking)
        return f"{label}…"
    share = f"{label}: {min(done / total, 1.0):.0%}"
    if done >= total:
        return share
    if elapsed < ETA_AFTER_S or done <= 0:
        return share + " · estimating time left"
    eta = fmt_eta(eta_seconds(elapsed, done, total))
    return share + (f" · {eta}" if eta else "")


TEXTS_NOTE = ("The encoding bar counts texts, not turns: every distinct turn text and every distinct question text, "
              "once per dense model (static word vectors on all, then MiniLM on the short ones), less those already "
              "cached; so a dataset's count is about twice its turns plus its questions (LoCoMo's 5,882 turns and "
              "1,986 questions make 15,708).")


def guess_kind(path: str) -> str:
    """The ingest kind a path suggests: ``beam`` for a folder (only BEAM loads from one: a root, a tier
    such as ``beam/100K`` or a conversation such as ``beam/100K/1``) or a path with "beam" in it, else
    by the file's name (locomo-plus, locomo, longmemeval), else ``jsonl``."""
    p = Path(path)
    name = p.name.lower()
    if "beam" in name or p.is_dir() or any(part.lower() == "beam" for part in p.parts):
        return "beam"
    if "locomo_plus" in name or "locomo-plus" in name:
        return "locomo-plus"
    return "locomo" if "locomo" in name else "longmemeval" if "longmemeval" in name else "jsonl"


def shared_choices(root: Path) -> list[Path]:
    """What the Data page offers under "Shared copy": the JSON files of ``root``, then each BEAM folder
    a user may load, the whole copy, each tier, each conversation (in numeric order)."""
    if not root.is_dir():
        return []
    out = sorted(p for p in root.glob("*.json*") if p.is_file())
    beam = root / "beam"
    if beam.is_dir():
        out.append(beam)
        for tier in sorted((t for t in beam.iterdir() if t.is_dir()), key=lambda t: t.name):
            out.append(tier)
            out += sorted((c for c in tier.iterdir() if c.is_dir()),
                          key=lambda c: (not c.name.isdigit(), int(c.name) if c.name.isdigit() else 0, c.name))
    return out


def shared_label(p: Path, root: Path) -> str:
    """``beam/100K/1 · one BEAM conversation`` for a shared choice (its path under ``root``, and what it is)."""
    rel = p.relative_to(root).as_posix() if p.is_relative_to(root) else p.name
    depth = len(p.relative_to(root).parts) if p.is_relative_to(root) else 0
    what = {1: "every BEAM tier", 2: "one BEAM tier", 3: "one BEAM conversation"}.get(depth) if p.is_dir() else ""
    return rel + (f" · {what}" if what else "")


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
    ended, so it holds the store (``Store.held``) itself: in team mode the store is open only inside such a window)."""
    def make() -> str:
        with store.held():
            return "".join(corpus_lines(store, dataset_id, blind))
    return make
