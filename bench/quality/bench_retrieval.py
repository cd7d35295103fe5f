"""Retrieval quality of the one-shot views: BM25, dense, hybrid. Writes bench/out/retrieval.json.

LoCoMo: Gold Hit, ER, CER at top-10 and top-40 over the 1,536 scoreable questions (categories 1-4
with usable gold ids), next to the sanity anchors measured by a plain script (BM25 62.8 / 75.3
with a stop list, 56.6 / 72.8 without; MiniLM dense 49.8 / 71.7). LongMemEval dev50: Turn Hit over
all questions (unannotated count as misses) and recall_all over questions with gold turns.

BM25 ablations explain the anchors: without the speaker prefix, without the stop list, with Porter
stemming. Dense rows cover the default embedder and, when its vectors are cached in the store
(bench_embed.py computes them), the full-MiniLM reference.

Usage::

    .venv/bin/python -m bench.quality.bench_retrieval --db bench/out/bench.duckdb
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bfr_core.evaluation.metrics import aggregate, score_question
from bfr_core.fusion import rank_order, rrf
from bfr_core.ingest.sources import benchmark_file, data_dir
from bfr_core.records import Question
from bfr_core.retrieval.embed import cached_count
from bfr_core.retrieval.encoders import default_spec
from bfr_core.retrieval.scope import scope_views
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATA = data_dir()
FILES = {kind: benchmark_file(kind) for kind in ("locomo", "longmemeval")}
ANCHORS = {"bm25": (62.8, 75.3), "bm25-nostop": (56.6, 72.8), "dense-minilm": (49.8, 71.7)}
REFERENCE = "minilm-l6-v2@256"
KS = (10, 40)

Scorer = Callable[[str], np.ndarray]  # cue -> scores aligned with the scope's turns


def methods(views: Any, reference: Any | None) -> dict[str, Scorer]:
    turns = views.turns
    out: dict[str, Scorer] = {
        "bm25": views.bm25.scores,
        "dense": views.dense.scores,
        "hybrid": views.hybrid.scores,
        "bm25-nospeaker": BM25View(turns, with_speaker=False).scores,
        "bm25-nostop": BM25View(turns, stop=False).scores,
        "bm25-stemmed": BM25View(turns, stemmed=True).scores,
    }
    stemmed = out["bm25-stemmed"]
    out["hybrid-stemmed"] = lambda cue: rrf([stemmed(cue), views.dense.scores(cue)])
    if reference is not None:
        out["dense-minilm"] = reference.dense.scores
        out["hybrid-minilm"] = reference.hybrid.scores
    return out


def ranked(scores: np.ndarray, ids: Sequence[str], k: int) -> list[str]:
    order = rank_order(scores)[:k]
    return [ids[i] for i in order]


def evaluate(store: Store, dataset: str, questions: Sequence[Question], with_reference: bool) -> dict[str, Any]:
    rows: dict[str, dict[int, list[dict[str, Any]]]] = {}
    by_scope: dict[str, list[Question]] = {}
    for q in questions:
        by_scope.setdefault(q.scope_id, []).append(q)
    start = time.perf_counter()
    for scope_id, qs in by_scope.items():
        views = scope_views(store, dataset, scope_id)
        ref = scope_views(store, dataset, scope_id, model_id=REFERENCE) if with_reference else None
        ids = [t.turn_id for t in views.turns]
        for name, scorer in methods(views, ref).items():
            for q in qs:
                top = ranked(scorer(q.text), ids, max(KS))
                for k in KS:
                    row = score_question(top[:k], q.gold).as_dict()
                    row["qtype"] = q.qtype
                    rows.setdefault(name, {}).setdefault(k, []).append(row)
    out: dict[str, Any] = {"n_questions": len(questions), "seconds": round(time.perf_counter() - start, 1)}
    for name, per_k in rows.items():
        out[name] = {}
        for k, rs in per_k.items():
            agg = aggregate(rs, by="qtype")
            keep = ("gold_hit", "turn_hit", "er", "cer", "recall_all")
            out[name][f"top{k}"] = {m: round(agg["overall"][m], 1) for m in keep if agg["overall"][m] is not None}
            out[name][f"top{k}"]["by_type"] = {
                t: {m: round(s[m], 1) for m in ("gold_hit", "turn_hit", "recall_all") if s[m] is not None}
                for t, s in agg["by"].items()}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "bench.duckdb"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "retrieval.json"))
    args = ap.parse_args(argv)
    store = Store(args.db)
    from bfr_core.ingest import ingest

    for kind, path in FILES.items():
        if store.dataset(kind) is None:
            ingest(store, kind, path)
    result: dict[str, Any] = {"default_dense": default_spec().name, "reference_model": REFERENCE, "anchors": ANCHORS}
    for dataset in FILES:
        # The reference rows need the full-MiniLM vectors already cached (bench_embed.py): encoding
        # dev50 with it here would take most of an hour.
        have_ref = cached_count(store, REFERENCE) > 0 and _all_cached(store, dataset)
        questions = store.questions(dataset, scoreable_only=True)
        result[dataset] = evaluate(store, dataset, questions, have_ref)
        print(dataset, json.dumps({m: {k: v for k, v in r.items() if k != "by_type"} if isinstance(r, dict) else r
                                   for m, r in result[dataset].items()}, default=str)[:2000], flush=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _all_cached(store: Store, dataset: str) -> bool:
    from bfr_core.retrieval.embed import EMBEDDINGS_DDL, Q_MISSING

    store.ensure(EMBEDDINGS_DDL)
    return not store.cursor().execute(Q_MISSING, [dataset, REFERENCE]).fetchall()


if __name__ == "__main__":
    raise SystemExit(main())
