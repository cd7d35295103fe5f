"""bfr_core.method.budget_set: the greedy set at each budget over the ranking's head."""

from __future__ import annotations

import numpy as np

from bfr_core.fusion import rank_order
from bfr_core.method.budget_set import WINDOW, greedy_head, requirement_bits, set_order, unit_rows


def test_with_both_weights_zero_the_order_is_the_ranking():
    rng = np.random.default_rng(0)
    final, sessions = rng.normal(size=120), rng.integers(0, 6, size=120)
    assert list(set_order(final, sessions)) == list(rank_order(final))
    assert list(set_order(final, sessions, 0.0, 1.0, lambda h: [1] * len(h), 0)) == list(rank_order(final))


def test_spread_lets_a_second_session_in_before_a_third_turn_of_the_first():
    final = np.array([5.0, 4.9, 4.8, 4.5])
    sessions = np.array([0, 0, 0, 1])
    assert list(set_order(final, sessions)) == [0, 1, 2, 3]
    assert list(set_order(final, sessions, spread=0.5)) == [0, 3, 1, 2]
    assert list(set_order(final, sessions, spread=0.25)) == [0, 1, 3, 2]
    assert list(set_order(final, sessions, spread=0.05)) == [0, 1, 2, 3]  # the score gap outweighs a small cost


def test_cover_takes_the_turn_that_completes_the_requirements_first():
    """Two turns state requirement 0 (the order date); the one stating requirement 1 ranks third."""
    final = np.array([3.0, 2.9, 2.6, 1.0])
    rows = [0b01, 0b01, 0b10, 0b00]
    order = set_order(final, np.zeros(4, dtype=int), cover=1.0, rows_of=lambda head: [rows[int(i)] for i in head],
                      n_reqs=2)
    assert list(order) == [0, 2, 1, 3]
    no_gain = set_order(final, np.zeros(4, dtype=int), cover=0.5, rows_of=lambda head: [rows[int(i)] for i in head],
                        n_reqs=2)
    assert list(no_gain) == [0, 1, 2, 3]  # half a requirement's worth (0.25) does not bridge a 0.3 gap


def test_novelty_takes_the_turn_that_says_something_else_before_a_restatement():
    """Turns 0 and 1 state the same fact (near-parallel vectors); turn 2, ranked third, states another."""
    final = np.array([3.0, 2.9, 2.6, 1.0])
    vectors = np.array([[1.0, 0.0, 0.0], [0.98, 0.2, 0.0], [0.1, 0.0, 1.0], [0.0, 1.0, 0.0]])
    sessions = np.zeros(4, dtype=int)
    assert list(set_order(final, sessions, novelty=1.0, vectors=vectors)) == [0, 2, 1, 3]
    assert list(set_order(final, sessions, novelty=0.2, vectors=vectors)) == [0, 1, 2, 3]  # 0.2 x 0.88 < 0.3 gap
    assert list(set_order(final, sessions, novelty=1.0)) == [0, 1, 2, 3]  # no vectors: nothing to compare


def test_novelty_counts_the_closest_taken_turn_only_and_ignores_opposed_or_empty_ones():
    final = np.array([2.0, 1.9, 1.8, 1.7])
    vectors = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0], [0.6, 0.8]])
    order = greedy_head(final, np.arange(4), 0.0, 0.0, novelty=1.0, vectors=vectors)
    # after turn 0: turn 1 (cosine -1, clipped to 0) and the empty turn 2 pay nothing, turn 3 pays 0.6
    assert list(order) == [0, 1, 2, 3]
    assert unit_rows(vectors[2:3]).tolist() == [[0.0, 0.0]]
    assert np.allclose(np.linalg.norm(unit_rows(np.array([[3.0, 4.0]])), axis=1), 1.0)


def test_the_remark_share_runs_from_the_ranking_to_the_turn_least_like_the_set():
    from bfr_core.method.turn_scores import OursSettings

    final = np.array([3.0, 2.9, 2.6, 1.0])
    vectors = np.array([[1.0, 0.0, 0.0], [0.98, 0.2, 0.0], [0.6, 0.0, 0.8], [0.0, 1.0, 0.0]])
    sessions = np.zeros(4, dtype=int)

    def order(share: float) -> list[int]:
        scale, novelty = OursSettings(remark_novelty=share, set_novelty=9.0).set_terms("remark")
        return list(set_order(final, sessions, novelty=novelty, vectors=vectors, scale=scale))

    assert order(0.0) == [0, 1, 2, 3]  # the ranking
    assert order(1.0) == [0, 3, 2, 1]  # the best turn, then each time the one least like the set
    assert OursSettings(remark_novelty=1.0, set_novelty=0.5).set_terms("words") == (1.0, 0.5)
    assert OursSettings(set_cover=1.0, remark_novelty=1.0).ranking_only() == OursSettings()


def test_asks_lets_a_statement_in_before_a_turn_that_only_asks():
    """Turn 0 asks ("What type of music do you play?"), turn 1 states the answer, turn 2 half asks."""
    final = np.array([3.0, 2.8, 2.7, 1.0])
    asking = np.array([1.0, 0.0, 0.5, 0.0])
    sessions = np.zeros(4, dtype=int)
    assert list(set_order(final, sessions, asks=1.0, asking=asking)) == [1, 2, 0, 3]  # gains 2.0, 2.8, 2.2, 1.0
    assert list(set_order(final, sessions, asks=0.1, asking=asking)) == [0, 1, 2, 3]  # 0.1 < the 0.2 gap
    assert list(set_order(final, sessions, asks=1.0)) == [0, 1, 2, 3]  # no shares given: nothing to charge
    assert list(set_order(final, sessions, asking=asking)) == [0, 1, 2, 3]  # no weight: the ranking


