"""Embedding variants: throughput and retrieval quality; the speed targets. Writes bench/out/embed.json.

Variants (``bfr_core.retrieval.encoders.MODEL_IDS``): full MiniLM (``minilm-l6-v2@256``, the reference),
MiniLM capped at 128 tokens, the same with int8 dynamic quantisation, the static model distilled
from MiniLM (``m2v-minilm-l6-v2@256d``), and the default dense ranking ``encoders.DenseSpec()``: the
static model on every text plus MiniLM on the texts that fit ``encoders.SHORT_CAP`` (160) tokens,
merged by per-group z-scores (``views/dense.py``).

* throughput: a seeded random sample of LongMemEval dev50's unique turn texts (its length mix:
  ~half user turns of ~250 chars, half assistant turns of ~1,700), encoded from scratch; wall and
  CPU seconds, extrapolated to dev50 (its unique texts) and to full LongMemEval-S (7x dev50's unique
  texts). The static model is also timed on all of dev50 directly. The machine is shared, so wall
  time is inflated by other processes: CPU seconds and the load average are recorded beside it.
* quality: dense top-10/top-40 Gold Hit on LoCoMo's scoreable questions, and Turn Hit (recall_any)
  / recall_all @10/@40 on dev50's questions with gold turns, each with its delta to the reference.
  Vectors come from the store's embedding cache (computed on first run; slow for the transformer
  variants on dev50, so those run on ``--lme-scopes`` questions unless ``--lme-all``).
* targets: LoCoMo ingest with embeddings cold / warm, dev50 cold ingest with its dense index, warm
  open of dev50, one LongMemEval haystack ready cold — each in a fresh subprocess on a fresh store.

Usage::

    .venv/bin/python -m bench.speed.bench_embed --db bench/out/bench.duckdb [--sample 400] [--lme-scopes 12]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bfr_core.fusion import rank_order, zscore
from bfr_core.ingest.sources import benchmark_file, data_dir
from bfr_core.records import Question
from bfr_core.retrieval.embed import vectors_for_texts
from bfr_core.retrieval.encoders import DEFAULT_MODEL_ID, MODEL_IDS, DenseSpec, get_model
from bfr_core.retrieval.views.common import index_text
from bfr_core.retrieval.views.dense import Z_EPS, DenseView
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATA = data_dir()
FILES = {kind: benchmark_file(kind) for kind in ("locomo", "longmemeval")}
REFERENCE = "minilm-l6-v2@256"
HAYSTACKS = 5  # LongMemEval haystacks opened cold for the "one haystack ready" target
SPLIT = DenseSpec().name  # the default dense ranking: static base + MiniLM on short texts
SEED = 20260908
FULL_S_FACTOR = 7  # full LongMemEval-S has ~7x dev50's unique turn texts (~175k)


def ensure_data(store: Store) -> None:
    """Ingest both benchmarks without embeddings when the store lacks them."""
    from bfr_core.ingest import ingest

    for kind, path in FILES.items():
        if store.dataset(kind) is None:
            ingest(store, kind, path, embed=False)


def cpu_wall(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    w, c = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - w, time.process_time() - c, value


def unique_texts(store: Store, dataset: str) -> list[str]:
    texts = {index_text(t) for s in store.scopes(dataset) for t in store.scope_turns(dataset, s.scope_id)}
    return sorted(texts)


def throughput(model_id: str, sample: Sequence[str], n_dev50: int) -> dict[str, Any]:
    spec = DenseSpec()
    ids = [spec.base, spec.short] if model_id == SPLIT else [model_id]
    models = [get_model(m) for m in ids]
    load_s, _, _ = cpu_wall(lambda: [m.encode(["warm up"]) for m in models])  # weights / static table
    load_before = os.getloadavg()[0]
    wall, cpu, _ = cpu_wall(lambda: [m.encode(list(sample)) for m in models])
    threads = 1 if model_id == DEFAULT_MODEL_ID else 2  # torch uses both cores; the static model one
    per_wall = len(sample) / wall
    # On an otherwise idle 2-core machine wall ~ CPU / threads (perfect scaling: optimistic for torch).
    per_idle = len(sample) / (cpu / threads)
    return {
        "model_id": model_id, "sample": len(sample), "load_s": round(load_s, 2),
        "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "texts_per_s_wall": round(per_wall, 1),
        "texts_per_s_idle_estimate": round(per_idle, 1), "loadavg_1m": round(load_before, 2),
        "dev50_unique_texts": n_dev50,
        "dev50_min_wall": round(n_dev50 / per_wall / 60, 1),
        "dev50_min_idle_estimate": round(n_dev50 / per_idle / 60, 1),
        "full_s_min_idle_estimate": round(FULL_S_FACTOR * n_dev50 / per_idle / 60, 1),
    }


def ranked(scores: np.ndarray, ids: Sequence[str]) -> list[str]:
    order = rank_order(scores)
    return [ids[i] for i in order]


def dense_quality(store: Store, dataset: str, model_id: str, questions: Sequence[Question]) -> dict[str, Any]:
    """Gold Hit / Turn Hit (any) and recall_all at 10 and 40 for dense retrieval with ``model_id``."""
    spec = DenseSpec()
    model = get_model(spec.base if model_id == SPLIT else model_id)
    short = get_model(spec.short) if model_id == SPLIT and spec.short else None
    hit = {10: 0, 40: 0}
    rall = {10: 0, 40: 0}
    by_scope: dict[str, list[Question]] = {}
    for q in questions:
        by_scope.setdefault(q.scope_id, []).append(q)
    for scope_id, qs in by_scope.items():
        turns = store.scope_turns(dataset, scope_id)
        ids = [t.turn_id for t in turns]
        texts = [index_text(t) for t in turns]
        view = DenseView(turns, vectors_for_texts(store, model, texts), model,
                         vectors_for_texts(store, short, texts) if short else None, short)
        for q in qs:
            order = ranked(view.scores(q.text), ids)
            gold = set(q.gold)
            for k in hit:
                top = set(order[:k])
                hit[k] += bool(gold & top)
                rall[k] += gold <= top
    n = len(questions)
    return {"n": n, **{f"hit@{k}": round(100 * v / n, 1) for k, v in hit.items()},
            **{f"recall_all@{k}": round(100 * v / n, 1) for k, v in rall.items()}}


def split_quality(store: Store, dataset: str, questions: Sequence[Question], max_short: int) -> dict[str, Any]:
    """What a length-split model would score: MiniLM for texts of <= ``max_short`` tokens, the static
    model for longer ones, each group's cosines z-scored per query before merging.

    Computed from cached vectors, so nothing is encoded: a text within the token cap gets exactly the
    reference's vector from MiniLM@max_short. Also reports the MiniLM tokens such a model would pay.
    """
    from tokenizers import Tokenizer

    from bfr_core.retrieval.encoders import _minilm_path

    tok = Tokenizer.from_file(str(_minilm_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    ref, static = get_model(REFERENCE), get_model(DEFAULT_MODEL_ID)
    hit = {10: 0, 40: 0}
    rall = {10: 0, 40: 0}
    short_tokens: dict[str, int] = {}
    by_scope: dict[str, list[Question]] = {}
    for q in questions:
        by_scope.setdefault(q.scope_id, []).append(q)

    def group_z(x: np.ndarray, m: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[m] = zscore(x[m], eps=Z_EPS)  # the dense view's merge of two models' cosines
        return out

    for scope_id, qs in by_scope.items():
        turns = store.scope_turns(dataset, scope_id)
        ids = [t.turn_id for t in turns]
        texts = [index_text(t) for t in turns]
        lens = np.array([len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=True)])
        short = lens <= max_short
        short_tokens.update({t: int(n) for t, n, s in zip(texts, lens, short, strict=True) if s})
        rv, sv = vectors_for_texts(store, ref, texts), vectors_for_texts(store, static, texts)
        for q in qs:
            merged = np.where(short, group_z(rv @ ref.encode([q.text])[0], short),
                              group_z(sv @ static.encode([q.text])[0], ~short))
            order = ranked(merged, ids)
            gold = set(q.gold)
            for k in hit:
                top = set(order[:k])
                hit[k] += bool(gold & top)
                rall[k] += gold <= top
    n = len(questions)
    return {"n": n, "max_short_tokens": max_short, "minilm_texts": len(short_tokens),
            "minilm_tokens": int(sum(short_tokens.values())),
            **{f"hit@{k}": round(100 * v / n, 1) for k, v in hit.items()},
            **{f"recall_all@{k}": round(100 * v / n, 1) for k, v in rall.items()}}


def with_deltas(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    ref = rows.get(REFERENCE)
    if not ref:
        return rows
    for row in rows.values():
        row["delta_vs_reference"] = {k: round(row[k] - ref[k], 1) for k in row if "@" in k}
    return rows


def run_py(code: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter (cold imports, cold caches); it prints one JSON line."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = round(time.perf_counter() - start, 2)
    return result


INGEST = """
import json, time, resource
t = time.perf_counter()
from bfr_core.ingest import ingest
from bfr_core.store import Store
s = Store({db!r})
r = ingest(s, {kind!r}, {path!r}, replace={replace}, embed=True)
from bfr_core.retrieval.embed import cached_count
print(json.dumps({{"ingest_s": round(time.perf_counter() - t, 2), "turns": r.turns,
    "cached_vectors": cached_count(s), "cpu_s": round(resource.getrusage(resource.RUSAGE_SELF).ru_utime
    + resource.getrusage(resource.RUSAGE_SELF).ru_stime, 2)}}))
