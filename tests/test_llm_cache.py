"""The cache wrapper: reruns make zero provider calls, failures are not cached, calls are logged."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from bfr_core.config import LLMConfig
from bfr_core.llm import (
    CachedLLM,
    LLMCache,
    LLMCallFailed,
    LLMRequest,
    LLMResponse,
    ProviderError,
    RetryPolicy,
    RulesLLM,
    call_summary,
    export_calls,
    make_llm,
)
from bfr_core.roles import answer_judge, answerer, decomposer, selector, sufficiency, tool_chooser
from bfr_core.store import Store

SHUTTER = "How many days did it take for me to receive the new remote shutter release after I ordered it?"
EVIDENCE = ["I ordered a new remote shutter release online on February 5th", "it arrived on February 10th"]


class CountingRules(RulesLLM):
    """The offline rules backend, counting how often it is really asked."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.calls += 1
        return super().complete(request)


def _pipeline(llm) -> tuple:
    reqs = decomposer.decompose(llm, SHUTTER)
    sel = selector.select_subset(llm, SHUTTER, [("t1", "I love photography"), ("t2", EVIDENCE[0]),
                                              ("t3", EVIDENCE[1])], requirements=reqs)
    tool = tool_chooser.choose_tool(llm, SHUTTER, EVIDENCE[:1], ["text", "entity", "session", "stop"])
    ans = answerer.extractive(llm, SHUTTER, EVIDENCE)
    verdict = answer_judge.judge(llm, SHUTTER, "5 days", ans)
    suff = sufficiency.suff_at_set((llm, llm), llm, SHUTTER, "5 days", EVIDENCE)
    return reqs, sel, tool, ans, verdict, suff


def test_rerun_makes_zero_provider_calls(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    fake = CountingRules()
    first = _pipeline(make_llm(LLMConfig(), store, run_id="run-1", provider=fake))
    paid = fake.calls
    assert paid >= 5
    second = _pipeline(make_llm(LLMConfig(), store, run_id="run-2", provider=fake))
    assert fake.calls == paid  # every call of the rerun came from llm_cache
    assert second == first
    s1, s2 = call_summary(store, "run-1"), call_summary(store, "run-2")
    assert s2.provider_calls == 0 and s2.cached == s2.calls == s1.calls
    assert s2.tokens_in == 0 and s2.cost_usd == 0.0
    assert s1.provider_calls == paid and s1.tokens_in > 0


def test_cache_survives_reopening_the_store(tmp_path):
    path = tmp_path / "c.duckdb"
    store = Store(path)
    fake = CountingRules()
    ans = answerer.extractive(make_llm(LLMConfig(), store, provider=fake), SHUTTER, EVIDENCE)
    store.close()
    store = Store(path)
    again = answerer.extractive(make_llm(LLMConfig(), store, provider=fake), SHUTTER, EVIDENCE)
    assert (ans, again, fake.calls) == ("5 days", "5 days", 1)
    row = store.cursor().execute(
        "SELECT provider, model, temperature, length(prompt_sha256), tokens_in > 0, created IS NOT NULL "
        "FROM llm_cache").fetchall()
    assert row == [("rules", RulesLLM.model, 0.0, 64, True, True)]


def test_key_separates_provider_model_temperature_and_prompt():
    store = Store()
    cache = LLMCache(store)
    resp = LLMResponse("x", 1, 1, 0.5)
    cache.put("openai", "m", 0.0, "abc", resp)
    assert cache.get("openai", "m", 0.0, "abc").text == "x"
    assert cache.get("openai", "m", 0.0, "abc").cached
    for other in (("anthropic", "m", 0.0, "abc"), ("openai", "m2", 0.0, "abc"),
                  ("openai", "m", 0.7, "abc"), ("openai", "m", 0.0, "abd")):
        assert cache.get(*other) is None
    a, b = LLMRequest("p"), LLMRequest("p", system="s")
    assert a.sha256() != b.sha256() and a.sha256() == LLMRequest("p", role="other").sha256()


class Flaky:
    provider, model, label = "fake", "flaky-1", "fake:flaky-1"

    def __init__(self, fail_times: int) -> None:
        self.fail_times, self.calls = fail_times, 0

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls <= self.fail_times:
            raise ProviderError("fake: HTTP 503", status=503, transient=True)
        return LLMResponse('{"answer": "5 days"}', 10, 3, 0.001)


def test_failures_are_logged_not_cached_and_a_rerun_retries_them():
    store = Store()
    flaky = Flaky(fail_times=3)
    cfg = LLMConfig(provider="openai", max_retries=1)
    llm = make_llm(cfg, store, run_id="r", provider=flaky, sleep=lambda s: None)
    with pytest.raises(LLMCallFailed) as err:
        answerer.extractive(llm, SHUTTER, EVIDENCE)
    assert "503" in err.value.reason and "2 attempts" in err.value.reason
    assert store.cursor().execute("SELECT count(*) FROM llm_cache").fetchone() == (0,)
    assert answerer.extractive(llm, SHUTTER, EVIDENCE) == "5 days"  # attempt 3 fails, 4 succeeds
    summary = call_summary(store, "r")
    assert (summary.calls, summary.failed, summary.provider_calls, summary.attempts) == (2, 1, 1, 4)
    assert summary.cost_usd == pytest.approx(0.001)
    rows = export_calls(store, "r")
    assert [r["ok"] for r in rows] == [False, True] and "503" in rows[0]["error"]
    assert {r["role"] for r in rows} == {"answer"}


def test_concurrent_identical_calls_pay_once():
    store = Store()
    fake = CountingRules()
    llm = make_llm(LLMConfig(concurrency=4), store, provider=fake)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: answerer.extractive(llm, SHUTTER, EVIDENCE), range(16)))
    assert set(answers) == {"5 days"} and fake.calls == 1


def test_read_only_store_serves_hits_and_writes_nothing(tmp_path):
    path = tmp_path / "ro.duckdb"
    store = Store(path)
    answerer.extractive(make_llm(LLMConfig(), store), SHUTTER, EVIDENCE)
    store.close()
    ro = Store(path, read_only=True)
    fake = CountingRules()
    llm = CachedLLM(fake, LLMCache(ro))
    assert answerer.extractive(llm, SHUTTER, EVIDENCE) == "5 days" and fake.calls == 0
    assert answerer.extractive(llm, SHUTTER, EVIDENCE[:1]) and fake.calls == 1  # a miss: asked, not stored


def test_retry_policy_is_passed_through_and_labels_survive_wrapping():
    llm = make_llm(LLMConfig(max_retries=7), Store())
    assert llm.label == "offline rules" and llm.provider == "rules"
    assert llm.inner.policy == RetryPolicy(max_retries=7)
