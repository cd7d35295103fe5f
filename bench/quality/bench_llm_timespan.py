"""Time-span questions over BFR-MV's set: the paper's answerer and the span step (default).

Which questions: every scoreable LoCoMo question and every LongMemEval dev50 question whose text asks
for a time span (``dates.TIME_SPAN_QUESTION``: "how long", "how many days / weeks / ..."); the rule reads the
question only. For each, BFR-MV's set (default budget, offline Stage I: the retrieval is not what is
measured) is rendered and fitted as the answerer reads it, and the model answers two ways:

* ``whole set``: the paper's extractive answerer over all snippets alone
  (``answerer.answer(..., span_first=False)``);
* ``span``: the default answerer: on a question for the time between two events
  (``dates.SPAN_BETWEEN_EVENTS``, a subset) the model copies the two event dates and the code subtracts
  them (``answerer.spanned``), falling back to the answerer; elsewhere the same as ``whole set``.

A third way, "focus" (the model names at most 4 snippets and the answerer reads those), was measured
here and removed from the product: LoCoMo F1 38.3 -> 21.0 (the committed ``llm_timespan.json`` still
holds its figures from that run).

Each answer gets stem F1 (the LoCoMo scorer for LoCoMo) and "number match" (a number the gold answer
gives, in digits or words, appears in the answer). No LLM judge: the 1.5B judge is too lenient to tell
the variants apart (``llm_local.json``). The summary is given over all questions and over the
``SPAN_QUESTION`` subset (where ``span`` differs from ``whole set``).
The whole-set answer runs first, so the later calls find the set's prefix already evaluated: their
seconds are the extra cost of the step, not of reading the set.

Writes the summary to ``bench/out/llm_timespan.json`` (committed: counts and scores, no per-question
rows) and the per-question rows (ids, the model's answers, scores, seconds) to
``bench/out/cache/llm_timespan_rows.json`` beside the call cache (not committed: the answers quote the
benchmark, which stays in ../shared/data). Calls are cached in ``--db``: a rerun makes no call.

    .venv/bin/python -m bench.quality.bench_llm_timespan                    # local model, ~40 min on 2 cores
    .venv/bin/python -m bench.quality.bench_llm_timespan --provider rules   # offline rules, seconds
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bfr_core import dates
from bfr_core.config import LLMConfig
from bfr_core.evaluation.answers import answer_f1
from bfr_core.ingest import ingest
from bfr_core.ingest.sources import benchmark_file, data_dir
from bfr_core.llm import call_summary, make_llm
from bfr_core.llm.rules_tokens import numbers
from bfr_core.pipeline import run_query
from bfr_core.progress import tqdm_progress
from bfr_core.records import Question
from bfr_core.retrieval.scope import scope_views
from bfr_core.roles import answerer
from bfr_core.roles.fit import fit_for
from bfr_core.roles.snippets import render as render_evidence
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATA = data_dir()
SOURCES = {kind: benchmark_file(kind) for kind in ("locomo", "longmemeval")}
VARIANTS = ("whole set", "span")


def number_match(gold: str, generated: str) -> bool:
    """A number the gold answer gives appears in the generated one (False when the gold gives none)."""
    return bool(numbers(gold) & numbers(generated))


def one(store: Store, llm: Any, dataset: str, q: Question) -> dict[str, Any]:
    trace = run_query(scope_views(store, dataset, q.scope_id), q.query(), "bfr-mv", dataset_id=dataset)
    by_id = store.turns_by_id(dataset, list(trace.evidence), q.scope_id)
    texts = fit_for(llm, q.text, render_evidence([by_id[t] for t in trace.evidence if t in by_id]))
    row: dict[str, Any] = {"dataset": dataset, "question_id": q.question_id, "set_size": len(texts),
                           "span_question": dates.SPAN_BETWEEN_EVENTS.search(q.text) is not None}
    for variant in VARIANTS:
        start = time.perf_counter()
        generated = answerer.answered(llm, q.text, texts, span_first=variant == "span").text
        seconds = time.perf_counter() - start
        row[variant] = {"answer": generated, "seconds": round(seconds, 1),
                        "f1": round(answer_f1(q, generated), 3), "number_match": number_match(q.answer, generated)}
    return row


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for variant in VARIANTS:
        vals = [r[variant] for r in rows]
        out[variant] = {
            "f1": round(100 * statistics.fmean(v["f1"] for v in vals), 1),
            "number_match": round(100 * statistics.fmean(v["number_match"] for v in vals), 1),
            "seconds_p50": round(statistics.median(v["seconds"] for v in vals), 1),
        }
    for variant in VARIANTS[1:]:  # against the paper's answerer
        out[variant]["answers_differ"] = sum(r["whole set"]["answer"] != r[variant]["answer"] for r in rows)
        out[variant]["number_match_gained_lost"] = [
            sum(r[variant]["number_match"] and not r["whole set"]["number_match"] for r in rows),
            sum(r["whole set"]["number_match"] and not r[variant]["number_match"] for r in rows)]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "llm_timespan.duckdb"))
    ap.add_argument("--provider", default="local")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "llm_timespan.json"))
    ap.add_argument("--rows", default=str(ROOT / "bench" / "out" / "cache" / "llm_timespan_rows.json"))
    args = ap.parse_args(argv)

    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    store = Store(args.db)
    for name, src in SOURCES.items():
        if store.dataset(name) is None:
            ingest(store, name, src)
    llm = make_llm(LLMConfig(provider=args.provider), store, run_id="bench-llm-timespan")
    todo = [(d, q) for d in SOURCES for q in store.questions(d, scoreable_only=True)
            if dates.TIME_SPAN_QUESTION.search(q.text)]
    progress = tqdm_progress("time-span questions: whole set, span")
    rows = []
    start = time.perf_counter()
    for i, (dataset, q) in enumerate(todo, 1):
        rows.append(one(store, llm, dataset, q))
        progress(i, len(todo), q.question_id)
    calls = call_summary(store, "bench-llm-timespan")
    result = {
        "benchmark": "llm_timespan", "provider": llm.label, "arm": "bfr-mv", "rule": dates.TIME_SPAN_QUESTION.pattern,
        "span_rule": dates.SPAN_BETWEEN_EVENTS.pattern,
        "wall_s": round(time.perf_counter() - start, 1),
        "provider_calls": calls.provider_calls, "cached_calls": calls.cached,
        "by_dataset": {d: summary([r for r in rows if r["dataset"] == d]) for d in SOURCES},
        "all": summary(rows), "span_questions": summary([r for r in rows if r["span_question"]]),
    }
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    Path(args.rows).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("provider", "wall_s", "provider_calls", "all", "span_questions")},
                     indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
