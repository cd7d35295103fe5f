"""The offline rules' tokens: stemmed content tokens with number words as digits and synonyms folded,
and the numbers a text states. Shared by the rules backend and its judges.
Does not cover: the roles themselves (``llm.rules``, ``llm.rules_judges``).
"""

from __future__ import annotations

import re

from bfr_core.lexicon import CANONICAL_STEM, NUMBER_WORDS
from bfr_core.text import tokenize

NOT_FOUND = "Not mentioned in the evidence."  # the offline answerer's reply when nothing fits


def toks(text: str) -> set[str]:
    """Stemmed content tokens, number words as digits, synonyms folded."""
    out = set()
    for t in tokenize(text, stop=True, stemmed=True):
        t = re.sub(r"^(\d+)(st|nd|rd|th)$", r"\1", t)
        t = str(NUMBER_WORDS[t]) if t in NUMBER_WORDS else t
        out.add(CANONICAL_STEM.get(t, t))
    return out


def tok_list(text: str) -> list[str]:
    return [CANONICAL_STEM.get(t, t) for t in tokenize(text, stop=True, stemmed=True)]


def numbers(text: str) -> set[int]:
    low = text.lower()
    found = {int(n) for n in re.findall(r"(?<![\w.])(\d{1,6})(?:st|nd|rd|th)?(?![\w.])", low)}
    found |= {v for w, v in NUMBER_WORDS.items() if re.search(rf"\b{w}\b", low)}
    return found
