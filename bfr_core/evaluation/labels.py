"""Human labels: the annotation tasks, their queues, the sufficiency task's blinded items, label history, export.

Covers
------
* Tasks (:class:`Task`): ``sufficiency`` (is this evidence set enough for the reference answer?) and
  ``answer`` (is this system's answer correct?). Each has its own items, sources and label tables and
  its own label set; they share one label-id sequence, the side file, its flush, and the export. The
  answer task's items and blinding live in ``evaluation.answer_labels``; everything below that takes a
  ``task`` works the same for both (sufficiency when none is given).
* The sufficiency queue: every (question, evidence set) snapshot of finished eval runs, deduplicated by an
  evidence hash, so a set two arms both returned is labelled once (``label_items``; which runs
  and arms produced it is kept apart in ``label_sources`` and never rendered to annotators).
  Every set of one question is cut to the smallest set among them (each arm keeps its own first
  ids, in its own ranking order): a set's size would otherwise tell a top-k arm from a BFR arm
  (docs/annotation.md). The LLM judges' Suff@Set labels belong to an arm's whole set, so they are
  shown beside an item only when the cut left that set whole (``evaluation.agreement``).
* Blinded rendering (paper, Appendix M): question, reference answer and anonymised evidence
  text only. No arm, budget, system answer, turn ids or gold ids; evidence in time order so the
  order cannot betray the method's ranking.
* Labels: ``sufficient`` / ``insufficient`` / ``uncertain`` (answer task: ``correct`` / ``wrong`` /
  ``undecided``) plus a note, saved as an append-only history (``labels``, ``answer_labels``); the
  ``current_labels`` / ``current_answer_labels`` views hold each annotator's latest label.
* Labels saved while another process (a ``bfr eval`` run) holds the store: queued in one side file
  beside it (``<store>.pending-labels.jsonl``, each line naming its task) and written, in order and with
  their saving times, into their task's table by :func:`flush_pending` on the next writable open (the
  app's next request, or ``bfr eval`` at its end).
* Export to CSV or JSONL: every annotator's label versions of the chosen tasks (a ``task`` column) with
  the runs and arms behind each item, or one annotator's own (no other's label, no run or arm, evidence
  ids sorted), each with the judges' labels or verdicts on its item beside it (given by the caller:
  ``agreement.judge_labels``, ``answer_labels.judge_verdicts``).

Does not cover: the LLM judges' labels and agreement between raters (``evaluation.agreement``),
the LLM judging itself (``bfr_core.roles``), the UI (``pages/annotate.py``).
"""

from __future__ import annotations

import csv
import fcntl
import glob
import io
import json
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bfr_core.arm_names import canonical_arm_sql
from bfr_core.duck import fetch_if_tables
from bfr_core.errors import BfrError
from bfr_core.jsonl import dumps_line, split_lines
from bfr_core.outfile import check_output, write_output
from bfr_core.runs import ensure_schema as ensure_runs_schema
from bfr_core.runs import run_versions
from bfr_core.store import Store

LABELS: tuple[str, ...] = ("sufficient", "insufficient", "uncertain")
ANSWER_LABELS: tuple[str, ...] = ("correct", "wrong", "undecided")
JUDGE_PREFIX = "llm:"  # rater names of LLM judges; annotators are plain names
# A result row ``r`` whose Suff@Set judgment applies to the item ``i`` it is a source of: judged, and its
# set not cut for the item (the judges read the whole set)
JUDGED_WHOLE = "(r.suff IS NOT NULL OR r.suff_detail IS NOT NULL) AND len(r.evidence) = len(i.evidence)"

