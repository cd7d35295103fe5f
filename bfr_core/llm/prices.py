"""What a model's tokens cost: one table per provider, matched by model-id prefix, overridable.

Covers: :data:`PRICES` (USD per million tokens, input and output; indicative list prices, not a
quote), :func:`unit_price` (the longest matching prefix, or None: "unknown price", never a guess),
:func:`cost_usd` and :func:`load_prices` (a JSON file ``{"provider": {"model-prefix": [in, out]}}``
merged over the table, e.g. for a negotiated rate or a self-hosted model). Does not cover: counting
tokens (providers report them; ``limits.count_tokens`` estimates them).

A self-hosted OpenAI-compatible endpoint (``base_url`` not api.openai.com) has no list price: it is
"unknown" unless an override names it under the provider key ``openai@<base_url>`` or ``openai``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from bfr_core.errors import BfrError

PriceTable = Mapping[str, Mapping[str, tuple[float, float]]]

PRICES: dict[str, dict[str, tuple[float, float]]] = {
    "openai": {
        "gpt-4o-mini": (0.15, 0.6),
        "gpt-4o": (2.5, 10.0),
        "gpt-4.1-nano": (0.1, 0.4),
        "gpt-4.1-mini": (0.4, 1.6),
        "gpt-4.1": (2.0, 8.0),
        "gpt-5-nano": (0.05, 0.4),
        "gpt-5-mini": (0.25, 2.0),
        "gpt-5": (1.25, 10.0),
    },
    "anthropic": {
        "claude-opus-4-1": (15.0, 75.0),
        "claude-opus-4-0": (15.0, 75.0),
        "claude-opus-4": (5.0, 25.0),
        "claude-sonnet-4": (3.0, 15.0),
        "claude-3-7-sonnet": (3.0, 15.0),
        "claude-3-5-sonnet": (3.0, 15.0),
        "claude-haiku-4": (1.0, 5.0),
        "claude-3-5-haiku": (0.8, 4.0),
        "claude-3-haiku": (0.25, 1.25),
    },
    "rules": {"": (0.0, 0.0)},  # the offline backend is free
    "local": {"": (0.0, 0.0)},  # the local model costs electricity only
}


def unit_price(provider: str, model: str, table: PriceTable = PRICES) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model`` at ``provider``; None when unknown."""
    prices = table.get(provider)
    if not prices:
        return None
    match = max((p for p in prices if model.startswith(p)), key=len, default=None)
    return None if match is None else tuple(prices[match])  # type: ignore[return-value]


def cost_usd(provider: str, model: str, tokens_in: int, tokens_out: int,
             table: PriceTable = PRICES) -> float | None:
    """Cost in USD, or None when the price is unknown."""
    p = unit_price(provider, model, table)
    return None if p is None else (tokens_in * p[0] + tokens_out * p[1]) / 1_000_000


def load_prices(path: str | Path | None) -> dict[str, dict[str, tuple[float, float]]]:
    """The table with the file's entries merged over it (a missing path: the table as is)."""
    merged = {k: dict(v) for k, v in PRICES.items()}
    if not path:
        return merged
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BfrError(f"--prices {path}: cannot read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BfrError(f"--prices {path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BfrError(f'--prices {path}: expected {{"provider": {{"model-prefix": [usd_in, usd_out]}}}}')
    for provider, models in data.items():
        try:
            merged.setdefault(str(provider), {}).update({str(m): _pair(v) for m, v in models.items()})
        except (AttributeError, TypeError, ValueError):
            raise BfrError(f"--prices {path}, provider '{provider}': each model prefix needs "
                           "[usd_in, usd_out] per 1M tokens, two numbers >= 0") from None
    return merged


def _pair(v: object) -> tuple[float, float]:
    if not isinstance(v, list | tuple):
        raise TypeError("a price is a list of two numbers")
    a, b = (float(x) for x in v)
    if not (0 <= a < float("inf") and 0 <= b < float("inf")):
        raise ValueError("price out of range")
    return a, b


OFFICIAL_HOSTS = ("api.openai.com", "api.anthropic.com")


def price_key(client: object) -> str:
    """The table key of a client: its provider, or ``provider@base_url`` for a self-hosted endpoint
    (looked up through wrappers' ``inner``)."""
    provider = str(getattr(client, "provider", ""))
    seen: object | None = client
    while seen is not None:
        base = getattr(seen, "base_url", None)
        if base is not None:
            return provider if not base or any(h in base for h in OFFICIAL_HOSTS) else f"{provider}@{base}"
        seen = getattr(seen, "inner", None)
    return provider
