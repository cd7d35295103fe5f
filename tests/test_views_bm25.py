"""BM25 view: parity with rank_bm25, stop words, speaker prefix, ties, exclude-before-k."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from bfr_core.records import Turn
from bfr_core.retrieval.views.base import View
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.retrieval.views.common import index_text
from bfr_core.text import tokenize

TURNS = (
    Turn("t1", "s1", 0, "Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    Turn("t2", "s1", 1, "Melanie", "Wow, that sounds great! I painted a sunrise over the lake."),
    Turn("t3", "s1", 2, "Caroline", "The support group made me feel accepted."),
    Turn("t4", "s2", 0, "Melanie", "My kids loved the camping trip; we roasted marshmallows."),
    Turn("t5", "s2", 1, "Caroline", "Camping sounds fun. I am researching adoption agencies."),
    Turn("t6", "s2", 2, "Melanie", "The the the of and"),  # only stop words
)


def test_is_a_view():
    assert isinstance(BM25View(TURNS), View)


@pytest.mark.parametrize("kw", [{}, {"k1": 1.2, "b": 0.5, "epsilon": 0.1}, {"stop": False}, {"stemmed": True}])
def test_scores_equal_rank_bm25(kw):
    view = BM25View(TURNS, **kw)
    params = {k: v for k, v in kw.items() if k in ("k1", "b", "epsilon")}
    tok = {"stop": kw.get("stop", True), "stemmed": kw.get("stemmed", False)}
    ref = BM25Okapi([tokenize(index_text(t), **tok) for t in TURNS], **params)
    for cue in ("support group", "Caroline camping camping", "adoption agencies research", "nothing matches"):
        assert np.allclose(view.scores(cue), ref.get_scores(tokenize(cue, **tok)))


def test_speaker_name_is_searchable_only_with_prefix():
    turns = (*TURNS, Turn("t7", "s3", 0, "Jon", "I opened my dance studio."))
    assert BM25View(turns).search("What did Jon open?", 1)[0].turn_id == "t7"
    assert BM25View(turns).scores("Jon")[6] > 0
    assert not BM25View(turns, with_speaker=False).scores("Jon").any()
    # LongMemEval roles are not prefixed.
    assert index_text(Turn("x", "s", 0, "user", "hi")) == "hi"


def test_stop_words_are_dropped_from_cue_and_turns():
    view = BM25View(TURNS)
    assert view.query_tokens("What did the group do?") == ["group"]
    assert view.scores("the of and")[5] == 0.0


def test_ties_keep_turn_order_and_exclude_applies_before_k():
    view = BM25View(TURNS)
    hits = view.search("zzz unknown", 3)  # all zero: turn order decides
    assert [h.turn_id for h in hits] == ["t1", "t2", "t3"]
    top = [h.turn_id for h in view.search("support group", 2)]
    assert set(top) == {"t1", "t3"}
    hits = view.search("support group", 2, exclude={top[0]})
    assert len(hits) == 2 and top[0] not in {h.turn_id for h in hits}
    assert [h.rank for h in hits] == [0, 1] and all(h.view == "bm25" for h in hits)


def test_positive_only_and_edge_cases():
    assert BM25View(TURNS, positive_only=True).search("zzz unknown", 5) == []
    assert BM25View(TURNS).search("support", 0) == []
    empty = BM25View(())
    assert empty.search("anything", 5) == [] and empty.scores("x").shape == (0,)
    only_stop = BM25View((Turn("a", "s", 0, "user", "the of"),))
    assert [h.turn_id for h in only_stop.search("the", 3)] == ["a"]


def test_contains_reads_the_index_in_query_token_form():
    v = BM25View([Turn("t1", "s", 0, "Ann", "The gardens froze overnight", None, "")], stemmed=True, with_speaker=False)
    assert [v.contains(t) for t in v.query_tokens("garden froze ann")] == [True, True, False]
    assert not BM25View([]).contains("garden")


def test_a_blank_turn_is_not_found_by_its_speakers_name():
    """Indexed as "Sam: ", a blank turn was the shortest document holding "Sam" and outranked the answer."""
    turns = (Turn("a", "s1", 0, "Sam", "We saw a fox near the river."), Turn("b", "s1", 1, "Sam", "   "),
             Turn("c", "s1", 2, "Sam", ""), Turn("d", "s1", 3, "Sam", "Then we went home for dinner."))
    assert not index_text(turns[1]).strip() and index_text(turns[0]) == "Sam: We saw a fox near the river."
    scores = BM25View(turns).scores("What animal did Sam see near the river?")
    assert scores[0] > 0 and scores[1] == scores[2] == 0  # before, each blank turn scored on "Sam"
