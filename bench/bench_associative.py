"""bfr's associative step with a model, on every question its gate puts in the remark regime, on the
four development benchmarks: the ranking with and without the model's antecedent (issue 28).

For each question of the selection protocol's cases (``bench_ours_selection.cached_cases``: LoCoMo,
dev50, the LoCoMo-Plus dev half, BEAM 100K) that the shipped setting ranks in the remark regime, the
local model writes the earlier message it refers back to (``roles.antecedent``; replies cached in the
store's LLM cache, so a rerun asks nothing) and ``ours.with_antecedent`` ranks with it, exactly as the
arm does with a model. Both rankings are scored as the selection scores them (``order_row``: hit and
CER at 10 and 40) and compared question by question (exact McNemar on hit). Nothing is chosen here:
the step has no weight (one to one, as HyDE averages), so on every benchmark these figures are as held
out as the shipped setting's own figures are (development).

Writes ``bench/out/associative.json``. Run (after ``scripts/install_local_llm.sh``):
``.venv/bin/python bench/bench_associative.py``.
Does not cover: API models (the same role runs with any provider through ``bfr eval --provider``),
the words regime (the step never runs there).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from bench_ours import Views, questions
from bench_ours_selection import BENCHMARKS, COLS, OUT, cached_cases, open_all, order_row, summarize
from ours_variants import Variant, combine

from bfr_core.config import LLMConfig
from bfr_core.evaluation.stats import mcnemar_by_key
from bfr_core.llm import LLMCallFailed, make_llm
from bfr_core.method import ours, turn_scores
from bfr_core.roles.antecedent import antecedent

KEEP = ("hit@10", "cer@10", "hit@40", "cer@40")


def main() -> None:
    t0 = time.time()
    store = open_all(OUT / "cache" / "ours.duckdb", beam=True)
    cases = cached_cases(store, OUT / "cache" / "selection_cases.pkl", reuse=True, beam=True)
    llm = make_llm(LLMConfig(provider="local"), store)
    out: dict[str, object] = {"benchmark": "associative", "provider": llm.label, "load_at_start": list(os.getloadavg()),
                              "setting": "turn_scores.DEFAULT (the shipped one)"}
    for d in BENCHMARKS:
        if d not in cases:
            continue
        text = {q.question_id: q.text for q in questions(store, d)}
        views = Views(store, d)
        plain, assoc, failed, said = [], [], 0, []
        for c in cases[d]:
            sc = combine(c.parts, Variant())
            if sc.regime != "remark":
                continue
            try:
                statement = antecedent(llm, text[c.question_id])
            except LLMCallFailed:
                statement, failed = "", failed + 1
            plain.append(order_row(c, turn_scores.ranking(sc.final)))
            if statement:
                other = np.asarray(views(c.scope_id, text[c.question_id]).dense.scores(statement), dtype=np.float64)
                sc = ours.with_antecedent(c.parts.core, turn_scores.DEFAULT, other)
            assoc.append(order_row(c, turn_scores.ranking(sc.final)))
            said.append(bool(statement))
        out[d] = figures(np.array(plain).reshape(-1, len(COLS)), np.array(assoc).reshape(-1, len(COLS)))
        out[d].update({"questions": len(cases[d]), "in the remark regime": len(plain),
                       "with a statement": int(sum(said)), "failed calls": failed})
        print(d, json.dumps(out[d]), file=sys.stderr, flush=True)
    out["load_at_end"] = list(os.getloadavg())
    out["elapsed_s"] = round(time.time() - t0, 1)
    store.close()
    path = Path(OUT / "associative.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def figures(plain: np.ndarray, assoc: np.ndarray) -> dict[str, object]:
    """Both rankings' figures over the same questions and, per k, the paired hit counts and McNemar p."""
    out: dict[str, object] = {"without the step": {f: v for f, v in summarize(plain).items() if f in KEEP},
                              "with the antecedent": {f: v for f, v in summarize(assoc).items() if f in KEEP}}
    for k in (10, 40):
        j = COLS.index(f"hit@{k}")
        m = mcnemar_by_key(dict(enumerate(assoc[:, j].tolist())), dict(enumerate(plain[:, j].tolist())))
        out[f"hit@{k} paired"] = {"only with the antecedent": m.x_only, "only without": m.y_only,
                                  "mcnemar_p": round(m.p_value, 4)}
    return out


if __name__ == "__main__":
    main()
