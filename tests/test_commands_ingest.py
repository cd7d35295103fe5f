"""``bfr ingest`` end to end through ``bfr_core.cli.main``: reports, one-line errors, store unchanged."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from bfr_core.cli import main
from bfr_core.ingest import ingest
from bfr_core.ingest.demo import demo_file
from bfr_core.ingest.sources import data_dir
from bfr_core.retrieval import embed
from bfr_core.store import Store

DEMO_PATH = demo_file()  # written from bfr_core/ingest/demo.py when missing

DATA = data_dir()
LOCOMO = DATA / "locomo10.json"
DEV50 = DATA / "longmemeval_s_dev50.json.gz"


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    """A store already holding the demo dataset, so 'unchanged' is checked against real content."""
    path = tmp_path / "store.duckdb"
    assert main(["ingest", "jsonl", str(DEMO_PATH), "--db", str(path), "--name", "demo", "--no-embed", "--quiet"]) == 0
    return path


def snapshot(db: Path) -> list[Any]:
    """Everything an ingest could change: dataset rows and per-table row counts."""
    store = Store(db, read_only=True)
    try:
        cur = store.cursor()
        rows = [cur.execute("SELECT dataset_id, source_sha256, ingested_at FROM datasets ORDER BY 1").fetchall()]
        for table in ("sessions", "turns", "scopes", "scope_sessions", "questions", "gold"):
            rows.append(cur.execute(f"SELECT count(*) FROM {table}").fetchone())
        return rows
    finally:
        store.close()


def run_failing(args: list[str], db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run a failing ingest; assert exit 2, a single error line, no traceback, store unchanged."""
    capsys.readouterr()
    before = snapshot(db)
    code = main(["ingest", *args, "--db", str(db), "--no-embed", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bfr ingest: error: ")
    assert "Traceback" not in err and out == ""
    assert snapshot(db) == before
    return lines[0]


def test_success_prints_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "new.duckdb"
    assert main(["ingest", "jsonl", str(DEMO_PATH), "--db", str(db), "--no-embed"]) == 0
    out = capsys.readouterr().out
    assert "as 'demo' (jsonl)" in out
    assert "scopes 1  sessions 7  turns 126  questions 7  scoreable 6" in out
    assert "by type: " in out and "temporal-reasoning 2" in out
    assert "embeddings: skipped (--no-embed)" in out


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.is_file(), reason="locomo10.json not available")
def test_locomo_report_and_second_ingest(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "locomo", str(LOCOMO), "--db", str(db), "--no-embed", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "scopes 10  sessions 272  turns 5,882  questions 1,986  scoreable 1,536" in out
    assert "15 id(s) recovered" in out and "3 dropped" in out
    line = run_failing(["locomo", str(LOCOMO)], db, capsys)
    assert "dataset 'locomo' is already in" in line and "this same file was already ingested" in line
    assert "--replace" in line
    # --replace overwrites in place; --name keeps both
    assert main(["ingest", "locomo", str(LOCOMO), "--db", str(db), "--replace", "--no-embed", "--quiet"]) == 0
    assert main(["ingest", "locomo", str(LOCOMO), "--db", str(db), "--name", "loco2", "--no-embed", "--quiet"]) == 0
    store = Store(db, read_only=True)
    assert [d["dataset_id"] for d in store.datasets()] == ["demo", "loco2", "locomo"]
    assert store.counts("locomo")["scoreable"] == 1536
    store.close()


@pytest.mark.slow
@pytest.mark.skipif(not DEV50.is_file(), reason="dev50 not available")
def test_longmemeval_report(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "longmemeval", str(DEV50), "--db", str(db), "--no-embed", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "scopes 50  sessions 2,327  turns 23,958  questions 50  scoreable 50" in out


def test_second_ingest_of_same_file_refused(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = run_failing(["jsonl", str(DEMO_PATH), "--name", "demo"], db, capsys)
    assert "this same file was already ingested" in line


def test_malformed_json(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"sample_id": "c1", "conversation": {]', encoding="utf-8")
    line = run_failing(["locomo", str(bad)], db, capsys)
    assert str(bad) in line and "malformed JSON at line 1, column" in line


def test_malformed_jsonl_line(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = DEMO_PATH.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:-5]
    bad = tmp_path / "cut.jsonl"
    bad.write_text("\n".join(lines), encoding="utf-8")
    line = run_failing(["jsonl", str(bad)], db, capsys)
    assert f"{bad}, record line 4: malformed JSON" in line


def _locomo_sample() -> dict[str, Any]:
    return {"sample_id": "c1", "conversation": {
        "speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 1 May, 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]},
        "qa": [{"question": "q?", "answer": "a", "evidence": ["D1:1"], "category": 4}]}


def test_missing_field(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = _locomo_sample()
    del sample["conversation"]["session_1"][0]["speaker"]
    bad = tmp_path / "missing.json"
    bad.write_text(json.dumps([sample]), encoding="utf-8")
    line = run_failing(["locomo", str(bad)], db, capsys)
    assert f"{bad}, record sample 0 (c1), field 'conversation.session_1[0].speaker': missing required field" in line


def test_mistyped_field(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = _locomo_sample()
    sample["qa"][0]["evidence"] = "D1:1"
    bad = tmp_path / "typed.json"
    bad.write_text(json.dumps([sample]), encoding="utf-8")
    line = run_failing(["locomo", str(bad)], db, capsys)
    assert "record sample 0 (c1), field 'qa[0].evidence': expected a list, got a string" in line


def test_mistyped_field_longmemeval(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    item = {"question_id": "q1", "question_type": "t", "question": "q?", "question_date": "2023/05/30 (Tue) 23:40",
            "answer": "a", "haystack_dates": ["2023/05/20 (Sat) 02:21"], "haystack_session_ids": ["s"],
            "haystack_sessions": [[{"role": "user", "content": ["not", "text"]}]]}
    bad = tmp_path / "lme.json"
    bad.write_text(json.dumps([item]), encoding="utf-8")
    line = run_failing(["longmemeval", str(bad)], db, capsys)
    assert "record question 0 (q1), field 'haystack_sessions[0][0].content': expected a string, got a list" in line


def test_empty_file(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert "file is empty" in run_failing(["locomo", str(empty)], db, capsys)
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n \n", encoding="utf-8")
    assert "file is empty" in run_failing(["jsonl", str(blank)], db, capsys)


def test_truncated_gzip(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = gzip.compress(json.dumps([_locomo_sample()] * 50).encode(), mtime=0)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    line = run_failing(["longmemeval", str(cut)], db, capsys)
    assert str(cut) in line and "gzip data is truncated or corrupt" in line


def test_unknown_format(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = run_failing(["csv", str(DEMO_PATH)], db, capsys)
    assert "unknown ingest kind 'csv'; choose one of: locomo, longmemeval, jsonl" in line
    # a file of one format given as another
    lme = tmp_path / "lme.json"
    lme.write_text(json.dumps([{"question_id": "q", "haystack_sessions": []}]), encoding="utf-8")
    line = run_failing(["locomo", str(lme)], db, capsys)
    assert "not a LoCoMo file" in line and "looks like a longmemeval file" in line
    line = run_failing(["locomo", str(DEMO_PATH)], db, capsys)
    assert "looks like JSON Lines" in line
    text = tmp_path / "notes.txt"
    text.write_text("just some notes\n", encoding="utf-8")
    assert "malformed JSON" in run_failing(["locomo", str(text)], db, capsys)


def test_missing_file_creates_no_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "never.duckdb"
    code = main(["ingest", "locomo", str(tmp_path / "nope.json"), "--db", str(db), "--quiet"])
    assert code == 2 and "file not found" in capsys.readouterr().err
    assert not db.exists()


def test_embed_hook_is_called_when_module_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(embed, "ensure_embeddings",
                        lambda store, dataset_id, progress=None: calls.append((dataset_id, progress)))
    # the bundle's texts are encoded before the write (plan, then run), then the warm check
    monkeypatch.setattr(embed, "plan_encoding", lambda store, texts, questions: [("plan", len(texts))])
    monkeypatch.setattr(embed, "run_encoding",
                        lambda store, tasks, progress, written, executor=None: calls.append(("run", tasks)))
    store = Store(tmp_path / "e.duckdb")
    report = ingest(store, "jsonl", DEMO_PATH, name="d1")
    assert calls == [("run", [("plan", 126)]), ("d1", None)] and report.notes[-1].startswith("embeddings: ensured")
    report = ingest(store, "jsonl", DEMO_PATH, name="d2", embed=False)
    assert len(calls) == 2 and report.notes[-1] == "embeddings: skipped (--no-embed)"
    store.close()


def test_ray_address_without_the_ray_executor_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    db = tmp_path / "x.duckdb"
    code = main(["ingest", "jsonl", str(DEMO_PATH), "--db", str(db), "--quiet", "--ray-address", "auto"])
    assert code == 2 and "--ray-address needs --executor ray" in capsys.readouterr().err
    assert not db.exists()
