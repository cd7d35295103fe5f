"""Answers files (``bfr import-answers``): three file shapes read into one record type.

Covers: :func:`read_answers` (a file -> its format and one :class:`SubmittedAnswer` per record, every
record checked, every problem an error naming the record's line), :func:`question_resolver` (a file's
question id -> the dataset's: the dataset's own id, its blind id, or the ``locomo_{sample}_qa{i}`` id
mem0-style harnesses write, which names entry ``i`` of sample ``sample``'s ``qa`` list) and
:func:`majority` (an answer's verdict from a judge's repeated runs).

Formats (``docs/answers.md``):

* ``eval`` - the ``eval_results.json`` shape mem0-style harnesses write: ``{"detailed_results": {group:
  [{question_id, question, golden_answer, generated_answer, llm_judgments: {judgment_1: bool, ...},
  category}]}, "metadata": {"judge_model": ...}}``. The judge's runs become one verdict (their majority)
  of the judge ``"<judge_model> (imported)"``.
* ``lme`` - LongMemEval's hypothesis JSONL: ``{"question_id", "hypothesis"}`` per line, and, when the
  file went through its ``evaluate_qa.py``, ``autoeval_label: {"model", "label": bool}``.
* ``jsonl`` (ours) - ``{"question_id", "answer", "evidence"?: [ids], "verdicts"?: {judge: "CORRECT" |
  "WRONG" | bool}}`` per line.

Does not cover: writing anything (``evaluation.answer_import``), mapping evidence ids to turns
(``imported._Resolver`` rules, applied by the command), judging (``evaluation.judging``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bfr_core.errors import BfrError
from bfr_core.ingest.corpus import blind_id
from bfr_core.records import Question

FORMATS = ("auto", "eval", "lme", "jsonl")
CORRECT, WRONG = "CORRECT", "WRONG"
_HARNESS_ID = re.compile(r"^locomo_(\d+)_qa(\d+)$")
_OURS_KEYS = frozenset({"question_id", "answer", "evidence", "verdicts", "question", "meta"})
_LME_KEYS = frozenset({"question_id", "hypothesis", "autoeval_label", "question", "answer", "question_type"})


@dataclass(frozen=True, slots=True)
class SubmittedAnswer:
    """One record of an answers file, as written there."""

    where: str  # "line 7" or "detailed_results.locomo_exp_user_0[3]": what an error names
    question_id: str
    answer: str
    question: str | None = None  # the question text the file carries, checked against the dataset's
    evidence: tuple[str, ...] | None = None  # None: the file gives no evidence
    verdicts: tuple[tuple[str, str, str], ...] = ()  # (judge name, CORRECT | WRONG, reason)


def _label(value: Any, where: str, what: str) -> str:
    if isinstance(value, bool):
        return CORRECT if value else WRONG
    if isinstance(value, str) and value.strip().upper() in (CORRECT, WRONG):
        return value.strip().upper()
    raise BfrError(f"{where}: {what} must be true/false or CORRECT/WRONG, got {value!r}")


def majority(runs: Sequence[str]) -> tuple[str, str]:
    """(label, reason) from a judge's repeated runs: the majority label (a tie is WRONG: not accepted)."""
    n_ok = sum(r == CORRECT for r in runs)
    label = CORRECT if n_ok * 2 > len(runs) else WRONG
    return label, f"majority of {len(runs)} imported verdicts: {n_ok} CORRECT, {len(runs) - n_ok} WRONG"


def _answer(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str):
        raise BfrError(f"{where}: '{key}' must be a string, got {type(value).__name__} {value!r:.60}")
    return value


def _qid(rec: dict, where: str) -> str:
    qid = rec.get("question_id")
    if not isinstance(qid, str) or not qid.strip():
        raise BfrError(f"{where}: 'question_id' must be a non-empty string, got {qid!r:.60}")
    return qid


def _read_eval(data: dict, path: str, judge_name: str | None) -> list[SubmittedAnswer]:
    groups = data.get("detailed_results")
    if not isinstance(groups, dict):
        raise BfrError(f"{path}: 'detailed_results' must be an object of lists")
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    judge = f"{judge_name or meta.get('judge_model') or 'judge'} (imported)"
    out = []
    for group, recs in groups.items():
        if not isinstance(recs, list):
            raise BfrError(f"{path}: detailed_results.{group} must be a list")
        for i, rec in enumerate(recs):
            where = f"{path}: detailed_results.{group}[{i}]"
            if not isinstance(rec, dict):
                raise BfrError(f"{where}: a record must be an object")
            qid = _qid(rec, where)
            answer = _answer(rec.get("generated_answer"), where, "generated_answer")
            runs = rec.get("llm_judgments")
            verdicts: tuple[tuple[str, str, str], ...] = ()
            if runs is not None:
                if not isinstance(runs, dict) or not runs:
                    raise BfrError(f"{where}: 'llm_judgments' must be a non-empty object")
                labels = [_label(v, where, f"llm_judgments.{k}") for k, v in sorted(runs.items())]
                verdicts = ((judge, *majority(labels)),)
            question = rec.get("question")
            out.append(SubmittedAnswer(where, qid, answer, question if isinstance(question, str) else None,
                                       None, verdicts))
    return out


