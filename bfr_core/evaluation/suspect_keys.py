"""Answer-key entries that look wrong from the text alone, each with its reason (no model, no audit).

Covers: :func:`suspect_keys` (every question of a dataset checked under a :class:`Setting`; a
question may carry several flags), :func:`signals` / :func:`flags_of` (what the checks measure once
per question, and the flags a setting draws from it), :func:`as_overlay` (the flags as overlay
records, for a person to confirm), :func:`score_flags` (precision and recall of the flags against an
overlay's findings, by error type and by check) and :func:`choose` / :func:`cross_validate` (a setting
picked from the fixed :data:`GRID` on some conversations and scored on the one left out). The checks,
on stemmed content words (the answer's *informative* words are those the question does not already
say):

* ``citation`` - the cited evidence (with its sessions' dates) states none of the answer's informative
  words while other turns of the conversation state at least half of them: the key may cite the
  wrong turns;
* ``unsupported`` - fewer than half of the answer's informative words (two at least) appear anywhere
  in the conversation or its session dates: the key may state what the conversation never says;
* ``anchor`` - a relative gold date ("the Friday before 15 July 2023") counts from a day that is none
  of the cited evidence's session dates;
* ``weekday`` - a gold that names a weekday and a date on which that weekday does not fall;
* ``speaker`` - the question names one of the conversation's speakers and a cited turn is spoken by
  another: a turn in which someone else speaks rarely states what that person did or thinks;
* ``idle`` - a cited turn shares (almost) nothing with the question and the answer: its shared words
  weigh less than :attr:`Setting.idle_weight` (each word by its scaled inverse turn frequency in the
  conversation, :func:`idf_weights`; speakers' names left out), and, with :attr:`Setting.idle_context`, so does the turn
  before it (a short reply such as "Yes, last week!" holds its answer through the turn it answers).
  Such a turn can hold neither the answer nor the question's topic.

Which checks flag, and the idle threshold, form a :class:`Setting`; :data:`DEFAULT` is the setting
:func:`choose` picks over LoCoMo conversations 0-4 against the locomo-audit findings (its rule:
precision >= 50 % first, then recall of WRONG_CITATION + HALLUCINATION, then precision; without a
setting reaching that precision, the best F1), and ``bench/quality/bench_audit_judges.py`` reports the
leave-one-conversation-out figures beside the in-sample ones.

Does not cover: deciding that a key is wrong (people and overlays do), LongMemEval (its gold is
per-session, these checks read LoCoMo-style turn evidence; any dataset with turn gold works).
"""

from __future__ import annotations

import math
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

CHECKS = ("citation", "unsupported", "anchor", "weekday", "speaker", "idle")
TARGETS = ("WRONG_CITATION", "HALLUCINATION")
_WORD = re.compile(r"[A-Za-z]+")
_RELATIVE = re.compile(r"\b(?:day|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
                       r"\s+(?:before|after|of)\s*$", re.I)
_WEEKDAY = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)


@dataclass(frozen=True, slots=True)
class Flag:
    question_id: str
    check: str
    reason: str


@dataclass(frozen=True, slots=True)
class Setting:
    """Which checks flag and how idle an idle cited turn is."""

    idle_weight: float = 0.1  # a cited turn whose shared words weigh less than this is idle
    idle_context: bool = True  # ... only when the turn before it is idle too
    citation: bool = False  # whether the ``citation`` check flags

    @property
    def label(self) -> str:
        return f"idle<{self.idle_weight:g}{'+context' if self.idle_context else ''}{'+citation' if self.citation else ''}"


GRID = tuple(Setting(w, ctx, cit) for w in (0.1, 0.3, 0.45) for ctx in (True, False) for cit in (False, True))
DEFAULT = Setting(0.1, True, False)


@dataclass(frozen=True, slots=True)
class Signals:
    """What the checks measure on one question, before a setting turns it into flags."""

    question_id: str
    scope_id: str
    fixed: tuple[Flag, ...]  # the flags no setting changes (``citation`` among them, kept or dropped)
    idle: tuple[tuple[str, float, float | None], ...]  # per cited turn: local id, its shared weight, the previous turn's


