"""The offline decomposer: a question -> its answer requirements, by rules (no model).

A requirement is one element the evidence set must supply: a fact, a bridge between two facts, an item
of a list, a temporal endpoint (the order date *and* the arrival date of "how many days ... after I
ordered it"), a constraint (a date the event must fall on), a named entity, or a typed slot (the latest
value, a person, a place, a time). Stage I (``method.requirements.decompose`` without a model) builds its
formal context from these records; the offline rules backend's decompose role (``llm.rules.decompose``)
replies with their texts.

Covers :func:`decompose_rules` (the span between two events here, every other question form by
``rules_forms.parts``: which-first, bridges, conjuncts, latest value, who / where / when slots; a long
prompt's context as one fact; then names and date constraints; 1 to :data:`MAX_REQUIREMENTS`, ids
``r1..rJ`` in order), :class:`Requirement`, :func:`content_terms`, :func:`name_spans`, and
:func:`later_first` (the order of an interval's two endpoints), and :func:`draft` / :func:`numbered`
(how any source's requirements are deduplicated and numbered).

Does not cover: coreference beyond one rule (a pronoun-only temporal clause borrows the other clause's
object terms), NER models (the rules miss lowercase names), paraphrase, which records cover a
requirement (``method.requirements.covers_lexically``, ``llm.rules.coverage``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from bfr_core.dates import DURATION_QUESTION, find_date_constraints
from bfr_core.lexicon import DURATION_UNITS, NOT_NAME_WORDS, question_noise
from bfr_core.llm.rules_forms import parts as question_parts
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
_INFINITIVE_END = re.compile(r"\bto\s+(\w+)\s*$", re.IGNORECASE)  # "... my new camera strap to arrive"
_PRONOUN_ONLY = frozenset("i it me they them he she we you this that".split())


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


def draft(kind: str, text: str, terms: Sequence[str], when=None) -> tuple[str, str, tuple[str, ...], Any]:
    """One requirement before numbering: (kind, text without edge punctuation, terms, constraint date)."""
    return (kind, text.strip(" ,.?"), tuple(terms), when)


@cache
def _duration_noise() -> frozenset[str]:
    """Duration words (stemmed on first use, as :func:`lexicon.question_noise`)."""
    return frozenset(stem(w) for w in DURATION_UNITS | {"pass", "passed", "elapsed", "ago", "it"})


def _temporal_endpoints(q: str, names: set[str]) -> tuple[list[tuple], bool] | None:
    """"How many days ... after X" -> ([end event, start event], True): the two endpoints, main clause
    first, and whether the first is the later event; None when the form does not apply.

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
            return [draft("temporal", a, ta), draft("temporal", b, tb)], False
    parts = _ENDPOINT_SPLIT.split(rest, maxsplit=1)
    if len(parts) != 2:
        return None
    main, other = parts
    later_first = _ENDPOINT_SPLIT.search(rest).group(0).strip().lower() not in {"before", "until"}
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
        # minus the main event's verb (an infinitive's last word, "my new strap to arrive"; else the first term).
        infinitive = _INFINITIVE_END.search(main)
        verb = set(content_terms(infinitive.group(1)) if infinitive else t_main[:1])
        t_other = tuple(dict.fromkeys(list(t_other) + ([t for t in t_main if t not in verb] or list(t_main))))
    return [draft("temporal", main, t_main), draft("temporal", other, t_other)], later_first


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


def _prepared(text: str) -> tuple[str, list, str, list[str], set[str]]:
    """(question, its date constraints, the question without them, its names, their stems)."""
    q = text.strip()
    dates = find_date_constraints(q)
    q_nodate = q
    for span, _ in dates:
        q_nodate = q_nodate.replace(span, " ")
    names = name_spans(q_nodate)
    return q, dates, q_nodate, names, {stem(w) for n in names for w in words(n)}


def later_first(text: str) -> bool:
    """Whether the two temporal endpoints :func:`decompose_rules` gives an interval question list the
    later event first ("how many days ... after X": the main clause's event, then X); False when the
    question is no interval of two events."""
    _, _, q_nodate, _, name_stems = _prepared(text)
    endpoints = _temporal_endpoints(q_nodate, name_stems)
    return bool(endpoints and endpoints[1])


def decompose_rules(text: str) -> list[Requirement]:
    """Offline decomposition. Order: content requirements, then entities, then date constraints."""
    q, dates, q_nodate, names, name_stems = _prepared(text)
    reqs: list[tuple] = []

    endpoints = _temporal_endpoints(q_nodate, name_stems)
    if endpoints:
        reqs.extend(endpoints[0])
    else:
        core, context = _split_core(q_nodate)
        dm = DURATION_QUESTION.match(core)
        is_duration = bool(dm and any(u in words(dm.group("rest"))[:2] for u in DURATION_UNITS))
        drop = name_stems | _duration_noise() if is_duration else name_stems
        for part in question_parts(core):  # the question's forms: asks, bridges, conjuncts, slots
            terms = content_terms(part.text, exclude=drop)
            if terms:
                reqs.append(draft(part.kind, part.label, terms))
        if context:
            c_terms = content_terms(context, exclude=name_stems)
            if c_terms:
                reqs.append(draft("fact", context, c_terms))
    for n in names[:2]:
        reqs.append(draft("entity", n, tuple(stem(w) for w in words(n))))
    for span, when in dates[:1]:
        reqs.append(draft("constraint", span, content_terms(span), when))
    if not reqs:  # nothing parsed: the whole question is the one requirement
        reqs.append(draft("fact", q, content_terms(q) or tuple(tokenize(q, stemmed=True)) or ("?",)))
    return numbered(reqs)


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


def numbered(drafts: list[tuple]) -> list[Requirement]:
    """Requirements ``r1..rJ`` from :func:`draft` tuples: repeats dropped (:func:`_dedupe`), at most
    :data:`MAX_REQUIREMENTS`, in order."""
    return [Requirement(f"r{i + 1}", t, k, terms, when)
            for i, (k, t, terms, when) in enumerate(_dedupe(drafts)[:MAX_REQUIREMENTS])]
