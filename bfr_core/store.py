"""The DuckDB flat store: benchmark data (this module) plus the tables other modules own.

One ``duckdb`` connection per process and store path; every call takes its own ``cursor()`` so
threads never share one. An ingest is one transaction: it lands whole or not at all. Modules
that persist their own things (runs and traces, the LLM cache, labels, embeddings) keep their DDL
beside their code and call :meth:`Store.ensure` once; all SQL is parameterised.

Opening modes. DuckDB lets one process write a file, and a process holding it (read-write *or*
read-only) keeps every other process from writing; a writer keeps others from even reading. So:

* ``Store(path)`` (the ``bfr`` commands): read-write, held until closed. A lock held by another
  process is retried for ``lock_wait_s`` (default ``BFR_LOCK_WAIT_S`` or ``duck.LOCK_WAIT_S``), then a
  :class:`StoreLocked` error names the holder and what to do.
* ``Store(path, shared=True)`` (the app): holds nothing while idle. :meth:`Store.session` opens the
  file read-write for one request and closes it when the last session ends; when another process
  (a running ``bfr eval``) holds it, the session reads a copy instead (``snapshot_of`` names the
  original; the copy is as of the holder's last checkpoint and is reused for ``snapshot_ttl_s``).
  Copies are removed by ``close()``, at the process's exit, and (``remove_stale_snapshots``, the app's
  start) when the process that made them died.

Locks: ``Store._conlock`` (per object, re-entrant) guards the connection; one re-entrant DDL lock per
store file (``_path_lock``) serialises DDL; always in that order. A failed ingest into a new path
removes what it created (``removed_if_failed``).

Does not cover: queuing writes while a snapshot is shown (``evaluation.labels`` queues labels).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from bfr_core.duck import (
    INSERT_CHUNK_ROWS,
    StoreError,
    StoreLocked,
    check_shape,
    connect,
    insert_columns,
    lock_wait_default,
)
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn

SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, source VARCHAR NOT NULL,
    source_sha256 VARCHAR NOT NULL, ingested_at TIMESTAMP DEFAULT current_timestamp,
    report JSON);
CREATE TABLE IF NOT EXISTS sessions (
    dataset_id VARCHAR, session_id VARCHAR, date TIMESTAMP, date_text VARCHAR,
    PRIMARY KEY (dataset_id, session_id));
CREATE TABLE IF NOT EXISTS turns (
    dataset_id VARCHAR, turn_id VARCHAR, session_id VARCHAR, idx INTEGER, speaker VARCHAR,
    text VARCHAR, text_hash VARCHAR, local_id VARCHAR,
    PRIMARY KEY (dataset_id, turn_id));
CREATE TABLE IF NOT EXISTS scopes (
    dataset_id VARCHAR, scope_id VARCHAR, speakers VARCHAR[],
    PRIMARY KEY (dataset_id, scope_id));
CREATE TABLE IF NOT EXISTS scope_sessions (
    dataset_id VARCHAR, scope_id VARCHAR, position INTEGER, session_id VARCHAR,
    PRIMARY KEY (dataset_id, scope_id, position));
ALTER TABLE scope_sessions ADD COLUMN IF NOT EXISTS date TIMESTAMP;
CREATE TABLE IF NOT EXISTS questions (
    dataset_id VARCHAR, question_id VARCHAR, scope_id VARCHAR, text VARCHAR, answer VARCHAR,
    qtype VARCHAR, date TIMESTAMP, category INTEGER, is_abstention BOOLEAN, scoreable BOOLEAN,
    position INTEGER, PRIMARY KEY (dataset_id, question_id));
CREATE TABLE IF NOT EXISTS gold (
    dataset_id VARCHAR, question_id VARCHAR, turn_id VARCHAR,
    PRIMARY KEY (dataset_id, question_id, turn_id));
"""

DATA_TABLES = ("gold", "questions", "scope_sessions", "scopes", "turns", "sessions", "datasets")
# What a run writes (tables other modules own: evaluate.py, llm/cache.py, verdicts.py); ``delete_runs`` clears them.
RUN_TABLES = ("results", "traces", "runs", "llm_calls", "verdicts")

