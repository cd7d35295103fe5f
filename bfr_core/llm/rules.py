"""The "offline rules" backend: deterministic heuristics for every LLM role, no model, no network.

Covers, one pure function per role (each usable on its own), plus :class:`RulesLLM`, which serves
them through the same :class:`~bfr_core.llm.base.LLM` call as a real model (it reads the request's
``payload`` and replies with the JSON the role's prompt asks for, so caching, call logs and parsing
are exercised identically):

* ``decompose``  split on clause-level "and" / short comma lists; for interval questions ("how many
  days ... after/before/since/between", "when ... after") one requirement per temporal endpoint.
* ``select``     greedy requirement cover over the pool (token overlap with a small synonym table).
* ``tool``       stop when covered; entity view for an unseen name; session view to find a partner
  turn; else text.
* ``answer``     extractive: the evidence sentence with the highest token overlap, narrowed to a
  date / number / name / place span by question type; interval questions compute the day count
  between the two dates the evidence gives ("February 5th" -> "February 10th" = "5 days").
* ``span``       the two event dates ``answer`` would subtract on an interval question.
* ``judge``      CORRECT when the gold's numbers and dates agree and token F1 or gold recall >= 0.5.
* ``lme_judge``  LongMemEval's yes/no judge where text rules can decide (the gold contained in the
  response, the same number); "undecided" otherwise (preference rubrics always).
* ``suff``       sufficient when every requirement is covered and the reference answer is found in
  (or, for intervals, computed from) the evidence; insufficient when neither; else uncertain.

Does not cover: paraphrase, coreference beyond "it/them", relative dates ("yesterday"). Its name
everywhere is "offline rules"; its model id carries :data:`RULES_VERSION` so changing a heuristic
invalidates cached replies.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from bfr_core.dates import (
    INTERVAL_QUESTION,
    MONTH_NUMBER,
    SPAN_UNIT,
    WEEKDAYS,
    Ymd,
    day_gap,
    find_day_dates,
    span_text,
)
from bfr_core.lexicon import CANONICAL_STEM, NOT_NAME_CAPITALISED, NUMBER_WORDS
from bfr_core.llm.base import LLMCallFailed, LLMRequest, LLMResponse
from bfr_core.text import tokenize

RULES_VERSION = "2"
NAME = "offline rules"

# -- tokens ------------------------------------------------------------------------------------
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


# -- sentences -----------------------------------------------------------------------------------
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])|\n+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text) if s and s.strip()]


# Evidence is often rendered with its session date first: "(05 February 2023) user: ...".
_ANCHOR = re.compile(r"^\s*[(\[]([^)\]]{4,40})[)\]]\s*")


@dataclass(frozen=True, slots=True)
class Unit:
    """One evidence sentence with its dates: those written in it, with a missing year taken from
    the snippet's session-date prefix; else the session date itself ("it arrived today")."""

    text: str
    dates: tuple[Ymd, ...]
    spans: tuple[str, ...]  # the dates as written (the session date's text when it stands in)
    turn: str = ""  # the whole snippet the sentence came from (its context)


def units(evidence: Sequence[str]) -> list[Unit]:
    out = []
    for snippet in evidence:
        m = _ANCHOR.match(snippet)
        anchor_found = find_day_dates(m.group(1)) if m else []
        anchor = anchor_found[0] if anchor_found else None
        body = snippet[m.end():] if anchor else snippet
        for sent in sentences(body):
            found = find_day_dates(sent)
            if found:
                dates = tuple(_with_year(ymd, anchor[1] if anchor else None) for _, ymd, _ in found)
                out.append(Unit(sent, dates, tuple(t for _, _, t in found), body))
            elif anchor:
                out.append(Unit(sent, (anchor[1],), (anchor[2],), body))
            else:
                out.append(Unit(sent, (), (), body))
    return out


def _with_year(ymd: Ymd, anchor: Ymd | None) -> Ymd:
    """A year-less date said in a dated session: that year, or the one before when the date would
    otherwise lie more than a month after the session (people mostly talk about the past)."""
    if ymd[0] is not None or anchor is None or anchor[0] is None:
        return ymd
    year = anchor[0]
    if (date(year, ymd[1], ymd[2]) - date(year, anchor[1], anchor[2])).days > 31:
        year -= 1
    return (year, ymd[1], ymd[2])


def clean_question(q: str) -> str:
    return re.sub(r"\s+", " ", q.strip()).rstrip("?.! ").strip()


# -- decompose ---------------------------------------------------------------------------------
_INTERVAL_LEAD = re.compile(
    r"^(how (many|much) \w+|how long|when)\s+"
    r"((did|does|do|had|has|have|was|were|is|are|will|would)\s+)?"
    r"((it|that)\s+(take|took|takes)\s+((for\s+)?(\w+)\s+)?(to\s+)?)?"
    r"((passed|elapsed|pass)\s+)?", re.I)