# One label history and its current-label view per task (the same shape), sharing one id sequence
HISTORY_DDL = """
CREATE TABLE IF NOT EXISTS {table} (
    label_id BIGINT PRIMARY KEY DEFAULT nextval('labels_seq'), item_id VARCHAR NOT NULL,
    annotator VARCHAR NOT NULL, label VARCHAR NOT NULL, note VARCHAR NOT NULL DEFAULT '',
    created TIMESTAMP NOT NULL DEFAULT current_timestamp);
CREATE VIEW IF NOT EXISTS {current} AS
    SELECT item_id, annotator, arg_max(label, label_id) AS label, arg_max(note, label_id) AS note,
           max(created) AS created, count(*) AS versions
    FROM {table} GROUP BY item_id, annotator;
"""
LABELS_DDL = """
CREATE SEQUENCE IF NOT EXISTS labels_seq;
CREATE TABLE IF NOT EXISTS label_items (
    item_id VARCHAR PRIMARY KEY, dataset_id VARCHAR NOT NULL, question_id VARCHAR NOT NULL,
    evidence VARCHAR[] NOT NULL, created TIMESTAMP DEFAULT current_timestamp);
CREATE TABLE IF NOT EXISTS label_sources (
    item_id VARCHAR, run_id VARCHAR, arm VARCHAR, budget VARCHAR, PRIMARY KEY (item_id, run_id, arm));
""" + HISTORY_DDL.format(table="labels", current="current_labels") + """
CREATE TABLE IF NOT EXISTS answer_items (
    item_id VARCHAR PRIMARY KEY, dataset_id VARCHAR NOT NULL, question_id VARCHAR NOT NULL,
    answer VARCHAR NOT NULL, created TIMESTAMP DEFAULT current_timestamp);
CREATE TABLE IF NOT EXISTS answer_sources (
    item_id VARCHAR, run_id VARCHAR, arm VARCHAR, PRIMARY KEY (item_id, run_id, arm));
""" + HISTORY_DDL.format(table="answer_labels", current="current_answer_labels")


@dataclass(frozen=True, slots=True)
class Task:
    """One annotation task: its name (the side file's and the export's ``task``), label set and tables."""

    name: str
    labels: tuple[str, ...]
    items: str  # the items table
    sources: str  # (item, run, arm) behind each item; never rendered to annotators
    table: str  # the append-only label history
    current: str  # each annotator's latest label per item
    order: str  # SQL over ``i.item_id``: the queue order (a hash, so no run or arm shows in it)
    fields: str  # SQL over ``i``: the export's ``evidence`` and ``answer`` columns


SUFFICIENCY = Task("sufficiency", LABELS, "label_items", "label_sources", "labels", "current_labels",
                   "i.item_id", "i.evidence AS evidence, '' AS answer")
# the answer queue is ordered by a seeded hash of the item id (itself a hash of dataset, question, answer)
ANSWER_ORDER_SEED = "bfr-answer-queue-1"
ANSWER = Task("answer", ANSWER_LABELS, "answer_items", "answer_sources", "answer_labels", "current_answer_labels",
              f"md5('{ANSWER_ORDER_SEED}' || i.item_id)", "[]::VARCHAR[] AS evidence, i.answer AS answer")
TASKS: dict[str, Task] = {t.name: t for t in (SUFFICIENCY, ANSWER)}


def task_named(name: str) -> Task:
    """The task called ``name``; a :class:`LabelError` naming the choices otherwise."""
    if name not in TASKS:
        raise LabelError(f"unknown annotation task '{name}'; choose one of {', '.join(TASKS)}")
    return TASKS[name]

# One item per (dataset, question, sorted evidence ids) among finished runs' ok results, on the data the
# store holds now (runs of a replaced dataset version add no items: their ids may name other turns).
# Each set is first cut to the question's smallest set (its first ids: the arm's own top of its ranking).
_ITEM_KEY = "md5(r.dataset_id || chr(0) || r.question_id || chr(0) || array_to_string(list_sort(r.evidence), chr(1)))"
Q_SYNC_ITEMS = f"""
WITH full_sets AS (
    SELECT ru.dataset_id, res.run_id, res.question_id, res.arm, res.budget, res.evidence
    FROM results res JOIN runs ru ON ru.run_id = res.run_id JOIN ({{versions}}) v ON v.run_id = res.run_id
    WHERE ru.finished IS NOT NULL AND res.status = 'ok' AND len(res.evidence) > 0 AND v.current
), r AS (
    SELECT dataset_id, run_id, question_id, arm, budget,
           list_slice(evidence, 1, min(len(evidence)) OVER (PARTITION BY dataset_id, question_id)) AS evidence
    FROM full_sets
)
SELECT {_ITEM_KEY} AS item_id, r.dataset_id, r.question_id, r.evidence, r.run_id, r.arm, r.budget FROM r
"""


