"""Every LLM call is answered from, or written to, the store: table ``llm_cache``; and logged per run
in ``llm_calls``.

Covers: the two tables' DDL, :class:`LLMCache` (lookup / put), :class:`CachedLLM` (the wrapper that
makes a rerun cost zero provider calls, and logs each call, with the arm :func:`call_arm` names for
the calling thread), :class:`RecordingLLM` (the same for a worker without the store: it keeps the
calls as :class:`CallRecord` for the driver to write with :meth:`LLMCache.replay`),
:func:`call_summary` (per-run accounting), :func:`usage_by` (calls, cache hits, tokens and cost per
arm and per role) and :func:`export_calls`. Does not cover: retries (``retry.py``), prices
(``prices.py``).

The cache key is (provider, model, temperature, sha256 of the request: system, prompt, payload,
JSON settings, max_tokens). Failures are never cached, so a rerun retries them. Concurrent callers
asking the same key wait for the first (single flight), so a parallel run pays once per prompt.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import duckdb

from bfr_core.duck import fetch_if_tables
from bfr_core.llm.base import LLM, LLMCallFailed, LLMRequest, LLMResponse
from bfr_core.store import Store

DDL = """
CREATE TABLE IF NOT EXISTS llm_cache (
    provider VARCHAR NOT NULL, model VARCHAR NOT NULL, temperature DOUBLE NOT NULL,
    prompt_sha256 VARCHAR NOT NULL, response VARCHAR NOT NULL,
    tokens_in INTEGER, tokens_out INTEGER, cost_usd DOUBLE,
    created TIMESTAMP DEFAULT current_timestamp,
    PRIMARY KEY (provider, model, temperature, prompt_sha256));
