"""bfr_core.clauses: sentences and clauses of hand-written texts (no benchmark text)."""

from __future__ import annotations

from bfr_core.clauses import MIN_WORDS, clauses, search_texts, sentences


def test_sentences_split_at_ascii_and_full_width_ends_and_line_breaks():
    assert sentences("I moved. Did you hear?\nYes!") == ["I moved.", "Did you hear?", "Yes!"]
    assert sentences("我搬家了。你知道吗？") == ["我搬家了。", "你知道吗？"]
    assert sentences("   ") == []


def test_a_remark_of_two_statements_splits_at_its_conjunction_and_comma():
    text = "I finally signed up for the pottery class, and now my weekends are packed."
    assert clauses(text) == ("I finally signed up for the pottery class", "now my weekends are packed")
    assert clauses("The bakery closed; we switched to the one by the station.") == (
        "The bakery closed", "we switched to the one by the station")
    assert clauses("My back hurts because I moved all the boxes alone.") == ("My back hurts", "I moved all the boxes alone")


def test_a_text_that_does_not_split_into_two_clauses_is_scored_whole():
    assert clauses("When did you buy the red bicycle?") == ()
    assert clauses("What did Tom and Ana cook?") == ()  # "and" joins names: the short sides are no clause
    assert clauses("Yeah, I finally did it!") == ()  # "Yeah" is under MIN_WORDS, one clause is left
    assert clauses("") == ()
    assert MIN_WORDS == 3


def test_conjunctions_inside_words_do_not_split():
    assert clauses("Sandra's band played, and the android sang along loudly.") == (
        "Sandra's band played", "the android sang along loudly")


def test_search_texts_lists_each_text_then_its_clauses_once():
    a = "I quit the gym, but I still run every morning."
    assert search_texts([a, "Where is it?", a]) == [a, "I quit the gym", "I still run every morning", "Where is it?"]
