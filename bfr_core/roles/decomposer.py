"""Role ``decompose``: question -> 1-5 requirements (facts, bridges, list items, temporal endpoints).

Stage I's LLM path (``method.requirements`` falls back to its offline decomposer without a model).
Does not cover: matching requirements to turns (``method.requirements``).
"""

from __future__ import annotations

from typing import Any

from bfr_core.llm.base import LLM
from bfr_core.llm.retry import complete_json
from bfr_core.roles.prompting import as_object, build_request, fill

MAX_REQUIREMENTS = 5
DECOMPOSE_PROMPT = """List the pieces of information needed to answer the question: each separate fact, \
each link between facts, each list item, and both dates of a time span. Give 1 to 5 short items.

Example
Question: How many weeks passed between my move to Denver and my first marathon?
{"requirements": ["date I moved to Denver", "date of my first marathon"]}

Question: {question}
Reply with JSON only."""
DECOMPOSE_SCHEMA = {
    "type": "object", "required": ["requirements"],
    "properties": {"requirements": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                                    "maxItems": MAX_REQUIREMENTS}},
}


def decompose(llm: LLM, question: str) -> list[str]:
    """1-5 requirement texts (facts, bridges, list items, temporal endpoints) for ``question``."""

    def parse(obj: Any, raw: str) -> list[str]:
        items = obj if isinstance(obj, list) else as_object(obj).get("requirements")
        if not isinstance(items, list):
            raise ValueError("expected a 'requirements' list")
        reqs = list(dict.fromkeys(" ".join(str(x).split()) for x in items if str(x).strip()))
        if not reqs:
            raise ValueError("no requirements given")
        return reqs[:MAX_REQUIREMENTS]

    req = build_request("decompose", fill(DECOMPOSE_PROMPT, question=question), {"question": question},
                   DECOMPOSE_SCHEMA, max_tokens=160)
    return complete_json(llm, req, parse)

