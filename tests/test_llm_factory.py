"""make_llm wiring, provider selection, and the local backend's install checks and GGUF assembly
(with stand-in part packages; the real model runs only in test_llm_local.py)."""

from __future__ import annotations

import sys
import types

import pytest

from bfr_core.config import LLMConfig
from bfr_core.llm import LLMConfigError, make_llm, make_provider
from bfr_core.llm import local_provider as lp
from bfr_core.llm.anthropic_provider import AnthropicLLM
from bfr_core.llm.cache import CachedLLM
from bfr_core.llm.openai_provider import OpenAILLM
from bfr_core.llm.retry import RetryingLLM
from bfr_core.llm.rules import RulesLLM
from bfr_core.llm.secrets import ScrubbedLLM
from bfr_core.store import Store

ENV = {"ANTHROPIC_API_KEY": "sk-ant-factory-00000000", "OPENAI_API_KEY": "sk-factory-11111111"}


def test_stack_is_cache_then_retry_then_provider():
    llm = make_llm(LLMConfig(), Store(), run_id="r")
    assert isinstance(llm, CachedLLM) and isinstance(llm.inner, RetryingLLM)
    assert isinstance(llm.inner.inner, RulesLLM) and llm.run_id == "r"
    assert llm.with_run("r2").run_id == "r2" and llm.with_run("r2").cache is llm.cache


def test_providers_by_name():
    a = make_provider(LLMConfig(provider="anthropic", model="claude-x", timeout_s=3), env=ENV,
                      secrets_path="/nonexistent")
    o = make_provider(LLMConfig(provider="OpenAI", base_url="http://127.0.0.1:9/v1", model="qwen"), env={},
                      secrets_path="/nonexistent")
    assert isinstance(a, ScrubbedLLM) and isinstance(o, ScrubbedLLM)  # every model's replies are scrubbed
    assert isinstance(a.inner, AnthropicLLM) and a.label == "anthropic:claude-x"
    assert isinstance(o.inner, OpenAILLM) and o.label == "openai:qwen@http://127.0.0.1:9/v1"
    assert make_provider(LLMConfig(provider="openai"), env=ENV).model == "gpt-5.5"
    with pytest.raises(LLMConfigError, match="unknown LLM provider 'gemini'"):
        make_provider(LLMConfig(provider="gemini"))


def test_cost_is_estimated_from_the_price_table():
    from bfr_core.llm.base import price
    from bfr_core.llm.openai_provider import PRICES

    assert price("gpt-4o-mini-2024-07-18", 1_000_000, 1_000_000, PRICES) == pytest.approx(0.75)
    assert price("my-local-model", 10**6, 10**6, PRICES) == 0.0


def test_local_without_llama_cpp_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` raise ImportError
    with pytest.raises(LLMConfigError, match=r"install_local_llm\.sh.*llama-cpp-python\[server\]==0\.3\.36"):
        make_llm(LLMConfig(provider="local"), Store())  # a BfrError: the CLI prints one line, exit 2


def _fake_parts(monkeypatch, tmp_path, count=lp.PARTS, magic=b"GGUF"):
    chunks = []
    for i in range(1, count + 1):
        data = (magic if i == 1 else b"") + bytes([i]) * (1000 + i)
        path = tmp_path / f"part{i}.bin"
        path.write_bytes(data)
        chunks.append(data)
        mod = types.ModuleType(lp.PART_MODULE.format(i))
        mod.get_part_path = lambda p=path: str(p)
        monkeypatch.setitem(sys.modules, mod.__name__, mod)
    return b"".join(chunks)


def test_gguf_is_assembled_from_the_parts_in_order(monkeypatch, tmp_path):
    expected = _fake_parts(monkeypatch, tmp_path)
    monkeypatch.setenv("BFR_LLM_DIR", str(tmp_path / "cache"))
    path = lp.resolve_model_path()
    assert path == tmp_path / "cache" / lp.GGUF_NAME and path.read_bytes() == expected
    mtime = path.stat().st_mtime_ns
    assert lp.assemble() == path and path.stat().st_mtime_ns == mtime  # already there: not rebuilt
    assert lp.main(["--assemble"]) == 0


def test_missing_or_wrong_parts_are_reported(monkeypatch, tmp_path):
    _fake_parts(monkeypatch, tmp_path, count=lp.PARTS - 2)
    monkeypatch.setitem(sys.modules, lp.PART_MODULE.format(lp.PARTS - 1), None)
    monkeypatch.setitem(sys.modules, lp.PART_MODULE.format(lp.PARTS), None)
    monkeypatch.setenv("BFR_LLM_DIR", str(tmp_path / "cache"))
    with pytest.raises(LLMConfigError, match=r"part package\(s\) 21, 22 not installed.*install_local_llm"):
        lp.assemble()
    assert lp.main(["--assemble"]) == 1 and lp.main([]) == 2


def test_assembled_file_must_be_gguf(monkeypatch, tmp_path):
    _fake_parts(monkeypatch, tmp_path, magic=b"NOPE")
    with pytest.raises(LLMConfigError, match="not a GGUF"):
        lp.assemble(tmp_path / "out.gguf")
    assert not list(tmp_path.glob("out.*"))


def test_explicit_gguf_path(tmp_path):
    with pytest.raises(LLMConfigError, match="not found"):
        lp.resolve_model_path(str(tmp_path / "missing.gguf"))
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    assert lp.resolve_model_path(str(f)) == f