def stems(text: str) -> set[str]:
    """A text's stemmed content words (what every check compares)."""
    return {stem(w) for w in toks(text)}


def _date_words(t: Turn) -> set[str]:
    return stems(t.date.strftime("%d %B %Y %A")) | {str(t.date.day)} if t.date else set()


def idf_weights(said: Mapping[str, set[str]]) -> dict[str, float]:
    """Each word's inverse turn frequency in a conversation, log((turns + 1) / (turns saying it + 1)),
    over log(turns + 1): a word one turn says weighs about 1 whatever the conversation's length."""
    df = Counter(w for words in said.values() for w in words)
    n = len(said)
    scale = math.log(n + 1) or 1.0
    return {w: math.log((n + 1) / (c + 1)) / scale for w, c in df.items()}


def named_speakers(text: str, speakers: set[str]) -> set[str]:
    """The speakers (lower-cased names) ``text`` names."""
    return {w.lower() for w in _WORD.findall(text)} & speakers


def question_signals(q: Question, turns: Mapping[str, Turn], said: Mapping[str, set[str]],
                     idf: Mapping[str, float] | None = None) -> Signals:
    """Every check's measurement of one question; ``turns`` its scope's turns by id (in conversation
    order), ``said`` each turn's stemmed words, ``idf`` :func:`idf_weights` of ``said``."""
    idf = idf if idf is not None else idf_weights(said)
    speakers = {t.speaker.lower() for t in turns.values() if t.speaker}
    flags = _fixed_flags(q, turns, said)
    cited = [turns[g] for g in q.gold if g in turns]
    subject = named_speakers(q.text, speakers)
    others = sorted({t.local_id: t.speaker for t in cited if t.speaker and t.speaker.lower() not in subject}.items())
    if len(subject) == 1 and others:
        flags.append(Flag(q.question_id, "speaker", f"the question is about {next(iter(subject)).capitalize()}; "
                          f"cited turn(s) {', '.join(f'{lid} ({who})' for lid, who in others)} are spoken by someone else"))
    topic = (stems(q.text) | stems(q.answer)) - {stem(n) for n in speakers} - speakers
    order = list(turns)
    pos = {tid: i for i, tid in enumerate(order)}

    def weight(tid: str) -> float:
        return round(sum(idf.get(w, 0.0) for w in said[tid] & topic), 2)

    idle = []
    for t in cited:
        i = pos[t.turn_id]
        prev = turns[order[i - 1]] if i > 0 else None
        before = weight(prev.turn_id) if prev is not None and prev.session_id == t.session_id else None
        idle.append((t.local_id, weight(t.turn_id), before))
    return Signals(q.question_id, q.scope_id, tuple(flags), tuple(idle))


def flags_of(sig: Signals, setting: Setting = DEFAULT) -> list[Flag]:
    """The flags ``setting`` draws from one question's :class:`Signals`."""
    flags = [f for f in sig.fixed if setting.citation or f.check != "citation"]
    idle = [(lid, w) for lid, w, before in sig.idle if w < setting.idle_weight
            and not (setting.idle_context and before is not None and before >= setting.idle_weight)]
    if idle:
        flags.append(Flag(sig.question_id, "idle", f"cited turn(s) {', '.join(lid for lid, _ in idle)} share almost no "
                          f"word with the question and the answer (weight {', '.join(f'{w:g}' for _, w in idle)} < "
                          f"{setting.idle_weight:g}{', and so does the turn before' if setting.idle_context else ''})"))
    return flags


def check_question(q: Question, turns: Mapping[str, Turn], said: Mapping[str, set[str]],
                   setting: Setting = DEFAULT) -> list[Flag]:
    """The flags of one question under ``setting``; ``turns`` its scope's turns by id (in conversation
    order), ``said`` each turn's stemmed words."""
    return flags_of(question_signals(q, turns, said), setting)


