"""Disputed answer keys on the pages: an overlay's finding next to a question (Trace) and as a column
of the question table (Failures). Reads ``evaluation.overlay.disputed``; draws nothing when no
overlay was ingested."""

from __future__ import annotations

from typing import Any

import streamlit as st

from bfr_core.evaluation.overlay import disputed


def note(store: Any, dataset_id: str, question_id: str) -> None:
    """A warning under the question when an overlay disputes its key, with the finding's reason."""
    reason = disputed(store, dataset_id).get(question_id)
    if reason:
        st.warning(f"Disputed key · {reason}", icon=":material/report:")


def with_column(df: Any, store: Any, dataset_id: str) -> Any:
    """``df`` (one row per ``question_id``) with a ``disputed key`` column when an overlay disputes any."""
    found = disputed(store, dataset_id)
    if not found or "question_id" not in df.columns:
        return df
    return df.assign(**{"disputed key": [found.get(q, "") for q in df["question_id"]]})
