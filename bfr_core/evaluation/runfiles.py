"""Other systems' run files, read and written: a documented JSONL, TREC runs and qrels, LongMemEval's
retrieval log. Pure: files in, :class:`Submitted` records out (and back); no store access.

Formats (``FORMATS``; ``auto`` tells them apart by the first non-blank line):

* ``jsonl`` (ours, ``docs/run-format.md``): one object per line, ``{"question_id": "q1", "ranking":
  ["t3", "t9"], "scores": [2.5, 1.0]}`` (a ranking; ``scores`` optional, one number per id) or
  ``{"question_id": "q1", "evidence": ["t3", "t9"]}`` (a set, as given). Optional ``"system"`` (a
  name, selected with ``tag``) and ``"meta"`` (ignored); any other key is an error.
* ``trec``: ``qid Q0 docid rank score tag`` per line, whitespace-separated. Each question's ids are
  ordered by score, high first, ties by the rank column then file order (what trec_eval and ranx
  read); several tags in one file need ``tag``.
* ``lme``: the JSONL ``src/retrieval/run_retrieval.py`` of LongMemEval writes: ``question_id`` and
  ``retrieval_results.ranked_items[].corpus_id`` in rank order. That script renames the ids of
  answer-session turns without the answer (and, at session granularity, answer sessions without an
  answer turn) from ``answer`` to ``noans``; they are renamed back here, so turn granularity gives
  the official turn ids (``{session_id}_{index+1}``) and session granularity session ids.

Writing: :func:`write_trec` (scores strictly descending, so a reread keeps the order), :func:`write_jsonl`
and :func:`write_qrels` (``qid 0 docid 1``). Every read error names the file and line. Files are read
one line at a time (``ingest.common.iter_lines``): memory holds what is kept, not the file's text.
Does not cover: mapping ids to a dataset's turns (``evaluation.imported``), TREC docids with spaces.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from bfr_core.errors import InputError
from bfr_core.ingest.common import expect, iter_jsonl, iter_lines

FORMATS = ("auto", "jsonl", "trec", "lme")
JSONL_KEYS = frozenset({"question_id", "ranking", "scores", "evidence", "system", "meta"})


@dataclass(frozen=True, slots=True)
class Submitted:
    """One question's answer from another system: ids in rank order (or a set, as given)."""

    question_id: str
    ids: tuple[str, ...]
    scores: tuple[float, ...] | None = None
    is_ranking: bool = True
    line: int = 0


def detect(path: str | Path) -> str:
    """``jsonl``, ``lme`` or ``trec`` from the first non-blank line (a line JSON cannot read, however
    odd: nested past the parser's depth, a number past Python's digit limit, is no JSON object)."""
    first = next((ln for _, ln in iter_lines(path)), "")
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        obj = None
    if isinstance(obj, dict) or (obj is None and first.lstrip().startswith("{")):  # (its reader names the fault)
        lme = "retrieval_results" in obj if isinstance(obj, dict) else '"retrieval_results"' in first
        return "lme" if lme else "jsonl"
    if len(first.split()) == 6:
        return "trec"
    raise InputError(str(path), "not a run file: the first line is neither a JSON object nor 'qid Q0 docid rank "
                     "score tag'", record="line 1")


