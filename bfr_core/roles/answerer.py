"""Role ``answer``: the paper's extractive answerer (Appendix O), with one program-aided step.

Covers: :func:`extractive` (the paper's answerer over ordered snippets; LongMemEval's question date
above the question when given, :func:`dated_question`), :func:`spanned` (on a question
for the days / weeks / months / years between two events, role ``span`` copies the two dates and the
code subtracts them), :func:`answered` / :func:`answer` (span first, extractive as the fallback).
Does not cover: judging answers (``roles.answer_judge``), fitting snippets (``roles.fit``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

from bfr_core.dates import SPAN_BETWEEN_EVENTS, day_gap, find_day_dates, span_text
from bfr_core.llm.base import LLM, LLMCallFailed
from bfr_core.llm.retry import complete_json
from bfr_core.roles.prompting import EVIDENCE_BLOCK, as_object, build_request, fill, numbered

log = logging.getLogger(__name__)

ANSWER_PROMPT = EVIDENCE_BLOCK + """Given the question and the ordered evidence snippets above, produce a short \
answer string that is supported by the evidence. Prefer spans that appear in the evidence. If multiple \
candidates exist, choose the most specific span that answers the question. Do not invent entities that \
are absent from the evidence set. For "how many days" questions, count the days between the two dates.

Example
Snippets: [1] I adopted a kitten on March 3rd. [2] Took her to the vet on March 10th.
Question: How many days after I adopted the kitten did I take her to the vet?
{"answer": "7 days"}

{question_line}
Reply with JSON only."""
ANSWER_SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


# -- span (before the answerer, on questions for the time between two events) ----------------------
# Program-aided: a 1.5B model reads the two dates but does not subtract them over a large set ("10
# days" for February 5th -> 10th), so on a question for the days / weeks / months / years between two
# events the model copies the two dates (SPAN_PROMPT) and the code subtracts them. Its "earlier" and
# "later" come back swapped at times, so the gap is taken either way round (the shorter). A reply
# without two readable, different dates, or a gap that rounds to 0 in the asked unit, falls back to
# the extractive answer. "... ago" needs the question's own date, which the answerer is not given.
# bench/quality/bench_llm_timespan.py measures it against the extractive answer on LoCoMo's and dev50's
# time-span questions.
SPAN_PROMPT = EVIDENCE_BLOCK + """The question below asks how much time passed between two events. Copy from \
the snippets the date of the earlier event and the date of the later event.

Example
Snippets: [1] I adopted a kitten on March 3rd. [2] I love cats. [3] Took her to the vet on March 10th.
Question: How many days after I adopted the kitten did I take her to the vet?
{"earlier": "March 3rd", "later": "March 10th"}

Question: {question}
Reply with JSON only."""
SPAN_SCHEMA = {"type": "object", "required": ["earlier", "later"],
               "properties": {"earlier": {"type": "string"}, "later": {"type": "string"}}}


def span_dates(llm: LLM, question: str, evidence_texts: Sequence[str]) -> tuple[str, str]:
    """The dates of the question's two events as the model copies them from the snippets."""

    def parse(obj: Any, raw: str) -> tuple[str, str]:
        got = as_object(obj)
        if not all(isinstance(got.get(k), str | int) for k in ("earlier", "later")):
            raise ValueError("expected {\"earlier\": \"...\", \"later\": \"...\"}")
        return str(got["earlier"]).strip(), str(got["later"]).strip()

    prompt = fill(SPAN_PROMPT, question=question, evidence=numbered(evidence_texts))
    payload = {"question": question, "evidence": list(evidence_texts)}
    return complete_json(llm, build_request("span", prompt, payload, SPAN_SCHEMA, max_tokens=40), parse)


