"""make_llm wiring, provider selection, and the local backend's install checks and GGUF assembly
(with stand-in part packages; the real model runs only in test_llm_local_provider.py)."""

from __future__ import annotations

import hashlib
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
    from bfr_core.llm.openai_provider import PRICES
    from bfr_core.llm.sdk import price

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


# -- the provider as configured (factory.configured), read by every page and command ----------------
def _toml(tmp_path, body: str):
    p = tmp_path / "bfr.toml"
    p.write_text(body, encoding="utf-8")
    return p


def test_configured_gives_the_files_settings_for_its_provider(tmp_path):
    from bfr_core.llm.factory import config_label, configured

    p = _toml(tmp_path, '[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\nrpm = 30\n'
                        'timeout_s = 5\n')
    own = configured("openai:m", p)
    assert (own.base_url, own.rpm, own.timeout_s) == ("http://127.0.0.1:9/v1", 30, 5)
    assert configured("", p) == own and configured("openai", p) == own and config_label(own) == "openai:m"
    assert configured("openai:other", p).model == "other" and configured("openai:other", p).base_url == own.base_url
    other = configured("anthropic:claude", p)  # another provider: its own defaults, the file's general settings
    assert (other.provider, other.model, other.base_url, other.rpm, other.timeout_s) == ("anthropic", "claude", "", 0, 5)
    assert configured("rules", p).base_url == ""


def test_configured_without_a_file_and_with_a_bad_one(tmp_path, monkeypatch):
    from bfr_core import config
    from bfr_core.llm.factory import configured

    monkeypatch.delenv("BFR_CONFIG", raising=False)
    monkeypatch.setattr(config, "PROJECT_CONFIG", tmp_path / "absent.toml")
    assert configured("openai:x") == LLMConfig(provider="openai", model="x")
    monkeypatch.setenv("BFR_CONFIG", str(_toml(tmp_path, '[llm]\nprovider = "openai"\nbase_url = "http://h/v1"\n')))
    assert configured("openai").base_url == "http://h/v1"
    bad = _toml(tmp_path, "[llm]\nbase = 1\n")
    with pytest.raises(LLMConfigError, match="bfr.toml: unknown key"):
        configured("openai", bad)


def test_eval_settings_for_every_client_come_from_the_file(tmp_path):
    """`bfr eval`'s model, judge B and adjudicator clients: the file's base_url for its provider, the
    command line's limits for all."""
    import argparse

    from bfr_core.commands import eval as ev

    p = _toml(tmp_path, '[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n')
    parser = argparse.ArgumentParser()
    ev.add_arguments(parser)
    args = parser.parse_args(["--db", "x", "--arms", "mem0", "--provider", "openai", "--config", str(p),
                              "--workers", "4", "--rpm", "60", "--judge-b", "openai:judge", "--adjudicator",
                              "anthropic:adj"])
    main, judge_b, adj = ev.llm_settings(args), ev.llm_settings(args, args.judge_b), ev.llm_settings(args, args.adjudicator)
    assert (main.model, main.base_url, main.concurrency, main.rpm) == ("m", "http://127.0.0.1:9/v1", 4, 60)
    assert (judge_b.model, judge_b.base_url) == ("judge", "http://127.0.0.1:9/v1")
    assert (adj.provider, adj.base_url, adj.rpm) == ("anthropic", "", 60)
    args.base_url = "http://127.0.0.1:8/v1"  # the command line's --base-url wins, for its provider only
    assert ev.llm_settings(args).base_url == "http://127.0.0.1:8/v1" and ev.llm_settings(args, "anthropic").base_url == ""


def test_verify_accepts_only_the_pinned_digest(monkeypatch, tmp_path):
    path = tmp_path / "m.gguf"
    assert not lp.verified(path)
    path.write_bytes(b"GGUF" + b"x" * 10)
    assert lp.verified(path, hashlib.sha256(path.read_bytes()).hexdigest())
    assert not lp.verified(path)  # a file of other bytes is not the pinned model
    monkeypatch.setenv("BFR_LLM_DIR", str(tmp_path / "empty"))
    assert lp.main(["--verify"]) == 1
