"""The LLM roles of the pipeline and of its evaluation, each with its prompt beside it.

Covers: ``decompose`` (question -> 1-5 requirements, Stage I's LLM path), ``select_subset``
(minimum covering subset of a candidate pool), ``choose_tool`` (next retrieval action), ``answer``
(the extractive answerer, Appendix O; on "how many days/weeks/... between two events" questions it
first asks ``span`` for the two event dates and subtracts them itself; opt-in: on time-span questions
over a large set it first asks ``focus`` which snippets state the facts), ``judge`` (the Mem0-style
CORRECT/WRONG judge with the paper's prompt, Appendix O) and ``suff_at_set`` (blinded LLM-Suff@Set:
two judges, an adjudicator on disagreement; Appendix M). Does not cover: metrics (``metrics.py``),
which records to judge.

Every role works with any :class:`~bfr_core.llm.base.LLM`, the "offline rules" backend included:
the request carries the rendered prompt for a model and the same inputs as JSON for the rules.
Prompts are short enough for a 1.5B local model and each has one worked JSON example. Replies are
repaired and validated; an unusable reply is re-asked once (``complete_json``); a call that still
fails raises :class:`~bfr_core.llm.base.LLMCallFailed`, which callers record and move past.

Blinding (Suff@Set): the judges see the question, the reference answer and numbered snippets only.
The function takes no ids, method, budget, system answer or gold ids, and :func:`anonymise` strips
record-id prefixes that a caller may have left inside snippet texts.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from bfr_core.llm.base import LLM, LLMCallFailed, LLMRequest
from bfr_core.llm.retry import complete_json
from bfr_core.llm.rules import day_gap, find_dates, span_text

log = logging.getLogger(__name__)

MAX_REQUIREMENTS = 5
SUFF_LABELS = ("sufficient", "insufficient", "uncertain")
JUDGE_LABELS = ("CORRECT", "WRONG")
TOOL_DESCRIPTIONS = {
    "text": "search all memories with the question text",
    "entity": "fetch memories that mention a person named in the question",
    "session": "fetch the conversation around the latest evidence",
    "stop": "the evidence already answers the question",
}


def _fill(template: str, **values: str) -> str:
    """One-pass ``{name}`` substitution: braces in JSON examples and in user text stay as they are."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


_DATED = re.compile(r"^\((\d{1,2} [A-Z][a-z]+ \d{4}|undated)\) ")


def _numbered(texts: Sequence[str], prefix: str = "") -> str:
    """``[1] text`` lines. Snippets rendered as "(date) speaker: text" get the date as a header line
    whenever it changes instead of on every line: the same words, ~10% fewer tokens for a model."""
    lines: list[str] = []
    last = None
    for i, text in enumerate(texts, 1):
        text = " ".join(text.split())
        m = _DATED.match(text)
        if m:
            if m.group(1) != last:
                lines.append(f"{m.group(1)}:")
                last = m.group(1)
            text = text[m.end():]
        lines.append(f"[{prefix}{i}] {text}")
    return "\n".join(lines) or "(none)"


def _request(role: str, prompt: str, payload: dict[str, Any], schema: dict[str, Any],
             max_tokens: int = 256) -> LLMRequest:
    return LLMRequest(
        prompt=prompt, role=role, payload=json.dumps(payload, ensure_ascii=False, sort_keys=True),
        json_mode=True, json_schema=json.dumps(schema), max_tokens=max_tokens,
    )


def _obj(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    return obj


def _one_label(obj: Any, raw: str, key: str, labels: Sequence[str], *, case: bool) -> str:
    """The label from ``{"label": ...}``, else the only one of ``labels`` the raw text names."""
    if isinstance(obj, dict) and isinstance(obj.get(key), str):
        value = obj[key].strip()
        for lab in labels:
            if (value if case else value.lower()) == lab:
                return lab
    text = raw if case else raw.lower()
    found = [lab for lab in labels if re.search(rf"\b{lab}\b", text)]
    if len(found) == 1:
        return found[0]
    raise ValueError(f"expected {key} to be one of {', '.join(labels)}")


# -- decompose ----------------------------------------------------------------------------------
DECOMPOSE_PROMPT = """List the pieces of information needed to answer the question: each separate fact, \
each link between facts, each list item, and both dates of a time span. Give 1 to 5 short items.

Example
Question: How many weeks passed between my move to Denver and my first marathon?
{"requirements": ["date I moved to Denver", "date of my first marathon"]}

Question: {question}
Reply with JSON only."""
DECOMPOSE_SCHEMA = {
    "type": "object", "required": ["requirements"],
    "properties": {"requirements": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                                    "maxItems": MAX_REQUIREMENTS}},
}


