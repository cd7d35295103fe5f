"""The one call every LLM backend answers, its request/response records, and its errors.

Covers: :class:`LLMRequest` / :class:`LLMResponse` (frozen), the :class:`LLM` Protocol, the error
classes the retry layer and callers act on, the prompt hash that keys the cache. Does not cover:
key redaction (``secrets.py``), providers and the helpers they share (``sdk.py``), caching,
retries (``cache.py``, ``retry.py``) or the roles built on top (``bfr_core.roles``).

A request carries both the rendered ``prompt`` (what a real model reads) and ``payload``, the same
inputs as canonical JSON (what the deterministic "offline rules" backend reads), so every backend,
the cache and the call log see one uniform call.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bfr_core.errors import BfrError


@dataclass(frozen=True, slots=True)
class LLMRequest:
    prompt: str  # the user message
    system: str = ""  # optional system message
    role: str = ""  # which role asks (decompose, select, tool, answer, judge, suff); for the call log
    payload: str = ""  # the role's inputs as canonical JSON; read by the offline rules backend
    json_mode: bool = False  # ask the backend for a JSON object (response_format where supported)
    json_schema: str = ""  # optional JSON schema (as text) that JSON-constrained backends enforce
    max_tokens: int = 256  # generation cap; every role answers in a few dozen tokens
    temperature: float = 0.0  # the paper runs every call at temperature zero

    def sha256(self) -> str:
        """Hash of everything that can change a model's reply (the cache key's prompt part)."""
        blob = json.dumps(
            [self.system, self.prompt, self.payload, self.json_mode, self.json_schema, self.max_tokens],
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class LLMResponse:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0  # estimated from the provider's price table; 0 when unknown or local
    cached: bool = False  # served from the llm_cache table, no provider call made
    attempts: int = 1  # provider attempts the retry layer spent (0 when cached)
    truncated: bool = False  # the provider stopped at max_tokens


@runtime_checkable
class LLM(Protocol):
    """Anything that completes a request: a provider, or a wrapper (cache, retry) around one."""

    provider: str  # "rules" | "anthropic" | "openai" | "local"
    model: str  # the model id that goes into the cache key

    @property
    def label(self) -> str: ...  # shown to people, e.g. "offline rules", "anthropic:claude-..."

    def complete(self, request: LLMRequest) -> LLMResponse: ...


# -- errors ----------------------------------------------------------------------------------
class LLMError(BfrError):
    """Base class of LLM-layer errors. Messages never contain an API key (``secrets.ScrubbedLLM``)."""


class LLMConfigError(LLMError):
    """The LLM cannot be set up: unknown provider, missing key, missing model file."""


class ProviderError(LLMError):
    """One failed provider attempt. ``transient`` ones (429, 5xx, timeouts, broken bodies) are
    retried by :mod:`bfr_core.llm.retry`; the others (401, 400, 404) fail at once."""

    def __init__(
        self, reason: str, *, status: int | None = None, transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason, self.status, self.transient, self.retry_after = reason, status, transient, retry_after


class LLMCallFailed(LLMError):
    """A call that failed for good (after retries, or a reply still unusable after one re-ask).

    Callers record the question as failed with ``reason`` and go on with the next one.
    """

    def __init__(self, reason: str, *, attempts: int = 0) -> None:
        super().__init__(reason)
        self.reason, self.attempts = reason, attempts


class Secret:
    """An API key that prints as ``***`` in reprs, f-strings and tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __reduce__(self) -> tuple:  # never pickle the key into a cache or a worker payload
        raise TypeError("Secret cannot be pickled")
