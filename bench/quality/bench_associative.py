"""bfr's associative step with a model, on every question its gate puts in the remark regime, on the
four development benchmarks: the ranking with and without the model's antecedent (issue 28).

For each question of the selection protocol's cases (``bench.lib.selection.cached_cases``: LoCoMo,
dev50, the LoCoMo-Plus dev half, BEAM 100K) that the shipped setting ranks in the remark regime, the
local model writes the earlier message it refers back to (``roles.antecedent``; replies cached in the
store's LLM cache, so a rerun asks nothing) and ``ours.with_antecedent`` ranks with it, exactly as the
arm does with a model. Both rankings are scored as the selection scores them (``order_row``: hit and
CER at 10 and 40) and compared question by question (exact McNemar on hit). Nothing is chosen here:
the step has no weight (one to one, as HyDE averages), so on every benchmark these figures are as held
out as the shipped setting's own figures are (development). ``--beam-tiers`` (default 500K and 1M) adds
BEAM's held-out tiers, on the stores ``bench_beam.py`` built: questions no selection ever saw.

Writes ``bench/out/associative.json``. Run (after ``scripts/install_local_llm.sh``):
``.venv/bin/python -m bench.quality.bench_associative``.
Does not cover: API models (the same role runs with any provider through ``bfr eval --provider``),
the words regime (the step never runs there).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from bench.lib.associative import compare
from bench.lib.ours_runs import OUT, Views, questions
from bench.lib.selection import BENCHMARKS, RankCase, cached_cases, open_all
from bfr_core.config import LLMConfig
from bfr_core.llm import make_llm
from bfr_core.method import turn_scores
from bfr_core.store import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beam-tiers", default="500K,1M", help="held-out BEAM tiers to check too, on the stores "
                    "bench_beam.py built (bench/out/cache/byo_beam_<tier>.duckdb; '' for none)")
    args = ap.parse_args()
    t0 = time.time()
    store = open_all(OUT / "cache" / "ours.duckdb", beam=True)
    cases = cached_cases(store, OUT / "cache" / "selection_cases.pkl", reuse=True, beam=True)
    llm = make_llm(LLMConfig(provider="local"), store)
    out: dict[str, object] = {"benchmark": "associative", "provider": llm.label, "load_at_start": list(os.getloadavg()),
                              "setting": "turn_scores.DEFAULT (the shipped one)"}
    for d in BENCHMARKS:
        if d in cases:
            text = {q.question_id: q.text for q in questions(store, d)}
            out[d] = compare(llm, cases[d], Views(store, d), text, (c.parts.core for c in cases[d]))
            print(d, json.dumps(out[d]), file=sys.stderr, flush=True)
    for tier in [t for t in args.beam_tiers.split(",") if t]:
        path = OUT / "cache" / f"byo_beam_{tier.lower()}.duckdb"
        if path.exists():
            out[f"beam-{tier.lower()} (held out)"] = held_out_tier(llm, Store(path))
            print(tier, json.dumps(out[f"beam-{tier.lower()} (held out)"]), file=sys.stderr, flush=True)
    store.close()  # the model's replies are cached here, the held-out tiers' too
    out["load_at_end"] = list(os.getloadavg())
    out["elapsed_s"] = round(time.time() - t0, 1)
    dest = OUT / "associative.json"
    dest.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {dest}", file=sys.stderr)


def held_out_tier(llm: Any, store: Store) -> dict[str, object]:
    """:func:`compare` over a BEAM tier no selection saw, each conversation its own dataset as
    bench_beam.py ingests it (its scoreable questions, over the whole conversation)."""
    cases, parts, text, views = [], [], {}, {}
    for d in sorted(x["dataset_id"] for x in store.datasets()):
        v = Views(store, d)
        for q in questions(store, d):
            sv = v(q.scope_id, q.text)
            views[q.scope_id] = v
            parts.append(turn_scores.score_parts(sv, q.query()))
            text[q.question_id] = q.text
            cases.append(RankCase(q.question_id, q.scope_id, q.scope_id, q.qtype, frozenset(q.gold),
                                  tuple(t.turn_id for t in sv.turns), {t.turn_id: t.session_id for t in sv.turns}, None))
    # each scope's views come from its own dataset's Views (a BEAM tier: one dataset per conversation)
    out = compare(llm, cases, lambda scope_id, question=None: views[scope_id](scope_id, question), text, parts)
    out["datasets"] = len({c.scope_id for c in cases})
    store.close()
    return out


if __name__ == "__main__":
    main()