_AUX_SUBJ = re.compile(r"\b(did|do|does|was|were|had|have|has)\s+(I|i|we|you|he|she|they|[A-Z][a-z]+)\b")
_SUBJ_OBJ = {"me": "I", "us": "we", "him": "he", "her": "she", "them": "they"}
_PRONOUN = re.compile(r"\b(it|them)\b", re.I)
_CLAUSE_SPLIT = re.compile(
    r",?\s+(?:and|but)\s+(?=(?:what|when|where|who|whom|which|how|why|did|do|does|is|are|was|were|has|have)\b)"
    r"|;\s*", re.I)
_NAME_LIST = re.compile(r"\b((?:[A-Z][a-z]+,\s+)*[A-Z][a-z]+,?\s+(?:and|or)\s+[A-Z][a-z]+)\b")
_WORD_LIST = re.compile(r"\b((?:\w+,\s+)+\w+,?\s+(?:and|or)\s+\w+)\b")
_WH = re.compile(r"^(what|which|who|whom|whose|when|where|why|how)\b", re.I)


def _event_subject(lead_match: re.Match[str] | None) -> str:
    if lead_match is None:
        return ""
    who = lead_match.group(10)
    return _SUBJ_OBJ.get(who.lower(), who) if who else ""


def _object(clause: str) -> str:
    """What a clause's verb acts on, naively: the words after the subject and the verb; for an
    infinitive event ("my new camera strap to arrive") the noun phrase before "to"."""
    inf = re.match(r"^(?:(?:my|our|your|his|her|their|the|a|an)\s+)?(.+?)\s+to\s+\w+$", clause, re.I)
    if inf:
        return inf.group(1)
    words = clause.split()
    if words and words[0].lower() in {"i", "we", "you", "he", "she", "they"}:
        words = words[1:]
    return " ".join(words[1:])


def _interval_events(q: str) -> list[str]:
    """The two events an interval question spans, earlier first; [] when it is not one."""
    first = re.search(r"\bwhich\b.*\bfirst\b,?\s*(.+?)\s+or\s+(.+)$", q, re.I)
    if first:
        return [first.group(1), first.group(2)]
    if not INTERVAL_QUESTION.search(q):
        return []
    between = re.search(r"\bbetween\s+(.+?)\s+and\s+(.+)$", q, re.I)
    if between:
        return [between.group(1), between.group(2)]
    split = re.search(r"\s+(after|before|since|until|till)\s+", q, re.I)
    if not split:
        return []
    left, word, right = q[: split.start()], split.group(1).lower(), q[split.end():]
    lead = _INTERVAL_LEAD.match(left + " ")
    subj = _event_subject(lead)
    left_event = (left + " ")[lead.end():].strip() if lead else left
    if not left_event:  # "How many days after my birthday did I go to the concert"
        aux = _AUX_SUBJ.search(right)
        when = re.search(r"\s+when\s+", right, re.I)
        if aux:
            left_event, right = right[aux.start(2):], right[: aux.start()]
        elif when:  # "... since I bought the laptop when I returned it"
            left_event, right = right[when.end():], right[: when.start()]
        else:
            return []
    elif subj and not re.match(r"^(i|we|you|he|she|they)\b", left_event, re.I):
        left_event = f"{subj} {left_event}"
    left_event = re.sub(r"^(did|do|does)\s+", "", left_event.strip(), flags=re.I)
    right = right.strip()
    if _PRONOUN.search(left_event):  # "... I bought the laptop when I returned it"
        left_event = _PRONOUN.sub(_object(right) or r"\1", left_event)
    else:
        right = _PRONOUN.sub(_object(left_event) or r"\1", right)
    # "B after A": A happened first. "B before A": B happened first.
    return [right, left_event] if word in {"after", "since"} else [left_event, right]


def _distribute(q: str) -> list[str]:
    for pat in (_NAME_LIST, _WORD_LIST):
        m = pat.search(q)
        if not m:
            continue
        items = [x.strip() for x in re.split(r",?\s+(?:and|or)\s+|,\s*", m.group(1)) if x.strip()]
        items = [x for x in items if x.lower() not in {"and", "or"}]
        if pat is _WORD_LIST and (len(items) < 3 or any(len(x.split()) > 2 for x in items)):
            continue
        return [q[: m.start()] + item + q[m.end():] for item in items]
    return []


def decompose(question: str) -> list[str]:
    """1-5 requirement texts for ``question`` (the question itself when nothing splits)."""
    q = clean_question(question)
    if not q:
        return []
    events = _interval_events(q)
    if len(events) == 2 and all(e.strip() for e in events):
        reqs = [f"date: {e.strip()}" for e in events]
    else:
        clauses = [c.strip() for c in _CLAUSE_SPLIT.split(q) if c and c.strip()]
        reqs = []
        for clause in clauses:
            reqs.extend(_distribute(clause) or [clause])
    out = list(dict.fromkeys(r for r in reqs if toks(r)))
    return out[:5] or [q]


