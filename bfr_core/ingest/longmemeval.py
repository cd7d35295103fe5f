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

Large files: the file is parsed streaming (``common.JsonArray``, ijson's C parser), one question at a
time; what stays in memory is the records built (each unique session once), not the JSON, so an
M-sized file parses with memory set by its unique content, not its size (``bench/speed/bench_stream.py``).
A repeated session is compared with its first copy by a digest of its JSON (keys sorted), so the first
copy's raw JSON is not kept either. Progress counts the file's bytes read; the sha256 is taken in the
same read. A top level that is not an array is read whole, only to say what it is.

Not covered: ``answer_session_ids`` beyond a consistency note; JSON ``NaN`` / ``Infinity`` (refused
as malformed when streaming); a repeat of a session that differs only in number types (``1`` vs
``1.0``, ``true`` vs ``1``) is refused as different content.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

from bfr_core.dates import parse_lme_date
from bfr_core.errors import InputError
from bfr_core.ingest.common import (
    WARNING,
    JsonArray,
    answer_text,
    expect,
    load_json,
    looks_like,
    require_unique,
    wrong_format,
)
from bfr_core.ingest.common import field as get
from bfr_core.progress import Progress
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn

KIND = "longmemeval"
KEYS = ("question_id", "haystack_sessions", "haystack_session_ids")  # any one marks the format
SHAPE = "a list of {question_id, haystack_sessions, ...}"


def _digest(raw: Any) -> bytes:
    """A session's JSON, keys sorted, hashed: equal for equal JSON whatever the key order."""
    return hashlib.blake2b(json.dumps(raw, sort_keys=True).encode("ascii"), digest_size=16).digest()


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
        self.first: dict[str, tuple[str, bytes]] = {}  # session id -> (record, digest of its raw turns)
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
            if seen[1] != _digest(raw):
                raise InputError(
                    self.path, f"session '{sid}' has different turns here than in {seen[0]} "
                    "(a session id must always name the same content)", record=record, field=prefix,
                )
            return
        date = self.date(date_text)
        turns, gold = _session_turns(sid, raw, date, self.path, record, prefix)
        self.first[sid] = (record, _digest(raw))
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
        # interned: every haystack naming a session shares one id string (M: ~250,000 entries)
        scope = Scope(self.dataset_id, qid, tuple(sys.intern(s) for s in session_ids), ("user", "assistant"),
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
    """Read a LongMemEval file into memory records, streaming; raises InputError naming file, record
    and field. ``progress`` counts the file's bytes (about 100 calls, the last at the file's size)."""
    p = str(path)
    with JsonArray(path, "question") as src:
        if not src.is_array():  # read whole only to name what it is (as the whole-file reader always did)
            raise wrong_format(p, "LongMemEval", SHAPE, load_json(path))
        items = src.items()
        first = next(items, None)
        if first is None or not looks_like([first], KEYS):
            raise wrong_format(p, "LongMemEval", SHAPE, [] if first is None else [first])
        parts = _read(p, chain([first], items), dataset_id, _by_bytes(src, progress))
        sha256 = src.sha256()
    if progress:
        progress(src.size, src.size, parts[2][-1].question_id)
    return _bundle(p, *parts, sha256)


def load_items(path: str | Path, data: Any, *, sha256: str, dataset_id: str | None = None) -> Bundle:
    """The Bundle of a LongMemEval file already parsed whole (``data``: its top-level value): the
    whole-file path :func:`load_longmemeval` replaced, kept for the bench and the tests that compare
    the two."""
    p = str(path)
    if not looks_like(data, KEYS):
        raise wrong_format(p, "LongMemEval", SHAPE, data)
    return _bundle(p, *_read(p, data, dataset_id, lambda _label: None), sha256)


def _read(path: str, items: Iterable[Any], dataset_id: str | None, step: Callable[[str], None]
          ) -> tuple[_Builder, list[Scope], list[Question], Counter[str]]:
    builder = _Builder(path, dataset_id or "longmemeval")
    scopes, questions, counts = [], [], Counter[str]()
    for n, item in enumerate(items):
        scope, question = builder.question(n, item, counts)
        scopes.append(scope)
        questions.append(question)
        step(question.question_id)
    require_unique((q.question_id for q in questions), "question", path)
    return builder, scopes, questions, counts


def _by_bytes(src: JsonArray, progress: Progress | None) -> Callable[[str], None]:
    """Call ``progress(bytes read, file size, label)`` each time another 1 % of the file is read; the
    call at the file's size is left to the end of the parse (the parser reads ahead)."""
    stride = max(1, src.size // 100)
    shown = [-1]

    def step(label: str) -> None:
        done = src.done
        if progress and done < src.size and done // stride > shown[0]:
            shown[0] = done // stride
            progress(done, src.size, label)

    return step


def _bundle(path: str, b: _Builder, scopes: list[Scope], questions: list[Question], counts: Counter[str],
            sha256: str) -> Bundle:
    occurrences = sum(len(s.session_ids) for s in scopes)
    no_gold = [q for q in questions if not q.gold]
    abstention = sum(q.is_abstention for q in questions)
    notes = [
        f"sessions: {occurrences:,} haystack entries -> {len(b.sessions):,} unique sessions "
        f"({len(b.shared):,} shared by several haystacks, identical content checked)",
        f"gold: {sum(len(q.gold) for q in questions):,} has_answer turns; {len(no_gold)} question(s) without "
        f"gold turns ({sum(q.is_abstention for q in no_gold)} of them abstention); {abstention} abstention in all",
    ]
    if questions and not any(q.gold for q in questions) and abstention < len(questions):
        notes.append(f"{WARNING} no turn of the file carries has_answer: true, so no question has gold turns; Turn "
                     "Hit counts each as a miss (as LongMemEval's scorer does) and Gold Hit, ER and CER are "
                     "undefined. Answers (--answer, --judge) are still scored")
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
        dataset_id=b.dataset_id, kind=KIND, source=path, source_sha256=sha256,
        sessions=tuple(b.sessions), turns=tuple(b.turns), scopes=tuple(scopes), questions=tuple(questions),
        report=report, extra={"haystack_entries": occurrences, "shared_sessions": len(b.shared),
                              "redated_sessions": len(b.redated)},
    )
