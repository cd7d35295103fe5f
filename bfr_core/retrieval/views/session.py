"""Session view: cue = an anchor turn id; returns the other turns of the anchor's session.

Covers: conversational locality (the turn before a question's answer often holds its setup, the
turn after its confirmation). Order: nearest to the anchor first (by |idx difference|), ties
earlier first; score = 1 / (1 + distance). An anchor outside the scope returns nothing.

Does not cover: neighbouring sessions, time windows across sessions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

from bfr_core.records import Hit, Turn


class SessionView:
    """``search(anchor_turn_id, k, exclude)`` over the anchor's session."""

    name = "session"

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._where: dict[str, tuple[str, int]] = {}
        sessions: dict[str, list[Turn]] = defaultdict(list)
        for t in turns:
            self._where[t.turn_id] = (t.session_id, t.idx)
            sessions[t.session_id].append(t)
        self._sessions = {sid: tuple(ts) for sid, ts in sessions.items()}

    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]:
        where = self._where.get(cue)
        if where is None or k <= 0:
            return []
        sid, idx = where
        # Sort key: distance, then earlier first (idx breaks the tie between idx-d and idx+d).
        others = sorted((t for t in self._sessions[sid] if t.turn_id != cue),
                        key=lambda t: (abs(t.idx - idx), t.idx))
        out: list[Hit] = []
        for t in others:
            if t.turn_id in exclude:
                continue
            out.append(Hit(t.turn_id, 1.0 / (1 + abs(t.idx - idx)), self.name, len(out)))
            if len(out) >= k:
                break
        return out