CREATE TABLE IF NOT EXISTS llm_calls (
    run_id VARCHAR, role VARCHAR, provider VARCHAR, model VARCHAR, prompt_sha256 VARCHAR,
    cached BOOLEAN, ok BOOLEAN, attempts INTEGER, tokens_in INTEGER, tokens_out INTEGER,
    cost_usd DOUBLE, latency_ms DOUBLE, error VARCHAR,
    created TIMESTAMP DEFAULT current_timestamp);
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS arm VARCHAR;
"""

Q_GET = """
SELECT response, tokens_in, tokens_out, cost_usd FROM llm_cache
WHERE provider = ? AND model = ? AND temperature = ? AND prompt_sha256 = ?
"""
Q_PUT = """
INSERT OR IGNORE INTO llm_cache (provider, model, temperature, prompt_sha256, response, tokens_in,
    tokens_out, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
Q_DELETE = """
DELETE FROM llm_cache WHERE provider = ? AND model = ? AND temperature = ? AND prompt_sha256 = ?
"""
Q_LOG = """
INSERT INTO llm_calls (run_id, role, provider, model, prompt_sha256, cached, ok, attempts, tokens_in,
    tokens_out, cost_usd, latency_ms, error, arm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
Q_USAGE = """
SELECT coalesce(arm, ''), role, provider, model, count(*), count(*) FILTER (WHERE cached),
       count(*) FILTER (WHERE NOT ok),
       coalesce(sum(tokens_in) FILTER (WHERE NOT cached), 0),
       coalesce(sum(tokens_out) FILTER (WHERE NOT cached), 0)
FROM llm_calls WHERE run_id IS NOT DISTINCT FROM ?
GROUP BY ALL ORDER BY ALL
"""
_ARM: contextvars.ContextVar[str | None] = contextvars.ContextVar("bfr_call_arm", default=None)


@contextlib.contextmanager
def call_arm(arm: str | None) -> Iterator[None]:
    """Calls made in this block (this thread) are logged under ``arm``."""
    token = _ARM.set(arm)
    try:
        yield
    finally:
        _ARM.reset(token)
Q_SUMMARY = """
SELECT count(*), count(*) FILTER (WHERE NOT cached AND ok), count(*) FILTER (WHERE cached),
       count(*) FILTER (WHERE NOT ok), coalesce(sum(attempts), 0),
       coalesce(sum(tokens_in) FILTER (WHERE NOT cached), 0),
       coalesce(sum(tokens_out) FILTER (WHERE NOT cached), 0),
       coalesce(sum(cost_usd) FILTER (WHERE NOT cached), 0)
FROM llm_calls WHERE run_id IS NOT DISTINCT FROM ?
"""


@dataclass(frozen=True, slots=True)
class CallSummary:
    """What one run spent. Tokens and cost count provider calls only (cache hits are free)."""

    calls: int = 0  # role calls made through the cache wrapper
    provider_calls: int = 0  # calls the cache could not answer and that succeeded
    cached: int = 0  # calls answered from llm_cache
    failed: int = 0  # calls that raised LLMCallFailed
    attempts: int = 0  # provider attempts including retries
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class LLMCache:
    """Reads and writes the two tables through the store (a cursor per call)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.ensure(DDL)

    @property
    def writable(self) -> bool:
        """Whether replies can be stored now (a shared store may be showing a read-only copy)."""
        return not self.store.read_only

    def get(self, provider: str, model: str, temperature: float, sha: str) -> LLMResponse | None:
        row = fetch_if_tables(self.store.cursor(), Q_GET, [provider, model, float(temperature), sha], one=True)
        if row is None:
            return None
        return LLMResponse(row[0], row[1] or 0, row[2] or 0, row[3] or 0.0, cached=True, attempts=0)

    def put(self, provider: str, model: str, temperature: float, sha: str, resp: LLMResponse) -> None:
        if not self.writable:
            return
        args = [provider, model, float(temperature), sha, resp.text, resp.tokens_in, resp.tokens_out,
                resp.cost_usd]
        # another thread may have written the same key first: its reply is as good as ours
        with contextlib.suppress(duckdb.TransactionException):
            self.store.cursor().execute(Q_PUT, args)

    def delete(self, provider: str, model: str, temperature: float, sha: str) -> None:
        if self.writable:
            self.store.cursor().execute(Q_DELETE, [provider, model, float(temperature), sha])

    def log(self, run_id: str | None, role: str, provider: str, model: str, sha: str, *,
            resp: LLMResponse | None, latency_ms: float, error: str = "", attempts: int = 0,
            arm: str | None = None) -> None:
        if not self.writable:
            return
        ok = resp is not None
        self.store.cursor().execute(Q_LOG, [
            run_id, role, provider, model, sha, bool(resp and resp.cached), ok,
            resp.attempts if resp else attempts, resp.tokens_in if resp else 0,
            resp.tokens_out if resp else 0, resp.cost_usd if resp else 0.0, latency_ms, error or None,
            arm if arm is not None else _ARM.get(),
        ])

    def replay(self, records: Sequence[CallRecord], run_id: str | None) -> None:
        """Write what a :class:`RecordingLLM` kept: successful replies into the cache, every call
        into the log (in the order the worker made them)."""
        for r in records:
            if r.resp is not None and not r.resp.cached:
                self.put(r.provider, r.model, r.temperature, r.sha, r.resp)
            self.log(run_id, r.role, r.provider, r.model, r.sha, resp=r.resp, latency_ms=r.latency_ms,
                     error=r.error, attempts=r.attempts, arm=r.arm)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call a worker made without the store (see :class:`RecordingLLM`)."""

    role: str
    provider: str
    model: str
    temperature: float
    sha: str
    resp: LLMResponse | None  # None: it failed for good
    latency_ms: float
    error: str = ""
    attempts: int = 0
    arm: str | None = None


@dataclass
class Meter:
    """Running totals of one client's calls, for a progress line (thread-safe)."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, resp: LLMResponse | None) -> None:
        with self._lock:
            self.calls += 1
            if resp is None:
                self.failed += 1
            elif resp.cached:
                self.cached += 1
            else:
                self.tokens_in += resp.tokens_in
                self.tokens_out += resp.tokens_out


class CachedLLM:
    """Answers from ``llm_cache`` when it can; otherwise asks ``inner`` and stores the reply."""

    def __init__(self, inner: LLM, cache: LLMCache, *, run_id: str | None = None) -> None:
        self.inner, self.cache, self.run_id = inner, cache, run_id
        self.provider, self.model = inner.provider, inner.model
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.elapsed_ms = 0.0  # wall time spent in complete() by this client, cache hits included
        self._mine = threading.local()  # the same, by the calling thread (see spent_ms)
        self.meter = Meter()

    def _spent(self, start: float) -> float:
        ms = (time.perf_counter() - start) * 1000
        with self._guard:
            self.elapsed_ms += ms
        self._mine.ms = getattr(self._mine, "ms", 0.0) + ms
        return ms

    def thread_elapsed_ms(self) -> float:
        """Wall time this thread has spent in complete() of this client."""
        return float(getattr(self._mine, "ms", 0.0))

    @property
    def label(self) -> str:
        return self.inner.label

    def __repr__(self) -> str:
        return f"CachedLLM({self.inner!r}, run_id={self.run_id!r})"

    def with_run(self, run_id: str | None) -> CachedLLM:
        """The same client logging its calls under another run id."""
        return CachedLLM(self.inner, self.cache, run_id=run_id)

    def forget(self, request: LLMRequest) -> None:
        """Drop a cached reply the caller found unusable, so a rerun asks the provider again."""
        self.cache.delete(self.provider, self.model, request.temperature, request.sha256())

    def _key_lock(self, sha: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(sha, threading.Lock())

    def complete(self, request: LLMRequest) -> LLMResponse:
        sha, temp = request.sha256(), request.temperature
        start = time.perf_counter()
        with self._key_lock(sha):
            hit = self.cache.get(self.provider, self.model, temp, sha)
            if hit is not None:
                self.cache.log(self.run_id, request.role, self.provider, self.model, sha, resp=hit,
                               latency_ms=self._spent(start))
                self.meter.add(hit)
                return hit
            try:
                resp = self.inner.complete(request)
            except LLMCallFailed as exc:
                self.cache.log(self.run_id, request.role, self.provider, self.model, sha, resp=None,
                               latency_ms=self._spent(start), error=exc.reason,
                               attempts=exc.attempts)
                self.meter.add(None)
                raise
            resp = replace(resp, cached=False)
            self.cache.put(self.provider, self.model, temp, sha, resp)
        self.cache.log(self.run_id, request.role, self.provider, self.model, sha, resp=resp,
                       latency_ms=self._spent(start))
        self.meter.add(resp)
        return resp


class RecordingLLM:
    """For a worker that has no store (a Ray task): asks ``inner`` (a retried provider), answers a
    repeated request from its own memory, and keeps every call as a :class:`CallRecord`; the driver
    writes them with :meth:`LLMCache.replay`. ``preloaded`` seeds the memory with replies the driver's
    cache already holds (sha -> response)."""

    def __init__(self, inner: LLM, preloaded: Mapping[str, LLMResponse] | None = None) -> None:
        self.inner = inner
        self.provider, self.model = inner.provider, inner.model
        self.memory: dict[str, LLMResponse] = dict(preloaded or {})
        self.records: list[CallRecord] = []
        self.elapsed_ms = 0.0
        self.meter = Meter()
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return self.inner.label

    def thread_elapsed_ms(self) -> float:
        return self.elapsed_ms

    def forget(self, request: LLMRequest) -> None:
        self.memory.pop(request.sha256(), None)

    def drain(self) -> list[CallRecord]:
        with self._lock:
            out, self.records = self.records, []
        return out

    def complete(self, request: LLMRequest) -> LLMResponse:
        sha, start = request.sha256(), time.perf_counter()
        hit = self.memory.get(sha)
        resp: LLMResponse | None = replace(hit, cached=True, attempts=0) if hit is not None else None
        error, attempts = "", 0
        try:
            if resp is None:
                resp = replace(self.inner.complete(request), cached=False)
                self.memory[sha] = resp
        except LLMCallFailed as exc:
            error, attempts = exc.reason, exc.attempts
            raise
        finally:
            ms = (time.perf_counter() - start) * 1000
            self.elapsed_ms += ms
            self.meter.add(resp)
            with self._lock:
                self.records.append(CallRecord(request.role, self.provider, self.model, request.temperature,
                                               sha, resp, ms, error, attempts, _ARM.get()))
        return resp


def spent_ms(*clients: object) -> float:
    """Wall time the distinct ``clients`` have spent in calls so far, by the calling thread
    (``CachedLLM.thread_elapsed_ms``, else ``elapsed_ms``; a client without either, or None, adds 0).
    Take it before and after to time a piece of work: other threads' calls do not count."""
    distinct = {id(c): c for c in clients if c is not None}
    total = 0.0
    for c in distinct.values():
        mine = getattr(c, "thread_elapsed_ms", None)
        total += float(mine() if callable(mine) else (getattr(c, "elapsed_ms", 0.0) or 0.0))
    return total


def meters(*clients: object) -> list[Meter]:
    """The distinct meters of ``clients`` (wrappers without one are skipped)."""
    seen = {id(c): c for c in clients if c is not None}
    return list({id(m): m for c in seen.values() if (m := getattr(c, "meter", None)) is not None}.values())


def call_summary(store: Store, run_id: str | None) -> CallSummary:
    store.ensure(DDL)
    row = fetch_if_tables(store.cursor(), Q_SUMMARY, [run_id], one=True)
    if row is None:
        return CallSummary()
    return CallSummary(int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]), int(row[5]),
                       int(row[6]), float(row[7]))


