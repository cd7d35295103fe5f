"""Another system's answers as an arm of a run (``bfr import-answers``), with the verdicts they came with.

Covers: :func:`import_answers`. Each record of the file (``answer_files.read_answers``) is mapped to a
question of the dataset (``answer_files.question_resolver``; a question text the file gives must be
the dataset's); its evidence, when given, to turns of the question's scope (a turn id, or the turn's
own id as the source writes it: ``D3:7``) and scored like any arm's set; without evidence the
retrieval measures stay empty (NULL), never zero. Verdicts the file carries are stored as a named
judge (``verdicts`` table, key ``original``, the gold text they were given). Everything - the run's
row, the arm's rows and traces, the verdicts - is written in one transaction after every record
has been checked, so a refused file leaves the store as it was.

A new run (no ``run_id``) holds the file's questions and is named by the dataset, the system's name
and the file's content; with ``run_id`` the arm joins that run and must answer only its questions
(those it leaves out are failed rows, kept in every denominator, when ``allow_missing``).

Does not cover: reading the file (``answer_files``), rejudging (``evaluation.judging``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bfr_core.duck import insert_columns, rows_to_columns
from bfr_core.errors import BfrError
from bfr_core.evaluation.answer_files import SubmittedAnswer, question_resolver, read_answers, same_question
from bfr_core.evaluation.imported import check_name
from bfr_core.evaluation.metrics import score_question
from bfr_core.ingest.common import sha256_file
from bfr_core.records import Question, Step, Trace
from bfr_core.runs import RESULT_COLUMNS, TRACE_COLUMNS, ensure_schema, load_results, run_row
from bfr_core.store import Store
from bfr_core.verdicts import ORIGINAL, ensure_verdicts, insert_verdicts

PROVIDER = "imported"


@dataclass(frozen=True, slots=True)
class AnswersReport:
    run_id: str
    arm: str
    fmt: str
    answers: int
    with_evidence: int
    missing: int
    judges: dict[str, int]  # imported judge -> verdicts stored


def _refuse(problems: list[str], what: str) -> None:
    if problems:
        more = f" (and {len(problems) - 3:,} more)" if len(problems) > 3 else ""
        raise BfrError(f"{len(problems):,} {what}: " + "; ".join(problems[:3]) + more)


def _mapped(store: Store, dataset_id: str, recs: list[SubmittedAnswer]) -> dict[str, SubmittedAnswer]:
    """The dataset's question id -> its record; every id, duplicate and question text checked."""
    qs = store.questions(dataset_id)
    every = {q.question_id: q for q in qs}
    resolve = question_resolver(dataset_id, qs, list(dict.fromkeys(q.scope_id for q in qs)))
    out: dict[str, SubmittedAnswer] = {}
    unknown, twice, differ = [], [], []
    for r in recs:
        qid = resolve(r.question_id)
        if qid is None:
            unknown.append(f"{r.where}: {r.question_id!r}")
        elif qid in out:
            twice.append(f"{r.where}: {r.question_id!r} is {qid!r}, as at {out[qid].where}")
        elif r.question is not None and not same_question(r.question, every[qid].text):
            differ.append(f"{r.where}: {r.question_id!r} asks {r.question[:60]!r}, the dataset's "
                          f"{qid} asks {every[qid].text[:60]!r}")
        else:
            out[qid] = r
    _refuse(unknown, f"question id(s) not in dataset '{dataset_id}'")
    _refuse(twice, "question(s) answered twice")
    _refuse(differ, "question(s) whose text is not the dataset's")
    return out


def _evidence(store: Store, dataset_id: str, q: Question, ids: tuple[str, ...], where: str,
              scopes: dict[str, dict[str, str]]) -> list[str]:
    if q.scope_id not in scopes:
        turns = store.scope_turns(dataset_id, q.scope_id)
        local: dict[str, list[str]] = {}
        for t in turns:
            local.setdefault(t.local_id, []).append(t.turn_id)
        scopes[q.scope_id] = {**{k: v[0] for k, v in local.items() if k and len(v) == 1},
                              **{t.turn_id: t.turn_id for t in turns}}
    known = scopes[q.scope_id]
    bad = [d for d in ids if d not in known]
    if bad:
        raise BfrError(f"{where}: evidence id(s) naming no turn of {q.question_id}'s scope: {bad[:5]}")
    return list(dict.fromkeys(known[d] for d in ids))


def _row(run_id: str, q: Question, arm: str, evidence: list[str] | None) -> tuple[Any, ...]:
    if evidence is None:  # answers only: no retrieval to score
        return (run_id, q.question_id, arm, "", q.qtype, [], 0, 0, len(q.gold), None, None, None, None, None,
                None, None, 0.0, "ok", None, None)
    s = score_question(evidence, q.gold)
    return (run_id, q.question_id, arm, "", q.qtype, evidence, len(evidence), 0, len(q.gold), s.gold_hit,
            s.turn_hit, s.er, s.cer, s.recall_any, s.recall_all, s.ndcg_any, 0.0, "ok", None, None)