# -- coverage ----------------------------------------------------------------------------------
def _req_tokens(reqs: Sequence[str]) -> list[tuple[set[str], set[str], bool]]:
    """Per requirement: its tokens, the tokens no sibling requirement has, whether it asks a date."""
    sets = [toks(r) - {"date"} for r in reqs]
    out = []
    for i, s in enumerate(sets):
        others = set().union(*(o for j, o in enumerate(sets) if j != i)) if len(sets) > 1 else set()
        out.append((s, s - others, reqs[i].lower().startswith("date:")))
    return out


def covers(req: tuple[set[str], set[str], bool], text: str, text_toks: set[str] | None = None,
           dated: bool | None = None) -> bool:
    rt, distinct, is_date = req
    tt = toks(text) if text_toks is None else text_toks
    hits = len(rt & tt)
    enough = hits >= max(1, math.ceil(0.5 * len(rt)))
    if is_date:
        has_date = bool(find_day_dates(text)) if dated is None else dated
        return has_date and (bool(distinct & tt) if distinct else enough)
    return enough or (len(rt) > 1 and bool(distinct & tt) and hits >= 2)


def coverage(reqs: Sequence[str], texts: Sequence[str]) -> list[list[int]]:
    """For each requirement, the indexes of ``texts`` that cover it (a session-date prefix counts
    as the snippet's date)."""
    rts = _req_tokens(reqs)
    tts = [toks(_ANCHOR.sub("", t, count=1)) for t in texts]
    dated = [any(u.dates for u in units([t])) for t in texts]
    return [[i for i, t in enumerate(texts) if covers(r, t, tts[i], dated[i])] for r in rts]


# -- select ------------------------------------------------------------------------------------
def select(question: str, pool: Sequence[tuple[str, str]], requirements: Sequence[str] = (),
           max_items: int = 5) -> tuple[list[str], dict[int, list[str]]]:
    """Greedy smallest cover: (selected ids, requirement number (1-based) -> selected ids covering it)."""
    reqs = list(requirements) or decompose(question)
    if not pool:
        return [], {}
    texts = [t for _, t in pool]
    cov = coverage(reqs, texts)
    qt = toks(question)
    overlap = [len(qt & toks(t)) for t in texts]
    uncovered = {j for j, c in enumerate(cov) if c}
    chosen: list[int] = []
    while uncovered and len(chosen) < max_items:
        gain = {i: sum(1 for j in uncovered if i in cov[j]) for i in range(len(pool)) if i not in chosen}
        best = max(gain, key=lambda i: (gain[i], overlap[i], -i))
        if gain[best] == 0:
            break
        chosen.append(best)
        uncovered -= {j for j in uncovered if best in cov[j]}
    if not chosen:
        top = max(range(len(pool)), key=lambda i: (overlap[i], -i))
        if overlap[top] > 0:
            chosen.append(top)
    ids = [pool[i][0] for i in chosen]
    by_req = {j + 1: [pool[i][0] for i in chosen if i in c] for j, c in enumerate(cov)}
    return ids, {j: v for j, v in by_req.items() if v}


# -- tool --------------------------------------------------------------------------------------
_NAME = re.compile(r"\b([A-Z][a-z]{2,})\b")


def person_names(question: str) -> list[str]:
    return list(dict.fromkeys(n for n in _NAME.findall(question) if n not in NOT_NAME_CAPITALISED))


def tool(question: str, evidence: Sequence[str], tools: Sequence[str]) -> str:
    """The next retrieval action among ``tools`` (names such as text / entity / session / stop)."""
    if not tools:
        raise ValueError("no tools to choose from")
    names = [t.lower() for t in tools]
    reqs = decompose(question)
    covered = [bool(c) for c in coverage(reqs, evidence)] if evidence else [False] * len(reqs)
    pick = None
    if evidence and all(covered) and "stop" in names:
        pick = "stop"
    elif "entity" in names and any(
        not any(n.lower() in e.lower() for e in evidence) for n in person_names(question)
    ):
        pick = "entity"
    elif "session" in names and evidence and any(covered):
        pick = "session"
    elif "text" in names:
        pick = "text"
    return tools[names.index(pick)] if pick else tools[0]


# -- answer ------------------------------------------------------------------------------------
NOT_FOUND = "Not mentioned in the evidence."


# A sentence about a planned event dates the plan, not the event ("signed up for a class later").
_PLANNED = re.compile(r"\b(will|later|next|tomorrow|going to|plan(?:ning|ned)?|signed up|upcoming|soon)\b", re.I)


def _event_score(req: tuple[set[str], set[str], bool], unit: Unit) -> float:
    """How well a dated sentence reports a requirement's event: its distinct verb counts double, the
    rest of the snippet adds context ("It arrived on the 14th! The new strap's leather ..."), and a
    sentence about a plan is demoted."""
    sent, turn = toks(unit.text), toks(unit.turn or unit.text)
    score = 2.0 * len(req[1] & sent) + len(req[0] & sent) + 0.5 * len(req[0] & (turn - sent))
    return score - (2.0 if _PLANNED.search(unit.text) else 0.0)


