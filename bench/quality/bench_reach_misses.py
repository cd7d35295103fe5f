"""Can Stage I's offline requirements reach the gold a 10-turn set misses below the ranking's 40-turn head?

Over the selection's cases (``bench.lib.selection``: LoCoMo, dev50 + dev200, LoCoMo-Plus dev and BEAM 100K, the
pickle ``bench_ours_selection`` writes; built here from ``--db`` when missing or of other code), at the shipped
setting (``turn_scores.DEFAULT``): for every question whose first 10 set turns hold some gold and not all of it,
each missing gold turn's rank band in the ranking and, below the head, whether it supplies a requirement
(``stage1.covering``, before the ``latest`` rule: the most generous reading) and whether it supplies one no head
turn does (none on a remark, whose set reads no requirement), which is the only way the set's reach
(``budget_set.set_order``, ``set_reach``) can bring it in (``bench.lib.reach_misses``); and its rank in a
second hop from the set's first 3 turns (cosine of the scope's turn vectors, the first 10 left out), a query that
reads no requirement. The official LongMemEval cases (the user-turn corpus) are counted apart.

A development diagnostic: it reads gold, as a bench may; no method reads these figures.

Run: ``.venv/bin/python -m bench.quality.bench_reach_misses`` (writes ``bench/out/reach_misses.json``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.lib.git_commit import commit
from bench.lib.ours_runs import OUT
from bench.lib.reach_misses import missing_below, tally
from bench.lib.selection import case_order, cases_in
from bfr_core.method.budget_set import unit_rows
from bfr_core.method.turn_scores import DEFAULT, ranking
from bfr_core.method.variants import Variant, combine

LABEL = ("development diagnostic (reads gold): where a 10-turn set's missing gold ranks, and whether a requirement "
         "reaches it")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--out", default=str(OUT / "reach_misses.json"))
    args = ap.parse_args()
    t0 = time.time()
    cases = cases_in(Path(args.db))
    variant = Variant()  # the shipped setting (turn_scores.DEFAULT)
    out = {"benchmark": "reach_misses", "label": LABEL, "commit": commit(), "k": 10, "head": 40,
           "set": {f: getattr(DEFAULT, f) for f in ("set_spread", "set_cover", "set_novelty", "set_asks", "set_reach",
                                                  "head_model")},
           "benchmarks": {}}
    for name, cs in cases.items():
        per_question = []
        for c in cs:
            if c.req_rows is None:
                continue
            sc = combine(c.parts, variant)
            gold = [i for i, t in enumerate(c.ids) if t in c.gold]
            rows = [0] * len(c.ids) if sc.regime == "remark" else c.req_rows  # no requirement counts on a remark
            unit = unit_rows(c.vectors) if c.vectors is not None else None
            per_question.append(missing_below(case_order(c, variant), ranking(sc.final), gold, rows, unit=unit))
        out["benchmarks"][name] = {"questions": len(cs), **tally(per_question)}
    out["elapsed_s"] = round(time.time() - t0, 1)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out["benchmarks"], indent=1))


if __name__ == "__main__":
    main()
