"""How ``bfr``'s weights are chosen: one protocol over every number of its ranking.

Three benchmarks: LoCoMo, LongMemEval dev50 and the LoCoMo-Plus dev half (``locomo_plus_dev.json``
stitched into LoCoMo's chats; the trigger is the question, the cue's turns the gold); with ``--beam``
a fourth, BEAM's 100K tier (its 500K and 1M tiers are never in the protocol: held out).

Ranking-only: each question's score parts (``turn_scores.score_parts``, plus what the variants the
shipped setting leaves off read: the three BM25 indexes with their word-trust signals, the static
cosine, recency, the session BM25 and both session-topic vector sets; ``variants.variant_parts``)
are computed once (and cached to ``bench/out/cache/selection_cases.pkl``, ``--reuse-cases``); a grid
point re-weights them (``variants.combine``, which composes ``turn_scores``' own functions) and
is scored by the top-k of its ranking alone (no Stage I cover; the
shipped arm's pipeline figures are in ``ours.json``, and they are **development** figures). Every
figure goes through ``bfr_core.evaluation.metrics`` (``turn_hit``, ``complete_evidence_recall``,
``session_recalls``).

Every number that decides the ranking is either a coordinate of :data:`GRID` (chosen inside the
protocol) or listed in :data:`FIXED` with the argument that fixes it without looking at either
benchmark's questions. Two coordinates searched until b47aa4f, the fusion (z or RRF) and Rocchio
feedback in the remark regime, are dropped (:data:`DROPPED`): no search ever moved to them, so every
choice and figure of ``ours_selection.json`` is what the coordinates left give (16 since the remark's clauses joined). The grid grows
multiplicatively (16 coordinates), so each choice is a
coordinate-wise search (:func:`search`): start at the z-fusion baseline (:data:`START`: stemmed
BM25 + static dense, z-scores, no priors, no context, the remark gate off), then for each coordinate in turn take the
value with the best objective holding the others, pass after pass over the coordinates until a pass
changes nothing (ties keep the current value; :data:`PASSES` only caps it, and the path's last step
says whether the search converged). An open-ended weight (:data:`OPEN_ENDED`) the search moves to its
grid's largest value gets twice that value added to that search's grid (at most :data:`EXTEND_MAX`
times; ``--grow step`` adds one step of the last difference instead), so no choice rests on an edge
typed before any search ran. The search only ever sees the questions it is given.

The objective on a benchmark is the mean of hit@10, hit@40, CER@40 and session recall_any@5; on
LongMemEval dev50 the session recall is LongMemEval's official convention exactly as its
``run_retrieval.py`` scores it (``metrics.official_scores``: user turns only, a non-gold turn of an
answer session renamed ``noans`` so only gold user turns find their session, a question with no gold
user turn left out, abstention skipped, as ``bfr eval --official-corpus``), on LoCoMo it ranks all
turns. On LoCoMo-Plus (one cue dialogue per item) it is the mean of hit@10 and hit@40, on BEAM the
mean of hit@10, hit@40 and CER@40 (the figures its table reports). Several benchmarks: the mean of
their objectives (each benchmark counts once).

Writes ``bench/out/ours_selection.json``:

* ``cross_validation``: the conversations (LoCoMo's 10 chats, dev50's 50 haystacks) in ``FOLDS``
  folds dealt round-robin, each fold holding conversations of both; a LoCoMo-Plus item goes to the
  fold of the LoCoMo chat it is stitched into, so a chat and the items stitched into it are held out
  together; each fold's setting is searched on the other folds (the mean of the benchmarks'
  objectives) and scored on the held-out fold; the held-out rows pooled are the **held-out** figures.
* ``tune on A + B, report C`` (three directions): searched on two benchmarks, scored on the third.
* ``chosen on all folds``: the same search over every conversation: the setting
  ``turn_scores.DEFAULT`` ships; its figures are **development** figures.
* ``z-fusion baseline``: :data:`START` on every question, and ``dense top-k`` (the store's dense view
  alone, ``amem``'s ranking): no weight to choose, so their figures are held out everywhere.

Run: ``.venv/bin/python -m bench.quality.bench_ours_selection [--db bench/out/cache/ours.duckdb]``.
Does not cover: the 449 held-back LongMemEval-S questions (scored independently of this repository).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.lib.ours_runs import OUT
from bench.lib.selection import (
    BEAM,
    GRID,
    GROW,
    OPEN_ENDED,
    PASSES,
    PREVIOUS,
    START,
    cached_cases,
    open_all,
    protocol,
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--reuse-cases", action="store_true", help="read the score parts cached by the last run "
                    "(bench/out/cache/selection_cases.pkl) instead of recomputing them")
    ap.add_argument("--workers", type=int, default=1, help="processes that score a grid point's questions")
    ap.add_argument("--passes", type=int, default=PASSES, help="passes of the coordinate-wise search (each stops "
                    "early when a pass changes nothing)")
    ap.add_argument("--beam", action="store_true", help=f"BEAM's 100K tier as a fourth development benchmark ({BEAM}; "
                    "its 500K and 1M tiers stay held out)")
    ap.add_argument("--grow", choices=("double", "step"), default=GROW, help="how an open-ended weight's grid grows "
                    "past its largest value (see OPEN_ENDED)")
    ap.add_argument("--start", choices=("z-fusion", "previous"), default="z-fusion", help="where every search "
                    "starts: the z-fusion baseline (START) or the setting shipped before the set weights joined the grid "
                    "(PREVIOUS; its ranking weights were chosen by an earlier run of this protocol, without dev200)")
    ap.add_argument("--coords", default="", help="comma-separated coordinates every search moves (default: all of "
                    "GRID; e.g. set_spread,set_cover: the set at each budget over the previous ranking)")
    ap.add_argument("--guard", action="store_true", help="take a move only if no benchmark the search sees falls "
                    "below the start's any or all gold at 10 or any figure at 40 (selection.GUARD)")
    ap.add_argument("--out", default=str(OUT / "ours_selection.json"))
    args = ap.parse_args()
    coords = tuple(c for c in args.coords.split(",") if c)
    if unknown := [c for c in coords if c not in GRID]:
        ap.error(f"--coords: not coordinates of GRID: {', '.join(unknown)}")
    t0 = time.time()
    store = open_all(Path(args.db), args.beam)
    cases = cached_cases(store, OUT / "cache" / "selection_cases.pkl", args.reuse_cases, args.beam)
    store.close()  # the grid reads only the cases: other benches may open the store now
    print(f"cases ready in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    head = {"benchmark": "ours_selection", "load_at_start": list(os.getloadavg()),
            "workers": args.workers, "passes": args.passes, "grow": args.grow, "start": args.start,
            "guard": args.guard,
            "open-ended (their grids grow)": list(OPEN_ENDED)}

    def save(part: dict) -> None:  # the figures so far, marked unfinished until the last section is in
        partial = {**head, "unfinished": "the sections not yet here are still running", **part,
                   "elapsed_s": round(time.time() - t0, 1)}
        Path(args.out).write_text(json.dumps(partial, indent=1) + "\n", encoding="utf-8")

    sel = {**head, **protocol(cases, args.workers, args.passes, args.grow, save,
                              PREVIOUS if args.start == "previous" else START, coords, args.guard)}
    sel["load_at_end"] = list(os.getloadavg())
    sel["elapsed_s"] = round(time.time() - t0, 1)
    Path(args.out).write_text(json.dumps(sel, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {sel['elapsed_s']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
