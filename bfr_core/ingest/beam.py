"""BEAM ("Beyond a Million Tokens", ICLR 2026) conversation folders -> a Bundle. Pure: no store access.

Covers: a path that is one conversation folder (``chat.json`` + ``probing_questions.json``), a tier
folder of them (``100K/``: ``100K/1``, ``100K/2``, ...) or the root of tiers (``beam/``); tiers in
size order (100K, 500K, 1M, 10M), conversations in numeric order. One scope per conversation,
``scope_id = "{tier}/{n}"`` (``"100K/1"``): the tier is the first part of every scope, question and
turn id, so each figure can be cut by tier.

Conventions:

* ``chat.json`` is a list of batches, each ``{batch_number, turns}`` with ``turns`` a list of
  sessions, each a list of messages ``{role, id, content, time_anchor?}``. Each inner list is one
  session (``{scope}:S{k}``, k counted over the conversation from 1); each message is one turn,
  ``turn_id = "{scope}:{id}"`` (``local_id`` = the message id as written), speaker = role.
* Dates: a batch's time anchor (``"March-15-2024"``, carried by its first message) dates every
  session of the batch; a batch without one keeps the previous batch's date.
* Questions: ``probing_questions.json`` maps each of the ten abilities (abstention,
  contradiction_resolution, event_ordering, information_extraction, instruction_following,
  knowledge_update, multi_session_reasoning, preference_following, summarization,
  temporal_reasoning) to its questions; ``qtype`` = the ability, ``question_id =
  "{scope}:{ability}:{i}"``. The answer is the first of ``answer``, ``ideal_answer``,
  ``ideal_response``, ``ideal_summary``, ``expected_compliance`` present (instruction and
  preference following have only the last); the LLM-judge ``rubric`` is not read.
* Gold: every message id in ``source_chat_ids`` (a list, a list of lists, or a dict of lists such
  as ``{"first_statement": [58], "second_statement": [24]}``; all flattened) is a gold turn. Ids
  naming no message are dropped and counted in the notes. A question is scoreable for retrieval
  when at least one gold turn remains: none of the abstention questions (they have no
  ``source_chat_ids``), nor the few with an empty or missing list; those are kept, unscored.
  ``conversation_references`` (free text) is not read. Abstention questions are flagged.

Not covered: the 10M tier's multi-plan layout (not in our copy), per-message dates, the rubric.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from bfr_core.dates import parse_beam_date
from bfr_core.errors import InputError
from bfr_core.ingest.common import answer_text, expect, load_json, require_unique, sha256_tree
from bfr_core.ingest.common import field as get
from bfr_core.progress import Progress
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn

KIND = "beam"
CHAT, PROBES = "chat.json", "probing_questions.json"
ANSWER_KEYS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
ABSTENTION = "abstention"
_TIER = re.compile(r"^(\d+)([KM])$", re.IGNORECASE)


def tier_order(name: str) -> tuple[int, str]:
    """Sort key of a tier folder: by size (``100K`` < ``500K`` < ``1M`` < ``10M``), then name."""
    m = _TIER.match(name)
    size = int(m.group(1)) * (1_000 if m.group(2).upper() == "K" else 1_000_000) if m else 1 << 62
    return size, name


def _number_order(path: Path) -> tuple[int, str]:
    return (int(path.name), "") if path.name.isdigit() else (1 << 62, path.name)


def _is_conversation(path: Path) -> bool:
    return (path / CHAT).is_file()


def conversation_dirs(path: str | Path) -> list[tuple[str, Path]]:
    """``(scope_id, folder)`` of every conversation under ``path`` (a conversation, a tier or the root)."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(p), "folder not found")
    if not p.is_dir():
        raise InputError(str(p), "expected a BEAM folder (a conversation, a tier such as 100K/, or beam/)")
    if _is_conversation(p):
        return [(f"{p.parent.name}/{p.name}", p)]
    children = sorted((c for c in p.iterdir() if c.is_dir()), key=_number_order)
    if any(_is_conversation(c) for c in children):
        return [(f"{p.name}/{c.name}", c) for c in children if _is_conversation(c)]
    out = []
    for tier in sorted(children, key=lambda c: tier_order(c.name)):
        convs = sorted((c for c in tier.iterdir() if c.is_dir() and _is_conversation(c)), key=_number_order)
        out += [(f"{tier.name}/{c.name}", c) for c in convs]
    if not out:
        raise InputError(str(p), f"no BEAM conversation found (expected {CHAT} in PATH, PATH/N or PATH/TIER/N)")
    return out


