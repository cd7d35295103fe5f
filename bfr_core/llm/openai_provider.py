"""OpenAI Chat Completions through the ``openai`` SDK, against OpenAI or any compatible server.

Covers: api.openai.com and self-hosted OpenAI-compatible endpoints (vLLM, Ollama, llama.cpp
server) via ``base_url``; ``response_format={"type": "json_object"}`` for JSON roles; usage and an
indicative cost; SDK errors translated into :class:`ProviderError` with the key scrubbed. The SDK's
own retries are off (``retry.py`` owns them).

Two compatibility choices: against api.openai.com the cap is sent as ``max_completion_tokens``
(newer models reject ``max_tokens``), elsewhere as ``max_tokens`` (what local servers read); and a
model that answers 400 to an explicit ``temperature`` is asked once more without it.
Self-hosted servers usually need no key; a placeholder is sent when none is configured.
"""

from __future__ import annotations

from bfr_core.llm.base import LLMRequest, LLMResponse, ProviderError, Secret
from bfr_core.llm.prices import PRICES as TABLE
from bfr_core.llm.sdk import price, sdk_error

DEFAULT_MODEL = "gpt-5.5"  # the paper's answer judge (Section 5.1); set `model` for other servers

# USD per million tokens (input, output) by model-id prefix, api.openai.com only; indicative.
PRICES = TABLE["openai"]


class OpenAILLM:
    provider = "openai"

    def __init__(self, model: str = "", *, api_key: Secret | None, base_url: str = "", timeout_s: float = 60.0):
        import openai  # optional dependency: openai

        self.model = model or DEFAULT_MODEL
        self.base_url = base_url
        self._key = api_key or Secret("")
        self._errors = openai
        self._official = not base_url or "api.openai.com" in base_url
        self._drop_temperature = False
        self._client = openai.OpenAI(
            api_key=self._key.reveal() or "no-key-needed", base_url=base_url or None,
            timeout=timeout_s, max_retries=0,
        )

    @property
    def label(self) -> str:
        return f"openai:{self.model}" + (f"@{self.base_url}" if self.base_url else "")

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"OpenAILLM(model={self.model!r}{where})"

    def _kwargs(self, request: LLMRequest) -> dict:
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages.append({"role": "user", "content": request.prompt})
        kwargs: dict = {"model": self.model, "messages": messages}
        kwargs["max_completion_tokens" if self._official else "max_tokens"] = request.max_tokens
        if not self._drop_temperature:
            kwargs["temperature"] = request.temperature
        if request.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            out = self._client.chat.completions.create(**self._kwargs(request))
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a ProviderError
            err = self._translate(exc)
            if err.status == 400 and "temperature" in err.reason and not self._drop_temperature:
                self._drop_temperature = True
                return self.complete(request)
            raise err from None
        try:
            choice = out.choices[0]
            text = choice.message.content or ""
            usage = out.usage
            tin = int(getattr(usage, "prompt_tokens", 0) or 0) if usage else 0
            tout = int(getattr(usage, "completion_tokens", 0) or 0) if usage else 0
        except (AttributeError, IndexError, TypeError) as exc:
            raise ProviderError(f"openai: unexpected response shape ({type(exc).__name__})",
                                transient=True) from None
        cost = price(self.model, tin, tout, PRICES) if self._official else 0.0
        return LLMResponse(text, tin, tout, cost, truncated=choice.finish_reason == "length")

    def _translate(self, exc: Exception) -> ProviderError:
        return sdk_error("openai", self._errors, exc, [self._key.reveal()])