def _read_lines(text: str, path: str, fmt: str) -> list[SubmittedAnswer]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}: line {n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BfrError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise BfrError(f"{where}: a line must be a JSON object")
        qid = _qid(rec, where)
        question = rec.get("question") if isinstance(rec.get("question"), str) else None
        if fmt == "lme":
            extra = set(rec) - _LME_KEYS
            if extra:
                raise BfrError(f"{where}: unknown key(s) {sorted(extra)} for a LongMemEval hypothesis line")
            verdicts: tuple[tuple[str, str, str], ...] = ()
            auto = rec.get("autoeval_label")
            if auto is not None:
                if not isinstance(auto, dict) or "label" not in auto:
                    raise BfrError(f"{where}: 'autoeval_label' must be an object with 'label'")
                name = f"{auto.get('model') or 'judge'} (imported)"
                verdicts = ((name, _label(auto["label"], where, "autoeval_label.label"), "imported verdict"),)
            out.append(SubmittedAnswer(where, qid, _answer(rec.get("hypothesis"), where, "hypothesis"), question,
                                       None, verdicts))
            continue
        extra = set(rec) - _OURS_KEYS
        if extra:
            raise BfrError(f"{where}: unknown key(s) {sorted(extra)} (see docs/answers.md)")
        evidence = rec.get("evidence")
        if evidence is not None:
            if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
                raise BfrError(f"{where}: 'evidence' must be a list of id strings")
            if len(set(evidence)) != len(evidence):
                raise BfrError(f"{where}: an evidence id is given twice")
        raw = rec.get("verdicts") or {}
        if not isinstance(raw, dict):
            raise BfrError(f"{where}: 'verdicts' must be an object judge -> CORRECT/WRONG")
        verdicts = tuple((str(k), _label(v, where, f"verdicts.{k}"), "imported verdict") for k, v in raw.items())
        out.append(SubmittedAnswer(where, qid, _answer(rec.get("answer"), where, "answer"), question,
                                   None if evidence is None else tuple(evidence), verdicts))
    return out


def _sniff(text: str) -> str:
    head = text.lstrip()[:1]
    if head == "{":
        first = text.lstrip().split("\n", 1)[0]
        try:
            rec = json.loads(first)
        except json.JSONDecodeError:
            return "eval"  # a pretty-printed object spans lines: the eval_results shape
        return "lme" if isinstance(rec, dict) and "hypothesis" in rec else "jsonl" if isinstance(rec, dict) and \
            "answer" in rec else "eval"
    return "unknown"


def read_answers(path: str | Path, fmt: str = "auto", judge_name: str | None = None
                 ) -> tuple[str, list[SubmittedAnswer]]:
    """(format, records) of an answers file; a record without a string answer, a question id given
    twice, or an unknown key is an error naming the record. ``judge_name`` names the judge of an
    eval_results file whose metadata does not."""
    if fmt not in FORMATS:
        raise BfrError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    p = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BfrError(f"{p}: not UTF-8 text") from None
    fmt = _sniff(text) if fmt == "auto" else fmt
    if fmt == "eval":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BfrError(f"{p}: not JSON (line {exc.lineno}: {exc.msg})") from None
        if not isinstance(data, dict) or "detailed_results" not in data:
            raise BfrError(f"{p}: not the eval_results.json shape (no 'detailed_results')")
        recs = _read_eval(data, p, judge_name)
    elif fmt in ("lme", "jsonl"):
        recs = _read_lines(text, p, fmt)
    else:
        raise BfrError(f"{p}: not an answers file (eval_results.json, LongMemEval hypotheses or our JSONL)")
    seen: dict[str, str] = {}
    for r in recs:
        if r.question_id in seen:
            raise BfrError(f"{r.where}: question {r.question_id!r} again (first at {seen[r.question_id]})")
        seen[r.question_id] = r.where
    return fmt, recs


def question_resolver(dataset_id: str, questions: Sequence[Question],
                      scope_order: Sequence[str]) -> Callable[[str], str | None]:
    """A file's question id -> the dataset's (None when it names none): the id itself, its blind id,
    or ``locomo_{n}_qa{i}``: entry ``i`` (0-based) of the ``qa`` list of the ``n``-th scope in source
    order, which the LoCoMo reader numbers ``q{i+1:03d}``."""
    ids = {q.question_id for q in questions}
    blind = {blind_id(dataset_id, "question", q): q for q in ids}

    def resolve(qid: str) -> str | None:
        if qid in ids:
            return qid
        if qid in blind:
            return blind[qid]
        m = _HARNESS_ID.match(qid)
        if m and int(m.group(1)) < len(scope_order):
            own = f"{scope_order[int(m.group(1))]}:q{int(m.group(2)) + 1:03d}"
            return own if own in ids else None
        return None
    return resolve


def same_question(a: str, b: str) -> bool:
    """Two question texts that differ only in case and spacing."""
    return " ".join(a.lower().split()) == " ".join(b.lower().split())
