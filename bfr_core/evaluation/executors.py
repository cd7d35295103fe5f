"""Where (question, arm) work runs: one small protocol, a thread pool, and a Ray cluster.

Covers: :class:`Executor` (one method, ``map(fn, jobs)``: ``fn(context, item)`` for every job,
results yielded in job order whatever order they finish in), :class:`ThreadExecutor` (``workers``
threads; 1 = in the calling thread, exactly the sequential loop), :class:`RayExecutor` (Ray tasks on
a local or remote cluster; each distinct context object is put in the object store once and shared
by its jobs) and :func:`make_executor`. Does not cover: what the work is (``evaluate``, ``answers``)
or writing results (the caller does that, from the one thread that consumes ``map``).

A job's context is shared by many jobs (a scope's views, the LLM clients); its item is what differs
(a question and an arm). Results never depend on the executor or the number of workers: ``fn`` must be
a function of its arguments (every tie is broken by id, every seed fixed), and ``map`` preserves order.
At most ``window`` jobs are in flight, so a huge run does not queue everything at once.

Interrupting (Ctrl-C) a threaded run returns at once: jobs not started are dropped, and jobs still
running (an arm that hangs, a plug-in's included) are left to their daemon threads, which end with
the process; any other way out of ``map`` waits for the running jobs, as before.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

from bfr_core.errors import BfrError

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")
EXECUTORS = ("thread", "ray")


class Executor(Protocol):
    """Runs ``fn(context, item)`` for each job; yields the results in job order."""

    def map(self, fn: Callable[[C, T], R], jobs: Iterable[tuple[C, T]]) -> Iterator[R]: ...


class _DaemonPool:
    """``workers`` daemon threads taking jobs from one queue (``concurrent.futures.ThreadPoolExecutor``
    joins its threads when the interpreter exits, so one hung job would hold up an interrupted run)."""

    def __init__(self, workers: int, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future, Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._work, name=f"{name}_{i}", daemon=True) for i in range(workers)]
        for t in self._threads:
            t.start()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(exc)

    def submit(self, fn: Callable[..., R], *args: Any) -> Future[R]:
        future: Future[R] = Future()
        self._jobs.put((future, fn, args))
        return future

    def shutdown(self, *, wait: bool) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        if wait:
            for t in self._threads:
                t.join()


class ThreadExecutor:
    """``workers`` threads (for work that waits on API calls); 1 runs the jobs in the calling thread."""

    remote = False  # contexts may hold the store and live clients

    def __init__(self, workers: int = 1, *, window: int | None = None) -> None:
        self.workers = max(1, int(workers))
        self.window = window or 4 * self.workers

    def map(self, fn: Callable[[C, T], R], jobs: Iterable[tuple[C, T]]) -> Iterator[R]:
        if self.workers == 1:
            for ctx, item in jobs:
                yield fn(ctx, item)
            return
        pool = _DaemonPool(self.workers, "bfr-eval")
        pending: deque[Future[R]] = deque()
        interrupted = False
        try:
            for ctx, item in jobs:
                pending.append(pool.submit(fn, ctx, item))
                if len(pending) >= self.window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:  # drop what has not started; wait for the rest, unless interrupted
            for f in pending:
                f.cancel()
            pool.shutdown(wait=not interrupted)


def _ray_call(fn: Callable[[Any, Any], Any], ctx: Any, item: Any) -> Any:
    return fn(ctx, item)


class RayExecutor:
    """Ray tasks: ``ray.init(address)`` joins a cluster (``None``: start a local one with ``workers``
    CPUs, or reuse the one this process already joined). Contexts and items must pickle (no store,
    no live clients): the caller hands remote work the scope's turns and the question, not the store."""

    remote = True

    def __init__(self, address: str | None = None, workers: int | None = None, *,
                 window: int | None = None) -> None:
        try:
            import ray  # optional dependency: ray, only for --executor ray
        except ImportError:
            raise BfrError("the ray executor needs Ray: pip install -e '.[ray]'") from None
        self.ray = ray
        if not ray.is_initialized():
            # local workers inherit this process's environment (PYTHONPATH included); a remote
            # cluster's nodes need bfr_core installed (README: "Running on a Ray cluster")
            kwargs: dict[str, Any] = {"address": address, "include_dashboard": False,
                                      "ignore_reinit_error": True, "log_to_driver": False}
            if address is None and workers:
                kwargs["num_cpus"] = int(workers)
            ray.init(**kwargs)
        self.workers = int(workers or ray.cluster_resources().get("CPU", 1))
        self.window = window or 4 * self.workers
        self._call = ray.remote(_ray_call)

    def map(self, fn: Callable[[C, T], R], jobs: Iterable[tuple[C, T]]) -> Iterator[R]:
        refs: dict[int, Any] = {}  # id(context) -> its object ref (jobs keep the contexts alive)
        fn_ref = self.ray.put(fn)
        pending: deque[Any] = deque()
        try:
            for ctx, item in jobs:
                if id(ctx) not in refs:
                    refs[id(ctx)] = self.ray.put(ctx)
                pending.append(self._call.remote(fn_ref, refs[id(ctx)], item))
                if len(pending) >= self.window:
                    yield self.ray.get(pending.popleft())
            while pending:
                yield self.ray.get(pending.popleft())
        finally:
            for ref in pending:
                self.ray.cancel(ref)


def make_executor(name: str = "thread", workers: int = 1, address: str | None = None) -> Executor:
    """``thread`` (the default) or ``ray``; ``address`` only for Ray."""
    if name == "thread":
        if address:
            raise BfrError("--ray-address needs --executor ray")
        return ThreadExecutor(workers)
    if name == "ray":
        return RayExecutor(address, workers if workers > 1 else None)
    raise BfrError(f"unknown executor '{name}'; choose one of {', '.join(EXECUTORS)}")
