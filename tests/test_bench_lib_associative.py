"""bench/lib/associative.py: the paired figures of the ranking with and without the antecedent."""

from __future__ import annotations

import numpy as np

import bench.lib.associative as B
from bench.lib.selection import COLS


def _rows(hits10: list[int], hits40: list[int]) -> np.ndarray:
    rows = np.zeros((len(hits10), len(COLS)), dtype=np.int8)
    rows[:, 0] = 1
    rows[:, COLS.index("hit@10")] = hits10
    rows[:, COLS.index("hit@40")] = hits40
    return rows


def test_figures_pair_the_same_questions_with_and_without_the_step():
    plain, assoc = _rows([1, 0, 0, 1], [1, 1, 0, 1]), _rows([1, 1, 1, 0], [1, 1, 0, 1])
    out = B.figures(plain, assoc)
    assert out["without the step"]["hit@10"] == 50.0 and out["with the antecedent"]["hit@10"] == 75.0
    assert out["hit@10 paired"] == {"only with the antecedent": 2, "only without": 1, "mcnemar_p": 1.0}
    assert out["hit@40 paired"]["only with the antecedent"] == out["hit@40 paired"]["only without"] == 0
    empty = B.figures(_rows([], []), _rows([], []))
    assert empty["hit@10 paired"]["mcnemar_p"] == 1.0


class _Model:
    label = "fake:model"

    def complete(self, request):
        import json

        from bfr_core.llm.base import LLMResponse

        return LLMResponse(json.dumps({"statement": "I ordered a remote shutter release for my camera."}), 1, 1)


def test_compare_asks_only_for_remark_regime_questions_and_pairs_both_rankings():
    from fakes_views import SHUTTER_ROWS, make_views

    from bench.lib.selection import RankCase
    from bfr_core.method import turn_scores
    from bfr_core.records import Query

    views = make_views(SHUTTER_ROWS, scope="c0")
    texts = {"remark": "Alice finally got the shutter thing working after the wait.",
             "asked": "When did the remote shutter release arrive?"}
    gold = frozenset({views.turns[9].turn_id})
    cases, parts = [], []
    for qid, text in texts.items():
        cases.append(RankCase(qid, "c0", "c0", "t", gold, tuple(t.turn_id for t in views.turns),
                              {t.turn_id: t.session_id for t in views.turns}, None))
        parts.append(turn_scores.score_parts(views, Query(qid, "c0", text)))
    regimes = [turn_scores.combine(p).regime for p in parts]
    assert regimes == ["remark", "words"]  # the shipped gate: a remark, and a question whose words stand out
    out = B.compare(_Model(), cases, lambda scope, q=None: views, texts, parts)
    assert out["questions"] == 2 and out["in the remark regime"] == regimes.count("remark")
    assert out["with a statement"] == out["in the remark regime"] and out["failed calls"] == 0
    assert set(out) >= {"without the step", "with the antecedent", "hit@10 paired", "hit@40 paired"}
