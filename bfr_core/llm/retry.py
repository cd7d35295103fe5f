"""Making one provider call dependable, and its JSON usable.

Covers: :class:`RetryPolicy` (exponential backoff with seeded jitter; a server's positive
``Retry-After`` is waited exactly, fractions of a second included, capped at ``max_delay_s``, as the
Anthropic and OpenAI SDKs do), :class:`RetryingLLM` (retries transient
:class:`ProviderError` — 429, 5xx, timeouts, broken response bodies — and holds each attempt to
the provider's :class:`~bfr_core.llm.limits.ProviderLimiter`: concurrent requests, requests and
tokens per minute; the wait after a 429 is the refused call's own, as in the SDKs: the other
callers go on, held only by those limits), :func:`repair_json` (fences, prose around the object,
single quotes, trailing commas, truncated output) and :func:`complete_json` (repair, then exactly
one re-ask, then :class:`LLMCallFailed`). Does not cover: caching (``cache.py``).

Jitter is drawn from ``Random(f"{seed}:{prompt sha}:{attempt}")``, so a given call backs off the same
way on every run and in any thread order. ``sleep`` is injectable: tests never wait on the clock.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from bfr_core.llm.base import LLM, LLMCallFailed, LLMRequest, LLMResponse, ProviderError
from bfr_core.llm.limits import Limits, ProviderLimiter, count_tokens

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 4  # extra attempts after the first, on transient errors only
    base_delay_s: float = 1.0  # first backoff; doubles each retry
    max_delay_s: float = 30.0  # cap on one backoff, and on a server's Retry-After
    jitter: float = 0.25  # each delay is stretched by a seeded factor in [1, 1 + jitter)
    seed: int = 20260908  # the project's seed: same call, same delays

    def delay(self, attempt: int, key: str, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based) of the call keyed ``key``: the
        server's ``retry_after`` when it gave one above 0 (capped at ``max_delay_s``), else the
        seeded exponential backoff."""
        if retry_after is not None and retry_after > 0:
            return min(self.max_delay_s, retry_after)
        base = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        return base * (1.0 + self.jitter * random.Random(f"{self.seed}:{key}:{attempt}").random())


class RetryingLLM:
    """Retries transient failures of ``inner``; each attempt waits for ``limiter`` (by default one of
    its own allowing ``concurrency`` requests in flight and no rate limit)."""

    def __init__(
        self, inner: LLM, policy: RetryPolicy = RetryPolicy(), *, concurrency: int = 2,
        sleep: Callable[[float], None] = time.sleep, limiter: ProviderLimiter | None = None,
    ) -> None:
        self.inner, self.policy, self.sleep = inner, policy, sleep
        self.provider, self.model = inner.provider, inner.model
        self.limiter = limiter or ProviderLimiter(Limits(max_concurrent=concurrency), sleep=sleep)

    @property
    def label(self) -> str:
        return self.inner.label

    def __repr__(self) -> str:
        return f"RetryingLLM({self.inner!r}, {self.policy!r})"

    def complete(self, request: LLMRequest) -> LLMResponse:
        key = request.sha256()
        attempt = 0
        while True:
            attempt += 1
            try:
                # the slot is held for the request only, never while backing off
                with self.limiter.request(count_tokens(request.system + request.prompt) + request.max_tokens):
                    resp = self.inner.complete(request)
                return replace(resp, attempts=attempt)
            except ProviderError as exc:
                if not exc.transient:
                    raise LLMCallFailed(exc.reason, attempts=attempt) from None
                if attempt > self.policy.max_retries:
                    why = f"{exc.reason} (gave up after {attempt} attempts)"
                    raise LLMCallFailed(why, attempts=attempt) from None
                wait = self.policy.delay(attempt, key, exc.retry_after)
                log.info("%s: %s; retry %d in %.1fs", self.label, exc.reason, attempt, wait)
                self.sleep(wait)


# -- JSON ------------------------------------------------------------------------------------
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _balanced(text: str) -> tuple[str, list[str], bool]:
    """The first JSON value in ``text`` (from its first bracket): the text up to where it closes,
    the brackets still open when the text ran out, and whether it ended inside a string."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError("no JSON object in the reply")
    stack: list[str] = []
    in_str = esc = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if stack:
                stack.pop()
            if not stack:
                return text[start : i + 1], [], False
    return text[start:], stack, in_str


def _close_truncated(body: str, stack: list[str], in_str: bool) -> str:
    if in_str:
        body += '"'
    body = body.rstrip()
    # drop what cannot stand: a dangling separator ["x",  a key without value {"a": 1, "b":
    # and, inside an object, a lone key {"a": 1, "b"  (in an array a cut string is a value: kept)
    body = re.sub(r'(?:([{,])\s*"[^"]*"\s*:|,)\s*$', lambda m: m.group(1) or "", body)
    if stack and stack[-1] == "}":
        body = re.sub(r'([{,])\s*"[^"]*"\s*$', r"\1", body)
    body = re.sub(r",\s*$", "", body)
    return body + "".join(reversed(stack))


def repair_json(text: str) -> Any:
    """Parse a model's JSON reply, fixing the common breakages; ``ValueError`` if hopeless."""
    text = text.strip()
    fence = _FENCE.search(text)
    if fence and ("{" in fence.group(1) or "[" in fence.group(1)):
        text = fence.group(1)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    if '"' not in text and "'" in text:
        text = text.replace("'", '"')
    body, stack, in_str = _balanced(text)
    if stack or in_str:
        body = _close_truncated(body, stack, in_str)
    body = _TRAILING_COMMA.sub(r"\1", body)
    for py, js in _PY_LITERALS.items():
        body = re.sub(rf"(?<=[:\[,\s]){py}(?=[,\]}}\s])", js, body)
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"unparseable JSON ({exc.msg})") from None


REASK = (
    "{prompt}\n\nYour previous reply could not be used ({problem}). "
    "Reply again with only the JSON object, nothing else."
)


def complete_json(llm: LLM, request: LLMRequest, parse: Callable[[Any, str], T]) -> T:
    """Ask, repair the JSON, validate with ``parse(obj, raw_text)``; re-ask once on failure.

    ``parse`` raises ``ValueError`` for a reply it cannot use (it gets the raw text too, for
    label-only fallbacks). A second unusable reply raises :class:`LLMCallFailed`.
    """
    problem = ""
    tried: list[LLMRequest] = []
    for attempt in (1, 2):
        req = request if attempt == 1 else replace(
            request, prompt=REASK.format(prompt=request.prompt, problem=problem[:200])
        )
        resp = llm.complete(req)
        try:
            try:
                obj = repair_json(resp.text)
            except ValueError:
                obj = None
            return parse(obj, resp.text)
        except ValueError as exc:
            problem = str(exc) or "malformed JSON"
            tried.append(req)
            log.info("%s/%s: unusable reply (%s)%s", llm.label, request.role, problem,
                     "; re-asking" if attempt == 1 else "")
    forget = getattr(llm, "forget", None)  # a call that failed for good must not be replayed from the cache
    if forget is not None:
        for req in tried:
            forget(req)
    raise LLMCallFailed(f"{request.role or 'call'}: unusable reply after one re-ask ({problem})")
