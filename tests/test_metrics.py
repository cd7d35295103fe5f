"""bfr_core.evaluation.metrics: hand-computed examples, the official scorers' edge cases, and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bfr_core.evaluation import answer_f1
from bfr_core.evaluation import metrics as m

# --------------------------------------------------------------------------------------------
# Paper, Table 1 and Appendix B: the remote shutter release (LongMemEval-S b3c15d39)
# --------------------------------------------------------------------------------------------

ORDER, ARRIVAL = "s_order_3", "s_arrival_5"
GOLD = (ORDER, ARRIVAL)  # G(q): both dates support the five-day answer
ANSWER_TURNS = (ARRIVAL,)  # H(q) as Table 1 marks it: only the arrival holds the answer
OTHER = ("photo_1", "tripod_2", "lens_4")  # relevant photography memories


@pytest.mark.parametrize(
    ("evidence", "gold_hit", "turn_hit", "er", "cer"),
    [
        ((ORDER,), 1.0, 0.0, 0.5, 0.0),  # order only
        ((ARRIVAL,), 1.0, 1.0, 0.5, 0.0),  # arrival only
        ((ORDER, ARRIVAL), 1.0, 1.0, 1.0, 1.0),  # order + arrival
    ],
    ids=["order-only", "arrival-only", "both"],
)
def test_table1_shutter(evidence, gold_hit, turn_hit, er, cer):
    s = m.score_question(evidence, GOLD, answer_turns=ANSWER_TURNS)
    assert (s.gold_hit, s.turn_hit, s.er, s.cer) == (gold_hit, turn_hit, er, cer)
    assert m.gold_hit(evidence, GOLD) == gold_hit
    assert m.turn_hit(evidence, ANSWER_TURNS) == turn_hit


def test_appendix_b_topk_reaches_half_the_evidence():
    topk = (*OTHER, ORDER)  # lexical top-k: relevant, but the arrival is below the cutoff
    s = m.score_question(topk, GOLD)
    assert (s.gold_hit, s.er, s.cer, s.recall_any, s.recall_all) == (1.0, 0.5, 0.0, 1.0, 0.0)
    assert s.set_size == 4


# --------------------------------------------------------------------------------------------
# Set proxies
# --------------------------------------------------------------------------------------------


def test_empty_gold_is_undefined_except_turn_hit():
    assert m.gold_hit(["a"], []) is None
    assert m.evidence_recall(["a"], []) is None
    assert m.complete_evidence_recall(["a"], []) is None
    assert m.turn_hit(["a"], []) == 0.0  # unannotated LongMemEval items count as misses
    s = m.score_question(["a", "b"], [])
    assert s == m.QuestionScores(None, 0.0, None, None, None, None, None, 2)


def test_er_counts_distinct_gold_and_ignores_order_and_duplicates():
    gold = ["g1", "g2", "g3", "g1"]  # a repeated gold id counts once
    assert m.evidence_recall(["x", "g3", "g3", "g1"], gold) == pytest.approx(2 / 3)
    assert m.evidence_recall(["g1", "g3"], gold) == m.evidence_recall(["g3", "g1"], gold)
    assert m.complete_evidence_recall(["g2", "x", "g3", "g1"], gold) == 1.0
    assert m.gold_hit([], gold) == 0.0


def test_a_bare_string_is_rejected():
    with pytest.raises(TypeError):
        m.gold_hit("D1:3", ["D1:3"])
    with pytest.raises(TypeError):
        m.evidence_recall(["D1:3"], "D1:3")
    with pytest.raises(TypeError):
        m.score_question("abc", ["a"])


def test_inputs_are_not_mutated():
    evidence, gold, turns, corpus = ["b", "a", "b"], ["a", "c"], ["c"], ["a", "b", "c"]
    copies = [list(x) for x in (evidence, gold, turns, corpus)]
    m.score_question(evidence, gold, k=2, answer_turns=turns, corpus=corpus)
    m.evaluate_retrieval_turn2session(["s_1", "t_1"], ["s_1"], 1, ["s_1", "t_1"])
    assert [evidence, gold, turns, corpus] == copies


# --------------------------------------------------------------------------------------------
# LongMemEval official retrieval metrics (src/retrieval/eval_utils.py)
# --------------------------------------------------------------------------------------------


def test_recall_any_all_at_k():
    ranked, gold = ["a", "b", "c", "d"], {"b", "d"}
    assert (m.recall_any(ranked, gold, 1), m.recall_all(ranked, gold, 1)) == (0.0, 0.0)
    assert (m.recall_any(ranked, gold, 2), m.recall_all(ranked, gold, 2)) == (1.0, 0.0)
    assert (m.recall_any(ranked, gold, 4), m.recall_all(ranked, gold, 4)) == (1.0, 1.0)
    assert m.recall_all(ranked, gold, 50) == 1.0  # k beyond the list is the whole list


def test_official_edge_cases_empty_gold_and_k0():
    # all([]) is True and any([]) is False in the official code; the ideal DCG is 0, so ndcg = 0.
    r = m.evaluate_retrieval(["a", "b"], [], k=10)
    assert (r.recall_any, r.recall_all, r.ndcg_any) == (0.0, 1.0, 0.0)
    r = m.evaluate_retrieval(["a", "b"], ["a"], k=0)
    assert (r.recall_any, r.recall_all, r.ndcg_any) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        m.recall_any(["a"], ["a"], -1)


def test_dcg_leaves_the_first_two_positions_undiscounted():
    # rel[0] + rel[1]/log2(2) + rel[2]/log2(3) + rel[3]/log2(4)
    assert m.dcg([1, 1, 1, 1], 4) == pytest.approx(1 + 1 + 1 / math.log2(3) + 0.5)
    assert m.dcg([0, 0, 0, 1], 3) == 0.0
    assert m.dcg([], 10) == 0.0


def test_ndcg_hand_computed():
    # actual [0,1,0,1]: 0 + 1/log2(2) + 0 + 1/log2(4) = 1.5; ideal [1,1,0,0]: 2 -> 0.75.
    # (The rel/log2(i+2) convention of most libraries would give 0.651 here.)
    assert m.ndcg_any(["x", "g1", "y", "g2"], ["g1", "g2"], 4) == pytest.approx(0.75)
    # Consequence of the official discount: one gold turn at rank 2 still scores 1.0.
    assert m.ndcg_any(["x", "g"], ["g"], 10) == 1.0
    assert m.ndcg_any(["x", "y", "g"], ["g"], 10) == pytest.approx(1 / math.log2(3))
    assert m.ndcg_any(["x", "y", "g"], ["g"], 2) == 0.0


def test_ndcg_ideal_comes_from_the_corpus():
    corpus = ["g1", "g2", "g3", "x", "y"]
    # k=2: ideal [1,1] -> 2; actual [1,0] -> 1.
    assert m.ndcg_any(["g1", "x"], ["g1", "g2", "g3"], 2, corpus) == pytest.approx(0.5)
    # A gold id absent from the corpus does not raise the ideal (the official code builds the
    # relevance vector from corpus ids); with no gold in the corpus ndcg is 0.
    assert m.ndcg_any(["g1", "x"], ["g1", "zz"], 2, ["g1", "x"]) == 1.0
    assert m.ndcg_any(["x"], ["zz"], 1, ["x", "y"]) == 0.0


def test_turn2session_extends_k_and_counts_every_turn_of_a_gold_session():
    corpus = ["s1_1", "s1_2", "s2_1", "s2_2", "s3_1"]
    ranked = ["s1_1", "s1_2", "s2_1", "s3_1", "s2_2"]
    r = m.evaluate_retrieval_turn2session(ranked, ["s2_1"], 2, corpus)
    # Sessions s1, s1, s2, ...: top-2 holds one session, so k grows to 3.
    assert r.k == 3
    assert (r.recall_any, r.recall_all) == (1.0, 1.0)
    # Relevance over mapped positions [0, 0, 1] -> 1/log2(3); the ideal counts *both* turns of
    # the gold session s2 (s2_1, s2_2 -> s2): [1, 1, 0] -> 2.
    assert r.ndcg_any == pytest.approx(1 / math.log2(3) / 2)


def test_turn2session_stops_past_the_corpus():
    # One session only: k=2 distinct sessions can never be reached; the loop runs while
    # effective_k <= len(corpus), so it stops at len(corpus) + 1.
    r = m.evaluate_retrieval_turn2session(["a_1", "a_2"], ["a_1"], 2, ["a_1", "a_2"])
    assert r.k == 3
    assert (r.recall_any, r.recall_all, r.ndcg_any) == (1.0, 1.0, 1.0)


def test_score_question_k_cuts_only_the_ranked_metrics():
    evidence, gold = ["x", "y", "g1", "g2"], ["g1", "g2"]
    s = m.score_question(evidence, gold, k=3)
    assert (s.gold_hit, s.er, s.cer) == (1.0, 1.0, 1.0)  # whole set
    assert (s.recall_any, s.recall_all) == (1.0, 0.0)  # top-3 only
    assert s.ndcg_any == pytest.approx((1 / math.log2(3)) / 2)
    full = m.score_question(evidence, gold)  # k = len(evidence)
    assert (full.recall_all, full.cer) == (1.0, 1.0)
    assert m.score_question(["a", "a", "b"], ["b"]).set_size == 2


# --------------------------------------------------------------------------------------------
# LoCoMo stem F1 (task_eval/evaluation.py)
# --------------------------------------------------------------------------------------------


def test_normalize_answer():
    assert answer_f1.normalize_answer("The cat, and a DOG!") == "cat dog"
    assert answer_f1.normalize_answer("  U.S.   Open ") == "us open"
    # The official regex engine treats '¼' as a non-word character, so "a" is a whole word
    # here; Python's re would keep it.
    assert answer_f1.normalize_answer("A¼") == "¼"


def test_f1_score_hand_computed():
    assert answer_f1.f1_score("running dogs", "the dog runs") == 1.0  # stems: run dog / dog run
    assert answer_f1.f1_score("Paris France", "Paris") == pytest.approx(2 / 3)  # P=1/2, R=1
    assert answer_f1.f1_score("salt and pepper", "salt, pepper") == 1.0  # "and" and ',' dropped
    assert answer_f1.f1_score("", "Paris") == 0.0
    assert answer_f1.f1_score("the", "a") == 0.0  # both normalize to nothing
    # Multiset overlap: "dog dog cat" vs "dog cat cat" share dog, cat -> P = R = 2/3.
    assert answer_f1.f1_score("dog dog cat", "dog cat cat") == pytest.approx(2 / 3)


def test_category1_splits_on_commas_and_takes_best_match_per_truth_part():
    # truth parts: painting -> 1, swimming -> 0, hiking -> 1; mean 2/3
    assert answer_f1.locomo_f1("hiking, painting", "painting, swimming, hiking", 1) == pytest.approx(2 / 3)
    # "pottery class" vs "pottery" = 2/3 (P=1/2, R=1), "camping trip" vs "camping" = 2/3,
    # "hiking" unmatched = 0: mean 4/9
    assert answer_f1.locomo_f1("pottery, camping", "pottery class, camping trip, hiking", 1) == pytest.approx(4 / 9)
    # The same strings as one bag of tokens (category 4): P = 2/2, R = 2/3 -> 0.8
    assert answer_f1.locomo_f1("hiking, painting", "painting, swimming, hiking", 4) == pytest.approx(0.8)


def test_category3_keeps_the_first_alternative():
    answer = "likely yes; because she likes nature"
    assert answer_f1.locomo_f1("yes", answer, 3) == pytest.approx(2 / 3)  # vs "likely yes"
    assert answer_f1.locomo_f1("yes", answer, 2) == pytest.approx(2 / 7)  # vs all six tokens


def test_category5_adversarial():
    assert answer_f1.locomo_f1("Not mentioned in the conversation", "self-care", 5) == 1.0
    assert answer_f1.locomo_f1("No information available.", "anything", 5) == 1.0
    assert answer_f1.locomo_f1("There is no information about that", "x", 5) == 0.0
    assert answer_f1.locomo_f1("self-care", "self-care", 5) == 0.0  # repeating the trap answer scores 0


def test_locomo_answer_types_and_categories():
    assert answer_f1.locomo_f1("In 2022", 2022, 2) == pytest.approx(2 / 3)  # int answers are str()-ed
    for bad in (0, 6, True, None):
        with pytest.raises(ValueError):
            answer_f1.locomo_f1("x", "x", bad)


# --------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------


def test_aggregate_percentages_groups_and_denominators():
    rows = [
        {"qtype": "multi-hop", "gold_hit": 1.0, "er": 0.5, "turn_hit": 1.0, "set_size": 10},
        {"qtype": "multi-hop", "gold_hit": 0.0, "er": 0.0, "turn_hit": 0.0, "set_size": 20},
        {"qtype": "temporal", "gold_hit": None, "er": None, "turn_hit": 0.0, "set_size": 30},
        {"qtype": "temporal", "gold_hit": 1.0, "er": 1.0, "turn_hit": 1.0, "set_size": 40},
    ]
    before = [dict(r) for r in rows]
    out = m.aggregate(rows, by="qtype")
    assert rows == before
    overall = out["overall"]
    assert overall["n"] == 4
    assert overall["gold_hit"] == pytest.approx(200 / 3)  # None skipped: 2 of 3
    assert overall["er"] == pytest.approx(50.0)
    assert overall["turn_hit"] == pytest.approx(50.0)
    assert overall["set_size"] == pytest.approx(25.0)  # plain mean, not a percentage
    assert overall["cer"] is None  # key absent from every row
    assert overall["n_scored"]["gold_hit"] == 3 and overall["n_scored"]["cer"] == 0
    assert list(out["by"]) == ["multi-hop", "temporal"]
    assert out["by"]["temporal"]["gold_hit"] == 100.0 and out["by"]["temporal"]["n"] == 2
    assert out["by"]["multi-hop"]["set_size"] == 15.0


def test_aggregate_from_question_scores_and_extra_rates():
    rows = [
        {**m.score_question(["a"], ["a"]).as_dict(), "f1": 0.5},
        {**m.score_question(["b"], ["a"]).as_dict(), "f1": 1.0},
    ]
    out = m.aggregate(rows, rates=(*m.RATE_METRICS, "f1"))
    assert out["by"] == {}
    assert out["overall"]["gold_hit"] == 50.0 and out["overall"]["recall_all"] == 50.0
    assert out["overall"]["f1"] == 75.0
    assert m.aggregate([])["overall"]["gold_hit"] is None


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

ids = st.lists(st.sampled_from("abcdefgh"), max_size=10)


@given(ids, ids)
def test_set_metric_properties(evidence, gold):
    s = m.score_question(evidence, gold)
    if not gold:
        assert s.er is None and s.cer is None and s.gold_hit is None
        return
    assert 0.0 <= s.er <= 1.0
    assert s.cer <= s.er
    if s.cer == 1.0:
        assert s.gold_hit == 1.0
    assert (s.er > 0) == (s.gold_hit == 1.0)
    assert s.turn_hit == s.gold_hit  # H defaults to G
    assert s.recall_all == s.cer and s.recall_any == s.gold_hit  # k = whole list
    assert 0.0 <= s.ndcg_any <= 1.0


@given(ids, ids, st.integers(0, 12))
def test_ranked_metric_properties(ranked, gold, k):
    r = m.evaluate_retrieval(ranked, gold, k)
    assert r.recall_all <= r.recall_any or not gold
    assert 0.0 <= r.ndcg_any <= 1.0 + 1e-12
    assert (r.ndcg_any > 0) == (r.recall_any == 1.0)


words = st.lists(st.sampled_from(["the", "dog", "dogs", "ran", "running", "Paris", "a", "and", "2022", ","]))


@given(words.map(" ".join), words.map(" ".join))
def test_f1_properties(p, t):
    f = answer_f1.f1_score(p, t)
    assert 0.0 <= f <= 1.0
    assert f == pytest.approx(answer_f1.f1_score(t, p))
    if answer_f1.normalize_answer(t):
        assert answer_f1.f1_score(t, t) == pytest.approx(1.0)


# -- official convention report (user-turn corpus, session level) -------------------------------


def test_official_scores_hand_computed():
    corpus = ["a_1", "a_3", "b_1", "c_1", "c_3"]  # user turns; b_2 (gold) is an assistant turn outside it
    ranked = ["c_1", "a_3", "b_1", "c_3", "a_1"]
    r = m.official_scores(ranked, ["a_3", "b_2"], corpus, ks=(1, 2))
    # turn level, gold inside the corpus = {a_3}: @1 [c_1] misses; @2 [c_1, a_3] holds it, dcg = 0 + 1 = 1 = ideal
    assert (r["turn_recall_any@1"], r["turn_recall_all@1"], r["turn_ndcg_any@1"]) == (0.0, 0.0, 0.0)
    assert (r["turn_recall_any@2"], r["turn_recall_all@2"], r["turn_ndcg_any@2"]) == (1.0, 1.0, 1.0)
    # session level, relevant = gold inside the corpus = {a_3} -> session {a} (b_2 is no corpus turn,
    # as in run_retrieval.py): @2 -> [c, a]: any 1, all 1; ideal over corpus sessions
    # [a, a, b, c, c] -> [1, 1, 0, 0, 0], dcg@2 = 2; actual [0, 1] -> 1; ndcg 0.5
    assert (r["session_recall_any@1"], r["session_ndcg_any@1"]) == (0.0, 0.0)
    assert (r["session_recall_any@2"], r["session_recall_all@2"], r["session_ndcg_any@2"]) == (1.0, 1.0, 0.5)


def test_noans_id_renames_only_non_gold_turns_of_answer_sessions():
    gold = {"answer_x_2"}
    assert [m.noans_id(t, gold) for t in ("answer_x_1", "answer_x_2", "s_answer_y_1", "sharegpt_z_1")] == [
        "noans_x_1", "answer_x_2", "s_noans_y_1", "sharegpt_z_1"]
    # a ranked non-gold turn of the answer session is not relevant at session level either
    r = m.official_scores(["answer_x_1", "answer_x_2"], gold, ["answer_x_1", "answer_x_2", "b_1"], ks=(1,))
    assert (r["session_recall_any@1"], r["session_ndcg_any@1"]) == (0.0, 0.0)


def test_official_scores_undefined_parts_are_none_and_inputs_untouched():
    corpus = ["a_1", "b_1"]
    ranked = ["b_1", "a_1"]
    r = m.official_scores(ranked, ["a_2"], corpus, ks=(5,))  # gold outside the corpus: nothing to find
    assert all(v is None for v in r.values())  # run_retrieval.py's correct_docs would be empty
    assert all(v is None for v in m.official_scores(ranked, [], corpus, ks=(5,)).values())
    assert ranked == ["b_1", "a_1"] and corpus == ["a_1", "b_1"]
    with pytest.raises(TypeError):
        m.official_scores("a_1", ["a_1"], corpus)


def test_session_recalls_match_the_official_turn_to_session_scores():
    from bfr_core.evaluation.metrics import official_scores, session_recalls

    corpus = [f"{s}_{i}" for s in ("answer_a_1", "b_2", "c_3", "answer_d_4") for i in (1, 2, 3)]
    ranked = ["b_2_1", "b_2_2", "answer_a_1_1", "c_3_1", "answer_d_4_1", "b_2_3"]  # no noans turn ranked
    gold = ["answer_a_1_1", "answer_d_4_1"]
    off = official_scores(ranked, gold, corpus, (2, 3))
    for k in (2, 3):
        assert session_recalls(ranked, gold, k, len(corpus)) == (off[f"session_recall_any@{k}"],
                                                                 off[f"session_recall_all@{k}"])
    by_lookup = {t: "S" + t.split("_")[-2] for t in corpus}  # any store's own turn -> session map
    assert session_recalls(ranked, gold, 2, len(corpus), by_lookup.get) == (1.0, 0.0)
