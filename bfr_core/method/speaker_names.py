"""Which scope speakers a question names: the one rule behind ``conv-fusion``'s speaker prior
(``turn_scores.named_speakers``), FirstPerson(q) (``requirements.first_person``) and the lexical cover
of an entity requirement by a turn's speaker (``requirements.covers_lexically``).

Covers: a speaker's name key (:func:`name_keys`): its first word, folded ("Caroline Smith" ->
``("caroline",)``, "José" -> ``("jose",)``), or its whole label word by word when another speaker of
the scope starts with the same word (chats labelled "Speaker 1" / "Speaker 2", "User A" / "User B",
or two Johns), so the key tells the speakers apart; a key that is one role word ("user", "assistant",
"system": ``views.common.ROLE_SPEAKERS``) is never a name ("User A" / "User B" are). A key is
found in a question where its words occur in a row (:func:`key_position`) among the question's
words (:func:`question_words`: folded, a possessive "'s" dropped, so "Speaker 1's" and "Caroline's"
name their speaker). A speaker label and a name span agree when the shorter's stemmed words begin
the longer's (:func:`same_person`).

Does not cover: nicknames ("Mel" for Melanie: ``turn_scores.named_speakers`` adds a capitalised-prefix
rule for single-word keys), names of people who are not speakers (``requirements.name_spans``);
a Chinese or Japanese name is keyed by its first character bigram (``text.words``), and by its whole
label when another speaker's name begins with the same two characters.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from bfr_core.retrieval.views.common import ROLE_SPEAKERS
from bfr_core.text import stem, words

_POSSESSIVE = re.compile(r"['\u2019]s\b", re.IGNORECASE)


def question_words(text: str) -> list[str]:
    """The folded words a name is looked for in: "What did Speaker 1's sister say?" -> [..., "speaker", "1", "sister", ...]."""
    return words(_POSSESSIVE.sub("", text))


def name_keys(speakers: Sequence[str]) -> list[tuple[str, ...]]:
    """Each speaker's name key, aligned with ``speakers`` (``()``: never named; see the module docstring)."""
    labels = [tuple(words(sp)) for sp in speakers]
    firsts = Counter(ws[0] for ws in labels if ws)
    out = []
    for ws in labels:
        key = ws if ws and firsts[ws[0]] > 1 else ws[:1]  # a shared first word: the whole label must name it
        out.append(() if len(key) == 1 and key[0] in ROLE_SPEAKERS else key)
    return out


def key_position(ws: Sequence[str], key: tuple[str, ...]) -> int | None:
    """Where ``key``'s words first occur in a row in ``ws`` (None: not there, or an empty key)."""
    n = len(key)
    if not n:
        return None
    for i in range(len(ws) - n + 1):
        if ws[i] == key[0] and tuple(ws[i:i + n]) == key:
            return i
    return None


def same_person(speaker: str, terms: Sequence[str]) -> bool:
    """Do a turn's ``speaker`` label and an entity's stemmed ``terms`` name the same person: the shorter
    one's words begin the longer one's ("Caroline" and "caroline smith" do; "Speaker 2" and "speaker 1" do not)."""
    label = [stem(w) for w in words(speaker)]
    n = min(len(label), len(terms))
    return n > 0 and tuple(label[:n]) == tuple(terms[:n])
