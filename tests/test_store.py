import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from bfr_core.duck import StoreError, StoreLocked
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn
from bfr_core.store import Store


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


# -- opening modes: a shared store holds no lock while idle (issue 18) ----------------------------
ROOT = Path(__file__).resolve().parents[1]
HOLD = ("import sys; from bfr_core.store import Store; s = Store(sys.argv[1]); "
        "print('ready', flush=True); sys.stdin.read(); s.close()")
OPEN = "import sys; from bfr_core.store import Store; s = Store(sys.argv[1]); print(len(s.datasets())); s.close()"


def _env(wait_s: float) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "BFR_LOCK_WAIT_S": str(wait_s)}


class Holder:
    """Another process holding ``path`` read-write (as `bfr eval` does for its run) until closed."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=_env(2))
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


@pytest.fixture
def db(tmp_path) -> Path:
    s = Store(tmp_path / "s.duckdb")
    s.write_bundle(bundle())
    s.close()
    return tmp_path / "s.duckdb"


def test_a_shared_store_holds_no_lock_between_held_windows(db):
    shared = Store(db, shared=True)
    with shared.held():
        assert shared.holds_lock() and not shared.read_only and shared.datasets()[0]["dataset_id"] == "toy"
    assert not shared.holds_lock()
    # another process (a `bfr eval`) opens it read-write while the shared store object lives on
    got = subprocess.run([sys.executable, "-c", OPEN, str(db)], env=_env(0), capture_output=True, text=True,
                         timeout=60)
    assert got.returncode == 0 and got.stdout.strip() == "1", got.stderr


def test_a_writer_waits_for_a_short_held_window_then_opens(db):
    shared = Store(db, shared=True)
    with shared.held():
        proc = subprocess.Popen([sys.executable, "-c", OPEN, str(db)], env=_env(30), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)  # the other process retries the held lock meanwhile
        assert proc.poll() is None
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.strip() == "1", err


def test_a_store_held_elsewhere_gives_a_snapshot_window_then_the_store_again(db):
    holder = Holder(db)
    shared = Store(db, shared=True)
    try:
        with shared.held(wait_s=0.2):
            assert shared.snapshot_of == str(db) and shared.read_only
            assert [d["dataset_id"] for d in shared.datasets()] == ["toy"]
            copy = Path(shared._snap[0])
        with shared.held(wait_s=0.2):  # a second request reuses the same copy (within its ttl)
            assert Path(shared._snap[0]) == copy
    finally:
        holder.close()
    with shared.held():
        assert not shared.snapshot_of and not shared.read_only and not copy.exists()
        shared.ensure("CREATE TABLE IF NOT EXISTS t_after (x INTEGER)")
        shared.cursor().execute("INSERT INTO t_after VALUES (1)")
    shared.close()


def test_ddl_ensured_during_a_snapshot_runs_on_the_next_writable_open(db):
    holder = Holder(db)
    shared = Store(db, shared=True)
    try:
        with shared.held(wait_s=0.2):
            shared.ensure("CREATE TABLE IF NOT EXISTS later_tbl (x INTEGER)")  # read-only now: recorded
    finally:
        holder.close()
    with shared.held():
        assert shared.cursor().execute("SELECT count(*) FROM later_tbl").fetchone()[0] == 0


def test_a_lock_held_past_the_wait_says_who_holds_it(db):
    holder = Holder(db)
    try:
        start = time.monotonic()
        with pytest.raises(StoreLocked) as err:
            Store(db, lock_wait_s=1.0)
        assert time.monotonic() - start >= 1.0
        msg = str(err.value)
        assert str(db) in msg and "locked by process" in msg and "BFR_LOCK_WAIT_S" in msg
    finally:
        holder.close()


def test_turns_by_id_dates_a_shared_session_as_the_question_scope_does():
    """A session in two haystacks (LongMemEval) is dated by each haystack: what the answerer, the judges
    and an annotator see must carry the date the question's own haystack gives it."""
    d1, d2 = datetime(2023, 1, 10), datetime(2023, 6, 20)
    sessions = (Session("s1", d1, "10 Jan"), Session("f", datetime(2023, 1, 12), "12 Jan"))
    turns = (Turn("s1_1", "s1", 0, "user", "I ordered a tripod today."), Turn("f_1", "f", 0, "user", "Basil tips?"))
    scopes = (Scope("lme", "h1", ("s1", "f"), ("user",), (d1, datetime(2023, 1, 12))),
              Scope("lme", "h2", ("f", "s1"), ("user",), (datetime(2023, 6, 1), d2)))
    questions = tuple(Question("lme", q, h, "When did I order the tripod?", a, "temporal-reasoning", ("s1_1",))
                      for q, h, a in (("q1", "h1", "10 January"), ("q2", "h2", "20 June")))
    s = Store()
    s.write_bundle(Bundle("lme", "longmemeval", "mem", "sha", sessions, turns, scopes, questions,
                          IngestReport("lme", "longmemeval", "mem", 2, 2, 2, 2, 2)))
    assert s.turns_by_id("lme", ["s1_1"], "h1")["s1_1"].date == d1
    assert s.turns_by_id("lme", ["s1_1"], "h2")["s1_1"].date == d2
    assert s.turns_by_id("lme", ["s1_1"])["s1_1"].date == d1  # no scope: the stored (first seen) date
    assert {t.turn_id: t.date for t in s.scope_turns("lme", "h2")}["s1_1"] == d2
