"""Question -> answer requirements (the paper's Decompose(q), Algorithm 1 line 4), and Stage I's
lexical test of them.

A requirement (``llm.rules_requirements.Requirement``) is one element the evidence set must supply;
Stage I builds its formal context from them (objects = candidate turns, attributes = requirements).

Covers
------
* :func:`decompose` - the one entry point: the offline decomposer
  (``llm.rules_requirements.decompose_rules``) by default; with an ``llm`` it calls
  ``bfr_core.roles.decomposer.decompose(llm, question_text)`` and normalises the answer into the same
  :class:`Requirement` records. 1 to 5 requirements, ids ``r1..rJ`` in order.
* :func:`first_person` - FirstPerson(q) of the BFR-MV schedule: the first scope speaker named in
  the question, else the first capitalised name-like span.
* :func:`covers_lexically` - the lexical half of Stage I's incidence test (stemmed-term overlap,
  a small table of related event verbs, names by speaker, constraints by session date, slots by a
  value of their type: :func:`states_slot`).

Does not cover: the rules that split a question (``llm.rules_requirements``), NER models (speakers are
matched first), paraphrase beyond :data:`RELATED_STEMS`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from bfr_core.dates import date_matches, find_date_constraints, has_time_mention
from bfr_core.lexicon import NOT_NAME_WORDS, PERSON_NOUNS, PLACE_NOUNS, RELATED_STEMS
from bfr_core.llm.base import LLMCallFailed
from bfr_core.llm.rules_requirements import (
    KINDS,
    Requirement,
    content_terms,
    decompose_rules,
    draft,
    name_spans,
    numbered,
)
from bfr_core.method.speaker_names import key_position, name_keys, question_words, same_person
from bfr_core.records import Query, Turn
from bfr_core.roles import decomposer
from bfr_core.text import stem, tokenize, unaccent, words


def first_person(text: str, speakers: Sequence[str] = ()) -> str | None:
    """FirstPerson(q): the first scope speaker named in ``text``, else its first name-like span.

    Speakers are matched by name key (``speaker_names``: the first name, folded, or the whole label
    where speakers share a first word), by position in the question; at one position the longer key
    wins. The name returned is the first name as written, or the whole label for a whole-label key.
    LongMemEval's "user"/"assistant" are roles, never names, so they are ignored.
    """
    ws = question_words(text)  # "Caroline's" -> "caroline"; "José" -> "jose"
    best: tuple[int, int, str] | None = None
    for sp, key in zip(speakers, name_keys(speakers), strict=True):
        pos = key_position(ws, key)
        if pos is not None and (best is None or (pos, -len(key)) < best[:2]):
            best = (pos, -len(key), sp if len(key) > 1 else sp.split()[0])
    if best is not None:
        return best[2]
    spans = name_spans(text)
    return spans[0] if spans else None


# ----------------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------------


def decompose(query: Query, llm: Any = None) -> list[Requirement]:
    """Decompose(q): 1..5 requirements. Offline rules unless an ``llm`` is given."""
    return decompose_with_source(query, llm)[0]


def decompose_with_source(query: Query, llm: Any = None) -> tuple[list[Requirement], str]:
    """Requirements plus where they came from ("offline rules" or the provider label)."""
    if llm is None:
        return decompose_rules(query.text), "offline rules"

    try:
        raw = decomposer.decompose(llm, query.text)
    except LLMCallFailed as exc:  # the question goes on with the rules' requirements
        return decompose_rules(query.text), f"offline rules (provider call failed: {exc.reason})"
    reqs = _from_llm(raw)
    if not reqs:  # an empty or unusable answer still leaves Stage I something to cover
        return decompose_rules(query.text), "offline rules (provider answer was empty)"
    return reqs, str(getattr(llm, "label", "llm"))


@cache
def _date_ask_words() -> frozenset[str]:
    """Words with which a model's temporal requirement asks for a date ("date of ...", "day it ...")."""
    return frozenset(stem(w) for w in ("date", "dates", "day", "days", "time", "when"))


