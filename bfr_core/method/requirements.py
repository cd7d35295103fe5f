"""Question -> answer requirements (the paper's Decompose(q), Algorithm 1 line 4).

A requirement is one element the evidence set must supply: a fact, a bridge between two facts,
an item of a list, a temporal endpoint (the order date *and* the arrival date of "how many days
... after I ordered it"), a constraint (a date the event must fall on), or a named entity.
Stage I builds its formal context from them (objects = candidate turns, attributes = requirements).

Covers
------
* :func:`decompose` - the one entry point: offline rules by default; with an ``llm`` it calls
  ``bfr_core.roles.decomposer.decompose(llm, question_text)`` (imported lazily) and normalises the answer
  into the same :class:`Requirement` records. 1 to 5 requirements, ids ``r1..rJ`` in order.
* :func:`decompose_rules` - the offline rules (no model): the span between two events here, every
  other question form by ``llm.rules_forms`` (which-first, bridges, conjuncts, latest value, who /
  where / when slots), then names and date constraints.
* :func:`first_person` - FirstPerson(q) of the BFR-MV schedule: the first scope speaker named in
  the question, else the first capitalised name-like span.
* :func:`covers_lexically` - the lexical half of Stage I's incidence test (stemmed-term overlap,
  a small table of related event verbs, names by speaker, constraints by session date, slots by a
  value of their type: :func:`states_slot`).

Does not cover: coreference beyond one rule (a pronoun-only temporal clause borrows the other
clause's object terms), NER models (the rules miss lowercase names; speakers are matched first),
paraphrase beyond :data:`RELATED_STEMS`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from bfr_core.dates import DURATION_QUESTION, date_matches, find_date_constraints, has_time_mention
from bfr_core.lexicon import (
    DURATION_UNITS,
    NOT_NAME_WORDS,
    PERSON_NOUNS,
    PLACE_NOUNS,
    RELATED_STEMS,
    question_noise,
)
from bfr_core.llm.base import LLMCallFailed
from bfr_core.llm.rules_forms import parts as question_parts
from bfr_core.method.speaker_names import key_position, name_keys, question_words, same_person
from bfr_core.records import Query, Turn
from bfr_core.roles import decomposer
from bfr_core.sentences import sentences
from bfr_core.text import stem, tokenize, unaccent, words

KINDS = ("fact", "bridge", "list", "temporal", "constraint", "entity", "latest", "person", "place", "time")
# Kinds that ask for a value of a type besides the event's words (``llm.rules_forms``): two of them
# can share their terms with a fact and still be other requirements.
SLOT_KINDS = frozenset({"latest", "person", "place", "time"})
MAX_REQUIREMENTS = 5


@dataclass(frozen=True, slots=True)
class Requirement:
    rid: str  # "r1".."r5"
    text: str  # human-readable, shown in traces
    kind: str  # one of KINDS
    terms: tuple[str, ...]  # stemmed content terms the lexical test looks for
    when: tuple[int | None, int | None, int | None] | None = None  # (year, month, day) of a constraint

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.rid, "text": self.text, "kind": self.kind}


# ----------------------------------------------------------------------------------------------
# Vocabulary
# ----------------------------------------------------------------------------------------------

_NAME_SPAN = re.compile(r"\b([A-Z][a-zA-Z\-]*(?:'s|')?(?:\s+[A-Z][a-zA-Z\-]*(?:'s|')?)*)")
_ENDPOINT_SPLIT = re.compile(r"\s+(?:after|since|before|until|when)\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+(?P<a>.+?)\s+and\s+(?P<b>.+)$", re.IGNORECASE)
_PRONOUN_ONLY = frozenset("i it me they them he she we you this that".split())


# ----------------------------------------------------------------------------------------------
# Small pieces
# ----------------------------------------------------------------------------------------------


def content_terms(text: str, *, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """Stemmed content terms in first-occurrence order, without question noise and ``exclude``."""
    drop = question_noise() | frozenset(exclude)
    out: dict[str, None] = {}
    for t in tokenize(text, stop=True, stemmed=True):
        if t not in drop and not t.isdigit():
            out[t] = None
    return tuple(out)


def name_spans(text: str) -> list[str]:
    """Capitalised name-like spans in order ("Caroline", "Frank Ocean"); possessives stripped.

    A sentence-initial word counts only when it is not a question or auxiliary word.
    """
    out: list[str] = []
    for m in _NAME_SPAN.finditer(unaccent(text)):  # "José" is a name span ("Jose"), as its words fold
        parts = [p[:-2] if p.endswith("'s") else p.rstrip("'") for p in m.group(1).split()]
        # trim leading/trailing non-names ("When Caroline" -> "Caroline")
        while parts and parts[0].lower() in NOT_NAME_WORDS:
            parts.pop(0)
        while parts and parts[-1].lower() in NOT_NAME_WORDS:
            parts.pop()
        if not parts:
            continue
        if len(parts) == 1 and parts[0].isupper() and len(parts[0]) > 1:
            continue  # acronyms (LGBTQ) are content terms, not names
        span = " ".join(parts)
        if span not in out:
            out.append(span)
    return out


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


def _req(kind: str, text: str, terms: Sequence[str], when=None) -> tuple[str, str, tuple[str, ...], Any]:
    return (kind, text.strip(" ,.?"), tuple(terms), when)


# ----------------------------------------------------------------------------------------------
# Rules
# ----------------------------------------------------------------------------------------------


@cache
def _duration_noise() -> frozenset[str]:
    """Duration words (stemmed on first use, as :func:`lexicon.question_noise`)."""
    return frozenset(stem(w) for w in DURATION_UNITS | {"pass", "passed", "elapsed", "ago", "it"})


def _temporal_endpoints(q: str, names: set[str]) -> list[tuple] | None:
    """"How many days ... after X" -> [end event, start event]; None when the form does not apply.

    Handles "between X and Y", "... after/since/before/until/when X", and the doubly-anchored
    "how many days had passed since X when Y" (the main clause then carries no event).
    """
    m = DURATION_QUESTION.match(q)
    if not m:
        return None
    rest = m.group("rest")
    if not any(u in words(rest)[:2] for u in DURATION_UNITS) and "long" not in q.lower().split()[:3]:
        return None
    drop = names | _duration_noise()
    between = _BETWEEN.search(rest)
    if between:
        a, b = between.group("a"), between.group("b")
        ta, tb = content_terms(a, exclude=drop), content_terms(b, exclude=drop)
        if ta and tb:
            return [_req("temporal", a, ta), _req("temporal", b, tb)]
    parts = _ENDPOINT_SPLIT.split(rest, maxsplit=1)
    if len(parts) != 2:
        return None
    main, other = parts
    t_main = content_terms(main, exclude=drop)
    if not t_main:  # "days had passed since X when Y": both endpoints sit in the subordinate part
        sub = _ENDPOINT_SPLIT.split(other, maxsplit=1)
        if len(sub) != 2:
            return None
        main, other = sub[1], sub[0]
        t_main = content_terms(main, exclude=drop)
        if not t_main:
            return None
    t_other = content_terms(other, exclude=drop)
    other_words = set(words(other))
    if not t_other or len(t_other) < 2 and other_words & _PRONOUN_ONLY:
        # "after I ordered it": the pronoun refers to the main clause's object; borrow its terms,
        # minus its leading verb (the main event itself).
        t_other = tuple(dict.fromkeys(list(t_other) + list(t_main[1:] or t_main)))
    return [_req("temporal", main, t_main), _req("temporal", other, t_other)]


_CORE_CLAUSE = re.compile(
    r"(?:[,;:]\s+|\b(?:wondering|remind me|tell me|confirm)\s+(?:if\s+|of\s+)?)"
    r"(?P<core>(?:what|which|where|when|who|how|can you|could you|do you)\b.*)$", re.IGNORECASE)


def _split_core(q: str) -> tuple[str, str]:
    """Long prompts ("I'm planning ... , what's the phone number ...?") -> (core ask, context)."""
    pieces = sentences(q)
    core, context = (pieces[-1], " ".join(pieces[:-1])) if len(pieces) > 1 else (q, "")
    m = _CORE_CLAUSE.search(core)
    if m and m.start() > 0:
        context = (context + " " + core[:m.start()]).strip()
        core = m.group("core")
    return core, context


def decompose_rules(text: str) -> list[Requirement]:
    """Offline decomposition. Order: content requirements, then entities, then date constraints."""
    q = text.strip()
    dates = find_date_constraints(q)
    q_nodate = q
    for span, _ in dates:
        q_nodate = q_nodate.replace(span, " ")
    names = name_spans(q_nodate)
    name_stems = {stem(w) for n in names for w in words(n)}
    reqs: list[tuple] = []

    endpoints = _temporal_endpoints(q_nodate, name_stems)
    if endpoints:
        reqs.extend(endpoints)
    else:
        core, context = _split_core(q_nodate)
        dm = DURATION_QUESTION.match(core)
        is_duration = bool(dm and any(u in words(dm.group("rest"))[:2] for u in DURATION_UNITS))
        drop = name_stems | _duration_noise() if is_duration else name_stems
        for part in question_parts(core):  # the question's forms: asks, bridges, conjuncts, slots
            terms = content_terms(part.text, exclude=drop)
            if terms:
                reqs.append(_req(part.kind, part.label, terms))
        if context:
            c_terms = content_terms(context, exclude=name_stems)
            if c_terms:
                reqs.append(_req("fact", context, c_terms))
    for n in names[:2]:
        reqs.append(_req("entity", n, tuple(stem(w) for w in words(n))))
    for span, when in dates[:1]:
        reqs.append(_req("constraint", span, content_terms(span), when))
    if not reqs:  # nothing parsed: the whole question is the one requirement
        reqs.append(_req("fact", q, content_terms(q) or tuple(tokenize(q, stemmed=True)) or ("?",)))
    reqs = _dedupe(reqs)[:MAX_REQUIREMENTS]
    return [Requirement(f"r{i + 1}", t, k, terms, when) for i, (k, t, terms, when) in enumerate(reqs)]


def _dedupe(reqs: list[tuple]) -> list[tuple]:
    seen: set[tuple[str, ...]] = set()  # the same terms twice are one requirement, unless a slot's
    out = []
    for r in reqs:
        key = (r[0] if r[0] in SLOT_KINDS else "", *sorted(r[2]))
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
    return out


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
            out.append(_req(kind, text, terms, when))
    out = _dedupe(out)[:MAX_REQUIREMENTS]
    return [Requirement(f"r{i + 1}", t, k, terms, when) for i, (k, t, terms, when) in enumerate(out)]


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
