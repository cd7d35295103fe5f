"""Per-provider request limits: concurrent requests, requests per minute, tokens per minute.

Covers: :class:`Limits` (the three numbers; 0 = no limit), :class:`TokenBucket` (a refilling bucket
with an injectable clock and sleep), :class:`ProviderLimiter` (the three limits together, plus a
provider-wide pause a caller may set; the retry layer does not: a 429's ``Retry-After`` is waited by
the refused call alone, as in the provider SDKs), :func:`limiter_for` (one shared limiter per
provider endpoint in a process, so every client of one provider draws on the same budget) and
:func:`count_tokens` (the deterministic token estimate the limiter, the dry run and the local test
server share: one token per 4 characters, rounded up). Does not cover: retries (``retry.py``).

A limiter never changes what is asked or answered, only when: results do not depend on it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


def count_tokens(text: str) -> int:
    """A deterministic token estimate: ceil(characters / 4) (the usual rule of thumb for English)."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True, slots=True)
class Limits:
    max_concurrent: int = 2  # requests in flight at once
    rpm: float = 0.0  # requests per minute (0 = unlimited)
    tpm: float = 0.0  # tokens per minute, prompt estimate + max_tokens (0 = unlimited)


class TokenBucket:
    """``rate_per_min`` units per minute, bursting up to one second's worth (at least 1 unit)."""

    def __init__(self, rate_per_min: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep, burst_s: float = 1.0) -> None:
        self.rate = rate_per_min / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self.clock, self.sleep = clock, sleep
        self.stamp = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, n: float = 1.0) -> float:
        """Reserve ``n`` units (clamped to the capacity) and wait until the bucket has refilled
        enough to cover them; returns the seconds waited. Reservations queue in call order."""
        n = min(float(n), self.capacity)
        with self._lock:
            self._refill()
            self.level -= n
            wait = max(0.0, -self.level / self.rate)
        if wait:
            self.sleep(wait)
        return wait


class ProviderLimiter:
    """The limits of one provider endpoint, shared by every thread calling it."""

    def __init__(self, limits: Limits, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.limits = limits
        self.clock, self.sleep = clock, sleep
        self._slots = threading.BoundedSemaphore(max(1, limits.max_concurrent))
        self._rpm = TokenBucket(limits.rpm, clock=clock, sleep=sleep) if limits.rpm > 0 else None
        self._tpm = TokenBucket(limits.tpm, clock=clock, sleep=sleep, burst_s=60.0) if limits.tpm > 0 else None
        self._paused_until = 0.0
        self._lock = threading.Lock()

    def pause(self, seconds: float) -> None:
        """No new request to this provider for ``seconds``."""
        with self._lock:
            self._paused_until = max(self._paused_until, self.clock() + seconds)

    def _wait_pause(self) -> None:
        with self._lock:
            left = self._paused_until - self.clock()
        if left > 0:
            self.sleep(left)

    @contextmanager
    def request(self, tokens: int = 0) -> Iterator[None]:
        """Hold one request slot (after the rate buckets and any pause let it through)."""
        self._wait_pause()
        if self._rpm is not None:
            self._rpm.take(1)
        if self._tpm is not None and tokens:
            self._tpm.take(tokens)
        with self._slots:
            yield


_REGISTRY: dict[tuple[str, Limits], ProviderLimiter] = {}
_REGISTRY_LOCK = threading.Lock()


def limiter_for(endpoint: str, limits: Limits) -> ProviderLimiter:
    """The process-wide limiter of ``endpoint`` (a provider label) under ``limits``."""
    with _REGISTRY_LOCK:
        key = (endpoint, limits)
        if key not in _REGISTRY:
            _REGISTRY[key] = ProviderLimiter(limits)
        return _REGISTRY[key]
