"""What every LLM role shares: template filling, numbered snippets, the request, reply checks.

Covers: one-pass ``{name}`` substitution (:func:`fill`), numbered snippet lines with their date headers
(:func:`numbered`), the JSON request every role sends (:func:`build_request`), the two reply checks
(:func:`as_object`, :func:`one_label`), and the evidence block the evidence-reading prompts open with.
Does not cover: any one role's prompt (each lives beside its role in ``roles/``).

Every role works with any :class:`~bfr_core.llm.base.LLM`, the "offline rules" backend included:
the request carries the rendered prompt for a model and the same inputs as JSON for the rules.
Replies are repaired and validated; an unusable reply is re-asked once (``complete_json``); a call
that still fails raises :class:`~bfr_core.llm.base.LLMCallFailed`, which callers record and move past.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from bfr_core.llm.base import LLMRequest
from bfr_core.roles.snippets import DATED

# Evidence-reading prompts (answer, both Suff@Set judges, the adjudicator) open with the same
# evidence block and put their instructions after it. The wording is the paper's (Appendix O / M);
# only the order differs, so that a local model evaluates a set's snippets once and reuses that
# prefix (llama.cpp's KV cache) for every role that reads the same set.
EVIDENCE_BLOCK = """Evidence snippets, in order:
{evidence}

"""
# A grammar-constrained model emits the schema's properties in order: the reason first, as the
# prompts ask, capped so that a runaway reason cannot spend the whole reply budget.
REASON = {"type": "string", "maxLength": 200}


def fill(template: str, **values: str) -> str:
    """One-pass ``{name}`` substitution: braces in JSON examples and in user text stay as they are."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def numbered(texts: Sequence[str], prefix: str = "") -> str:
    """``[1] text`` lines. Snippets rendered as "(date) speaker: text" get the date as a header line
    whenever it changes instead of on every line: the same words, ~10% fewer tokens for a model."""
    lines: list[str] = []
    last = None
    for i, text in enumerate(texts, 1):
        text = " ".join(text.split())
        m = DATED.match(text)
        if m:
            if m.group(1) != last:
                lines.append(f"{m.group(1)}:")
                last = m.group(1)
            text = text[m.end():]
        lines.append(f"[{prefix}{i}] {text}")
    return "\n".join(lines) or "(none)"


def build_request(role: str, prompt: str, payload: dict[str, Any], schema: dict[str, Any],
                  max_tokens: int = 256) -> LLMRequest:
    return LLMRequest(
        prompt=prompt, role=role, payload=json.dumps(payload, ensure_ascii=False, sort_keys=True),
        json_mode=True, json_schema=json.dumps(schema), max_tokens=max_tokens,
    )


def as_object(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    return obj


def one_label(obj: Any, raw: str, key: str, labels: Sequence[str], *, case: bool) -> str:
    """The label from ``{"label": ...}``, else the only one of ``labels`` the raw text names."""
    if isinstance(obj, dict) and isinstance(obj.get(key), str):
        value = obj[key].strip()
        for lab in labels:
            if (value if case else value.lower()) == lab:
                return lab
    text = raw if case else raw.lower()
    found = [lab for lab in labels if re.search(rf"\b{lab}\b", text)]
    if len(found) == 1:
        return found[0]
    raise ValueError(f"expected {key} to be one of {', '.join(labels)}")

