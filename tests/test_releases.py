"""LongMemEval release recognition: the dev50 sample by hash, S / M / oracle by shape."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bfr_core.ingest.releases import KNOWN_SHA256, recognise
from bfr_core.ingest.sources import benchmark_file
from bfr_core.records import Bundle, IngestReport, Question, Scope


def _bundle(n_questions: int, sessions: int, answer_only: bool = False, sha: str = "0" * 64) -> Bundle:
    sids = tuple(f"answer_{i}" if answer_only or i == 0 else f"sharegpt_{i}" for i in range(sessions))
    scopes = tuple(Scope("d", f"q{i}", sids) for i in range(n_questions))
    qs = tuple(Question("d", f"q{i}", f"q{i}", "?", "a", "multi-session") for i in range(n_questions))
    return Bundle("d", "longmemeval", "f", sha, (), (), scopes, qs, IngestReport("d", "longmemeval", "f"))


@pytest.mark.parametrize(
    ("bundle", "name"),
    [
        (_bundle(500, 50), "LongMemEval-S (full, 500 questions"),
        (_bundle(500, 480), "LongMemEval-M (full, 500 questions"),
        (_bundle(500, 3, answer_only=True), "LongMemEval oracle (evidence sessions only) (full"),
        (_bundle(20, 45), "LongMemEval-S (a subset: 20 questions"),
    ],
)
def test_by_shape(bundle: Bundle, name: str) -> None:
    r = recognise(bundle)
    assert r.by == "shape" and r.name.startswith(name) and "recognised by shape" in r.note


def test_by_hash_wins() -> None:
    sha = next(iter(KNOWN_SHA256))
    r = recognise(replace(_bundle(50, 480), source_sha256=sha))
    assert r.by == "sha256" and "dev50" in r.name


@pytest.mark.slow
@pytest.mark.skipif(not benchmark_file("longmemeval").is_file(), reason="dev50 sample not available")
def test_shipped_dev50_is_recognised_by_hash(tmp_path) -> None:
    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    store = Store(tmp_path / "s.duckdb")
    report = ingest(store, "longmemeval", benchmark_file("longmemeval"), embed=False)
    assert report.notes[0].startswith("release: LongMemEval-S dev50") and "by its sha256" in report.notes[0]
    store.close()