def usage_by(store: Store, run_id: str | None,
             price: Callable[[str, str, int, int], float | None] | None = None) -> dict[str, Any]:
    """Calls, cache hits, failures, tokens and cost of one run, per arm (then role) and per role.

    Tokens and cost count provider calls only. ``price(provider, model, tokens_in, tokens_out)`` gives
    a cost or None ("unknown price", shown as null); without it cost is null. Calls made outside an
    arm's work (none today) are filed under arm ``""``."""
    store.ensure(DDL)
    rows = store.cursor().execute(Q_USAGE, [run_id]).fetchall()

    def empty() -> dict[str, Any]:
        return {"calls": 0, "cache_hits": 0, "failed": 0, "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}

    def add(into: dict[str, Any], n: int, hits: int, failed: int, tin: int, tout: int, cost: float | None) -> None:
        into["calls"] += n
        into["cache_hits"] += hits
        into["failed"] += failed
        into["tokens_in"] += tin
        into["tokens_out"] += tout
        into["cost_usd"] = None if cost is None or into["cost_usd"] is None else round(into["cost_usd"] + cost, 6)

    arms: dict[str, dict[str, Any]] = {}
    roles: dict[str, dict[str, Any]] = {}
    for arm, role, provider, model, n, hits, failed, tin, tout in rows:
        cost = price(provider, model, int(tin), int(tout)) if price else None
        vals = (int(n), int(hits), int(failed), int(tin), int(tout), cost)
        a = arms.setdefault(arm, {**empty(), "roles": {}})
        add(a, *vals)
        add(a["roles"].setdefault(role, empty()), *vals)
        add(roles.setdefault(role, empty()), *vals)
    return {"by_arm": arms, "by_role": roles}


def export_calls(store: Store, run_id: str | None = None) -> list[dict[str, Any]]:
    """The call log as plain dicts (all runs, or one), oldest first. Holds no prompts and no keys."""
    store.ensure(DDL)
    cur = store.cursor().execute(
        "SELECT * FROM llm_calls WHERE ? IS NULL OR run_id = ? ORDER BY created", [run_id, run_id]
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
