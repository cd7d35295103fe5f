"""bfr_core.method.word_trust: the question's form, the lexical signals, and the regime a gate reads.

Every sentence here is hand-written for this test (none comes from a benchmark)."""

from __future__ import annotations

import numpy as np
import pytest

from bfr_core.method import word_trust as wt

QUESTIONS = [
    "What time does the bakery on my street open?",
    "where did we leave the spare keys",
    "Who was at the picnic with Dana",
    "How long have I been learning the cello?",
    "Did you ever finish that mystery novel",
    "Is there a pharmacy near the office",
    "Could you remind me what my sister's dog is called",
    "Have they moved to the new apartment yet",
    "So, any idea which train I took last Friday?",
    "I keep forgetting. Whose birthday falls in March?",
]
REQUESTS = [
    "Tell me the name of the hotel from my Lisbon trip.",
    "Remind me which plants I repotted.",
    "Please list the courses I signed up for.",
    "Recommend a board game for six people.",
    "Suggest a gift for my neighbour.",
    "Describe the route I usually run.",
]
REMARKS = [
    "I finally said yes to chairing the committee, and now my evenings are gone.",
    "My knee has been acting up again since the hike.",
    "Can't believe the garden survived the frost.",
    "We ended up adopting the older cat after all.",
    "Honestly, saying no more often has made my week calmer.",
    "Do come by on Sunday.",  # an emphatic imperative: no subject after the auxiliary
]


@pytest.mark.parametrize("text", QUESTIONS)
def test_questions_are_questions(text):
    assert wt.form(text) == "question"


@pytest.mark.parametrize("text", REQUESTS)
def test_directives_are_requests(text):
    assert wt.form(text) == "request"


@pytest.mark.parametrize("text", REMARKS)
def test_statements_are_remarks(text):
    assert wt.form(text) == "remark"


def test_a_multi_line_turn_is_a_question_if_any_line_asks():
    assert wt.form("I moved last spring.\nDo you remember the new street?") == "question"
    assert wt.form("I moved last spring.\nThe new street is quiet.") == "remark"
    assert wt.form("") == "remark"


def test_top_z_agreement_and_share_on_hand_made_scores():
    flat = np.ones(6)
    assert wt.top_z(flat) == 0.0 and wt.top_z(np.zeros(0)) == 0.0
    spike = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 10.0])
    assert wt.top_z(spike) == pytest.approx((10 - 10 / 6) / spike.std())
    a = np.arange(20, dtype=float)  # best: 19, 18, ...
    assert wt.agreement(a, a) == 1.0
    assert wt.agreement(a, -a) == 0.0  # the two top 10s are disjoint
    assert wt.agreement(a[:4], a[:4]) == 1.0  # a scope smaller than k: its size is k
    assert wt.agreement(np.zeros(0), np.zeros(0)) == 0.0
    assert wt.share_found(["garden", "frost", "garden"], {"garden"}.__contains__) == 0.5
    assert wt.share_found([], {"x"}.__contains__) == 1.0


def test_regime_by_gate():
    words_q = wt.WordTrust("question", 5.0, 1.0, 0.4)
    remark = wt.WordTrust("remark", 5.0, 1.0, 0.4)
    lost = wt.WordTrust("question", 1.0, 0.5, 0.0)  # no turn stands out, the rankings disagree
    assert [wt.regime(t, "off") for t in (words_q, remark, lost)] == ["words"] * 3
    assert [wt.regime(t, "form") for t in (words_q, remark, lost)] == ["words", "remark", "words"]
    assert [wt.regime(t, "form|disagree") for t in (words_q, remark, lost)] == ["words", "remark", "remark"]
    assert [wt.regime(t, "form|weak") for t in (words_q, remark, lost)] == ["words", "remark", "remark"]
    assert wt.regime(None, "form") == "words"
    with pytest.raises(ValueError, match="remark gate must be one of"):
        wt.regime(words_q, "always")


def test_word_trust_and_its_line():
    t = wt.word_trust("The frost came early.", np.array([0.0, 3.0, 0.0]), np.array([0.1, 0.9, 0.2]), 0.5)
    assert t.form == "remark" and t.term_share == 0.5 and t.agreement == 1.0
    line = wt.describe("remark", t.to_dict())
    assert line.startswith("regime: remark (form remark") and "terms found 0.5" in line
    assert wt.describe("words", None) == "regime: words"


def test_full_width_punctuation_ends_sentences_as_ascii_does():
    assert wt.form("我昨天买了什么相机？") == "question"
    assert wt.form("我买了新相机。我很开心！") == "remark"
    assert wt.form("我买了新相机。你记得是哪天吗？") == "question"
