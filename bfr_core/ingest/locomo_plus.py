"""LoCoMo-Plus (``locomo_plus.json``) stitched into LoCoMo (``locomo10.json``) -> a Bundle. Pure: no store.

LoCoMo-Plus items are ``{relation_type, cue_dialogue, trigger_query, time_gap, ...}``: a later
"trigger" that must recall an earlier "cue" dialogue. The benchmark's ``data/build_conv.py`` places
each item in a LoCoMo conversation; this loader does the same, with one change: the conversation
is chosen by a documented rule instead of ``random.choice``.

Construction (as ``build_conv.py``):

* **Conversation**: item -> the LoCoMo sample at position ``int(sha256(cue_dialogue + "\\n" +
  trigger_query), 16) mod (number of samples)`` (file order of ``locomo10.json``). The rule reads
  the item's own text, not its position, so an item lands in the same conversation whether it is
  read from the full 401-item file or from any part of it.
* **Times**: query time = the conversation's last session's date + 7 days (its latest date, should an earlier session be dated later); cue time = query time
  minus the time gap (:func:`bfr_core.dates.gap_days`: weeks 7 days, months 30, years 365, "a" /
  "an" = 1; no count found = 0 days).
* **Cue session**: the cue dialogue's ``A:`` / ``B:`` lines become turns of a new session dated at
  the cue time (A -> ``speaker_a``, anything else -> ``speaker_b``; other lines are skipped, as
  there), placed among the conversation's sessions by date (a stable sort: after a session of the
  same time).
* **Stitching** (``stitch``): "session" (the benchmark's own, above) or "embedded", a robustness
  variant that is not the benchmark: the cue's turns go *inside* the host session, the latest of the
  conversation's sessions dated at or before the cue time (the first when none is), at the position
  ``int(sha256(cue_dialogue + "\n" + trigger_query + "\nposition"), 16) mod (host turns + 1)``,
  dated as the host. The item's scope holds a copy of the host (``plus-000/conv-26:S3``, turns
  ``plus-000/conv-26:S3:1``... in order, cue turns numbered like the rest, their ``local_id``
  ``cue:1``...) in place of the shared one. In the benchmark's own stitching every cue is a session
  of one or two turns of its own, which a session-level score can find by its shape alone;
  embedded, it cannot (bench/quality/bench_plus_stitching.py measures what that changes).
* **Question**: the trigger query's text (its ``A:`` / ``B:`` lines, joined by newlines) asked at
  the query time; it is not a turn of the searched store. Gold = every cue turn. ``qtype`` = the
  relation type; the answer field holds the cue dialogue (the benchmark has no reference answer).

One scope per item (``scope_id = question_id = "plus-{position:03d}"``, the position in the file
given): the conversation's sessions (shared, stored once: ids as the ``locomo`` loader gives them,
``conv-26:S3`` / ``conv-26:D3:7``) plus the item's cue session (``plus-000:cue``, turns
``plus-000:cue:1``...). With ``locomo_questions`` the LoCoMo questions are added too, each asked in
the scope of the first item placed in its conversation (ids ``plus-000/conv-26:q001``, types
``locomo/<type>``, scoreable as in LoCoMo): the same questions over a stitched conversation.

Not covered: ``scores`` / ``ranks`` / ``final_similarity_score`` (the authors' construction
metadata, never read), ``model_name``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bfr_core.dates import gap_days
from bfr_core.errors import InputError
from bfr_core.ingest.common import expect, load_json, looks_like, require_unique, sha256_file, wrong_format
from bfr_core.ingest.common import field as get
from bfr_core.ingest.locomo import load_locomo
from bfr_core.ingest.sources import benchmark_file
from bfr_core.progress import Progress
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn

KIND = "locomo-plus"
QUERY_AFTER_LAST = timedelta(days=7)
STITCHES = ("session", "embedded")  # the benchmark's own (a cue session), or the cue inside an existing session


def conversation_index(cue: str, trigger: str, n: int) -> int:
    """The documented stitching rule: which of ``n`` conversations an item goes into."""
    return int(hashlib.sha256(f"{cue}\n{trigger}".encode()).hexdigest(), 16) % n


def parse_dialogue(text: str) -> list[tuple[str, str]]:
    """``(A|B, text)`` per ``A:`` / ``B:`` line (``build_conv.parse_ab_dialogue``)."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith(("A:", "B:")):
            out.append((line[0], line[2:].strip()))
    return out