def interval_dates(question: str, evidence: Sequence[str]) -> tuple[Ymd, Ymd] | None:
    """The dates of the question's two events on an interval question, when the evidence dates
    both; None otherwise."""
    if not SPAN_UNIT.search(question):
        return None
    reqs = decompose(question)
    dated = [u for u in units(evidence) if u.dates]
    if not dated:
        return None
    picked: list[Ymd] = []
    if len(reqs) == 2 and all(r.startswith("date:") for r in reqs):
        for r in _req_tokens(reqs):
            cands = [(_event_score(r, u), -k, u.dates[0])
                     for k, u in enumerate(dated) if covers(r, u.text, dated=True)]
            if cands:
                picked.append(max(cands)[2])
        if len(picked) == 2 and picked[0] == picked[1]:
            picked = []
    if len(picked) != 2:
        qt = toks(question)
        ranked = sorted(dated, key=lambda u: -len(qt & toks(u.text)))
        all_dates = list(dict.fromkeys(ymd for u in ranked for ymd in u.dates))
        if len(all_dates) < 2:
            return None
        picked = sorted(all_dates[:2], key=lambda ymd: (ymd[0] or 0, ymd[1], ymd[2]))
    return picked[0], picked[1]


def interval_answer(question: str, evidence: Sequence[str]) -> str | None:
    """"N days" (or weeks/months/years, as asked) between the question's two events, when the
    evidence dates both; None otherwise."""
    unit_m = SPAN_UNIT.search(question)
    picked = interval_dates(question, evidence)
    if not unit_m or picked is None:
        return None
    return span_text(abs(day_gap(picked[0], picked[1])), (unit_m.group(1) or "day").lower())


def _date_text(ymd: Ymd) -> str:
    """A date as ``dates.find_day_dates`` reads it back: ISO with a year, else "February 5"."""
    if ymd[0] is None:
        return f"{date(2000, ymd[1], ymd[2]):%B} {ymd[2]}"
    return date(ymd[0], ymd[1], ymd[2]).isoformat()


def span(question: str, evidence: Sequence[str]) -> tuple[str, str]:
    """The two event dates :func:`interval_dates` picks, as text; empty when it picks none."""
    picked = interval_dates(question, evidence)
    return (_date_text(picked[0]), _date_text(picked[1])) if picked else ("", "")


def _narrow(question: str, unit: Unit) -> str:
    """The span of ``unit`` the question type asks for, or its sentence."""
    ql, sentence = question.lower(), unit.text
    if re.match(r"\s*(when|what (date|day|month|year|time))\b", ql):
        if unit.spans:
            return unit.spans[0]
        y = re.search(r"\b(19|20)\d{2}\b", sentence)
        if y:
            return y.group(0)
    if re.match(r"\s*how (many|much|often)\b", ql):
        m = re.search(r"(?<![\w.])(\$?\d[\d,.]*|" + "|".join(NUMBER_WORDS) + r")\b(\s+[a-z]+)?", sentence, re.I)
        if m:
            return m.group(0).strip()
    if re.match(r"\s*(who|whom)\b", ql):
        qn = set(person_names(question))
        names = [n for n in person_names(sentence) if n not in qn]
        if names:
            return " and ".join(names[:3])
    return sentence.strip()


def by_overlap(question: str, texts: Sequence[str]) -> list[tuple[int, int]]:
    """(content tokens shared with the question, position) for every text, most shared first, ties by
    position."""
    qt = toks(question)
    return sorted(((len(qt & toks(t)), i) for i, t in enumerate(texts)), key=lambda x: (-x[0], x[1]))


def answer(question: str, evidence: Sequence[str]) -> str:
    """Extractive answer: a computed interval, else the best-overlap sentence (narrowed by type)."""
    texts = [e for e in evidence if e and e.strip()]
    if not texts:
        return NOT_FOUND
    computed = interval_answer(question, texts)
    if computed:
        return computed
    found = units(texts)
    shared, best = by_overlap(question, [u.text for u in found])[0]
    return _narrow(question, found[best]) if shared else NOT_FOUND


# -- judge -------------------------------------------------------------------------------------
def f1(gold: str, generated: str) -> tuple[float, float]:
    """(token F1, gold-token recall) over stemmed content tokens."""
    g, p = tok_list(gold), tok_list(generated)
    if not g or not p:
        return 0.0, 0.0
    common = sum(min(g.count(t), p.count(t)) for t in set(g))
    if common == 0:
        return 0.0, 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec), rec


UNDECIDED = "UNDECIDED"  # the offline judge cannot tell; never counted as CORRECT or WRONG
_ALSO = re.compile(r"\b(?:is|are)\s+also\s+(?:acceptable|correct|accepted|fine)\b|\balso\s+acceptable\b", re.I)
_PAREN = re.compile(r"\s*[(\[][^)\]]*[)\]]")
_NEGATION = re.compile(r"\b(no|not|never|nothing|none|neither|nor|n't|cannot|didn't|doesn't|don't|isn't|wasn't)\b", re.I)
_POLAR = re.compile(r"^\s*(yes|no)\b", re.I)
_ABSTAIN = re.compile(r"\b(not mentioned|did not mention|didn't mention|no information|not (?:stated|specified|"
                      r"known)|unknown|cannot be determined|not in the (?:conversation|evidence))\b", re.I)
