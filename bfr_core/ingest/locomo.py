"""LoCoMo (``locomo10.json``) -> a :class:`~bfr_core.records.Bundle`. Pure: no store access.

Covers: one scope per conversation (``scope_id = sample_id``), sessions in numeric order
(``session_10`` after ``session_9``; ``session_N_date_time`` keys without a ``session_N`` list are
ignored), image turns with their BLIP caption appended, integer answers as text, category-5
questions without ``answer`` (their ``adversarial_answer`` is stored, and the report says so), and
the evidence quirks of the released file.

Evidence ids are read robustly and every repair is counted in the report's notes:

* a string holding several ids (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``) is split on ``;``, ``,``
  and whitespace -> *split list*;
* ``"D30:05"`` -> ``D30:5`` -> *zero-padded*;
* ``"D:11:26"`` -> ``D11:26`` -> *stray colon* (kept: D11:26 is the turn naming "The Alchemist",
  one of the authors that multi-hop question lists);
* ``"D"`` carries no turn number -> dropped as *unparseable*;
* well-formed ids naming no turn of that conversation (``D10:19`` in conv-42, ``D4:36`` in conv-47)
  -> dropped as *no such turn*.

A question is scoreable when its category is 1-4 and at least one gold id survives. Not covered:
the ``event_summary`` / ``observation`` / ``session_summary`` annotations (not read), and question
dates (LoCoMo has none).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bfr_core.dates import parse_locomo_date
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

KIND = "locomo"
QTYPES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCOREABLE_CATEGORIES = frozenset({1, 2, 3, 4})

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_DIA_ID = re.compile(r"^D(:?)(\d+):(\d+)$")

# Repair kinds, in the order the notes list them.
SPLIT, ZERO_PADDED, STRAY_COLON = "split list", "zero-padded", "stray colon"
UNPARSEABLE, NO_SUCH_TURN = "unparseable", "no such turn"


@dataclass
class GoldTally:
    """Counts of evidence ids: matched as written, recovered by a repair, or dropped."""

    strings: int = 0
    exact: int = 0
    recovered: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    dropped_examples: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        rec = sum(self.recovered.values())
        drop = sum(self.dropped.values())
        lines = [
            f"gold: {self.strings:,} evidence strings; {self.exact:,} matched a turn as written; "
            f"{rec} id(s) recovered ({_kinds(self.recovered)}); {drop} dropped ({_kinds(self.dropped)})"
        ]
        if self.dropped_examples:
            lines.append("gold dropped: " + "; ".join(self.dropped_examples))
        return lines


def _kinds(counter: Counter[str]) -> str:
    return ", ".join(f"{k}: {n}" for k, n in sorted(counter.items())) or "none"


def normalise_dia_id(token: str) -> tuple[str, str | None] | None:
    """``(canonical id, repair kind or None)``; None when the token carries no turn number."""
    m = _DIA_ID.match(token)
    if not m:
        return None
    colon, sess, turn = m.groups()
    canonical = f"D{int(sess)}:{int(turn)}"
    if colon:
        return canonical, STRAY_COLON
    if canonical != token:
        return canonical, ZERO_PADDED
    return canonical, None


def resolve_evidence(
    evidence: list[str], known: dict[str, str], tally: GoldTally, where: str
) -> list[str]:
    """Map raw evidence strings to this conversation's dia_ids.

    ``known`` maps each dia_id as written, and its canonical form, to the dia_id as written.
    """
    out: list[str] = []
    for raw in evidence:
        tally.strings += 1
        if known.get(raw) == raw:
            tally.exact += 1
            out.append(raw)
            continue
        tokens = [t for t in _EVIDENCE_SPLIT.split(raw.strip()) if t]
        for token in tokens or [raw]:
            norm = normalise_dia_id(token)
            if norm is None:
                tally.dropped[UNPARSEABLE] += 1
                tally.dropped_examples.append(f"{where} {raw!r} ({UNPARSEABLE})")
                continue
            canonical, repair = norm
            if canonical not in known:
                tally.dropped[NO_SUCH_TURN] += 1
                tally.dropped_examples.append(f"{where} {token!r} ({NO_SUCH_TURN})")
                continue
            tally.recovered[SPLIT if len(tokens) > 1 else (repair or "whitespace")] += 1
            out.append(known[canonical])
    return list(dict.fromkeys(out))


def session_numbers(conversation: dict[str, Any]) -> list[int]:
    """Numbers N of the ``session_N`` lists, ascending (numeric, not string, order)."""
    return sorted(int(m.group(1)) for k in conversation if (m := _SESSION_KEY.match(k)))


def _turn_text(turn: dict[str, Any], path: str, record: str, prefix: str) -> str:
    text = get(turn, "text", str, path, record, prefix)
    caption = turn.get("blip_caption")
    if caption:
        caption = expect(caption, str, path, record, prefix + "blip_caption")
        text = f"{text} [shares a photo: {caption}]"
    return text


def _sessions(
    conv: dict[str, Any], sid: str, path: str, record: str, counts: Counter[str]
) -> Iterator[tuple[Session, list[Turn]]]:
    for n in session_numbers(conv):
        key = f"session_{n}"
        raw_turns = expect(conv[key], list, path, record, f"conversation.{key}")
        date_text = conv.get(f"{key}_date_time", "")
        date_text = expect(date_text, str, path, record, f"conversation.{key}_date_time")
        date = parse_locomo_date(date_text) if date_text else None
        if date is None:
            counts["undated sessions"] += 1
        session = Session(f"{sid}:S{n}", date, date_text)
        turns = []
        for idx, t in enumerate(raw_turns):
            prefix = f"conversation.{key}[{idx}]."
            expect(t, dict, path, record, prefix.rstrip("."))
            dia_id = get(t, "dia_id", str, path, record, prefix)
            turns.append(Turn(
                turn_id=f"{sid}:{dia_id}", session_id=session.session_id, idx=idx,
                speaker=get(t, "speaker", str, path, record, prefix), text=_turn_text(t, path, record, prefix),
                date=date, local_id=dia_id,
            ))
            counts["image turns"] += "blip_caption" in t
        yield session, turns


def _question(
    dataset_id: str, sid: str, i: int, qa: dict[str, Any], known: dict[str, str], tally: GoldTally,
    path: str, record: str, counts: Counter[str],
) -> Question:
    prefix = f"qa[{i - 1}]."
    expect(qa, dict, path, record, prefix.rstrip("."))
    qid = f"{sid}:q{i:03d}"
    category = get(qa, "category", int, path, record, prefix)
    if category not in QTYPES:
        raise InputError(path, f"unknown category {category} (expected 1-5)", record=record,
                         field=prefix + "category")
    if "answer" in qa:
        answer = answer_text(qa["answer"], path, record, prefix + "answer")
    elif category == 5 and "adversarial_answer" in qa:
        answer = answer_text(qa["adversarial_answer"], path, record, prefix + "adversarial_answer")
        counts["adversarial_answer stored as answer"] += 1
    else:
        raise InputError(path, "missing required field", record=record, field=prefix + "answer")
    evidence = get(qa, "evidence", list, path, record, prefix)
    for j, e in enumerate(evidence):
        expect(e, str, path, record, f"{prefix}evidence[{j}]")
    gold = resolve_evidence(evidence, known, tally, qid)
    return Question(
        dataset_id=dataset_id, question_id=qid, scope_id=sid,
        text=get(qa, "question", str, path, record, prefix), answer=answer, qtype=QTYPES[category],
        gold=tuple(f"{sid}:{d}" for d in gold), category=category,
        scoreable=category in SCOREABLE_CATEGORIES and bool(gold),
    )


def load_locomo(path: str | Path, *, dataset_id: str | None = None, progress: Progress | None = None) -> Bundle:
    """Read a LoCoMo file into memory records; raises InputError naming file, record and field."""
    p = str(path)
    data = load_json(path)
    if not looks_like(data, ("sample_id", "conversation", "qa")):
        raise wrong_format(p, "LoCoMo", "a list of {sample_id, conversation, qa}", data)
    dataset_id = dataset_id or "locomo"
    sessions: list[Session] = []
    turns: list[Turn] = []
    scopes: list[Scope] = []
    questions: list[Question] = []
    tally, counts = GoldTally(), Counter[str]()
    for n, sample in enumerate(data):
        record = f"sample {n}"
        expect(sample, dict, p, record, None)
        sid = get(sample, "sample_id", str, p, record)
        record = f"sample {n} ({sid})"
        conv = get(sample, "conversation", dict, p, record)
        speakers = tuple(get(conv, k, str, p, record, "conversation.") for k in ("speaker_a", "speaker_b"))
        if not session_numbers(conv):
            raise InputError(p, "no session_N lists", record=record, field="conversation")
        session_ids = []
        known: dict[str, str] = {}
        for session, session_turns in _sessions(conv, sid, p, record, counts):
            sessions.append(session)
            session_ids.append(session.session_id)
            turns.extend(session_turns)
            for t in session_turns:  # evidence may name a turn as written or in canonical form
                canonical = (normalise_dia_id(t.local_id) or (t.local_id, None))[0]
                known.setdefault(canonical, t.local_id)
                known[t.local_id] = t.local_id
        scopes.append(Scope(dataset_id, sid, tuple(session_ids), speakers))
        counts["dangling date keys"] += sum(
            1 for k in conv if k.endswith("_date_time") and k.removesuffix("_date_time") not in conv
        )
        qas = get(sample, "qa", list, p, record)
        questions.extend(
            _question(dataset_id, sid, i, qa, known, tally, p, record, counts) for i, qa in enumerate(qas, 1)
        )
        if progress:
            progress(n + 1, len(data), sid)
    require_unique((s.scope_id for s in scopes), "sample", p)
    require_unique((t.turn_id for t in turns), "turn (sample_id:dia_id)", p)
    return _bundle(p, dataset_id, sessions, turns, scopes, questions, tally, counts)


def _bundle(
    path: str, dataset_id: str, sessions: list[Session], turns: list[Turn], scopes: list[Scope],
    questions: list[Question], tally: GoldTally, counts: Counter[str],
) -> Bundle:
    by_type = Counter(q.qtype for q in questions)
    scoreable = sum(q.scoreable for q in questions)
    in_scope = sum(q.category in SCOREABLE_CATEGORIES for q in questions)
    notes = [
        f"scoreable: {scoreable:,} of {in_scope:,} category 1-4 questions have at least one usable gold id",
        *tally.notes(),
    ]
    if counts["adversarial_answer stored as answer"]:
        notes.append(
            f"{counts['adversarial_answer stored as answer']} category-5 questions have no 'answer'; their "
            "'adversarial_answer' (the trap answer) is stored instead (category 5 is never scoreable)"
        )
    if counts["image turns"]:
        notes.append(f"{counts['image turns']:,} image turns carry their caption as ' [shares a photo: ...]'")
    if counts["dangling date keys"]:
        notes.append(f"{counts['dangling date keys']} session_N_date_time key(s) without a session_N list ignored")
    if counts["undated sessions"]:
        notes.append(f"{counts['undated sessions']} session(s) have a missing or unparseable date")
    report = IngestReport(
        dataset_id=dataset_id, kind=KIND, source=path, scopes=len(scopes), sessions=len(sessions),
        turns=len(turns), questions=len(questions), scoreable=scoreable, notes=tuple(notes),
        by_type=tuple(sorted(by_type.items())),
    )
    return Bundle(
        dataset_id=dataset_id, kind=KIND, source=path, source_sha256=sha256_file(path),
        sessions=tuple(sessions), turns=tuple(turns), scopes=tuple(scopes), questions=tuple(questions),
        report=report,
        extra={"gold_recovered": dict(tally.recovered), "gold_dropped": dict(tally.dropped),
               "gold_exact": tally.exact, "evidence_strings": tally.strings},
    )
