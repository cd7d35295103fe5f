"""What each question of a stored dataset searches, as JSON Lines: the corpus a system under test runs on.

A researcher's own system is compared with the arms through ``bfr import-run``, which needs its run to
name the store's turn ids over the same conversations. For a benchmark the workbench builds (LoCoMo-Plus
stitched into LoCoMo, by a documented rule or ``--stitch embedded``; BEAM's batches as sessions) the
system cannot rebuild that from the original files without re-implementing the loader, so this module
writes it out: one line per scope, in scope order,

``{"scope_id", "speakers": [...], "sessions": [{"session_id", "date", "turns": [{"turn_id", "speaker",
"text", "local_id"}]}], "questions": [{"question_id", "question", "date", "qtype", "answer", "gold",
"is_abstention", "scoreable"}]}``

with the sessions in the scope's order, each dated as that scope dates it (a LongMemEval session two
haystacks share carries each haystack's date), dates as ISO 8601 (``null`` when undated), and the
store's turn ids, so a run naming them imports as is (``local_id``, the source file's own id, only
where it differs from the turn id). ``blind`` leaves out every label a method must not read: the
questions' ``answer``, ``gold``, ``qtype``, ``is_abstention`` and ``scoreable``, the turns'
``local_id``, and every id, which can carry a label too (LongMemEval's ``answer_...`` sessions hold
the gold, an ``..._abs`` question is an abstention, a LoCoMo-Plus cue session is ``...:cue`` and an
embedded cue's host copy names its host): each id is replaced by :func:`blind_id` (a hash of the
dataset and the id), which ``bfr import-run`` maps back, so a run naming them imports as is. Each line
is one scope's search space and a system must read it apart from the others: under ``--stitch
embedded`` an item's copy of its host session differs from the host, which other lines hold, by
exactly the cue's turns.

Does not cover: reading such a file back (it is an export, not a benchmark format), the store's
vectors, runs (``bfr export-run``), labels (``bfr label-export``).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from bfr_core.jsonl import dumps_line
from bfr_core.progress import Progress
from bfr_core.records import Question, Scope, Turn

LABELS = ("answer", "gold", "qtype", "is_abstention", "scoreable")  # what ``blind`` leaves out of a question
ID_KINDS = {"scope": "c", "session": "s", "turn": "t", "question": "q"}  # a blind id's prefix, by what it names


def blind_id(dataset_id: str, kind: str, raw: str) -> str:
    """The id a blind export gives ``raw`` (a scope, session, turn or question id of ``dataset_id``): its
    kind's letter and 16 hex digits of a sha256 that nothing in the id's text survives into."""
    digest = hashlib.sha256(f"{dataset_id}\0{kind}\0{raw}".encode()).hexdigest()[:16]
    return f"{ID_KINDS[kind]}{digest}"


def _iso(d: datetime | None) -> str | None:
    return d.isoformat(timespec="minutes") if d is not None else None


def scope_record(scope: Scope, turns: tuple[Turn, ...], questions: list[Question], blind: bool = False,
                 stored_dates: dict[str, datetime | None] | None = None) -> dict[str, Any]:
    """One scope's line: its sessions (scope order) with their turns, and the questions asked in it; a
    session's date is the scope's, else its turns', else ``stored_dates``' (a session without turns)."""
    by_session: dict[str, list[Turn]] = defaultdict(list)
    for t in turns:
        by_session[t.session_id].append(t)
    dates = dict(zip(scope.session_ids, scope.session_dates, strict=True)) if scope.session_dates else {}

    def name(kind: str, raw: str) -> str:
        return blind_id(scope.dataset_id, kind, raw) if blind else raw

    sessions = []
    for sid in scope.session_ids:
        ts = by_session.get(sid, [])
        date = dates.get(sid) or (ts[0].date if ts else (stored_dates or {}).get(sid))
        sessions.append({"session_id": name("session", sid), "date": _iso(date), "turns": [
            {"turn_id": name("turn", t.turn_id), "speaker": t.speaker, "text": t.text,
             **({} if blind or t.local_id in ("", t.turn_id) else {"local_id": t.local_id})} for t in ts]})
    return {"scope_id": name("scope", scope.scope_id), "speakers": list(scope.speakers), "sessions": sessions,
            "questions": [question_record(q, blind) for q in questions]}


def question_record(q: Question, blind: bool = False) -> dict[str, Any]:
    """A question's entry: what a method may read (its id blind with ``blind``), and with ``blind`` off its
    labels (:data:`LABELS`)."""
    qid = blind_id(q.dataset_id, "question", q.question_id) if blind else q.question_id
    out: dict[str, Any] = {"question_id": qid, "question": q.text, "date": _iso(q.date)}
    if not blind:
        out.update(qtype=q.qtype, answer=q.answer, gold=list(q.gold), is_abstention=q.is_abstention,
                   scoreable=q.scoreable)
    return out


def corpus_lines(store: Any, dataset_id: str, blind: bool = False, progress: Progress | None = None) -> Iterator[str]:
    """Every scope of ``dataset_id`` as one JSON line (:func:`scope_record`), in scope order."""
    questions: dict[str, list[Question]] = defaultdict(list)
    for q in store.questions(dataset_id):
        questions[q.scope_id].append(q)
    scopes = store.scopes(dataset_id)
    stored = {s.session_id: s.date for s in store.sessions(dataset_id)}
    for n, scope in enumerate(scopes):
        record = scope_record(scope, store.scope_turns(dataset_id, scope.scope_id), questions[scope.scope_id], blind,
                              stored)
        yield dumps_line(record)
        if progress:
            progress(n + 1, len(scopes), scope.scope_id)
