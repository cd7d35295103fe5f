"""One-shot same-store baselines (paper, Appendix E): Mem0 = BM25 top-k, A-Mem = dense top-k.

Both retrieve once over the question's scope with the question text as the cue and return one
``topk`` Step whose evidence is the top ``ctx.k`` turn ids. As in the paper these are controlled
same-store adaptations: no fact extraction or consolidation (Mem0), no note evolution or links
(A-Mem) — only their retrieval over the shared flat turn store.

Step ``data`` keys: ``view`` (view name), ``cue`` (the query text), ``k``, ``hits`` (list of
``{"turn_id", "score"}`` in rank order).

Not covered here: CoM* (``bfr_core.baselines.com``) and MRAgent-Flat* (``bfr_core.baselines.mragent``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bfr_core.records import Query, Step
from bfr_core.retrieval.views.base import View

if TYPE_CHECKING:
    from bfr_core.method.arms import ArmContext


def topk_step(view: View, view_name: str, title: str, query: Query, k: int) -> Step:
    """One retrieval call: the view's top-k for the query text, as a ``topk`` Step."""
    hits = view.search(query.text, k, frozenset())
    return Step(
        kind="topk", title=title, evidence=tuple(h.turn_id for h in hits), calls=1,
        data={"view": view_name, "cue": query.text, "k": k,
              "hits": [{"turn_id": h.turn_id, "score": round(float(h.score), 6)} for h in hits]},
    )


def mem0(ctx: ArmContext, query: Query) -> list[Step]:
    """Mem0 (same-store): BM25 top-k over the scope's turns."""
    return [topk_step(ctx.views.bm25, "bm25", f"Mem0: BM25 top-{ctx.k}", query, ctx.k)]


def amem(ctx: ArmContext, query: Query) -> list[Step]:
    """A-Mem (same-store): dense top-k over the scope's turns."""
    return [topk_step(ctx.views.dense, "dense", f"A-Mem: dense top-{ctx.k}", query, ctx.k)]
