"""Answer-level scores for a finished run: extractive answer, stem F1, Mem0-style judge, LLM-Suff@Set.

Reads the evidence sets a run stored, renders them as text (session date, speaker, text; no ids),
and fills the ``answer``, ``f1``, ``judge``, ``suff`` and ``suff_detail`` columns of ``results``.
Resumable: rows that already have a value are skipped, and every LLM call is cached, so a rerun of a
finished run makes no provider call. A call that fails for good is recorded in ``error`` and the run
goes on. LoCoMo F1 follows the official scorer (per category); other datasets use plain stem F1.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bfr_core.judges import answer as answer_role
from bfr_core.judges import judge as judge_role
from bfr_core.judges import suff_at_set
from bfr_core.llm.base import LLM, LLMCallFailed
from bfr_core.metrics import f1_score, locomo_f1
from bfr_core.progress import Progress
from bfr_core.records import Question, Turn
from bfr_core.store import Store

SELECT_TODO = """
SELECT r.question_id, r.arm, r.evidence, r.answer, r.judge, r.suff
FROM results r JOIN runs u ON u.run_id = r.run_id
WHERE r.run_id = ? AND r.status = 'ok'
ORDER BY r.question_id, r.arm
"""
UPDATE = """
UPDATE results SET answer = ?, f1 = ?, judge = ?, suff = ?, suff_detail = coalesce(?, suff_detail), error = ?
WHERE run_id = ? AND question_id = ? AND arm = ?
"""


@dataclass(frozen=True, slots=True)
class SuffPanel:
    """Who judges sufficiency: two independent judges and an adjudicator (Appendix M)."""

    judge_a: LLM
    judge_b: LLM
    adjudicator: LLM


def render_evidence(turns: Sequence[Turn]) -> list[str]:
    """Evidence snippets as the answerer and judges read them, in the set's order, without ids."""
    out = []
    for t in turns:
        when = t.date.strftime("%d %B %Y") if t.date else "undated"
        out.append(f"({when}) {t.speaker}: {t.text}")
    return out


def answer_f1(question: Question, prediction: str) -> float:
    if question.category is not None and 1 <= question.category <= 5:
        return locomo_f1(prediction, question.answer, question.category)
    return f1_score(prediction, question.answer)


def score_answers(
    store: Store, run_id: str, llm: LLM, *, answer: bool = True, judge: bool = False, suff: bool = False,
    panel: SuffPanel | None = None, progress: Progress | None = None,
) -> int:
    """Fill answer-level columns for every finished row of ``run_id``; returns rows updated."""
    cur = store.cursor()
    dataset_id = cur.execute("SELECT dataset_id FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
    rows = cur.execute(SELECT_TODO, [run_id]).fetchall()
    questions = {q.question_id: q for q in store.questions(dataset_id)}
    panel = panel or SuffPanel(llm, llm, llm)
    todo = [r for r in rows if (answer and r[3] is None) or (judge and r[4] is None) or (suff and r[5] is None)]
    updated = 0
    for i, (qid, arm, evidence, prev_answer, prev_judge, prev_suff) in enumerate(todo, 1):
        q = questions[qid]
        by_id = store.turns_by_id(dataset_id, list(evidence))
        texts = render_evidence([by_id[t] for t in evidence if t in by_id])
        values: dict[str, Any] = {"answer": prev_answer, "judge": prev_judge, "suff": prev_suff,
                                  "suff_detail": None, "error": None}
        try:
            if answer or judge:
                values["answer"] = prev_answer or answer_role(llm, q.text, texts)
            if judge and prev_judge is None:
                values["judge"] = judge_role(llm, q.text, q.answer, values["answer"])
            if suff and prev_suff is None:
                res = suff_at_set((panel.judge_a, panel.judge_b), panel.adjudicator, q.text, q.answer, texts)
                values["suff"] = res.label
                values["suff_detail"] = json.dumps({
                    "judge_labels": list(res.judge_labels), "adjudicated": res.adjudicated,
                    "reasons": list(res.reasons),
                    "judges": [panel.judge_a.label, panel.judge_b.label, panel.adjudicator.label],
                })
        except LLMCallFailed as exc:
            values["error"] = f"llm: {exc.reason}"
        f1 = answer_f1(q, values["answer"]) if values["answer"] is not None else None
        cur.execute(UPDATE, [values["answer"], f1, values["judge"], values["suff"], values["suff_detail"],
                             values["error"], run_id, qid, arm])
        updated += 1
        if progress:
            progress(i, len(todo), qid)
    return updated
