"""Role ``decompose``: question -> 1-5 requirements (facts, bridges, list items, temporal endpoints).

Stage I's LLM path (``method.requirements`` falls back to its offline decomposer without a model).
:func:`recorded` finds a model's reply to this role for a question in a store's LLM cache (the
demo ships the local model's, ``ingest.demo``), to show beside an offline run. :class:`Replay`
serves those recorded replies as an LLM that answers this role only, so an offline run can use a
model's decomposition without the model: a question with no recorded reply fails the call, and
Stage I goes on with the offline rules' requirements and says so in the trace.
Does not cover: matching requirements to turns (``method.requirements``); replaying any other role.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bfr_core.duck import fetch_if_tables
from bfr_core.llm.base import LLM, LLMCallFailed, LLMRequest, LLMResponse
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

    return complete_json(llm, request(question), parse)


def request(question: str) -> LLMRequest:
    """The role's request for ``question`` (its cache key is this request's)."""
    return build_request("decompose", fill(DECOMPOSE_PROMPT, question=question), {"question": question},
                         DECOMPOSE_SCHEMA, max_tokens=160)


@dataclass(frozen=True, slots=True)
class Recorded:
    """A model's decomposition of one question, as its LLM cache entry holds it."""

    requirements: tuple[str, ...]
    model: str  # "provider:model", e.g. "local:qwen2.5-coder-1.5b-instruct-q4_k_m"
    date: str  # the day the reply was stored (YYYY-MM-DD)


Q_RECORDED = """SELECT provider, model, response, strftime(created, '%Y-%m-%d') FROM llm_cache
WHERE prompt_sha256 = ? AND provider <> 'rules' ORDER BY created, provider, model"""


def recorded(store: Any, question: str) -> Recorded | None:
    """The oldest model reply to this role for ``question`` in ``store``'s LLM cache (any provider but
    the offline rules), parsed; None when there is none or it does not parse."""
    rows = fetch_if_tables(store.cursor(), Q_RECORDED, [request(question).sha256()])
    if rows is None:  # a store without an LLM cache yet
        return None
    for provider, model, text, day in rows:
        try:
            items = json.loads(text).get("requirements")
        except (json.JSONDecodeError, AttributeError):
            continue
        reqs = tuple(dict.fromkeys(" ".join(str(x).split()) for x in items or () if str(x).strip()))
        if reqs:
            return Recorded(reqs[:MAX_REQUIREMENTS], f"{provider}:{model}", str(day))
    return None



REPLAY_ROLES = frozenset({"decompose"})


class Replay:
    """An LLM that answers role ``decompose`` from the model replies recorded in ``store``'s LLM cache
    (:func:`recorded`) and makes no call; every other request, and a question without a recorded
    reply, raises :class:`LLMCallFailed` naming why. ``roles`` tells callers which roles it answers,
    so Stage I selects its cover by the rules rather than asking it to select."""

    provider = "recorded"
    model = "replay"
    roles = REPLAY_ROLES

    def __init__(self, store: Any) -> None:
        self.store = store
        self.used: dict[str, str] = {}  # question -> "provider:model on YYYY-MM-DD" of each reply served

    @property
    def label(self) -> str:
        sources = sorted(set(self.used.values()))
        return "recorded decomposition" + (f" ({', '.join(sources)})" if sources else "")

    def complete(self, req: LLMRequest) -> LLMResponse:
        if req.role not in self.roles:
            raise LLMCallFailed(f"recorded replies answer role decompose only, not {req.role or 'this call'}")
        question = json.loads(req.payload or "{}").get("question", "")
        if req.sha256() != request(question).sha256():
            raise LLMCallFailed("a re-asked decompose request has no recorded reply")
        rec = recorded(self.store, question)
        if rec is None:
            raise LLMCallFailed("no recorded decomposition of this question")
        self.used[question] = f"{rec.model} on {rec.date}"
        return LLMResponse(json.dumps({"requirements": list(rec.requirements)}), cached=True, attempts=0)