_RELATIVE = re.compile(
    r"\b(?:the\s+)?(day|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"\s+(before|after|of)\s*$", re.I)
_AROUND = re.compile(r"\b(around|about|approximately|circa|roughly|early|late|mid|last|next|ago|before|after|"
                     r"since|until|week|weekend|month|year)\b", re.I)
_MON = r"(" + "|".join(sorted(MONTH_NUMBER, key=len, reverse=True)) + r")\.?"
_MONTH_YEAR = re.compile(rf"\b{_MON}\s*,?\s+(\d{{4}})\b", re.I)
_YEAR = re.compile(r"(?<!\d)(19\d{2}|20\d{2})(?!\d)")
_DURATION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?|" + "|".join(k for k in NUMBER_WORDS if " " not in k)
                       + r"|an?|half an?)\s+(day|week|month|year|hour|minute)s?\b", re.I)
_DUR_DAYS = {"day": 1.0, "week": 7.0, "month": 30.44, "year": 365.25, "hour": 1 / 24, "minute": 1 / 1440}


def alternatives(gold: str) -> list[str]:
    """The answers a gold text accepts: its first statement, plus every "X is also acceptable" one;
    a parenthetical explanation ("11 days (ordered on March 3rd, ...)") is not part of an answer."""
    parts = [s for s in re.split(r"(?<=[.;])\s+", gold.strip()) if s.strip()] or [gold]
    main = [p for p in parts if not _ALSO.search(p)]
    also = [_ALSO.sub("", p) for p in parts if _ALSO.search(p)]
    out = [" ".join(main) if main else gold, *also] if also else [gold]
    cores = [_PAREN.sub("", a).strip(" .;,") for a in out]
    return list(dict.fromkeys(c for c in cores if c)) or [gold.strip()]


def _norm(text: str) -> str:
    """Lower case, number words as digits, ordinals and punctuation stripped, one space."""
    low = re.sub(r"[^\w\s$%]", " ", text.lower().replace("'", ""))
    out = []
    for w in low.split():
        w = re.sub(r"^(\d+)(st|nd|rd|th)$", r"\1", w)
        out.append(str(NUMBER_WORDS[w]) if w in NUMBER_WORDS else w)
    return " ".join(w for w in out if w not in {"a", "an", "the"})


def durations(text: str) -> set[float]:
    """Every "N unit" span in ``text`` in days ("a week" -> 7.0, "two months" -> 60.88)."""
    out = set()
    for m in _DURATION.finditer(text):
        n = m.group(1).lower()
        value = 0.5 if n.startswith("half") else 1.0 if n in {"a", "an"} else float(NUMBER_WORDS.get(n, n))
        out.add(round(value * _DUR_DAYS[m.group(2).lower()], 1))
    return out


def _same_duration(a: set[float], b: set[float]) -> bool:
    """Durations equal up to calendar rounding (a month is 28-31 days, a year 365 or 366)."""
    return any(abs(x - y) <= max(0.5, 0.04 * max(x, y)) for x in a for y in b)


def _full_dates(text: str) -> set[Ymd]:
    return {ymd for _, ymd, _ in find_day_dates(text)}


def _months(text: str) -> set[tuple[int, int]]:
    """(year, month) for every "May 2023" written without a day."""
    found = set()
    for m in _MONTH_YEAR.finditer(text):
        before = text[max(0, m.start() - 4): m.start()]
        if not re.search(r"\d\s*(?:st|nd|rd|th)?\s*(?:of\s*)?$", before):
            found.add((int(m.group(2)), MONTH_NUMBER[m.group(1).lower().rstrip(".")[:3]]))
    return found


def _same_day(g: Ymd, p: Ymd) -> bool:
    return g[1:] == p[1:] and (g[0] is None or p[0] is None or g[0] == p[0])


def _relative(gold: str) -> tuple[str, str, Ymd] | None:
    """("sunday", "before", 2023-05-25) for "The sunday before 25 May 2023"; None for a plain date."""
    found = find_day_dates(gold)
    if len(found) != 1:
        return None
    pos, ymd, _ = found[0]
    m = _RELATIVE.search(gold[:pos])
    return (m.group(1).lower(), m.group(2).lower(), ymd) if m and ymd[0] else None


