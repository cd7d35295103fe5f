"""The shapes of a parsed bundle that would break an evaluation later, checked once for every loader.

Covers, over the records a loader returns (``validate(bundle)``, called by ``ingest.ingest`` before
anything is written):

* **refused** (:class:`~bfr_core.errors.InputError` naming file, record and field): a question whose
  scope is not in the bundle, a scope that lists a session the bundle does not hold, and a bundle in
  which no question has anything to search (after the repair below);
* **kept, with a warning in the ingest report**: turns whose text is blank (only spaces), which
  match no words and carry nothing an answer could quote;
* **repaired, with a note in the ingest report**:
  - a session listed twice (or more) in one scope: the first occurrence (and its date) is kept;
    repeated turns made 4 of 6 arms fail that question;
  - a scope with no sessions (an empty LongMemEval haystack) or whose sessions hold no turns: the
    scope and its questions are dropped; stored, every ``bfr eval`` of the dataset stopped ("no
    scope ... in dataset") or the arm failed on an empty pool. Their sessions stay (they are data).

Does not cover: the per-format checks each loader makes while parsing (types, ids unique within the
file, gold ids in the question's scope), which name the line or field where they fail.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from bfr_core.errors import InputError, some
from bfr_core.ingest.common import WARNING
from bfr_core.records import Bundle, Question, Scope


def validate(bundle: Bundle) -> Bundle:
    """``bundle`` with the repairs above (the same object when nothing needs one); raises InputError."""
    path = bundle.source
    sessions = {s.session_id for s in bundle.sessions}
    for scope in bundle.scopes:
        for i, sid in enumerate(scope.session_ids):
            if sid not in sessions:
                raise InputError(path, f"scope {scope.scope_id!r} lists session {sid!r}, which the file does not "
                                 "hold", record=f"scope {scope.scope_id!r}", field=f"sessions[{i}]")
    scope_ids = {s.scope_id for s in bundle.scopes}
    for q in bundle.questions:
        if q.scope_id not in scope_ids:
            raise InputError(path, f"unknown scope {q.scope_id!r} ({len(scope_ids):,} scopes: "
                             f"{some(sorted(scope_ids))})", record=f"question {q.question_id!r}", field="scope")
    bundle = _blank_turns(bundle)
    scopes, repeated = _first_occurrences(bundle.scopes)
    turns = Counter(t.session_id for t in bundle.turns)
    empty = {s.scope_id for s in scopes if not any(turns[sid] for sid in s.session_ids)}
    if not repeated and not empty:
        return bundle
    questions = tuple(q for q in bundle.questions if q.scope_id not in empty)
    if not questions:
        raise InputError(path, f"no question has anything to search: every scope is empty or has no turns "
                         f"({some(sorted(empty))})", field="sessions")
    dropped = [q.question_id for q in bundle.questions if q.scope_id in empty]
    notes = []
    if repeated:
        notes.append(f"repeated sessions: {sum(repeated.values()):,} repeat(s) of a session within one scope "
                     f"removed, the first occurrence kept ({len(repeated):,} scope(s): {some(sorted(repeated))})")
    if empty:
        notes.append(f"empty scopes: {len(empty):,} scope(s) without sessions or turns dropped with their "
                     f"{len(dropped):,} question(s) ({some(dropped)}); nothing there to search")
    kept = tuple(s for s in scopes if s.scope_id not in empty)
    report = replace(bundle.report, scopes=len(kept), questions=len(questions),
                     scoreable=sum(q.scoreable for q in questions), notes=(*bundle.report.notes, *notes),
                     by_type=_by_type(questions))
    return replace(bundle, scopes=kept, questions=questions, report=report)


def _blank_turns(bundle: Bundle) -> Bundle:
    """``bundle`` with a warning naming its blank turns (kept: a message may be an image or a sticker)."""
    blank = [t.turn_id for t in bundle.turns if not t.text.strip()]
    if not blank:
        return bundle
    note = (f"{WARNING} {len(blank):,} turn(s) with blank text kept ({some(blank)}); they hold no words to match "
            "(not even their speaker's name is indexed) and give an answer nothing to quote")
    return replace(bundle, report=replace(bundle.report, notes=(*bundle.report.notes, note)))


def _first_occurrences(scopes: tuple[Scope, ...]) -> tuple[list[Scope], Counter[str]]:
    """Each scope with every repeated session after its first occurrence removed (with its date);
    the number of repeats removed per scope id."""
    out, repeated = [], Counter[str]()
    for s in scopes:
        first = dict.fromkeys(s.session_ids)
        if len(first) == len(s.session_ids):
            out.append(s)
            continue
        seen: set[str] = set()
        keep = [i for i, sid in enumerate(s.session_ids) if not (sid in seen or seen.add(sid))]
        dates = tuple(s.session_dates[i] for i in keep) if s.session_dates else ()
        out.append(replace(s, session_ids=tuple(first), session_dates=dates))
        repeated[s.scope_id] = len(s.session_ids) - len(first)
    return out, repeated


def _by_type(questions: tuple[Question, ...]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter(q.qtype for q in questions).items()))
