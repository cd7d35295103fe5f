"""A small, fast stand-in for ``bfr_core.retrieval.scope.ScopeViews`` with the same attribute names.

Dense vectors are hashed bags of stemmed words (deterministic, no model); BM25 is plain Okapi;
entity = turns naming the cue or spoken by it; session = turns of the anchor's session by distance.
Used by the method tests so they run in milliseconds and do not depend on the real index.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from bfr_core.records import Hit, Scope, Turn
from bfr_core.text import tokenize, words

DIM = 96


def _vec(text: str) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for tok in tokenize(text, stemmed=True):
        h = int(hashlib.md5(tok.encode()).hexdigest()[:8], 16)
        v[h % DIM] += 1.0 if (h >> 8) & 1 else -1.0
        v[(h >> 9) % DIM] += 0.5
    n = float(np.linalg.norm(v))
    return v / n if n else v


@dataclass(frozen=True, eq=False)
class _Ranked:
    name: str
    turns: tuple[Turn, ...]
    score_fn: object  # (cue) -> np.ndarray aligned with turns
    positive_only: bool = True
    calls: list = field(default_factory=list, compare=False)

    def scores(self, cue: str) -> np.ndarray:
        return np.asarray(self.score_fn(cue))  # type: ignore[operator]

    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]:
        self.calls.append((cue, k))
        scores = self.score_fn(cue)  # type: ignore[operator]
        order = sorted(range(len(self.turns)), key=lambda i: (-float(scores[i]), i))
        out: list[Hit] = []
        for i in order:
            if len(out) >= k:
                break
            if self.positive_only and scores[i] <= 0:
                break
            tid = self.turns[i].turn_id
            if tid in exclude:
                continue
            out.append(Hit(tid, float(scores[i]), self.name, len(out)))
        return out


@dataclass(frozen=True, eq=False)
class FakeScopeViews:
    scope: Scope  # dataset_id blank, as build_views leaves it
    turns: tuple[Turn, ...]
    position: dict[str, int]
    by_id: dict[str, Turn]
    turn_vectors: np.ndarray
    bm25: _Ranked
    dense: _Ranked
    entity: _Ranked
    session: _Ranked
    hybrid: _Ranked
    _tokens: tuple[tuple[str, ...], ...]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([_vec(t) for t in texts]) if texts else np.zeros((0, DIM), np.float32)

    def bm25_scores(self, text: str) -> np.ndarray:
        return _bm25(self._tokens, tokenize(text, stemmed=True))


def _bm25(docs: Sequence[Sequence[str]], query: Sequence[str], k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    n = len(docs)
    avg = sum(len(d) for d in docs) / max(n, 1) or 1.0
    df: dict[str, int] = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    out = np.zeros(n, dtype=np.float64)
    for t in set(query):
        if t not in df:
            continue
        idf = np.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
        for i, d in enumerate(docs):
            tf = d.count(t)
            if tf:
                out[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avg))
    return out


def make_views(rows: Sequence[tuple[str, str, str]], *, scope: str = "s",
               start: datetime = datetime(2023, 5, 1)) -> FakeScopeViews:
    """``rows`` = (session_id, speaker, text) in scope order; session k is dated ``start + k days``."""
    sessions: dict[str, int] = {}
    turns: list[Turn] = []
    for sid, speaker, text in rows:
        sessions.setdefault(sid, len(sessions))
        idx = sum(1 for t in turns if t.session_id == sid)
        turns.append(Turn(f"{sid}:{idx + 1}", sid, idx, speaker, text, start + timedelta(days=sessions[sid]),
                          f"{sid}:{idx + 1}"))
    tt = tuple(turns)
    toks = tuple(tuple(tokenize(t.text, stemmed=True)) for t in tt)
    vecs = np.stack([_vec(t.text) for t in tt]) if tt else np.zeros((0, DIM), np.float32)

    def dense_scores(cue: str) -> np.ndarray:
        return vecs @ _vec(cue)

    def bm25_scores(cue: str) -> np.ndarray:
        return _bm25(toks, tokenize(cue, stemmed=True))

    def entity_scores(cue: str) -> np.ndarray:
        key = cue.lower().split()[0] if cue.strip() else ""
        return np.array([(words(t.text).count(key) + (1.0 if t.speaker.lower().startswith(key) else 0.0))
                         if key else 0.0 for t in tt])

    def session_scores(cue: str) -> np.ndarray:
        anchor = next((t for t in tt if t.turn_id == cue), None)
        if anchor is None:
            return np.zeros(len(tt))
        return np.array([1.0 / (1 + abs(t.idx - anchor.idx)) if t.session_id == anchor.session_id
                         and t.turn_id != cue else 0.0 for t in tt])

    def hybrid_scores(cue: str) -> np.ndarray:
        b = bm25_scores(cue)
        return dense_scores(cue) + (b / b.max() if b.max() > 0 else b)

    scope_rec = Scope("", scope, tuple(sessions), tuple(dict.fromkeys(t.speaker for t in tt)))
    return FakeScopeViews(
        scope_rec, tt, {t.turn_id: i for i, t in enumerate(tt)}, {t.turn_id: t for t in tt}, vecs,
        _Ranked("bm25", tt, bm25_scores), _Ranked("dense", tt, dense_scores, positive_only=False),
        _Ranked("entity", tt, entity_scores), _Ranked("session", tt, session_scores),
        _Ranked("hybrid", tt, hybrid_scores, positive_only=False), toks,
    )


# A small two-person conversation with a delivery-time question's two endpoints in different
# sessions, distractors about the same topic, and filler.
SHUTTER_ROWS: list[tuple[str, str, str]] = [
    ("S1", "Alice", "I love hiking with my camera gear in the mountains."),
    ("S1", "Bob", "Hiking photography sounds fun, what lens do you take?"),
    ("S1", "Alice", "My 50mm prime lens, and I ordered a new remote shutter release online on February 5th."),
    ("S1", "Bob", "A remote shutter release helps with long exposures on a tripod."),
    ("S1", "Alice", "I am also selling my old tripod on the marketplace."),
    ("S2", "Bob", "How was your weekend? I went fishing at the lake."),
    ("S2", "Alice", "Great! I baked bread and watched a movie about photography."),
    ("S2", "Bob", "Photography movies are the best, my camera is old though."),
    ("S3", "Alice", "Backing up photos: considering Western Digital drives."),
    ("S3", "Alice", "By the way the shutter gadget arrived on February 10th and it works great."),
    ("S3", "Bob", "Lightroom presets for landscape photography are handy."),
    ("S4", "Bob", "Caroline told me about the pride parade she attended in August."),
    ("S4", "Alice", "Melanie painted a sunrise over the lake last year."),
    ("S4", "Bob", "My camera tripod broke and I bought a new camera tripod."),
] + [("S5", "Bob" if i % 2 else "Alice", f"Filler chat number {i} about weather and coffee and work.")
     for i in range(30)]


_VOCAB = ("camera tripod lens hike lake painting pottery parade support group concert guitar violin "
          "market garden dog cat puppy school work coffee movie book trip beach mountain sunrise "
          "family friend birthday party race marathon adopt shelter recipe bake bread").split()


def big_rows(n: int = 400, sessions: int = 20, seed: int = 7) -> list[tuple[str, str, str]]:
    """A larger deterministic conversation (Alice/Bob/Caroline) where every topic word recurs often,
    so BM25, entity and session calls keep returning unseen turns for many rounds."""
    import random

    rng = random.Random(seed)
    speakers = ("Alice", "Bob", "Caroline")
    rows = []
    for i in range(n):
        words_ = rng.sample(_VOCAB, 6)
        mention = rng.choice(speakers) if rng.random() < 0.5 else ""
        rows.append((f"S{i * sessions // n + 1}", speakers[i % 3],
                     f"{mention} talked about the {words_[0]} and {words_[1]}, then {' '.join(words_[2:])} #{i}"))
    return rows