def decompose(llm: LLM, question: str) -> list[str]:
    """1-5 requirement texts (facts, bridges, list items, temporal endpoints) for ``question``."""

    def parse(obj: Any, raw: str) -> list[str]:
        items = obj if isinstance(obj, list) else _obj(obj).get("requirements")
        if not isinstance(items, list):
            raise ValueError("expected a 'requirements' list")
        reqs = list(dict.fromkeys(" ".join(str(x).split()) for x in items if str(x).strip()))
        if not reqs:
            raise ValueError("no requirements given")
        return reqs[:MAX_REQUIREMENTS]

    req = _request("decompose", _fill(DECOMPOSE_PROMPT, question=question), {"question": question},
                   DECOMPOSE_SCHEMA, max_tokens=160)
    return complete_json(llm, req, parse)


# -- select --------------------------------------------------------------------------------------
SELECT_PROMPT = """Pick the smallest set of memories that together supply every requirement of the \
question. Use only the ids shown. For each requirement number, list the ids (at most 3) of the picked \
memories that supply it.

Example
Question: How many days after I adopted the kitten did I take her to the vet?
Requirements:
1. date I adopted the kitten
2. date I took the kitten to the vet
Memories:
[m1] I adopted a kitten on March 3rd.
[m2] Kittens need lots of sleep.
[m3] Took her to the vet on March 10th.
{"coverage": {"1": ["m1"], "2": ["m3"]}}

Question: {question}
Requirements:
{requirements}
Memories:
{memories}
Reply with JSON only."""
MAX_PER_REQUIREMENT = 3


def select_schema(n_requirements: int, aliases: Sequence[str]) -> dict[str, Any]:
    """One list per requirement number, each of at most 3 of the shown ids: a grammar-constrained
    model cannot invent ids or requirements, and its reply stays a few dozen tokens."""
    ids = {"type": "array", "items": {"type": "string", "enum": list(aliases)}, "maxItems": MAX_PER_REQUIREMENT}
    keys = [str(i) for i in range(1, n_requirements + 1)]
    return {"type": "object", "required": ["coverage"], "properties": {"coverage": {
        "type": "object", "required": keys, "properties": dict.fromkeys(keys, ids)}}}


class Selection(NamedTuple):
    """Selected pool ids (in the model's order) and, per requirement text, the selected ids that
    supply it. Unpacks as ``ids, coverage``."""

    ids: list[str]
    coverage: dict[str, list[str]]

    @property
    def covered_fraction(self) -> float:
        return sum(1 for v in self.coverage.values() if v) / len(self.coverage) if self.coverage else 0.0


def select_subset(llm: LLM, question: str, pool: Sequence[tuple[str, str]], *,
                  requirements: Sequence[str] | None = None) -> Selection:
    """The smallest subset of ``pool`` ((id, text) pairs) that jointly covers the requirements.

    Pool ids are shown to the model as short aliases (m1, m2, ...) and mapped back; ids the model
    invents are dropped. ``requirements`` default to :func:`decompose`. An empty selection is a
    valid answer (Stage I then applies its fallback).
    """
    reqs = list(requirements) if requirements is not None else decompose(llm, question)
    if not pool:
        return Selection([], {r: [] for r in reqs})
    alias = {f"m{i}": pid for i, (pid, _) in enumerate(pool, 1)}
    pool_ids = set(alias.values())
    shown = [(a, text) for a, (_, text) in zip(alias, pool, strict=True)]

    def parse(obj: Any, raw: str) -> Selection:
        o = _obj(obj)
        cov_in = o.get("coverage")
        if not isinstance(cov_in, dict) and not isinstance(o.get("ids"), list):
            raise ValueError("expected a 'coverage' object")
        cov: dict[str, list[str]] = {r: [] for r in reqs}
        for k, v in (cov_in or {}).items():
            m = re.search(r"\d+", str(k))
            if m and 1 <= int(m.group(0)) <= len(reqs) and isinstance(v, list):
                picked = [alias[str(a).strip()] for a in v if str(a).strip() in alias]
                cov[reqs[int(m.group(0)) - 1]] = list(dict.fromkeys(picked))
        # the selection is the union of the coverage lists (a client may also list "ids" itself)
        listed = o["ids"] if isinstance(o.get("ids"), list) else [a for v in cov.values() for a in v]
        ids = list(dict.fromkeys(alias.get(str(a).strip(), str(a).strip()) for a in listed))
        ids = [i for i in ids if i in pool_ids]
        return Selection(ids, {r: [i for i in v if i in ids] for r, v in cov.items()})

    prompt = _fill(SELECT_PROMPT, question=question,
                   requirements="\n".join(f"{i}. {r}" for i, r in enumerate(reqs, 1)),
                   memories="\n".join(f"[{a}] {' '.join(t.split())}" for a, t in shown))
    payload = {"question": question, "requirements": reqs, "pool": [list(p) for p in shown]}
    schema = select_schema(len(reqs), list(alias))
    return complete_json(llm, _request("select", prompt, payload, schema, max_tokens=160), parse)


