"""The helpers the two SDK providers (``anthropic_provider``, ``openai_provider``) share.

Covers: :func:`price` (a call's indicative cost from a provider's price table), which HTTP statuses
are worth retrying (:func:`status_is_transient`), a ``Retry-After`` header read as seconds
(:func:`retry_after_s`) and :func:`sdk_error`, an SDK exception translated into a
:class:`~bfr_core.llm.base.ProviderError` with every configured key scrubbed from its message. They
sit apart from the :class:`~bfr_core.llm.base.LLM` Protocol because the scrubbing needs
``secrets.py``, which builds on ``base.py``. Does not cover: the SDK calls themselves (the providers),
retrying (``retry.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from bfr_core.llm.base import ProviderError
from bfr_core.llm.secrets import Redactor


def price(model: str, tokens_in: int, tokens_out: int, table: dict[str, tuple[float, float]]) -> float:
    """Cost in USD by the longest matching model-id prefix of ``table`` (0 when none matches)."""
    match = max((p for p in table if model.startswith(p)), key=len, default=None)
    if match is None:
        return 0.0
    pin, pout = table[match]
    return (tokens_in * pin + tokens_out * pout) / 1_000_000


def status_is_transient(status: int | None) -> bool:
    """429 and every 5xx (Anthropic's 529 "overloaded" included) are worth retrying."""
    return status is not None and (status == 429 or status == 408 or status >= 500)


def retry_after_s(headers: object) -> float | None:
    try:
        value = headers.get("retry-after")  # type: ignore[attr-defined]
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def sdk_error(provider: str, errors: object, exc: Exception, secrets: Iterable[str]) -> ProviderError:
    """A :class:`ProviderError` for an exception of the ``anthropic`` / ``openai`` SDK (``errors`` is
    the SDK module: both name their error classes alike). Messages are scrubbed of ``secrets`` before
    they are cut short (a cut could leave a fragment the scrubber does not see whole); timeouts,
    connection failures, 429/5xx and unparseable bodies are transient."""
    redact = Redactor(secrets)
    if isinstance(exc, errors.APITimeoutError):  # type: ignore[attr-defined]
        return ProviderError(f"{provider}: request timed out", transient=True)
    if isinstance(exc, errors.APIStatusError):  # type: ignore[attr-defined]
        status = getattr(exc, "status_code", None)
        detail = redact(str(getattr(exc, "message", "") or exc))[:300]
        headers = getattr(getattr(exc, "response", None), "headers", None)
        return ProviderError(f"{provider}: HTTP {status}: {detail}", status=status,
                             transient=status_is_transient(status), retry_after=retry_after_s(headers))
    if isinstance(exc, errors.APIConnectionError):  # type: ignore[attr-defined]
        return ProviderError(f"{provider}: connection failed", transient=True)
    # an unparseable or truncated response body, or anything else the SDK raised
    detail = redact(str(exc))[:200]
    return ProviderError(f"{provider}: bad response ({type(exc).__name__}: {detail})", transient=True)
