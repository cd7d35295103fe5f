"""What bench_beam.py and bench_locomo_plus.py share: every arm, and four reference rankings, on a set of
questions at several evidence-set sizes, with Turn Hit and recall_all per question, then grouped.

Each arm runs through ``pipeline.run_query`` (what ``bfr eval`` runs, offline rules, no LLM) once per k
with ``k`` as its top-k, and its evidence is cut to its first k turns, so every arm is compared at
k turns at most (the mean set size is reported beside). The reference rows rank the scope's turns
by BM25, dense (the default embedder), RRF (the hybrid view) and z-fusion (BM25 and dense scores
each z-normalised over the scope, then summed) and take the top k. recall_all is CER (every gold
turn in the set), over the questions with gold; Turn Hit is over all questions run.

``cached_ner_only`` (BEAM on a busy 2-core machine: spaCy takes about 2 s per long assistant message,
hours per tier) gives the entity view only the NER spans already cached in the store and none for
other texts, so its names come from the capitalised-word fallback and the speakers; the JSON says so.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bfr_core.evaluation.metrics import score_question
from bfr_core.evaluation.stats import mcnemar_by_key
from bfr_core.fusion import rank_order, z_fusion
from bfr_core.pipeline import ARMS, run_query
from bfr_core.records import Question
from bfr_core.retrieval.scope import scope_views
from bfr_core.retrieval.views.entity import known_entities
from bfr_core.store import Store

REFERENCES = ("bm25", "dense", "rrf", "z-fusion")
PAIRED = "paired (bfr against each reference, turn hit, exact McNemar)"  # the JSON key of :func:`paired`


def reference_scores(views: Any, text: str) -> dict[str, np.ndarray]:
    bm25, dense = views.bm25.scores(text), views.dense.scores(text)
    return {"bm25": bm25, "dense": dense, "rrf": views.hybrid.scores(text), "z-fusion": z_fusion((bm25, dense), (1.0, 1.0), len(bm25))}


def run_rows(store: Store, dataset_id: str, questions: Sequence[Question], arms: Sequence[str], ks: Sequence[int],
             group: Callable[[Question], dict[str, str]], log: Callable[[str], None] = print,
             cached_ner_only: bool = False, llm: Any = None) -> list[dict[str, Any]]:
    """One row per (question, system, k): turn_hit, recall_all, set_size, ms and the question's groups
    (``llm``: the arms' model, as ``bfr eval --provider`` gives it; None = offline rules)."""
    by_scope: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_scope[q.scope_id].append(q)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for n, (scope_id, qs) in enumerate(sorted(by_scope.items())):
        views = scope_views(store, dataset_id, scope_id)
        views.dense.prime([q.text for q in qs], store)
        if cached_ner_only:
            views.entity._ner = cached_only(store)
        for q in qs:
            base = {"question_id": q.question_id, **group(q)}
            for arm in arms:
                for k in ks:
                    start = time.perf_counter()
                    try:
                        ev, status = list(run_query(views, q.query(), arm, dataset_id=dataset_id, k=k, llm=llm).evidence)[:k], "ok"
                    except Exception as exc:  # noqa: BLE001 - one arm's failure on one question is a row, not the end
                        ev, status = [], f"{type(exc).__name__}: {exc}"[:200]
                    rows.append(result_row(base, arm, k, ev, q, (time.perf_counter() - start) * 1000, status))
            scores = reference_scores(views, q.text)
            for name in REFERENCES:
                order = rank_order(scores[name])
                for k in ks:
                    ev = [views.turns[int(i)].turn_id for i in order[:k]]
                    rows.append(result_row(base, f"ref:{name}", k, ev, q, 0.0, "ok"))
        log(f"{n + 1}/{len(by_scope)} scopes, {len(rows)} rows, {time.perf_counter() - t0:.0f} s")
    return rows


def cached_only(store: Store) -> Callable[[Sequence[str]], list[Any]]:
    """An entity-view NER that returns the store's cached spans and parses nothing."""
    def ner(texts: Sequence[str]) -> list[Any]:
        known = known_entities(store, texts)
        return [known.get(t, []) for t in texts]
    return ner


def result_row(base: dict[str, Any], system: str, k: int, ev: list[str], q: Question, ms: float, status: str) -> dict[str, Any]:
    s = score_question(ev, q.gold)
    return {**base, "system": system, "k": k, "turn_hit": s.turn_hit, "recall_all": s.cer, "set_size": len(ev),
            "ms": round(ms, 2), "status": status}


def _mean(vals: list[float | None]) -> float | None:
    v = [x for x in vals if x is not None]
    return round(100 * sum(v) / len(v), 2) if v else None


def summary(rows: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """system -> k -> {overall, by <key> -> value -> figures}."""
    out: dict[str, Any] = {}
    by_sys: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_sys[(r["system"], r["k"])].append(r)
    for (system, k), rs in sorted(by_sys.items()):
        entry = {"overall": figures(rs)}
        for key in keys:
            groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for r in rs:
                groups[r[key]].append(r)
            entry[f"by_{key}"] = {g: figures(v) for g, v in sorted(groups.items())}
        out.setdefault(system, {})[str(k)] = entry
    return out


def paired(rows: list[dict[str, Any]], system: str = "bfr") -> dict[str, dict[str, dict[str, Any]]]:
    """k -> reference -> ``system`` against that reference ranking on the same questions (Turn Hit):
    :func:`paired_figures` of each. Empty when ``system`` has no rows."""
    hit: dict[tuple[str, int], dict[str, bool]] = defaultdict(dict)
    for r in rows:
        hit[(r["system"], r["k"])][r["question_id"]] = bool(r["turn_hit"])
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for (name, k), ours in sorted(hit.items()):
        if name != system:
            continue
        for ref in REFERENCES:
            theirs = hit.get((f"ref:{ref}", k))
            if theirs:
                out.setdefault(str(k), {})[f"ref:{ref}"] = paired_figures(ours, theirs, system)
    return out


def paired_figures(ours: dict[str, bool], theirs: dict[str, bool], system: str = "bfr") -> dict[str, Any]:
    """One paired comparison for a JSON: the shared questions, those only ``system`` holds, only the other
    holds, the difference in points and the exact McNemar p (``evaluation.stats.mcnemar_by_key``)."""
    m = mcnemar_by_key(ours, theirs)
    return {"n": m.n, f"{system}_only": m.x_only, "reference_only": m.y_only,
            "difference_points": round(100 * m.delta, 2), "mcnemar_p": round(m.p_value, 4)}


def figures(rs: list[dict[str, Any]]) -> dict[str, Any]:
    ms = [r["ms"] for r in rs if r["ms"]]
    return {"n": len(rs), "n_with_gold": sum(r["recall_all"] is not None for r in rs),
            "turn_hit": _mean([r["turn_hit"] for r in rs]), "recall_all": _mean([r["recall_all"] for r in rs]),
            "mean_set_size": round(sum(r["set_size"] for r in rs) / len(rs), 2) if rs else None,
            "failed": sum(r["status"] != "ok" for r in rs),
            "ms_p50": round(statistics.median(ms), 1) if ms else None, "ms_total_s": round(sum(ms) / 1000, 1)}


CODE = Path(__file__).resolve().parents[2] / "bfr_core"


def code_fingerprint(root: Path = CODE) -> str:
    """sha256 (first 16 hex digits) over ``bfr_core``'s Python sources, each path and its bytes in path
    order: rows cached by other code are not this code's rows (a tokenizer change moves BM25 everywhere)."""
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def machine() -> dict[str, Any]:
    return {"loadavg": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}


def all_arms() -> list[str]:
    return list(ARMS)


def plus_arguments(ap: Any) -> None:
    """The options every LoCoMo-Plus bench shares: the two files, the store, the arms, the ks, cached NER only."""
    from bfr_core.ingest.sources import data_dir

    ap.add_argument("--plus", default=str(data_dir() / "locomo_plus_dev.json"))
    ap.add_argument("--locomo", default=str(data_dir() / "locomo10.json"))
    ap.add_argument("--db", default=str(CODE.parent / "bench" / "out" / "cache" / "byo.duckdb"))
    ap.add_argument("--arms", default=",".join(all_arms()))
    ap.add_argument("--ks", default="10,40")
    ap.add_argument("--cached-ner-only", action="store_true",
                    help="entity view: cached NER spans only, parse nothing; ingest without the NER pass")
