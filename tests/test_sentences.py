"""bfr_core.sentences: sentences, their form and a remark's clauses, on hand-written texts (no benchmark text)."""

from __future__ import annotations

import pytest

from bfr_core.sentences import MIN_WORDS, clauses, form, question_share, search_texts, sentences


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


def test_a_question_a_request_or_a_remark_of_one_clause_is_scored_whole():
    assert clauses("When did you buy the red bicycle?") == ()
    assert clauses("Tom and Ana cooked dinner.") == ()  # "and" joins names: the short sides are no clause
    assert clauses("I moved last spring, so where is the nearest gym?") == ()  # a question is scored whole
    assert clauses("Tell me the bakery's name, and the street it is on.") == ()  # so is a request
    assert clauses("Yeah, I finally did it!") == ()  # "Yeah" is under MIN_WORDS, one clause is left
    assert clauses("") == ()
    assert MIN_WORDS == 3


def test_a_form_already_known_is_not_read_again():
    text = "I quit the gym, but I still run every morning."
    assert clauses(text, "remark") == clauses(text) == ("I quit the gym", "I still run every morning")
    assert clauses(text, "question") == ()


def test_conjunctions_inside_words_do_not_split():
    assert clauses("Sandra's band played, and the android sang along loudly.") == (
        "Sandra's band played", "the android sang along loudly")


def test_search_texts_lists_each_text_then_its_clauses_once():
    a = "I quit the gym, but I still run every morning."
    assert search_texts([a, "Where is it?", a]) == [a, "I quit the gym", "I still run every morning", "Where is it?"]


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
    assert form(text) == "question"


@pytest.mark.parametrize("text", REQUESTS)
def test_directives_are_requests(text):
    assert form(text) == "request"


@pytest.mark.parametrize("text", REMARKS)
def test_statements_are_remarks(text):
    assert form(text) == "remark"


def test_a_multi_line_turn_is_a_question_if_any_line_asks():
    assert form("I moved last spring.\nDo you remember the new street?") == "question"
    assert form("I moved last spring.\nThe new street is quiet.") == "remark"
    assert form("") == "remark"


def test_full_width_punctuation_ends_sentences_as_ascii_does():
    assert form("我昨天买了什么相机？") == "question"
    assert form("我买了新相机。我很开心！") == "remark"
    assert form("我买了新相机。你记得是哪天吗？") == "question"


def test_sentences_split_only_at_whitespace_after_an_ascii_end_mark_and_at_line_breaks():
    assert sentences("It cost 3.5 euros, e.g. cheap. Then we left!  OK?\nfine\n\n") == [
        "It cost 3.5 euros, e.g.", "cheap.", "Then we left!", "OK?", "fine"]
    assert sentences("one line, no end") == ["one line, no end"]
    assert sentences("  \n ") == []
    assert sentences("see www.example.com?ok... then lower case. Fine") == [
        "see www.example.com?ok...", "then lower case.", "Fine"]


def test_sentences_lose_only_whitespace():
    text = "It cost 3.5 euros!  Then: 我搬家了。你知道吗？\nYes, e.g. so."
    assert " ".join(sentences(text)).replace(" ", "") == text.replace(" ", "").replace("\n", "")


def test_question_share_counts_the_words_of_the_sentences_that_ask():
    assert question_share("What type of music do you play?") == 1.0
    assert question_share("I play the clarinet, and I started young.") == 0.0
    assert question_share("I got one. Do you play?") == 0.5
    assert question_share("Thanks! Have you tried the new cafe downtown yet?") == 8 / 9
    assert question_share("") == 0.0 and question_share("  ") == 0.0
