"""Benchmark of the paper's method and its same-store comparison arms, through the real pipeline.

Writes ``bench/out/method.json`` with

* LoCoMo (all scoreable questions, 1,536): Gold Hit, ER, CER, mean realized calls and set size, and
  p50 / p90 latency per question on a warm store, for mem0, amem, com, mragent-flat, fca-ms (C0),
  bfr-text (C3) and bfr-mv (C6), plus Gold Hit by question type;
* the budget grid C0..C9 for bfr-text and bfr-mv (``bfr_core.evaluation.sweep``): realized calls and set size
  beside the paper's Table 16, and Gold Hit / ER / CER at every point;
* LongMemEval dev50: Turn Hit (over all 50 questions, unannotated ones counting as misses, as in the
  paper) and recall_all (over questions with gold turns) per arm, and the b3c15d39 check;
* the brief's targets with pass/fail.

"Warm store" = the scope's views are built (entity index and Stage I term caches included) before
timing; the question-vector LRU is cleared before each arm so every arm pays for encoding its
question.

Run: ``.venv/bin/python -m bench.quality.bench_method [--db X] [--limit N] [--skip-grid] [--skip-lme] [--arms A,B]
[--out FILE]``; ``PYTHONPATH=DIR:. .venv/bin/python -P -m bench.quality.bench_method`` measures the bfr_core
of another checkout DIR (a before / after pair of
one arm: ``--arms mragent-flat --skip-grid --skip-lme --out ...``, targets then only for the arms run).
Does not cover: answer-level scores (F1, Judge, LLM-Suff@Set) - they need an LLM (``bfr eval``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bfr_core
from bfr_core.evaluation import metrics
from bfr_core.ingest.sources import benchmark_file, data_dir
from bfr_core.method.budgets import PAPER_TABLE16
from bfr_core.pipeline import run_query
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

OUT = ROOT / "bench" / "out"
DATA = data_dir()
SOURCES = {kind: benchmark_file(kind) for kind in ("locomo", "longmemeval")}
ARMS = ("mem0", "amem", "com", "mragent-flat", "fca-ms", "bfr-text", "bfr-mv")
SHUTTER = ("b3c15d39", "answer_05d808e6_1_11", "answer_05d808e6_2_1")
# Paper values for reference: Table 19 (n=1536) and Tables 4 / 11 (LoCoMo pilot, n=200); LME Turn Hit
# from Table 4 (n=500).
PAPER = {
    "locomo_gold_hit_1536": {"fca-ms": 54.8, "bfr-text": 78.0, "bfr-mv": 78.1},
    "locomo_gold_hit_pilot200": {"mem0": 57.0, "amem": 50.0, "com": 49.0, "mragent-flat": 62.5, "fca-ms": 51.0,
                                 "bfr-text": 72.5, "bfr-mv": 73.5},
    "locomo_calls_size_pilot200": {"com": [1.00, 10.0], "mragent-flat": [2.54, 11.8], "fca-ms": [0.0, 10.0],
                                   "bfr-text": [3.00, 34.00], "bfr-mv": [5.99, 39.88]},
    "lme_turn_hit_500": {"mem0": 64.8, "amem": 82.2, "com": 80.6, "mragent-flat": 78.8, "fca-ms": 85.0,
                         "bfr-text": 88.6, "bfr-mv": 91.4},
}


def open_store(path: Path, kinds: Sequence[str] = tuple(SOURCES)) -> Store:
    """The bench's own store (built on first use); read-write so NER and embeddings get cached."""
    store = Store(path)
    for kind in kinds:
        src = SOURCES[kind]
        if src.exists() and store.dataset(kind) is None:
            from bfr_core.ingest import ingest

            ingest(store, kind, src)
    return store


def warm(store: Store, dataset: str, scope_ids: Sequence[str]) -> None:
    """Build each scope's views, entity index and Stage I term caches before anything is timed."""
    from bfr_core.method.stage1 import idf
    from bfr_core.retrieval.scope import scope_views

    for sid in dict.fromkeys(scope_ids):
        views = scope_views(store, dataset, sid)
        views.entity.index()
        idf(views)


def run_arms(store: Store, dataset: str, limit: int | None,
             arms: Sequence[str] = ARMS) -> tuple[dict[str, Any], dict[str, list]]:
    from bfr_core.retrieval.scope import scope_views
    from bfr_core.retrieval.views import dense

    qs = store.questions(dataset, scoreable_only=True)[:limit]
    warm(store, dataset, [q.scope_id for q in qs])
    out: dict[str, Any] = {}
    per_q: dict[str, list] = {}
    for arm in arms:
        dense.clear_query_cache()
        rows, lat = [], []
        for q in qs:
            views = scope_views(store, dataset, q.scope_id)
            t0 = time.perf_counter()
            tr = run_query(views, q.query(), arm, dataset_id=dataset)
            lat.append((time.perf_counter() - t0) * 1000)
            ev = tr.evidence
            rows.append({"qtype": q.qtype, "gold_hit": metrics.gold_hit(ev, q.gold),
                         "er": metrics.evidence_recall(ev, q.gold), "cer": metrics.complete_evidence_recall(ev, q.gold),
                         "recall_all": metrics.complete_evidence_recall(ev, q.gold),
                         "turn_hit": 1.0 if metrics.gold_hit(ev, q.gold) else 0.0,
                         "calls": tr.calls, "size": len(ev), "qid": q.question_id, "evidence": ev})
        per_q[arm] = rows
        out[arm] = summarise(rows, lat, tr.budget)
        print(f"{dataset:12} {arm:13} {json.dumps({k: v for k, v in out[arm].items() if k != 'by_type'})}",
              flush=True)
    return out, per_q


