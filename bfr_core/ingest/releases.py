"""Which LongMemEval release a file is: by its SHA-256 when we know it, else by its shape.

Covers: :data:`KNOWN_SHA256` (release files whose hash we have checked against a copy: only the
dev50 sample in ``../shared/data``; the official ``longmemeval_s_cleaned.json``,
``longmemeval_m_cleaned.json`` and ``longmemeval_oracle.json`` hashes were not found in any source
we could read, so none is listed rather than guessed) and :func:`recognise`, which names the
release from the hash or, failing that, from the parsed bundle: oracle when every haystack session
is an evidence session (``answer_`` ids), M when haystacks hold 200 sessions or more (about 500),
S when they hold fewer (about 50); "full" at the official 500 questions, else a subset.
Does not cover: LoCoMo, BEAM or LoCoMo-Plus (one release each, named by their loaders).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bfr_core.records import Bundle

FULL_QUESTIONS = 500
M_MIN_SESSIONS = 200  # S haystacks hold 38-62 sessions, M about 500
KNOWN_SHA256: dict[str, str] = {
    "104946f7122eb66f0235630b562ec95b30c414763dd19aad30d17a98d25e0f16":
        "LongMemEval-S dev50 (50 questions of longmemeval_s_cleaned.json, stratified by type)",
}


@dataclass(frozen=True, slots=True)
class Release:
    name: str
    by: str  # "sha256" or "shape"

    @property
    def note(self) -> str:
        how = "recognised by its sha256" if self.by == "sha256" else "sha256 not a known release file; recognised by shape"
        return f"release: {self.name} ({how})"


def recognise(bundle: Bundle) -> Release:
    """The release ``bundle`` (a LongMemEval ingest) was read from."""
    known = KNOWN_SHA256.get(bundle.source_sha256)
    if known:
        return Release(known, "sha256")
    sizes = [len(s.session_ids) for s in bundle.scopes] or [0]
    evidence_only = all(sid.startswith("answer_") for s in bundle.scopes for sid in s.session_ids)
    if evidence_only:
        kind = "LongMemEval oracle (evidence sessions only)"
    elif statistics.median(sizes) >= M_MIN_SESSIONS:
        kind = "LongMemEval-M"
    else:
        kind = "LongMemEval-S"
    n = len(bundle.questions)
    extent = "full, 500 questions" if n == FULL_QUESTIONS else f"a subset: {n} questions"
    return Release(f"{kind} ({extent}; median haystack {statistics.median(sizes):g} sessions)", "shape")
