"""One view query's latency, p50 / p95 per view, on a warm store. Writes bench/out/views.json.

Warm = the dataset's embeddings are cached, every scope's views are built and the entity maps
exist, so a timed call is exactly what an arm pays per retrieval call: ``view.search(cue, 10,
exclude)`` with a 5-turn exclude set (Stage II always excludes the current evidence). Cues: the
question text (bm25, dense, hybrid), the first capitalised word of the question or else the
scope's first speaker (entity), a seeded random turn of the scope (session). Dense query vectors:
ingest caches every question's, and building a scope's views reads them into the process's query
LRU, so ``dense`` (a benchmark question's first search) encodes nothing; ``dense_new_text`` is a
cue no one has searched yet ("about " + the question), which pays one encoding (MiniLM ~10 ms on
this CPU, the static model ~0.1 ms); ``dense_repeat`` is a second search of the same cue. Also
reported: building a scope's views from the store's cache (cold in process) and the entity map's
first build.

Usage::

    .venv/bin/python -m bench.speed.bench_views --db bench/out/bench.duckdb [--per-dataset 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bfr_core.ingest.sources import benchmark_file, data_dir
from bfr_core.retrieval.encoders import default_spec
from bfr_core.retrieval.scope import clear_cache, scope_views
from bfr_core.retrieval.views.dense import clear_query_cache
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATA = data_dir()
FILES = {kind: benchmark_file(kind) for kind in ("locomo", "longmemeval")}
SEED = 20260908
_NAME = re.compile(r"\b([A-Z][a-z]+)\b")
_QWORDS = {"What", "When", "Where", "Who", "Why", "How", "Which", "Did", "Does", "Is", "Are", "Was", "Would", "Can",
           "Could", "Do", "Have", "Has", "I", "In", "On"}


def pct(xs: Sequence[float]) -> dict[str, float]:
    a = np.asarray(xs) * 1000
    return {"p50_ms": round(float(np.percentile(a, 50)), 3), "p95_ms": round(float(np.percentile(a, 95)), 3),
            "max_ms": round(float(a.max()), 3), "n": len(a)}


def entity_cue(question: str, speakers: Sequence[str]) -> str:
    names = [m for m in _NAME.findall(question) if m not in _QWORDS]
    return names[0] if names else (speakers[0] if speakers else "user")


def bench_dataset(store: Store, dataset: str, limit: int, rng: random.Random) -> dict[str, Any]:
    questions = store.questions(dataset, scoreable_only=True)
    questions = sorted(rng.sample(questions, min(limit, len(questions))), key=lambda q: q.question_id)
    build, entity_build = [], []
    clear_cache()
    clear_query_cache()  # every timed cue starts from what the store and the scope build provide
    for scope_id in dict.fromkeys(q.scope_id for q in questions):
        t = time.perf_counter()
        views = scope_views(store, dataset, scope_id)
        build.append(time.perf_counter() - t)
        t = time.perf_counter()
        views.entity.index()
        entity_build.append(time.perf_counter() - t)
    names = ("bm25", "dense", "dense_new_text", "dense_repeat", "hybrid", "entity", "session")
    times: dict[str, list[float]] = {k: [] for k in names}
    for q in questions:
        views = scope_views(store, dataset, q.scope_id)
        exclude = frozenset(t.turn_id for t in views.turns[:5])
        anchor = views.turns[rng.randrange(len(views.turns))].turn_id
        cues = {"bm25": q.text, "dense": q.text, "dense_new_text": f"about {q.text}", "dense_repeat": q.text,
                "hybrid": q.text, "entity": entity_cue(q.text, views.scope.speakers), "session": anchor}
        for name, cue in cues.items():
            view = getattr(views, name.removesuffix("_repeat").removesuffix("_new_text"))
            t = time.perf_counter()
            view.search(cue, 10, exclude)
            times[name].append(time.perf_counter() - t)
    return {"questions": len(questions), "scopes": len(build),
            "scope_turns_mean": round(float(np.mean([len(scope_views(store, dataset, s).turns)
                                                     for s in dict.fromkeys(q.scope_id for q in questions)])), 1),
            "views": {k: pct(v) for k, v in times.items()},
            "scope_views_build": pct(build), "entity_map_first_build": pct(entity_build)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "bench.duckdb"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "views.json"))
    ap.add_argument("--per-dataset", type=int, default=300, help="questions timed per dataset")
    args = ap.parse_args(argv)
    store = Store(args.db)
    from bfr_core.ingest import ingest
    from bfr_core.retrieval.embed import ensure_embeddings

    for kind, path in FILES.items():
        if store.dataset(kind) is None:
            ingest(store, kind, path)
        ensure_embeddings(store, kind)
    rng = random.Random(SEED)
    result: dict[str, Any] = {"dense": default_spec().name, "k": 10, "exclude": 5,
                              "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    # Warm-up pass: entity maps (NER cached in the store) and the model are loaded once.
    for dataset in FILES:
        bench_dataset(store, dataset, 5, random.Random(SEED))
    for dataset in FILES:
        result[dataset] = bench_dataset(store, dataset, args.per_dataset, rng)
        print(dataset, json.dumps(result[dataset]["views"]), flush=True)
    result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    result["target_p50_ms"] = 5
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
