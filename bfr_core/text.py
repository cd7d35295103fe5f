"""Tokenization shared by BM25, the lexical tests in Stage I and the answer metrics.

Covers: lower-casing, word tokens (letters/digits, inner apostrophes dropped), an English stop-word
list (NLTK's 179 words, inlined so no corpus download is needed), Porter stemming (NLTK's
implementation, the one the official LoCoMo scorer uses). Does not cover: sentence splitting, NER.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"[a-z0-9]+")

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
    # Imported on first use: `import nltk` pulls in scipy and takes ~3 s, which every CLI command
    # and the app's first page would otherwise pay even when nothing is stemmed.
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer().stem(word)


def words(text: str) -> list[str]:
    """Lower-cased word tokens; apostrophes are removed first so "don't" -> "dont"."""
    return _TOKEN.findall(text.lower().replace("'", "").replace("\u2019", ""))


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