class LabelError(BfrError):
    """A label that cannot be saved: unknown item, empty annotator name or unknown label."""


@dataclass(frozen=True, slots=True)
class EvidenceLine:
    n: int  # 1-based position in time order; the only handle an annotator sees
    date: str  # the session date as text ("" when unknown)
    speaker: str
    text: str


@dataclass(frozen=True, slots=True)
class BlindItem:
    item_id: str
    question: str
    reference: str
    question_date: str
    evidence: tuple[EvidenceLine, ...]

    def as_text(self) -> str:
        """The item as an annotator (or a blinded judge) reads it."""
        lines = [f"Question: {self.question}"]
        if self.question_date:
            lines.append(f"Asked on: {self.question_date}")
        lines.append(f"Reference answer: {self.reference}")
        lines.append("Evidence:")
        lines += [f"[{e.n}] {e.date} {e.speaker}: {e.text}".replace("  ", " ") for e in self.evidence]
        return "\n".join(lines)


_READY: weakref.WeakSet[Store] = weakref.WeakSet()  # stores whose label tables exist already


def ensure_schema(store: Store) -> None:
    if store in _READY:
        return
    ensure_runs_schema(store)
    store.ensure(LABELS_DDL)
    _READY.add(store)


# -- queue --------------------------------------------------------------------------------------
def sync_queue(store: Store) -> int:
    """Add new snapshots of finished runs to the queue (``label_items``) and their sources
    (``label_sources``); returns the number of items in it. A read-only view shows the queue as it
    stands (none if never built).

    Two set-based statements insert only rows not stored yet: sending every snapshot through
    ``executemany`` would cost minutes for a full LoCoMo run, on every call (bench/speed/bench_annotate.py). Of the snapshots with one item id, the item keeps the evidence of the
    first by (run, arm) (the same set, maybe in another order).
    """
    ensure_schema(store)
    if store.read_only:
        return (fetch_if_tables(store.cursor(), "SELECT count(*) FROM label_items", one=True) or (0,))[0]
    snapshots = Q_SYNC_ITEMS.replace("{versions}", run_versions(store))
    with store.transaction() as cur:
        cur.execute(f"""
INSERT INTO label_items (item_id, dataset_id, question_id, evidence)
SELECT item_id, arg_min(dataset_id, run_id || chr(0) || arm), arg_min(question_id, run_id || chr(0) || arm),
       arg_min(evidence, run_id || chr(0) || arm)
FROM ({snapshots}) s WHERE NOT EXISTS (SELECT 1 FROM label_items i WHERE i.item_id = s.item_id)
GROUP BY item_id""")
        cur.execute(f"""
INSERT INTO label_sources (item_id, run_id, arm, budget)
SELECT item_id, run_id, arm, any_value(budget)
FROM ({snapshots}) s WHERE NOT EXISTS (SELECT 1 FROM label_sources x
    WHERE x.item_id = s.item_id AND x.run_id = s.run_id AND x.arm = s.arm)
GROUP BY item_id, run_id, arm""")
    return store.cursor().execute("SELECT count(*) FROM label_items").fetchone()[0]


def queue_stamp(store: Store) -> tuple[int, str, int]:
    """What the queue and its judgments depend on, read cheaply: (runs, the newest finish time, judged
    result rows). A page keys its cached queue on it, so a run finished (or judged) meanwhile by
    another process shows without a Refresh."""
    ensure_schema(store)
    cur = store.cursor()
    runs, newest = fetch_if_tables(cur, "SELECT count(*), coalesce(max(finished)::VARCHAR, '') FROM runs",
                                   one=True) or (0, "")
    judged = (fetch_if_tables(cur, "SELECT count(*) FROM results WHERE suff IS NOT NULL OR suff_detail IS NOT NULL",
                              one=True) or (0,))[0]
    return int(runs), str(newest), int(judged)


