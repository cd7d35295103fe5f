"""Tokenization shared by BM25, the lexical tests in Stage I and the answer metrics.

Covers: folding (case-folded, accents dropped: one rule for every comparison of words), word tokens
(letters and digits of any script, inner apostrophes dropped; Chinese and Japanese, written without
spaces, as overlapping character bigrams), an English stop-word
list (NLTK's 179 words, inlined so no corpus download is needed), Porter stemming (NLTK's
implementation, the one the official LoCoMo scorer uses). Does not cover: sentence splitting, NER,
dictionary word segmentation, Thai and other unspaced scripts of South-East Asia.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Letters and digits of any script, as runs: "Zürich" is one word, not "z" and "rich".
WORD = re.compile(r"[^\W_]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+")  # the same on folded ASCII text, and faster
_ACCENTS = re.compile("[\u0300-\u036f]")
# Scripts written without spaces between words: kana and the CJK ideographs (Korean's Hangul is spaced).
# A run of them is cut into overlapping character bigrams, as search engines index Chinese and Japanese
# without a dictionary (Lucene's CJKAnalyzer): "东京大学" -> "东京", "京大", "大学".
_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

STOP_WORDS: frozenset[str] = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their theirs
    themselves what which who whom this that that'll these those am is are was were be been being have
    has had having do does did doing a an the and but if or because as until while of at by for with
    about against between into through during before after above below to from up down in out on off
    over under again further then once here there when where why how all any both each few more most
    other some such no nor not only own same so than too very s t can will just don don't should
    should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn
    hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan
    shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()
)


@lru_cache(maxsize=1)
def _stemmer():
    # Imported on first use: `import nltk` pulls in scipy, a slow import that every CLI command
    # and the app's first page would otherwise pay even when nothing is stemmed.
    from nltk.stem import PorterStemmer  # heavy: nltk takes seconds to import, needed only to stem

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer().stem(word)


def unaccent(text: str) -> str:
    """Accents dropped, case kept, as search engines fold: compatibility-decomposed (NFKD), the marks of
    the Combining Diacritical Marks block (U+0300-U+036F: the accents of Latin, Greek and Cyrillic
    letters) removed, recomposed (NFC). "José" -> "Jose", "ﬁ" -> "fi"; other scripts keep their marks
    (kana's voicing, Devanagari's virama). The rules that find names by an ASCII capital read this."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFKD", text)))


def fold(text: str) -> str:
    """Case-folded, then :func:`unaccent` (folding can add accents: "ΐ"): "Zürich" -> "zurich", "José" ->
    "jose", "Straße" -> "strasse". ASCII text is only lower-cased (the fast path: most chats are ASCII)."""
    return text.lower() if text.isascii() else unaccent(text.casefold())


def bigrams(token: str) -> list[str]:
    """``token`` with each run of an unspaced script (:data:`_UNSPACED`) cut into overlapping character
    bigrams (a run of one character stays whole); the parts in other scripts stay words, in order."""
    out: list[str] = []
    pos = 0
    for m in _UNSPACED.finditer(token):
        if m.start() > pos:
            out.append(token[pos:m.start()])
        run = m.group()
        out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        pos = m.end()
    if pos < len(token):
        out.append(token[pos:])
    return out


def words(text: str) -> list[str]:
    """Folded word tokens (:func:`fold`); apostrophes are removed first so "don't" -> "dont"; Chinese and
    Japanese text, written without spaces, as character bigrams (:func:`bigrams`)."""
    low = fold(text).replace("'", "").replace("\u2019", "")
    if low.isascii():
        return _ASCII_WORD.findall(low)
    toks = WORD.findall(low)
    if _UNSPACED.search(low) is None:
        return toks
    return [part for t in toks for part in (bigrams(t) if _UNSPACED.search(t) else (t,))]


def tokenize(text: str, *, stop: bool = True, stemmed: bool = False) -> list[str]:
    """Tokens for lexical retrieval: optional stop-word removal, optional Porter stemming."""
    toks = words(text)
    if stop:
        toks = [t for t in toks if t not in _STOP_NOAPOS]
    if stemmed:
        toks = [stem(t) for t in toks]
    return toks


# The stop list written without apostrophes, matching what words() produces.
_STOP_NOAPOS: frozenset[str] = frozenset(w.replace("'", "") for w in STOP_WORDS)