def _sessions(scope_id: str, chat: Any, path: str) -> tuple[list[Session], list[Turn]]:
    if not isinstance(chat, list) or not chat:
        raise InputError(path, f"not a BEAM {CHAT} (expected a non-empty list of batches, got {type(chat).__name__})")
    sessions: list[Session] = []
    turns: list[Turn] = []
    date, date_text = None, ""
    for b, batch in enumerate(chat):
        record = f"batch {b}"
        expect(batch, dict, path, record, None)
        raw_sessions = get(batch, "turns", list, path, record)
        anchor = batch.get("time_anchor") or next(
            (m.get("time_anchor") for s in raw_sessions if isinstance(s, list) for m in s
             if isinstance(m, dict) and m.get("time_anchor")), None)
        if anchor is not None:
            date_text = expect(anchor, str, path, record, "time_anchor")
            date = parse_beam_date(date_text)
            if date is None:
                raise InputError(path, f"unreadable time anchor {date_text!r} (expected e.g. March-15-2024)",
                                 record=record, field="time_anchor")
        for j, raw in enumerate(raw_sessions):
            expect(raw, list, path, record, f"turns[{j}]")
            session = Session(f"{scope_id}:S{len(sessions) + 1}", date, date_text)
            sessions.append(session)
            for idx, m in enumerate(raw):
                prefix = f"turns[{j}][{idx}]."
                expect(m, dict, path, record, prefix.rstrip("."))
                mid = get(m, "id", int, path, record, prefix)
                turns.append(Turn(f"{scope_id}:{mid}", session.session_id, idx, get(m, "role", str, path, record, prefix),
                                  get(m, "content", str, path, record, prefix), date, str(mid)))
    require_unique((t.turn_id for t in turns), f"message (in {scope_id})", path)
    return sessions, turns


def evidence_ids(value: Any, path: str, record: str, name: str = "source_chat_ids") -> list[int]:
    """Every message id in ``source_chat_ids`` (an int, a list, a list of lists or a dict of them)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [i for k, v in value.items() for i in evidence_ids(v, path, record, f"{name}.{k}")]
    if isinstance(value, list):
        return [i for j, v in enumerate(value) for i in evidence_ids(v, path, record, f"{name}[{j}]")]
    return [expect(value, int, path, record, name)]


def _answer(q: dict[str, Any], path: str, record: str) -> str:
    key = next((k for k in ANSWER_KEYS if k in q), None)
    return answer_text(q[key], path, record, key) if key else ""


def _questions(dataset_id: str, scope_id: str, probes: Any, known: set[str], path: str,
               counts: Counter[str]) -> list[Question]:
    if not isinstance(probes, dict):
        raise InputError(path, f"not a BEAM {PROBES} (expected an object from ability to questions)")
    out = []
    for ability, items in probes.items():
        expect(items, list, path, ability, None)
        for i, q in enumerate(items):
            record = f"{ability}[{i}]"
            expect(q, dict, path, record, None)
            ids = evidence_ids(q.get("source_chat_ids"), path, record)
            gold = [f"{scope_id}:{m}" for m in dict.fromkeys(ids)]
            kept = [g for g in gold if g in known]
            counts["gold dropped"] += len(gold) - len(kept)
            out.append(Question(
                dataset_id=dataset_id, question_id=f"{scope_id}:{ability}:{i}", scope_id=scope_id,
                text=get(q, "question", str, path, record), answer=_answer(q, path, record), qtype=ability,
                gold=tuple(kept), is_abstention=ability == ABSTENTION, scoreable=bool(kept),
            ))
    return out


def load_beam(path: str | Path, *, dataset_id: str | None = None, progress: Progress | None = None) -> Bundle:
    """Read BEAM conversation folders into memory records; raises InputError naming file, record, field."""
    dataset_id = dataset_id or KIND
    convs = conversation_dirs(path)
    sessions: list[Session] = []
    turns: list[Turn] = []
    scopes: list[Scope] = []
    questions: list[Question] = []
    files: list[Path] = []
    counts = Counter[str]()
    for n, (scope_id, folder) in enumerate(convs):
        chat_path, probe_path = folder / CHAT, folder / PROBES
        s, t = _sessions(scope_id, load_json(chat_path), str(chat_path))
        questions += _questions(dataset_id, scope_id, load_json(probe_path), {x.turn_id for x in t},
                                str(probe_path), counts)
        sessions += s
        turns += t
        scopes.append(Scope(dataset_id, scope_id, tuple(x.session_id for x in s), ("user", "assistant")))
        files += [chat_path, probe_path]
        if progress:
            progress(n + 1, len(convs), scope_id)
    require_unique((s.scope_id for s in scopes), "conversation", str(path))
    return _bundle(str(path), dataset_id, sessions, turns, scopes, questions, counts, sha256_tree(files, path))


def _bundle(path: str, dataset_id: str, sessions: list[Session], turns: list[Turn], scopes: list[Scope],
            questions: list[Question], counts: Counter[str], digest: str) -> Bundle:
    tiers = Counter(s.scope_id.split("/")[0] for s in scopes)
    abilities = Counter(q.qtype for q in questions)
    scoreable = Counter(q.qtype for q in questions if q.scoreable)
    notes = [
        "tiers: " + ", ".join(f"{t} {n} conversation(s)" for t, n in tiers.items()),
        "scoreable (gold message ids in source_chat_ids) by ability: "
        + ", ".join(f"{a} {scoreable[a]}/{n}" for a, n in sorted(abilities.items())),
        f"gold: {sum(len(q.gold) for q in questions):,} message ids; {counts['gold dropped']} naming no message dropped",
    ]
    report = IngestReport(
        dataset_id=dataset_id, kind=KIND, source=path, scopes=len(scopes), sessions=len(sessions), turns=len(turns),
        questions=len(questions), scoreable=sum(q.scoreable for q in questions), notes=tuple(notes),
        by_type=tuple(sorted(abilities.items())),
    )
    return Bundle(
        dataset_id=dataset_id, kind=KIND, source=path, source_sha256=digest, sessions=tuple(sessions),
        turns=tuple(turns), scopes=tuple(scopes), questions=tuple(questions), report=report,
        extra={"tiers": dict(tiers), "gold_dropped": counts["gold dropped"]},
    )
