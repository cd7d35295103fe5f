"""The one bounded, thread-safe LRU every process-wide cache of bfr_core uses.

Covers: :class:`LockedLRU` (``get``, ``put``, ``get_or_make``, ``clear``, ``len``, ``in``), every
operation under one lock, so ``bfr eval --workers N`` threads sharing a cache never see it half
updated (two unlocked OrderedDicts in ``method.turn_scores`` raised inside the arm under
concurrency, and the row was recorded failed and scored as an empty set). ``get_or_make`` builds
outside the lock (building a view can take seconds); two threads missing the same key both build
and the later ``put`` wins, which is harmless for caches of pure values.

Does not cover: expiry by time, size in bytes, caches across processes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")
_MISSING = object()


class LockedLRU(Generic[V]):
    """At most ``maxsize`` entries; the least recently read or written goes first."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"an LRU needs maxsize >= 1, not {maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: V | None = None) -> V | None:
        with self._lock:
            hit = self._data.get(key, _MISSING)
            if hit is _MISSING:
                return default
            self._data.move_to_end(key)
            return hit  # type: ignore[return-value]

    def put(self, key: Hashable, value: V) -> V:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
        return value

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The cached value, or ``make()`` stored and returned (built outside the lock)."""
        with self._lock:
            hit = self._data.get(key, _MISSING)
            if hit is not _MISSING:
                self._data.move_to_end(key)
                return hit  # type: ignore[return-value]
        return self.put(key, make())

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
