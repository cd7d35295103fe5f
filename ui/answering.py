"""Final answer and judge for a finished trace, through ``bfr_core.judges`` (never reimplemented).

Evidence is rendered by ``bfr_core.answering.render_evidence`` in the set's order, exactly as
``bfr eval --answer`` does, so the app shows the answer the evaluation scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bfr_core.errors import BfrError
from bfr_core.records import Question, Turn


@dataclass(frozen=True)
class Answered:
    answer: str
    judge: str | None  # CORRECT / WRONG, None when judging failed
    provider: str
    error: str = ""
    focus: tuple[int, ...] = ()  # positions of the evidence turns the answerer read; () = all of them

    def focus_note(self, turn_ids: Sequence[str]) -> str:
        """A line saying which turns a focused answer was read from ("" when it read the whole set)."""
        if not self.focus:
            return ""
        picked = ", ".join(turn_ids[i] for i in self.focus if i < len(turn_ids))
        return (f"Time-span question: the answerer read only the {len(self.focus)} of {len(turn_ids)} turns "
                f"the focus step named ({picked}).")


def evidence_texts(turns: Sequence[Turn]) -> list[str]:
    try:
        from bfr_core.answering import render_evidence
    except ImportError:  # the answering module has not landed in this build: text in time order
        return [t.text for t in sorted(turns, key=lambda t: (t.date or datetime.min, t.session_id, t.idx))]
    return render_evidence(turns)


def answer_and_judge(llm: Any, question: Question, turns: Sequence[Turn], provider: str) -> Answered:
    """Answer from the evidence turns, then judge against the reference answer."""
    try:
        from bfr_core import judges
    except ImportError as exc:
        return Answered("", None, provider, f"the answerer is not available in this build ({exc})")
    if llm is None:
        return Answered("", None, provider, "no LLM client (bfr_core.llm is not available in this build)")
    from bfr_core.evidence_fit import fit_for

    try:
        text, focus = judges.answer_with_focus(llm, question.text, fit_for(llm, question.text, evidence_texts(turns)))
    except BfrError as exc:
        return Answered("", None, provider, str(exc))
    try:
        verdict = judges.judge(llm, question.text, question.answer, text)
    except BfrError as exc:
        return Answered(text, None, provider, str(exc), focus)
    return Answered(text, verdict, provider, focus=focus)
