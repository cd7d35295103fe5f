"""A text's sentences and clauses: the units a dense search can score one by one.

Covers: :func:`sentences` (split at ASCII and full-width sentence ends, 。！？, and line breaks) and
:func:`clauses` (each sentence split further at commas, semicolons and the clause-joining conjunctions
of :data:`lexicon.CLAUSE_JOINERS`; a piece of fewer than :data:`MIN_WORDS` words is no clause and is
dropped). A remark such as "I ended up volunteering for that project, and now I'm totally overwhelmed"
joins two statements, each of which may refer back to a different earlier message, while one vector of
the whole sentence averages them; ``turn_scores`` can score the clauses apart. Written from English
grammar (coordinating and subordinating conjunctions), not from any benchmark's text.

Does not cover: parsing (a conjunction joining two nouns splits as one joining two clauses, and the
shorter side is then usually dropped by :data:`MIN_WORDS`), other languages' conjunctions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bfr_core.lexicon import CLAUSE_JOINERS
from bfr_core.text import words

MIN_WORDS = 3  # a clause has a subject, a verb and one word more ("I felt stressed"); shorter pieces are dropped
_SENTENCE = re.compile(r"[^.!?\u3002\uff01\uff1f\n]+[.!?\u3002\uff01\uff1f]*")  # ASCII and full-width ends (。！？)
_CLAUSE_BREAK = re.compile(r"[,;\uff0c\uff1b]|\b(?:" + "|".join(sorted(CLAUSE_JOINERS)) + r")\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The text's sentences, each with its end mark (blank pieces dropped)."""
    return [s for s in (m.strip() for m in _SENTENCE.findall(text)) if s]


def clauses(text: str) -> tuple[str, ...]:
    """The text's clauses (stripped, in order) when it has at least two, else ``()``: a text that does
    not split is scored whole."""
    out = tuple(p for s in sentences(text) for p in (c.strip(" \t.!?\u3002\uff01\uff1f") for c in _CLAUSE_BREAK.split(s))
                if len(words(p)) >= MIN_WORDS)
    return out if len(out) > 1 else ()


def search_texts(texts: Iterable[str]) -> list[str]:
    """Every text a dense search for ``texts`` may encode: each text, then its clauses, once each in
    order (what ingest caches and a scope primes, so a remark's clauses cost a lookup, not an encoding)."""
    return list(dict.fromkeys(u for t in texts for u in (t, *clauses(t))))
