"""bench/lib/stitching.py: the change it reports between the two stitchings, and its probe ranking."""

from __future__ import annotations

import numpy as np
import pytest

import bench.lib.stitching as B


def _summary(hit10: float | None, hit40: float) -> dict:
    return {"10": {"overall": {"turn_hit": hit10}}, "40": {"overall": {"turn_hit": hit40}}}


def test_change_is_embedded_minus_the_benchmarks_stitching_per_system_and_k():
    own = {"bfr": _summary(31.0, 55.5), "probe": _summary(45.0, 61.0), "gone": _summary(1.0, 2.0)}
    emb = {"bfr": _summary(31.0, 55.5), "probe": _summary(18.0, 39.5), "gone": _summary(None, 2.0)}
    assert B.change(own, emb) == {"bfr": {"10": 0.0, "40": 0.0}, "probe": {"10": -27.0, "40": -21.5},
                                  "gone": {"10": None, "40": 0.0}}
    assert B.change(own, {})["bfr"] == {"10": None, "40": None}  # a system run on one side only


class _Dense:
    def __init__(self, scores: list[float]) -> None:
        self._s = np.array(scores)

    def scores(self, text: str) -> np.ndarray:
        return self._s


def test_probe_ranks_by_dense_plus_the_sessions_topic(monkeypatch: pytest.MonkeyPatch):
    from bfr_core.records import Question, Turn

    turns = [Turn(f"t{i}", s, i, "A", "x") for i, s in enumerate(["s1", "s1", "s2", "s2"])]
    views = type("V", (), {"turns": turns, "dense": _Dense([0.9, 0.1, 0.5, 0.4])})()
    monkeypatch.setattr(B, "scope_views", lambda store, ds, scope: views)
    seen = {}

    def topic(v, text, session, view):  # session 2's topic is far closer: it lifts both of its turns
        seen.update(session=session.tolist(), view=view)
        return np.where(session == 1, 1.0, 0.0)

    monkeypatch.setattr(B, "session_topic", topic)
    q = Question("d", "q1", "q1", "remark", "", "causal", ("t3",))
    rows = B.probe_rows(None, "d", [q], [1, 2])
    assert seen == {"session": [0, 0, 1, 1], "view": "short"}
    assert [(r["system"], r["k"], r["turn_hit"]) for r in rows] == [(B.PROBE, 1, 0), (B.PROBE, 2, 1)]
    assert rows[0]["relation"] == "causal"
