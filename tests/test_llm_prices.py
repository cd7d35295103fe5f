"""Prices: longest-prefix match, unknown is None (never 0), overrides, self-hosted endpoints."""

from __future__ import annotations

import json

import pytest

from bfr_core.llm.prices import cost_usd, load_prices, price_key, unit_price


def test_known_unknown_and_free():
    assert unit_price("openai", "gpt-4o-mini-2024-07-18") == (0.15, 0.6)
    assert cost_usd("openai", "gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert cost_usd("openai", "my-model", 10, 10) is None
    assert cost_usd("nobody", "x", 10, 10) is None
    assert cost_usd("rules", "", 10, 10) == 0.0


def test_overrides_merge_over_the_table(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"openai@http://127.0.0.1:8000/v1": {"": [1.0, 2.0]}, "openai": {"gpt-4o": [9, 9]}}))
    table = load_prices(f)
    assert cost_usd("openai@http://127.0.0.1:8000/v1", "anything", 10**6, 10**6, table) == 3.0
    assert unit_price("openai", "gpt-4o", table) == (9.0, 9.0)
    assert unit_price("openai", "gpt-4o-mini", table) == (0.15, 0.6)


def test_price_key_of_self_hosted_and_official_clients():
    class P:
        provider, model = "openai", "m"

        def __init__(self, base_url: str) -> None:
            self.base_url = base_url

    class Wrap:
        provider, model = "openai", "m"

        def __init__(self, inner: object) -> None:
            self.inner = inner

    assert price_key(Wrap(P(""))) == "openai"
    assert price_key(Wrap(P("https://api.openai.com/v1"))) == "openai"
    assert price_key(Wrap(P("http://127.0.0.1:9/v1"))) == "openai@http://127.0.0.1:9/v1"
