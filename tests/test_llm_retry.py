"""Retries, seeded backoff, the concurrency cap, JSON repair and the single re-ask."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from bfr_core.llm import LLMCallFailed, LLMRequest, LLMResponse, ProviderError, RetryingLLM, RetryPolicy
from bfr_core.llm.retry import complete_json, repair_json


class Scripted:
    """Replies (or raises) from a list, then repeats the last item."""

    provider, model, label = "fake", "scripted", "fake:scripted"

    def __init__(self, *items) -> None:
        self.items, self.prompts = list(items), []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.prompts.append(request.prompt)
        item = self.items.pop(0) if len(self.items) > 1 else self.items[0]
        if isinstance(item, Exception):
            raise item
        return LLMResponse(item)


def transient(status: int = 500, retry_after: float | None = None) -> ProviderError:
    return ProviderError(f"fake: HTTP {status}", status=status, transient=True, retry_after=retry_after)


def test_backoff_is_exponential_capped_and_seeded():
    p = RetryPolicy(base_delay_s=1.0, max_delay_s=10.0, jitter=0.25, seed=7)
    delays = [p.delay(a, "k") for a in range(1, 7)]
    assert delays == [p.delay(a, "k") for a in range(1, 7)]  # same seed, same key: same waits
    for a, d in enumerate(delays, 1):
        base = min(10.0, 2 ** (a - 1))
        assert base <= d < base * 1.25
    assert delays != [RetryPolicy(seed=8, max_delay_s=10.0).delay(a, "k") for a in range(1, 7)]
    assert p.delay(1, "k", retry_after=4.0) == 4.0 and p.delay(1, "k", retry_after=99) == 10.0


def test_a_servers_retry_after_is_waited_as_given_even_under_a_second():
    p = RetryPolicy()
    assert [p.delay(a, "k", retry_after=0.2) for a in (1, 2, 3)] == [0.2, 0.2, 0.2]  # not max(1 s, 0.2 s)
    assert p.delay(1, "k", retry_after=0.0) == p.delay(1, "k")  # 0 or none: the backoff
    waits: list[float] = []
    llm = RetryingLLM(Scripted(transient(429, retry_after=0.2), "fine"), p, sleep=waits.append)
    assert llm.complete(LLMRequest("q")).text == "fine" and waits == [0.2]


def test_transient_errors_are_retried_with_recorded_waits():
    waits: list[float] = []
    inner = Scripted(transient(429, retry_after=0.0), transient(503), "fine")
    llm = RetryingLLM(inner, RetryPolicy(max_retries=3, seed=1), sleep=waits.append)
    resp = llm.complete(LLMRequest("q"))
    assert (resp.text, resp.attempts, len(inner.prompts)) == ("fine", 3, 3)
    assert waits == [RetryPolicy(seed=1).delay(1, LLMRequest("q").sha256(), 0.0),
                     RetryPolicy(seed=1).delay(2, LLMRequest("q").sha256())]


def test_gives_up_after_max_retries_with_the_reason():
    inner = Scripted(transient(500))
    llm = RetryingLLM(inner, RetryPolicy(max_retries=2), sleep=lambda s: None)
    with pytest.raises(LLMCallFailed) as err:
        llm.complete(LLMRequest("q"))
    assert len(inner.prompts) == 3 and err.value.attempts == 3
    assert "HTTP 500" in err.value.reason and "3 attempts" in err.value.reason


def test_permanent_errors_fail_at_once():
    inner = Scripted(ProviderError("fake: HTTP 401: bad key", status=401))
    with pytest.raises(LLMCallFailed, match="401"):
        RetryingLLM(inner, sleep=lambda s: pytest.fail("must not back off")).complete(LLMRequest("q"))
    assert len(inner.prompts) == 1


def test_semaphore_caps_requests_in_flight():
    gate, lock = threading.Event(), threading.Lock()
    state = {"now": 0, "peak": 0, "entered": 0}

    class Slow:
        provider, model, label = "fake", "slow", "fake:slow"

        def complete(self, request: LLMRequest) -> LLMResponse:
            with lock:
                state["now"] += 1
                state["entered"] += 1
                state["peak"] = max(state["peak"], state["now"])
            gate.wait(10)
            with lock:
                state["now"] -= 1
            return LLMResponse("ok")

    llm = RetryingLLM(Slow(), concurrency=2)
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(llm.complete, LLMRequest(str(i))) for i in range(6)]
        for _ in range(1000):  # wait (by event, not by time) until two requests are inside
            with lock:
                if state["entered"] >= 2:
                    break
            threading.Event().wait(0.005)
        with lock:
            assert state["now"] == 2
        gate.set()
        assert [f.result().text for f in futures] == ["ok"] * 6
    assert state["peak"] == 2


@pytest.mark.parametrize(("raw", "expected"), [
    ('{"label": "CORRECT"}', {"label": "CORRECT"}),
    ('Sure! ```json\n{"answer": "5 days"}\n```', {"answer": "5 days"}),
    ('The reply is {"tool": "session"} as asked.', {"tool": "session"}),
    ("{'answer': 'Paris'}", {"answer": "Paris"}),
    ('{"ids": ["m1", "m2",], "coverage": {},}', {"ids": ["m1", "m2"], "coverage": {}}),
    ('{"requirements": ["date I ordered it", "date it arri', {"requirements": ["date I ordered it", "date it arri"]}),
    ('{"ids": ["m1"], "coverage": {"1": ["m1"', {"ids": ["m1"], "coverage": {"1": ["m1"]}}),
    ('{"reason": "x", "label":', {"reason": "x"}),
    ('{"ok": True, "none": None}', {"ok": True, "none": None}),
    ('["a", "b"]', ["a", "b"]),
])
def test_repair_json(raw, expected):
    assert repair_json(raw) == expected


@pytest.mark.parametrize("raw", ["", "no json here", "CORRECT"])
def test_repair_json_gives_up(raw):
    with pytest.raises(ValueError):
        repair_json(raw)


def _answer(obj, raw):
    if not isinstance(obj, dict) or "answer" not in obj:
        raise ValueError("expected an answer")
    return obj["answer"]


def test_complete_json_reasks_once_then_fails():
    inner = Scripted("I think it is five days", '{"answer": "5 days"}')
    assert complete_json(inner, LLMRequest("Q?", role="answer"), _answer) == "5 days"
    assert len(inner.prompts) == 2 and "could not be used" in inner.prompts[1]
    assert inner.prompts[1].startswith("Q?")
    bad = Scripted("nope", "still nope")
    with pytest.raises(LLMCallFailed, match="answer: unusable reply after one re-ask"):
        complete_json(bad, LLMRequest("Q?", role="answer"), _answer)
    assert len(bad.prompts) == 2


def test_truncated_json_is_repaired_without_a_reask():
    inner = Scripted('{"answer": "5 da')
    assert complete_json(inner, LLMRequest("Q?"), _answer) == "5 da"
    assert len(inner.prompts) == 1
