"""Answer-level scores for a finished run: extractive answer, stem F1, Mem0-style judge, LLM-Suff@Set,
and (LongMemEval) LongMemEval's official per-type judge.

Reads the evidence sets a run stored, renders them as text (session date, speaker, text; no ids),
and fills the ``answer``, ``f1``, ``judge``, ``lme_judge``, ``suff`` and ``suff_detail`` columns of
``results``. On LongMemEval the answerer is shown the question's date, as LongMemEval's own reader is;
the question type reaches LongMemEval's judge only (``roles.lme_judge``), never a method.
Resumable: rows that already have a value are skipped, and every LLM call is cached, so a rerun of a
finished run makes no provider call. A call that fails for good is recorded in ``error`` and the run
goes on. LoCoMo F1 follows the official scorer (per category); other datasets use plain stem F1.
A client with a small context (the local model) makes every role read the same fitted set: long
snippets shortened to their sentences nearest the question (``bfr_core.roles.fit``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bfr_core.evaluation.answer_f1 import f1_score, locomo_f1
from bfr_core.llm.base import LLM, LLMCallFailed
from bfr_core.llm.cache import spent_ms
from bfr_core.progress import Progress
from bfr_core.records import Question
from bfr_core.roles.answer_judge import judgment as judge_role
from bfr_core.roles.answerer import answer as answer_role
from bfr_core.roles.fit import fit_for
from bfr_core.roles.lme_judge import QUESTION_TYPES
from bfr_core.roles.lme_judge import lme_judge as lme_judge_role
from bfr_core.roles.snippets import DATE_FORMAT, render
from bfr_core.roles.sufficiency import suff_at_set
from bfr_core.store import Store

SELECT_TODO = """
SELECT r.question_id, r.arm, r.evidence, r.answer, r.judge, r.suff, r.lme_judge
FROM results r JOIN runs u ON u.run_id = r.run_id
WHERE r.run_id = ? AND r.status = 'ok'
ORDER BY r.question_id, r.arm
"""
UPDATE_FIRST = """
UPDATE results SET answer = ?, f1 = ?, suff = ?, suff_detail = coalesce(?, suff_detail), error = ?,
    llm_ms = coalesce(llm_ms, 0) + ?
WHERE run_id = ? AND question_id = ? AND arm = ?
"""
UPDATE_JUDGE = """
UPDATE results SET judge = ?, judge_reason = ?, error = coalesce(?, error), llm_ms = coalesce(llm_ms, 0) + ?
WHERE run_id = ? AND question_id = ? AND arm = ?
"""
UPDATE_LME_JUDGE = """
UPDATE results SET lme_judge = ?, error = coalesce(?, error), llm_ms = coalesce(llm_ms, 0) + ?
WHERE run_id = ? AND question_id = ? AND arm = ?
"""
LME_KIND = "longmemeval"  # the dataset kind whose answerer sees the question date


@dataclass(frozen=True, slots=True)
class SuffPanel:
    """Who judges sufficiency: two independent judges and an adjudicator (Appendix M).

    The paper's judges are two different models. :meth:`single` builds the panel of a run with one
    model: judge B then follows the "cite" procedure (see ``judges.suff_at_set``).
    """

    judge_a: LLM
    judge_b: LLM
    adjudicator: LLM
    procedure_b: str = "reason"

    @classmethod
    def single(cls, llm: LLM) -> SuffPanel:
        return cls(llm, llm, llm, procedure_b="cite")

    @property
    def clients(self) -> tuple[LLM, LLM, LLM]:
        return self.judge_a, self.judge_b, self.adjudicator

    @property
    def labels(self) -> list[str]:
        b = f"{self.judge_b.label} ({self.procedure_b} procedure)" if self.procedure_b != "reason" else self.judge_b.label
        return [self.judge_a.label, b, self.adjudicator.label]


def answer_f1(question: Question, prediction: str) -> float:
    if question.category is not None and 1 <= question.category <= 5:
        return locomo_f1(prediction, question.answer, question.category)
    return f1_score(prediction, question.answer)


def score_answers(
    store: Store, run_id: str, llm: LLM, *, answer: bool = True, judge: bool = False, suff: bool = False,
    panel: SuffPanel | None = None, progress: Progress | None = None, lme_judge: bool = False,
) -> int:
    """Fill answer-level columns for every finished row of ``run_id``; returns rows updated.

    Question by question (so an interrupted run leaves whole questions done): first the answer and
    Suff@Set of each arm's set (they read the same evidence, so a local model reuses its evaluated
    snippets; an arm whose set starts with another's, as FCA-MS's E0 starts BFR-MV's, reuses that
    prefix from the local model's state cache), then the judge for every arm (its long fixed
    preamble is evaluated once and reused), then LongMemEval's judge (``lme_judge``; a question of a
    type it has no prompt for is an error). ``llm_ms`` accumulates each row's LLM wall time.
    """
    cur = store.cursor()
    dataset_id = cur.execute("SELECT dataset_id FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
    rows = cur.execute(SELECT_TODO, [run_id]).fetchall()
    questions = {q.question_id: q for q in store.questions(dataset_id)}
    panel = panel or SuffPanel.single(llm)
    answer = answer or judge or lme_judge
    dated = (store.dataset(dataset_id) or {}).get("kind") == LME_KIND
    if lme_judge:
        _check_lme_types(questions.values())
    todo = [r for r in rows if (answer and r[3] is None) or (judge and r[4] is None) or (suff and r[5] is None)
            or (lme_judge and r[6] is None)]
    by_question: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for r in todo:
        by_question[r[0]].append(r)
    done = 0
    for qid, group in by_question.items():
        q = questions[qid]
        answers: dict[str, str | None] = {}
        for _, arm, evidence, prev_answer, _, prev_suff, _ in group:
            answers[arm] = _answer_and_suff(store, cur, run_id, dataset_id, q, arm, evidence, prev_answer,
                                            prev_suff, llm, panel, answer=answer, suff=suff, dated=dated)
        if judge:
            for _, arm, _, _, prev_judge, _, _ in group:
                if answers[arm] is not None and prev_judge is None:
                    start = spent_ms(llm, *panel.clients)
                    label, reason, error = None, None, None
                    try:
                        verdict = judge_role(llm, q.text, q.answer, answers[arm])
                        label, reason = verdict.label, verdict.reason
                    except LLMCallFailed as exc:
                        error = f"llm: {exc.reason}"
                    cur.execute(UPDATE_JUDGE, [label, reason, error, spent_ms(llm, *panel.clients) - start,
                                               run_id, qid, arm])
        if lme_judge:
            for _, arm, _, _, _, _, prev_lme in group:
                if answers[arm] is not None and prev_lme is None:
                    _lme_judge_row(cur, run_id, q, arm, answers[arm], llm, panel)
        done += len(group)
        if progress:
            progress(done, len(todo), qid)
    return len(todo)


def _check_lme_types(questions: Any) -> None:
    """LongMemEval's judge has a prompt per LongMemEval question type (and one for abstention)."""
    from bfr_core.errors import BfrError

    odd = sorted({q.qtype for q in questions if not q.is_abstention and q.qtype not in QUESTION_TYPES})
    if odd:
        raise BfrError(f"--lme-judge: LongMemEval's judge has no prompt for question type(s) {', '.join(odd)}")