# -- choose_tool -----------------------------------------------------------------------------------
TOOL_PROMPT = """Choose the next tool for finding evidence the question still needs.
Tools:
{tools}

Example
Question: How many days after I adopted the kitten did I take her to the vet?
Evidence:
[1] I adopted a kitten on March 3rd.
{"tool": "session"}

Question: {question}
Evidence:
{evidence}
Reply with JSON only: {"tool": one tool name}."""


def choose_tool(llm: LLM, question: str, evidence_texts: Sequence[str],
                tools: Sequence[str] | Mapping[str, str]) -> str:
    """One of ``tools`` (names, or name -> description) as the next retrieval action."""
    described = dict(tools) if isinstance(tools, Mapping) else {t: TOOL_DESCRIPTIONS.get(t, t) for t in tools}
    names = list(described)
    if not names:
        raise ValueError("choose_tool needs at least one tool")
    schema = {"type": "object", "required": ["tool"], "properties": {"tool": {"type": "string", "enum": names}}}

    def parse(obj: Any, raw: str) -> str:
        value = str(_obj(obj).get("tool", "")).strip().lower() if isinstance(obj, dict) else ""
        for name in names:
            if name.lower() == value:
                return name
        raise ValueError(f"'tool' must be one of {', '.join(names)}")

    prompt = _fill(TOOL_PROMPT, question=question, evidence=_numbered(evidence_texts),
                   tools="\n".join(f"- {n}: {d}" for n, d in described.items()))
    payload = {"question": question, "evidence": list(evidence_texts), "tools": names}
    return complete_json(llm, _request("tool", prompt, payload, schema, max_tokens=32), parse)


# -- answer -------------------------------------------------------------------------------------
# Evidence-reading prompts (answer, both Suff@Set judges, the adjudicator) open with the same
# evidence block and put their instructions after it. The wording is the paper's (Appendix O / M);
# only the order differs, so that a local model evaluates a set's snippets once and reuses that
# prefix (llama.cpp's KV cache) for every role that reads the same set.
EVIDENCE_BLOCK = """Evidence snippets, in order:
{evidence}

"""
ANSWER_PROMPT = EVIDENCE_BLOCK + """Given the question and the ordered evidence snippets above, produce a short \
answer string that is supported by the evidence. Prefer spans that appear in the evidence. If multiple \
candidates exist, choose the most specific span that answers the question. Do not invent entities that \
are absent from the evidence set. For "how many days" questions, count the days between the two dates.

Example
Snippets: [1] I adopted a kitten on March 3rd. [2] Took her to the vet on March 10th.
Question: How many days after I adopted the kitten did I take her to the vet?
{"answer": "7 days"}

Question: {question}
Reply with JSON only."""
ANSWER_SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


# -- focus (opt-in, before the answerer, on time-span questions) ----------------------------------
# A time span is worked out from two facts that a large set scatters among many others: a 1.5B model
# asked over 40 snippets answers with a date it read ("10 days" for February 5th -> 10th), and from the
# two facts alone it subtracts. With focus, on a time-span question over more than FOCUS_FROM snippets
# the answerer first asks which snippets (at most FOCUS_MAX) state the facts, then answers from those.
# Measured on 46 time-span questions it loses more answers than it wins, so it is not the default.
TIME_SPAN = re.compile(r"\bhow (long|many (seconds|minutes|hours|days|weeks|months|years))\b", re.I)
FOCUS_FROM = 8
FOCUS_MAX = 4
FOCUS_PROMPT = EVIDENCE_BLOCK + """Which snippets state the facts needed to answer the question below? Give \
the numbers of at most 4 snippets, most useful first.

Example
Snippets: [1] I adopted a kitten on March 3rd. [2] I love cats. [3] Took her to the vet on March 10th.
Question: How many days after I adopted the kitten did I take her to the vet?
{"snippets": [1, 3]}

Question: {question}
Reply with JSON only."""


