"""bfr_core.method.word_trust: the lexical signals and the regime a gate reads (the form: tests/test_sentences.py).

Every sentence here is hand-written for this test (none comes from a benchmark)."""

from __future__ import annotations

import numpy as np
import pytest

from bfr_core.method import word_trust as wt


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