def _resolve(unit: str, direction: str, anchor: Ymd) -> tuple[date, date]:
    """The day range a relative date names: "the day before D" is D-1; "the sunday before D" the last
    Sunday before D; "the week before D" the 7 days before it, the weekend the last Saturday-Sunday
    before it; "the week of D" D's Monday-to-Sunday week; "the month/year before D" that calendar unit."""
    from datetime import timedelta

    d = date(anchor[0] or 2000, anchor[1], anchor[2])
    step = -1 if direction == "before" else 1
    if unit == "day":
        x = d + timedelta(days=step) if direction != "of" else d
        return x, x
    if unit in WEEKDAYS:
        x = d + timedelta(days=step)
        while x.weekday() != WEEKDAYS.index(unit):
            x += timedelta(days=step)
        return x, x
    if unit == "week":
        if direction == "of":
            start = d - timedelta(days=d.weekday())
            return start, start + timedelta(days=6)
        return (d - timedelta(days=7), d - timedelta(days=1)) if step < 0 else (d + timedelta(days=1),
                                                                                d + timedelta(days=7))
    if unit == "weekend":
        x = d + timedelta(days=step)
        while x.weekday() != (6 if step < 0 else 5):
            x += timedelta(days=step)
        return (x - timedelta(days=1), x) if step < 0 else (x, x + timedelta(days=1))
    if unit == "month":
        y, mth = (d.year, d.month + step) if direction != "of" else (d.year, d.month)
        y, mth = (y - 1, 12) if mth == 0 else (y + 1, 1) if mth == 13 else (y, mth)
        nxt = date(y + (mth == 12), mth % 12 + 1, 1)
        return date(y, mth, 1), date.fromordinal(nxt.toordinal() - 1)
    y = d.year + (step if direction != "of" else 0)
    return date(y, 1, 1), date(y, 12, 31)


def _date_verdict(gold: str, generated: str) -> tuple[str, str] | None:
    """CORRECT / WRONG / UNDECIDED when the gold answer is a date (a day, a month, a year, or a day
    relative to a date), with the reason; None when the gold names no date."""
    gd, pd = _full_dates(gold), _full_dates(generated)
    gm, pm = _months(gold), _months(generated) | {(y, m) for y, m, _ in pd if y}
    rel = _relative(gold)
    if rel:
        lo, hi = _resolve(*rel)
        prel = _relative(generated)
        if prel:
            plo, phi = _resolve(*prel)
            if (plo, phi) == (lo, hi):
                return "CORRECT", "Both name the same relative date."
            if plo <= hi and lo <= phi:
                return UNDECIDED, "Undecided offline: the two relative dates overlap but differ."
            return "WRONG", "The relative dates do not overlap."
        days = [date(y or rel[2][0], m, d) for y, m, d in pd]
        if not days and pm:
            inside = any((lo.year, lo.month) <= ym <= (hi.year, hi.month) for ym in pm)
            return (UNDECIDED, "Undecided offline: the month given holds the gold's relative date, the day "
                    "is not given.") if inside else ("WRONG", "The month given does not hold the gold's date.")
        if any(lo <= x <= hi for x in days):
            return ("CORRECT", f"The date given falls on '{rel[0]} {rel[1]}' the gold's date ({lo:%d %B %Y}"
                    + (f" to {hi:%d %B %Y}" if hi != lo else "") + ").")
        if days:
            return "WRONG", f"The date given is outside '{rel[0]} {rel[1]}' the gold's date ({lo:%d %B %Y}" + (
                f" to {hi:%d %B %Y}" if hi != lo else "") + ")."
        return None
    prel = _relative(generated)
    if gd and prel:
        plo, phi = _resolve(*prel)
        inside = [date(y or plo.year, m, d) for y, m, d in gd if plo <= date(y or plo.year, m, d) <= phi]
        if inside and plo == phi:
            return "CORRECT", f"The answer's relative date is the gold date ({plo:%d %B %Y})."
        if inside:
            return UNDECIDED, "Undecided offline: the answer names a range of days that holds the gold date."
        return "WRONG", "The answer's relative date is not the gold date."
    if gd:
        if any(_same_day(g, p) for g in gd for p in pd):
            return "CORRECT", "Both name the same date."
        if pd:
            near = _AROUND.search(_PAREN.sub("", gold))
            if near:
                return UNDECIDED, f"The gold date is approximate ('{near.group(0)}'); the dates differ."
            return "WRONG", "The dates differ."
        if pm and not any((g[0], g[1]) in pm for g in gd if g[0]):
            return "WRONG", "The month given is not the gold date's month."
        return None
    if gm:
        if gm & pm:
            return "CORRECT", "Both name the same month."
        if pm:
            return "WRONG", "The months differ."
        return None
    gy = set(_YEAR.findall(gold))
    if gy and len(_norm(gold).split()) <= 3:
        py = set(_YEAR.findall(generated)) | {str(y) for y, _ in pm}
        if gy & py:
            return "CORRECT", "Both name the same year."
        if py:
            return "WRONG", "The years differ."
    return None


def _numbers_plain(text: str) -> set[int]:
    """Numbers that are not part of a written date or a year."""
    rest = text
    for _, _, span_text_ in find_day_dates(text):
        rest = rest.replace(span_text_, " ")
    rest = _YEAR.sub(" ", rest)
    return numbers(rest)


