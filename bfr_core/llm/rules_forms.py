"""Question forms -> requirement parts: the offline decomposer's grammar (no model, no word lists of
any benchmark's questions).

Written from a specification of English question FORMS; each form gives the requirements a reader
would list for it:

* which-first  "Which came first, A or B?", "Which did I do first: A or B?", "Did A happen before
               B?" -> one ``temporal`` part per event (each event's date).
* clauses      "..., and what ...?", "...; ..." -> the forms below per clause.
* bridge       "A after / before / while / because / since / when / instead of B" -> A, then B as a
               ``bridge``; a relative clause "the N who / whom / whose / which / where / that-I V ..."
               -> the ask with N, then N + the clause as a ``bridge`` (the link to follow first).
* conjunction  "A and B", "A, B and C", "A or B" -> the frame once per conjunct (``list``).
* latest       "current(ly)", "now", "these days", "latest", "most recent", "anymore", "still", ...
               -> the fact, plus a ``latest`` part (its newest mention: the value after any update).
* choice       "..., A or B?", "Did I buy A or B?" -> :func:`choices` gives the options (the answerer
               answers with one of them; the parts are the conjunction's).
* slots        a question opening "who" / "where" / "when" -> the fact, plus a ``person`` / ``place``
               / ``time`` slot (a record that states the event with a value of that type).
* the rest     one ``fact``: the question without its scaffold, as before.

The span between two events ("how many days between A and B", "... after I ordered it") is split
by the offline decomposer itself (``llm.rules_requirements``); :func:`parts` sees the other forms.
Covers :func:`parts` (pure, deterministic; at most :data:`MAX_PARTS`).
Does not cover: which records cover a part (``method.requirements.covers_lexically`` for Stage I,
``llm.rules.coverage`` for the rules roles), names and date constraints (``llm.rules_requirements``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bfr_core.lexicon import LATEST_CUE
from bfr_core.text import tokenize, unaccent

MAX_PARTS = 5
SLOT_KINDS = {"who": "person", "whom": "person", "where": "place", "when": "time"}
# the label a typed part's text carries wherever it is shown ("who: Tom met at the bakery")
LABEL = {"latest": "latest", "person": "who", "place": "where", "time": "when"}


@dataclass(frozen=True, slots=True)
class Part:
    kind: str  # fact | bridge | list | temporal | latest | person | place | time
    text: str  # a span of the question (the ask, a clause, a conjunct in its frame)

    @property
    def label(self) -> str:
        """The text as shown, with the type a typed part asks for ("when: Lena started her job")."""
        return f"{LABEL[self.kind]}: {self.text}" if self.kind in LABEL else self.text


_WH_AUX = r"(?:what|when|where|who|whom|which|how|why|did|do|does|is|are|was|were|has|have|had|can|could|would)"
_CLAUSE_SPLIT = re.compile(rf",?\s+(?:and|but)\s+(?={_WH_AUX}\b)|;\s*", re.I)
_FIRST = re.compile(r"^\W*(?:which|what|who)\b.*?\bfirst\b\s*[,:]?\s*(?P<a>.+?),?\s+or\s+(?P<b>.+)$", re.I)
_ORDER = re.compile(r"^\W*(?:did|was|were|had|has|have)\b\s+(?P<a>.+?)\s+(?:before|after)\s+(?P<b>.+)$", re.I)
_BRIDGE = re.compile(r"\s+(?:after|before|while|because|since|when|instead of)\s+", re.I)
# "the friend who lent me ...", "the park where we ...", "the book that I ..." (a relative clause
# after a noun; "that" only before a subject, where it cannot be a determiner)
_RELATIVE = re.compile(r"\b(?P<noun>[a-z][\w-]*)\s+(?:(?:who|whom|whose|which|where)\s+"
                       r"|that\s+(?=(?:i|we|you|he|she|they|[A-Z][a-z]+)\b))(?P<clause>.+)$")
_NOT_NOUN = frozenset(_WH_AUX.strip("(?:)").split("|")) | {"and", "or", "but", "of", "to", "in", "on", "at",
                                                          "for", "with", "about", "from", "by", "me", "it"}
_LEAD = re.compile(rf"^\s*(?:how\s+(?:many|much|long)|{_WH_AUX})\b\s*(?:(?:did|does|do|is|are|was|were|has|have|"
                   r"had)\b)?\s*", re.I)
_WHEN = re.compile(r"^\s*(?:when|how\s+long)\b|^\s*how\s+(?:many|much)\s+(?:days?|weeks?|months?|years?|hours?|"
                   r"minutes?|time)\b", re.I)
_LIST_CUE = re.compile(
    r"^\s*(?:what|which)\s+(?:are|were)\b|^\s*(?:what|which)\s+(?:\w+\s+){0,2}\w+s\s+(?:do|does|did|has|have|had)\b"
    r"|\b(?:some|all|the)\s+\w+s\b|^\s*how\s+many\b|\bwhat\s+things\b", re.I)
_NAME_LIST = re.compile(r"\b((?:[A-Z][a-z]+,\s+)*[A-Z][a-z]+,?\s+(?:and|or)\s+[A-Z][a-z]+)\b")
_WORD_LIST = re.compile(r"\b((?:[\w'-]+,\s+)+[\w'-]+,?\s+(?:and|or)\s+[\w'-]+)\b")
_CONJ = re.compile(r"\s+(?:and|or)\s+", re.I)
# words that end a conjunct: prepositions, auxiliaries, question words, subordinators
_BOUNDARY = frozenset("""in at on to for with from of about during into over under by near after before while since
    when where who whom which that did does do is are was were has have had can could would will should
    as than because if""".split())
_DETERMINER = frozenset("the a an my your his her their our its this that these those some".split())


def strip_lead(clause: str) -> str:
    """A clause without its question scaffold ("How many days did" / "What is")."""
    return _LEAD.sub("", clause, count=1).strip(" ,.?!")


def _split_list(items_text: str) -> list[str]:
    return [x.strip() for x in re.split(r",?\s+(?:and|or)\s+|,\s*", items_text)
            if x.strip() and x.strip().lower() not in {"and", "or"}]


def conjuncts(clause: str) -> list[str]:
    """The clause once per conjunct of its first coordination ("A and B", "A, B and C"); [] when
    it has none. A coordination of names or of 3+ short items is taken whole; of two phrases, the
    right conjunct runs to the first preposition / auxiliary, the left one mirrors its length."""
    # names are found by their capitals on the clause unaccented character by character ("Renée" as
    # "Renee"; a character that would not stay one is kept), so every position holds, and the items
    # are cut from the clause itself, accents and all
    probe = "".join(u if len(u := unaccent(c)) == 1 else c for c in clause)
    for pat in (_NAME_LIST, _WORD_LIST):
        m = pat.search(probe)
        if m:
            items = _split_list(clause[m.start(1): m.end(1)])
            if pat is _NAME_LIST or (len(items) >= 3 and all(len(x.split()) <= 2 for x in items)):
                return [clause[: m.start()] + it + clause[m.end():] for it in items]
    m = _CONJ.search(clause)
    if not m:
        return []
    left, right = clause[: m.start()].split(), clause[m.end():].split()
    conj_r: list[str] = []
    for w in right:
        if w.lower().strip(",.?!") in _BOUNDARY or len(conj_r) == 3:
            break
        conj_r.append(w)
    if not conj_r or not left:
        return []
    if len(conj_r) > 1 and conj_r[0].lower() not in _DETERMINER:
        return []  # "salt and pepper brand", "hiking and camping last week": one compound thing
    segs = " ".join(left).split(", ")
    if len(segs) > 1 and all(1 <= len(x.split()) <= 3 for x in segs[1:]):  # "A, B and C" of phrases
        head = segs[0].split()
        det = [i for i in range(max(0, len(head) - 3), len(head)) if head[i].lower() in _DETERMINER]
        cut = det[-1] if det else len(head) - 1
        frame, rest = " ".join(head[:cut]), " ".join(right[len(conj_r):])
        items = [" ".join(head[cut:]), *segs[1:], " ".join(conj_r)]
        return [" ".join(x for x in (frame, it, rest) if x) for it in items]
    if conj_r[0].lower() in _DETERMINER:  # "the hike and the concert": the left conjunct from its determiner
        det = [i for i in range(max(0, len(left) - 4), len(left)) if left[i].lower() in _DETERMINER]
        start = det[-1] if det else len(left) - 1
    else:
        start = len(left) - len(conj_r)
    start = max(start, 0)
    while start < len(left) and left[start].lower().strip(",") in _BOUNDARY:
        start += 1
    if start >= len(left):
        return []
    frame_l, conj_l = left[:start], left[start:]
    rest = right[len(conj_r):]
    if not frame_l and not rest:  # "A and B" alone: nothing to distribute over
        return [" ".join(conj_l), " ".join(conj_r)]
    return [" ".join(frame_l + conj_l + rest), " ".join(frame_l + conj_r + rest)]


def _relative(clause: str) -> tuple[str, str] | None:
    """(the ask with the noun, noun + relative clause) or None."""
    for m in _RELATIVE.finditer(clause):
        noun = m.group("noun")
        if noun.lower() in _NOT_NOUN or m.start() == 0:
            continue
        ask = clause[: m.start("noun")] + noun
        if not set(tokenize(strip_lead(ask))) - {noun.lower()}:
            return None  # "some foods that Ann likes": the clause is the whole ask, no second fact
        return ask, f"{noun} {m.group('clause')}"
    return None


def _main_kind(core: str) -> str:
    if _WHEN.match(core):
        return "temporal"
    return "list" if _LIST_CUE.search(core) else "fact"


def _clause_parts(clause: str, first: bool) -> list[Part]:
    """The ask, bridge, conjunct and slot parts of one clause."""
    kind = _main_kind(clause)
    out: list[Part] = []
    bridge = None if kind == "temporal" else (_BRIDGE.split(clause, maxsplit=1) + [""])[:2]
    main = bridge[0] if bridge else clause
    rel = _relative(main)
    if rel:
        main = rel[0]
    items = conjuncts(main) if kind != "temporal" else []
    out.extend(Part("list", it) for it in items)
    if not items:
        out.append(Part(kind, main.strip(" ,.?!")))
    if rel:
        out.append(Part("bridge", rel[1]))
    if bridge and bridge[1].strip():
        out.append(Part("bridge", bridge[1].strip(" ,.?!")))
    lead = re.match(r"\s*(\w+)", clause)
    wh = lead.group(1).lower() if lead else ""
    ask = strip_lead(main)
    if first and LATEST_CUE.search(clause) and ask:
        out.append(Part("latest", ask))
    if wh in SLOT_KINDS and ask and not items:
        out.append(Part(SLOT_KINDS[wh], ask))
    return out


def event_order(question: str) -> tuple[str, str] | None:
    """The two events of a which-first / did-A-before-B question, in the order asked; else None."""
    m = _FIRST.match(question) or _ORDER.match(question)
    if not m:
        return None
    return strip_lead(m.group("a")), m.group("b").strip(" ,.?!")


_OPTION_WORDS = 4  # an option of a choice question is a short noun phrase ("a dog", "green tea"), not a clause
_CLAUSE_OPEN = re.compile(rf"^\s*{_WH_AUX}\b", re.I)
_YES_NO_OPEN = re.compile(r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can|could|would|will|should)\b", re.I)
# words that end a choice question after its last option ("Did I meet Tom or Anna first?"): order, degree, time
_AFTER_OPTIONS = frozenset("first last earlier later sooner more most less better best again now then".split())


def choices(question: str) -> tuple[str, ...]:
    """The options a choice question ends with, as written: "Who moved, Dana or Ana?" -> (Dana, Ana); "Did
    Sam buy green tea or black coffee?" -> (green tea, black coffee); "..., a cat, a dog(,) or a bird?" -> all
    three; "Is it red, green or blue?" -> all three (a yes/no opening's last words are the first option);
    "Did I meet Tom or Anna first?" -> (Tom, Anna). Empty when the question offers none ("or not (yet)", an
    "or" between clauses, options over :data:`_OPTION_WORDS` words)."""
    q = question.strip().rstrip("?.! ").strip()
    segments = [x.strip() for x in q.split(",")]
    if len(segments) > 1 and re.match(r"or\s+", segments[-1], re.I):  # "..., or a bird" (the Oxford comma)
        segments[-2:] = [f"{segments[-2]} {segments[-1]}"]
    last = re.split(r"\s+or\s+", segments[-1], flags=re.I)
    if len(last) != 2:
        return ()
    right = last[1].split()
    while right and right[-1].lower() in _AFTER_OPTIONS:
        right.pop()
    if not right or len(right) > _OPTION_WORDS or right[0].lower() == "not":
        return ()
    head = segments[:-1]
    if head:  # "..., A or B": the comma marks where the options start, and earlier short segments are options too
        opts = [last[0], " ".join(right)] if len(last[0].split()) <= _OPTION_WORDS else []
        while opts and len(head) > 1 and len(head[-1].split()) <= _OPTION_WORDS and not _CLAUSE_OPEN.match(head[-1]):
            opts.insert(0, head.pop())
        if opts and len(head) == 1 and _YES_NO_OPEN.match(head[0]):  # "Is it red, green or blue": red is one too
            words = head[0].split()
            size = len(opts[0].split())
            if len(words) > size + 1:
                opts.insert(0, " ".join(words[-size:]))
    else:  # "Did Sam buy tea or coffee": the left option is as long as the right one
        left = last[0].split()
        opts = [" ".join(left[-len(right):]), " ".join(right)] if len(left) > len(right) else []
    opts = [o.strip() for o in opts if o.strip()]
    if any(w.lower() in _BOUNDARY for o in opts for w in (o.split()[0], o.split()[-1])):
        return ()  # "before or after work": a choice of relation, not of things
    return tuple(opts) if len(opts) >= 2 and len({o.lower() for o in opts}) == len(opts) else ()


def parts(question: str) -> list[Part]:
    """The question's requirement parts by form (1 to :data:`MAX_PARTS`; the question itself, as one
    ``fact``, when nothing else applies)."""
    q = re.sub(r"\s+", " ", question.strip()).rstrip("?.! ").strip()
    if not q:
        return []
    order = event_order(q)
    if order:
        out = [Part("temporal", e) for e in order]
    else:
        out = []
        for i, clause in enumerate(c for c in _CLAUSE_SPLIT.split(q) if c and c.strip()):
            out.extend(_clause_parts(clause.strip(), i == 0))
    seen: dict[tuple[str, str], Part] = {}
    for p in out:
        if p.text and re.search(r"\w", p.text):
            seen.setdefault((p.kind, p.text.lower()), p)
    return list(seen.values())[:MAX_PARTS] or [Part("fact", q)]
