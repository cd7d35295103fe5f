"""Shared widgets: turns as escaped text, gold marks, the whole-session dialog, a progress adapter.

Conversation text is user data: it is always rendered with Markdown escaped (never as HTML), or
inside a dataframe cell, which renders plain text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import pandas as pd
import streamlit as st

from bfr_core.progress import Progress
from bfr_core.records import Turn
from ui import markup
from ui import resources as R
from ui.commands import NOTHING_TO_SCORE

GOLD = "★"
esc = markup.text  # the pages' short name for it; the rule lives in ui.markup


def fmt_date(d: datetime | None) -> str:
    return d.strftime("%Y-%m-%d %H:%M") if isinstance(d, datetime) else ""


def turn_label(turn_id: str, turns: dict[str, Turn] | None = None) -> str:
    """The one display form of a turn id: the dataset's own local id (LoCoMo ``D20:34``) when the
    turn is known, else the id with its scope prefix cut (``conv-43:D20:34`` -> ``D20:34``)."""
    t = (turns or {}).get(turn_id)
    if t is not None and t.local_id:
        return t.local_id
    head, sep, rest = turn_id.partition(":")
    return rest if sep and head.startswith("conv-") else turn_id


def turn_header(t: Turn, *, gold: bool = False) -> str:
    """``★ gold · **speaker** · date · id``, escaped."""
    parts = [f":orange-badge[{GOLD} gold]"] if gold else []
    parts.append(f"**{esc(t.speaker)}**")
    if t.date:
        parts.append(esc(fmt_date(t.date)))
    parts.append(esc(turn_label(t.turn_id, {t.turn_id: t})))
    return " · ".join(parts)


def turn_card(t: Turn, *, dataset_id: str, gold: bool = False, key: str, note: str = "") -> None:
    """One turn: header and escaped text, and a button opening its whole session in a dialog."""
    with st.container(border=True):
        left, right = st.columns([0.9, 0.1], vertical_alignment="center")
        left.markdown(turn_header(t, gold=gold) + (f" · {esc(note)}" if note else "") + "  \n" + esc(t.text))
        if right.button("Session", key=f"{key}_sess_{t.turn_id}", help=f"Open session {t.session_id}",
                        icon=":material/forum:", type="tertiary"):
            session_dialog(dataset_id, t.session_id, t.turn_id)


def turn_cards(turns: Sequence[Turn], *, dataset_id: str, gold: Iterable[str] = (), show_gold: bool = True,
               key: str, notes: dict[str, str] | None = None, limit: int = 60) -> None:
    gold_set = set(gold) if show_gold else set()
    notes = notes or {}
    for t in turns[:limit]:
        turn_card(t, dataset_id=dataset_id, gold=t.turn_id in gold_set, key=key, note=notes.get(t.turn_id, ""))
    if len(turns) > limit:
        st.caption(f"… and {len(turns) - limit} more turns")


@st.dialog("Whole session", width="large")
def session_dialog(dataset_id: str, session_id: str, anchor: str = "") -> None:
    turns = R.session_turns(R.store_path(), dataset_id, session_id)
    date = fmt_date(turns[0].date) if turns else ""
    st.markdown(f"Session **{esc(session_id)}** · {esc(date)} · {len(turns)} turns")
    for t in turns:
        mark = "➤ " if t.turn_id == anchor else ""
        st.markdown(f"{mark}**{esc(t.speaker)}**: {esc(t.text)}")


def turns_frame(rows: Sequence[dict], turns: dict[str, Turn], *, gold: Iterable[str] = (),
                show_gold: bool = True) -> pd.DataFrame:
    """Table of turns (with any extra columns the rows carry: rank, score, view, ...)."""
    gold_set = set(gold) if show_gold else set()
    out = []
    for r in rows:
        t = turns.get(r["turn_id"])
        extra = {k: v for k, v in r.items() if k != "turn_id"}
        out.append({
            **({"gold": GOLD if r["turn_id"] in gold_set else ""} if show_gold else {}),
            **extra, "turn": turn_label(r["turn_id"], turns),
            "speaker": t.speaker if t else "", "date": fmt_date(t.date) if t else "",
            "text": t.text if t else "(turn not in this scope)",
            "turn_id": r["turn_id"], "session_id": t.session_id if t else "",
        })
    return pd.DataFrame(out)


def show_turns_table(frame: pd.DataFrame, *, key: str, dataset_id: str | None = None) -> None:
    """A turn table; selecting a row opens that turn's whole session (once per new selection)."""
    if frame.empty:
        st.caption("(none)")
        return
    cfg = {"text": st.column_config.TextColumn("text", width="large"),
           "score": st.column_config.NumberColumn("score", format="%.3f"),
           "turn_id": None, "session_id": None}
    height = "auto" if len(frame) <= 8 else 320
    if dataset_id is None:
        st.dataframe(frame, hide_index=True, column_config=cfg, key=key, height=height)
        return
    event = st.dataframe(frame, hide_index=True, column_config=cfg, key=key, height=height,
                         on_select="rerun", selection_mode="single-row")
    rows = event.selection.rows if event else []
    picked = frame.iloc[rows[0]] if rows and rows[0] < len(frame) else None
    opened = f"{key}_opened"
    if picked is None:
        st.session_state[opened] = None
    elif st.session_state.get(opened) != picked["turn_id"]:
        st.session_state[opened] = picked["turn_id"]
        session_dialog(dataset_id, picked["session_id"], picked["turn_id"])


