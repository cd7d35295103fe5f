"""Our arm and its baselines on a store, as the benches of our arm run them: the store and its questions,
each scope's views fetched once, runners (question -> evidence, calls, ms) for an arm, the hybrid view,
the plain fusion, the z-fusion and a variant, and the scoring of a runner over questions (Gold Hit, Turn
Hit, CER, recall_all overall and by type) with the paired comparison of per-question hits.

Does not cover: the curve, ablation and latency sections (``bench.quality.bench_ours``), the weight
selection (``bench.lib.selection``).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.lib.byo_common import paired_figures
from bfr_core.config import Budget, Config, RetrievalConfig
from bfr_core.evaluation.metrics import aggregate, score_question
from bfr_core.fusion import rank_fusion
from bfr_core.ingest.sources import benchmark_file
from bfr_core.method import turn_scores
from bfr_core.method.budgets import budget_for
from bfr_core.method.ours import run_variant
from bfr_core.method.variants import Variant, score_variant
from bfr_core.pipeline import ArmContext, run_query
from bfr_core.records import Question
from bfr_core.sentences import search_texts
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out"
SOURCES = {kind: benchmark_file(kind) for kind in ("locomo", "longmemeval")}

# (E0 size b, completion budget) giving each target size; grid names where the grid has the point.
SIZE_PLAN: dict[int, tuple[int, str | Budget]] = {
    5: (5, "C0"), 10: (10, "C0"), 20: (10, Budget(rounds=1, calls=1, new=10, keep=10)),
    30: (10, "C1"), 40: (10, "C6"),
}


def open_store(path: Path) -> Store:
    from bfr_core.ingest import ingest

    path.parent.mkdir(parents=True, exist_ok=True)
    store = Store(str(path))
    for name, src in SOURCES.items():
        if store.dataset(name) is None and src.exists():
            print(f"ingesting {src.name} into {path} ...", file=sys.stderr)
            ingest(store, name, src, entities=False)  # NER: only bfr-mv's entity view needs it, on first use
    return store


def questions(store: Store, dataset: str) -> list[Question]:
    return store.questions(dataset, scoreable_only=True)


class Views:
    """scope_views per scope, fetched once (the LRU in bfr_core.retrieval.scope holds 64 scopes)."""

    def __init__(self, store: Store, dataset: str) -> None:
        self.store, self.dataset = store, dataset
        self._seen: dict = {}

    def __call__(self, scope_id: str, question: str | None = None):
        from bfr_core.retrieval.scope import scope_views

        if scope_id not in self._seen:
            self._seen[scope_id] = scope_views(self.store, self.dataset, scope_id)
        if question is not None:
            # Read the question's vectors cached at ingest back into the query LRU (4,096 entries):
            # Stage I's requirement vectors from 1,536 questions push them out between two runners,
            # and re-encoding every question with MiniLM would dominate this benchmark's time.
            self._seen[scope_id].dense.prime(search_texts([question]), self.store, encode=False)
        return self._seen[scope_id]


Runner = Callable[[Question], tuple[Sequence[str], int, float]]


def arm_runner(views: Views, dataset: str, arm: str, budget: str | Budget | None = None, k: int | None = None,
               ground: int = 10) -> Runner:
    config = Config(retrieval=RetrievalConfig(ground=ground))

    def run(q: Question) -> tuple[Sequence[str], int, float]:
        tr = run_query(views(q.scope_id, q.text), q.query(), arm, dataset_id=dataset, budget=budget, config=config, k=k)
        return tr.evidence, tr.calls, tr.elapsed_ms
    return run


def hybrid_runner(views: Views, k: int) -> Runner:
    """RRF top-k straight from the shared hybrid view (no arm wraps it)."""
    def run(q: Question) -> tuple[Sequence[str], int, float]:
        t0 = time.perf_counter()
        hits = views(q.scope_id, q.text).hybrid.search(q.text, k, ())
        return [h.turn_id for h in hits], 1, (time.perf_counter() - t0) * 1000
    return run


def plain_fusion_runner(views: Views, k: int) -> Runner:
    """Stemmed BM25 + the dense view, RRF top-k: bench_retrieval's ``hybrid-stemmed`` (the issue-16 bar)."""
    def run(q: Question) -> tuple[Sequence[str], int, float]:
        t0 = time.perf_counter()
        v = views(q.scope_id, q.text)
        bm = turn_scores.stemmed_bm25(v).scores(q.text)
        fused = rank_fusion([np.asarray(bm, dtype=np.float64), np.asarray(v.dense.scores(q.text), np.float64)], [1.0, 1.0])
        ids = [v.turns[int(i)].turn_id for i in turn_scores.ranking(fused)[:k]]
        return ids, 1, (time.perf_counter() - t0) * 1000
    return run


