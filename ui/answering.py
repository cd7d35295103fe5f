"""Final answer and judge for a finished trace, through ``bfr_core.judges`` (never reimplemented).

Evidence snippets go to the answerer in time order as the turns' own text (the way the offline
rules answerer reads dates inside the text); a session-date prefix would be read as an event date.
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


def evidence_texts(turns: Sequence[Turn]) -> list[str]:
    order = sorted(turns, key=lambda t: (t.date or datetime.min, t.session_id, t.idx))
    return [t.text for t in order]


def answer_and_judge(llm: Any, question: Question, turns: Sequence[Turn], provider: str) -> Answered:
    """Answer from the evidence turns, then judge against the reference answer."""
    try:
        from bfr_core import judges
    except ImportError as exc:
        return Answered("", None, provider, f"the answerer is not available in this build ({exc})")
    if llm is None:
        return Answered("", None, provider, "no LLM client (bfr_core.llm is not available in this build)")
    try:
        text = judges.answer(llm, question.text, evidence_texts(turns))
    except BfrError as exc:
        return Answered("", None, provider, str(exc))
    try:
        verdict = judges.judge(llm, question.text, question.answer, text)
    except BfrError as exc:
        return Answered(text, None, provider, str(exc))
    return Answered(text, verdict, provider)
