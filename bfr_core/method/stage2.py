"""Stage II: budgeted completion (the paper's Algorithm 2) and the arms bfr-text / bfr-mv.

Algorithm 2, line by line, as :func:`complete` runs it::

    3   E <- E0; t <- 0; b_call <- 0; b_new <- 0
    4   while t < B_step and b_call < B_call and b_new < B_new:
    5-9     A_t <- schedule actions: Text {(text, q)}; MV {(text, q), (entity, FirstPerson(q)),
                                                        (session, Latest(E))}
    10      C_t <- {}                          (E is held fixed for the whole round)
    11-17   for (v, c) in A_t in order: skip if c is empty or b_call = B_call (no call charged),
                else C_t <- C_t + R_v(c, M \\ E); b_call += 1
    18      C_t <- Unique(C_t)
    19      K_t <- kappa(C_t, q, E, k_keep)    retention rule, once on the merged candidates
    20      K_t <- ClipToBudget(K_t, B_new - b_new)
    21      E <- E + K_t; b_new += |K_t|
    22      t += 1

Decisions
---------
* The "text index" is the BM25 view: the paper's text access is lexical (Mem0 is "BM25-lite over
  the turn pool"), the complement of the dense pool Stage I starts from; BFR-Text "resubmits the
  original question to the text index" and repeating it pages deeper thanks to the exclusion rule.
* Each call asks for ``budgets.CALL_DEPTH`` (12) unseen records, R_v(c, M \\ E) with the view's own
  ``exclude`` (Eq. 8).
* Retention kappa_pi ranks the round's merged candidates by relevance and filters them for novelty
  (a candidate whose MiniLM cosine with a record already in E, or kept earlier this round, is
  >= :data:`NOVELTY_COSINE` is the same exhibit again and is skipped); at most k_keep are kept.
  Relevance is schedule-specific, as the paper's subscript says: BFR-Text keeps "the first k_keep
  unseen hits" of its one text call (the view's own order); BFR-MV merges three views whose scores
  are not comparable, so it ranks every candidate by its relevance to q - BM25 scaled to 1 over the
  scope plus the MiniLM cosine. (Round-robin by per-view rank instead cost 3.3 Gold Hit points
  on LoCoMo: entity and session lists are not ordered by the question.)
* FirstPerson(q) is ``requirements.first_person`` with the scope's speakers; no name -> the entity
  action is skipped and charged nothing. Latest(E) is the head of the most recently retained batch:
  records of one batch enter E together (set union), so "most recently retained" names the batch,
  and its best-ranked record anchors the session call - E0's first selected note at round 1, the
  top record kept by round t-1 afterwards. (Reading it as "the last id appended" anchors round 1 on
  E0's weakest grounded turn: 76.6 vs 78.8 Gold Hit on LoCoMo, 82 vs 84 Turn Hit on LongMemEval
  dev50; skipping the session action until a round has retained something also gives 76.6.)
* Budgets come from ``bfr_core.method.budgets`` (Text C3 = 3 rounds/3 calls/30 new/keep 8; MV C6 = 3/6/30,
  keep 20 per round). ``round`` in the step data is 1-based.

Invariants (property-tested): E only grows and keeps its order, no duplicates, b_call <= B_call,
b_new <= B_new, t <= B_step, nothing retained was in E at the round's start.

Does not cover: BFR-State / BFR-Adaptive (state-conditioned cues and early stopping, Table 18).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bfr_core.config import Budget
from bfr_core.method.budgets import CALL_DEPTH
from bfr_core.method.requirements import first_person
from bfr_core.method.stage1 import stage_one
from bfr_core.records import Hit, Query, Step

if TYPE_CHECKING:
    from bfr_core.method.arms import ArmContext

NOVELTY_COSINE = 0.95  # same threshold as Stage I's near-duplicate test
VIEW_ATTR = {"text": "bm25", "entity": "entity", "session": "session"}


@dataclass(frozen=True, slots=True)
class Schedule:
    name: str
    actions: tuple[str, ...]  # view kinds, in the fixed order they are issued each round
    rank_by_question: bool  # kappa: False = the text view's own order; True = relevance to q
    depth: int = CALL_DEPTH


TEXT = Schedule("text", ("text",), rank_by_question=False)
MV = Schedule("mv", ("text", "entity", "session"), rank_by_question=True)
SCHEDULES = {"text": TEXT, "mv": MV}


def scope_speakers(views: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.speaker for t in views.turns if t.speaker))


def latest(batches: Sequence[Sequence[str]]) -> str | None:
    """Latest(E): the head of the most recently retained batch (E0 until a round retains something).

    Records of one batch enter E together (set union), so "most recently retained" names the batch;
    within it we take the first, i.e. the best-ranked by the rule that retained it.
    """
    for b in reversed(batches):
        if b:
            return b[0]
    return None


def cue_for(kind: str, query: Query, batches: Sequence[Sequence[str]], speakers: Sequence[str]) -> str | None:
    if kind == "text":
        return query.text
    if kind == "entity":
        return first_person(query.text, speakers)
    if kind == "session":
        return latest(batches)
    raise ValueError(f"unknown action view '{kind}'")


def _novel(v: np.ndarray, base: np.ndarray, kept_vecs: list[np.ndarray]) -> bool:
    """Not a near-duplicate (cosine >= NOVELTY_COSINE) of the current set or of this round's keeps."""
    if len(base) and float(np.max(base @ v)) >= NOVELTY_COSINE:
        return False
    return not any(float(k @ v) >= NOVELTY_COSINE for k in kept_vecs)


