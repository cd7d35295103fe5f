"""Every LLM call is answered from, or written to, the store: table ``llm_cache``; and logged per run
in ``llm_calls``.

Covers: the two tables' DDL, :class:`LLMCache` (lookup / put), :class:`CachedLLM` (the wrapper that
makes a rerun cost zero provider calls, and logs each call), :func:`call_summary` (per-run
accounting) and :func:`export_calls`. Does not cover: retries (``retry.py``).

The cache key is (provider, model, temperature, sha256 of the request: system, prompt, payload,
JSON settings, max_tokens). Failures are never cached, so a rerun retries them. Concurrent callers
asking the same key wait for the first (single flight), so a parallel run pays once per prompt.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

import duckdb

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
    tokens_out, cost_usd, latency_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
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
        try:
            row = self.store.cursor().execute(Q_GET, [provider, model, float(temperature), sha]).fetchone()
        except duckdb.CatalogException:  # a read-only store made before this table existed
            return None
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
            resp: LLMResponse | None, latency_ms: float, error: str = "", attempts: int = 0) -> None:
        if not self.writable:
            return
        ok = resp is not None
        self.store.cursor().execute(Q_LOG, [
            run_id, role, provider, model, sha, bool(resp and resp.cached), ok,
            resp.attempts if resp else attempts, resp.tokens_in if resp else 0,
            resp.tokens_out if resp else 0, resp.cost_usd if resp else 0.0, latency_ms, error or None,
        ])


class CachedLLM:
    """Answers from ``llm_cache`` when it can; otherwise asks ``inner`` and stores the reply."""

    def __init__(self, inner: LLM, cache: LLMCache, *, run_id: str | None = None) -> None:
        self.inner, self.cache, self.run_id = inner, cache, run_id
        self.provider, self.model = inner.provider, inner.model
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.elapsed_ms = 0.0  # wall time spent in complete() by this client, cache hits included

    def _spent(self, start: float) -> float:
        ms = (time.perf_counter() - start) * 1000
        with self._guard:
            self.elapsed_ms += ms
        return ms

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
                return hit
            try:
                resp = self.inner.complete(request)
            except LLMCallFailed as exc:
                self.cache.log(self.run_id, request.role, self.provider, self.model, sha, resp=None,
                               latency_ms=self._spent(start), error=exc.reason,
                               attempts=exc.attempts)
                raise
            resp = replace(resp, cached=False)
            self.cache.put(self.provider, self.model, temp, sha, resp)
        self.cache.log(self.run_id, request.role, self.provider, self.model, sha, resp=resp,
                       latency_ms=self._spent(start))
        return resp


def spent_ms(*clients: object) -> float:
    """Wall time the distinct ``clients`` have spent in calls so far (``CachedLLM.elapsed_ms``; a
    client without that counter, or None, adds 0). Take it before and after to time a piece of work."""
    distinct = {id(c): c for c in clients if c is not None}
    return sum(float(getattr(c, "elapsed_ms", 0.0) or 0.0) for c in distinct.values())


def call_summary(store: Store, run_id: str | None) -> CallSummary:
    store.ensure(DDL)
    try:
        row = store.cursor().execute(Q_SUMMARY, [run_id]).fetchone()
    except duckdb.CatalogException:
        return CallSummary()
    return CallSummary(int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]), int(row[5]),
                       int(row[6]), float(row[7]))


def export_calls(store: Store, run_id: str | None = None) -> list[dict[str, Any]]:
    """The call log as plain dicts (all runs, or one), oldest first. Holds no prompts and no keys."""
    store.ensure(DDL)
    cur = store.cursor().execute(
        "SELECT * FROM llm_calls WHERE ? IS NULL OR run_id = ? ORDER BY created", [run_id, run_id]
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
