"""bench/lib/sufficiency_misses.py: one hand-made question's anatomy at k = 10 (rank bands, sessions,
distances, the first turns' concentration, both oracle swaps) and the pooled counts over four questions."""

from __future__ import annotations

import bench.lib.sufficiency_misses as M

# Session A: a1..a3 at positions 1..3, f0..f3 at 10..13; session B: f4..f8 at 0..4, b7 at 7; session C: c5 at 5;
# session D: the other fillers.
WHERE = {"a1": ("A", 1), "a2": ("A", 2), "a3": ("A", 3), "b7": ("B", 7), "c5": ("C", 5),
         **{f"f{i}": ("A", 10 + i) for i in range(4)}, **{f"f{i}": ("B", i - 4) for i in range(4, 9)},
         **{f"f{i}": ("D", i) for i in range(9, 37)}}
# a1 at rank 1, a2 at 12, b7 at 25; a3 and c5 not among the 40
RANKED = ["a1", *(f"f{i}" for i in range(9)), "f9", "a2", *(f"f{i}" for i in range(10, 22)), "b7",
          *(f"f{i}" for i in range(22, 37))]


def test_the_ranked_list_is_the_one_described():
    assert len(RANKED) == 40 and RANKED.index("a2") == 11 and RANKED.index("b7") == 24


def test_anatomy_of_an_insufficient_set():
    a = M.anatomy(RANKED, {"a1", "a2", "a3", "b7", "c5"}, WHERE)
    assert (a["any"], a["all"], a["oracle_head"], a["oracle_adjacent"]) == (True, False, False, False)
    assert [m["band"] for m in a["missing"]] == ["rank_11_20", "rank_21_40", "not_in_40", "not_in_40"]
    a2, b7, a3, c5 = a["missing"]  # by rank, then by id
    assert (a2["same_session"], a2["within_1"], a2["within_2"], a2["unseen_session"]) == (True, True, True, False)
    assert (b7["same_session"], b7["within_1"], b7["within_2"], b7["unseen_session"]) == (False, False, False, False)
    assert (a3["same_session"], a3["within_1"], a3["within_2"], a3["unseen_session"]) == (True, False, True, False)
    assert (c5["same_session"], c5["within_1"], c5["unseen_session"]) == (False, False, True)
    assert a["first_k"] == {"turns": 10, "from_found_sessions": 5, "sessions": 2, "gold_sessions": 3}


def test_the_oracles_swap_in_over_the_lowest_non_gold_turn():
    a = M.anatomy(RANKED, {"a1", "a2"}, WHERE)
    assert (a["any"], a["all"], a["oracle_head"], a["oracle_adjacent"]) == (True, False, True, True)
    assert M.anatomy(RANKED, {"a1", "b7"}, WHERE)["oracle_adjacent"] is False  # b7 is far from a1
    assert M.anatomy(RANKED, {"a1", "b7"}, WHERE)["oracle_head"] is True
    assert M.swap_in(["g", "x", "y"], ["h", "i"], frozenset("ghi"), 3) == ["g", "i", "h"]
    assert M.swap_in(["g"], ["h"], frozenset("gh"), 3) == ["g", "h"]
    assert M.swap_in(["g", "h"], ["i"], frozenset("ghi"), 2) == ["g", "h"]  # no place left


def test_summarize_pools_counts_and_percentages():
    cases = [M.anatomy(RANKED, g, WHERE) for g in
             ({"a1", "a2", "a3", "b7", "c5"}, {"a1", "a2"}, {"c5", "b7"}, {"a1", "f0"})]
    assert "missing" not in cases[2] and "missing" not in cases[3]
    s = M.summarize(cases)
    assert s["questions"] == 4
    assert (s["any"]["count"], s["all"]["count"], s["insufficient"]["count"]) == (3, 1, 2)
    assert s["insufficient"]["pct"] == 50.0 and s["insufficient"]["pct_of_any"] == 66.67
    assert (s["oracle_head"]["count"], s["oracle_adjacent"]["count"]) == (2, 2)
    assert s["oracle_head"]["gain_over_all"] == 25.0
    m = s["missing"]
    assert m["missing_gold_turns"] == 5
    assert [m[x]["count"] for x in ("rank_11_20", "rank_21_40", "not_in_40")] == [2, 1, 2]
    assert [m[x]["pct"] for x in ("same_session", "within_1", "within_2", "unseen_session")] == [60.0, 40.0, 60.0, 20.0]
    f = s["first_k_of_insufficient"]
    assert f["from_found_sessions"] == {"count": 10, "pct": 50.0}
    assert (f["mean_from_found_sessions"], f["mean_distinct_sessions"], f["mean_gold_sessions"]) == (5.0, 2.0, 2.0)


def test_session_cap_spreads_the_first_k_then_fills_in_rank_order():
    where = {"a1": ("A", 1), "a2": ("A", 2), "a3": ("A", 3), "b1": ("B", 1), "c1": ("C", 1)}
    ranked = ["a1", "a2", "a3", "b1", "x", "c1"]  # x is placed nowhere: a session of its own
    assert M.session_cap(ranked, where, 1, 4) == ["a1", "b1", "x", "c1"]
    assert M.session_cap(ranked, where, 2, 4) == ["a1", "a2", "b1", "x"]
    assert M.session_cap(ranked, where, 1, 6) == ["a1", "b1", "x", "c1", "a2", "a3"]  # the skipped fill in order
    assert M.session_cap(ranked, where, 9, 3) == ranked[:3]  # a cap no session reaches: the ranking's own


def test_word_swap_gives_places_to_turns_that_bring_a_missing_question_word():
    texts = {"t1": "I ordered a remote online", "t2": "the remote was online", "t3": "nice weather today",
             "t4": "it arrived on Friday", "t5": "it arrived late"}
    question = "When did the remote I ordered arrive?"
    assert M.uncovered(question, [texts["t1"], texts["t2"]]) == frozenset({"arriv"})
    assert M.brings(texts["t4"], frozenset({"arriv"})) and not M.brings(texts["t3"], frozenset({"arriv"}))
    ranked = ["t1", "t2", "t3", "t4", "t5"]
    assert M.word_swap(ranked, texts, question, 1, 3) == ["t1", "t2", "t4"]  # t4 brings "arrive" past t3
    assert M.word_swap(ranked, texts, question, 2, 3) == ["t1", "t4", "t2"]  # t5 brings nothing new after t4
    assert M.word_swap(ranked, texts, question, 0, 3) == ranked[:3]
    assert M.word_swap(["t1", "t3", "t2"], texts, "What did I order online?", 1, 2) == ["t1", "t3"]  # all covered
