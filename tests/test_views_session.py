"""Session view: the anchor's session, nearest first, ties earlier first, exclude before k."""

from __future__ import annotations

from bfr_core.records import Turn
from bfr_core.retrieval.views.base import View
from bfr_core.retrieval.views.session import SessionView

TURNS = tuple(Turn(f"a{i}", "A", i, "user", f"turn {i}") for i in range(6)) + tuple(
    Turn(f"b{i}", "B", i, "user", f"other {i}") for i in range(3))


def test_nearest_first_ties_earlier_first():
    view = SessionView(TURNS)
    assert isinstance(view, View)
    assert [h.turn_id for h in view.search("a2", 10)] == ["a1", "a3", "a0", "a4", "a5"]
    hits = view.search("a2", 2)
    assert [h.score for h in hits] == [0.5, 0.5] and [h.rank for h in hits] == [0, 1]


def test_exclude_before_k_and_unknown_anchor():
    view = SessionView(TURNS)
    assert [h.turn_id for h in view.search("a2", 2, exclude={"a1"})] == ["a3", "a0"]
    assert view.search("nope", 3) == [] and view.search("a2", 0) == []
    assert [h.turn_id for h in view.search("b0", 5)] == ["b1", "b2"]  # never crosses sessions
