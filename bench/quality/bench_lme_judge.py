"""LongMemEval's official judge beside the paper's Mem0-style judge, by question type, on dev50.

One arm (default ``bfr-mv``, offline Stage I: the retrieval is not what is measured) over the 50
LongMemEval-S dev50 questions, through the same code ``bfr eval --answer --judge --lme-judge`` runs
(``evaluate`` then ``score_answers``): one answer per question (the answerer is shown the question
date, as LongMemEval's reader is), then the paper's judge and LongMemEval's judge on that answer. The
summary gives, overall and per question type, ``judge`` (% CORRECT) and ``lme_judge`` (% yes; with
the offline rules, of the decided rows, and ``lme_undecided`` counts the rest) and how often the two
judges agree on the same answer.

Writes ``bench/out/lme_judge.json`` (``--provider rules`` writes ``bench/out/lme_judge_rules.json``);
no per-question text (the answers quote the benchmark). Calls are cached in ``--db``: a rerun makes no
call.

    .venv/bin/python -m bench.quality.bench_lme_judge                    # local model (~15 s per answer on 2 cores)
    .venv/bin/python -m bench.quality.bench_lme_judge --arm mem0 --sample 12   # what was run here (a loaded machine)
    .venv/bin/python -m bench.quality.bench_lme_judge --provider rules   # offline rules, seconds
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bfr_core.config import LLMConfig
from bfr_core.evaluation.answers import score_answers
from bfr_core.evaluation.evaluate import RunSpec, bind_data, evaluate
from bfr_core.ingest import ingest
from bfr_core.llm import call_summary, make_llm
from bfr_core.progress import tqdm_progress
from bfr_core.runs import load_results
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DEV50 = ROOT.parent / "shared" / "data" / "longmemeval_s_dev50.json.gz"


def agreement(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How often the two judges give the same verdict on the same answer (decided rows only)."""
    both = [r for r in rows if r["judge"] is not None and r["lme_judge"] in ("yes", "no")]
    same = sum((r["judge"] == "CORRECT") == (r["lme_judge"] == "yes") for r in both)
    return {"n_both": len(both), "agree": same,
            "agree_pct": round(100 * same / len(both), 1) if both else None}


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``evaluate``'s per-arm summary over ``rows`` (one arm), with its per-type table."""
    from bfr_core.evaluation.summary import arm_summary

    out = arm_summary(rows)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_type[r["qtype"]].append(r)
    out["by_type"] = {t: arm_summary(v) for t, v in sorted(by_type.items())}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "lme_judge.duckdb"))
    ap.add_argument("--provider", default="local")
    ap.add_argument("--arm", default="bfr-mv")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--sample", type=int, default=None, help="a seeded sample stratified by question type")
    ap.add_argument("--out", default="")
    ap.add_argument("--partial", action="store_true",
                    help="make no call: summarise the rows an interrupted run already judged (both judges)")
    args = ap.parse_args(argv)
    out = Path(args.out or ROOT / "bench" / "out" / ("lme_judge.json" if args.provider == "local"
                                                      else f"lme_judge_{args.provider}.json"))
    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    store = Store(args.db)
    if store.dataset("longmemeval") is None:
        ingest(store, "longmemeval", DEV50)
    llm = make_llm(LLMConfig(provider=args.provider), store)
    spec = bind_data(store, RunSpec("longmemeval", (args.arm,), provider=llm.label, limit=args.limit,
                                    sample=args.sample))
    start = time.perf_counter()
    run_id = spec.run_id if args.partial else evaluate(store, spec)
    llm = llm.with_run(run_id)
    if not args.partial:
        score_answers(store, run_id, llm, answer=True, judge=True, lme_judge=True,
                      progress=tqdm_progress("answer, judge, lme_judge"))
    wall = time.perf_counter() - start
    rows = load_results(store, run_id)
    if args.partial:  # only the questions both judges finished
        done = {r["question_id"] for r in rows if r["judge"] is not None and r["lme_judge"] is not None}
        rows = [r for r in rows if r["question_id"] in done]
    summary = _summary(rows)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_type[r["qtype"]].append(r)
    keys = ("n", "judge", "lme_judge", "lme_undecided", "f1")
    calls = call_summary(store, run_id)
    result = {
        "benchmark": "lme_judge", "dataset": "longmemeval_s_dev50", "arm": args.arm, "provider": llm.label,
        "questions": "all 50" if not (args.sample or args.limit) else f"sample {args.sample} (seed 0, by type)"
        if args.sample else f"first {args.limit}",
        "run_id": run_id, "wall_s": round(wall, 1), "partial": args.partial, "questions_judged": len(
            {r["question_id"] for r in rows}), "provider_calls": calls.provider_calls,
        "cached_calls": calls.cached, "failed_rows": sum(r["error"] is not None for r in rows),
        "note": "judge = the paper's Mem0-style judge (% CORRECT); lme_judge = LongMemEval's official "
                "judge (% yes of decided rows); both judge the same answer; abstention questions use "
                "LongMemEval's abstention prompt and count under their question type",
        "all": {**{k: summary.get(k) for k in keys}, **agreement(rows)},
        "by_type": {t: {**{k: summary["by_type"][t].get(k) for k in keys}, **agreement(v)}
                    for t, v in sorted(by_type.items())},
        "abstention": {**agreement([r for r in rows if r["question_id"].endswith("_abs")]),
                       "n": sum(r["question_id"].endswith("_abs") for r in rows)},
    }
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
