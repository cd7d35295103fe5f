"""Fitting an evidence set into a small context (bfr_core.roles.fit)."""

from hypothesis import given
from hypothesis import strategies as st

from bfr_core.roles.fit import ELLIPSIS, fit_snippets, prompt_budget

QUESTION = "How many days did it take for me to receive the new remote shutter release after I ordered it?"
FILLER = "Tripods come in many sizes and the carbon ones weigh less than aluminium ones. " * 12
ORDER = ("I think I'll price my old tripod competitively. " + FILLER
         + "By the way, I also ordered a new remote shutter release online on February 5th. " + FILLER)
ARRIVAL = "I just got a new remote shutter release that arrived on February 10th. " + FILLER
SHORT = "(05 March 2023) user: thanks!"


def test_a_set_that_fits_is_returned_unchanged():
    texts = [SHORT, "another short one"]
    assert fit_snippets(texts, QUESTION, 10_000) == texts


def test_long_snippets_keep_the_sentences_nearest_the_question():
    texts = [ORDER, SHORT, ARRIVAL, FILLER]
    fitted = fit_snippets(texts, QUESTION, 900)
    assert len(fitted) == 4 and len("\n".join(fitted)) <= 900
    assert fitted[1] == SHORT  # short snippets stay whole
    assert "ordered a new remote shutter release online on February 5th" in fitted[0]
    assert ELLIPSIS in fitted[0]  # non-adjacent sentences are marked as elided
    assert "arrived on February 10th" in fitted[2]
    assert fit_snippets(texts, QUESTION, 900) == fitted  # deterministic


def test_a_cut_snippet_keeps_its_date_and_speaker_header():
    """The rendered "(date) speaker: " header survives however the rest is cut: the answerer must
    still know who said it (the user, not the assistant) and when."""
    dated = "(01 March 2023) assistant: " + FILLER + "Your remote shutter release arrived on February 10th. " + FILLER
    fitted = fit_snippets([dated, ORDER, FILLER], QUESTION, 600)
    assert fitted[0].startswith("(01 March 2023) assistant: ") and "arrived on February 10th" in fitted[0]
    assert len("\n".join(fitted)) <= 600
    assert not fitted[2].startswith("(")  # text without a header is cut as before


def test_an_exact_measure_such_as_a_token_count_is_respected():
    def measure(text: str) -> int:
        return len(text.split())

    fitted = fit_snippets([ORDER, ARRIVAL, FILLER], QUESTION, 120, measure)
    assert measure("\n".join(fitted)) <= 120


@given(st.lists(st.text(min_size=0, max_size=400), min_size=1, max_size=12), st.integers(50, 2_000))
def test_count_and_order_kept_and_budget_met(texts, budget):
    fitted = fit_snippets(texts, "what colour is the car", budget)
    assert len(fitted) == len(texts)
    if len("\n".join(texts)) <= budget:
        assert fitted == texts
    else:  # the cap can stop at 20 characters per snippet: the budget then bounds what is left
        assert len("\n".join(fitted)) <= max(budget, 21 * len(texts))


class Limited:
    def evidence_budget(self):
        return 3_000, len


class Wrapper:
    def __init__(self, inner):
        self.inner = inner


def test_prompt_budget_looks_through_wrappers():
    assert prompt_budget([Wrapper(object())]) is None
    assert prompt_budget([Wrapper(Wrapper(Limited())), object()])[0] == 3_000