def _spaced(text: str) -> str:
    """"14September, 2022" as "14 September, 2022" (an ordinal suffix stays: "14th")."""
    return re.sub(r"(\d)(?!(?:st|nd|rd|th)\b)([A-Za-z]{3,})", r"\1 \2", text)


def _polarity(text: str) -> str:
    m = _POLAR.match(text)
    return m.group(1).lower() if m else ""


def judge_one(gold: str, generated: str) -> tuple[str, str]:
    """The verdict of one accepted answer ``gold`` (see :func:`judge`)."""
    gpol, ppol = _polarity(gold), _polarity(generated)
    if gpol and ppol and gpol != ppol:
        return "WRONG", f"The gold answer says '{gpol}', the answer '{ppol}'."
    dated = _date_verdict(gold, generated)
    if dated and dated[0] != "CORRECT":
        return dated
    gn, pn = _numbers_plain(gold), _numbers_plain(generated)
    gdur, pdur = durations(gold), durations(generated)
    gt, pt = toks(gold), toks(generated)
    ng, np_ = _norm(gold), _norm(generated)
    negated = bool(_NEGATION.search(gold)) != bool(_NEGATION.search(generated))
    contained = bool(ng) and f" {ng} " in f" {np_} "
    if contained and not negated:
        return "CORRECT", "The answer contains the gold answer."
    if dated:
        return dated
    if gdur and pdur:
        if _same_duration(gdur, pdur):
            return "CORRECT", "Both give the same length of time."
        return "WRONG", "The lengths of time differ."
    if gn and pn and not gn & pn:
        return "WRONG", "The numbers differ."
    rest = gt - {str(n) for n in gn}
    if gn and gn & pn and not rest - pt:
        return "CORRECT", "The same number is given."
    if gt and gt <= pt and not negated:
        return "CORRECT", "The answer contains every content word of the gold answer."
    if gn and not pn and len(rest) <= 1:
        return "WRONG", "The gold answer is a number and the answer gives none."
    if gpol and not rest and ppol == gpol:
        return "CORRECT", f"Both answer '{gpol}'."
    shared = gt & pt
    if not shared and not (gn & pn) and gt and pt:
        return "WRONG", "The answer shares no content word, number or date with the gold answer."
    if negated and gt <= pt:
        return UNDECIDED, "Undecided offline: the same words, but only one of the two is negated."
    score, _ = f1(gold, generated)
    return UNDECIDED, (f"Undecided offline: the answers share {len(shared)} of the gold's {len(gt)} content "
                       f"word(s) (F1 {score:.2f}); a paraphrase needs a model.")


def judge(question: str, gold: str, generated: str) -> tuple[str, str]:
    """("CORRECT" | "WRONG" | "UNDECIDED", one-sentence reason). Decides only what rules can:

    * CORRECT: the answer contains an accepted gold answer (normalised: case, punctuation, articles,
      number words), or every content word of it; or names the same date, month, year, number or
      length of time ("a week" = "7 days"); or falls within a relative gold date ("the sunday before
      25 May 2023").
    * WRONG: no answer; the opposite yes / no; a different date, number or length of time; nothing in
      common with the gold answer (no content word, number or date).
    * UNDECIDED ("undecided offline") otherwise, for example a partial overlap that may be a paraphrase.

    A gold text with "X is also acceptable" accepts X too; a parenthetical explanation in the gold is
    not needed in the answer. The verdict of the best accepted answer is returned (CORRECT over
    UNDECIDED over WRONG).
    """
    gen, gold = _spaced(generated.strip()), _spaced(gold)
    if not gen or gen == NOT_FOUND:
        if _ABSTAIN.search(gold):
            return "CORRECT", "Both say the conversation does not give this."
        return "WRONG", "The generated answer gives no answer."
    verdicts = [judge_one(alt, gen) for alt in alternatives(gold)]
    rank = {"CORRECT": 0, UNDECIDED: 1, "WRONG": 2}
    label, reason = min(verdicts, key=lambda v: rank[v[0]])
    if len(verdicts) > 1 and label == "CORRECT":
        reason = reason.rstrip(".") + f" (one of the {len(verdicts)} answers the gold accepts)."
    return label, reason


# -- suff --------------------------------------------------------------------------------------
def answer_supported(question: str, reference: str, evidence: Sequence[str]) -> bool:
    if not evidence:
        return False
    computed = interval_answer(question, evidence)
    if computed is not None and SPAN_UNIT.search(question):
        return judge(question, reference, computed)[0] == "CORRECT"
    ref = toks(reference)
    if not ref:
        return True
    ev = set().union(*(toks(e) for e in evidence))
    ref_dates = {(m, d) for _, (_, m, d), _ in find_day_dates(reference)}
    if ref_dates:
        ev_dates = {(m, d) for u in units(evidence) for (_, m, d) in u.dates}
        if not ref_dates <= ev_dates:
            return False
    return len(ref & ev) >= max(1, math.ceil(0.6 * len(ref)))


