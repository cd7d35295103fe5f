"""LongMemEval-M-sized haystacks (~500 sessions each): ingest, views build, per-question latency.

Builds (in memory, written to a temp file, never committed) 20 dev50 questions (a seeded sample) whose
haystacks are padded to ``--sessions`` (default 500) sessions with filler sessions sampled (seeded)
from the other dev50 haystacks. A filler is renamed ``m_<id>`` and its ``has_answer`` flags are
dropped (it holds no gold for its new question); a session already in the haystack is never drawn;
the padded haystack is ordered by session date, as LongMemEval's are. The question, its date, its
answer and its own sessions are untouched.

Measures, in a temp copy of ``--db`` (default: the warm dev50 store of ``bench_offline.py``, so the
embedding and NER caches already hold every text: the filler texts are dev50 texts; a cold store
would also pay ~200 turns/s of embedding, see ``bench/out/ingest.json``):

* ingest: parse + write, and the embedding step (cache hits);
* views build per scope (``scope_views``, fresh process state; the entity map is built lazily on an
  arm's first entity search, and timed on its own with ``--entity``);
* first-question latency: the arm's first question on a scope, views build and entity map included;
* warm per-question latency: every question run again ``--repeats`` times on built views; p50 / p90;
* dense: exact numpy search time per query at this size (no approximate index is added unless
  this shows a need).

Writes ``bench/out/msize.json``. Figures under a shared 2-core machine's load are pessimistic.

    .venv/bin/python -m bench.speed.bench_msize
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib import git_commit  # the code this bench measured
from bench.lib.haystacks import padded
from bfr_core.ingest import ingest
from bfr_core.pipeline import run_query
from bfr_core.retrieval.scope import clear_cache, scope_views
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DEV50 = ROOT.parent / "shared" / "data" / "longmemeval_s_dev50.json.gz"
DATASET = "lme_msize"


def pct(values: list[float], q: float) -> float:
    vals = sorted(values)
    return round(vals[min(len(vals) - 1, int(q * len(vals)))], 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "offline.duckdb"))
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arms", default="bfr,mem0,amem")
    ap.add_argument("--entity", action="store_true", help="also build and time each haystack's entity map")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "msize.json"))
    args = ap.parse_args(argv)
    arms = [a for a in args.arms.split(",") if a]
    with gzip.open(DEV50) as fh:
        data = json.load(fh)
    items = padded(data, args.questions, args.sessions, args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="bfr_msize_"))
    try:
        src = tmp / "lme_m.json"
        src.write_text(json.dumps(items), encoding="utf-8")
        db = tmp / "m.duckdb"
        if Path(args.db).exists():
            shutil.copy(args.db, db)  # warm caches (embeddings, NER) by text hash
        store = Store(str(db))
        start = time.perf_counter()
        rep = ingest(store, "longmemeval", src, name=DATASET, embed=False)
        write_s = time.perf_counter() - start
        start = time.perf_counter()
        from bfr_core.ingest import _embed

        _embed(store, DATASET, None)
        embed_s = time.perf_counter() - start
        questions = store.questions(DATASET)
        result: dict[str, Any] = {
            "benchmark": "msize", "source_db": Path(args.db).name,
            "commit": git_commit.commit(), "questions": len(questions), "seed": args.seed,
            "sessions_per_haystack": [len(store.scope(DATASET, q.scope_id).session_ids) for q in questions][:3],
            "unique_turns_written": rep.turns,  # distinct turn rows; a filler session shared by haystacks is one
            "cpu_count": os.cpu_count(), "loadavg_start": [round(x, 2) for x in os.getloadavg()],
            "ingest": {"write_s": round(write_s, 1), "embed_s": round(embed_s, 1),
                       "note": "store copied from the warm dev50 store: embeddings are cache hits by text hash"},
            "arms": {},
        }
        turns_n = []
        views_s, entity_s, dense_ms = [], [], []
        for q in questions:
            clear_cache()
            start = time.perf_counter()
            views = scope_views(store, DATASET, q.scope_id)
            views_s.append(time.perf_counter() - start)
            turns_n.append(len(views.turns))
            if args.entity:
                start = time.perf_counter()
                views.entity.index()
                entity_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(20):
                views.dense.scores(q.text)
            dense_ms.append((time.perf_counter() - start) * 50)
        result["turns_per_haystack"] = {"mean": round(statistics.fmean(turns_n)), "max": max(turns_n)}
        result["views_build_s"] = {"p50": round(statistics.median(views_s), 2), "max": round(max(views_s), 2)}
        if entity_s:
            result["entity_map_s"] = {"p50": round(statistics.median(entity_s), 2), "max": round(max(entity_s), 2)}
        result["dense_exact_ms_per_query_p50"] = round(statistics.median(dense_ms), 2)
        for arm in arms:
            first, warm = [], []
            for q in questions:
                clear_cache()
                start = time.perf_counter()
                views = scope_views(store, DATASET, q.scope_id)
                run_query(views, q.query(), arm, dataset_id=DATASET)
                first.append((time.perf_counter() - start) * 1000)
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    run_query(views, q.query(), arm, dataset_id=DATASET)
                    warm.append((time.perf_counter() - start) * 1000)
            result["arms"][arm] = {"first_question_ms_p50": pct(first, 0.5), "first_question_ms_max": round(max(first)),
                                   "warm_ms_p50": pct(warm, 0.5), "warm_ms_p90": pct(warm, 0.9)}
        bfr = result["arms"].get("bfr")
        result["target_bfr_warm_p50_ms"] = 200
        result["target_met"] = bfr is not None and bfr["warm_ms_p50"] <= 200
        result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
