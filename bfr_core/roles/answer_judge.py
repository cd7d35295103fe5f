"""Role ``judge``: the Mem0-style CORRECT/WRONG answer judge with the paper's prompt (Appendix O).

Does not cover: LongMemEval's official per-type judge, the offline judge's rules (``llm.rules``).
"""

from __future__ import annotations

from bfr_core.llm.base import LLM
from bfr_core.llm.retry import complete_json
from bfr_core.roles.prompting import REASON, build_request, fill, one_label

JUDGE_LABELS = ("CORRECT", "WRONG")
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
JUDGE_SCHEMA = {"type": "object", "required": ["reason", "label"],
                "properties": {"reason": REASON, "label": {"type": "string", "enum": list(JUDGE_LABELS)}}}


def judge(llm: LLM, question: str, gold: str, generated: str) -> str:
    """"CORRECT" or "WRONG" for ``generated`` against ``gold`` (the paper's answer judge)."""
    prompt = fill(JUDGE_PROMPT, question=question, gold_answer=gold, generated_answer=generated)
    payload = {"question": question, "gold": gold, "generated": generated}
    return complete_json(llm, build_request("judge", prompt, payload, JUDGE_SCHEMA, max_tokens=128),
                         lambda obj, raw: one_label(obj, raw, "label", JUDGE_LABELS, case=True))