def judged_items(store: Store) -> int:
    """How many queue items carry LLM Suff@Set judgments (from a ``bfr eval ... --suff`` run)."""
    ensure_schema(store)
    row = store.cursor().execute(
        "SELECT count(DISTINCT s.item_id) FROM label_sources s JOIN label_items i USING (item_id) "
        "JOIN results r ON r.run_id = s.run_id AND r.question_id = i.question_id AND r.arm = s.arm "
        f"WHERE {JUDGED_WHOLE}").fetchone()
    return int(row[0]) if row else 0


def items(store: Store, task: Task = SUFFICIENCY) -> list[str]:
    """Every item id of the task in a stable order that mixes arms and questions (ordered by a hash)."""
    ensure_schema(store)
    return [r[0] for r in store.cursor().execute(f"SELECT i.item_id FROM {task.items} i ORDER BY {task.order}").fetchall()]


def item_questions(store: Store, task: Task = SUFFICIENCY) -> dict[str, str]:
    """item_id -> question text, in queue order (for pickers; nothing about the method)."""
    ensure_schema(store)
    rows = store.cursor().execute(
        f"SELECT i.item_id, coalesce(q.text, i.question_id) FROM {task.items} i LEFT JOIN questions q "
        f"ON q.dataset_id = i.dataset_id AND q.question_id = i.question_id ORDER BY {task.order}").fetchall()
    return dict(rows)


def queue(store: Store, annotator: str, task: Task = SUFFICIENCY) -> list[str]:
    """Items the annotator has not labelled yet, in queue order."""
    ensure_schema(store)
    rows = store.cursor().execute(
        f"SELECT i.item_id FROM {task.items} i WHERE NOT EXISTS (SELECT 1 FROM {task.table} l "
        f"WHERE l.item_id = i.item_id AND l.annotator = ?) ORDER BY {task.order}", [annotator.strip()],
    ).fetchall()
    waiting = _queued_items(store, annotator, task)
    return [r[0] for r in rows if r[0] not in waiting]


def standing(items: Sequence[str], labelled: Collection[str], waiting: Collection[str]) -> tuple[list[str], int]:
    """(:func:`queue`, :func:`progress`'s first number) from what a page holds already: the queue's
    items in order, the items the annotator has a label on, those waiting in the side file. The app
    reads the items once per queue sync, so saving a label runs no query over the queue."""
    done, wait = set(labelled), set(waiting)
    return [i for i in items if i not in done and i not in wait], len((done | wait) & set(items))


def waiting_items(store: Store, annotator: str, task: Task = SUFFICIENCY) -> set[str]:
    """Items of the task this annotator labelled while the store was held (waiting in the side file)."""
    return _queued_items(store, annotator, task)


def _queued_items(store: Store, annotator: str, task: Task = SUFFICIENCY) -> set[str]:
    """Items of the task this annotator labelled while the store was held (waiting in the side file)."""
    src = store.snapshot_of or store.path
    if src == ":memory:":
        return set()
    return {r["item_id"] for r in pending(src) if r.get("annotator") == annotator.strip() and _task_of(r) == task.name}


def progress(store: Store, annotator: str, task: Task = SUFFICIENCY) -> tuple[int, int]:
    """(items of the task this annotator labelled, queued ones included; items in its queue)."""
    ensure_schema(store)
    cur = store.cursor()
    done = {r[0] for r in cur.execute(
        f"SELECT DISTINCT l.item_id FROM {task.table} l JOIN {task.items} i USING (item_id) WHERE l.annotator = ?",
        [annotator.strip()]).fetchall()}
    total = cur.execute(f"SELECT count(*) FROM {task.items}").fetchone()[0]
    return len(done | _queued_items(store, annotator, task)), int(total)


def fmt_date(d: Any) -> str:
    """A turn's or question's date as an annotator reads it ("" when unknown)."""
    return d.strftime("%Y-%m-%d %H:%M") if isinstance(d, datetime) else ("" if d is None else str(d))


