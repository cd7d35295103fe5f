"""Role ``suff`` / ``adjudicate``: blinded, reference-conditioned LLM-Suff@Set (Appendix M).

Two judges, an adjudicator on disagreement. Blinding: the judges see the question, the reference
answer and numbered snippets only; :func:`suff_at_set` takes no ids, method, budget, system answer or
gold ids, and :func:`anonymise` strips record-id prefixes a caller may have left inside snippet texts.
Does not cover: which sets to judge (``evaluation.answers``), human labels (``evaluation.labels``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bfr_core.llm.base import LLM
from bfr_core.llm.retry import complete_json
from bfr_core.roles.prompting import EVIDENCE_BLOCK, REASON, build_request, fill, numbered, one_label

SUFF_LABELS = ("sufficient", "insufficient", "uncertain")
SUFF_PROMPT = EVIDENCE_BLOCK + """You will see a question, its reference answer, and an anonymized retained \
evidence set from a conversational memory store (the snippets above). The method, budget, system \
answer, and gold memory identifiers are not shown.
Task: Decide whether the evidence text supports the complete reference answer.
- Label sufficient if the complete answer is supported by the provided evidence.
- Label insufficient if a required fact, bridge, or temporal detail is missing.
- Label uncertain only when the evidence does not permit a reliable decision.
- Do not use outside knowledge beyond what is written in the evidence.

Example
Snippets: [1] I adopted a kitten on March 3rd.
Question: How many days after I adopted the kitten did I take her to the vet?
Reference answer: 7 days
{"reason": "[1] gives the adoption date; no snippet gives the vet visit date.", "label": "insufficient"}

Question: {question}
Reference answer: {reference}{disagreement}
{procedure} Reply with JSON only."""
# Two judging procedures over the same blinded input. With two different models both use "reason";
# with one model (a local run) judge B uses "cite", so the two judgments are two readings rather
# than one cached call. The procedure is the prompt's last line: both judges share everything
# before it, so a local model evaluates the evidence and the instructions once for the pair.
SUFF_PROCEDURES = {
    "reason": "Give a one-sentence reason, then the label.",
    "cite": "In the reason, name the snippet number that states each part of the reference answer, or the "
            "part no snippet states; then give the label.",
}
ADJUDICATE_NOTE = """

Two judges disagreed on this set:
Judge A: {label_a} ({reason_a})
Judge B: {label_b} ({reason_b})
Read the evidence yourself and give the final label."""
SUFF_SCHEMA = {"type": "object", "required": ["reason", "label"],
               "properties": {"reason": REASON, "label": {"type": "string", "enum": list(SUFF_LABELS)}}}

# Record ids a caller may have left inside snippet texts: LoCoMo dia ids (conv-26:D3:7, D3:7),
# LongMemEval turn/session ids (answer_4be1b6b4_2, 7f3e9a21_5), bracketed or "id:"-style prefixes.
_ID_PATTERNS = (
    re.compile(r"^\s*\[(?=[^\]]*\d)[^\]\s]{1,40}\]\s*[:\-\u2013]?\s*"),
    re.compile(r"\b(?:conv-\d+:)?D\d+:\d+\b\s*[:\-\u2013]?\s*"),
    re.compile(r"\b(?:answer|session|sharegpt|ultrachat)_[0-9a-zA-Z]{4,}(?:_\d+)*\b\s*[:\-\u2013]?\s*"),
    re.compile(r"\b[0-9a-f]{8}(?:_\d+)+\b\s*[:\-\u2013]?\s*"),
)


def anonymise(evidence_texts: Sequence[str]) -> list[str]:
    """Snippet texts with record-id markers removed, whitespace collapsed, duplicates dropped."""
    out = []
    for text in evidence_texts:
        for pat in _ID_PATTERNS:
            text = pat.sub("", text)
        text = " ".join(text.split())
        if text:
            out.append(text)
    return list(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class SuffResult:
    label: str  # sufficient | insufficient | uncertain (the final, possibly adjudicated, label)
    judge_labels: tuple[str, str]  # the two independent judges' labels
    adjudicated: bool  # True when the judges disagreed and the adjudicator decided
    reasons: tuple[str, ...] = ()  # one-sentence reasons: judge A, judge B[, adjudicator]

    @property
    def sufficient(self) -> bool | None:
        """S_LLM as in the paper's Eq. 2; None (excluded from rates) when uncertain."""
        return None if self.label == "uncertain" else self.label == "sufficient"


def _suff_call(llm: LLM, role: str, payload: dict[str, Any], disagreement: str = "",
               procedure: str = "reason") -> tuple[str, str]:
    prompt = fill(SUFF_PROMPT, question=payload["question"], reference=payload["reference"],
                   evidence=numbered(payload["evidence"]), disagreement=disagreement,
                   procedure=SUFF_PROCEDURES[procedure])

    def parse(obj: Any, raw: str) -> tuple[str, str]:
        label = one_label(obj, raw, "label", SUFF_LABELS, case=False)
        reason = str(obj.get("reason", "")).strip() if isinstance(obj, dict) else ""
        return label, " ".join(reason.split())[:300]

    return complete_json(llm, build_request(role, prompt, payload, SUFF_SCHEMA, max_tokens=160), parse)


def suff_at_set(judges: tuple[LLM, LLM], adjudicator: LLM, question: str, reference_answer: str,
                evidence_texts: Sequence[str], *, procedure_b: str = "reason") -> SuffResult:
    """Blinded, reference-conditioned LLM-Suff@Set (Appendix M) for one question-evidence snapshot.

    ``procedure_b`` is judge B's procedure (:data:`SUFF_PROCEDURES`): "cite" when one model is both
    judges, so that its two calls are two different readings (the same prompt would be one cached
    call and could never disagree).
    """
    payload = {"question": question, "reference": reference_answer, "evidence": anonymise(evidence_texts)}
    payload_b = {**payload, "procedure": procedure_b} if procedure_b != "reason" else payload
    la, ra = _suff_call(judges[0], "suff", payload)
    lb, rb = _suff_call(judges[1], "suff", payload_b, procedure=procedure_b)
    if la == lb:
        return SuffResult(la, (la, lb), False, (ra, rb))
    note = fill(ADJUDICATE_NOTE, label_a=la, reason_a=ra or "no reason given", label_b=lb,
                 reason_b=rb or "no reason given")
    adj_payload = {**payload, "labels": [la, lb]}
    label, reason = _suff_call(adjudicator, "adjudicate", adj_payload, disagreement=note)
    return SuffResult(label, (la, lb), True, (ra, rb, reason))
