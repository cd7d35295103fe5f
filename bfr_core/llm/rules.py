"""The "offline rules" backend: deterministic heuristics for every LLM role, no model, no network.

Covers, one pure function per role (each usable on its own), plus :class:`RulesLLM`, which serves
them through the same :class:`~bfr_core.llm.base.LLM` call as a real model (it reads the request's
``payload`` and replies with the JSON the role's prompt asks for, so caching, call logs and parsing
are exercised identically):

* ``decompose``  the offline decomposer's requirements (``rules_requirements``: clauses, bridges,
  conjuncts, which-first, latest, who / where / when slots; for interval questions ("how many days ...
  after/before/since/between") one requirement per temporal endpoint) as the texts words can check.
* ``select``     greedy requirement cover over the pool (token overlap with a small synonym table).
* ``tool``       stop when covered; entity view for an unseen name; session view to find a partner
  turn; else text.
* ``answer``     extractive: the evidence sentence with the highest token overlap, narrowed to a
  date / number / name / place span by question type; interval questions compute the day count
  between the two dates the evidence gives ("February 5th" -> "February 10th" = "5 days"); a choice
  question ("..., Dana or Ana?") is answered with the option the evidence supports (:func:`choose`),
  and a "now" question (``lexicon.LATEST_CUE``) takes the latest of equally matching sentences.
* ``span``       the two event dates ``answer`` would subtract on an interval question.
* ``judge``      CORRECT when the gold's numbers and dates agree and token F1 or gold recall >= 0.5.
* ``lme_judge``  LongMemEval's yes/no judge where text rules can decide (the gold contained in the
  response, the same number); "undecided" otherwise (preference rubrics always).
* ``suff``       sufficient when every requirement is covered and the evidence states every informative
  word of the reference answer (or, for intervals, computes it); insufficient when neither; uncertain
  otherwise, and whenever words cannot tell (a yes / no reference, a long one).
* ``antecedent`` always undecided (an empty statement): what a remark refers back to is not a matter
  of its words.

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
    SPAN_UNIT,
    UNDATED,
    Ymd,
    day_gap,
    find_day_dates,
    span_text,
)
from bfr_core.lexicon import LATEST_CUE, NOT_NAME_CAPITALISED, NUMBER_WORDS
from bfr_core.llm.base import LLMCallFailed, LLMRequest, LLMResponse
from bfr_core.llm.rules_forms import LABEL, choices, strip_lead
from bfr_core.llm.rules_judges import judge, lme_judge
from bfr_core.llm.rules_requirements import KINDS, Requirement, decompose_rules, later_first
from bfr_core.llm.rules_tokens import NOT_FOUND, toks
from bfr_core.sentences import sentences
from bfr_core.text import tokenize

RULES_VERSION = "9"
NAME = "offline rules"

# Evidence is often rendered with its session date first: "(05 February 2023) user: ...".
_ANCHOR = re.compile(r"^\s*[(\[]([^)\]]{4,40})[)\]]\s*")
# ... and its speaker next ("user: ", "Caroline: "): who said it, not what was said.
_SPEAKER = re.compile(r"^[^:\n]{1,40}:(\s+|$)")


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
        body = snippet[m.end():] if anchor or (m and m.group(1) == UNDATED) else snippet
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


AHEAD_DAYS = 31  # how far after its session a year-less date may lie (plans are mostly for the weeks ahead)


def _with_year(ymd: Ymd, anchor: Ymd | None) -> Ymd:
    """A year-less date said in a dated session: the latest year in which it falls no more than a month
    (:data:`AHEAD_DAYS`) after the session, since people mostly talk about the past ("March 20" said on
    10 February 2023 is 20 March 2022; "January 3" said on 28 December 2023 is 3 January 2024; a
    February 29 is in a leap year)."""
    if ymd[0] is not None or anchor is None or anchor[0] is None:
        return ymd
    limit = date(anchor[0], anchor[1], anchor[2]).toordinal() + AHEAD_DAYS
    for year in range(anchor[0] + 1, anchor[0] - 9, -1):  # a February 29 may be up to 8 years back
        try:
            if date(year, ymd[1], ymd[2]).toordinal() <= limit:
                return (year, ymd[1], ymd[2])
        except ValueError:  # no such day that year
            continue
    return ymd


def clean_question(q: str) -> str:
    return re.sub(r"\s+", " ", q.strip()).rstrip("?.! ").strip()


# -- decompose ---------------------------------------------------------------------------------
DATE_KINDS = frozenset({"temporal", "time"})  # parts the rules cover only with a dated text ("date: ...")
WORD_KINDS = frozenset(KINDS) - {"entity", "constraint"}  # requirements the rules check by their words
_LABELLED = re.compile(rf"^\s*(?:date|{'|'.join(LABEL.values())}):\s*", re.I)


def decompose(question: str) -> list[str]:
    """1-5 requirement texts for ``question``: the offline decomposer's requirements
    (``rules_requirements.decompose_rules``) that words can check, worded by :func:`_worded`: a date
    asked for as "date: ..." (an interval's two endpoints, earlier first; a "when" slot), a typed slot as
    "who: ...". Names and date constraints are left out (Stage I checks them by speaker and session
    date, and the other texts keep the names); the question itself when nothing is left."""
    q = clean_question(question)
    if not q:
        return []
    reqs = [_worded(r, question) for r in decompose_rules(question) if r.kind in WORD_KINDS]
    if later_first(question) and len(reqs) > 1:  # an interval's endpoints, earlier first
        reqs[:2] = reqs[1::-1]
    out = list(dict.fromkeys(r for r in reqs if toks(_LABELLED.sub("", r))))
    return out[:5] or [q]


def _from_event(text: str, terms: Sequence[str]) -> str:
    """``text`` from its first word that holds a term or a name on: the question's scaffold before an
    event ("days did it take for my new camera strap to arrive" -> "new camera strap to arrive")."""
    ws, wanted = text.split(), set(terms)
    start = next((i for i, w in enumerate(ws) if w[:1].isupper() or wanted & set(tokenize(w, stop=True, stemmed=True))), 0)
    return " ".join(ws[start:])


def _worded(req: Requirement, question: str) -> str:
    """A requirement as the rules read it: its text ("date: ..." for a date asked for), then in
    parentheses the question's words behind the terms its text lacks (what a pronoun-only endpoint
    borrowed from the other clause: "I ordered it" -> "date: I ordered it (new remote shutter release)")."""
    text = req.text
    if req.kind in DATE_KINDS:
        text = f"date: {_from_event(strip_lead(_LABELLED.sub('', text)), req.terms)}"
    borrowed = set(req.terms) - set(tokenize(req.text, stop=True, stemmed=True))
    extra = dict.fromkeys(w.strip(",.?!;:") for w in question.split()
                          if borrowed & set(tokenize(w, stop=True, stemmed=True)))
    return f"{text} ({' '.join(extra)})" if extra else text


# -- coverage ----------------------------------------------------------------------------------
def _req_tokens(reqs: Sequence[str]) -> list[tuple[set[str], set[str], bool]]:
    """Per requirement: its tokens, the tokens no sibling requirement has, whether it asks a date."""
    sets = [toks(_LABELLED.sub("", r)) for r in reqs]
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
    if len(reqs) == 2 and all(r.startswith("date:") for r in reqs):  # the interval's two endpoints
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


def _narrow(question: str, unit: Unit, said: str | None = None) -> str:
    """The span of ``unit`` the question type asks for, or its sentence (``said``: the sentence without its
    speaker; a "who" question still reads the speaker's name)."""
    ql, sentence = question.lower(), unit.text if said is None else said
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
        names = [n for n in person_names(unit.text) if n not in qn]
        if names:
            return " and ".join(names[:3])
    return sentence.strip()


def answer(question: str, evidence: Sequence[str]) -> str:
    """Extractive answer: a computed interval, else the best-overlap sentence (narrowed by type)."""
    texts = [e for e in evidence if e and e.strip()]
    if not texts:
        return NOT_FOUND
    computed = interval_answer(question, texts)
    if computed:
        return computed
    found = units(texts)
    qt = toks(question)
    picked = choose(question, found)
    if picked:
        return picked
    parts = [_said(u) for u in found]  # (the speaker's prefix, what was said)
    shared = [len(qt & toks(said)) for _, said in parts]
    newest = LATEST_CUE.search(question) is not None  # "now", "currently": the latest of equal matches

    def key(i: int) -> tuple[int, int, int, int]:  # the speaker's name only breaks ties, after recency when asked
        return (-shared[i], -_day(found[i]) if newest else 0, -len(qt & toks(parts[i][0])) if parts[i][0] else 0, i)

    ranked = sorted(range(len(found)), key=key)
    best = next((i for i in ranked if parts[i][1]), None)  # a sentence with words beside its speaker
    if best is None or not shared[best]:
        return NOT_FOUND
    return _narrow(question, found[best], parts[best][1])


def _day(unit: Unit) -> int:
    """The unit's latest date as a sortable number (0 when it has none; a year-less date sorts in year 0)."""
    return max(((y or 0) * 10000 + m * 100 + d for y, m, d in unit.dates), default=0)


_EARLIEST = re.compile(r"\b(?:first|earlier|sooner)\b", re.I)  # a choice of which came first


def choose(question: str, found: Sequence[Unit]) -> str | None:
    """A choice question's option (``rules_forms.choices``, as written) that the evidence supports: for a
    which-first question (:data:`_EARLIEST`) the one whose mention is dated earliest (every option dated,
    else None); otherwise the one mentioned (its words in a sentence, the speaker's name included) beside
    most of the question's other words, and for a "now" question (``LATEST_CUE``) the one mentioned latest
    first. None without options, when an option has no content word, or on a tie."""
    opts = choices(question)
    words = [toks(o) for o in opts]
    if not opts or not all(words):
        return None
    mentions = [[u for u in found if w <= toks(u.text)] for w in words]
    if _EARLIEST.search(question):  # "Which came first, A or B?", "Did I meet Tom or Anna first?"
        dated = [[_day(u) for u in m if u.dates] for m in mentions]
        if not all(dated):
            return None
        score: list[tuple[int, ...]] = [(-min(d),) for d in dated]
    else:
        rest = toks(question) - set().union(*words)
        latest = LATEST_CUE.search(question) is not None
        score = [max(((_day(u) if latest else 0, 1 + len(rest & toks(u.text))) for u in m), default=(0, 0))
                 for m in mentions]
    best = max(score)
    return opts[score.index(best)] if best[-1] and score.count(best) == 1 else None


def _said(unit: Unit) -> tuple[str, str]:
    """``unit``'s sentence split into a leading "speaker: " and what was said (a name the question shares
    with the speaker only says who spoke: a tie-breaker, never the match, and not part of the answer)."""
    if not unit.turn.lstrip().startswith(unit.text):  # a later sentence of its snippet: no speaker before it
        return "", unit.text
    m = _SPEAKER.match(unit.text)
    return (m.group(0), unit.text[m.end():].strip()) if m else ("", unit.text)


# -- suff --------------------------------------------------------------------------------------
LONG_REFERENCE = 8  # informative words past which overlap cannot tell a stated answer from a topical set


def answer_supported(question: str, reference: str, evidence: Sequence[str]) -> bool | None:
    """Whether the evidence states the reference answer.

    True when it holds every informative word of the reference (a word the question does not already
    hold) and every day date it names, or, for an asked span, computes it or states it in one text;
    False when it holds under 60 % of those words or misses a date; None (words cannot tell) when in
    between, when the reference adds no word to the question (a yes / no), or when it is longer than
    :data:`LONG_REFERENCE` informative words."""
    if not evidence:
        return False
    if SPAN_UNIT.search(question):  # a span is computed from dates, or stated with its unit in one text
        computed = interval_answer(question, evidence)
        stated = [computed] if computed is not None else evidence
        return any(judge(question, reference, text)[0] == "CORRECT" for text in stated)
    ref_dates = {(m, d) for _, (_, m, d), _ in find_day_dates(reference)}
    if ref_dates:
        ev_dates = {(m, d) for u in units(evidence) for (_, m, d) in u.dates}
        if not ref_dates <= ev_dates:
            return False
    informative = toks(reference) - toks(question)
    if not informative or len(informative) > LONG_REFERENCE:
        return None
    held = len(informative & set().union(*(toks(e) for e in evidence)))
    if held == len(informative):
        return True
    return False if held < 0.6 * len(informative) else None


def suff(question: str, reference: str, evidence: Sequence[str]) -> tuple[str, str]:
    """("sufficient" | "insufficient" | "uncertain", reason) by requirement coverage and whether the
    evidence states the reference answer; uncertain whenever the words cannot tell."""
    if not evidence:
        return "insufficient", "No evidence."
    reqs = decompose(question)
    cov = coverage(reqs, evidence)
    missing = [r for r, c in zip(reqs, cov, strict=True) if not c]
    supported = answer_supported(question, reference, evidence)
    if supported and not missing:
        return "sufficient", "Every requirement is covered and the evidence states the answer."
    if supported is False and missing:
        return "insufficient", f"Missing: {missing[0]}."
    if supported is None:
        return "uncertain", "Whether the evidence states the answer cannot be told from its words."
    if supported:
        return "uncertain", f"The answer appears but '{missing[0]}' is not clearly covered."
    return "uncertain", "The requirements look covered but the answer does not follow from the text."


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
    "antecedent": lambda d: {"statement": ""},  # no rule can guess what a remark refers back to: undecided
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