def needs_focus(question: str, evidence_texts: Sequence[str]) -> bool:
    """A time-span question ("how long", "how many days/weeks/...") over more than FOCUS_FROM snippets."""
    return len(evidence_texts) > FOCUS_FROM and TIME_SPAN.search(question) is not None


def focus(llm: LLM, question: str, evidence_texts: Sequence[str]) -> tuple[int, ...]:
    """Positions (0-based, in evidence order) of the at most FOCUS_MAX snippets that state the facts the
    question needs; empty when the reply names none of the snippets."""
    n = len(evidence_texts)

    def parse(obj: Any, raw: str) -> tuple[int, ...]:
        items = obj if isinstance(obj, list) else _obj(obj).get("snippets")
        if not isinstance(items, list):
            raise ValueError("expected a 'snippets' list")
        picked = [int(x) - 1 for x in items if isinstance(x, int | float | str) and str(x).strip().isdigit()]
        return tuple(sorted(list(dict.fromkeys(i for i in picked if 0 <= i < n))[:FOCUS_MAX]))

    schema = {"type": "object", "required": ["snippets"],
              "properties": {"snippets": {"type": "array", "maxItems": FOCUS_MAX,
                                          "items": {"type": "integer", "minimum": 1, "maximum": n}}}}
    prompt = _fill(FOCUS_PROMPT, question=question, evidence=_numbered(evidence_texts))
    payload = {"question": question, "evidence": list(evidence_texts)}
    return complete_json(llm, _request("focus", prompt, payload, schema, max_tokens=40), parse)


def focused(llm: LLM, question: str, evidence_texts: Sequence[str]) -> tuple[int, ...]:
    """The positions :func:`focus` names on a time-span question over a large set; empty (read the whole
    set) for any other question, when it names none, or when its call fails: focusing is an aid, the
    answer is the call that must succeed."""
    if not needs_focus(question, evidence_texts):
        return ()
    try:
        return focus(llm, question, evidence_texts)
    except LLMCallFailed as exc:
        log.info("focus failed, answering from the whole set: %s", exc)
        return ()


# -- span (before the answerer, on questions for the time between two events) ----------------------
# Program-aided: a 1.5B model reads the two dates but does not subtract them over a large set ("10
# days" for February 5th -> 10th), so on a question for the days / weeks / months / years between two
# events the model copies the two dates (SPAN_PROMPT) and the code subtracts them. Its "earlier" and
# "later" come back swapped at times, so the gap is taken either way round (the shorter). A reply
# without two readable, different dates, or a gap that rounds to 0 in the asked unit, falls back to
# the extractive answer. "... ago" needs the question's own date, which the answerer is not given.
# Measured (bench/bench_llm_timespan.py, local model, BFR-MV sets): on the 10 such questions of LoCoMo
# and dev50, number match 3 -> 6 (none lost), F1 40.0 -> 48.3; the other 36 time-span questions keep
# the extractive answer.
SPAN_QUESTION = re.compile(r"\bhow many (day|week|month|year)s?\b(?!.*\bago\b).*"
                           r"\b(between|after|before|since|take|took|passed|when|until)\b", re.I)
SPAN_PROMPT = EVIDENCE_BLOCK + """The question below asks how much time passed between two events. Copy from \
the snippets the date of the earlier event and the date of the later event.

Example
Snippets: [1] I adopted a kitten on March 3rd. [2] I love cats. [3] Took her to the vet on March 10th.
Question: How many days after I adopted the kitten did I take her to the vet?
{"earlier": "March 3rd", "later": "March 10th"}

Question: {question}
Reply with JSON only."""
SPAN_SCHEMA = {"type": "object", "required": ["earlier", "later"],
               "properties": {"earlier": {"type": "string"}, "later": {"type": "string"}}}


