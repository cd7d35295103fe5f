"""bfr_core.lru: the one locked LRU (bounded, recency order, safe across threads)."""

import threading

import pytest

from bfr_core.lru import LockedLRU


def test_least_recently_used_goes_first():
    c: LockedLRU[int] = LockedLRU(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1  # a is now the most recent
    c.put("c", 3)
    assert "b" not in c and c.get("a") == 1 and c.get("c") == 3 and len(c) == 2
    assert c.get("b") is None and c.get("b", 0) == 0


def test_get_or_make_builds_once_per_key_and_keeps_falsy_values():
    c: LockedLRU[int] = LockedLRU(4)
    made = []
    for _ in range(3):
        assert c.get_or_make("z", lambda: made.append(1) or 0) == 0
    assert made == [1]
    c.clear()
    assert len(c) == 0


def test_bad_size_is_refused():
    with pytest.raises(ValueError, match="maxsize"):
        LockedLRU(0)


def test_threads_hammering_a_small_cache_never_break_it():
    c: LockedLRU[int] = LockedLRU(8)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(3000):
                key = (seed * 7 + i) % 23
                if c.get(key) is None:
                    c.put(key, key)
                c.get_or_make(key + 100, lambda k=key: k)
        except BaseException as exc:  # noqa: BLE001 - any error inside a thread is the failure
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(c) <= 8
