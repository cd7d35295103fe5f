"""How much a benchmark rewards spreading the evidence over sessions, whatever the words say: a check of
LoCoMo-Plus's construction before anyone reads its figures as association.

LoCoMo-Plus stitches each cue dialogue into a LoCoMo chat as a session of its own (two turns, beside the
chat's 19-32 sessions of ~20 turns; ``../shared/data/README.md``). A ranking that takes one turn from
every session before a second from any then holds the cue's session by construction at 40 turns. This
bench measures that on the selection protocol's cases (``bench.lib.selection.cached_cases``; the same
score parts, gold and metrics), with no weight to choose:

* ``dense``: the store's dense view, top-k (``bench_ours_selection.DENSE_ONLY``);
* ``dense, sessions round-robin``: the same ranking re-ordered so each session's best turn comes first
  (sessions in the order of their best turn), then each one's second best, and so on;
* ``bfr``: the shipped setting (``turn_scores.DEFAULT``), the same round-robin over it, and the
  round-robin only on the questions its gate puts in the remark regime.

Why ``bfr`` does not ship the round-robin (in either form): its LoCoMo-Plus gain is the
cue being a session of its own, which a real history does not give, and on LoCoMo it costs evidence.

Writes ``bench/out/session_spread.json``. Run (after bench_ours_selection.py has cached its cases):
``.venv/bin/python -m bench.quality.bench_session_spread``.
Does not cover: choosing anything (nothing here is a setting of ``bfr``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from bench.lib.ours_runs import OUT
from bench.lib.selection import BEAM, DENSE_ONLY, cached_cases, open_all
from bench.lib.session_spread import figures
from bfr_core.method.variants import Variant


def main() -> None:
    store = open_all(OUT / "cache" / "ours.duckdb", beam=True)
    cases = cached_cases(store, OUT / "cache" / "selection_cases.pkl", reuse=True, beam=True)
    store.close()
    out: dict[str, object] = {"benchmark": "session_spread", "load_at_start": list(os.getloadavg())}
    for d in ("locomo", "longmemeval", "locomo-plus", BEAM):
        if d not in cases:
            continue
        sessions = [len(set(c.sessions.values())) for c in cases[d]]
        out[d] = {"questions": len(cases[d]), "sessions per scope (min, mean, max)":
                  [min(sessions), round(float(np.mean(sessions)), 1), max(sessions)],
                  "dense": figures(cases[d], DENSE_ONLY), "bfr (shipped setting)": figures(cases[d], Variant())}
        print(d, json.dumps(out[d]), file=sys.stderr)
    out["load_at_end"] = list(os.getloadavg())
    path = Path(OUT / "session_spread.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
