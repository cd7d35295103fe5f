"""LongMemEval (S / M / oracle ``.json``, or the gzipped dev50 sample) -> a Bundle. Pure: no store.

Covers: one scope per question (``scope_id = question_id``) whose sessions keep haystack order;
each session stored once even when many haystacks share it (same id must mean same turns, else an
InputError names both questions); official turn ids ``{session_id}_{index+1}``; speaker = role;
gold = the turns with ``has_answer: true`` in that question's haystack; abstention = id ending in
``_abs``; every question scoreable (the metrics choose their denominators).

Dates: a shared session is dated differently in each haystack it appears in (64 of 64 shared
sessions in dev50), so each scope keeps its own dates (``Scope.session_dates``, stored in
``scope_sessions.date`` and used by ``Store.scope_turns``); ``Session.date`` is the first one seen.
Haystack order is kept as given: it is sorted by day but not always by time within a day.

Not covered: ``answer_session_ids`` beyond a consistency note, streaming parse (LongMemEval-M, 2.7 GB,
needs its whole JSON in memory).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bfr_core.dates import parse_lme_date
from bfr_core.errors import InputError
from bfr_core.ingest.common import (
    answer_text,
    expect,
    load_json,
    looks_like,
    require_unique,
    sha256_file,
    wrong_format,
)
from bfr_core.ingest.common import field as get
from bfr_core.progress import Progress
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn

KIND = "longmemeval"


def turn_id(session_id: str, index: int) -> str:
    """The official turn id (``eval_utils.py``): 1-based position after an underscore."""
    return f"{session_id}_{index + 1}"


def _check_turn(t: Any, path: str, record: str, prefix: str) -> None:
    """Slow path, only reached when the fast type test failed: say exactly what is wrong."""
    expect(t, dict, path, record, prefix)
    get(t, "role", str, path, record, prefix + ".")
    get(t, "content", str, path, record, prefix + ".")
    expect(t.get("has_answer", False), bool, path, record, prefix + ".has_answer")


def _session_turns(
    sid: str, raw: Any, date: datetime | None, path: str, record: str, prefix: str
) -> tuple[list[Turn], tuple[str, ...]]:
    """Turns of one session and the ids of its ``has_answer`` turns."""
    expect(raw, list, path, record, prefix)
    turns, gold = [], []
    for i, t in enumerate(raw):
        if not (type(t) is dict and type(t.get("role")) is str and type(t.get("content")) is str
                and type(t.get("has_answer", False)) is bool):
            _check_turn(t, path, record, f"{prefix}[{i}]")
        tid = turn_id(sid, i)
        turns.append(Turn(tid, sid, i, t["role"], t["content"], date, tid))
        if t.get("has_answer"):
            gold.append(tid)
    return turns, tuple(gold)


class _Builder:
    """Accumulates unique sessions across questions; compares every repeat with the first copy."""

    def __init__(self, path: str, dataset_id: str) -> None:
        self.path, self.dataset_id = path, dataset_id
        self.sessions: list[Session] = []
        self.turns: list[Turn] = []
        self.first: dict[str, tuple[str, list[Any]]] = {}  # session id -> (record, raw turns)
        self.gold: dict[str, tuple[str, ...]] = {}
        self.first_date: dict[str, str] = {}
        self.redated: set[str] = set()
        self.shared: set[str] = set()
        self._dates: dict[str, datetime | None] = {}
        self.undated = 0

    def date(self, text: str) -> datetime | None:
        if text not in self._dates:
            self._dates[text] = parse_lme_date(text)
            self.undated += self._dates[text] is None
        return self._dates[text]

    def add_session(self, sid: str, raw: Any, date_text: str, record: str, prefix: str) -> None:
        seen = self.first.get(sid)
        if seen is not None:
            self.shared.add(sid)
            if date_text != self.first_date[sid]:
                self.redated.add(sid)
            if seen[1] is not raw and seen[1] != raw:
                raise InputError(
                    self.path, f"session '{sid}' has different turns here than in {seen[0]} "
                    "(a session id must always name the same content)", record=record, field=prefix,
                )
            return
        date = self.date(date_text)
        turns, gold = _session_turns(sid, raw, date, self.path, record, prefix)
        self.first[sid] = (record, raw)
        self.first_date[sid] = date_text
        self.gold[sid] = gold
        self.sessions.append(Session(sid, date, date_text))
        self.turns.extend(turns)

    def question(self, n: int, item: Any, counts: Counter[str]) -> tuple[Scope, Question]:
        p = self.path
        expect(item, dict, p, f"question {n}", None)
        qid = get(item, "question_id", str, p, f"question {n}")
        record = f"question {n} ({qid})"
        session_ids = get(item, "haystack_session_ids", list, p, record)
        sessions = get(item, "haystack_sessions", list, p, record)
        dates = get(item, "haystack_dates", list, p, record)
        if not len(session_ids) == len(sessions) == len(dates):
            raise InputError(p, f"haystack lists differ in length (session_ids {len(session_ids)}, "
                             f"sessions {len(sessions)}, dates {len(dates)})", record=record,
                             field="haystack_sessions")
        for i, (sid, raw, date_text) in enumerate(zip(session_ids, sessions, dates, strict=True)):
            expect(sid, str, p, record, f"haystack_session_ids[{i}]")
            expect(date_text, str, p, record, f"haystack_dates[{i}]")
            self.add_session(sid, raw, date_text, record, f"haystack_sessions[{i}]")
        gold = tuple(g for sid in session_ids for g in self.gold[sid])
        answer_sessions = item.get("answer_session_ids")
        if isinstance(answer_sessions, list) and gold:
            counts["gold outside answer_session_ids"] += sum(
                1 for sid in session_ids if self.gold[sid] and sid not in answer_sessions
            )
        date_text = get(item, "question_date", str, p, record)
        scope = Scope(self.dataset_id, qid, tuple(session_ids), ("user", "assistant"),
                      tuple(self.date(d) for d in dates))
        question = Question(
            dataset_id=self.dataset_id, question_id=qid, scope_id=qid,
            text=get(item, "question", str, p, record),
            answer=answer_text(get(item, "answer", (str, int, float), p, record), p, record),
            qtype=get(item, "question_type", str, p, record), gold=gold, date=self.date(date_text),
            is_abstention=qid.endswith("_abs"), scoreable=True,
        )
        return scope, question


def load_longmemeval(
    path: str | Path, *, dataset_id: str | None = None, progress: Progress | None = None
) -> Bundle:
    """Read a LongMemEval file into memory records; raises InputError naming file, record and field."""
    p = str(path)
    data = load_json(path)
    if not looks_like(data, ("question_id", "haystack_sessions", "haystack_session_ids")):
        raise wrong_format(p, "LongMemEval", "a list of {question_id, haystack_sessions, ...}", data)
    builder = _Builder(p, dataset_id or "longmemeval")
    scopes, questions, counts = [], [], Counter[str]()
    step = _every(len(data), progress)
    for n, item in enumerate(data):
        scope, question = builder.question(n, item, counts)
        scopes.append(scope)
        questions.append(question)
        step(n + 1, question.question_id)
    require_unique((q.question_id for q in questions), "question", p)
    return _bundle(p, builder, scopes, questions, counts)


def _every(total: int, progress: Progress | None) -> Callable[[int, str], None]:
    """Call ``progress`` about 100 times over the run, not once per question."""
    stride = max(1, total // 100)

    def step(done: int, label: str) -> None:
        if progress and (done % stride == 0 or done == total):
            progress(done, total, label)

    return step


def _bundle(path: str, b: _Builder, scopes: list[Scope], questions: list[Question], counts: Counter[str]) -> Bundle:
    occurrences = sum(len(s.session_ids) for s in scopes)
    no_gold = [q for q in questions if not q.gold]
    abstention = sum(q.is_abstention for q in questions)
    notes = [
        f"sessions: {occurrences:,} haystack entries -> {len(b.sessions):,} unique sessions "
        f"({len(b.shared):,} shared by several haystacks, identical content checked)",
        f"gold: {sum(len(q.gold) for q in questions):,} has_answer turns; {len(no_gold)} question(s) without "
        f"gold turns ({sum(q.is_abstention for q in no_gold)} of them abstention); {abstention} abstention in all",
    ]
    if b.redated:
        notes.append(
            f"dates: {len(b.redated):,} shared session(s) carry different dates in different haystacks; "
            "each scope keeps its own dates"
        )
    if counts["gold outside answer_session_ids"]:
        notes.append(f"{counts['gold outside answer_session_ids']} haystack session(s) hold has_answer turns "
                     "but are not in that question's answer_session_ids")
    if b.undated:
        notes.append(f"{b.undated} distinct date string(s) could not be parsed (stored as no date)")
    report = IngestReport(
        dataset_id=b.dataset_id, kind=KIND, source=path, scopes=len(scopes), sessions=len(b.sessions),
        turns=len(b.turns), questions=len(questions), scoreable=sum(q.scoreable for q in questions),
        notes=tuple(notes), by_type=tuple(sorted(Counter(q.qtype for q in questions).items())),
    )
    return Bundle(
        dataset_id=b.dataset_id, kind=KIND, source=path, source_sha256=sha256_file(path),
        sessions=tuple(b.sessions), turns=tuple(b.turns), scopes=tuple(scopes), questions=tuple(questions),
        report=report, extra={"haystack_entries": occurrences, "shared_sessions": len(b.shared),
                              "redated_sessions": len(b.redated)},
    )
