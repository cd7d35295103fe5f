"""Anthropic and OpenAI providers against a local wire-format server (127.0.0.1, random port).

Asserts the request each SDK puts on the wire, that replies parse, that 429 / 500 / broken bodies
are retried, and that a reply held past the client timeout fails cleanly. No test waits on the
clock for its verdict: backoff sleeps are recorded, not slept, and a held reply is held until the
server stops, far beyond the client's timeout.
"""

from __future__ import annotations

import json

import pytest
from llm_wire_server import WireServer

from bfr_core.config import LLMConfig
from bfr_core.llm import LLMCallFailed, call_summary, make_llm
from bfr_core.roles import answer_judge, answerer, decomposer, selector, sufficiency, tool_chooser
from bfr_core.store import Store

SHUTTER = "How many days did it take for me to receive the new remote shutter release after I ordered it?"
EVIDENCE = ["I ordered a new remote shutter release online on February 5th", "it arrived on February 10th"]
KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test-wire-0000000000", "OPENAI_API_KEY": "sk-test-wire-1111111111"}


@pytest.fixture
def server():
    srv = WireServer().start()
    yield srv
    srv.stop()


@pytest.fixture(params=["anthropic", "openai"])
def provider(request):
    return request.param


def client(server: WireServer, provider: str, *, retries: int = 3, timeout: float = 5.0, run_id: str = "w"):
    url = server.anthropic_url if provider == "anthropic" else server.openai_url
    cfg = LLMConfig(provider=provider, model="wire-model", base_url=url, timeout_s=timeout,
                    max_retries=retries)
    waits: list[float] = []
    llm = make_llm(cfg, Store(), run_id=run_id, env=KEYS, secrets_path="/nonexistent", sleep=waits.append)
    return llm, waits


def test_request_shape_and_parsed_reply(server, provider):
    server.reply = '{"answer": "5 days"}'
    llm, _ = client(server, provider)
    assert answerer.extractive(llm, SHUTTER, EVIDENCE) == "5 days"
    (seen,) = server.seen
    body = seen.body
    assert body["model"] == "wire-model"
    user = body["messages"][-1]
    assert user["role"] == "user" and SHUTTER in user["content"]
    assert "[1] I ordered a new remote shutter release" in user["content"]
    assert "[2] it arrived on February 10th" in user["content"]
    assert seen.headers["content-type"].startswith("application/json")
    if provider == "anthropic":
        assert seen.path == "/v1/messages"
        assert body["max_tokens"] == 96 and "temperature" not in body  # removed from the 2026 API
        assert seen.headers.get("anthropic-version")
        assert KEYS["ANTHROPIC_API_KEY"] in (seen.headers.get("x-api-key", "") + seen.headers.get("authorization", ""))
    else:
        assert seen.path == "/v1/chat/completions"
        assert body["temperature"] == 0.0 and body["max_tokens"] == 96
        assert body["response_format"] == {"type": "json_object"}
        assert seen.headers["authorization"] == f"Bearer {KEYS['OPENAI_API_KEY']}"
    s = call_summary(llm.cache.store, "w")
    assert (s.provider_calls, s.tokens_in > 0, s.tokens_out) == (1, True, 3)


def test_system_message_goes_where_each_api_wants_it(server, provider):
    from bfr_core.llm import LLMRequest

    llm, _ = client(server, provider)
    llm.complete(LLMRequest("hello", system="be brief"))
    body = server.seen[0].body
    if provider == "anthropic":
        assert body["system"] == "be brief" and body["messages"] == [{"role": "user", "content": "hello"}]
    else:
        assert body["messages"][0] == {"role": "system", "content": "be brief"}


def test_429_and_500_are_retried_with_backoff(server, provider):
    server.reply = '{"label": "CORRECT"}'
    server.fail_next("429", "500", "429")
    llm, waits = client(server, provider, retries=4)
    assert answer_judge.judge(llm, SHUTTER, "5 days", "five days") == "CORRECT"
    assert len(server.seen) == 4 and len(waits) == 3
    assert waits[1] > waits[0] * 1.5  # exponential: the second wait roughly doubles the first
    assert call_summary(llm.cache.store, "w").attempts == 4


