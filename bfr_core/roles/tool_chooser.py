"""Role ``tool``: the next retrieval action (MRAgent-Flat*'s policy step).

Does not cover: running the action (``baselines.mragent``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bfr_core.llm.base import LLM
from bfr_core.llm.retry import complete_json
from bfr_core.roles.prompting import as_object, build_request, fill, numbered

TOOL_DESCRIPTIONS = {
    "text": "search all memories with the question text",
    "entity": "fetch memories that mention a person named in the question",
    "session": "fetch the conversation around the latest evidence",
    "stop": "the evidence already answers the question",
}

TOOL_PROMPT = """Choose the next tool for finding evidence the question still needs.
Tools:
{tools}

Example
Question: How many days after I adopted the kitten did I take her to the vet?
Evidence:
[1] I adopted a kitten on March 3rd.
{"tool": "session"}

Question: {question}
Evidence:
{evidence}
Reply with JSON only: {"tool": one tool name}."""


def choose_tool(llm: LLM, question: str, evidence_texts: Sequence[str],
                tools: Sequence[str] | Mapping[str, str]) -> str:
    """One of ``tools`` (names, or name -> description) as the next retrieval action."""
    described = dict(tools) if isinstance(tools, Mapping) else {t: TOOL_DESCRIPTIONS.get(t, t) for t in tools}
    names = list(described)
    if not names:
        raise ValueError("choose_tool needs at least one tool")
    schema = {"type": "object", "required": ["tool"], "properties": {"tool": {"type": "string", "enum": names}}}

    def parse(obj: Any, raw: str) -> str:
        value = str(as_object(obj).get("tool", "")).strip().lower() if isinstance(obj, dict) else ""
        for name in names:
            if name.lower() == value:
                return name
        raise ValueError(f"'tool' must be one of {', '.join(names)}")

    prompt = fill(TOOL_PROMPT, question=question, evidence=numbered(evidence_texts),
                   tools="\n".join(f"- {n}: {d}" for n, d in described.items()))
    payload = {"question": question, "evidence": list(evidence_texts), "tools": names}
    return complete_json(llm, build_request("tool", prompt, payload, schema, max_tokens=32), parse)

