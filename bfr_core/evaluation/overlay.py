"""An audited answer key laid over a dataset's own (``bfr ingest overlay FILE --dataset D``).

Covers: :func:`read_overlay` (the locomo-audit ``errors.json`` format: a list of ``{question_id,
error_type, correct_answer, correct_evidence, reasoning, ...}``; our own flags export the same shape),
:func:`ingest_overlay` (each finding mapped to a question of the dataset, its corrected evidence to
turns of the question's scope, all written in one transaction), :func:`load_overlay`,
:func:`overlay_names`, and what a key means for the metrics: :func:`golds_under` (the gold answer each
question is judged against: the dataset's under ``original``, the corrected one under an overlay;
a question the overlay calls unanswerable is left out), :func:`evidence_under` (the gold turns Gold
Hit / CER score against), :func:`retrieval_under` (each arm's Gold Hit / CER under a key), :func:`disputed` (question -> the finding, for the pages) and
:func:`ceiling` (the best score the original key allows: the share of questions whose key the
overlay leaves standing), :func:`overlay_scopes` and :func:`covered_ceiling` (that ceiling on the part of
the dataset the overlay audited).

Unanswerable: a corrected answer that opens by declining ("Cannot be determined", "Uncertain",
"Unanswerable", "Unknown", "Not stated"), or a record with ``"unanswerable": true``.
A finding that changes only the evidence (``WRONG_CITATION``) keeps the answer.

Does not cover: judging (``evaluation.judging``), the figures (``evaluation.judge_report``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bfr_core.duck import fetch_if_tables
from bfr_core.errors import BfrError
from bfr_core.evaluation.answer_files import question_resolver, same_question
from bfr_core.evaluation.metrics import score_question
from bfr_core.evaluation.summary import common_size
from bfr_core.runs import load_results, run_row
from bfr_core.store import Store
from bfr_core.verdicts import ORIGINAL

OVERLAY_DDL = """
CREATE TABLE IF NOT EXISTS key_overlays (
    dataset_id VARCHAR, overlay VARCHAR, question_id VARCHAR, error_type VARCHAR, answer VARCHAR,
    evidence VARCHAR[], unanswerable BOOLEAN, reason VARCHAR, original_answer VARCHAR, source VARCHAR,
    PRIMARY KEY (dataset_id, overlay, question_id));
