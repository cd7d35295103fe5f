"""The offline rules provider over every scoreable LoCoMo question: retrieval, answers and stem F1, timed.

Issue 5's target: all 1,536 scoreable LoCoMo questions with answers and F1 in <= 5 min on a warm store
(LoCoMo ingested with its indexes; ingesting is not timed). Runs ``mem0, bfr-mv, conv-fusion`` exactly as

    bfr eval --db DB --benchmark locomo --arms mem0,bfr-mv,conv-fusion --answer

does, after dropping the run's earlier rows and every cached offline-rules reply, so each answer is
computed again. Writes ``bench/out/eval_locomo_answers_rules.json``: the ``bfr eval`` JSON contract plus
``wall_s`` (retrieval, answers, total) and the run's call counts.

    .venv/bin/python -m bench.quality.bench_rules_answers     # ~2-4 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

from bfr_core.config import Config
from bfr_core.evaluation.answers import score_answers
from bfr_core.evaluation.evaluate import RunSpec, bind_data, evaluate
from bfr_core.evaluation.summary import summarize
from bfr_core.ingest import ingest
from bfr_core.ingest.sources import benchmark_file
from bfr_core.llm import call_summary, make_llm
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATA = benchmark_file("locomo")
ARMS = ("mem0", "bfr-mv", "conv-fusion")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "rules_answers.duckdb"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "eval_locomo_answers_rules.json"))
    args = ap.parse_args(argv)

    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    store = Store(args.db)
    if store.dataset("locomo") is None:
        ingest(store, "locomo", DATA)
    config = Config()
    llm = make_llm(config.llm, store)
    spec = bind_data(store, RunSpec("locomo", ARMS, provider=llm.label))  # the run id evaluate writes
    store.delete_runs(spec.run_id)  # a fresh run: no earlier rows, no cached rules replies
    with store.transaction() as tx:
        tx.execute("DELETE FROM llm_cache WHERE provider = ?", [llm.provider])
    llm = llm.with_run(spec.run_id)
    start = time.perf_counter()
    evaluate(store, spec, config=config)
    retrieval = time.perf_counter() - start
    score_answers(store, spec.run_id, llm, answer=True)
    total = time.perf_counter() - start
    result = summarize(store, spec.run_id, "locomo")
    result["wall_s"] = {"retrieval": round(retrieval, 1), "answers": round(total - retrieval, 1),
                        "total": round(total, 1), "target_total": 300}
    result["llm_calls"] = asdict(call_summary(store, spec.run_id))
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"wall_s": result["wall_s"], "f1": {a: result["arms"][a]["f1"] for a in ARMS}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
