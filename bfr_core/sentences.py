"""A text's sentences: their form (question, request or remark) and a remark's clauses.

Covers: :func:`sentences`, the one sentence splitter of ``bfr_core`` (a break where an ASCII end mark
``.``, ``!`` or ``?`` is followed by whitespace, after a full-width end mark 。！？ (such text puts no
space after it), and at line breaks; an end mark inside a token, as in "3.5" or "e.g.,", does not
split): what the requirement rules, the evidence fitter and the offline answerer cut text with.
:func:`form` (a question if any sentence asks: '?', full-width too, a wh-opening or an auxiliary before
its subject; a request if any is an imperative directive; else a remark: English interrogative grammar,
``lexicon.WH_WORDS``, ``AUXILIARIES``, ``SUBJECT_WORDS``, ``REQUEST_VERBS``; :func:`question_share`, the share
of a text's words in sentences that ask) and :func:`clauses` (a
remark's sentences split further at commas, semicolons and the clause-joining conjunctions
of :data:`lexicon.CLAUSE_JOINERS`; a piece of fewer than :data:`MIN_WORDS` words is no clause and is
dropped). A remark such as "I finally signed up for the pottery class, and now my weekends are packed"
joins two statements, each of which may refer back to a different earlier message, while one vector of
the whole sentence averages them; ``turn_scores`` can score the clauses apart. Written from English
grammar (coordinating and subordinating conjunctions), not from any benchmark's text. ``word_trust`` reads
the form, ``turn_scores`` the clauses; :func:`search_texts` names what ingest caches for both.

Does not cover: abbreviations followed by a space ("4 p.m. today" breaks after "p.m."), parsing (a
conjunction joining two nouns splits as one joining two clauses, and the shorter side is then usually
dropped by :data:`MIN_WORDS`), other languages' conjunctions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bfr_core.lexicon import AUXILIARIES, CLAUSE_JOINERS, REQUEST_VERBS, SUBJECT_WORDS, WH_WORDS
from bfr_core.text import words

MIN_WORDS = 3  # a clause has a subject, a verb and one word more ("I felt stressed"); shorter pieces are dropped
# whitespace after an ASCII end mark, any after a full-width one (。！？), or a line break
_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])\s*|\n+")
_CLAUSE_BREAK = re.compile(r"[,;\uff0c\uff1b]|\b(?:" + "|".join(sorted(CLAUSE_JOINERS)) + r")\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The text's sentences in order, each with its end mark; stripped, blank pieces dropped (only
    whitespace is lost: the pieces joined by single spaces read as the text)."""
    return [s for s in (p.strip() for p in _BREAK.split(text)) if s]


def sentence_form(sentence: str) -> str:
    """One sentence's form: "question" ('?', full-width too, or an interrogative opening), "request" (an imperative
    directive verb, optionally after "please"/"can you"), else "remark"."""
    if sentence.rstrip().endswith(("?", "\uff1f")):
        return "question"
    ws = words(sentence)
    if ws and ws[0] == "please":
        ws = ws[1:]
    if not ws:
        return "remark"
    if ws[0] in WH_WORDS:
        return "question"
    if ws[0] in AUXILIARIES and len(ws) > 1 and ws[1] in SUBJECT_WORDS:
        return "question"
    if ws[0] in REQUEST_VERBS:
        return "request"
    return "remark"


def form(text: str) -> str:
    """The text's form: a question if any sentence is one, else a request if any is, else a remark."""
    forms = {sentence_form(s) for s in sentences(text)}
    return "question" if "question" in forms else "request" if "request" in forms else "remark"


def question_share(text: str) -> float:
    """The share of the text's words that stand in sentences asking something (:func:`sentence_form` "question"):
    1 for "What type of music do you play?", 0 for a statement or a text with no words, 0.5 by word count for
    "I got one. Do you play?". A turn that only asks holds little of an answer."""
    asked = total = 0
    for s in sentences(text):
        n = len(words(s))
        total += n
        if sentence_form(s) == "question":
            asked += n
    return asked / total if total else 0.0


def clauses(text: str, text_form: str | None = None) -> tuple[str, ...]:
    """A remark's clauses (stripped, in order) when it has at least two, else ``()``: a question, a
    request or a remark that does not split is scored whole. ``text_form``: :func:`form` of ``text``
    when the caller has it already (``turn_scores`` reads it from the word-trust signals)."""
    if (text_form or form(text)) != "remark":
        return ()
    out = tuple(p for s in sentences(text) for p in (c.strip(" \t.!?\u3002\uff01\uff1f") for c in _CLAUSE_BREAK.split(s))
                if len(words(p)) >= MIN_WORDS)
    return out if len(out) > 1 else ()


def search_texts(texts: Iterable[str]) -> list[str]:
    """Every text a dense search for ``texts`` may encode: each text, then a remark's clauses, once each
    in order (what ingest caches and a scope primes, so they cost a lookup, not an encoding)."""
    return list(dict.fromkeys(u for t in texts for u in (t, *clauses(t))))
