"""Generic JSON Lines conversations -> a Bundle, so users can load their own data. Pure: no store.

One JSON object per line (blank lines are skipped; the file may be gzipped), each with a ``type``:

``{"type": "session", "session_id": "s1", "date": "2024-03-03T09:15", "scope": "default",
"turns": [{"speaker": "Sam", "text": "...", "turn_id": "s1_1"}, ...]}``

* ``session_id`` (string, unique), ``turns`` (non-empty list) are required; ``date`` (ISO 8601
  date or date-time; an offset is converted to UTC) is optional; ``scope`` (a string, or a list of
  strings for a session several scopes share) defaults to ``"default"``.
* each turn needs ``speaker`` and ``text`` (strings); ``turn_id`` defaults to
  ``{session_id}_{position+1}`` (LongMemEval's convention) and must be unique in the file.

``{"type": "question", "question_id": "q1", "scope": "default", "question": "...", "answer": "...",
"qtype": "temporal", "date": "2024-04-01", "gold": ["s1_3", "s4_1"]}``

* ``question_id``, ``question``, ``answer`` (string or number), ``gold`` (list of turn ids, may be
  empty) are required; ``scope`` defaults to ``"default"``; ``qtype`` to ``"unspecified"``;
  ``is_abstention`` (bool) to false; ``scoreable`` (bool) to "has at least one gold turn".
* every gold id must name a turn of a session in the question's scope.

Records may come in any order; a scope's sessions keep file order. Every object may carry a
``"meta"`` field, which is ignored; any other unknown field is an error (it is usually a typo).
Every error names the line. See ``docs/jsonl-format.md`` for the full description and an example.
Not covered: per-turn dates (a turn has its session's date), images or other media.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bfr_core.dates import ISO_DATE_FORMS, parse_iso_date
from bfr_core.errors import InputError, some
from bfr_core.ingest.common import WARNING, answer_text, expect, iter_jsonl, sha256_file
from bfr_core.ingest.common import field as get
from bfr_core.progress import Progress
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn

KIND = "jsonl"
DEFAULT_SCOPE = "default"
SESSION_KEYS = frozenset({"type", "session_id", "date", "scope", "turns", "meta"})
TURN_KEYS = frozenset({"speaker", "text", "turn_id", "meta"})
QUESTION_KEYS = frozenset(
    {"type", "question_id", "scope", "question", "answer", "qtype", "date", "gold", "is_abstention",
     "scoreable", "meta"}
)


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a record came from, for error messages."""

    path: str
    line: int

    @property
    def record(self) -> str:
        return f"line {self.line}"

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(self.path, message, record=self.record, field=field)


def default_dataset_id(path: str | Path) -> str:
    """The file name without ``.jsonl`` / ``.gz``, reduced to ``[A-Za-z0-9_.-]``."""
    name = Path(path).name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or KIND


def _no_unknown(obj: dict[str, Any], allowed: frozenset[str], at: _Where, prefix: str = "") -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise at.error(f"unknown field (allowed: {', '.join(sorted(allowed))})", prefix + unknown[0])


def _date(obj: dict[str, Any], at: _Where) -> tuple[datetime | None, str]:
    if obj.get("date") is None:
        return None, ""
    text = expect(obj["date"], str, at.path, at.record, "date")
    value = parse_iso_date(text)
    if value is None:
        raise at.error(f"not a date: {text[:60]!r} (expected {ISO_DATE_FORMS}, e.g. 2024-03-03T09:15)", "date")
    return value, text


def _scopes(obj: dict[str, Any], at: _Where) -> tuple[str, ...]:
    value = obj.get("scope", DEFAULT_SCOPE)
    if isinstance(value, str):
        return (value,)
    expect(value, list, at.path, at.record, "scope")
    for i, s in enumerate(value):
        expect(s, str, at.path, at.record, f"scope[{i}]")
    if not value:
        raise at.error("empty list (give at least one scope)", "scope")
    return tuple(dict.fromkeys(value))


@dataclass(frozen=True, slots=True)
class _SessionRec:
    session: Session
    turns: tuple[Turn, ...]
    scopes: tuple[str, ...]
    line: int


def parse_session(obj: dict[str, Any], at: _Where) -> _SessionRec:
    _no_unknown(obj, SESSION_KEYS, at)
    sid = get(obj, "session_id", str, at.path, at.record)
    date, date_text = _date(obj, at)
    raw_turns = get(obj, "turns", list, at.path, at.record)
    if not raw_turns:
        raise at.error("empty list (a session needs at least one turn)", "turns")
    turns = []
    for i, t in enumerate(raw_turns):
        prefix = f"turns[{i}]."
        expect(t, dict, at.path, at.record, f"turns[{i}]")
        _no_unknown(t, TURN_KEYS, at, prefix)
        tid = t.get("turn_id") or f"{sid}_{i + 1}"
        expect(tid, str, at.path, at.record, prefix + "turn_id")
        speaker = get(t, "speaker", str, at.path, at.record, prefix)
        text = get(t, "text", str, at.path, at.record, prefix)
        turns.append(Turn(tid, sid, i, speaker, text, date, tid))
    return _SessionRec(Session(sid, date, date_text), tuple(turns), _scopes(obj, at), at.line)