def merge(calls: Sequence[Sequence[Hit]], evidence: Sequence[str]) -> list[str]:
    """Unique(C_t): the round's candidates in schedule order, then view rank; none already in E."""
    seen = set(evidence)
    out: list[str] = []
    for hits in calls:
        for h in hits:
            if h.turn_id not in seen:
                seen.add(h.turn_id)
                out.append(h.turn_id)
    return out


def retain(calls: Sequence[Sequence[Hit]], evidence: Sequence[str], keep: int, views: Any,
           relevance: np.ndarray | None = None) -> list[str]:
    """kappa_pi: rank the round's merged candidates, skip near-duplicates, keep at most ``keep``.

    ``relevance`` None (BFR-Text): the text view's own order, i.e. "the first k_keep unseen hits".
    Otherwise (BFR-MV) ``relevance`` is a per-turn score aligned with ``views.turns`` and the merged
    candidates are sorted by it (ties: merge order), so entity and session records compete with
    text records on their bearing on the question.
    """
    if keep <= 0:
        return []
    merged = merge(calls, evidence)
    if not merged:
        return []
    pos = views.position
    if relevance is not None:
        order = sorted(range(len(merged)), key=lambda i: (-float(relevance[pos[merged[i]]]), i))
        merged = [merged[i] for i in order]
    vecs = views.turn_vectors
    base = vecs[[pos[t] for t in evidence if t in pos]] if evidence else vecs[:0]
    out: list[str] = []
    kept_vecs: list[np.ndarray] = []
    for tid in merged:
        if len(out) >= keep:
            break
        v = vecs[pos[tid]]
        if not _novel(v, base, kept_vecs):
            continue
        out.append(tid)
        kept_vecs.append(v)
    return out


def question_relevance(views: Any, query: Query, question_vector: np.ndarray | None) -> np.ndarray:
    """BFR-MV's relevance of every turn to q: BM25 (scaled to max 1 over the scope) + MiniLM cosine."""
    bm = np.asarray(views.bm25_scores(query.text), dtype=np.float64)
    top = float(bm.max()) if len(bm) else 0.0
    bm = bm / top if top > 0 else bm
    qv = question_vector if question_vector is not None else views.encode([query.text])[0]
    return bm + np.asarray(views.turn_vectors @ qv, dtype=np.float64)


def complete(ctx: ArmContext, query: Query, e0: Sequence[str], schedule: Schedule,
             budget: Budget | None = None, question_vector: np.ndarray | None = None) -> list[Step]:
    """Run the completion loop from ``e0``; one Step(kind="round") per round."""
    b = budget or ctx.budget
    views = ctx.views
    speakers = scope_speakers(views)
    relevance = None
    if schedule.rank_by_question and b.rounds > 0 and b.calls > 0:
        relevance = question_relevance(views, query, question_vector)
    evidence: list[str] = list(dict.fromkeys(e0))  # line 3
    batches: list[list[str]] = [list(evidence)]  # retention history, for Latest(E)
    t = b_call = b_new = 0
    steps: list[Step] = []
    budget_d = {"rounds": b.rounds, "calls": b.calls, "new": b.new, "keep": b.keep}
    while t < b.rounds and b_call < b.calls and b_new < b.new:  # line 4
        start = tuple(evidence)  # line 10: fixed for the round
        actions: list[dict[str, Any]] = []
        calls: list[list[Hit]] = []
        for kind in schedule.actions:  # lines 11-17
            cue = cue_for(kind, query, batches, speakers)
            if not cue or b_call >= b.calls:
                actions.append({"view": kind, "index": VIEW_ATTR[kind], "cue": cue or "", "skipped": True,
                                "reason": "no cue" if not cue else "call budget spent", "candidates": []})
                continue
            hits = getattr(views, VIEW_ATTR[kind]).search(cue, schedule.depth, frozenset(start))
            hits = [h for h in hits if h.turn_id not in start]  # exclusion rule, even for a lax view
            b_call += 1
            calls.append(hits)
            actions.append({"view": kind, "index": VIEW_ATTR[kind], "cue": cue, "skipped": False,
                            "candidates": [h.turn_id for h in hits]})
        kept = retain(calls, start, b.keep, views, relevance)  # lines 18-19
        kept = kept[: max(0, b.new - b_new)]  # line 20: ClipToBudget
        evidence.extend(kept)  # line 21
        if kept:
            batches.append(kept)
        b_new += len(kept)
        t += 1  # line 22
        stop = _stopped_by(t, b_call, b_new, b)
        steps.append(Step("round", f"Round {t}: +{len(kept)} via {schedule.name}", tuple(evidence), b_call, {
            "round": t, "schedule": schedule.name, "actions": actions, "retained": kept,
            "counters": {"rounds": t, "calls": b_call, "new": b_new}, "budget": budget_d,
            "stopped_by": stop,
        }))
    return steps


def _stopped_by(t: int, b_call: int, b_new: int, b: Budget) -> str | None:
    """Which budget ends the loop after this round (None: another round follows)."""
    if t >= b.rounds:
        return "rounds"
    if b_call >= b.calls:
        return "calls"
    if b_new >= b.new:
        return "new"
    return None


def _arm(ctx: ArmContext, query: Query, schedule: Schedule) -> list[Step]:
    s1 = stage_one(ctx, query)
    return list(s1.steps) + complete(ctx, query, s1.e0, schedule, question_vector=s1.question_vector)


def bfr_text(ctx: ArmContext, query: Query) -> list[Step]:
    """FCA-MS + BFR-Text completion (default budget C3)."""
    return _arm(ctx, query, TEXT)


def bfr_mv(ctx: ArmContext, query: Query) -> list[Step]:
    """FCA-MS + BFR-MV completion (default budget C6)."""
    return _arm(ctx, query, MV)
