"""Per-provider limits: the token bucket's waits on a fake clock, a pause holding every caller, the
concurrency cap, and the retry layer waiting a 429's Retry-After for the refused call alone."""

from __future__ import annotations

import threading
import time

from bfr_core.llm.base import LLMRequest, LLMResponse, ProviderError
from bfr_core.llm.limits import Limits, ProviderLimiter, TokenBucket, count_tokens, limiter_for
from bfr_core.llm.retry import RetryingLLM, RetryPolicy


class Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.slept.append(round(s, 6))
        self.t += s


def test_count_tokens_is_chars_over_4_rounded_up():
    assert [count_tokens(x) for x in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]


def test_bucket_lets_a_burst_through_then_paces_at_the_rate():
    c = Clock()
    b = TokenBucket(120, clock=c, sleep=c.sleep)  # 2 per second, burst of 2
    waits = [b.take() for _ in range(5)]
    assert waits[:2] == [0.0, 0.0] and waits[2:] == [0.5, 0.5, 0.5]
    assert c.t == 1.5


def test_tokens_per_minute_bucket_waits_for_a_big_request():
    c = Clock()
    lim = ProviderLimiter(Limits(max_concurrent=4, tpm=600), clock=c, sleep=c.sleep)  # 10 tokens/s, 600 burst
    with lim.request(600):
        pass
    with lim.request(300):  # the minute's budget is spent: 300 tokens take 30 s to come back
        pass
    assert c.slept == [30.0]


def test_retry_after_pauses_the_provider_for_everyone():
    c = Clock()
    lim = ProviderLimiter(Limits(), clock=c, sleep=c.sleep)
    lim.pause(2.0)
    with lim.request():
        pass
    assert c.slept == [2.0]
    with lim.request():  # the pause is over
        pass
    assert c.slept == [2.0]


def test_concurrency_cap_holds_across_threads():
    lim = ProviderLimiter(Limits(max_concurrent=3))
    inside, peak, lock = [0], [0], threading.Lock()

    def work() -> None:
        with lim.request():
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(0.01)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 3


def test_limiter_is_shared_per_endpoint_and_limits():
    a = limiter_for("openai:x", Limits(4, 60, 0))
    assert limiter_for("openai:x", Limits(4, 60, 0)) is a
    assert limiter_for("openai:y", Limits(4, 60, 0)) is not a


def test_retrying_llm_waits_retry_after_itself_and_holds_no_one_else():
    class Flaky:
        provider, model, label = "openai", "m", "openai:m"

        def __init__(self) -> None:
            self.n = 0

        def complete(self, request: LLMRequest) -> LLMResponse:
            self.n += 1
            if self.n == 1:
                raise ProviderError("429", status=429, transient=True, retry_after=3.0)
            return LLMResponse("ok")

    c = Clock()
    lim = ProviderLimiter(Limits(), clock=c, sleep=c.sleep)
    llm = RetryingLLM(Flaky(), RetryPolicy(base_delay_s=0.1, jitter=0.0), sleep=c.sleep, limiter=lim)
    assert llm.complete(LLMRequest("hi")).attempts == 2
    assert c.slept == [3.0]  # the refused call waits the server's Retry-After
    with lim.request():  # another caller is not paused (as in the provider SDKs)
        pass
    assert c.slept == [3.0]

