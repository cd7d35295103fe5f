"""bfr_core/method/head_model.py: the features of the set's head, the trees' evaluation, the re-ordering, the
shipped file, and the arm with and without it."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from fakes_views import big_rows, make_views

from bfr_core.config import Config, RetrievalConfig
from bfr_core.method import head_model as H
from bfr_core.method import ours, turn_scores
from bfr_core.method import variants as V
from bfr_core.method.budgets import budget_for
from bfr_core.pipeline import ArmContext
from bfr_core.records import Query


def _stumps() -> H.Trees:
    """Two trees: the first splits on feature 0 at 0.5 (missing goes left), the second on feature 2 at 1.0
    (missing goes right); node 2 of the second tree is padding."""
    return H.Trees(
        baseline=-1.0,
        feature=np.array([[0, 0, 0], [2, 0, 0]]), threshold=np.array([[0.5, 0, 0], [1.0, 0, 0]]),
        left=np.array([[1, 0, 0], [1, 0, 0]]), right=np.array([[2, 0, 0], [2, 0, 0]]),
        leaf=np.array([[False, True, True], [False, True, True]]),
        value=np.array([[0.0, 0.25, 2.0], [0.0, -0.5, 0.5]]),
        missing_left=np.array([[True, False, False], [False, False, False]]),
        features=H.FEATURES)


def test_trees_sum_the_leaf_each_row_reaches():
    x = np.zeros((4, len(H.FEATURES)))
    x[1, 0] = 0.6
    x[2, 2] = 3.0
    x[3, 0], x[3, 2] = np.nan, np.nan  # missing: left in the first tree, right in the second
    assert H.Trees.raw(_stumps(), x).tolist() == [-1.25, 0.5, -0.25, -0.25]


def test_trees_round_trip_through_json_and_refuse_other_features():
    t = _stumps()
    back = H.Trees.from_dict(json.loads(json.dumps(t.to_dict())))
    x = np.random.default_rng(0).normal(size=(20, len(H.FEATURES)))
    assert np.array_equal(back.raw(x), t.raw(x))
    d = t.to_dict()
    with pytest.raises(ValueError, match="reads features"):
        H.Trees.from_dict({**d, "features": d["features"][:-1]})
    with pytest.raises(ValueError, match="one \\(trees, nodes\\) shape"):
        H.Trees.from_dict({**d, "value": [[0.0, 1.0]]})


def test_reorder_sorts_the_head_alone_ties_by_position():
    order = np.array([5, 3, 9, 1, 7, 2])
    out = H.reorder(order, np.array([0.1, 0.9, 0.1, 0.5]), window=4)
    assert out.tolist() == [3, 1, 5, 9, 7, 2]
    assert H.reorder(order, np.zeros(6), window=40).tolist() == order.tolist()


def test_load_names_a_missing_file_and_reads_the_shipped_one():
    with pytest.raises(FileNotFoundError, match="not found"):
        H.load("no_such_model.json")
    shipped = turn_scores.DEFAULT.head_model
    assert shipped, "ours.toml names the head model bfr ships"
    trees = H.load(shipped)
    assert trees.features == H.FEATURES and trees.feature.shape[0] > 0


def _ctx(views) -> ArmContext:
    return ArmContext(views, Config(retrieval=RetrievalConfig(ground=10)), budget_for("conv-fusion", "C6"), "C6")


QUESTIONS = ["What did Caroline say about the camera?", "When did Bob go to the lake with the tripod?"]


def test_features_describe_the_head_in_set_order():
    views = make_views(big_rows())
    q = Query("q", "s", QUESTIONS[0])
    vp = V.variant_parts(views, q, **H.PARTS)
    sc = turn_scores.combine(vp.core, turn_scores.DEFAULT)
    order = turn_scores.ranking(sc.final)
    asking = turn_scores.asking(views)
    x = H.features(order, sc, vp, [0b11, 0b01] + [0] * 38, 2, views.turn_vectors, asking)
    col = {f: x[:, j] for j, f in enumerate(H.FEATURES)}
    assert x.shape == (40, len(H.FEATURES))
    assert np.array_equal(col["score"], sc.final[order[:40]])
    assert col["log_position"][0] == 0.0 and col["log_position"][3] == pytest.approx(np.log(4))
    assert col["requirements"][:3].tolist() == [1.0, 0.5, 0.0] and set(col["n_requirements"]) == {2.0}
    assert col["cos_first"][0] == pytest.approx(1.0) and col["first_session"][0] == 1.0
    assert col["log_session_rank"][0] == 0.0
    first = vp.core.session[order[0]]
    assert np.array_equal(col["first_session"] == 1.0, vp.core.session[order[:40]] == first)
    none = H.features(order, sc, vp, [], 0, views.turn_vectors, asking)
    assert not none[:, H.FEATURES.index("requirements")].any()


def test_the_arm_with_the_head_model_keeps_the_40_turn_set_and_records_the_model():
    views = make_views(big_rows())
    plain = replace(turn_scores.DEFAULT, head_model="")
    for text in QUESTIONS:
        q = Query("q", "s", text)
        sc = turn_scores.score_turns(views, q)
        with_model = ours.initial_evidence(_ctx(views), q, sc, True, turn_scores.DEFAULT)
        without = ours.initial_evidence(_ctx(views), q, sc, True, plain)
        assert sorted(with_model[2][:40].tolist()) == sorted(without[2][:40].tolist())
        assert with_model[2][40:].tolist() == without[2][40:].tolist()
        grounding = next(s for s in with_model[0] if s.kind == "grounding")
        assert grounding.data["set"]["head_model"] == turn_scores.DEFAULT.head_model
        # the order the model gives is the features' trees applied to the set order without it
        vp = V.variant_parts(views, q, **H.PARTS)
        assert np.array_equal(ours.set_order_of(views, sc, [], turn_scores.DEFAULT, vp)[:40],
                              H.reorder(ours.set_order_of(views, sc, [], plain), H.load(turn_scores.DEFAULT.head_model).raw(
                                  H.features(ours.set_order_of(views, sc, [], plain), sc, vp, [], 0, views.turn_vectors,
                                             turn_scores.asking(views))))[:40])


def test_a_head_model_without_the_variant_parts_is_an_error():
    views = make_views(big_rows())
    sc = turn_scores.score_turns(views, Query("q", "s", QUESTIONS[0]))
    with pytest.raises(ValueError, match="variant parts"):
        ours.set_order_of(views, sc, [], turn_scores.DEFAULT)