def span_dates(llm: LLM, question: str, evidence_texts: Sequence[str]) -> tuple[str, str]:
    """The dates of the question's two events as the model copies them from the snippets."""

    def parse(obj: Any, raw: str) -> tuple[str, str]:
        got = _obj(obj)
        if not all(isinstance(got.get(k), str | int) for k in ("earlier", "later")):
            raise ValueError("expected {\"earlier\": \"...\", \"later\": \"...\"}")
        return str(got["earlier"]).strip(), str(got["later"]).strip()

    prompt = _fill(SPAN_PROMPT, question=question, evidence=_numbered(evidence_texts))
    payload = {"question": question, "evidence": list(evidence_texts)}
    return complete_json(llm, _request("span", prompt, payload, SPAN_SCHEMA, max_tokens=40), parse)


def span_answer(question: str, first: str, second: str) -> str | None:
    """"N <unit>s" between two date texts on a :data:`SPAN_QUESTION` (the unit it asks for); None when
    it is not one, a text holds no date, or the gap rounds to 0."""
    m = SPAN_QUESTION.search(question)
    a, b = find_dates(first), find_dates(second)
    if not (m and a and b):
        return None
    days = min(abs(day_gap(a[0][1], b[0][1])), abs(day_gap(b[0][1], a[0][1])))
    text = span_text(days, m.group(1).lower())
    return None if text.startswith("0 ") else text


class Answer(NamedTuple):
    text: str
    focus: tuple[int, ...] = ()  # positions (0-based) of the snippets the answerer read; () = all of them
    span: tuple[str, ...] = ()  # the two dates the span step subtracted; () = an extractive answer

    @property
    def how(self) -> str:
        """How the answer was reached, for a reader: empty for the extractive answer over the set."""
        if self.span:
            return f"computed: the time between {self.span[0]} and {self.span[1]}, dates read from the evidence"
        if self.focus:
            return "from snippets " + ", ".join(str(i + 1) for i in self.focus) + " (focus)"
        return ""


def spanned(llm: LLM, question: str, evidence_texts: Sequence[str]) -> Answer | None:
    """The computed span on a :data:`SPAN_QUESTION`, with the dates it came from; None for any other
    question, or when the dates do not give one, or the call fails for good: the extractive answer is
    the fallback."""
    if not evidence_texts or SPAN_QUESTION.search(question) is None:
        return None
    try:
        dates = span_dates(llm, question, evidence_texts)
    except LLMCallFailed as exc:
        log.info("span failed, answering from the snippets: %s", exc)
        return None
    text = span_answer(question, *dates)
    return Answer(text, (), dates) if text else None


def answer_with_focus(llm: LLM, question: str, evidence_texts: Sequence[str]) -> Answer:
    """The answer over the snippets :func:`focused` names (over all of them when it names none), with
    the positions it read."""
    cited = focused(llm, question, evidence_texts)
    read = [evidence_texts[i] for i in cited] if cited else evidence_texts
    return Answer(extractive(llm, question, read), cited)


def answered(llm: LLM, question: str, evidence_texts: Sequence[str], *, focus_first: bool = False,
             span_first: bool = True) -> Answer:
    """The answer to ``question`` from ordered evidence snippets, with how it was reached: on a
    question for the time between two events, the span :func:`spanned` computes from the dates the
    model copies, when it gives one; else the paper's extractive answerer (:func:`extractive`;
    ``span_first=False``: that alone). ``focus_first=True`` answers after :func:`focused` instead
    (:func:`answer_with_focus`); it is off by default because it measured worse
    (``bench/bench_llm_timespan.py``: on LoCoMo's time-span questions F1 38.3 -> 21.0)."""
    if focus_first:
        return answer_with_focus(llm, question, evidence_texts)
    computed = spanned(llm, question, evidence_texts) if span_first else None
    return computed or Answer(extractive(llm, question, evidence_texts))


def answer(llm: LLM, question: str, evidence_texts: Sequence[str], *, focus_first: bool = False,
           span_first: bool = True) -> str:
    """The text of :func:`answered`."""
    return answered(llm, question, evidence_texts, focus_first=focus_first, span_first=span_first).text