def read_run(path: str | Path, fmt: str = "auto", tag: str | None = None) -> tuple[str, dict[str, Submitted]]:
    """``(format, question id -> Submitted)``, in file order."""
    if fmt not in FORMATS:
        raise InputError(str(path), f"unknown run format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    fmt = detect(path) if fmt == "auto" else fmt
    reader = {"jsonl": _read_jsonl, "trec": _read_trec, "lme": _read_lme}[fmt]
    return fmt, reader(str(path), tag)


def _ids(value: Any, path: str, record: str, name: str) -> tuple[str, ...]:
    """The ids of a ranking or set; an id given twice is an error, as in a TREC run."""
    expect(value, list, path, record, name)
    ids = tuple(expect(v, str, path, record, f"{name}[{i}]") for i, v in enumerate(value))
    first: dict[str, int] = {}
    for i, v in enumerate(ids):
        if v in first:
            raise InputError(path, f"id {v!r} twice (positions {first[v]} and {i})", record=record, field=name)
        first[v] = i
    return ids


def _one_system(found: Iterable[str], tag: str | None, path: str) -> None:
    tags = sorted(set(found))
    if "" in tags and len(tags) > 1:
        raise InputError(path, f"some lines name a system ({', '.join(tags[1:6])}) and some name none; label every "
                         "line or none")
    if tag is None and len(tags) > 1:
        raise InputError(path, f"the file holds {len(tags)} systems ({', '.join(tags[:5])}); pick one with --tag")
    if tag is not None and tag not in tags:
        raise InputError(path, f"no system {tag!r} in the file (found: {', '.join(tags[:5]) or 'none named'})")


def _put(out: dict[str, Submitted], item: Submitted, path: str) -> None:
    if item.question_id in out:
        raise InputError(path, f"question {item.question_id!r} again (first on line {out[item.question_id].line})",
                         record=f"line {item.line}")
    out[item.question_id] = item


def _score(value: Any, path: str, record: str, name: str) -> float:
    """A score as a finite float (an integer of 400 digits is past a double's range)."""
    expect(value, (int, float), path, record, name)
    try:
        score = float(value)
    except OverflowError:
        score = math.inf
    if not math.isfinite(score):
        raise InputError(path, "is not a finite number (the ranking sorts by it)", record=record, field=name)
    return score


def _read_jsonl(path: str, tag: str | None) -> dict[str, Submitted]:
    """One pass over the file, each system's questions kept apart; then which system is read."""
    by_system: dict[str, dict[str, Submitted]] = {}
    for line, obj in iter_jsonl(path):
        r = f"line {line}"
        expect(obj, dict, path, r, None)
        unknown = sorted(set(obj) - JSONL_KEYS)
        if unknown:
            raise InputError(path, f"unknown field (allowed: {', '.join(sorted(JSONL_KEYS))})", record=r,
                             field=unknown[0])
        system = expect(obj.get("system", ""), str, path, r, "system")
        out = by_system.setdefault(system, {})
        if tag is not None and system != tag:
            continue
        qid = expect(obj.get("question_id"), str, path, r, "question_id")
        if ("ranking" in obj) == ("evidence" in obj):
            raise InputError(path, "give exactly one of 'ranking' and 'evidence'", record=r)
        if "evidence" in obj:
            if "scores" in obj:
                raise InputError(path, "'scores' goes with a 'ranking', not an 'evidence' set", record=r, field="scores")
            _put(out, Submitted(qid, _ids(obj["evidence"], path, r, "evidence"), None, False, line), path)
            continue
        ids = _ids(obj["ranking"], path, r, "ranking")
        scores = None
        if obj.get("scores") is not None:
            raw = expect(obj["scores"], list, path, r, "scores")
            scores = tuple(_score(s, path, r, f"scores[{i}]") for i, s in enumerate(raw))
            if len(scores) != len(ids):
                raise InputError(path, f"{len(scores)} scores for {len(ids)} ids", record=r, field="scores")
        _put(out, Submitted(qid, ids, scores, True, line), path)
    _one_system(by_system, tag, path)
    return by_system.get(tag if tag is not None else next(iter(by_system), ""), {})


def _read_trec(path: str, tag: str | None) -> dict[str, Submitted]:
    lines = []
    for n, raw in iter_lines(path):
        parts = raw.split()
        if len(parts) != 6:
            raise InputError(path, f"expected 6 fields 'qid Q0 docid rank score tag', got {len(parts)}", record=f"line {n}")
        try:
            rank, score = int(parts[3]), float(parts[4])
        except ValueError:
            raise InputError(path, "rank must be an integer and score a number", record=f"line {n}") from None
        if not math.isfinite(score):
            raise InputError(path, f"score {parts[4]!r} is not a finite number (the ranking sorts by it)",
                             record=f"line {n}")
        lines.append((n, parts[0], parts[2], rank, score, parts[5]))
    _one_system((x[5] for x in lines), tag, path)
    grouped: dict[str, list[tuple[int, str, int, float]]] = {}
    for n, qid, doc, rank, score, t in lines:
        if tag is None or t == tag:
            grouped.setdefault(qid, []).append((n, doc, rank, score))
    out: dict[str, Submitted] = {}
    for qid, rows in grouped.items():
        seen: dict[str, int] = {}
        for n, doc, _, _ in rows:
            if doc in seen:
                raise InputError(path, f"docid {doc!r} twice for question {qid!r} (first on line {seen[doc]})",
                                 record=f"line {n}")
            seen[doc] = n
        rows.sort(key=lambda x: (-x[3], x[2], x[0]))
        out[qid] = Submitted(qid, tuple(x[1] for x in rows), tuple(x[3] for x in rows), True, rows[0][0])
    return out


def lme_id(corpus_id: str) -> str:
    """A LongMemEval log id as the dataset names it: ``noans`` back to ``answer``."""
    return corpus_id.replace("noans", "answer")


def _read_lme(path: str, tag: str | None) -> dict[str, Submitted]:
    if tag is not None:
        raise InputError(path, "a LongMemEval retrieval log holds one system: --tag does not apply")
    out: dict[str, Submitted] = {}
    for line, obj in iter_jsonl(path):
        r = f"line {line}"
        expect(obj, dict, path, r, None)
        qid = expect(obj.get("question_id"), str, path, r, "question_id")
        res = expect(obj.get("retrieval_results"), dict, path, r, "retrieval_results")
        items = expect(res.get("ranked_items"), list, path, r, "retrieval_results.ranked_items")
        ids = []
        for i, it in enumerate(items):
            name = f"retrieval_results.ranked_items[{i}]"
            expect(it, dict, path, r, name)
            ids.append(lme_id(expect(it.get("corpus_id"), str, path, r, f"{name}.corpus_id")))
        _put(out, Submitted(qid, tuple(ids), None, True, line), path)
    return out


# -- writing -----------------------------------------------------------------------------------------


def _checked(doc: str, what: str) -> str:
    if not doc or any(c.isspace() for c in doc):
        raise InputError("(export)", f"{what} {doc!r} is empty or has whitespace; TREC files cannot hold it")
    return doc


def descending(scores: Sequence[float] | None, n: int) -> list[float]:
    """The scores to write: the given ones when strictly descending, else ``n, n-1, ..., 1``."""
    if scores is not None and len(scores) == n and all(a > b for a, b in zip(scores, scores[1:], strict=False)):
        return [float(s) for s in scores]
    return [float(n - i) for i in range(n)]


def write_trec(out: TextIO, runs: Iterable[tuple[str, str, Sequence[str], Sequence[float] | None]]) -> int:
    """``(system, question_id, ids, scores)`` -> TREC lines; returns the number of lines."""
    count = 0
    for system, qid, ids, scores in runs:
        for rank, (doc, score) in enumerate(zip(ids, descending(scores, len(ids)), strict=True), start=1):
            out.write(f"{_checked(qid, 'question id')} Q0 {_checked(doc, 'turn id')} {rank} {score:.6g} "
                      f"{_checked(system, 'system name')}\n")
            count += 1
    return count


def write_jsonl(out: TextIO, runs: Iterable[tuple[str, str, Sequence[str], Sequence[float] | None]]) -> int:
    count = 0
    for system, qid, ids, scores in runs:
        row: dict[str, Any] = {"question_id": qid, "system": system, "ranking": list(ids)}
        if scores is not None and len(scores) == len(ids):
            row["scores"] = list(scores)
        out.write(json.dumps(row) + "\n")
        count += 1
    return count


def write_qrels(out: TextIO, gold: Iterable[tuple[str, Sequence[str]]]) -> int:
    """``(question_id, gold ids)`` -> ``qid 0 docid 1`` lines (questions without gold write none)."""
    count = 0
    for qid, ids in gold:
        for doc in ids:
            out.write(f"{_checked(qid, 'question id')} 0 {_checked(doc, 'turn id')} 1\n")
            count += 1
    return count