def pct(rows: Sequence[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r[key] is not None]
    return round(100 * sum(vals) / len(vals), 2) if vals else None


def summarise(rows: Sequence[dict], lat: Sequence[float], budget: str) -> dict[str, Any]:
    types = sorted({r["qtype"] for r in rows})
    return {
        "budget": budget, "n": len(rows), "gold_hit": pct(rows, "gold_hit"), "er": pct(rows, "er"),
        "cer": pct(rows, "cer"), "turn_hit": pct(rows, "turn_hit"), "recall_all": pct(rows, "recall_all"),
        "mean_calls": round(sum(r["calls"] for r in rows) / len(rows), 3),
        "mean_size": round(sum(r["size"] for r in rows) / len(rows), 3),
        "p50_ms": round(statistics.median(lat), 2), "p90_ms": round(statistics.quantiles(lat, n=10)[-1], 2),
        "by_type": {t: pct([r for r in rows if r["qtype"] == t], "gold_hit") for t in types},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(OUT / "cache" / "method.duckdb"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--skip-grid", action="store_true")
    ap.add_argument("--skip-lme", action="store_true")
    ap.add_argument("--arms", default=",".join(ARMS), help="comma-separated arms (default: all seven)")
    ap.add_argument("--out", default=str(OUT / "method.json"))
    args = ap.parse_args()
    arms = tuple(a for a in args.arms.split(",") if a)
    t_start = time.time()
    store = open_store(Path(args.db), ("locomo",) if args.skip_lme else tuple(SOURCES))
    result: dict[str, Any] = {"machine": {"python": platform.python_version(), "platform": platform.platform()},
                              "src": str(Path(bfr_core.__file__).resolve().parents[1]), "arms": arms,
                              "loadavg_start": list(os.getloadavg()), "paper": PAPER}
    loc, _ = run_arms(store, "locomo", args.limit, arms)
    result["locomo"] = loc
    if not args.skip_grid:
        from bfr_core.evaluation.sweep import sweep

        grid = sweep(store, "locomo", limit=args.limit)
        result["grid"] = [{k: p[k] for k in ("arm", "budget", "budget_def", "calls", "paper_calls", "size",
                                             "paper_size", "gold_hit", "er", "cer")} for p in grid["points"]]
        for p in result["grid"]:
            print(f"grid {p['arm']:9} {p['budget']} calls {p['calls']} ({p['paper_calls']}) size {p['size']} "
                  f"({p['paper_size']}) GH {p['gold_hit']}", flush=True)
    if not args.skip_lme and store.dataset("longmemeval"):
        lme, per_q = run_arms(store, "longmemeval", None, arms)
        result["longmemeval_dev50"] = {a: {k: v[k] for k in ("n", "turn_hit", "recall_all", "mean_calls",
                                                              "mean_size", "p50_ms")} for a, v in lme.items()}
        qid, order, arrival = SHUTTER
        result["b3c15d39"] = {
            arm: {"order": order in r["evidence"], "arrival": arrival in r["evidence"]}
            for arm, rows in per_q.items() for r in rows if r["qid"] == qid}
    if set(ARMS) <= set(arms):
        result["targets"] = targets(result)
    result["elapsed_s"] = round(time.time() - t_start, 1)
    result["loadavg_end"] = list(os.getloadavg())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result.get("targets"), indent=2))
    return 0


def targets(r: dict[str, Any]) -> dict[str, Any]:
    loc = r["locomo"]
    out: dict[str, Any] = {
        "fca-ms gold_hit >= 55": [loc["fca-ms"]["gold_hit"], loc["fca-ms"]["gold_hit"] >= 55],
        "bfr-text C3 gold_hit >= 76": [loc["bfr-text"]["gold_hit"], loc["bfr-text"]["gold_hit"] >= 76],
        "bfr-mv C6 gold_hit >= 78": [loc["bfr-mv"]["gold_hit"], loc["bfr-mv"]["gold_hit"] >= 78],
        "bfr-mv p50 <= 30 ms": [loc["bfr-mv"]["p50_ms"], loc["bfr-mv"]["p50_ms"] <= 30],
    }
    for arm, paper in (("bfr-text", PAPER_TABLE16["bfr-text"]["C3"]), ("bfr-mv", PAPER_TABLE16["bfr-mv"]["C6"])):
        calls, size = loc[arm]["mean_calls"], loc[arm]["mean_size"]
        ok = abs(calls - paper[0]) <= 0.1 * paper[0] and abs(size - paper[1]) <= 0.1 * paper[1]
        out[f"{arm} calls/size within 10% of Table 16"] = [[calls, size], list(paper), ok]
    if "b3c15d39" in r:
        b = r["b3c15d39"]
        out["b3c15d39: bfr-mv has order and arrival"] = b.get("bfr-mv", {}).get("order") and \
            b.get("bfr-mv", {}).get("arrival")
        out["b3c15d39: mem0 and amem miss the arrival"] = not b.get("mem0", {}).get("arrival") and \
            not b.get("amem", {}).get("arrival")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