def test_the_asking_cost_is_the_words_regimes_only():
    from bfr_core.method.turn_scores import OursSettings

    s = OursSettings(set_asks=2.0)
    assert s.asks_in("words") == 2.0 and s.asks_in("remark") == 0.0
    assert s.ranking_only() == OursSettings()


def test_the_set_at_the_window_is_the_rankings_top_and_only_the_head_moves():
    rng = np.random.default_rng(1)
    n = 3 * WINDOW
    final, sessions = rng.normal(size=n), rng.integers(0, 4, size=n)
    plain = rank_order(final)
    spread = set_order(final, sessions, spread=2.0)
    assert set(spread[:WINDOW]) == set(plain[:WINDOW])
    assert list(spread[WINDOW:]) == list(plain[WINDOW:])
    assert list(spread[:WINDOW]) != list(plain[:WINDOW])
    assert sorted(spread) == list(range(n))
    novel = set_order(final, sessions, novelty=2.0, vectors=rng.normal(size=(n, 8)))
    assert set(novel[:WINDOW]) == set(plain[:WINDOW]) and list(novel[WINDOW:]) == list(plain[WINDOW:])
    assert list(novel[:WINDOW]) != list(plain[:WINDOW])
    asked = set_order(final, sessions, asks=2.0, asking=rng.random(n))
    assert set(asked[:WINDOW]) == set(plain[:WINDOW]) and list(asked[WINDOW:]) == list(plain[WINDOW:])
    assert list(asked[:WINDOW]) != list(plain[:WINDOW])


def test_reach_lets_a_turn_below_the_head_in_when_it_alone_supplies_a_requirement():
    """The head's turns all state requirement 0; turn 45 (below a 40-turn head) alone states requirement 1,
    turn 50 states requirement 0 again."""
    n = WINDOW + 20
    final = np.linspace(3.0, 0.0, n)
    rows = [0b01] * WINDOW + [0] * 20
    rows[45], rows[50] = 0b10, 0b01
    sessions = np.zeros(n, dtype=int)

    def order(reach: int, cover: float = 8.0) -> list[int]:
        return list(set_order(final, sessions, cover=cover, rows_of=lambda head: [rows[int(i)] for i in head],
                              n_reqs=2, reach=reach))

    assert order(0) == list(range(n))  # every head turn supplies requirement 0: the ranking
    assert order(20)[:2] == [0, 45] and order(20)[2:WINDOW] == list(range(1, WINDOW - 1))
    assert order(20)[WINDOW:] == [WINDOW - 1, *range(WINDOW, 45), *range(46, n)]  # 50 brings nothing open
    assert order(5) == list(range(n))  # turn 45 lies beyond a reach of 5
    assert order(20, cover=0.02) == list(range(n))  # half of 0.02 does not bridge a rank's score gap (0.05)
    assert order(20, cover=0.0) == list(range(n))  # no cover: the reach reads nothing
    assert sorted(order(20)) == list(range(n))
    from bfr_core.method.turn_scores import OursSettings

    assert OursSettings(set_cover=1.0, set_reach=40).ranking_only() == OursSettings()


def test_greedy_head_and_bits_on_small_inputs():
    assert list(greedy_head(np.array([1.0]), np.array([0]), 1.0, 1.0)) == [0]
    assert requirement_bits([0b101, 0], 3).tolist() == [[1, 0, 1], [0, 0, 0]]
    ties = greedy_head(np.zeros(3), np.array([0, 1, 2]), 1.0, 0.0)
    assert list(ties) == [0, 1, 2]  # ties keep the ranking's order


def test_the_arm_follows_the_set_order_in_e0_and_stage_two_and_says_what_moved():
    from dataclasses import replace

    from fakes_views import SHUTTER_ROWS, make_views

    from bfr_core.config import Config, RetrievalConfig
    from bfr_core.method import ours, turn_scores
    from bfr_core.method.budgets import budget_for
    from bfr_core.pipeline import ArmContext
    from bfr_core.records import Query

    views = make_views(SHUTTER_ROWS)
    ctx = ArmContext(views, Config(retrieval=RetrievalConfig(ground=10)), budget_for("conv-fusion", "C6"), "C6")
    q = Query("q1", "s", "How many days did it take for Alice to receive the remote shutter release after she ordered it?")
    plain = turn_scores.DEFAULT.ranking_only()
    spread = replace(plain, set_spread=50.0)  # far above any score gap: one turn per session while sessions last
    a, b = ours.run(ctx, q, plain), ours.run(ctx, q, spread)
    ground_a = next(s for s in a if s.kind == "grounding")
    ground_b = next(s for s in b if s.kind == "grounding")
    assert ground_a.data["set"]["moved"] == [] and ground_b.data["set"]["spread"] == 50.0
    cover = ground_b.data["cover"]
    rest = [t for t in ground_b.data["e0"] if t not in cover]
    sessions = [views.turns[views.position[t]].session_id for t in rest]
    assert len(set(sessions)) == min(len(rest), len({t.session_id for t in views.turns}))
    assert set(a[-1].evidence) == set(b[-1].evidence)  # at 40 turns: the same set, in another order
    novel = ours.run(ctx, q, replace(plain, set_novelty=50.0))  # far above any gap: the least alike turn next
    ground_n = next(s for s in novel if s.kind == "grounding")
    assert ground_n.data["set"]["novelty"] == 50.0 and ground_n.data["set"]["moved"]
    assert set(novel[-1].evidence) == set(a[-1].evidence)
    reached = ours.run(ctx, q, replace(plain, set_cover=50.0, set_reach=40))
    assert next(s for s in reached if s.kind == "grounding").data["set"]["reach"] == 40
    assert ground_a.data["set"]["reach"] == 0
