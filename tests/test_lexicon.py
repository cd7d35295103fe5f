"""bfr_core.lexicon: the advice-request form (the word lists are tested where they are used)."""

import pytest

from bfr_core.lexicon import is_advice_request


@pytest.mark.parametrize("text", [
    "Can you suggest some accessories that would complement my current photography setup?",
    "could you please recommend a book for the flight?",
    "I'm planning a get-together. Can you suggest a cocktail?",
    "I've been feeling like my cookies need something extra. Any advice?",
    "Any tips on what to look for in a new guitar?",
    "I was thinking of trying a new coffee creamer recipe. Any recommendations?",
    "What should I pack for the kayaking trip?",
])
def test_requests_to_the_assistant_for_suggestions(text):
    assert is_advice_request(text)


@pytest.mark.parametrize("text", [
    "What did Tim suggest to John for the team trip?",  # advice someone gave: a remembered fact
    "What advice did Evan give Sam about finding a passion?",
    "Which book did Tim recommend to John?",
    "How often does Audrey meet other dog owners for tips and playdates?",
    "What kind of healthy food suggestions has Evan given to Sam?",
    "I noticed my bike performs better on Sunday rides. Could there be a reason for this?",
    "How many days ago did I buy the camera?",
    "",
])
def test_recall_questions_are_not_requests(text):
    assert not is_advice_request(text)
