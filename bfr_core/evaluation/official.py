"""LongMemEval's official retrieval convention: rank user turns only, report session-level recall and NDCG.

Covers: :func:`user_views` (a scope's views rebuilt over its user turns, vectors sliced from the
full scope's, nothing re-encoded), :func:`arm_ranking` (one procedure for every arm, ``conv-fusion``
included: its evidence set over the user-turn corpus, in its order, so an @k figure past the set
size counts what the set holds; :data:`PROCEDURE`, written into the JSON), and
:func:`official_summary`, which ``bfr eval --official-corpus`` adds to the eval JSON: per arm the
means (0-100) of ``metrics.official_scores`` over the non-abstention questions, overall and by
type, session recall_all (the official scorer's headline) beside recall_any.

Does not cover: LoCoMo (it has no user role), the official scorer's session / turn "granularity"
retrievers themselves (we score our own arms' rankings under its metrics), the abstention
questions (skipped, as the official scorer skips them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bfr_core.evaluation.metrics import aggregate, official_scores
from bfr_core.pipeline import run_query
from bfr_core.records import Question
from bfr_core.retrieval.scope import ScopeViews, build_views, scope_views
from bfr_core.store import Store

USER = "user"
KS = (5, 10)
KEYS = tuple(f"{lvl}_{m}@{k}" for k in KS for lvl in ("session", "turn")
             for m in ("recall_any", "recall_all", "ndcg_any"))
BY_TYPE_KEYS = ("n", "session_recall_any@5", "session_recall_all@5", "session_ndcg_any@10")
PROCEDURE = ("every arm, conv-fusion included, at its default budget over the user-turn corpus; the ranking scored is "
             "the arm's evidence set in its order (a figure @k past the set size counts what the set holds)")


def user_views(views: ScopeViews) -> ScopeViews:
    """The same scope over its user turns only (the official retrieval corpus)."""
    keep = [i for i, t in enumerate(views.turns) if t.speaker == USER]
    dense = views.dense
    short = dense.short_vectors[keep] if dense.short_vectors is not None else None
    return build_views(views.scope, [views.turns[i] for i in keep], views.turn_vectors[keep],
                       views.model, short_vectors=short, short_model=dense.short_model)


def arm_ranking(views: ScopeViews, q: Question, arm: str, dataset_id: str) -> list[str]:
    """Turn ids in rank order: the arm's evidence set in its order, the same for every arm (:data:`PROCEDURE`)."""
    trace = run_query(views, q.query(), arm, dataset_id=dataset_id)
    return list(trace.evidence)


def official_summary(store: Store, dataset_id: str, arms: Sequence[str], qs: Sequence[Question]) -> dict[str, Any]:
    """Per arm, the official metrics averaged over ``qs`` minus abstention questions (0-100)."""
    scored = [q for q in qs if not q.is_abstention and not q.question_id.endswith("_abs")]
    views: dict[str, ScopeViews] = {}
    out: dict[str, Any] = {"corpus": "user turns only", "procedure": PROCEDURE, "n_questions": len(scored),
                           "skipped_abstention": len(qs) - len(scored), "arms": {}}
    for arm in arms:
        rows = []
        for q in scored:
            if q.scope_id not in views:
                views[q.scope_id] = user_views(scope_views(store, dataset_id, q.scope_id))
            v = views[q.scope_id]
            ranked = arm_ranking(v, q, arm, dataset_id)
            rows.append({**official_scores(ranked, q.gold, [t.turn_id for t in v.turns], KS), "qtype": q.qtype})
        agg = aggregate(rows, by="qtype", rates=KEYS, means=())
        out["arms"][arm] = {**{k: _r(agg["overall"][k]) for k in KEYS},
                            "n_scored_turn_level": agg["overall"]["n_scored"][f"turn_recall_any@{KS[0]}"],
                            "by_type": {t: {k: _r(v[k]) for k in BY_TYPE_KEYS}
                                        for t, v in agg["by"].items()}}
    return out


def _r(x: object) -> object:
    return round(float(x), 2) if isinstance(x, float | np.floating) else x