# The strongest simple baseline: bfr's own text score alone (z(stemmed BM25) + z(static dense cosine)),
# no priors, no context, no session terms, the remark gate off; top-k of that ranking (bench_ours_selection's START).
ZFUSION = Variant(turn_scores.OursSettings(), dense_view=False)


def zfusion_runner(views: Views, k: int) -> Runner:
    """z-fusion top-k: :data:`ZFUSION`'s ranking cut at k."""
    def run(q: Question) -> tuple[Sequence[str], int, float]:
        t0 = time.perf_counter()
        v = views(q.scope_id, q.text)
        order = turn_scores.ranking(score_variant(v, q.query(), ZFUSION).final)[:k]
        return [v.turns[int(i)].turn_id for i in order], 1, (time.perf_counter() - t0) * 1000
    return run


def variant_runner(views: Views, variant: Variant, budget: str | Budget, ground: int) -> Runner:
    b = budget_for("bfr", budget) if isinstance(budget, str) else budget
    config = Config(retrieval=RetrievalConfig(ground=ground))

    def run(q: Question) -> tuple[Sequence[str], int, float]:
        t0 = time.perf_counter()
        steps = run_variant(ArmContext(views(q.scope_id, q.text), config, b, str(budget)), q.query(), variant)
        return steps[-1].evidence, steps[-1].calls, (time.perf_counter() - t0) * 1000
    return run


def score(qs: Sequence[Question], runner: Runner, *, halves: bool = False, hits: dict | None = None) -> dict:
    """Run over every question; aggregate percentages overall, by type (and by conversation half);
    ``hits`` (when given) receives each question's 0/1 Gold Hit by question id, for :func:`paired`."""
    rows, times = [], []
    scopes = sorted({q.scope_id for q in qs})
    first_half = set(scopes[: len(scopes) // 2])
    for q in qs:
        ev, calls, ms = runner(q)
        s = score_question(list(ev), q.gold).as_dict()
        if hits is not None:
            hits[q.question_id] = bool(s["gold_hit"])
        s.update(calls=calls, qtype=q.qtype, half="A" if q.scope_id in first_half else "B")
        rows.append(s)
        times.append(ms)
    agg = aggregate(rows, by="qtype", means=("set_size", "calls"))
    out = {k: rounded(v) for k, v in agg["overall"].items() if k in ("gold_hit", "turn_hit", "er", "cer", "recall_all",
                                                              "set_size", "calls", "n")}
    out["by_type"] = {t: {m: rounded(v[m]) for m in ("n", "gold_hit", "turn_hit", "cer", "recall_all")}
                      for t, v in agg["by"].items()}
    if halves:
        h = aggregate(rows, by="half")["by"]
        out["by_conversation_half"] = {
            f"{k} ({', '.join(scopes[:len(scopes) // 2] if k == 'A' else scopes[len(scopes) // 2:])})":
                {m: rounded(h[k][m]) for m in ("n", "gold_hit", "cer")} for k in ("A", "B") if k in h}
    out["ms_p50"] = rounded(statistics.median(times)) if times else None
    return out


def rounded(x: object) -> object:
    return round(x, 2) if isinstance(x, float) else x


PAIRED = "paired (bfr against each top-k ranking, gold hit, exact McNemar)"  # curve()'s key; bench/lib/ours_readme.py reads it


def paired(hits: dict[str, dict[str, bool]], system: str = "bfr") -> dict[str, dict]:
    """``system`` against every other ranking with per-question hits, on the same questions
    (``byo_common.paired_figures``)."""
    return {name: paired_figures(hits[system], theirs, system) for name, theirs in hits.items()
            if name != system and theirs and hits.get(system)}