def test_gives_up_after_retries_and_a_rerun_tries_again(server, provider):
    server.fail_next("500", "500")
    llm, waits = client(server, provider, retries=1)
    with pytest.raises(LLMCallFailed) as err:
        answerer.extractive(llm, SHUTTER, EVIDENCE)
    assert "HTTP 500" in err.value.reason and len(server.seen) == 2 and len(waits) == 1
    server.reply = '{"answer": "5 days"}'
    assert answerer.extractive(llm, SHUTTER, EVIDENCE) == "5 days"  # failures were not cached
    assert answerer.extractive(llm, SHUTTER, EVIDENCE) == "5 days" and len(server.seen) == 3  # now it is


def test_timeout_is_retried_then_fails_with_reason(server, provider):
    server.fail_next("delay", "delay")  # held for 30 s or until the server stops: always times out
    llm, waits = client(server, provider, retries=1, timeout=0.5)
    with pytest.raises(LLMCallFailed, match="timed out"):
        answerer.extractive(llm, SHUTTER, EVIDENCE)
    assert len(waits) == 1


def test_timeout_then_success(server, provider):
    server.reply = '{"answer": "5 days"}'
    server.fail_next("delay")
    # 1 s is ample for a loopback reply; spare retries absorb a badly overloaded machine
    llm, _ = client(server, provider, retries=4, timeout=1.0)
    assert answerer.extractive(llm, SHUTTER, EVIDENCE) == "5 days"


@pytest.mark.parametrize("fault", ["malformed", "truncated"])
def test_broken_response_bodies_are_retried(server, provider, fault):
    server.reply = '{"answer": "5 days"}'
    server.fail_next(fault)
    llm, waits = client(server, provider)
    assert answerer.extractive(llm, SHUTTER, EVIDENCE) == "5 days"
    assert len(server.seen) == 2 and len(waits) == 1


def test_malformed_model_json_is_repaired_or_reasked(server, provider):
    replies = iter(['Here you go: {"requirements": ["date I ordered it", "date it arrived",]}'])
    server.reply = lambda body: next(replies)
    llm, _ = client(server, provider)
    assert decomposer.decompose(llm, SHUTTER) == ["date I ordered it", "date it arrived"]
    assert len(server.seen) == 1

    replies = iter(["I cannot decide.", '{"label": "insufficient", "reason": "arrival missing"}'])
    server.reply = lambda body: next(replies)
    res = sufficiency.suff_at_set((llm, llm), llm, SHUTTER, "5 days", EVIDENCE[:1])
    assert res.label == "insufficient" and not res.adjudicated
    reask = server.seen[-1].body["messages"][-1]["content"]
    assert "could not be used" in reask  # the single re-ask, sent after the unusable first reply


def test_truncated_model_json_is_closed(server, provider):
    server.reply = '{"ids": ["m2", "m3"], "coverage": {"1": ["m2"], "2": ["m3"'
    llm, _ = client(server, provider)
    pool = [("a", "photography"), ("b", EVIDENCE[0]), ("c", EVIDENCE[1])]
    sel = selector.select_subset(llm, SHUTTER, pool, requirements=["order date", "arrival date"])
    assert sel.ids == ["b", "c"] and sel.coverage == {"order date": ["b"], "arrival date": ["c"]}
    prompt = server.seen[0].body["messages"][-1]["content"]
    assert "[m2] I ordered" in prompt and "1. order date" in prompt


def test_garbage_twice_fails_the_call(server, provider):
    server.reply = "no idea"
    llm, _ = client(server, provider)
    with pytest.raises(LLMCallFailed, match="unusable reply"):
        tool_chooser.choose_tool(llm, SHUTTER, EVIDENCE, ["text", "session"])
    assert len(server.seen) == 2


def test_openai_compatible_server_without_a_key(server):
    server.reply = json.dumps({"tool": "session"})
    cfg = LLMConfig(provider="openai", model="qwen", base_url=server.openai_url)
    llm = make_llm(cfg, Store(), env={}, secrets_path="/nonexistent")
    assert tool_chooser.choose_tool(llm, SHUTTER, EVIDENCE[:1], ["text", "session"]) == "session"
    assert server.seen[0].headers["authorization"] == "Bearer no-key-needed"