def extractive(llm: LLM, question: str, evidence_texts: Sequence[str]) -> str:
    """The paper's extractive answerer (Appendix O) over ordered evidence snippets."""

    def parse(obj: Any, raw: str) -> str:
        if isinstance(obj, dict) and isinstance(obj.get("answer"), str | int | float):
            text = str(obj["answer"]).strip()
        elif obj is None and raw.strip() and "{" not in raw:
            text = raw.strip()  # a model that ignored the format but answered
        else:
            raise ValueError("expected {\"answer\": \"...\"}")
        if not text:
            raise ValueError("empty answer")
        return text

    prompt = _fill(ANSWER_PROMPT, question=question, evidence=_numbered(evidence_texts))
    payload = {"question": question, "evidence": list(evidence_texts)}
    return complete_json(llm, _request("answer", prompt, payload, ANSWER_SCHEMA, max_tokens=96), parse)


# -- judge -----------------------------------------------------------------------------------------
# The Mem0-style judge prompt exactly as the paper prints it (Appendix O; mem0_accuracy_v1).
JUDGE_PROMPT = """Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given \
the following data:
- a question (posed by one user to another user),
- a 'gold' (ground truth) answer,
- a generated answer which you will score as CORRECT/WRONG.
The point of the question is to ask about something one user should know about the other user based \
on their prior conversations. The gold answer will usually be a concise and short answer that \
includes the referenced topic. The generated answer might be much longer, but you should be generous \
with your grading—as long as it touches on the same topic as the gold answer, it should be counted \
as CORRECT.
For time related questions, the gold answer will be a specific date, month, year, etc. The generated \
answer might be much longer or use relative time references, but you should be generous with your \
grading—as long as it refers to the same date or time period as the gold answer, it should be \
counted as CORRECT. Even if the format differs (e.g., “May 7th” vs “7 May”), consider it CORRECT if \
it is the same date.
Now it’s time for the real question:
Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}
First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or \
WRONG. Do NOT include both CORRECT and WRONG in your response. Just return the label CORRECT or \
WRONG in a json format with the key as “label”:
{"label": "CORRECT"}"""
# A grammar-constrained model emits the schema's properties in order: the reason first, as the
# prompts ask, capped so that a runaway reason cannot spend the whole reply budget.
REASON = {"type": "string", "maxLength": 200}
JUDGE_SCHEMA = {"type": "object", "required": ["reason", "label"],
                "properties": {"reason": REASON, "label": {"type": "string", "enum": list(JUDGE_LABELS)}}}


def judge(llm: LLM, question: str, gold: str, generated: str) -> str:
    """"CORRECT" or "WRONG" for ``generated`` against ``gold`` (the paper's answer judge)."""
    prompt = _fill(JUDGE_PROMPT, question=question, gold_answer=gold, generated_answer=generated)
    payload = {"question": question, "gold": gold, "generated": generated}
    return complete_json(llm, _request("judge", prompt, payload, JUDGE_SCHEMA, max_tokens=128),
                         lambda obj, raw: _one_label(obj, raw, "label", JUDGE_LABELS, case=True))


# -- LLM-Suff@Set -----------------------------------------------------------------------------------
SUFF_PROMPT = EVIDENCE_BLOCK + """You will see a question, its reference answer, and an anonymized retained \
evidence set from a conversational memory store (the snippets above). The method, budget, system \
answer, and gold memory identifiers are not shown.
Task: Decide whether the evidence text supports the complete reference answer.
- Label sufficient if the complete answer is supported by the provided evidence.
- Label insufficient if a required fact, bridge, or temporal detail is missing.
- Label uncertain only when the evidence does not permit a reliable decision.
- Do not use outside knowledge beyond what is written in the evidence.

Example
Snippets: [1] I adopted a kitten on March 3rd.
Question: How many days after I adopted the kitten did I take her to the vet?
Reference answer: 7 days
{"reason": "[1] gives the adoption date; no snippet gives the vet visit date.", "label": "insufficient"}

Question: {question}
Reference answer: {reference}{disagreement}
{procedure} Reply with JSON only."""
# Two judging procedures over the same blinded input. With two different models both use "reason";
# with one model (a local run) judge B uses "cite", so the two judgments are two readings rather
# than one cached call. The procedure is the prompt's last line: both judges share everything
# before it, so a local model evaluates the evidence and the instructions once for the pair.
SUFF_PROCEDURES = {
    "reason": "Give a one-sentence reason, then the label.",
    "cite": "In the reason, name the snippet number that states each part of the reference answer, or the "
            "part no snippet states; then give the label.",
}
ADJUDICATE_NOTE = """

Two judges disagreed on this set:
Judge A: {label_a} ({reason_a})
Judge B: {label_b} ({reason_b})
Read the evidence yourself and give the final label."""
SUFF_SCHEMA = {"type": "object", "required": ["reason", "label"],
               "properties": {"reason": REASON, "label": {"type": "string", "enum": list(SUFF_LABELS)}}}