def embed_position(cue: str, trigger: str, n_turns: int) -> int:
    """Where the embedded stitching puts the cue's turns in a host session of ``n_turns`` turns (0..n_turns)."""
    return int(hashlib.sha256(f"{cue}\n{trigger}\nposition".encode()).hexdigest(), 16) % (n_turns + 1)


def host_session(sessions: list[Session], cue_time: datetime) -> Session:
    """The embedded stitching's host: the latest session dated at or before ``cue_time`` (the first when none is)."""
    before = [s for s in sessions if s.date is not None and s.date <= cue_time]
    return max(before, key=lambda s: s.date) if before else sessions[0]


def stitch_order(sessions: list[Session], cue: Session) -> list[str]:
    """Session ids sorted by date, the cue after any session of the same time (stable, as there)."""
    ordered = sorted([*sessions, cue], key=lambda s: s.date or datetime.min)
    return [s.session_id for s in ordered]


class _Conversation:
    """One LoCoMo conversation as the stitcher needs it."""

    def __init__(self, scope: Scope, sessions: dict[str, Session], turns: dict[str, list[Turn]], path: str) -> None:
        self.scope = scope
        self.sessions = [sessions[s] for s in scope.session_ids]
        self.turns = turns  # session id -> its turns in order (the embedded stitching copies one)
        last = self.sessions[-1]
        if last.date is None:
            raise InputError(path, f"the last session of {scope.scope_id} has no readable date; the query time "
                             "is that date + 7 days", record=scope.scope_id, field=f"{last.session_id} date")
        # after every session: the latest date (the last one's in LoCoMo, whose dates run in order)
        self.query_time = max(s.date for s in self.sessions if s.date is not None) + QUERY_AFTER_LAST


def _item(n: int, item: Any, path: str, convs: list[_Conversation], dataset_id: str, stitch: str = "session"
          ) -> tuple[Session, list[Turn], Scope, Question, int, dict[str, str]]:
    """One item stitched: its new session, that session's turns, its scope, its question, the conversation's
    index, and the host turns the embedded stitching copied (original id -> the copy's; empty otherwise)."""
    record = f"item {n}"
    expect(item, dict, path, record, None)
    cue_text = get(item, "cue_dialogue", str, path, record)
    trigger_text = get(item, "trigger_query", str, path, record)
    relation = get(item, "relation_type", str, path, record)
    gap = get(item, "time_gap", str, path, record)
    cue_lines, trigger_lines = parse_dialogue(cue_text), parse_dialogue(trigger_text)
    if not cue_lines:
        raise InputError(path, "no 'A:' or 'B:' line", record=record, field="cue_dialogue")
    if not trigger_lines:
        raise InputError(path, "no 'A:' or 'B:' line", record=record, field="trigger_query")
    c = convs[conversation_index(cue_text, trigger_text, len(convs))]
    qid = f"plus-{n:03d}"
    try:
        cue_time = c.query_time - timedelta(days=gap_days(gap))
    except OverflowError:  # "5000 years later": before the year 1, where no date goes
        raise InputError(path, f"{gap!r} puts the cue before the year 1 (the conversation is of "
                         f"{c.query_time:%Y}); no date can hold it", record=record, field="time_gap") from None
    a, b = c.scope.speakers[0], c.scope.speakers[1]
    said = [(a if who == "A" else b, text) for who, text in cue_lines]
    if stitch == "embedded":
        host = host_session(c.sessions, cue_time)
        cue, turns, gold, order, renamed = _embedded(
            qid, c, said, host, embed_position(cue_text, trigger_text, len(c.turns.get(host.session_id, []))))
    else:
        cue = Session(f"{qid}:cue", cue_time, cue_time.strftime("%Y-%m-%d %H:%M"))
        turns = [Turn(f"{qid}:cue:{i + 1}", cue.session_id, i, who, text, cue_time, f"cue:{i + 1}")
                 for i, (who, text) in enumerate(said)]
        gold, order, renamed = tuple(t.turn_id for t in turns), tuple(stitch_order(c.sessions, cue)), {}
    scope = Scope(dataset_id, qid, order, c.scope.speakers)
    question = Question(
        dataset_id=dataset_id, question_id=qid, scope_id=qid, text="\n".join(t for _, t in trigger_lines),
        answer="\n".join(f"{who}: {text}" for who, text in said), qtype=relation,
        gold=gold, date=c.query_time, scoreable=True,
    )
    return cue, turns, scope, question, convs.index(c), renamed


