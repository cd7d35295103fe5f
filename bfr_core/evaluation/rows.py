"""One results row per (question, arm), in ``runs.RESULT_COLUMNS`` order: scored or failed.

Covers: :func:`result_row` (an arm's trace scored against the question's gold) and :func:`failed_row`
(an arm that raised, scored as an empty evidence set so it stays in the denominator). Every path that
writes results rows builds them here: the evaluator's threads, its worker processes (``procpool``)
and imported runs (``imported``). Does not cover: writing them (``runs.write_batch``).
"""

from __future__ import annotations

from typing import Any

from bfr_core.evaluation.metrics import score_question
from bfr_core.records import Question, Trace


def result_row(run_id: str, q: Question, trace: Trace, llm_ms: float | None = None) -> tuple[Any, ...]:
    """The row of ``trace`` (``llm_ms``: its model calls' time, None without a model)."""
    # The @k metrics are taken over the whole evidence set (k = its size): arms are compared as sets.
    s = score_question(trace.evidence, q.gold)
    return (
        run_id, q.question_id, trace.arm, trace.budget, q.qtype, list(trace.evidence),
        len(trace.evidence), trace.calls, len(q.gold), s.gold_hit, s.turn_hit, s.er, s.cer,
        s.recall_any, s.recall_all, s.ndcg_any, trace.elapsed_ms, "ok", None, llm_ms,
    )


def failed_row(run_id: str, q: Question, arm: str, budget: str, error: str) -> tuple[Any, ...]:
    """A question whose arm raised: scored as an empty evidence set (it stays in the denominator)."""
    s = score_question((), q.gold)
    return (run_id, q.question_id, arm, budget, q.qtype, [], 0, 0, len(q.gold), s.gold_hit, s.turn_hit,
            s.er, s.cer, s.recall_any, s.recall_all, s.ndcg_any, 0.0, "failed", error, None)