# Record ids a caller may have left inside snippet texts: LoCoMo dia ids (conv-26:D3:7, D3:7),
# LongMemEval turn/session ids (answer_4be1b6b4_2, 7f3e9a21_5), bracketed or "id:"-style prefixes.
_ID_PATTERNS = (
    re.compile(r"^\s*\[(?=[^\]]*\d)[^\]\s]{1,40}\]\s*[:\-\u2013]?\s*"),
    re.compile(r"\b(?:conv-\d+:)?D\d+:\d+\b\s*[:\-\u2013]?\s*"),
    re.compile(r"\b(?:answer|session|sharegpt|ultrachat)_[0-9a-zA-Z]{4,}(?:_\d+)*\b\s*[:\-\u2013]?\s*"),
    re.compile(r"\b[0-9a-f]{8}(?:_\d+)+\b\s*[:\-\u2013]?\s*"),
)


def anonymise(evidence_texts: Sequence[str]) -> list[str]:
    """Snippet texts with record-id markers removed, whitespace collapsed, duplicates dropped."""
    out = []
    for text in evidence_texts:
        for pat in _ID_PATTERNS:
            text = pat.sub("", text)
        text = " ".join(text.split())
        if text:
            out.append(text)
    return list(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class SuffResult:
    label: str  # sufficient | insufficient | uncertain (the final, possibly adjudicated, label)
    judge_labels: tuple[str, str]  # the two independent judges' labels
    adjudicated: bool  # True when the judges disagreed and the adjudicator decided
    reasons: tuple[str, ...] = ()  # one-sentence reasons: judge A, judge B[, adjudicator]

    @property
    def sufficient(self) -> bool | None:
        """S_LLM as in the paper's Eq. 2; None (excluded from rates) when uncertain."""
        return None if self.label == "uncertain" else self.label == "sufficient"


def _suff_call(llm: LLM, role: str, payload: dict[str, Any], disagreement: str = "",
               procedure: str = "reason") -> tuple[str, str]:
    prompt = _fill(SUFF_PROMPT, question=payload["question"], reference=payload["reference"],
                   evidence=_numbered(payload["evidence"]), disagreement=disagreement,
                   procedure=SUFF_PROCEDURES[procedure])

    def parse(obj: Any, raw: str) -> tuple[str, str]:
        label = _one_label(obj, raw, "label", SUFF_LABELS, case=False)
        reason = str(obj.get("reason", "")).strip() if isinstance(obj, dict) else ""
        return label, " ".join(reason.split())[:300]

    return complete_json(llm, _request(role, prompt, payload, SUFF_SCHEMA, max_tokens=160), parse)


def suff_at_set(judges: tuple[LLM, LLM], adjudicator: LLM, question: str, reference_answer: str,
                evidence_texts: Sequence[str], *, procedure_b: str = "reason") -> SuffResult:
    """Blinded, reference-conditioned LLM-Suff@Set (Appendix M) for one question-evidence snapshot.

    ``procedure_b`` is judge B's procedure (:data:`SUFF_PROCEDURES`): "cite" when one model is both
    judges, so that its two calls are two different readings (the same prompt would be one cached
    call and could never disagree).
    """
    payload = {"question": question, "reference": reference_answer, "evidence": anonymise(evidence_texts)}
    payload_b = {**payload, "procedure": procedure_b} if procedure_b != "reason" else payload
    la, ra = _suff_call(judges[0], "suff", payload)
    lb, rb = _suff_call(judges[1], "suff", payload_b, procedure=procedure_b)
    if la == lb:
        return SuffResult(la, (la, lb), False, (ra, rb))
    note = _fill(ADJUDICATE_NOTE, label_a=la, reason_a=ra or "no reason given", label_b=lb,
                 reason_b=rb or "no reason given")
    adj_payload = {**payload, "labels": [la, lb]}
    label, reason = _suff_call(adjudicator, "adjudicate", adj_payload, disagreement=note)
    return SuffResult(label, (la, lb), True, (ra, rb, reason))
