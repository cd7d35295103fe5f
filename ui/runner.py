"""Step-by-step replay: run the pipeline once per selection, reveal its steps one at a time.

State lives in ``st.session_state`` under the page's prefix: ``<p>key`` (what the trace was run
for), ``<p>trace`` (the Trace), ``<p>shown`` (steps revealed). Changing any selection resets it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import streamlit as st

from bfr_core.errors import BfrError
from bfr_core.records import Trace
from ui import markup

# Keyboard shortcuts (Streamlit >= 1.52 ``st.button(shortcut=...)``); "C" and "R" are reserved.
NEXT_KEY, ALL_KEY = "N", "Shift+N"


def stepper(prefix: str, key: Hashable, compute: Callable[[], Trace], *, spinner: str = "Running…",
            next_label: str = "Next step", all_label: str = "Run all") -> tuple[Trace | None, int]:
    """Draw Next step / Run all / Reset; returns (trace or None, number of steps revealed)."""
    ss = st.session_state
    if ss.get(f"{prefix}key") != key:
        ss[f"{prefix}key"], ss[f"{prefix}trace"], ss[f"{prefix}shown"] = key, None, 0
    c1, c2, c3, c4 = st.columns([0.18, 0.18, 0.14, 0.5], vertical_alignment="center")
    nxt = c1.button(next_label, key=f"{prefix}next", type="primary", shortcut=NEXT_KEY, icon=":material/skip_next:")
    run_all = c2.button(all_label, key=f"{prefix}all", shortcut=ALL_KEY, icon=":material/fast_forward:")
    if c3.button("Reset", key=f"{prefix}reset", icon=":material/restart_alt:"):
        ss[f"{prefix}trace"], ss[f"{prefix}shown"] = None, 0
    if (nxt or run_all) and ss[f"{prefix}trace"] is None:
        try:
            with st.spinner(spinner):
                ss[f"{prefix}trace"] = compute()
        except BfrError as exc:
            st.error(markup.text(exc))
            return None, 0
    trace: Trace | None = ss[f"{prefix}trace"]
    if trace is not None:
        n = len(trace.steps)
        if nxt:
            ss[f"{prefix}shown"] = min(ss[f"{prefix}shown"] + 1, n)
        if run_all:
            ss[f"{prefix}shown"] = n
        c4.caption(f"step {ss[f'{prefix}shown']} of {n} · {trace.arm} · budget {trace.budget or '—'} · "
                   f"{trace.provider} · {trace.elapsed_ms:.0f} ms")
    else:
        c4.caption(f"Press **{next_label}** ({NEXT_KEY}) to run and reveal the first step, "
                   f"or **{all_label}** ({ALL_KEY}).")
    return trace, int(ss[f"{prefix}shown"])
