"""The offline rules' two answer judges, which decide only what they can and otherwise say so.

* :func:`judge` (the paper's Mem0-style role): CORRECT when the answer states the gold (normalised
  containment, the same numbers, dates, months, years and lengths of time, an "also acceptable"
  alternative), WRONG when it clearly states something else, else :data:`UNDECIDED` ("undecided
  offline"); always with a reason.
* :func:`lme_judge` (LongMemEval's yes/no judge): "yes" / "no" only for normalised containment, a
  matching number (off by one allowed for temporal-reasoning) or a stated abstention, else "undecided".

Does not cover: paraphrase, preference rubrics (undecided), the model judges (``roles``).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from bfr_core.dates import MEAN_UNIT_DAYS, MONTH_NUMBER, WEEKDAYS, Ymd, find_day_dates
from bfr_core.lexicon import NUMBER_WORDS
from bfr_core.llm.rules_tokens import NOT_FOUND, numbers, tok_list, toks
from bfr_core.text import stem


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
_POLAR = re.compile(r"^\s*(?:(?:most\s+)?(?:likely|probably|possibly|perhaps|maybe|definitely|certainly)\s*,?\s+)?"
                    r"(yes|no|not)\b", re.I)  # "Yes", "Likely no", "Probably not"
_ABSTAIN = re.compile(r"\b(not mentioned|did not mention|didn't mention|no information|not (?:stated|specified|"
                      r"known)|unknown|cannot be determined|not in the (?:conversation|evidence))\b", re.I)
_RELATIVE = re.compile(
    r"\b(?:the\s+)?(day|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"\s+(before|after|of)\s*$", re.I)
_AROUND = re.compile(r"\b(around|about|approximately|circa|roughly|early|late|mid|last|next|ago|before|after|"
                     r"since|until|week|weekend|month|year)\b", re.I)
_MON = r"(" + "|".join(sorted(MONTH_NUMBER, key=len, reverse=True)) + r")\.?"
_MONTH_YEAR = re.compile(rf"\b{_MON}\s*[,.]?\s*(\d{{4}})\b", re.I)  # "May 2023", "May, 2023", "April.2023"
_SEASON = re.compile(r"\b(spring|summer|fall|autumn|winter)\b", re.I)
_MONTH_NAME = re.compile(rf"\b{_MON}\b", re.I)
_YEAR = re.compile(r"(?<!\d)(19\d{2}|20\d{2})(?!\d)")
_DURATION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?|" + "|".join(k for k in NUMBER_WORDS if " " not in k)
                       + r"|an?|half an?)\s+(day|week|month|year|hour|minute)s?\b", re.I)
# Hedging and generalising words: an answer that uses one and states only part of the gold is vaguer than it.
_VAGUE = re.compile(r"\b(something|some|various|several|certain|related|different|stuff|things?|items?|sometime|"
                    r"around|approximately|roughly|about|maybe|possibly|perhaps|likely|probably|generally|general|"
                    r"kind of|sort of|type of|a few|a number of|many|lots?|recently|a while|early|mid|late|"
                    r"spring|summer|fall|autumn|winter|season)\b", re.I)
COVER_CORRECT = 2 / 3  # share of the gold's informative words an answer must state to be CORRECT
SHORT_ANSWER = 4  # informative words up to which an answer with words of its own is a substitution
_DUR_DAYS = {**MEAN_UNIT_DAYS, "hour": 1 / 24, "minute": 1 / 1440}  # a stated length of time, in days


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
            return ("WRONG", "Vaguer than the gold: the answer gives a month where the gold names a day or a "
                    "week.") if inside else ("WRONG", "The month given does not hold the gold's date.")
        if not days and _SEASON.search(generated):
            return "WRONG", "Vaguer than the gold: the answer gives a season where the gold names a day or a week."
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
        if (pm or _SEASON.search(generated)) and not _AROUND.search(_PAREN.sub("", gold)):
            return "WRONG", "Vaguer than the gold: the answer gives a month or a season where the gold names a day."
        return None
    if gm:
        if gm & pm:
            return "CORRECT", "Both name the same month."
        if pm:
            return "WRONG", "The months differ."
        if _SEASON.search(generated) or (_YEAR.search(generated) and not _MONTH_NAME.search(generated)):
            return "WRONG", "Vaguer than the gold: the answer gives a season or a year where the gold names a month."
        return None
    gy = set(_YEAR.findall(gold))
    if gy and len(_norm(gold).split()) <= 3:
        py = set(_YEAR.findall(generated)) | {str(y) for y, _ in pm}
        gs, ps = {m.lower() for m in _SEASON.findall(gold)}, {m.lower() for m in _SEASON.findall(generated)}
        if gy & py and gs and ps and not gs & ps:
            return "WRONG", "The seasons differ."
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
    return ("no" if m.group(1).lower() == "not" else m.group(1).lower()) if m else ""


def judge_one(gold: str, generated: str, question: str = "") -> tuple[str, str]:
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
    return _overlap_verdict(gold, generated, question)


def _stems(text: str) -> set[str]:
    return {stem(w) for w in toks(text)}


def _abbreviates(a: str, b: str) -> bool:
    """One word is the other cut short ("trans" / "transgender"), at least four letters of it."""
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)


def _overlap_verdict(gold: str, generated: str, question: str) -> tuple[str, str]:
    """A partial overlap, decided on the gold's informative words (its content words the question does
    not already say, stemmed): CORRECT when the answer covers at least :data:`COVER_CORRECT` of them;
    WRONG when it covers none, when it hedges or generalises (:data:`_VAGUE`), or when a short answer
    (at most :data:`SHORT_ANSWER` informative words) brings words of its own in place of the gold's
    (a substitution: "point guard" for "shooting guard"); else undecided. A word cut short stands for
    the word (:func:`_abbreviates`)."""
    g, q, p = _stems(gold), _stems(question), _stems(generated)
    informative = (g - q) or g
    covered = {w for w in informative if w in p or any(_abbreviates(w, x) for x in p)}
    cover = len(covered) / len(informative) if informative else 0.0
    share = f"{len(covered)} of the gold's {len(informative)} informative word(s)"
    if cover >= COVER_CORRECT:
        return "CORRECT", f"The answer states {share}."
    if not covered:
        return "WRONG", "The answer states none of the gold's informative words."
    vague = _VAGUE.search(generated)
    if vague:
        return "WRONG", f"Vaguer than the gold ('{vague.group(0).lower()}'): the answer states only {share}."
    own = {w for w in p - g - q if not any(_abbreviates(x, w) for x in g)}
    if own and len(p - q) <= SHORT_ANSWER:
        return "WRONG", f"The answer states only {share} and puts words of its own in place of the rest."
    score, _ = f1(gold, generated)
    return UNDECIDED, (f"Undecided offline: the answer states {share} (F1 {score:.2f}); a paraphrase needs "
                       "a model.")


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
    verdicts = [judge_one(alt, gen, question) for alt in alternatives(gold)]
    rank = {"CORRECT": 0, UNDECIDED: 1, "WRONG": 2}
    label, reason = min(verdicts, key=lambda v: rank[v[0]])
    if len(verdicts) > 1 and label == "CORRECT":
        reason = reason.rstrip(".") + f" (one of the {len(verdicts)} answers the gold accepts)."
    return label, reason


# -- lme_judge (LongMemEval's yes/no judge) ----------------------------------------------------
_NORM = re.compile(r"[^a-z0-9 ]+")
_ABSTAINS = re.compile(r"\b(not mentioned|no (?:information|mention|record)|(?:does|do|did) not (?:say|mention|"
                       r"specify|state)|not (?:specified|stated|provided|enough information)|unanswerable|"
                       r"cannot (?:be )?(?:determine|answer)|unknown)\b", re.I)


def _plain(text: str) -> str:
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
    gold, got = _plain(answer), _plain(said)
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