"""
OPEN = """
import json, time
t = time.perf_counter()
from bfr_core.store import Store
from bfr_core.retrieval.embed import ensure_embeddings
from bfr_core.retrieval.scope import scope_views
s = Store({db!r})
n = ensure_embeddings(s, {kind!r})
scope = s.questions({kind!r})[0].scope_id
v = scope_views(s, {kind!r}, scope)
hits = v.dense.search(s.questions({kind!r})[0].text, 10)
print(json.dumps({{"open_s": round(time.perf_counter() - t, 2), "encoded": n, "scope_turns": len(v.turns)}}))
"""
ONE_SCOPE = """
import json, time
from bfr_core.store import Store
s = Store({db!r})
q = s.questions("longmemeval")[{qi}]
t = time.perf_counter()
from bfr_core.retrieval.scope import scope_views
v = scope_views(s, "longmemeval", q.scope_id)
hits = v.dense.search(q.text, 10)
ready = time.perf_counter() - t
ents = v.entity.search("Paris", 10)
print(json.dumps({{"question": q.question_id, "ready_s": round(ready, 2),
                   "with_entity_map_s": round(time.perf_counter() - t, 2), "scope_turns": len(v.turns)}}))
"""


def targets(workdir: Path) -> dict[str, Any]:
    """Each target in a fresh process on a fresh store (the static table is cached per machine)."""
    loc, lme = str(FILES["locomo"]), str(FILES["longmemeval"])
    out: dict[str, Any] = {}
    db = str(workdir / "locomo.duckdb")
    out["locomo_ingest_cold"] = run_py(INGEST.format(db=db, kind="locomo", path=loc, replace=False))
    out["locomo_ingest_warm"] = run_py(INGEST.format(db=db, kind="locomo", path=loc, replace=True))
    db = str(workdir / "lme.duckdb")
    out["dev50_ingest_cold"] = run_py(INGEST.format(db=db, kind="longmemeval", path=lme, replace=False))
    out["dev50_open_warm"] = run_py(OPEN.format(db=db, kind="longmemeval"))
    db = str(workdir / "lme_noembed.duckdb")
    from bfr_core.ingest import ingest

    s = Store(db)
    ingest(s, "longmemeval", lme, embed=False)
    s.close()
    # five haystacks (seeded), each opened cold in a new process: dense vectors and the entity map
    # (spaCy NER) are computed for that haystack alone
    picks = random.Random(SEED).sample(range(50), HAYSTACKS)
    runs = [run_py(ONE_SCOPE.format(db=db, qi=qi)) for qi in picks]
    with_map = sorted(r["with_entity_map_s"] for r in runs)
    out["one_haystack_cold"] = {"runs": runs, "ready_p50_s": statistics.median(r["ready_s"] for r in runs),
                                "with_entity_map_p50_s": statistics.median(with_map),
                                "with_entity_map_max_s": with_map[-1]}
    out["target"] = {"locomo_cold_s": 60, "locomo_warm_s": 5, "dev50_cold_s": 180, "dev50_warm_open_s": 10,
                     "one_haystack_cold_s": 30, "full_s_min": 20}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "bench.duckdb"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "embed.json"))
    ap.add_argument("--variants", default=",".join((*(m for m in MODEL_IDS if not m.endswith("-short")), SPLIT)))
    ap.add_argument("--sample", type=int, default=400, help="dev50 texts timed per variant")
    ap.add_argument("--lme-scopes", type=int, default=12,
                    help="dev50 questions scored for transformer variants other than the reference")
    ap.add_argument("--lme-all", action="store_true", help="score every variant on all dev50 questions")
    ap.add_argument("--skip-targets", action="store_true")
    args = ap.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]

    store = Store(args.db)
    ensure_data(store)
    lme_texts = unique_texts(store, "longmemeval")
    sample = random.Random(SEED).sample(lme_texts, min(args.sample, len(lme_texts)))
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "loadavg_start": [round(x, 2) for x in os.getloadavg()]},
        "default_dense": SPLIT, "base_model": DEFAULT_MODEL_ID, "reference": REFERENCE,
        "dev50_unique_texts": len(lme_texts),
        "sample_mean_chars": round(float(np.mean([len(t) for t in sample])), 1),
        "dev50_mean_chars": round(float(np.mean([len(t) for t in lme_texts])), 1),
    }

    result["throughput"] = {v: throughput(v, sample, len(lme_texts)) for v in variants}
    for v in (DEFAULT_MODEL_ID, SPLIT):  # cheap enough to time on all of dev50
        if v in variants:
            spec = DenseSpec()
            models = [get_model(m) for m in ((spec.base, spec.short) if v == SPLIT else (v,))]
            wall, cpu, _ = cpu_wall(lambda ms=models: [m.encode(lme_texts) for m in ms])
            result["throughput"][v]["dev50_all_texts"] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
    print(json.dumps(result["throughput"], indent=1), flush=True)

    locomo_qs = store.questions("locomo", scoreable_only=True)
    lme_qs = [q for q in store.questions("longmemeval") if q.gold]
    subset = sorted(random.Random(SEED).sample(lme_qs, min(args.lme_scopes, len(lme_qs))), key=lambda q: q.question_id)
    quality: dict[str, Any] = {"locomo": {}, "dev50": {}, "dev50_subset": {}}
    for v in variants:
        quality["locomo"][v] = dense_quality(store, "locomo", v, locomo_qs)
        if v in (REFERENCE, SPLIT) or v.startswith("m2v-") or args.lme_all:
            quality["dev50"][v] = dense_quality(store, "longmemeval", v, lme_qs)
        quality["dev50_subset"][v] = dense_quality(store, "longmemeval", v, subset)
        print(v, quality["locomo"][v], quality["dev50"].get(v), quality["dev50_subset"][v], flush=True)
    quality["dev50_subset_questions"] = [q.question_id for q in subset]
    if REFERENCE in variants and DEFAULT_MODEL_ID in variants:
        for cap in (64, 128, 160, 192, 256):
            name = f"split-minilm@{cap}+static (simulated)"
            quality["dev50"][name] = split_quality(store, "longmemeval", lme_qs, cap)
            quality["locomo"][name] = split_quality(store, "locomo", locomo_qs, cap)
            print(name, quality["dev50"][name], quality["locomo"][name], flush=True)
    result["quality"] = {k: with_deltas(v) if isinstance(v, dict) else v for k, v in quality.items()}

    if not args.skip_targets:
        with tempfile.TemporaryDirectory() as tmp:
            result["targets"] = targets(Path(tmp))
        print(json.dumps(result["targets"], indent=1), flush=True)
    result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