def _lme_judge_row(cur: Any, run_id: str, q: Question, arm: str, response: str, llm: LLM,
                   panel: SuffPanel) -> None:
    """One row's LongMemEval judgment ("yes" / "no" / the offline rules' "undecided"), written."""
    start = spent_ms(llm, *panel.clients)
    label, error = None, None
    try:
        label = lme_judge_role(llm, q.qtype, q.text, q.answer, response, abstention=q.is_abstention)
    except LLMCallFailed as exc:
        error = f"llm: {exc.reason}"
    cur.execute(UPDATE_LME_JUDGE, [label, error, spent_ms(llm, *panel.clients) - start, run_id, q.question_id, arm])


def _answer_and_suff(store: Store, cur: Any, run_id: str, dataset_id: str, q: Question, arm: str,
                     evidence: Sequence[str], prev_answer: str | None, prev_suff: str | None, llm: LLM,
                     panel: SuffPanel, *, answer: bool, suff: bool, dated: bool = False) -> str | None:
    """One row's answer (and F1) and Suff@Set, written to the store; returns the answer."""
    start = spent_ms(llm, *panel.clients)
    by_id = store.turns_by_id(dataset_id, list(evidence))
    texts = render([by_id[t] for t in evidence if t in by_id])
    # a small-context model: every role reads the same fitted snippets
    fitted = fit_for([llm, *panel.clients], q.text, texts)
    trimmed = sum(a != b for a, b in zip(texts, fitted, strict=True))
    texts = fitted
    values: dict[str, Any] = {"answer": prev_answer, "suff": prev_suff, "suff_detail": None, "error": None}
    try:
        if answer and prev_answer is None:
            when = q.date.strftime(DATE_FORMAT) if dated and q.date else None
            values["answer"] = answer_role(llm, q.text, texts, question_date=when)
        if suff and prev_suff is None:
            res = suff_at_set((panel.judge_a, panel.judge_b), panel.adjudicator, q.text, q.answer, texts,
                              procedure_b=panel.procedure_b)
            values["suff"] = res.label
            values["suff_detail"] = json.dumps({
                "judge_labels": list(res.judge_labels), "adjudicated": res.adjudicated,
                "reasons": list(res.reasons), "judges": panel.labels, "snippets_shortened": trimmed,
            })
    except LLMCallFailed as exc:
        values["error"] = f"llm: {exc.reason}"
    f1 = answer_f1(q, values["answer"]) if values["answer"] is not None else None
    cur.execute(UPDATE_FIRST, [values["answer"], f1, values["suff"], values["suff_detail"], values["error"],
                               spent_ms(llm, *panel.clients) - start, run_id, q.question_id, arm])
    return values["answer"]
