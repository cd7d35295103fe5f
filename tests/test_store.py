from datetime import datetime

import pytest

from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn
from bfr_core.store import Store, StoreError


def bundle(dataset: str = "toy", sha: str = "sha-1") -> Bundle:
    sessions = (Session("s1", datetime(2023, 2, 5), "5 Feb"), Session("s2", datetime(2023, 2, 10), "10 Feb"))
    turns = (
        Turn("s1_1", "s1", 0, "user", "I ordered a remote shutter release today."),
        Turn("s1_2", "s1", 1, "assistant", "Great, enjoy it."),
        Turn("s2_1", "s2", 0, "user", "It arrived! O'Brien said 'hi'; -- DROP TABLE turns;"),
    )
    scopes = (Scope(dataset, "h1", ("s2", "s1"), ("user", "assistant")),)
    questions = (
        Question(dataset, "q1", "h1", "How many days?", "5 days", "multi-session", ("s1_1", "s2_1")),
        Question(dataset, "q2", "h1", "Unanswerable?", "n/a", "abstention", (), is_abstention=True),
    )
    return Bundle(dataset, "jsonl", "mem", sha, sessions, turns, scopes, questions,
                  IngestReport(dataset, "jsonl", "mem", 1, 2, 3, 2, 2))


def test_roundtrip_keeps_scope_order_and_gold():
    s = Store()
    s.write_bundle(bundle())
    turns = s.scope_turns("toy", "h1")
    # scope order is the haystack order (s2 before s1), then turn order
    assert [t.turn_id for t in turns] == ["s2_1", "s1_1", "s1_2"]
    assert turns[0].date == datetime(2023, 2, 10)
    q = s.question("toy", "q1")
    assert q.gold == ("s1_1", "s2_1") and q.answer == "5 days"
    assert q.query().text == "How many days?" and not hasattr(q.query(), "gold")
    assert [x.question_id for x in s.questions("toy")] == ["q1", "q2"]
    assert s.counts("toy") == {"scopes": 1, "sessions": 2, "turns": 3, "questions": 2, "scoreable": 2}
    assert "DROP TABLE" in s.turns_by_id("toy", ["s2_1"])["s2_1"].text


def test_second_ingest_refused_and_store_unchanged():
    s = Store()
    s.write_bundle(bundle())
    with pytest.raises(StoreError, match="already"):
        s.write_bundle(bundle())
    assert s.counts("toy")["turns"] == 3


def test_replace_overwrites_in_one_transaction():
    s = Store()
    s.write_bundle(bundle())
    s.write_bundle(bundle(sha="sha-2"), replace=True)
    assert s.counts("toy")["turns"] == 3
    assert s.dataset("toy")["source_sha256"] == "sha-2"


def test_failed_write_rolls_back():
    s = Store()
    b = bundle()
    dup = Bundle(b.dataset_id, b.kind, b.source, b.source_sha256, b.sessions, b.turns + b.turns[:1],
                 b.scopes, b.questions, b.report)
    with pytest.raises(Exception):  # noqa: B017 - duplicate primary key from DuckDB
        s.write_bundle(dup)
    assert s.dataset("toy") is None
    assert s.counts("toy")["turns"] == 0


def test_missing_question_and_scope_are_clear_errors():
    s = Store()
    s.write_bundle(bundle())
    with pytest.raises(StoreError, match="no question 'nope'"):
        s.question("toy", "nope")
    with pytest.raises(StoreError, match="no scope"):
        s.scope("toy", "nope")


def test_read_only_store_refuses_writes(tmp_path):
    path = tmp_path / "x.duckdb"
    Store(path).write_bundle(bundle())
    # DuckDB allows a read-only connection only when no writer holds the file in this process
    import gc

    gc.collect()
    ro = Store(path, read_only=True)
    assert ro.counts("toy")["turns"] == 3
    with pytest.raises(StoreError, match="read-only"):
        ro.write_bundle(bundle("other"))


def test_delete_runs_drops_one_run_or_all_from_the_run_tables_that_exist():
    store = Store()
    cur = store.cursor()
    cur.execute("CREATE TABLE results (run_id VARCHAR, question_id VARCHAR)")
    cur.execute("CREATE TABLE runs (run_id VARCHAR)")
    cur.execute("CREATE TABLE llm_cache (run_id VARCHAR)")  # not a run table: kept
    for table in ("results", "runs", "llm_cache"):
        cur.execute(f"INSERT INTO {table} (run_id) VALUES ('a'), ('b')")
    store.delete_runs("a")  # traces and llm_calls do not exist here: skipped, not an error
    assert cur.execute("SELECT run_id FROM results").fetchall() == [("b",)]
    assert cur.execute("SELECT run_id FROM runs").fetchall() == [("b",)]
    store.delete_runs()
    assert cur.execute("SELECT count(*) FROM results").fetchone() == (0,)
    assert cur.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    assert cur.execute("SELECT count(*) FROM llm_cache").fetchone() == (2,)
