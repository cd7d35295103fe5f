"""Role ``lme_judge``: LongMemEval's official yes/no QA judge, one prompt per question type.

Covers: :func:`prompt_for` (the prompt LongMemEval's ``src/evaluation/evaluate_qa.py`` picks for a
question type, or its abstention prompt for an ``_abs`` question), :func:`label_of` (its reply rule:
correct when the reply contains "yes"), :func:`lme_judge` (one call, max 10 tokens, temperature 0, as
the official script asks). The prompts are the official wording, because they are the spec; the code
here is written anew.

Does not cover: the paper's Mem0-style judge (``roles.answer_judge``), the offline backend's rules for
this role (``llm.rules.lme_judge``, which may answer "undecided": :data:`UNDECIDED`), aggregating
labels (``evaluation.evaluate``). The question type reaches this judge only, never a method.

Prompt wording from LongMemEval (https://github.com/xiaowu0162/LongMemEval),
``src/evaluation/evaluate_qa.py``, under the MIT License: Copyright (c) 2024 Di Wu. Permission is
hereby granted, free of charge, to any person obtaining a copy of this software and associated
documentation files (the "Software"), to deal in the Software without restriction, including without
limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do so, subject to the
following conditions: The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF
ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS
FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE
LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE,
ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
"""

from __future__ import annotations

import json
from typing import Any

from bfr_core.llm.base import LLM, LLMRequest
from bfr_core.llm.retry import complete_json

YES, NO = "yes", "no"
UNDECIDED = "undecided"  # only the offline rules backend says this; a model's reply is yes or no
LABELS = (YES, NO, UNDECIDED)

_HEAD = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if "
         "the response contains the correct answer. Otherwise, answer no. ")
_STEPS = ("If the response is equivalent to the correct answer or contains all the intermediate steps to get "
          "the correct answer, you should also answer yes. If the response only contains a subset of the "
          "information required by the answer, answer no. ")
_TAIL = ("\n\nQuestion: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\n"
         "Is the model response correct? Answer yes or no only.")

FACT_PROMPT = _HEAD + _STEPS + _TAIL
TEMPORAL_PROMPT = _HEAD + _STEPS + (
    "In addition, do not penalize off-by-one errors for the number of days. If the question asks for the "
    "number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when "
    "the answer is 18), the model's response is still correct. ") + _TAIL
UPDATE_PROMPT = _HEAD + (
    "If the response contains some previous information along with an updated answer, the response should be "
    "considered as correct as long as the updated answer is the required answer.") + _TAIL
PREFERENCE_PROMPT = (
    "I will give you a question, a rubric for desired personalized response, and a response from a model. "
    "Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does "
    "not need to reflect all the points in the rubric. The response is correct as long as it recalls and "
    "utilizes the user's personal information correctly.\n\nQuestion: {question}\n\nRubric: {answer}\n\n"
    "Model Response: {response}\n\nIs the model response correct? Answer yes or no only.")
ABSTENTION_PROMPT = (
    "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes "
    "if the model correctly identifies the question as unanswerable. The model could say that the information "
    "is incomplete, or some other information is given but the asked information is not.\n\nQuestion: "
    "{question}\n\nExplanation: {answer}\n\nModel Response: {response}\n\nDoes the model correctly identify "
    "the question as unanswerable? Answer yes or no only.")

PROMPTS = {
    "single-session-user": FACT_PROMPT, "single-session-assistant": FACT_PROMPT, "multi-session": FACT_PROMPT,
    "temporal-reasoning": TEMPORAL_PROMPT, "knowledge-update": UPDATE_PROMPT,
    "single-session-preference": PREFERENCE_PROMPT,
}
QUESTION_TYPES = tuple(PROMPTS)


def prompt_kind(qtype: str, abstention: bool) -> str:
    """Which prompt judges this question: ``"abstention"`` or its question type. Raises ``ValueError``
    for a type LongMemEval has no prompt for (the official script raises too)."""
    if abstention:
        return "abstention"
    if qtype not in PROMPTS:
        raise ValueError(f"LongMemEval's judge has no prompt for question type '{qtype}'")
    return qtype


def prompt_for(qtype: str, question: str, answer: str, response: str, *, abstention: bool = False) -> str:
    """The official judge prompt for one (question, gold answer or rubric or explanation, response).
    Plain ``str.replace`` of the three fields, in order, so braces in any of them stay as they are."""
    kind = prompt_kind(qtype, abstention)
    template = ABSTENTION_PROMPT if kind == "abstention" else PROMPTS[kind]
    head, rest = template.split("{question}")
    mid, tail = rest.split("{answer}")
    before, after = tail.split("{response}")
    return head + question + mid + answer + before + response + after


def label_of(reply: str) -> str:
    """The official rule: "yes" when the reply contains "yes" (any case), else "no". A JSON reply
    ``{"label": ...}`` naming one of :data:`LABELS` (the offline rules backend's, with its reason) is
    read by its label, so that "undecided" stays :data:`UNDECIDED`."""
    text = reply.strip()
    try:
        obj: Any = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict) and obj.get("label") in LABELS:
        return str(obj["label"])
    return YES if "yes" in text.lower() else NO


def build(qtype: str, question: str, answer: str, response: str, *, abstention: bool = False) -> LLMRequest:
    """The request: a plain-text reply (no JSON mode), at most 10 tokens, temperature 0, as the official
    script sends it; the payload carries the same inputs (and the prompt kind) for the rules backend."""
    payload = {"kind": prompt_kind(qtype, abstention), "question": question, "answer": answer,
               "response": response}
    return LLMRequest(prompt=prompt_for(qtype, question, answer, response, abstention=abstention),
                      role="lme_judge", payload=json.dumps(payload, ensure_ascii=False, sort_keys=True),
                      max_tokens=10)


def lme_judge(llm: LLM, qtype: str, question: str, answer: str, response: str, *,
              abstention: bool = False) -> str:
    """"yes" | "no" (| "undecided" from the offline rules) for ``response`` by LongMemEval's judge."""
    request = build(qtype, question, answer, response, abstention=abstention)
    return complete_json(llm, request, lambda obj, raw: label_of(raw))
