"""Frozen records shared by every module: the flat turn store and what retrieval returns.

Identifiers
-----------
* ``turn_id`` is unique within a dataset. LongMemEval keeps the official convention
  ``{session_id}_{index+1}``. LoCoMo dialogue ids (``D3:7``) repeat across conversations, so the
  stored id is ``{sample_id}:{dia_id}`` (``conv-26:D3:7``) and ``local_id`` keeps the bare ``D3:7``
  for display and for the official scorers.
* A *scope* is what one question searches: a LoCoMo conversation or a LongMemEval haystack.
  Sessions (and their turns) are stored once even when many haystacks share them.

Methods never see a :class:`Question`; they see its :class:`Query` (no answer, no gold, no category).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Turn:
    turn_id: str
    session_id: str
    idx: int  # 0-based position inside its session
    speaker: str  # LoCoMo speaker name; LongMemEval "user" / "assistant"
    text: str  # image turns carry "[shares a photo: caption]" appended
    date: datetime | None = None  # the session's date
    local_id: str = ""  # id as written in the source file (dia_id for LoCoMo)


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    date: datetime | None
    date_text: str = ""


@dataclass(frozen=True, slots=True)
class Scope:
    """What one question searches: ordered sessions (by position in the source)."""

    dataset_id: str
    scope_id: str
    session_ids: tuple[str, ...]
    speakers: tuple[str, ...] = ()
    # Per-scope session dates, parallel to session_ids, when the source dates a shared session
    # differently in each haystack (LongMemEval); empty means "use Session.date".
    session_dates: tuple[datetime | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Query:
    """The part of a question a retrieval method may read."""

    question_id: str
    scope_id: str
    text: str
    date: datetime | None = None


@dataclass(frozen=True, slots=True)
class Question:
    dataset_id: str
    question_id: str
    scope_id: str
    text: str
    answer: str
    qtype: str  # e.g. "multi-hop", "temporal", "knowledge-update"
    gold: tuple[str, ...] = ()  # gold turn ids (dataset-unique ids)
    date: datetime | None = None
    category: int | None = None  # LoCoMo category code 1..5
    is_abstention: bool = False
    scoreable: bool = True  # counts in the headline retrieval metrics

    def query(self) -> Query:
        return Query(self.question_id, self.scope_id, self.text, self.date)


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved turn. ``rank`` is 0-based within the call that returned it."""

    turn_id: str
    score: float
    view: str
    rank: int = 0


@dataclass(frozen=True, slots=True)
class IngestReport:
    """Counts an ingest reports back (and the store keeps in ``datasets.stats``)."""

    dataset_id: str
    kind: str
    source: str
    scopes: int = 0
    sessions: int = 0
    turns: int = 0
    questions: int = 0
    scoreable: int = 0
    notes: tuple[str, ...] = ()  # recovered / dropped gold ids and other remarks
    by_type: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Bundle:
    """Everything one ingest writes, built in memory before the single write transaction."""

    dataset_id: str
    kind: str
    source: str
    source_sha256: str
    sessions: tuple[Session, ...]
    turns: tuple[Turn, ...]
    scopes: tuple[Scope, ...]
    questions: tuple[Question, ...]
    report: IngestReport
    extra: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Step:
    """One decision of a method, as the app replays it and ``bfr trace`` prints it.

    ``evidence`` is the evidence set after the step (ordered, no duplicates); ``calls`` the
    retrieval calls charged so far. ``data`` holds the step's detail as JSON-serialisable values
    (lists, dicts, str, numbers, bool, None); each producing module documents its keys.
    """

    kind: str  # pool | requirements | context | lattice | prefilter | selection | grounding | round | topk | ...
    title: str
    evidence: tuple[str, ...]
    calls: int
    data: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Trace:
    """Everything one arm did for one question; stored per run and question in the store."""

    dataset_id: str
    question_id: str
    arm: str
    budget: str  # budget name ("C6"); "" for arms without completion
    provider: str  # "offline rules" or "provider:model"
    steps: tuple[Step, ...]
    elapsed_ms: float = 0.0

    @property
    def evidence(self) -> tuple[str, ...]:
        return self.steps[-1].evidence if self.steps else ()

    @property
    def calls(self) -> int:
        return self.steps[-1].calls if self.steps else 0

    def to_dict(self) -> dict:
        return {
            "dataset_id": self.dataset_id, "question_id": self.question_id, "arm": self.arm,
            "budget": self.budget, "provider": self.provider, "elapsed_ms": self.elapsed_ms,
            "steps": [
                {"kind": s.kind, "title": s.title, "evidence": list(s.evidence), "calls": s.calls, "data": s.data}
                for s in self.steps
            ],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Trace:
        steps = tuple(
            Step(s["kind"], s["title"], tuple(s["evidence"]), int(s["calls"]), dict(s.get("data") or {}))
            for s in d["steps"]
        )
        return cls(d["dataset_id"], d["question_id"], d["arm"], d["budget"], d["provider"], steps,
                   float(d.get("elapsed_ms", 0.0)))