def _embedded(qid: str, c: _Conversation, said: list[tuple[str, str]], host: Session, pos: int
              ) -> tuple[Session, list[Turn], tuple[str, ...], tuple[str, ...], dict[str, str]]:
    """The embedded stitching: a copy of ``host`` with the cue's turns at ``pos``; returns the copy, its
    turns, the cue turns' ids (the gold), the scope's session order (the copy in the host's place) and
    each host turn's id -> its copy's."""
    copy = Session(f"{qid}/{host.session_id}", host.date, host.date_text)
    original = c.turns.get(host.session_id, [])
    rows: list[tuple[Turn | None, str, str, str]] = [(t, t.speaker, t.text, t.local_id) for t in original[:pos]]
    rows += [(None, who, text, f"cue:{i + 1}") for i, (who, text) in enumerate(said)]
    rows += [(t, t.speaker, t.text, t.local_id) for t in original[pos:]]
    turns = [Turn(f"{copy.session_id}:{j + 1}", copy.session_id, j, who, text, host.date, local)
             for j, (_, who, text, local) in enumerate(rows)]
    gold = tuple(t.turn_id for t in turns[pos:pos + len(said)])
    order = tuple(copy.session_id if s == host.session_id else s for s in c.scope.session_ids)
    renamed = {was.turn_id: t.turn_id for (was, *_), t in zip(rows, turns, strict=True) if was is not None}
    return copy, turns, gold, order, renamed


def load_locomo_plus(path: str | Path, *, locomo: str | Path | None = None, dataset_id: str | None = None,
                     progress: Progress | None = None, locomo_questions: bool = False, stitch: str = "session") -> Bundle:
    """Read ``locomo_plus.json`` (any part of it) and stitch each item into ``locomo`` (``locomo10.json``),
    as the benchmark does (``stitch`` "session") or inside an existing session ("embedded", not the benchmark)."""
    if stitch not in STITCHES:
        raise InputError(str(path), f"stitch must be one of {', '.join(STITCHES)}, not {stitch!r}")
    if locomo is None:
        locomo = benchmark_file("locomo")
        if not Path(locomo).is_file():
            raise InputError(str(path), "LoCoMo-Plus needs the LoCoMo file it stitches into: pass --locomo locomo10.json")
    p = str(path)
    data = load_json(path)
    if not looks_like(data, ("cue_dialogue", "trigger_query")):
        raise wrong_format(p, "LoCoMo-Plus", "a list of {relation_type, cue_dialogue, trigger_query, time_gap}", data)
    dataset_id = dataset_id or KIND
    base = load_locomo(locomo, dataset_id=dataset_id)
    by_id = {s.session_id: s for s in base.sessions}
    by_session: dict[str, list[Turn]] = {}
    for t in base.turns:
        by_session.setdefault(t.session_id, []).append(t)
    convs = [_Conversation(s, by_id, by_session, str(locomo)) for s in base.scopes]
    sessions, turns = list(base.sessions), list(base.turns)
    scopes: list[Scope] = []
    questions: list[Question] = []
    first_scope: dict[int, str] = {}
    renamed: dict[str, dict[str, str]] = {}  # scope -> host turn id -> its copy's (embedded stitching)
    placed = Counter[str]()
    for n, item in enumerate(data):
        cue, cue_turns, scope, question, conv, moved = _item(n, item, p, convs, dataset_id, stitch)
        renamed[scope.scope_id] = moved
        sessions.append(cue)
        turns += cue_turns
        scopes.append(scope)
        questions.append(question)
        first_scope.setdefault(conv, scope.scope_id)
        placed[convs[conv].scope.scope_id] += 1
        if progress:
            progress(n + 1, len(data), scope.scope_id)
    if locomo_questions:
        questions += _locomo_questions(base, convs, first_scope, renamed)
    require_unique((t.turn_id for t in turns), "turn", p)
    return _bundle(p, base, dataset_id, sessions, turns, scopes, questions, placed, data, stitch)


