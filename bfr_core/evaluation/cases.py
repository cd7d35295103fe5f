"""Relevance-versus-sufficiency cases: mined from a finished run, and gold ranks per view for one question.

Covers
------
* :func:`mine_cases` (pure): over a run's result rows and the questions' gold turns, the questions
  where a top-k arm held some gold turns but not all (CER 0) and a BFR arm held them all (CER 1),
  one :class:`Case` per (question, top-k arm, BFR arm), ranked clearest first: the top-k arm holds
  exactly one gold turn of two, then fewer gold turns, then the BFR arm's smaller set, then the
  larger gap between the held gold turn's rank in the top-k list and the list's length (the
  missing turn is not even near the cut-off), then question id (ties deterministic).
* :func:`load_cases`: the same over the ``results`` of one stored run (reads gold: this is
  evaluation, never a method).
* :func:`gold_ranks` (pure) and :func:`view_ranks`: the 1-based rank of every gold turn in each
  view's ranking of the whole scope for the question text (ties by scope order), and
  :func:`premise`: which gold turns fall inside a top-``k`` cut-off in each view, the test of the
  paper's Figure 1 premise (relevance finds one gold turn and misses the other).

Does not cover: choosing which arms count as top-k or BFR beyond the defaults below (pass others),
the entity and session views (they rank cues a method writes, not the question itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bfr_core.arm_names import CONV_FUSION, canonical_arm
from bfr_core.fusion import rank_order
from bfr_core.retrieval.embed import cached_vectors
from bfr_core.retrieval.encoders import default_spec
from bfr_core.retrieval.scope import scope_views
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.retrieval.views.common import index_text
from bfr_core.store import Store, text_hash

TOPK_ARMS: tuple[str, ...] = ("mem0", "amem")  # one-shot relevance top-k
BFR_ARMS: tuple[str, ...] = ("bfr-text", "bfr-mv", CONV_FUSION)
RANKED_VIEWS: tuple[str, ...] = ("bm25", "dense", "hybrid")


@dataclass(frozen=True, slots=True)
class ResultRow:
    question_id: str
    arm: str
    evidence: tuple[str, ...]
    qtype: str = ""


@dataclass(frozen=True, slots=True)
class Case:
    question_id: str
    qtype: str
    topk_arm: str
    bfr_arm: str
    gold_n: int
    topk_held: int  # gold turns in the top-k arm's set (0 < held < gold_n)
    topk_size: int
    bfr_size: int
    held_rank: int  # best 1-based rank of a held gold turn in the top-k list
    rank_gap: int  # topk_size - held_rank: how far above the cut-off the held turn sits

    @property
    def clear_pair(self) -> bool:
        """The textbook shape: two gold turns, top-k holds exactly one."""
        return self.gold_n == 2 and self.topk_held == 1


def _clarity(c: Case) -> tuple:
    return (not c.clear_pair, c.gold_n, c.bfr_size, -c.rank_gap, c.question_id, c.topk_arm, c.bfr_arm)


def mine_cases(rows: Sequence[ResultRow], gold: Mapping[str, Sequence[str]], *,
               topk_arms: Sequence[str] = TOPK_ARMS, bfr_arms: Sequence[str] = BFR_ARMS) -> list[Case]:
    """Questions where a top-k arm held part of the gold set and a BFR arm all of it, clearest first
    (``bfr_arms`` by registered name; a run's arm stored under an alias counts as its arm)."""
    by_q: dict[str, dict[str, ResultRow]] = {}
    for r in rows:
        by_q.setdefault(r.question_id, {})[r.arm] = r
    out: list[Case] = []
    for qid, arms in by_q.items():
        g = set(gold.get(qid, ()))
        if len(g) < 2:
            continue
        complete = [s for a in bfr_arms for s in arms if canonical_arm(s) == a and g <= set(arms[s].evidence)]
        for t in (a for a in topk_arms if a in arms):
            ev = arms[t].evidence
            held = [i + 1 for i, e in enumerate(ev) if e in g]
            if not held or len(set(ev) & g) == len(g):
                continue
            for b in complete:
                out.append(Case(qid, arms[t].qtype, t, b, len(g), len(set(ev) & g), len(ev),
                                len(arms[b].evidence), min(held), len(ev) - min(held)))
    return sorted(out, key=_clarity)


def load_cases(store: Store, run_id: str, dataset_id: str, k: int | None = None, **kw: Sequence[str]) -> list[Case]:
    """:func:`mine_cases` over the ``ok`` results of one stored run; with ``k``, every set cut to its
    first ``k`` ids first (cases at one set size, not a small top-k against a larger BFR set)."""
    rows = store.cursor().execute(
        "SELECT question_id, arm, evidence, coalesce(qtype, '') FROM results WHERE run_id = ? AND status = 'ok' "
        "ORDER BY question_id, arm", [run_id]).fetchall()
    gold: dict[str, list[str]] = {}
    for qid, tid in store.cursor().execute(
            "SELECT question_id, turn_id FROM gold WHERE dataset_id = ? ORDER BY question_id, turn_id",
            [dataset_id]).fetchall():
        gold.setdefault(qid, []).append(tid)
    return mine_cases([ResultRow(q, a, tuple(e or ())[:k], t) for q, a, e, t in rows], gold, **kw)


def gold_ranks(scores: np.ndarray, turn_ids: Sequence[str], gold: Sequence[str]) -> dict[str, int]:
    """1-based rank of each gold turn when ``scores`` (aligned with ``turn_ids``) are sorted
    descending, equal scores in ``turn_ids`` order; a gold id not in ``turn_ids`` is left out."""
    order = rank_order(np.asarray(scores, dtype=np.float64))
    rank = {turn_ids[i]: r + 1 for r, i in enumerate(order)}
    return {g: rank[g] for g in gold if g in rank}


def dense_ready(store: Store, dataset_id: str, scope_id: str) -> bool:
    """True when every turn text of the scope is cached for every default dense model (no encoding needed)."""
    hashes = list(dict.fromkeys(text_hash(index_text(t)) for t in store.scope_turns(dataset_id, scope_id)))
    spec = default_spec()
    return all(len(cached_vectors(store, m, hashes)) == len(hashes) for m in [spec.base, spec.short] if m)


def view_ranks(store: Store, dataset_id: str, question_id: str, *, dense: bool | None = None) -> dict[str, dict[str, int]]:
    """view -> {gold turn -> rank} for the question's own text over its scope. BM25 always; dense
    and hybrid when ``dense`` (default: when :func:`dense_ready`, so nothing is encoded)."""
    q = store.question(dataset_id, question_id)
    turns = store.scope_turns(dataset_id, q.scope_id)
    ids = [t.turn_id for t in turns]
    out = {"bm25": gold_ranks(BM25View(turns).scores(q.text), ids, q.gold)}
    if dense is None:
        dense = dense_ready(store, dataset_id, q.scope_id)
    if dense:
        v = scope_views(store, dataset_id, q.scope_id)
        ids = [t.turn_id for t in v.turns]
        out["dense"] = gold_ranks(v.dense.scores(q.text), ids, q.gold)
        out["hybrid"] = gold_ranks(v.hybrid.scores(q.text), ids, q.gold)
    return out


@dataclass(frozen=True, slots=True)
class Premise:
    """Figure 1's premise in one view: relevance top-``k`` holds some gold turns and misses others."""

    view: str
    k: int
    inside: tuple[str, ...]  # gold turns ranked <= k
    outside: tuple[str, ...]

    @property
    def holds(self) -> bool:
        return bool(self.inside) and bool(self.outside)


def premise(ranks: Mapping[str, Mapping[str, int]], k: int) -> list[Premise]:
    """Per view, which gold turns a top-``k`` cut-off keeps (in rank order)."""
    out = []
    for view, r in ranks.items():
        by_rank = sorted(r, key=lambda g: (r[g], g))
        out.append(Premise(view, k, tuple(g for g in by_rank if r[g] <= k), tuple(g for g in by_rank if r[g] > k)))
    return out
