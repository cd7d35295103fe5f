"""Role ``judge``: the Mem0-style CORRECT/WRONG answer judge with the paper's prompt (Appendix O).

Covers: :func:`judgment` (label and the judge's one-sentence reason, under the paper's prompt or the
strict one, :data:`STRICT_PROMPT`) and :func:`judge` (the label
alone). A model keeps the paper's two labels (a third is an unusable reply, re-asked once); only the
offline rules provider (``provider == "rules"``) may also answer :data:`UNDECIDED` ("undecided
offline"), which the metrics leave out of the J rate and count apart (``evaluation.evaluate``).

Does not cover: LongMemEval's official per-type judge (``roles.lme_judge``), the offline judge's rules (``llm.rules``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bfr_core.llm.base import LLM
from bfr_core.llm.retry import complete_json
from bfr_core.roles.prompting import REASON, build_request, fill, one_label

JUDGE_LABELS = ("CORRECT", "WRONG")
UNDECIDED = "UNDECIDED"  # offline rules only: the rules cannot tell (never a model's label)
OFFLINE_PROVIDER = "rules"
# The Mem0-style judge prompt exactly as the paper prints it (Appendix O; mem0_accuracy_v1).
JUDGE_PROMPT = """Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given \
the following data:
- a question (posed by one user to another user),
- a 'gold' (ground truth) answer,
- a generated answer which you will score as CORRECT/WRONG.
The point of the question is to ask about something one user should know about the other user based \
on their prior conversations. The gold answer will usually be a concise and short answer that \
includes the referenced topic. The generated answer might be much longer, but you should be generous \
with your grading—as long as it touches on the same topic as the gold answer, it should be counted \
as CORRECT.
For time related questions, the gold answer will be a specific date, month, year, etc. The generated \
answer might be much longer or use relative time references, but you should be generous with your \
grading—as long as it refers to the same date or time period as the gold answer, it should be \
counted as CORRECT. Even if the format differs (e.g., “May 7th” vs “7 May”), consider it CORRECT if \
it is the same date.
Now it’s time for the real question:
Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}
First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or \
WRONG. Do NOT include both CORRECT and WRONG in your response. Just return the label CORRECT or \
WRONG in a json format with the key as “label”:
{"label": "CORRECT"}"""
# A strict judge (this workbench's own wording): the same inputs and reply as the paper's, but an answer
# is correct only when it states what the gold states; a vaguer answer, a hedge between options or a
# different date, number, name or place is wrong, however close the topic. Everything fixed (the rules
# and the reply format) comes before the three inputs, so a local model evaluates that prefix once and
# reuses it from its KV cache for every answer; only the inputs are evaluated per verdict.
STRICT_PROMPT = """Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given \
a question about a conversation, a 'gold' (ground truth) answer, and a generated answer.
Label the generated answer CORRECT only if it states the same facts as the gold answer: the same \
people, things, places, numbers and dates. Wording, length and format may differ ("May 7th" and "7 May" \
are the same date; "a week" and "7 days" the same length). Label it WRONG if it is vaguer than the \
gold answer (a season or a year where the gold gives a day, "something creative" where the gold names \
the thing), if it hedges between several answers, if it adds a claim that contradicts the gold, or if \
any date, number, name or place differs. Being on the same topic is not enough.
First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or \
WRONG, in a json format with the keys "reason" and "label":
{"reason": "...", "label": "CORRECT"}
Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}"""
PROMPTS = {"mem0": JUDGE_PROMPT, "strict": STRICT_PROMPT}
JUDGE_SCHEMA = {"type": "object", "required": ["reason", "label"],
                "properties": {"reason": REASON, "label": {"type": "string", "enum": list(JUDGE_LABELS)}}}


@dataclass(frozen=True, slots=True)
class Judgment:
    """A verdict on one answer: CORRECT / WRONG (or UNDECIDED from the offline rules) and why."""

    label: str
    reason: str


def _labels(llm: LLM) -> tuple[str, ...]:
    return (*JUDGE_LABELS, UNDECIDED) if getattr(llm, "provider", "") == OFFLINE_PROVIDER else JUDGE_LABELS


def _parse(labels: tuple[str, ...]) -> Any:
    def parse(obj: Any, raw: str) -> Judgment:
        label = one_label(obj, raw, "label", labels, case=True)
        reason = obj.get("reason") if isinstance(obj, dict) else None
        if not isinstance(reason, str) or not reason.strip():
            reason = raw.strip()
        return Judgment(label, " ".join(reason.split())[:300])
    return parse


def judgment(llm: LLM, question: str, gold: str, generated: str, *, prompt_name: str = "mem0") -> Judgment:
    """The answer judge on ``generated`` against ``gold``, with its reason: the paper's prompt
    (``mem0``) or :data:`STRICT_PROMPT` (``strict``)."""
    prompt = fill(PROMPTS[prompt_name], question=question, gold_answer=gold, generated_answer=generated)
    payload = {"question": question, "gold": gold, "generated": generated}
    return complete_json(llm, build_request("judge", prompt, payload, JUDGE_SCHEMA, max_tokens=128),
                         _parse(_labels(llm)))


def judge(llm: LLM, question: str, gold: str, generated: str) -> str:
    """"CORRECT" or "WRONG" (or "UNDECIDED" from the offline rules): :func:`judgment`'s label."""
    return judgment(llm, question, gold, generated).label