class ProgressBar:
    """A ``bfr_core.progress.Progress`` callback drawing one ``st.progress`` bar: stage, count, ETA
    (per bar, from its own start: :func:`bfr_core.progress.restarts`); :meth:`clear` removes it when the work ends."""

    def __init__(self, text: str) -> None:
        import time

        self.text, self.clock = text, time.perf_counter
        self.slot = st.empty()
        self.slot.progress(0.0, text=text)
        self.stage: tuple[int, int] | None = None
        self.since = self.clock()

    def __call__(self, done: int, total: int, label: str) -> None:
        from bfr_core.progress import restarts
        from ui.ingesting import bar_text

        if restarts(self.stage, done, total):  # not on a label change: one bar's label moves with its count
            self.since = self.clock()
        self.stage = (done, total)
        frac = min(max(done / total, 0.0), 1.0) if total else 0.0
        self.slot.progress(frac, text=bar_text(label or self.text, done, total, self.clock() - self.since))

    def clear(self) -> None:
        self.slot.empty()


def progress_bar(text: str) -> Progress:
    """A ``bfr_core.progress.Progress`` callback drawing one ``st.progress`` bar (see :class:`ProgressBar`)."""
    return ProgressBar(text)


def new_row_pick(key: str, ids: Sequence[str]) -> str | None:
    """The id of the row just selected in the single-row dataframe ``key`` (read from its widget
    state, so it works before the table is drawn), or ``None``; a selection already acted on is
    not returned twice (coming back to a page does not replay it)."""
    rows = (st.session_state.get(key) or {}).get("selection", {}).get("rows", [])
    picked = ids[rows[0]] if rows and rows[0] < len(ids) else None
    seen = f"{key}_acted"
    if picked is None or st.session_state.get(seen) == picked:
        st.session_state[seen] = picked
        return None
    st.session_state[seen] = picked
    return picked


def eval_commands(intro: str, cmds: list[str]) -> None:
    """``intro`` and the ``bfr eval`` lines to run (``commands.eval_cmds``), or, when no dataset has
    anything to score, why none is offered."""
    if not cmds:
        st.info(NOTHING_TO_SCORE)
        return
    st.info(intro)
    st.code("\n".join(cmds), language="bash")


def run_results(path: str, run_id: str) -> tuple[str, list[dict], list[dict]]:
    """A finished run's per-arm figures at the run's common set size (every arm's sets cut to the
    smallest arm's largest set, ``evaluation.summary.common_size``), so that no two arms are shown
    side by side at different budgets: (a caption naming that size, one display row per arm with
    each proportion's Wilson 95% interval, the figures themselves for a chart)."""
    from bfr_core.evaluation import report as REP

    sizes, k = R.set_sizes(path, run_id)
    summary, cut = R.cut_summary(path, run_id, k)
    figures = REP.arm_figures(summary, cut)
    largest = " · ".join(f"{a} {n}" for a, n in sizes.items())
    caption = ((f"Compared at **{k} turns each**: every arm's set cut to its first {k} turns (largest sets: "
                f"{largest}); F1, J and Suff are those of each arm's own set." if k is not None else
                f"Every arm's largest set: {largest} turns.") + " [lo, hi]: Wilson 95% interval.")
    shown = [(key, name) for key, name in REP.MEASURES if any(key in f for f in figures)]
    rows = [{"arm": f["arm"], "questions": f["n"], "set size": f["set size"], "calls": f["calls"],
             **{name: (f"{f[key]:.1f}" + (f" [{f[key + '_lo']:.0f}, {f[key + '_hi']:.0f}]"
                                           if f.get(key + "_lo") is not None else "")) if key in f else "—"
                for key, name in shown}} for f in figures]
    return caption, rows, figures
