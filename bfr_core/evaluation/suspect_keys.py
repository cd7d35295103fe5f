"""Answer-key entries that look wrong from the text alone, each with its reason (no model, no audit).

Covers: :func:`suspect_keys` (every question of a dataset checked; a question may carry several
flags), :func:`as_overlay` (the flags as overlay records, for a person to confirm) and :func:`score_flags` (precision and recall of the flags against an overlay's findings, by
error type). The checks, on stemmed content words (the answer's *informative* words are those the
question does not already say):

* ``citation`` - the cited evidence (with its sessions' dates) states none of the answer's informative
  words while other turns of the conversation state at least half of them: the key may cite the
  wrong turns;
* ``unsupported`` - fewer than half of the answer's informative words (two at least) appear anywhere
  in the conversation or its session dates: the key may state what the conversation never says;
* ``anchor`` - a relative gold date ("the Friday before 15 July 2023") counts from a day that is none
  of the cited evidence's session dates;
* ``weekday`` - a gold that names a weekday and a date on which that weekday does not fall.

Does not cover: deciding that a key is wrong (people and overlays do), LongMemEval (its gold is
per-session, these checks read LoCoMo-style turn evidence; any dataset with turn gold works).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from bfr_core.dates import WEEKDAYS, find_day_dates
from bfr_core.llm.rules_tokens import toks
from bfr_core.records import Question, Turn
from bfr_core.store import Store
from bfr_core.text import stem

CHECKS = ("citation", "unsupported", "anchor", "weekday")
_RELATIVE = re.compile(r"\b(?:day|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
                       r"\s+(?:before|after|of)\s*$", re.I)
_WEEKDAY = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)


@dataclass(frozen=True, slots=True)
class Flag:
    question_id: str
    check: str
    reason: str


def stems(text: str) -> set[str]:
    """A text's stemmed content words (what every check compares)."""
    return {stem(w) for w in toks(text)}


def _date_words(t: Turn) -> set[str]:
    return stems(t.date.strftime("%d %B %Y %A")) | {str(t.date.day)} if t.date else set()


def check_question(q: Question, turns: Mapping[str, Turn], said: Mapping[str, set[str]]) -> list[Flag]:
    """The flags of one question; ``turns`` its scope's turns by id, ``said`` each turn's stemmed words."""
    flags = []
    informative = stems(q.answer) - stems(q.text)
    cited = [turns[g] for g in q.gold if g in turns]
    dates = set().union(*(_date_words(t) for t in turns.values())) if turns else set()
    if informative and cited:
        in_cited = set().union(*(said[t.turn_id] | _date_words(t) for t in cited)) & informative
        elsewhere = set().union(*(w for tid, w in said.items() if tid not in q.gold)) & informative
        if not in_cited and len(elsewhere) * 2 >= len(informative):
            flags.append(Flag(q.question_id, "citation", f"the cited turns ({', '.join(t.local_id for t in cited)}) "
                              f"state none of the answer's words {sorted(informative)[:6]}; other turns state "
                              f"{len(elsewhere)} of them"))
    if len(informative) >= 2:
        anywhere = (set().union(*said.values()) | dates) & informative
        if len(anywhere) * 2 < len(informative):
            missing = sorted(informative - anywhere)
            flags.append(Flag(q.question_id, "unsupported", f"{len(missing)} of the answer's {len(informative)} "
                              f"informative words appear nowhere in the conversation: {missing[:6]}"))
    found = find_day_dates(q.answer)
    if len(found) == 1 and found[0][1][0] and cited:
        pos, (y, m, d), _ = found[0]
        anchor = date(y, m, d)
        sessions = sorted({t.date.date() for t in cited if t.date})
        if _RELATIVE.search(q.answer[:pos]) and sessions and anchor not in sessions:
            flags.append(Flag(q.question_id, "anchor", f"the gold counts from {anchor:%d %B %Y}, the cited evidence "
                              f"is dated {', '.join(f'{s:%d %B %Y}' for s in sessions)}"))
        named = _WEEKDAY.search(q.answer)
        if named and not _RELATIVE.search(q.answer[:pos]) and anchor.weekday() != WEEKDAYS.index(named.group(1).lower()):
            flags.append(Flag(q.question_id, "weekday", f"{anchor:%d %B %Y} is a {anchor:%A}, "
                              f"not a {named.group(1).capitalize()}"))
    return flags


def suspect_keys(store: Store, dataset_id: str, question_ids: Sequence[str] | None = None) -> list[Flag]:
    """Every flag of the dataset's questions (or of ``question_ids``), in question order."""
    wanted = set(question_ids) if question_ids is not None else None
    out: list[Flag] = []
    by_scope: dict[str, list[Question]] = {}
    for q in store.questions(dataset_id):
        if (wanted is None or q.question_id in wanted) and q.answer.strip():
            by_scope.setdefault(q.scope_id, []).append(q)
    for scope_id, qs in by_scope.items():
        turns = {t.turn_id: t for t in store.scope_turns(dataset_id, scope_id)}
        said = {tid: stems(t.text) for tid, t in turns.items()}
        for q in qs:
            out += check_question(q, turns, said)
    return out


def score_flags(flags: Sequence[Flag], findings: Mapping[str, str], question_ids: Sequence[str],
                targets: Sequence[str] = ("WRONG_CITATION", "HALLUCINATION")) -> dict[str, Any]:
    """Precision (flagged questions the overlay has a finding on) and recall (of the findings of the
    ``targets`` types, and of each type) over ``question_ids``; ``findings`` maps question -> error type."""
    qids = set(question_ids)
    flagged = {f.question_id for f in flags if f.question_id in qids}
    found = {q: t for q, t in findings.items() if q in qids}
    hits = flagged & set(found)
    target = {q for q, t in found.items() if t in targets}
    by_type = {t: {"findings": n, "flagged": sum(1 for q in flagged if found.get(q) == t)}
               for t, n in sorted(Counter(found.values()).items())}
    by_check = {c: {"flagged": len({f.question_id for f in flags if f.check == c and f.question_id in qids}),
                    "in_findings": len({f.question_id for f in flags if f.check == c and f.question_id in found})}
                for c in CHECKS}
    return {"questions": len(qids), "flagged": len(flagged), "in_findings": len(hits),
            "precision_pct": round(100.0 * len(hits) / len(flagged), 2) if flagged else None,
            "target_types": list(targets), "target_findings": len(target),
            "recall_pct": round(100.0 * len(flagged & target) / len(target), 2) if target else None,
            "by_error_type": by_type, "by_check": by_check}


def as_overlay(flags: Sequence[Flag], questions: Mapping[str, Question]) -> list[dict[str, Any]]:
    """The flags as overlay records (one per question, its checks joined): ``error_type`` is
    ``SUSPECT_<CHECK>``, the answer and evidence are the key's own (a person corrects them)."""
    by_q: dict[str, list[Flag]] = {}
    for f in flags:
        by_q.setdefault(f.question_id, []).append(f)
    out = []
    for qid, fs in by_q.items():
        q = questions[qid]
        out.append({"question_id": qid, "question": q.text, "golden_answer": q.answer,
                    "error_type": "+".join(f"SUSPECT_{f.check.upper()}" for f in fs),
                    "cited_evidence": list(q.gold), "correct_evidence": [],
                    "reasoning": "; ".join(f.reason for f in fs), "correct_answer": q.answer})
    return out