def blinded_item(store: Store, item_id: str) -> BlindItem:
    """The item as an annotator sees it: question, reference answer, anonymised evidence text."""
    row = store.cursor().execute(
        "SELECT dataset_id, question_id, evidence FROM label_items WHERE item_id = ?", [item_id]
    ).fetchone()
    if row is None:
        raise LabelError(f"no label item '{item_id}' in {store.path}")
    dataset_id, question_id, ids = row[0], row[1], set(row[2])
    q = store.question(dataset_id, question_id)
    turns = store.turns_by_id(dataset_id, sorted(ids), q.scope_id)  # the question's haystack's dates
    order = sorted(turns.values(), key=lambda t: (t.date or datetime.min, t.session_id, t.idx))
    lines = tuple(EvidenceLine(i + 1, fmt_date(t.date), t.speaker, t.text) for i, t in enumerate(order))
    return BlindItem(item_id, q.text, q.answer, fmt_date(q.date), lines)


# -- labels -------------------------------------------------------------------------------------
def label_problem(annotator: str, label: str, task: Task = SUFFICIENCY) -> str | None:
    """What makes ``annotator``'s ``label`` one that may not be stored for the task (None when it may):
    the one rule for a label saved now and one queued earlier."""
    if not annotator:
        return "give an annotator name before labelling"
    if annotator.startswith(JUDGE_PREFIX):
        return f"annotator names may not start with '{JUDGE_PREFIX}' (reserved for LLM judges)"
    if label not in task.labels:
        return f"unknown label '{label}'; choose one of {', '.join(task.labels)}"
    return None


def save_label(store: Store, item_id: str, annotator: str, label: str, note: str = "",
               task: Task = SUFFICIENCY) -> int:
    """Append one label of the task (a new version when the annotator relabels); returns its label id, or
    :data:`QUEUED` when the store is a snapshot of a file another process holds (``bfr eval``): the
    label then waits in a side file (:func:`pending_path`) until :func:`flush_pending` writes it."""
    ensure_schema(store)
    annotator = annotator.strip()
    problem = label_problem(annotator, label, task)
    if problem:
        raise LabelError(problem)
    cur = store.cursor()
    if cur.execute(f"SELECT 1 FROM {task.items} WHERE item_id = ?", [item_id]).fetchone() is None:
        raise LabelError(f"no {task.name} label item '{item_id}' in {store.path}")
    if store.snapshot_of:  # another process holds the store: queue it, written on the next open
        queue_label(store.snapshot_of, item_id, annotator, label, note, task)
        return QUEUED
    return int(cur.execute(
        f"INSERT INTO {task.table} (item_id, annotator, label, note) VALUES (?, ?, ?, ?) RETURNING label_id",
        [item_id, annotator, label, note or ""],
    ).fetchone()[0])


QUEUED = 0  # save_label's id for a label queued in the side file (real label ids start at 1)


def pending_path(store_path: str | Path) -> Path:
    """The side file of labels saved while another process held ``store_path``."""
    return Path(f"{store_path}.pending-labels.jsonl")


def set_aside_path(store_path: str | Path) -> Path:
    """Where a flush keeps, as they were, the side file's lines it may not write: part of a label a save killed
    mid-write left (the save never returned, so nobody was told it was kept), or a line that is no valid
    label (an edited file). Kept for a person to look at."""
    return Path(f"{store_path}.unreadable-labels.txt")


LABEL_KEYS = ("item_id", "annotator", "label", "created")  # what a side-file line must hold to be written
# the time as queue_label writes it (isoformat, no offset), the form the store's CAST reads
_CREATED = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?")


def set_aside(store_path: str | Path) -> list[str]:
    """The lines flushes have set aside (:func:`set_aside_path`), oldest first (none when there is no file)."""
    path = set_aside_path(store_path)
    return [ln for ln in split_lines(path.read_text(encoding="utf-8", errors="replace")) if ln] if path.exists() else []