def _trace(dataset_id: str, q: Question, arm: str, fmt: str, source: str, evidence: list[str] | None) -> str:
    step = Step("answer", f"{arm}: imported answer ({fmt})", tuple(evidence or ()), 0,
                {"source": source, "format": fmt, "evidence_given": evidence is not None})
    return json.dumps(Trace(dataset_id, q.question_id, arm, "", f"{PROVIDER}:answers-{fmt}", (step,)).to_dict())


def import_answers(store: Store, path: str | Path, *, dataset_id: str, name: str, fmt: str = "auto",
                   run_id: str | None = None, allow_missing: bool = False,
                   judge_name: str | None = None) -> AnswersReport:
    """Write ``path``'s answers as arm ``name`` (of ``run_id``, or of a new run); nothing is written
    unless every record maps."""
    ensure_schema(store)
    ensure_verdicts(store)
    check_name(name)
    ds = store.dataset(dataset_id)
    if ds is None:
        raise BfrError(f"no dataset '{dataset_id}' in {store.path}; ingest it first")
    source = str(Path(path).resolve())
    fmt, recs = read_answers(path, fmt, judge_name)
    if not recs:
        raise BfrError(f"{path}: no answer in the file")
    subs = _mapped(store, dataset_id, recs)
    every = {q.question_id: q for q in store.questions(dataset_id)}
    new_run = run_id is None
    if new_run:
        key = json.dumps([dataset_id, name, sha256_file(path)])
        run_id = f"{dataset_id}-answers-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
        qids = [q for q in every if q in subs]
        if run_row(store, run_id) is not None:
            raise BfrError(f"this file's content was imported as '{name}' before (run '{run_id}')")
    else:
        row = run_row(store, run_id)
        if row is None:
            raise BfrError(f"no run '{run_id}' in {store.path}")
        if row[0] != dataset_id:
            raise BfrError(f"run '{run_id}' is over dataset '{row[0]}', not '{dataset_id}'")
        if name in row[1]:
            raise BfrError(f"run '{run_id}' already has an arm '{name}'; choose another --name")
        qids = list(dict.fromkeys(r["question_id"] for r in load_results(store, run_id)))
        outside = [subs[q].where for q in subs if q not in set(qids)]
        _refuse(outside, f"answer(s) to questions outside run '{run_id}'")
    missing = [q for q in qids if q not in subs]
    if missing and not new_run and not allow_missing:
        raise BfrError(f"{path}: {len(missing)} question(s) of the run are not in the file: {missing[:5]} "
                       "(pass --allow-missing to keep them as failed rows)")
    rows, traces, verdicts, scopes, judges = [], [], [], {}, {}
    for qid in qids:
        q = every[qid]
        sub = subs.get(qid)
        if sub is None:
            rows.append((*_row(run_id, q, name, [])[:17], "failed", "not in the imported file", None))
            continue
        ev = None if sub.evidence is None else _evidence(store, dataset_id, q, sub.evidence, sub.where, scopes)
        rows.append(_row(run_id, q, name, ev))
        traces.append((run_id, qid, name, _trace(dataset_id, q, name, fmt, source, ev)))
        for judge, label, reason in sub.verdicts:
            verdicts.append((run_id, qid, name, judge, ORIGINAL, label, reason, judge.removesuffix(" (imported)"),
                             "imported", None, q.answer, None))
            judges[judge] = judges.get(judge, 0) + 1
    answers = {qid: subs[qid].answer for qid in qids if qid in subs}
    with store.transaction() as tx:
        if new_run:
            tx.execute("INSERT INTO runs (run_id, dataset_id, arms, budget, k, provider, n_questions, options, "
                       "data_sha, finished) VALUES (?, ?, ?, '', 0, ?, ?, ?, ?, current_timestamp)",
                       [run_id, dataset_id, [name], PROVIDER, len(qids),
                        json.dumps({"imported_answers": {"source": source, "format": fmt}}), ds["source_sha256"]])
        else:
            tx.execute("UPDATE runs SET arms = list_append(arms, ?) WHERE run_id = ?", [name, run_id])
        insert_columns(tx, "results", rows_to_columns(RESULT_COLUMNS, rows))
        insert_columns(tx, "traces", rows_to_columns(TRACE_COLUMNS, traces))
        tx.execute("CREATE TEMP TABLE IF NOT EXISTS _answers (question_id VARCHAR, answer VARCHAR)")
        tx.execute("DELETE FROM _answers")
        insert_columns(tx, "_answers", {"question_id": list(answers), "answer": list(answers.values())})
        tx.execute("UPDATE results SET answer = a.answer FROM _answers a WHERE results.run_id = ? "
                   "AND results.arm = ? AND results.question_id = a.question_id", [run_id, name])
        insert_verdicts(tx, verdicts)
    return AnswersReport(run_id, name, fmt, len(answers), sum(subs[q].evidence is not None for q in answers),
                         len(missing), judges)
