"""The LLM layer: one Protocol, four backends, and the wrappers every call goes through.

``make_llm(LLMConfig, store)`` returns a client that answers from the store's ``llm_cache`` when it
can (a rerun makes no provider call), retries 429 / 5xx / timeouts with seeded exponential backoff,
caps concurrency, and logs each call under a run id in ``llm_calls``. Backends: ``rules`` ("offline
rules", deterministic heuristics, the default), ``anthropic``, ``openai`` (any OpenAI-compatible
``base_url``) and ``local`` (llama-cpp-python, optional extra). The roles built on it live in
:mod:`bfr_core.roles`.
"""

from bfr_core.llm.base import (
    LLM,
    LLMCallFailed,
    LLMConfigError,
    LLMError,
    LLMRequest,
    LLMResponse,
    ProviderError,
    Secret,
)
from bfr_core.llm.cache import CachedLLM, CallSummary, LLMCache, call_summary, export_calls, spent_ms
from bfr_core.llm.factory import api_key, make_llm, make_provider
from bfr_core.llm.retry import RetryingLLM, RetryPolicy, complete_json, repair_json
from bfr_core.llm.rules import RulesLLM

__all__ = [
    "LLM", "CachedLLM", "CallSummary", "LLMCache", "LLMCallFailed", "LLMConfigError", "LLMError",
    "LLMRequest", "LLMResponse", "ProviderError", "RetryPolicy", "RetryingLLM", "RulesLLM", "Secret",
    "api_key", "call_summary", "complete_json", "export_calls", "make_llm", "make_provider", "repair_json", "spent_ms",
]