def queue_label(store_path: str | Path, item_id: str, annotator: str, label: str, note: str = "",
                task: Task = SUFFICIENCY) -> None:
    """Append one label of the task to the side file (one JSON line, fsynced: a crash keeps it). The
    line names its task (a line without one is a sufficiency label).

    The append holds an exclusive ``flock`` on the side file, and :func:`flush_pending` claims the
    file under the same lock; an append whose file was claimed between its open and its lock writes
    to the new side file instead. (Without that, an append through a descriptor opened just before
    a claim landed in the claimed file after the flush had read it: 1-2 of 4,000 labels lost in the
    8 x 500 race, ``bench/checks/bench_label_race.py``.)"""
    row = {"item_id": item_id, "annotator": annotator, "label": label, "note": note or "",
           "created": datetime.now().isoformat(timespec="microseconds"), "task": task.name}
    data = dumps_line(row).encode("utf-8")
    path = pending_path(store_path)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _is_at(fd, path):
                size = os.fstat(fd).st_size
                # a save killed mid-write left a line without its end: start this one on a line of its own
                view = memoryview(data if not size or os.pread(fd, 1, size - 1) == b"\n" else b"\n" + data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
                return
        finally:
            os.close(fd)  # releases the lock


def _is_at(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is still the one at ``path`` (not claimed, renamed or removed)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino)


def _claims(path: Path) -> list[Path]:
    """Side files claimed by a flush (``<side file stem>.flushing-*``), oldest claim first."""
    return sorted(path.parent.glob(f"{glob.escape(path.stem)}.flushing-*"))


def _task_of(row: Mapping[str, Any]) -> str:
    """The task a side-file line belongs to (sufficiency for a line that names none)."""
    return row.get("task", SUFFICIENCY.name)


def _is_label(row: Any) -> bool:
    """Whether a side-file line's object is a label a flush can write: its keys, a text note if any, a
    known task if any, text the store takes (no lone surrogate), a readable time, and a label
    :func:`label_problem` accepts for its task."""
    if not (isinstance(row, dict) and all(isinstance(row.get(k), str) for k in LABEL_KEYS)
            and isinstance(row.get("note", ""), str) and _task_of(row) in TASKS):
        return False
    if not _CREATED.fullmatch(row["created"]):
        return False
    try:
        datetime.fromisoformat(row["created"])
        for key in (*LABEL_KEYS, "note"):
            row.get(key, "").encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return (row["annotator"] == row["annotator"].strip()
            and label_problem(row["annotator"], row["label"], TASKS[_task_of(row)]) is None)


def _read_rows(path: Path) -> list[dict[str, Any]]:
    return [row for row, _ in _read(path)[0]]


def _read(path: Path) -> tuple[list[tuple[dict[str, Any], bytes]], list[bytes]]:
    """The side file's labels (each with its line's bytes), and its lines that are no label a flush may write
    (part of one a killed save left, an edited line), as bytes."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:  # written by a flush meanwhile
        return [], []
    rows, torn = [], []
    for raw in split_lines(data):  # bytes, so a torn line is kept as it was
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8"))
        except ValueError:  # UnicodeDecodeError included
            row = None
        if _is_label(row):
            rows.append((row, raw))
        else:
            torn.append(raw)
    return rows, torn


def _set_aside(store_path: str | Path, lines: list[bytes]) -> None:
    """Append ``lines`` to :func:`set_aside_path`, fsynced; a line the file already holds (kept by a flush
    killed before it let go of its claims) is not added again."""
    path = set_aside_path(store_path)
    kept = set(split_lines(path.read_bytes())) if path.exists() else set()
    new = [line for line in dict.fromkeys(lines) if line not in kept]
    if new:
        with path.open("ab") as fh:
            fh.write(b"".join(line + b"\n" for line in new))
            fh.flush()
            os.fsync(fh.fileno())


def pending(store_path: str | Path) -> list[dict[str, Any]]:
    """The labels waiting to be written, in the order they were saved (claims of an unfinished
    flush first, then the side file)."""
    path = pending_path(store_path)
    return [r for f in (*_claims(path), path) for r in _read_rows(f)]


def has_pending(store_path: str | Path) -> bool:
    """Whether any label waits to be written (a cheap check before :func:`flush_pending`)."""
    path = pending_path(store_path)
    return path.exists() or bool(_claims(path))


def _take(path: Path, *, wait: bool) -> int | None:
    """Open ``path`` and hold its lock (waiting for it when ``wait``); the descriptor, or None when
    the file is gone or (``wait`` False) another flush holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    if not _is_at(fd, path):
        os.close(fd)
        return None
    return fd


def _claim_all(path: Path) -> list[tuple[Path, int]]:
    """Claim every waiting label, oldest first, each file locked until the flush ends: claims left
    by a flush that failed or was killed, then the side file, renamed to a claim under its lock (so
    no append is in the middle of it, and later appends go to a new side file)."""
    held = [(c, fd) for c in _claims(path) if (fd := _take(c, wait=False)) is not None]
    fd = _take(path, wait=True)
    if fd is not None:
        claim = path.with_suffix(f".flushing-{time.time_ns():020d}-{os.getpid()}-{threading.get_ident()}")
        os.rename(path, claim)
        held.append((claim, fd))
    return held


def flush_pending(store: Store) -> int:
    """Write the queued labels into a writable store, in order and with their saving times, in one
    transaction; then remove the side files they came from. A label already there (same item,
    annotator, label, note and time: a flush killed after its commit) is not written twice; a flush
    that fails leaves its claimed files for the next one; a line it may not write (part of a label a save
    killed mid-write left, a label :func:`label_problem` refuses, a time the store cannot read) is appended
    to :func:`set_aside_path` first, as its bytes were. Returns how many were written."""
    path = pending_path(store.path)
    if store.read_only or store.path == ":memory:":
        return 0
    held = _claim_all(path)
    if not held:
        return 0
    try:
        ensure_schema(store)
        read = [_read(claim) for claim, _ in held]
        torn = [line for _, lines in read for line in lines]
        rows = [r for got, _ in read for r, _ in got]  # an item gone since is written too: a label is never lost
        written = 0
        with store.transaction() as cur:
            for r in rows:
                table = TASKS[_task_of(r)].table
                args = [r["item_id"], r["annotator"], r["label"], r.get("note", ""), r["created"]]
                found = cur.execute(
                    f"SELECT 1 FROM {table} WHERE item_id = ? AND annotator = ? AND label = ? AND note = ? "
                    "AND created = CAST(? AS TIMESTAMP)", args).fetchone()
                if found is None:
                    cur.execute(f"INSERT INTO {table} (item_id, annotator, label, note, created) "
                                "VALUES (?, ?, ?, ?, CAST(? AS TIMESTAMP))", args)
                    written += 1
        _set_aside(store.path, torn)  # before the claims go: kept as they were, never silently dropped
        for claim, _ in held:
            claim.unlink(missing_ok=True)
    finally:
        for _, fd in held:
            os.close(fd)
    return written


def _dicts(cur: Any) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def current_label(store: Store, item_id: str, annotator: str, task: Task = SUFFICIENCY) -> dict[str, Any] | None:
    ensure_schema(store)
    cur = store.cursor()
    cur.execute(f"SELECT * FROM {task.current} WHERE item_id = ? AND annotator = ?", [item_id, annotator.strip()])
    found = _dicts(cur)
    return found[0] if found else None


def current_labels(store: Store, task: Task = SUFFICIENCY) -> dict[str, dict[str, str]]:
    """Annotator -> {item_id: current label} of the task."""
    ensure_schema(store)
    out: dict[str, dict[str, str]] = {}
    for item_id, annotator, label in store.cursor().execute(
            f"SELECT item_id, annotator, label FROM {task.current} ORDER BY annotator, item_id").fetchall():
        out.setdefault(annotator, {})[item_id] = label
    return out


def history(store: Store, item_id: str, annotator: str | None = None, task: Task = SUFFICIENCY) -> list[dict[str, Any]]:
    """Every version of the item's labels, oldest first (one annotator's when named)."""
    ensure_schema(store)
    cur = store.cursor()
    cur.execute(
        f"SELECT label_id, annotator, label, note, created FROM {task.table} WHERE item_id = ? "
        "AND (? IS NULL OR annotator = ?) ORDER BY label_id", [item_id, annotator, annotator],
    )
    return _dicts(cur)


def annotators(store: Store, task: Task = SUFFICIENCY) -> list[str]:
    ensure_schema(store)
    return [r[0] for r in store.cursor().execute(f"SELECT DISTINCT annotator FROM {task.table} ORDER BY 1").fetchall()]


# -- export -------------------------------------------------------------------------------------
SOURCE_ARM = canonical_arm_sql("s.arm")  # the arm behind an item as exported: by registered name (arm_names)
EXPORT_COLUMNS = ("label_id", "task", "item_id", "dataset_id", "question_id", "annotator", "label", "note",
                  "created", "is_current", "judges", "evidence", "answer", "sources")


def export_rows(store: Store, annotator: str | None = None,
                judges: Callable[[str], Mapping[str, str]] | None = None,
                tasks: Sequence[Task] = tuple(TASKS.values())) -> list[dict[str, Any]]:
    """Every label version of the ``tasks`` with its item (``task``; evidence ids or the answer labelled;
    the runs/arms that produced it), in label-id order; with ``annotator``, only that annotator's
    versions, and nothing that tells the method (no runs or arms; evidence ids sorted, not in the order a
    method ranked them). ``judges(item_id)``: the judges' labels or verdicts on the item, in the column
    ``judges`` (``{}`` without it)."""
    ensure_schema(store)
    cur = store.cursor()
    rows: list[dict[str, Any]] = []
    for task in tasks:
        if store.read_only and not cur.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                                               [task.table]).fetchone()[0]:
            continue
        cur.execute(f"""
            SELECT l.label_id, '{task.name}' AS task, l.item_id, i.dataset_id, i.question_id, l.annotator, l.label,
                   l.note, strftime(l.created, '%Y-%m-%dT%H:%M:%S') AS created,
                   l.label_id = max(l.label_id) OVER (PARTITION BY l.item_id, l.annotator) AS is_current,
                   {task.fields},
                   (SELECT list(s.run_id || '/' || {SOURCE_ARM} ORDER BY s.run_id, s.arm) FROM {task.sources} s
                    WHERE s.item_id = l.item_id) AS sources
            FROM {task.table} l JOIN {task.items} i USING (item_id)
            WHERE ? IS NULL OR l.annotator = ?""", [annotator, annotator])
        rows += _dicts(cur)
    rows.sort(key=lambda r: r["label_id"])
    seen: dict[str, dict[str, str]] = {}
    for r in rows:
        r["evidence"] = sorted(r["evidence"] or []) if annotator is not None else list(r["evidence"] or [])
        r["sources"] = [] if annotator is not None else list(r["sources"] or [])
        if judges is not None and r["item_id"] not in seen:
            seen[r["item_id"]] = dict(judges(r["item_id"]))
        r["judges"] = seen.get(r["item_id"], {})
    return [{k: r[k] for k in EXPORT_COLUMNS} for r in rows]


def to_jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(dumps_line(r, default=str) for r in rows)


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(EXPORT_COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({**r, "evidence": " ".join(r["evidence"]), "sources": " ".join(r["sources"]),
                    "judges": "; ".join(f"{k}={v}" for k, v in r.get("judges", {}).items())})
    return buf.getvalue()


def export(store: Store, path: str | Path, *, force: bool = False, annotator: str | None = None,
           judges: Callable[[str], Mapping[str, str]] | None = None,
           tasks: Sequence[Task] = tuple(TASKS.values())) -> int:
    """Write :func:`export_rows` to ``path`` (.csv or .jsonl; ``outfile.write_output``: never the
    store or another DuckDB file, an existing file only with ``force``); returns the number of rows."""
    p = Path(path)
    check_output(p, option="--out", store=store.path, force=force)  # before the rows are read
    if p.suffix.lower() not in (".csv", ".jsonl"):
        raise BfrError(f"--out {p}: export format is chosen by extension; use .csv or .jsonl")
    rows = export_rows(store, annotator, judges, tasks)
    write_output(p, to_csv(rows) if p.suffix.lower() == ".csv" else to_jsonl(rows), option="--out",
                 store=store.path, force=force)
    return len(rows)