Q_SCOPE_TURNS = """
SELECT t.turn_id, t.session_id, t.idx, t.speaker, t.text, coalesce(ss.date, s.date), t.local_id
FROM scope_sessions ss
JOIN turns t ON t.dataset_id = ss.dataset_id AND t.session_id = ss.session_id
JOIN sessions s ON s.dataset_id = ss.dataset_id AND s.session_id = ss.session_id
WHERE ss.dataset_id = ? AND ss.scope_id = ?
ORDER BY ss.position, t.idx
"""
Q_SESSION_TURNS = """
SELECT t.turn_id, t.session_id, t.idx, t.speaker, t.text, s.date, t.local_id
FROM turns t JOIN sessions s ON s.dataset_id = t.dataset_id AND s.session_id = t.session_id
WHERE t.dataset_id = ? AND t.session_id = ? ORDER BY t.idx
"""
Q_TURNS_BY_ID = """
SELECT t.turn_id, t.session_id, t.idx, t.speaker, t.text, coalesce(ss.date, s.date), t.local_id
FROM turns t JOIN sessions s ON s.dataset_id = t.dataset_id AND s.session_id = t.session_id
LEFT JOIN scope_sessions ss ON ss.dataset_id = t.dataset_id AND ss.session_id = t.session_id AND ss.scope_id = ?
WHERE t.dataset_id = ? AND list_contains(?, t.turn_id)
"""
Q_QUESTIONS = """
SELECT q.question_id, q.scope_id, q.text, q.answer, q.qtype, q.date, q.category,
       q.is_abstention, q.scoreable,
       coalesce(list(g.turn_id ORDER BY g.turn_id) FILTER (WHERE g.turn_id IS NOT NULL), []) AS gold
FROM questions q LEFT JOIN gold g
  ON g.dataset_id = q.dataset_id AND g.question_id = q.question_id
WHERE q.dataset_id = ? AND (? IS NULL OR q.scope_id = ?) AND (? IS NULL OR q.question_id = ?)
GROUP BY ALL ORDER BY any_value(q.position)
"""
Q_SCOPES = """
SELECT sc.scope_id, sc.speakers, list(ss.session_id ORDER BY ss.position) AS sessions,
       list(ss.date ORDER BY ss.position) AS dates
FROM scopes sc JOIN scope_sessions ss ON ss.dataset_id = sc.dataset_id AND ss.scope_id = sc.scope_id
WHERE sc.dataset_id = ? AND (? IS NULL OR sc.scope_id = ?)
GROUP BY ALL ORDER BY sc.scope_id
"""
Q_DATASETS = """
SELECT dataset_id, kind, source, source_sha256, ingested_at, report FROM datasets ORDER BY dataset_id
"""


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:20]


def _turn(row: Sequence[Any]) -> Turn:
    return Turn(row[0], row[1], row[2], row[3], row[4], row[5], row[6] or "")


