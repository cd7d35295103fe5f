"""What the Data page says while and after it ingests: the bar's text, the name-clash check, and
errors in the GUI's words. No streamlit import (bench/bench_app_ingest.py uses the same text).

Covers: bar text with stage, count and ETA; a clash message that names the page's checkbox (not
``--replace``); an error's temporary upload path replaced by the uploaded file's name; what a
stopped ingest left (:func:`stopped_message`, from the dataset's row before and after).
Does not cover: the ingest itself (``bfr_core.ingest.ingest``), drawing the bar (``ui.widgets``).
"""

from __future__ import annotations

from bfr_core.progress import eta_seconds, fmt_eta

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