def parse_question(obj: dict[str, Any], at: _Where, dataset_id: str) -> Question:
    _no_unknown(obj, QUESTION_KEYS, at)
    p, r = at.path, at.record
    gold = get(obj, "gold", list, p, r)
    for i, g in enumerate(gold):
        expect(g, str, p, r, f"gold[{i}]")
    scopes = _scopes(obj, at)
    if len(scopes) != 1:
        raise at.error("a question searches exactly one scope (give a string)", "scope")
    date, _ = _date(obj, at)
    qtype = expect(obj.get("qtype", "unspecified"), str, p, r, "qtype")
    scoreable = expect(obj.get("scoreable", bool(gold)), bool, p, r, "scoreable")
    return Question(
        dataset_id=dataset_id, question_id=get(obj, "question_id", str, p, r), scope_id=scopes[0],
        text=get(obj, "question", str, p, r), answer=answer_text(get(obj, "answer", (str, int, float), p, r), p, r),
        qtype=qtype, gold=tuple(dict.fromkeys(gold)), date=date,
        is_abstention=expect(obj.get("is_abstention", False), bool, p, r, "is_abstention"), scoreable=scoreable,
    )


def load_jsonl(path: str | Path, *, dataset_id: str | None = None, progress: Progress | None = None) -> Bundle:
    """Read a JSONL conversation file into memory records; every error names the line.

    ``progress`` is accepted for the common loader signature; these files parse in well under a second.
    """
    p = str(path)
    dataset_id = dataset_id or default_dataset_id(path)
    sessions: list[_SessionRec] = []
    questions: list[tuple[Question, int]] = []
    for lineno, obj in iter_jsonl(path):
        at = _Where(p, lineno)
        expect(obj, dict, p, at.record, None)
        kind = get(obj, "type", str, p, at.record)
        if kind == "session":
            sessions.append(parse_session(obj, at))
        elif kind == "question":
            questions.append((parse_question(obj, at, dataset_id), lineno))
        else:
            raise at.error(f"unknown record type {kind!r} (expected 'session' or 'question')", "type")
    if not sessions:
        raise InputError(p, "no session records (each line needs \"type\": \"session\" or \"question\")")
    return _bundle(p, dataset_id, sessions, questions)


def _unique(items: list[tuple[str, int]], what: str, path: str) -> dict[str, int]:
    """id -> line where it is defined; a repeat raises an InputError naming both lines."""
    out: dict[str, int] = {}
    for key, line in items:
        if key in out:
            raise InputError(path, f"duplicate {what} {key!r} (first defined on line {out[key]})",
                             record=f"line {line}")
        out[key] = line
    return out


def blank_notes(qs: list[tuple[Question, int]], shown: int = 5) -> list[str]:
    """One warning per field left blank (only spaces) on some question: how many and their first lines.

    A blank question or answer is loaded (it is not malformed JSON) but can never be scored the
    way the user meant, so it is said, not refused.
    """
    out = []
    for name, value in (("question", lambda q: q.text), ("answer", lambda q: q.answer)):
        lines = [line for q, line in qs if not value(q).strip()]
        if lines:
            where = ", ".join(map(str, lines[:shown])) + (", ..." if len(lines) > shown else "")
            out.append(f"{WARNING} {len(lines)} question(s) with a blank {name!r} (line {where})")
    return out


def _bundle(path: str, dataset_id: str, recs: list[_SessionRec], qs: list[tuple[Question, int]]) -> Bundle:
    _unique([(r.session.session_id, r.line) for r in recs], "session_id", path)
    turn_line = _unique([(t.turn_id, r.line) for r in recs for t in r.turns], "turn_id", path)
    _unique([(q.question_id, line) for q, line in qs], "question_id", path)
    scope_sessions: dict[str, list[str]] = {}
    scope_speakers: dict[str, dict[str, None]] = {}
    for r in recs:
        for s in r.scopes:
            scope_sessions.setdefault(s, []).append(r.session.session_id)
            scope_speakers.setdefault(s, {}).update(dict.fromkeys(t.speaker for t in r.turns))
    session_of = {t.turn_id: t.session_id for r in recs for t in r.turns}
    scope_members = {s: set(ids) for s, ids in scope_sessions.items()}
    for q, line in qs:
        if q.scope_id not in scope_sessions:
            raise InputError(path, f"unknown scope {q.scope_id!r} ({len(scope_sessions):,} scopes: "
                             f"{some(sorted(scope_sessions))})", record=f"line {line}", field="scope")
        for i, g in enumerate(q.gold):
            if g not in turn_line:
                raise InputError(path, f"unknown turn id {g!r}", record=f"line {line}", field=f"gold[{i}]")
            if session_of[g] not in scope_members[q.scope_id]:
                raise InputError(path, f"turn {g!r} (line {turn_line[g]}) is not in scope {q.scope_id!r}",
                                 record=f"line {line}", field=f"gold[{i}]")
    scopes = [Scope(dataset_id, s, tuple(ids), tuple(scope_speakers[s])) for s, ids in scope_sessions.items()]
    questions = [q for q, _ in qs]
    turns = [t for r in recs for t in r.turns]
    report = IngestReport(
        dataset_id=dataset_id, kind=KIND, source=path, scopes=len(scopes), sessions=len(recs), turns=len(turns),
        questions=len(questions), scoreable=sum(q.scoreable for q in questions),
        notes=(f"{sum(len(q.gold) for q in questions)} gold turn id(s), all found in their question's scope",
               *blank_notes(qs)),
        by_type=tuple(sorted(Counter(q.qtype for q in questions).items())),
    )
    return Bundle(
        dataset_id=dataset_id, kind=KIND, source=path, source_sha256=sha256_file(path),
        sessions=tuple(r.session for r in recs), turns=tuple(turns), scopes=tuple(scopes),
        questions=tuple(questions), report=report,
    )
