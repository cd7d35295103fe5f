"""Role ``antecedent``: a message whose words carry little -> the earlier message it most likely refers back to.

The associative step of ``conv-fusion``: where its gate reads that the question's words carry little
(``method.word_trust``: a remark, or no turn standing out lexically), a model writes the earlier chat
message the question presupposes or follows from (a cause, a goal, a state, a value, or the fact a
question asks about), and the dense part of the ranking searches with that message beside the
question (``method.ours.associate``), as hypothetical-document retrieval does (HyDE: Gao et al., 2022).
The offline rules cannot guess an antecedent, so they answer "undecided" (an empty statement) and
the ranking stays the question's own.

Does not cover: how the statement's similarity is combined with the question's (``method.ours``).
"""

from __future__ import annotations

from typing import Any

from bfr_core.llm.base import LLM, LLMRequest
from bfr_core.llm.retry import complete_json
from bfr_core.roles.prompting import as_object, build_request, fill

MAX_WORDS = 40  # one short chat message; longer replies are cut here
# The example is our own wording, not a benchmark's.
ANTECEDENT_PROMPT = """A person in a long chat wrote the message below. It refers back to something they \
said earlier without repeating it: a cause, a goal, a state, a value or a fact. Write that earlier message \
as they would have written it, one short sentence in the first person.

Example
Message: Turns out the cheap overnight flight was a mistake, I barely slept before the interview.
{"statement": "I booked the cheapest flight I could find for my job interview in Boston."}

Message: {question}
Reply with JSON only."""
ANTECEDENT_SCHEMA = {
    "type": "object", "required": ["statement"],
    "properties": {"statement": {"type": "string", "maxLength": 300}},
}
UNDECIDED = ""  # what the offline rules answer: no antecedent guessed


def antecedent(llm: LLM, question: str) -> str:
    """The earlier message ``question`` most likely refers back to (at most :data:`MAX_WORDS` words);
    :data:`UNDECIDED` when the backend cannot say (the offline rules)."""

    def parse(obj: Any, raw: str) -> str:
        value = as_object(obj).get("statement")
        if not isinstance(value, str):
            raise ValueError("expected a 'statement' string")
        return " ".join(value.split()[:MAX_WORDS])

    return complete_json(llm, request(question), parse)


def request(question: str) -> LLMRequest:
    """The role's request for ``question`` (its cache key is this request's)."""
    return build_request("antecedent", fill(ANTECEDENT_PROMPT, question=question), {"question": question},
                         ANTECEDENT_SCHEMA, max_tokens=80)