def suff(question: str, reference: str, evidence: Sequence[str]) -> tuple[str, str]:
    """("sufficient" | "insufficient" | "uncertain", reason) by requirement coverage."""
    if not evidence:
        return "insufficient", "No evidence."
    reqs = decompose(question)
    cov = coverage(reqs, evidence)
    missing = [r for r, c in zip(reqs, cov, strict=True) if not c]
    supported = answer_supported(question, reference, evidence)
    if supported and not missing:
        return "sufficient", "Every requirement is covered and the answer follows."
    if not supported and missing:
        return "insufficient", f"Missing: {missing[0]}."
    if supported:
        return "uncertain", f"The answer appears but '{missing[0]}' is not clearly covered."
    return "uncertain", "The requirements look covered but the answer does not follow from the text."


# -- lme_judge (LongMemEval's yes/no judge) ----------------------------------------------------
_NORM = re.compile(r"[^a-z0-9 ]+")
_ABSTAINS = re.compile(r"\b(not mentioned|no (?:information|mention|record)|(?:does|do|did) not (?:say|mention|"
                       r"specify|state)|not (?:specified|stated|provided|enough information)|unanswerable|"
                       r"cannot (?:be )?(?:determine|answer)|unknown)\b", re.I)


def _norm(text: str) -> str:
    return " ".join(_NORM.sub(" ", text.lower()).split())


def lme_judge(kind: str, answer: str, response: str) -> tuple[str, str]:
    """("yes" | "no" | "undecided", reason) for LongMemEval's judge, deciding only what text rules can:
    the normalised gold contained in the response, or (a gold that is a number, "3" or "3 days") the
    same number (off by one allowed for temporal-reasoning) -> yes; no answer at all, or a single
    different number -> no; an abstention -> yes when the response says the information is missing;
    a preference rubric, and everything else -> undecided (counted in no mean)."""
    if kind == "single-session-preference":
        return "undecided", "A rubric needs a reader."
    said = response.strip()
    if kind == "abstention":
        if said == NOT_FOUND or _ABSTAINS.search(said):
            return "yes", "The response says the information is not there."
        return "undecided", "The response may or may not decline."
    if not said or said == NOT_FOUND:
        return "no", "The response gives no answer."
    gold, got = _norm(answer), _norm(said)
    if gold and re.search(rf"(?<![a-z0-9]){re.escape(gold)}(?![a-z0-9])", got):
        return "yes", "The response contains the answer."
    gn, rn = numbers(answer), numbers(said)
    if len(gn) == 1 and len(toks(answer) - {str(n) for n in gn}) <= 1:
        slack = 1 if kind == "temporal-reasoning" else 0
        (g,) = gn
        if any(abs(g - n) <= slack for n in rn):
            return "yes", "The same number is given."
        if len(rn) == 1:
            return "no", "A different number is given."
    return "undecided", "Text rules cannot tell."


# -- the backend -------------------------------------------------------------------------------
class RulesLLM:
    """Serves every role from the functions above; replies with the JSON each role's prompt asks."""

    provider = "rules"
    model = f"rules-v{RULES_VERSION}"

    @property
    def label(self) -> str:
        return NAME

    def __repr__(self) -> str:
        return f"RulesLLM({self.model})"

    def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            data = json.loads(request.payload) if request.payload else {}
        except json.JSONDecodeError:
            raise LLMCallFailed(f"{NAME}: request payload is not JSON") from None
        handler = _HANDLERS.get(request.role)
        if handler is None:
            raise LLMCallFailed(f"{NAME}: no rule for role '{request.role}'")
        try:
            out = handler(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise LLMCallFailed(f"{NAME}: {request.role}: {exc}") from None
        text = json.dumps(out, ensure_ascii=False)
        return LLMResponse(text, len(request.prompt.split()), len(text.split()))


def _select(d: dict) -> dict:
    ids, cov = select(d["question"], [tuple(p) for p in d["pool"]], d.get("requirements") or ())
    return {"ids": ids, "coverage": {str(k): v for k, v in cov.items()}}


def _suff(d: dict) -> dict:
    label, reason = suff(d["question"], d["reference"], d["evidence"])
    return {"reason": reason, "label": label}


def _judge(d: dict) -> dict:
    label, reason = judge(d["question"], d["gold"], d["generated"])
    return {"reason": reason, "label": label}


_HANDLERS = {
    "decompose": lambda d: {"requirements": decompose(d["question"])},
    "select": _select,
    "tool": lambda d: {"tool": tool(d["question"], d["evidence"], d["tools"])},
    "answer": lambda d: {"answer": answer(d["question"], d["evidence"])},
    "span": lambda d: dict(zip(("earlier", "later"), span(d["question"], d["evidence"]), strict=True)),
    "judge": _judge,
    "suff": _suff,
    "adjudicate": _suff,
    "lme_judge": lambda d: dict(zip(("label", "reason"), lme_judge(d["kind"], d["answer"], d["response"]),
                                    strict=True)),
}
