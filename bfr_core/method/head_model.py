"""A learned re-selection of the set's head: which of the first :data:`budget_set.WINDOW` turns a small set holds.

The ranking's weights are a linear score; which head turns complete a small set depends on how its parts
interact (a turn that matches few words but sits in the best turn's session beside a requirement it
supplies). This module scores each head turn with gradient-boosted trees over :data:`FEATURES` - the
ranking's parts, the set order's position, Stage I's requirement share and the turn's relation to the head's
first turns - and orders the head by that score (ties by set position). Turns below the head keep their
order, so the set at :data:`budget_set.WINDOW` turns is the same set: only the smaller budgets change. It
applies in the words regime (``OursSettings.head_in``): a remark's set has its own rule.

The trees are data, not code: a JSON file beside this module (``OursSettings.head_model`` names it),
written by bench/quality/bench_head_model.py, which trains them on the development benchmarks' gold
(cross-validated by conversation for its figures, then on every conversation for the file) and checks that
:meth:`Trees.raw` gives the trainer's own decision values. Evaluation is plain numpy over (tree, row) lanes:
at each step, every lane still at a split descends one level, so all trees advance together and a lane that
reached its leaf drops out.

Does not cover: training (the bench), the features' sources (``variants.variant_parts``, ``turn_scores``,
``stage1``), the set order it starts from (``budget_set``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bfr_core.fusion import zscore
from bfr_core.method.budget_set import WINDOW, unit_rows

if TYPE_CHECKING:
    from bfr_core.method.turn_scores import TurnScores

HERE = Path(__file__).resolve().parent
FIRST = 3  # the head's first turns whose mean vector a turn is compared with

# One column per name, in this order (the trees read columns by index)
FEATURES = (
    "score",            # the ranking's final score
    "log_position",     # log(1 + position in the set order)
    "bm25",             # z(stemmed BM25 over the bare text)
    "dense",            # z(the dense view's similarity)
    "speaker",          # 1: the one speaker the question names spoke it
    "dates",            # 1: its session is dated in a window the question names
    "stating",          # 1: the stating role spoke it
    "context",          # the neighbours' part of the score
    "session",          # the session-relevance part of the score
    "asking",           # share of its words in sentences that ask
    "requirements",     # share of Stage I's requirements it supplies (0 with none)
    "n_requirements",   # how many requirements Stage I has
    "cos_first",        # cosine with the head's first turn
    "cos_first3",       # cosine with the mean of the head's first FIRST turns
    "first_session",    # 1: in the head's first turn's session
    "log_session_rank",  # log(1 + head position of its session's best turn)
    "log_turns",        # log of the scope's turn count
    "bm25_plain",       # z(BM25 over the unstemmed view)
    "bm25_speaker",     # z(stemmed BM25 over "Speaker: text")
    "static",           # z(the static vectors' cosine)
    "recency",          # its session's date rank in [0, 1]
    "session_bm25",     # z(BM25 of its session's joined text)
    "session_static",   # z(cosine with its session's mean static vector)
    "session_short",    # z(cosine with its session's mean MiniLM vector)
)

# What variants.variant_parts must compute for the features
PARTS = {"indexes": ("stemmed", "plain", "stemmed+speaker"), "doc_views": ("static", "short"), "static": True,
         "recency": True, "doc_bm25": True}


def features(order: np.ndarray, sc: TurnScores, vp: Any, rows: Sequence[int], n_reqs: int,
             vectors: np.ndarray, asking: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """The (head, :data:`FEATURES`) matrix of the first ``window`` turns of ``order`` (positions into the
    scope's turns, best first); ``vp``: the question's ``variants.VariantParts`` with :data:`PARTS`; ``rows``:
    the head's requirement bitmasks (``stage1.incidence``), ``n_reqs`` how many requirements they count;
    ``vectors`` and ``asking``: every turn's."""
    head = np.asarray(order[:window], dtype=np.int64)
    k = len(head)
    p = vp.core

    def standard(x: np.ndarray) -> np.ndarray:  # z-scored over the scope, read over the head
        return zscore(np.asarray(x, dtype=np.float64))[head]

    unit = unit_rows(np.asarray(vectors)[head])
    sessions = np.asarray(p.session)[head]
    best_rank: dict[int, int] = {}
    for r, s in enumerate(sessions):
        best_rank.setdefault(int(s), r)
    bits = [bin(int(x)).count("1") for x in rows] if n_reqs else [0] * k
    zeros = np.zeros(k)
    n = len(p.bm25)
    cols = (
        np.asarray(sc.final, dtype=np.float64)[head], np.log1p(np.arange(k)), standard(p.bm25),
        standard(p.dense), p.speaker[head], p.dates[head], p.stating[head],
        np.asarray(sc.context, dtype=np.float64)[head],
        np.asarray(sc.session, dtype=np.float64)[head] if sc.session is not None else zeros,
        np.asarray(asking, dtype=np.float64)[head], np.asarray(bits, dtype=np.float64) / max(n_reqs, 1),
        np.full(k, float(n_reqs)), unit @ unit[0] if k else zeros,
        unit @ unit[:FIRST].mean(axis=0) if k else zeros,
        (sessions == sessions[0]).astype(np.float64) if k else zeros,
        np.log1p([best_rank[int(s)] for s in sessions]), np.full(k, np.log(max(n, 1))), standard(vp.bm25["plain"]), standard(vp.bm25["stemmed+speaker"]),
        standard(vp.dense_static), np.asarray(vp.recency, dtype=np.float64)[head], standard(vp.doc_bm25),
        standard(vp.doc_dense["static"]), standard(vp.doc_dense["short"]),
    )
    return np.column_stack(cols) if k else np.zeros((0, len(FEATURES)))


@dataclass(frozen=True)
class Trees:
    """A sum of binary trees over :data:`FEATURES` (each array: one row per tree, one column per node;
    node 0 the root; a split sends a row left when its feature is at most the threshold, a missing value
    where ``missing_left`` says)."""

    baseline: float
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    value: np.ndarray
    missing_left: np.ndarray
    features: tuple[str, ...] = FEATURES

    def raw(self, x: np.ndarray) -> np.ndarray:
        """Each row's baseline plus its leaf value in every tree (a log-odds: larger is likelier gold)."""
        x = np.asarray(x, dtype=np.float64)
        feature, threshold, missing_left, step_left, step_right, leaf = self._flat
        n_trees, width = self.feature.shape
        cells = x.ravel()
        node = np.repeat(np.arange(n_trees, dtype=np.int64) * width, len(x))  # (tree, row) lanes, tree-major
        at = np.tile(np.arange(len(x), dtype=np.int64) * x.shape[1], n_trees)
        live = np.flatnonzero(~leaf[node])
        while len(live):  # only the lanes still at a split take the next step
            at_node = node[live]
            vals = cells[at[live] + feature[at_node]]
            go_left = (vals <= threshold[at_node]) | (np.isnan(vals) & missing_left[at_node])
            node[live] = np.where(go_left, step_left[at_node], step_right[at_node])
            live = live[~leaf[node[live]]]
        return self.baseline + self.value.ravel()[node].reshape(n_trees, len(x)).sum(axis=0)

    @cached_property
    def _flat(self) -> tuple[np.ndarray, ...]:
        """The trees as flat arrays over global node numbers (tree * nodes + node): the split's feature,
        threshold and missing-value side, the next node either way (a leaf steps to itself) and whether it is a
        leaf; :meth:`raw` descends every tree at once with 1-D lookups."""
        n_trees, width = self.feature.shape
        first = (np.arange(n_trees) * width)[:, None]
        own = first + np.arange(width)[None, :]
        return (np.where(self.leaf, 0, self.feature).ravel(), self.threshold.ravel(), self.missing_left.ravel(),
                np.where(self.leaf, own, self.left + first).ravel(), np.where(self.leaf, own, self.right + first).ravel(),
                self.leaf.ravel())

    def to_dict(self) -> dict:
        return {"features": list(self.features), "baseline": self.baseline,
                **{f: getattr(self, f).tolist() for f in ARRAYS}}

    @classmethod
    def from_dict(cls, d: dict) -> Trees:
        names = tuple(d["features"])
        if names != FEATURES:
            raise ValueError(f"head model reads features {names}, this code makes {FEATURES}")
        arrays = {f: np.asarray(d[f], dtype=dtype) for f, dtype in ARRAYS.items()}
        shapes = {a.shape for a in arrays.values()}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise ValueError(f"head model arrays must share one (trees, nodes) shape, not {sorted(shapes)}")
        return cls(float(d["baseline"]), **arrays, features=names)


ARRAYS = {"feature": np.int64, "threshold": np.float64, "left": np.int64, "right": np.int64, "leaf": bool,
          "value": np.float64, "missing_left": bool}


@lru_cache(maxsize=4)
def load(name: str) -> Trees:
    """The trees in ``name``, a JSON file beside this module."""
    path = HERE / name
    if not path.is_file():
        raise FileNotFoundError(f"head model {name!r} not found beside {HERE}")
    return Trees.from_dict(json.loads(path.read_text(encoding="utf-8")))


def reselect(order: np.ndarray, sc: TurnScores, vp: Any, rows_of: Callable[[np.ndarray], Sequence[int]],
             n_reqs: int, vectors: np.ndarray, asking: np.ndarray, name: str, window: int = WINDOW) -> np.ndarray:
    """``order`` with its head re-ordered by the trees in ``name`` (:func:`features`, :func:`reorder`);
    ``rows_of(head)`` gives the head's requirement bitmasks, read only when ``n_reqs`` is not 0."""
    head = np.asarray(order[:window])
    rows = rows_of(head) if n_reqs else ()
    return reorder(order, load(name).raw(features(order, sc, vp, rows, n_reqs, vectors, asking, window)), window)


def reorder(order: np.ndarray, scores: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """``order`` with its first ``window`` turns sorted by ``scores`` (best first, ties by position); the rest as it was."""
    head = np.asarray(order[:window])
    ranked = head[np.lexsort((np.arange(len(head)), -np.asarray(scores, dtype=np.float64)))]
    return np.concatenate([ranked, np.asarray(order[window:])]).astype(np.asarray(order).dtype, copy=False)