"""
_DECLINES = re.compile(r"^\s*(cannot be (determined|answered)|can't be determined|uncertain|unanswerable|unknown|"
                       r"not (stated|mentioned|answerable)|no answer)\b", re.I)
ANSWER_KEEPING = frozenset({"WRONG_CITATION"})  # findings about the evidence only


@dataclass(frozen=True, slots=True)
class Finding:
    question_id: str  # the dataset's
    error_type: str
    answer: str  # the corrected answer (the original one for an evidence-only finding)
    evidence: tuple[str, ...]  # corrected gold turn ids (the dataset's ids); () = unchanged
    unanswerable: bool
    reason: str
    original_answer: str

    @property
    def answer_changed(self) -> bool:
        """The overlay's answer is not the key's: unanswerable, or another text (an evidence-only
        finding, or a flag that restates the key's own answer, changes no answer)."""
        return self.unanswerable or (self.error_type not in ANSWER_KEEPING
                                     and " ".join(self.answer.split()) != " ".join(self.original_answer.split()))


def declines(answer: str) -> bool:
    return bool(_DECLINES.search(answer))


def read_overlay(path: str | Path) -> list[dict[str, Any]]:
    """The records of an overlay file, each checked for the fields a finding needs."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BfrError(f"{path}: not a JSON file ({exc})") from None
    if not isinstance(data, list):
        raise BfrError(f"{path}: an overlay is a JSON list of findings (the audit's errors.json format)")
    for i, rec in enumerate(data):
        where = f"{path}: record {i}"
        if not isinstance(rec, dict):
            raise BfrError(f"{where}: a finding must be an object")
        for key in ("question_id", "error_type"):
            if not isinstance(rec.get(key), str) or not rec[key].strip():
                raise BfrError(f"{where}: '{key}' must be a non-empty string")
        if not isinstance(rec.get("correct_answer", ""), str | int | float):
            raise BfrError(f"{where}: 'correct_answer' must be text")
        ev = rec.get("correct_evidence", [])
        if not isinstance(ev, list) or not all(isinstance(e, str) for e in ev):
            raise BfrError(f"{where}: 'correct_evidence' must be a list of turn ids")
    return data


def ingest_overlay(store: Store, path: str | Path, *, dataset_id: str, name: str = "audit",
                   replace: bool = False) -> dict[str, Any]:
    """Write ``path`` as overlay ``name`` of ``dataset_id``; nothing unless every finding maps."""
    store.ensure(OVERLAY_DDL)
    if store.dataset(dataset_id) is None:
        raise BfrError(f"no dataset '{dataset_id}' in {store.path}; ingest it first")
    if not name or any(c.isspace() for c in name) or name == ORIGINAL:
        raise BfrError(f"overlay name {name!r}: non-empty, no spaces, not '{ORIGINAL}'")
    recs = read_overlay(path)
    qs = store.questions(dataset_id)
    every = {q.question_id: q for q in qs}
    resolve = question_resolver(dataset_id, qs, list(dict.fromkeys(q.scope_id for q in qs)))
    rows, problems, seen = [], [], set()
    turns_of: dict[str, dict[str, str]] = {}
    for i, rec in enumerate(recs):
        qid = resolve(rec["question_id"])
        if qid is None:
            problems.append(f"record {i}: {rec['question_id']!r} is no question of '{dataset_id}'")
            continue
        q = every[qid]
        if isinstance(rec.get("question"), str) and not same_question(rec["question"], q.text):
            problems.append(f"record {i}: {rec['question_id']!r} asks another question than {qid}")
            continue
        if qid in seen:
            problems.append(f"record {i}: {rec['question_id']!r} again")
            continue
        seen.add(qid)
        if q.scope_id not in turns_of:
            turns_of[q.scope_id] = {}
            for t in store.scope_turns(dataset_id, q.scope_id):
                turns_of[q.scope_id][t.turn_id] = t.turn_id
                turns_of[q.scope_id].setdefault(t.local_id, t.turn_id)
        ev = [turns_of[q.scope_id].get(e) for e in rec.get("correct_evidence", [])]
        if None in ev:
            problems.append(f"record {i}: corrected evidence names no turn of {q.scope_id}")
            continue
        answer = str(rec.get("correct_answer", "")).strip() or q.answer
        if rec["error_type"] in ANSWER_KEEPING:
            answer = q.answer
        unans = bool(rec.get("unanswerable")) or declines(answer)
        rows.append([dataset_id, name, qid, rec["error_type"], answer, list(dict.fromkeys(ev)), unans,
                     str(rec.get("reasoning", ""))[:2000], q.answer, str(Path(path).resolve())])
    if problems:
        raise BfrError(f"{path}: {len(problems)} finding(s) refused: " + "; ".join(problems[:3]))
    with store.transaction() as tx:
        have = tx.execute("SELECT count(*) FROM key_overlays WHERE dataset_id = ? AND overlay = ?",
                          [dataset_id, name]).fetchone()[0]
        if have and not replace:
            raise BfrError(f"dataset '{dataset_id}' already has an overlay '{name}'; pass --replace")
        tx.execute("DELETE FROM key_overlays WHERE dataset_id = ? AND overlay = ?", [dataset_id, name])
        tx.executemany("INSERT INTO key_overlays VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    kinds = Counter(r[3] for r in rows)
    return {"dataset": dataset_id, "overlay": name, "findings": len(rows), "by_error_type": dict(sorted(kinds.items())),
            "answer_changed": sum(Finding(r[2], r[3], r[4], (), r[6], "", r[8]).answer_changed for r in rows),
            "unanswerable": sum(r[6] for r in rows)}


def overlay_names(store: Store, dataset_id: str) -> list[str]:
    return [r[0] for r in fetch_if_tables(
        store.cursor(), "SELECT DISTINCT overlay FROM key_overlays WHERE dataset_id = ? ORDER BY 1", [dataset_id]) or ()]


def load_overlay(store: Store, dataset_id: str, name: str) -> dict[str, Finding]:
    """Question id -> finding; an unknown overlay is an error naming the ones there are."""
    if name not in overlay_names(store, dataset_id):
        raise BfrError(f"no overlay '{name}' on dataset '{dataset_id}' (have: "
                       f"{', '.join(overlay_names(store, dataset_id)) or 'none'}); bfr ingest overlay FILE first")
    rows = store.cursor().execute(
        "SELECT question_id, error_type, answer, evidence, unanswerable, reason, original_answer FROM key_overlays "
        "WHERE dataset_id = ? AND overlay = ? ORDER BY question_id", [dataset_id, name]).fetchall()
    return {r[0]: Finding(r[0], r[1], r[2], tuple(r[3] or ()), bool(r[4]), r[5] or "", r[6] or "") for r in rows}


def _dataset(store: Store, run_id: str) -> str:
    run = run_row(store, run_id)
    if run is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    return str(run[0])


def golds_under(store: Store, run_id: str, key: str = ORIGINAL) -> dict[str, str]:
    """Question -> the gold answer under ``key`` (unanswerable questions of an overlay left out)."""
    dataset_id = _dataset(store, run_id)
    golds = {q.question_id: q.answer for q in store.questions(dataset_id)}
    if key == ORIGINAL:
        return golds
    for qid, f in load_overlay(store, dataset_id, key).items():
        if f.unanswerable:
            golds.pop(qid, None)
        else:
            golds[qid] = f.answer
    return golds


def evidence_under(store: Store, dataset_id: str, key: str = ORIGINAL) -> dict[str, tuple[str, ...]]:
    """Question -> its gold turns under ``key`` (an overlay's corrected evidence where it gives any;
    unanswerable questions left out)."""
    gold = {q.question_id: tuple(q.gold) for q in store.questions(dataset_id)}
    if key == ORIGINAL:
        return gold
    for qid, f in load_overlay(store, dataset_id, key).items():
        if f.unanswerable:
            gold.pop(qid, None)
        elif f.evidence:
            gold[qid] = f.evidence
    return gold


def retrieval_under(store: Store, run_id: str, key: str = ORIGINAL, k: int | None = None, *,
                    own_budgets: bool = False) -> dict[str, dict[str, Any]]:
    """Arm -> mean Gold Hit and CER (0-100) of its stored evidence scored against the gold turns under
    ``key``, every set cut to its first ``k`` ids; without ``k``, to the run's common set size
    (``summary.common_size``) unless ``own_budgets`` (each arm at its own size). Each arm's figures
    carry the ``k`` they were cut to (None: uncut). Arms without evidence (answers only) are not
    listed; questions an overlay calls unanswerable are left out and counted."""
    gold = evidence_under(store, _dataset(store, run_id), key)
    rows = load_results(store, run_id)
    if k is None and not own_budgets:
        k = common_size(rows)
    acc: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["gold_hit"] is None or r["status"] != "ok":
            continue
        a = acc.setdefault(r["arm"], {"n": 0, "left_out": 0, "gold_hit": 0.0, "cer": 0.0})
        if r["question_id"] not in gold:
            a["left_out"] += 1
            continue
        s = score_question(list(r["evidence"] or [])[:k], gold[r["question_id"]])
        a["n"] += 1
        a["gold_hit"] += s.gold_hit
        a["cer"] += s.cer
    return {arm: {"n": a["n"], "left_out": a["left_out"], "k": k,
                  "gold_hit": round(100 * a["gold_hit"] / a["n"], 2) if a["n"] else None,
                  "cer": round(100 * a["cer"] / a["n"], 2) if a["n"] else None} for arm, a in sorted(acc.items())}


def disputed(store: Store, dataset_id: str) -> dict[str, str]:
    """Question -> "overlay: ERROR_TYPE: reason" for every question an overlay disputes (none when no
    overlay was ingested, also on a read-only store)."""
    out: dict[str, str] = {}
    for name in overlay_names(store, dataset_id):
        for qid, f in load_overlay(store, dataset_id, name).items():
            fix = "unanswerable" if f.unanswerable else (f"corrected answer: {f.answer}" if f.answer_changed
                                                        else f"corrected evidence: {', '.join(f.evidence)}")
            out.setdefault(qid, f"{name}: {f.error_type}: {fix}. {f.reason}".strip())
    return out


def ceiling(findings: dict[str, Finding], question_ids: Sequence[str]) -> dict[str, Any]:
    """The best accuracy the original key allows on ``question_ids``: every question whose answer
    the overlay changes (or calls unanswerable) is one a correct answer fails under the original key."""
    qids = set(question_ids)
    wrong = [f for q, f in findings.items() if q in qids and f.answer_changed]
    n = len(qids)
    return {"questions": n, "answer_key_wrong": len(wrong),
            "unanswerable": sum(f.unanswerable for f in wrong),
            "ceiling_pct": round(100.0 * (n - len(wrong)) / n, 2) if n else None}


def overlay_scopes(store: Store, dataset_id: str, name: str) -> list[str]:
    """The scopes (LoCoMo: conversations) the overlay has a finding in: the part of the dataset it audited."""
    scope_of = {q.question_id: q.scope_id for q in store.questions(dataset_id)}
    return sorted({scope_of[q] for q in load_overlay(store, dataset_id, name) if q in scope_of})


def covered_ceiling(store: Store, dataset_id: str, name: str, question_ids: Sequence[str]) -> dict[str, Any]:
    """:func:`ceiling` on the ``question_ids`` inside the scopes the overlay audited (an audit of part
    of a dataset says nothing of the rest), naming those scopes and how many questions were outside."""
    scopes = overlay_scopes(store, dataset_id, name)
    scope_of = {q.question_id: q.scope_id for q in store.questions(dataset_id)}
    inside = [q for q in question_ids if scope_of.get(q) in set(scopes)]
    return {"overlay": name, "scopes": scopes, "outside_questions": len(question_ids) - len(inside),
            **ceiling(load_overlay(store, dataset_id, name), inside)}