def _fixed_flags(q: Question, turns: Mapping[str, Turn], said: Mapping[str, set[str]]) -> list[Flag]:
    """The ``citation``, ``unsupported``, ``anchor`` and ``weekday`` flags of one question."""
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


def signals(store: Store, dataset_id: str, question_ids: Sequence[str] | None = None) -> list[Signals]:
    """:func:`question_signals` of the dataset's questions (or of ``question_ids``), in question order."""
    wanted = set(question_ids) if question_ids is not None else None
    out: list[Signals] = []
    by_scope: dict[str, list[Question]] = {}
    for q in store.questions(dataset_id):
        if (wanted is None or q.question_id in wanted) and q.answer.strip():
            by_scope.setdefault(q.scope_id, []).append(q)
    for scope_id, qs in by_scope.items():
        turns = {t.turn_id: t for t in store.scope_turns(dataset_id, scope_id)}
        said = {tid: stems(t.text) for tid, t in turns.items()}
        idf = idf_weights(said)
        out += [question_signals(q, turns, said, idf) for q in qs]
    return out


def suspect_keys(store: Store, dataset_id: str, question_ids: Sequence[str] | None = None,
                 setting: Setting = DEFAULT) -> list[Flag]:
    """Every flag of the dataset's questions (or of ``question_ids``) under ``setting``, in question order."""
    return [f for sig in signals(store, dataset_id, question_ids) for f in flags_of(sig, setting)]


def score_flags(flags: Sequence[Flag], findings: Mapping[str, str], question_ids: Sequence[str],
                targets: Sequence[str] = TARGETS) -> dict[str, Any]:
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


def _rank(score: dict[str, Any]) -> tuple[float, ...]:
    """:func:`choose`'s order: precision >= 50 % first, then target recall, then precision; below that
    precision, F1 of precision and target recall."""
    p, r = score["precision_pct"] or 0.0, score["recall_pct"] or 0.0
    if p >= 50.0:
        return (1.0, r, p)
    return (0.0, 2 * p * r / (p + r) if p + r else 0.0, p)


def choose(sigs: Sequence[Signals], findings: Mapping[str, str], grid: Sequence[Setting] = GRID,
           targets: Sequence[str] = TARGETS) -> tuple[Setting, dict[str, Any]]:
    """The setting of ``grid`` that ranks first (:func:`_rank`) on ``sigs``, and its score (the
    first in grid order on a tie)."""
    qids = [s.question_id for s in sigs]
    best: tuple[Setting, dict[str, Any]] | None = None
    for setting in grid:
        score = score_flags([f for s in sigs for f in flags_of(s, setting)], findings, qids, targets)
        if best is None or _rank(score) > _rank(best[1]):
            best = (setting, score)
    assert best is not None, "an empty grid"
    return best


def cross_validate(sigs: Sequence[Signals], findings: Mapping[str, str], grid: Sequence[Setting] = GRID,
                   targets: Sequence[str] = TARGETS) -> dict[str, Any]:
    """Leave one conversation (scope) out: each scope's flags under the setting :func:`choose` picks
    on the others; the held-out flags pooled and scored, with each fold's pick."""
    scopes = sorted({s.scope_id for s in sigs})
    held: list[Flag] = []
    folds = {}
    for scope in scopes:
        setting, _ = choose([s for s in sigs if s.scope_id != scope], findings, grid, targets)
        mine = [s for s in sigs if s.scope_id == scope]
        flags = [f for s in mine for f in flags_of(s, setting)]
        held += flags
        score = score_flags(flags, findings, [s.question_id for s in mine], targets)
        folds[scope] = {"setting": setting.label, **{k: score[k] for k in ("questions", "flagged", "in_findings",
                                                                          "target_findings", "precision_pct", "recall_pct")}}
    return {"folds": folds, "held_out": score_flags(held, findings, [s.question_id for s in sigs], targets)}

