"""BEAM loader: small hand-made folders for the conventions and errors, plus the real copy when present."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bfr_core.cli import main
from bfr_core.dates import parse_beam_date
from bfr_core.errors import InputError
from bfr_core.ingest.beam import conversation_dirs, evidence_ids, load_beam, tier_order
from bfr_core.ingest.sources import data_dir
from bfr_core.store import Store

BEAM = data_dir() / "beam"


def _chat() -> list[dict[str, Any]]:
    """Two batches: three sessions, eight messages (ids 0-7); the second batch has its own anchor."""
    return [
        {"batch_number": 1, "time_anchor": None, "turns": [
            [{"role": "user", "id": 0, "content": "plan my sprint", "time_anchor": "March-15-2024"},
             {"role": "assistant", "id": 1, "content": "sure"}],
            [{"role": "user", "id": 2, "content": "sprint ends March 29"},
             {"role": "assistant", "id": 3, "content": "noted"},
             {"role": "user", "id": 4, "content": "and flask"},
             {"role": "assistant", "id": 5, "content": "ok"}],
        ]},
        {"batch_number": 2, "turns": [
            [{"role": "user", "id": 6, "content": "deploy", "time_anchor": "April-2-2024"},
             {"role": "assistant", "id": 7, "content": "done"}],
        ]},
    ]


def _probes() -> dict[str, Any]:
    return {
        "abstention": [{"question": "my background?", "ideal_response": "not in the chat"}],
        "information_extraction": [{"question": "When does the sprint end?", "answer": "March 29",
                                    "source_chat_ids": [2]}],
        "contradiction_resolution": [{"question": "Flask?", "ideal_answer": "you said both",
                                      "source_chat_ids": {"first_statement": [4], "second_statement": [2, 4]}}],
        "event_ordering": [{"question": "order?", "answer": "a then b", "source_chat_ids": [[0, 2], 6, 99]}],
        "instruction_following": [{"question": "show code", "expected_compliance": "highlighted",
                                   "source_chat_ids": []}],
    }


def _write(root: Path, tier: str = "100K", n: str = "1", chat: Any = None, probes: Any = None) -> Path:
    folder = root / tier / n
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chat.json").write_text(json.dumps(_chat() if chat is None else chat), encoding="utf-8")
    (folder / "probing_questions.json").write_text(json.dumps(_probes() if probes is None else probes),
                                                   encoding="utf-8")
    return folder


def test_one_conversation(tmp_path: Path) -> None:
    b = load_beam(_write(tmp_path), dataset_id="b")
    assert [s.scope_id for s in b.scopes] == ["100K/1"]
    assert b.scopes[0].session_ids == ("100K/1:S1", "100K/1:S2", "100K/1:S3")
    assert [t.turn_id for t in b.turns][:3] == ["100K/1:0", "100K/1:1", "100K/1:2"]
    assert b.turns[2].local_id == "2" and b.turns[2].speaker == "user" and b.turns[2].idx == 0
    assert [s.date for s in b.sessions] == [datetime(2024, 3, 15)] * 2 + [datetime(2024, 4, 2)]
    q = {x.qtype: x for x in b.questions}
    assert q["abstention"].is_abstention and not q["abstention"].scoreable and q["abstention"].gold == ()
    assert q["abstention"].answer == "not in the chat"
    assert (q["information_extraction"].gold, q["information_extraction"].answer) == (("100K/1:2",), "March 29")
    assert q["contradiction_resolution"].gold == ("100K/1:4", "100K/1:2")
    assert q["event_ordering"].gold == ("100K/1:0", "100K/1:2", "100K/1:6")  # id 99 names no message: dropped
    assert q["instruction_following"].answer == "highlighted" and not q["instruction_following"].scoreable
    assert q["information_extraction"].question_id == "100K/1:information_extraction:0"
    assert b.report.scoreable == 3 and b.extra["gold_dropped"] == 1
    assert any("information_extraction 1/1" in n for n in b.report.notes)


def test_tier_and_root_folders_in_size_order(tmp_path: Path) -> None:
    for tier, n in (("1M", "2"), ("100K", "10"), ("100K", "2"), ("500K", "1")):
        _write(tmp_path, tier, n)
    assert [s for s, _ in conversation_dirs(tmp_path / "100K")] == ["100K/2", "100K/10"]
    b = load_beam(tmp_path)
    assert [s.scope_id for s in b.scopes] == ["100K/2", "100K/10", "500K/1", "1M/2"]
    assert len(b.questions) == 4 * 5
    assert b.source_sha256 == load_beam(tmp_path).source_sha256
    assert tier_order("1M") > tier_order("500K") > tier_order("100K")


def test_sha_follows_content(tmp_path: Path) -> None:
    folder = _write(tmp_path)
    before = load_beam(folder).source_sha256
    probes = _probes()
    probes["abstention"][0]["question"] = "changed?"
    _write(tmp_path, probes=probes)
    assert load_beam(folder).source_sha256 != before


@pytest.mark.parametrize(
    ("mutate", "file", "record", "field"),
    [
        (lambda c, p: c[0]["turns"][1][0].pop("content"), "chat.json", "batch 0", "turns[1][0].content"),
        (lambda c, p: c[0]["turns"][0][1].update(id="1"), "chat.json", "batch 0", "turns[0][1].id"),
        (lambda c, p: c[1]["turns"][0][0].update(time_anchor="Smarch-1-2024"), "chat.json", "batch 1", "time_anchor"),
        (lambda c, p: p["information_extraction"][0].pop("question"), "probing_questions.json",
         "information_extraction[0]", "question"),
        (lambda c, p: p["event_ordering"][0].update(source_chat_ids=["6"]), "probing_questions.json",
         "event_ordering[0]", "source_chat_ids[0]"),
    ],
)
def test_bad_fields_name_file_record_field(tmp_path: Path, mutate, file: str, record: str, field: str) -> None:
    chat, probes = _chat(), _probes()
    mutate(chat, probes)
    folder = _write(tmp_path, chat=chat, probes=probes)
    with pytest.raises(InputError) as err:
        load_beam(folder)
    assert (err.value.path, err.value.record, err.value.field) == (str(folder / file), record, field)


def test_duplicate_ids_missing_files_and_bad_shapes(tmp_path: Path) -> None:
    chat = _chat()
    chat[1]["turns"][0][1]["id"] = 3
    with pytest.raises(InputError, match="duplicate message"):
        load_beam(_write(tmp_path, "100K", "1", chat=chat))
    with pytest.raises(InputError, match="no BEAM conversation"):
        load_beam(_empty(tmp_path))
    with pytest.raises(InputError, match="folder not found"):
        load_beam(tmp_path / "nope")
    folder = _write(tmp_path, "100K", "3")
    (folder / "probing_questions.json").unlink()
    with pytest.raises(InputError, match="file not found"):
        load_beam(folder)
    with pytest.raises(InputError, match="not a BEAM chat.json"):
        load_beam(_write(tmp_path, "100K", "4", chat={"a": 1}))


def _empty(root: Path) -> Path:
    (root / "empty").mkdir(exist_ok=True)
    return root / "empty"


def test_evidence_ids_and_date() -> None:
    assert evidence_ids({"a": [1, [2]], "b": 3}, "f", "r") == [1, 2, 3]
    assert evidence_ids(None, "f", "r") == []
    with pytest.raises(InputError) as err:
        evidence_ids({"a": [True]}, "f", "r")
    assert err.value.field == "source_chat_ids.a[0]"
    assert parse_beam_date("January-5-2025") == datetime(2025, 1, 5)
    assert parse_beam_date("2025-01-05") is None


def test_cli_ingest_folder_and_nothing_written_on_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _write(tmp_path / "beam")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "beam", str(folder.parent), "--db", str(db), "--no-embed", "--quiet"]) == 0
    assert "scoreable 3" in capsys.readouterr().out
    chat = _chat()
    chat[0]["turns"][0][0]["role"] = None
    _write(tmp_path / "beam", n="2", chat=chat)
    assert main(["ingest", "beam", str(folder.parent), "--db", str(db), "--name", "b2", "--no-embed", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "100K/2/chat.json" in err and "turns[0][0].role" in err
    store = Store(db, read_only=True)
    assert [d["dataset_id"] for d in store.datasets()] == ["beam"]
    store.close()
    assert main(["ingest", "beam", str(tmp_path / "nope"), "--db", str(tmp_path / "t.duckdb"), "--quiet"]) == 2
    assert not (tmp_path / "t.duckdb").exists()


@pytest.mark.slow
@pytest.mark.skipif(not BEAM.is_dir(), reason=f"{BEAM} not available")
def test_real_copy() -> None:
    b = load_beam(BEAM)
    r = b.report
    assert (r.scopes, r.questions) == (64, 1280)
    assert b.extra["tiers"] == {"100K": 20, "500K": 35, "1M": 9}
    assert dict(r.by_type) == dict.fromkeys(dict(r.by_type), 128) and len(r.by_type) == 10
    scoreable = Counter(q.qtype for q in b.questions if q.scoreable)
    assert scoreable["abstention"] == 0 and scoreable["information_extraction"] == 128
    assert b.extra["gold_dropped"] == 0
    assert all(t.date is not None for t in b.turns)
