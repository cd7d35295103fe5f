"""Final answer and judge (label and reason) for a finished trace, through ``bfr_core.roles`` (never
reimplemented).

Evidence is rendered by ``bfr_core.roles.snippets.render`` in the set's order, exactly as
``bfr eval --answer`` does, so the app shows the answer the evaluation scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bfr_core.errors import BfrError
from bfr_core.evaluation.answer_f1 import locomo_f1
from bfr_core.records import Question, Turn
from bfr_core.roles import answer_judge, answerer
from bfr_core.roles.fit import fit_for
from bfr_core.roles.snippets import render


@dataclass(frozen=True)
class Answered:
    answer: str
    judge: str | None  # CORRECT / WRONG (UNDECIDED from the offline rules), None when judging failed
    provider: str
    error: str = ""
    how: str = ""  # answerer.Answer.how: "computed: ..." when the span step gave the answer; "" extractive
    judge_reason: str = ""  # the judge's one-sentence reason


def verdict_text(a: Answered) -> str:
    """The judge's label and its reason, as a page shows them ("undecided offline" for UNDECIDED)."""
    if a.judge is None:
        return "not judged"
    label = "undecided offline" if a.judge == "UNDECIDED" else a.judge
    return f"{label} ({a.judge_reason})" if a.judge_reason else label


ADVERSARIAL = 5  # LoCoMo's category of questions the conversation does not answer; their stored answer is the trap


def reference_text(q: Question) -> str:
    """The reference answer as a page shows it: for LoCoMo's adversarial questions, that there is none."""
    if q.category == ADVERSARIAL:
        return f"none: the conversation does not say (LoCoMo's adversarial question; its trap answer is “{q.answer}”)"
    return q.answer


def evidence_texts(turns: Sequence[Turn]) -> list[str]:
    return render(turns)


def answer_and_judge(llm: Any, question: Question, turns: Sequence[Turn], provider: str) -> Answered:
    """Answer from the evidence turns, then judge against the reference answer."""
    if llm is None:
        return Answered("", None, provider, "no LLM client: choose a provider in the sidebar")

    try:
        got = answerer.answered(llm, question.text, fit_for(llm, question.text, evidence_texts(turns)))
    except BfrError as exc:
        return Answered("", None, provider, str(exc))
    if question.category == ADVERSARIAL:  # judged by LoCoMo's own rule, never against the trap answer
        right = locomo_f1(got.text, question.answer, ADVERSARIAL) == 1.0
        return Answered(got.text, "CORRECT" if right else "WRONG", provider, how=got.how,
                        judge_reason="LoCoMo's adversarial rule: only a refusal (“not mentioned”, “no information "
                                     "available”) is right, since the conversation does not answer it")
    try:
        verdict = answer_judge.judgment(llm, question.text, question.answer, got.text)
    except BfrError as exc:
        return Answered(got.text, None, provider, str(exc), got.how)
    return Answered(got.text, verdict.label, provider, how=got.how, judge_reason=verdict.reason)