def _guess_kind(text: str) -> str:
    """A kind for a bare requirement string from the provider (it returns texts only)."""
    dates = find_date_constraints(text)
    timeish = re.search(r"\b(date|when|day|time)\b", text, re.IGNORECASE)
    if dates and content_terms(dates[0][0]) == content_terms(text):
        return "constraint"  # the requirement is only a date
    if timeish:
        return "temporal"
    spans = name_spans(text)
    if spans and spans[0] == text.strip(" .?"):
        return "entity"
    return "fact"


def _from_llm(raw: Any) -> list[Requirement]:
    """Accept a list of strings, of dicts ({"text"|"requirement", "kind"|"type"}), of Requirement."""
    items = raw.get("requirements", []) if isinstance(raw, dict) else list(raw or [])
    out: list[tuple] = []
    for it in items:
        if isinstance(it, Requirement):
            text, kind = it.text, it.kind
        elif isinstance(it, dict):
            text = str(it.get("text") or it.get("requirement") or "")
            kind = str(it.get("kind") or it.get("type") or "fact").lower()
        else:
            text, kind = str(it), _guess_kind(str(it))
        if not text.strip():
            continue
        kind = kind if kind in KINDS else "fact"
        when = find_date_constraints(text)[0][1] if kind == "constraint" and find_date_constraints(text) else None
        # "date I ordered the strap" asks for a date: the turn states the event, not the word "date"
        ask = _date_ask_words() if kind == "temporal" else frozenset()
        terms = (tuple(stem(w) for w in words(text)) if kind == "entity"
                 else content_terms(text, exclude=ask) or tuple(tokenize(text, stemmed=True)))
        if terms:
            out.append(draft(kind, text, terms, when))
    return numbered(out)


# ----------------------------------------------------------------------------------------------
# Lexical coverage (the lexical half of Stage I's incidence)
# ----------------------------------------------------------------------------------------------


def needed_matches(n_terms: int) -> int:
    """Terms a turn must contain: all of 1-2, half (rounded up) of longer term lists."""
    return n_terms if n_terms <= 2 else math.ceil(n_terms / 2)


_PLACE_NAME = re.compile(r"\b(?:in|at|to|from|near|visit(?:ed|ing)?)\s+(?:the\s+)?([A-Z][a-z]+)")
_MID_NAME = re.compile(r"(?<=[a-z,;:]\s)([A-Z][a-z]{2,})\b")  # a capital after a lower-case word: a name


def states_slot(kind: str, text: str) -> bool:
    """Whether a record's text states a value of the type a slot asks: a time, a person (a name or a
    word like "friend"), a place (a place word or "in / at / to" + a name); True for other kinds."""
    if kind == "time":
        return has_time_mention(text)
    if kind == "person":
        return bool(PERSON_NOUNS.intersection(words(text))) or any(
            n.lower() not in NOT_NAME_WORDS for n in _MID_NAME.findall(unaccent(text)))
    if kind == "place":
        return bool(PLACE_NOUNS.intersection(words(text))) or any(
            n.lower() not in NOT_NAME_WORDS for n in _PLACE_NAME.findall(unaccent(text)))
    return True


def covers_lexically(req: Requirement, turn: Turn, turn_stems: frozenset[str]) -> bool:
    """Does ``turn`` supply ``req`` by its words (or, for names and dates, by speaker / date; a slot
    also needs a value of its type)? A ``latest`` requirement is covered as its fact is; which of
    the covering turns is newest is the caller's to decide (``stage1.incidence``)."""
    if req.kind == "entity":
        if turn.speaker and same_person(turn.speaker, req.terms):
            return True
        return all(t in turn_stems for t in req.terms)
    if req.kind == "constraint":
        if req.when is not None and date_matches(req.when, turn.date):
            return True
        return bool(req.terms) and all(t in turn_stems for t in req.terms)
    hits = sum(1 for t in req.terms if t in turn_stems or RELATED_STEMS.get(t, frozenset()) & turn_stems)
    return hits >= needed_matches(len(req.terms)) and states_slot(req.kind, turn.text)