def _locomo_questions(base: Bundle, convs: list[_Conversation], first_scope: dict[int, str],
                      renamed: dict[str, dict[str, str]]) -> list[Question]:
    """LoCoMo's own questions, each asked in the first stitched scope of its conversation (gold in a host
    session the embedded stitching copied named by the copy's turns)."""
    out = []
    for i, c in enumerate(convs):
        scope_id = first_scope.get(i)
        if scope_id is None:
            continue
        ids = renamed.get(scope_id, {})
        out += [replace(q, question_id=f"{scope_id}/{q.question_id}", scope_id=scope_id, qtype=f"locomo/{q.qtype}",
                        gold=tuple(ids.get(g, g) for g in q.gold))
                for q in base.questions if q.scope_id == c.scope.scope_id]
    return out


def _bundle(path: str, base: Bundle, dataset_id: str, sessions: list[Session], turns: list[Turn],
            scopes: list[Scope], questions: list[Question], placed: Counter[str], data: list[Any],
            stitch: str = "session") -> Bundle:
    gaps = Counter(gap_days(item["time_gap"]) == 0 for item in data)
    notes = [
        "stitching: item -> LoCoMo sample sha256(cue_dialogue + newline + trigger_query) mod "
        f"{len(base.scopes)}; items per conversation: " + ", ".join(f"{k} {v}" for k, v in sorted(placed.items())),
        f"times: query = last session + 7 days; cue = query - time gap ({gaps[True]} gap(s) without a count "
        "and unit, placed at the query time as build_conv.py does)",
        f"gold: every cue turn ({sum(len(s.gold) for s in questions if not s.qtype.startswith('locomo/')):,} in all); "
        "the trigger query is the question, not a stored turn",
        "cue placement: a session of its own at the cue time (the benchmark's)" if stitch == "session" else
        "cue placement: EMBEDDED inside the latest session dated at or before the cue time, at a position read "
        "from the item's text, dated as that session (a robustness variant, not the benchmark)",
    ]
    report = IngestReport(
        dataset_id=dataset_id, kind=KIND, source=path, scopes=len(scopes), sessions=len(sessions), turns=len(turns),
        questions=len(questions), scoreable=sum(q.scoreable for q in questions), notes=tuple(notes),
        by_type=tuple(sorted(Counter(q.qtype for q in questions).items())),
    )
    # the content identity of this dataset (a run's id covers it): both files, and whether LoCoMo's own
    # questions were asked too (``--locomo-questions`` changes the questions, not the files), and the
    # stitching when it is not the benchmark's (the benchmark's keeps the identity it always had)
    own = any(q.qtype.startswith("locomo/") for q in questions)
    variant = "" if stitch == "session" else f"\nstitch={stitch}"
    digest = hashlib.sha256(f"{sha256_file(path)}\n{base.source_sha256}\n{own}{variant}".encode()).hexdigest()
    return Bundle(
        dataset_id=dataset_id, kind=KIND, source=path, source_sha256=digest, sessions=tuple(sessions),
        turns=tuple(turns), scopes=tuple(scopes), questions=tuple(questions), report=report,
        extra={"locomo_source": base.source, "items_per_conversation": dict(placed), "stitch": stitch},
    )