def span_answer(question: str, first: str, second: str) -> str | None:
    """"N <unit>s" between two date texts on a :data:`SPAN_BETWEEN_EVENTS` (the unit it asks for); None when
    it is not one, a text holds no date, or the gap rounds to 0."""
    m = SPAN_BETWEEN_EVENTS.search(question)
    a, b = find_day_dates(first), find_day_dates(second)
    if not (m and a and b):
        return None
    days = min(abs(day_gap(a[0][1], b[0][1])), abs(day_gap(b[0][1], a[0][1])))
    text = span_text(days, m.group(1).lower())
    return None if text.startswith("0 ") else text


class Answer(NamedTuple):
    text: str
    span: tuple[str, ...] = ()  # the two dates the span step subtracted; () = an extractive answer

    @property
    def how(self) -> str:
        """How the answer was reached, for a reader: empty for the extractive answer over the set."""
        if self.span:
            return f"computed: the time between {self.span[0]} and {self.span[1]}, dates read from the evidence"
        return ""


def spanned(llm: LLM, question: str, evidence_texts: Sequence[str]) -> Answer | None:
    """The computed span on a :data:`SPAN_BETWEEN_EVENTS`, with the dates it came from; None for any other
    question, or when the dates do not give one, or the call fails for good: the extractive answer is
    the fallback."""
    if not evidence_texts or SPAN_BETWEEN_EVENTS.search(question) is None:
        return None
    try:
        dates = span_dates(llm, question, evidence_texts)
    except LLMCallFailed as exc:
        log.info("span failed, answering from the snippets: %s", exc)
        return None
    text = span_answer(question, *dates)
    return Answer(text, dates) if text else None


def answered(llm: LLM, question: str, evidence_texts: Sequence[str], *, span_first: bool = True,
             question_date: str | None = None) -> Answer:
    """The answer to ``question`` from ordered evidence snippets, with how it was reached: on a
    question for the time between two events, the span :func:`spanned` computes from the dates the
    model copies, when it gives one; else the paper's extractive answerer (:func:`extractive`;
    ``span_first=False``: that alone). There is no "focus" step (answer from the few snippets the model
    names): it lowers F1 on LoCoMo's time-span questions."""
    computed = spanned(llm, question, evidence_texts) if span_first else None
    return computed or Answer(extractive(llm, question, evidence_texts, question_date=question_date))


def answer(llm: LLM, question: str, evidence_texts: Sequence[str], *, span_first: bool = True,
           question_date: str | None = None) -> str:
    """The text of :func:`answered`."""
    return answered(llm, question, evidence_texts, span_first=span_first, question_date=question_date).text


def dated_question(question: str, question_date: str | None) -> str:
    """The question line's text: as it is, or (LongMemEval, whose own reader gives the model the
    question's date) preceded by "Current date: ..." on its own line. Without a date the prompt is
    byte for byte the paper's, so LoCoMo's cached calls stay valid."""
    return f"Current date: {question_date}\nQuestion: {question}" if question_date else f"Question: {question}"


def extractive(llm: LLM, question: str, evidence_texts: Sequence[str], *, question_date: str | None = None) -> str:
    """The paper's extractive answerer (Appendix O) over ordered evidence snippets; ``question_date``
    (LongMemEval) is shown above the question and sent in the payload (the offline rules ignore it)."""

    def parse(obj: Any, raw: str) -> str:
        if isinstance(obj, dict) and isinstance(obj.get("answer"), str | int | float):
            text = str(obj["answer"]).strip()
        elif obj is None and raw.strip() and "{" not in raw:
            text = raw.strip()  # a model that ignored the format but answered
        else:
            raise ValueError("expected {\"answer\": \"...\"}")
        if not text:
            raise ValueError("empty answer")
        return text

    prompt = fill(ANSWER_PROMPT, question_line=dated_question(question, question_date),
                  evidence=numbered(evidence_texts))
    payload: dict[str, Any] = {"question": question, "evidence": list(evidence_texts)}
    if question_date:
        payload["question_date"] = question_date
    return complete_json(llm, build_request("answer", prompt, payload, ANSWER_SCHEMA, max_tokens=96), parse)

