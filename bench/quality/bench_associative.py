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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from bench.lib.ours_runs import OUT, Views, questions
from bench.lib.selection import BENCHMARKS, COLS, RankCase, cached_cases, open_all, order_row, summarize
from bfr_core.config import LLMConfig
from bfr_core.evaluation.stats import mcnemar_by_key
from bfr_core.llm import LLMCallFailed, make_llm
from bfr_core.method import ours, turn_scores
from bfr_core.roles.antecedent import antecedent
from bfr_core.store import Store

KEEP = ("hit@10", "cer@10", "hit@40", "cer@40")


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


def compare(llm: Any, cases: Sequence[RankCase], views: Callable[..., Any], text: dict[str, str],
            parts: Iterable[turn_scores.ScoreParts]) -> dict[str, object]:
    """:func:`figures` over the cases the shipped setting ranks in the remark regime (``parts``: each
    case's ``turn_scores.score_parts``, in order), with the counts of what was asked."""
    plain, assoc, failed, said = [], [], 0, 0
    for c, p in zip(cases, parts, strict=True):
        sc = turn_scores.combine(p)
        if sc.regime != "remark":
            continue
        try:
            statement = antecedent(llm, text[c.question_id])
        except LLMCallFailed:
            statement, failed = "", failed + 1
        plain.append(order_row(c, turn_scores.ranking(sc.final)))
        if statement:
            other = np.asarray(views(c.scope_id, text[c.question_id]).dense.scores(statement), dtype=np.float64)
            sc, said = ours.with_antecedent(p, turn_scores.DEFAULT, other), said + 1
        assoc.append(order_row(c, turn_scores.ranking(sc.final)))
    out = figures(np.array(plain).reshape(-1, len(COLS)), np.array(assoc).reshape(-1, len(COLS)))
    out.update({"questions": len(cases), "in the remark regime": len(plain), "with a statement": said,
                "failed calls": failed})
    return out


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


def _rates(rows: np.ndarray) -> dict[str, float | None]:
    """The KEEP figures in percent; None over no questions (no question in the regime is no 0 %)."""
    if not len(rows):
        return dict.fromkeys(KEEP)
    return {f: v for f, v in summarize(rows).items() if f in KEEP}


def figures(plain: np.ndarray, assoc: np.ndarray) -> dict[str, object]:
    """Both rankings' figures over the same questions and, per k, the paired hit counts and McNemar p."""
    out: dict[str, object] = {"without the step": _rates(plain), "with the antecedent": _rates(assoc)}
    for k in (10, 40):
        j = COLS.index(f"hit@{k}")
        m = mcnemar_by_key(dict(enumerate(assoc[:, j].tolist())), dict(enumerate(plain[:, j].tolist())))
        out[f"hit@{k} paired"] = {"only with the antecedent": m.x_only, "only without": m.y_only,
                                  "mcnemar_p": round(m.p_value, 4)}
    return out


if __name__ == "__main__":
    main()