class Store:
    """A DuckDB file (or ``:memory:``) holding one or more datasets (opening modes: module docstring)."""

    snapshot_of: str = ""  # set while reading a copy: the path of the store it copies

    def __init__(self, path: str | Path = ":memory:", *, read_only: bool = False, shared: bool = False,
                 lock_wait_s: float | None = None, snapshot_ttl_s: float = 60.0) -> None:
        self.path = str(path)
        self.shared = shared and self.path != ":memory:"
        self._read_only = read_only
        self.lock_wait_s = lock_wait_default() if lock_wait_s is None else lock_wait_s
        self.snapshot_ttl_s = snapshot_ttl_s
        self._con: duckdb.DuckDBPyConnection | None = None
        self._users = 0
        self._conlock = threading.RLock()
        self._ddl_lock = threading.RLock() if self.path == ":memory:" else _path_lock(self.path)
        self._ddl: list[str] = []  # every ensure()d DDL, run on the first read-write open after it
        self._applied: set[str] = set()  # DDL already run on the file (shared mode)
        self._snap: tuple[Path, float] | None = None  # (copy, when made) in shared mode
        self._checked: set[str] = set()  # DDL whose tables were found in the right shape (check_shape)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        if not self.shared:
            self._con = connect(self.path, read_only=read_only, wait_s=self.lock_wait_s)
            self.ensure(SCHEMA)
        else:
            self._ddl.append(SCHEMA)

    @classmethod
    def snapshot(cls, path: str | Path) -> Store:
        """A read-only view of a store another process holds: DuckDB's writer lock excludes even
        read-only opens, so the file is copied (without its WAL: the view is as of the holder's
        last checkpoint) and the copy is opened read-only. ``snapshot_of`` names the original."""
        src = Path(path)
        if not src.exists():
            raise StoreError(f"cannot open store {src}: no such file")
        copy = _copy(src)
        try:
            view = cls(copy, read_only=True)
        except BaseException:
            _remove_snapshot(copy)
            raise
        view.snapshot_of = str(src)
        view._snap = (copy, time.monotonic())  # removed by close() (or at exit)
        return view

    @property
    def read_only(self) -> bool:
        return self._read_only or bool(self.snapshot_of)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        with self._conlock:
            if self._con is None:
                self._open()
            assert self._con is not None
            return self._con

    # -- shared mode ------------------------------------------------------------------------
    @contextmanager
    def session(self, *, wait_s: float = 1.0) -> Iterator[Store]:
        """Hold the file for one request (shared mode; a no-op otherwise). The first session opens it
        read-write (waiting up to ``wait_s`` for a short holder), or a copy when another process keeps
        it; the last one to end closes it, so an idle app holds no lock."""
        if not self.shared:
            yield self
            return
        with self._conlock:
            self._users += 1
            if self._con is None:
                try:
                    self._open(wait_s)
                except BaseException:
                    self._users -= 1
                    raise
        try:
            yield self
        finally:
            with self._conlock:
                self._users -= 1
                if self._users == 0:
                    self._release()

    def _open(self, wait_s: float = 1.0) -> None:
        if not self.shared:
            self._con = connect(self.path, read_only=self._read_only, wait_s=self.lock_wait_s)
            return
        src = Path(self.path)
        try:
            self._con = connect(self.path, read_only=self._read_only, wait_s=wait_s)
        except StoreLocked:
            if not src.exists():
                raise
            if self._snap is None or time.monotonic() - self._snap[1] > self.snapshot_ttl_s:
                self._drop_snapshot()
                self._snap = (_copy(src), time.monotonic())
            self._con = connect(str(self._snap[0]), read_only=True)
            self.snapshot_of = str(src)
            return
        self.snapshot_of = ""
        self._drop_snapshot()
        if not self._read_only:
            with self._ddl_lock:
                for ddl in self._ddl:
                    if ddl not in self._applied:
                        self._con.cursor().execute(ddl)
                        self._applied.add(ddl)

    def _release(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def _drop_snapshot(self) -> None:
        if self._snap is not None:
            _remove_snapshot(self._snap[0])
            self._snap = None

    def holds_lock(self) -> bool:
        """Whether this object has the file open right now (shared mode: only inside a session)."""
        return self._con is not None

    # -- plumbing -------------------------------------------------------------------------
    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self.con.cursor()

    def ensure(self, ddl: str) -> None:
        """Create tables another module owns (idempotent ``CREATE ... IF NOT EXISTS``)."""
        if self.shared:
            if ddl not in self._ddl:
                self._ddl.append(ddl)
            if ddl in self._applied:
                return
        elif ddl not in self._checked:  # an odd table fails here, before anything is written
            try:
                check_shape(self.con, ddl, self.path)
            except StoreError:
                self.close()
                raise
            self._checked.add(ddl)
        if self.read_only:
            return
        with self._conlock:  # lock order: _conlock, then _ddl_lock (as in session -> _open)
            if self.shared and self._con is None:  # run by the next writable open (_open)
                return
            cur = self.con.cursor()
            with self._ddl_lock:
                cur.execute(ddl)
                if self.shared:
                    self._applied.add(ddl)

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        else:
            cur.execute("COMMIT")

    def close(self) -> None:
        with self._conlock:
            self._release()
            self._drop_snapshot()

    # -- writing a dataset ----------------------------------------------------------------
    def write_bundle(self, bundle: Bundle, *, replace: bool = False) -> IngestReport:
        """Write one ingest in a single transaction; refuse a second copy unless ``replace``."""
        if self.read_only:
            raise StoreError(f"store {self.path} is open read-only")
        existing = self.dataset(bundle.dataset_id)
        if existing and not replace:
            same = existing["source_sha256"] == bundle.source_sha256
            why = "this same file was already ingested" if same else "a dataset with this name exists"
            raise StoreError(
                f"dataset '{bundle.dataset_id}' is already in {self.path} ({why}); store unchanged. "
                "Pass --replace to overwrite it or --name to keep both."
            )

        with self.transaction() as cur:
            if existing:
                for table in DATA_TABLES:
                    cur.execute(f"DELETE FROM {table} WHERE dataset_id = ?", [bundle.dataset_id])
            d = bundle.dataset_id
            insert_columns(cur, "sessions", {
                "dataset_id": [d] * len(bundle.sessions),
                "session_id": [s.session_id for s in bundle.sessions],
                "date": [s.date for s in bundle.sessions],
                "date_text": [s.date_text for s in bundle.sessions],
            })
            insert_columns(cur, "turns", {
                "dataset_id": [d] * len(bundle.turns),
                "turn_id": [t.turn_id for t in bundle.turns],
                "session_id": [t.session_id for t in bundle.turns],
                "idx": pa.array([t.idx for t in bundle.turns], pa.int32()),
                "speaker": [t.speaker for t in bundle.turns],
                "text": [t.text for t in bundle.turns],
                "text_hash": [text_hash(t.text) for t in bundle.turns],
                "local_id": [t.local_id for t in bundle.turns],
            }, chunk_rows=INSERT_CHUNK_ROWS)  # the texts: one chunk's Arrow copy at a time
            insert_columns(cur, "scopes", {
                "dataset_id": [d] * len(bundle.scopes),
                "scope_id": [s.scope_id for s in bundle.scopes],
                "speakers": pa.array([list(s.speakers) for s in bundle.scopes], pa.list_(pa.string())),
            })
            links = [
                (s.scope_id, i, sid, s.session_dates[i] if s.session_dates else None)
                for s in bundle.scopes for i, sid in enumerate(s.session_ids)
            ]
            insert_columns(cur, "scope_sessions", {
                "dataset_id": [d] * len(links),
                "scope_id": [x[0] for x in links],
                "position": pa.array([x[1] for x in links], pa.int32()),
                "session_id": [x[2] for x in links],
                "date": pa.array([x[3] for x in links], pa.timestamp("us")),
            })
            qs = bundle.questions
            insert_columns(cur, "questions", {
                "dataset_id": [d] * len(qs),
                "question_id": [q.question_id for q in qs],
                "scope_id": [q.scope_id for q in qs],
                "text": [q.text for q in qs],
                "answer": [q.answer for q in qs],
                "qtype": [q.qtype for q in qs],
                "date": [q.date for q in qs],
                "category": pa.array([q.category for q in qs], pa.int32()),
                "is_abstention": [q.is_abstention for q in qs],
                "scoreable": [q.scoreable for q in qs],
                "position": pa.array(list(range(len(qs))), pa.int32()),
            })
            gold = [(q.question_id, g) for q in qs for g in dict.fromkeys(q.gold)]
            insert_columns(cur, "gold", {
                "dataset_id": [d] * len(gold),
                "question_id": [x[0] for x in gold],
                "turn_id": [x[1] for x in gold],
            })
            report = bundle.report
            cur.execute(
                "INSERT INTO datasets (dataset_id, kind, source, source_sha256, report) VALUES (?, ?, ?, ?, ?)",
                [d, bundle.kind, bundle.source, bundle.source_sha256, json.dumps(_report_dict(report))],
            )
        return bundle.report

    def delete_dataset(self, dataset_id: str) -> None:
        with self.transaction() as cur:
            for table in DATA_TABLES:
                cur.execute(f"DELETE FROM {table} WHERE dataset_id = ?", [dataset_id])

    def delete_runs(self, run_id: str | None = None) -> None:
        """Drop one run's rows (every run's when ``run_id`` is None) from the run tables that exist;
        the call cache (``llm_cache``) is left alone."""
        with self.transaction() as cur:
            tables = {r[0] for r in cur.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            for table in (t for t in RUN_TABLES if t in tables):
                cur.execute(f"DELETE FROM {table} WHERE ? IS NULL OR run_id = ?", [run_id, run_id])

    # -- reading --------------------------------------------------------------------------
    def datasets(self) -> list[dict[str, Any]]:
        rows = self.cursor().execute(Q_DATASETS).fetchall()
        keys = ("dataset_id", "kind", "source", "source_sha256", "ingested_at", "report")
        out = [dict(zip(keys, r, strict=True)) for r in rows]
        for d in out:
            d["report"] = json.loads(d["report"]) if d["report"] else {}
        return out

    def dataset(self, dataset_id: str) -> dict[str, Any] | None:
        return next((d for d in self.datasets() if d["dataset_id"] == dataset_id), None)

    def scopes(self, dataset_id: str, scope_id: str | None = None) -> list[Scope]:
        rows = self.cursor().execute(Q_SCOPES, [dataset_id, scope_id, scope_id]).fetchall()
        return [
            Scope(dataset_id, r[0], tuple(r[2]), tuple(r[1] or ()),
                  tuple(r[3]) if any(x is not None for x in r[3] or ()) else ())
            for r in rows
        ]

    def scope(self, dataset_id: str, scope_id: str) -> Scope:
        found = self.scopes(dataset_id, scope_id)
        if not found:
            raise StoreError(f"no scope '{scope_id}' in dataset '{dataset_id}'")
        return found[0]

    def scope_turns(self, dataset_id: str, scope_id: str) -> tuple[Turn, ...]:
        """All turns a question in this scope may search, in session then turn order."""
        rows = self.cursor().execute(Q_SCOPE_TURNS, [dataset_id, scope_id]).fetchall()
        return tuple(_turn(r) for r in rows)

    def session_turns(self, dataset_id: str, session_id: str) -> tuple[Turn, ...]:
        rows = self.cursor().execute(Q_SESSION_TURNS, [dataset_id, session_id]).fetchall()
        return tuple(_turn(r) for r in rows)

    def turns_by_id(self, dataset_id: str, turn_ids: Sequence[str], scope_id: str | None = None) -> dict[str, Turn]:
        """The turns named, each dated as ``scope_id`` dates its session (a LongMemEval session shared by
        two haystacks carries each haystack's date, as :meth:`scope_turns` gives it); with no scope, or
        a session outside it, the session's stored date."""
        rows = self.cursor().execute(Q_TURNS_BY_ID, [scope_id, dataset_id, list(turn_ids)]).fetchall()
        return {r[0]: _turn(r) for r in rows}

    def sessions(self, dataset_id: str) -> list[Session]:
        rows = self.cursor().execute(
            "SELECT session_id, date, date_text FROM sessions WHERE dataset_id = ? ORDER BY session_id",
            [dataset_id],
        ).fetchall()
        return [Session(*r) for r in rows]

    def questions(
        self, dataset_id: str, *, scope_id: str | None = None, scoreable_only: bool = False
    ) -> list[Question]:
        rows = self.cursor().execute(Q_QUESTIONS, [dataset_id, scope_id, scope_id, None, None]).fetchall()
        qs = [_question(dataset_id, r) for r in rows]
        return [q for q in qs if q.scoreable] if scoreable_only else qs

    def question(self, dataset_id: str, question_id: str) -> Question:
        rows = self.cursor().execute(Q_QUESTIONS, [dataset_id, None, None, question_id, question_id]).fetchall()
        if not rows:
            raise StoreError(f"no question '{question_id}' in dataset '{dataset_id}'")
        return _question(dataset_id, rows[0])

    def counts(self, dataset_id: str) -> dict[str, int]:
        cur = self.cursor()
        out = {}
        for table in ("scopes", "sessions", "turns", "questions"):
            out[table] = cur.execute(f"SELECT count(*) FROM {table} WHERE dataset_id = ?", [dataset_id]).fetchone()[0]
        out["scoreable"] = cur.execute(
            "SELECT count(*) FROM questions WHERE dataset_id = ? AND scoreable", [dataset_id]
        ).fetchone()[0]
        return out

    def questions_by_type(self, dataset_id: str) -> dict[str, int]:
        rows = self.cursor().execute(
            "SELECT qtype, count(*) FROM questions WHERE dataset_id = ? GROUP BY qtype ORDER BY qtype",
            [dataset_id],
        ).fetchall()
        return dict(rows)


_PATH_LOCKS: dict[str, threading.RLock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def _path_lock(path: str) -> threading.RLock:
    """The one DDL lock of a store file in this process (every ``Store`` on that file shares it):
    concurrent ``CREATE ... IF NOT EXISTS`` on one file conflict in DuckDB's catalog. Re-entrant,
    and always taken after ``Store._conlock``, never before, so no path takes a lock twice or in
    the other order (a class-wide plain lock deadlocked ``ensure`` -> ``con`` -> ``_open``)."""
    key = str(Path(path).resolve())
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(key, threading.RLock())


# -- snapshot copies ---------------------------------------------------------------------------
# A copy is as large as the store (100 MB+ for LoCoMo). Each lives in its own temporary folder named
# after the process that made it; close() removes it, an exit removes what is left (atexit), and
# remove_stale_snapshots() (the app's start) removes those of processes that died without exiting.
SNAPSHOT_PREFIX = "bfr-snapshot-"
_SNAPSHOTS: set[Path] = set()  # folders of copies this process made and has not removed yet
_LEGACY_SNAPSHOT_AGE_S = 86_400.0  # a folder without a pid (older versions): removed after a day


def _copy(src: Path) -> Path:
    """``src`` copied into a new temporary folder (without its WAL); a failed copy leaves nothing."""
    folder = Path(tempfile.mkdtemp(prefix=f"{SNAPSHOT_PREFIX}{os.getpid()}-"))
    _SNAPSHOTS.add(folder)
    dest = folder / src.name
    try:
        shutil.copyfile(src, dest)
    except BaseException:
        _remove_snapshot(dest)
        raise
    return dest


def _remove_snapshot(copy: Path) -> None:
    shutil.rmtree(copy.parent, ignore_errors=True)
    _SNAPSHOTS.discard(copy.parent)


@atexit.register
def _remove_all_snapshots() -> None:
    for folder in list(_SNAPSHOTS):
        shutil.rmtree(folder, ignore_errors=True)
    _SNAPSHOTS.clear()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_snapshots(tmp: str | Path | None = None) -> list[Path]:
    """Remove snapshot folders left in the temporary folder by processes that are gone (killed
    before their exit handler ran); returns what was removed. Folders of live processes stay."""
    removed = []
    for folder in Path(tmp or tempfile.gettempdir()).glob(f"{SNAPSHOT_PREFIX}*"):
        pid, sep, _ = folder.name[len(SNAPSHOT_PREFIX):].partition("-")
        if sep and pid.isdigit():
            stale = int(pid) != os.getpid() and not _alive(int(pid))
        else:
            try:
                stale = time.time() - folder.stat().st_mtime > _LEGACY_SNAPSHOT_AGE_S
            except OSError:
                continue
        if stale and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return sorted(removed)


@contextmanager
def removed_if_failed(path: str | Path) -> Iterator[None]:
    """Run the body; when it raises and ``path`` did not exist before, remove the store file, its
    WAL and the folders made for it (a failed ingest into a new path leaves nothing behind)."""
    if str(path) == ":memory:" or Path(path).exists():
        yield
        return
    p = Path(path).absolute()
    missing = [d for d in [p.parent, *p.parent.parents] if not d.exists()]  # deepest first
    try:
        yield
    except BaseException:
        for f in (p, Path(f"{p}.wal")):
            f.unlink(missing_ok=True)
        for d in missing:
            try:
                d.rmdir()  # only if empty: never what something else put there meanwhile
            except OSError:
                break
        raise


def _question(dataset_id: str, r: Sequence[Any]) -> Question:
    return Question(
        dataset_id=dataset_id, question_id=r[0], scope_id=r[1], text=r[2], answer=r[3] or "",
        qtype=r[4] or "", date=r[5], category=r[6], is_abstention=bool(r[7]), scoreable=bool(r[8]),
        gold=tuple(r[9] or ()),
    )


def _report_dict(report: IngestReport) -> dict[str, Any]:
    out = asdict(report)
    out["notes"] = list(report.notes)
    out["by_type"] = dict(report.by_type)
    return out
