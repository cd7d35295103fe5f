"""Another system's run as an arm of a run, and any run's arms written back out (``bfr import-run`` /
``bfr export-run``).

Covers: :func:`import_run` (a run file, read by ``runfiles``, mapped onto a dataset's turns and scored
like any arm: one results row and one trace per question, through ``rows.result_row`` and
``runs.write_batch``), :func:`export_rows` / :func:`gold_rows` (an existing run's arms and the
dataset's gold, for ``runfiles.write_*``), :func:`imported_systems` (which arms of which runs were
imported, for the app: they have stored evidence and no live run) and :func:`official_rows`
(LongMemEval's official session / turn figures over the stored rankings: ``metrics.official_scores``,
on the ids ``run_retrieval.py`` uses; equal to ``eval_utils.py``, tested).

Ids. Each submitted id is, in this order: a turn id of the question's scope; a turn's ``local_id``
there (LoCoMo's ``D3:7``, BEAM's message number) when it names one turn; a session id of the scope,
which stands for all its turns in order (LongMemEval's session-granularity log); the blind id of a
turn or session there (``ingest.corpus.blind_id``, as ``bfr export-data --blind`` wrote it). A question
id is the dataset's, or its blind id. An id that is none
of these is an error listing the first few, as is a question of the file the dataset does not hold.
Questions the run scores that the file lacks are an error too, unless ``allow_missing`` (then they
are failed rows with an empty set, kept in every denominator); questions of the dataset outside the
run (not scoreable) are skipped and counted.

Sets. A ranking is kept whole unless ``k`` cuts it (``k`` counts the file's items, before a session
expands); an ``evidence`` set is kept as given. The trace is one ``topk`` step holding the ids with
their scores (the file's, else ``n .. 1``), so Trace and Failures show it with the gold marked.

Does not cover: reading answers or judgments of the other system (retrieval only).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from bfr_core import pipeline
from bfr_core.arm_names import canonical_arm
from bfr_core.duck import fetch_if_tables
from bfr_core.errors import BfrError, some
from bfr_core.evaluation.evaluate import select_questions
from bfr_core.evaluation.metrics import official_scores, official_session_scores
from bfr_core.evaluation.rows import failed_row, result_row
from bfr_core.evaluation.runfiles import Submitted, read_run
from bfr_core.ingest.common import sha256_file
from bfr_core.ingest.corpus import blind_id
from bfr_core.records import Question, Step, Trace, Turn
from bfr_core.runs import ensure_schema, load_results, load_trace_dict, run_row, write_arm
from bfr_core.store import Store

PROVIDER = "imported"


@dataclass(frozen=True, slots=True)
class ImportReport:
    run_id: str
    arm: str
    fmt: str
    questions: int
    missing: int
    skipped: int
    mean_set_size: float
    expanded_sessions: int


class _Resolver:
    """Submitted ids -> turn ids of one scope (turn id, unique local id, session id, or a blind id of either)."""

    def __init__(self, turns: Sequence[Turn], dataset_id: str = "") -> None:
        self.turn_ids = {t.turn_id for t in turns}
        local: dict[str, list[str]] = {}
        self.sessions: dict[str, list[str]] = {}
        for t in turns:
            local.setdefault(t.local_id, []).append(t.turn_id)
            self.sessions.setdefault(t.session_id, []).append(t.turn_id)
        self.local = {k: v[0] for k, v in local.items() if k and len(v) == 1}
        for tid in self.turn_ids:  # after the others: a hash never shadows a real id
            self.local.setdefault(blind_id(dataset_id, "turn", tid), tid)
        self.session_of = {sid: sid for sid in self.sessions}  # a submitted session id -> the store's
        for sid, ids in list(self.sessions.items()):
            self.session_of.setdefault(blind_id(dataset_id, "session", sid), sid)
            self.sessions.setdefault(blind_id(dataset_id, "session", sid), ids)

    def __call__(self, doc: str) -> tuple[list[str] | None, bool]:
        """``(turn ids or None, whether a session was expanded)``."""
        if doc in self.turn_ids:
            return [doc], False
        if doc in self.local:
            return [self.local[doc]], False
        return self.sessions.get(doc), doc in self.sessions

    def near(self, doc: str) -> str | None:
        """The known id ``doc`` becomes once stripped and NFC-normalised, when it differs (a hint)."""
        fixed = unicodedata.normalize("NFC", doc.strip())
        known = fixed != doc and (fixed in self.turn_ids or fixed in self.local or fixed in self.sessions)
        return fixed if known else None

    def session_ranking(self, sub: Submitted, k: int | None) -> list[str] | None:
        """The store's session ids when every submitted id names a session (a session-granularity ranking,
        blind ids mapped back), else None."""
        ids = list(_cut(sub, k))
        if not sub.is_ranking or not ids or any(d in self.turn_ids or d in self.local or d not in self.sessions
                                                for d in ids):
            return None
        return [self.session_of[d] for d in ids]


def _cut(sub: Submitted, k: int | None) -> tuple[str, ...]:
    """The submitted ids ``k`` keeps: a ranking's first ``k``; an evidence set whole."""
    return sub.ids[:k] if (k is not None and sub.is_ranking) else sub.ids


def resolve(sub: Submitted, resolver: _Resolver, k: int | None) -> tuple[list[str], list[float], list[str], int]:
    """``(turn ids, their scores, unknown ids, sessions expanded)`` for one question."""
    ids = _cut(sub, k)
    scores = list(sub.scores[:len(ids)]) if sub.scores is not None else [float(len(ids) - i) for i in range(len(ids))]
    out: dict[str, float] = {}
    unknown, expanded = [], 0
    for doc, score in zip(ids, scores, strict=True):
        turns, session = resolver(doc)
        if turns is None:
            unknown.append(doc)
            continue
        expanded += session
        for t in turns:
            out.setdefault(t, score)
    return list(out), list(out.values()), unknown, expanded


def _trace(dataset_id: str, q: Question, name: str, fmt: str, source: str, ids: list[str], scores: list[float],
           sub: Submitted, k: int | None, sessions: list[str] | None) -> Trace:
    kind = "ranking" if sub.is_ranking else "evidence set"
    step = Step("topk", f"{name}: imported {kind} ({fmt})", tuple(ids), 0, {
        "view": f"imported:{name}", "cue": q.text, "k": len(ids), "source": source, "format": fmt,
        "cut_k": k, "submitted": len(sub.ids), "scores_given": sub.scores is not None,
        **({"session_ranking": sessions} if sessions else {}),
        "hits": [{"turn_id": t, "score": round(float(s), 6)} for t, s in zip(ids, scores, strict=True)]})
    return Trace(dataset_id, q.question_id, name, "", f"{PROVIDER}:{fmt}", (step,), 0.0)


def _unblinded(subs: dict[str, Submitted], dataset_id: str, every: dict[str, Question]) -> dict[str, Submitted]:
    """``subs`` with each blind question id (``bfr export-data --blind``) named by the dataset's own id."""
    blind = {blind_id(dataset_id, "question", qid): qid for qid in every}
    out: dict[str, Submitted] = {}
    for qid, sub in subs.items():
        real = qid if qid in every else blind.get(qid, qid)
        if real in out:
            raise BfrError(f"question {real!r} is in the file twice (once by its blind id)")
        out[real] = dataclasses.replace(sub, question_id=real)
    return out


def import_run(store: Store, path: str | Path, *, dataset_id: str, name: str, fmt: str = "auto",
               run_id: str | None = None, k: int | None = None, tag: str | None = None,
               allow_missing: bool = False, replace: bool = False) -> ImportReport:
    """Score ``path`` as arm ``name`` of ``run_id`` (or of a new run of its own); nothing is written
    unless every id maps. Returns what was imported."""
    ensure_schema(store)
    check_name(name)
    if store.dataset(dataset_id) is None:
        raise BfrError(f"no dataset '{dataset_id}' in {store.path}; ingest it first")
    source = str(Path(path).resolve())  # where the file was, from any working directory
    fmt, subs = read_run(path, fmt, tag)
    if not subs:
        raise BfrError(f"{path}: no question in the file" + (f" for system {tag!r}" if tag else ""))
    every = {q.question_id: q for q in store.questions(dataset_id)}
    subs = _unblinded(subs, dataset_id, every)
    unknown_q = [qid for qid in subs if qid not in every]
    if unknown_q:
        raise BfrError(f"{path}: {len(unknown_q)} question id(s) not in dataset '{dataset_id}': "
                       f"{some(unknown_q)}")
    run_arg = run_id
    run_qs, run_id, new_run = _run_questions(store, dataset_id, run_id, name, path, source, k, tag, every)
    missing = [q.question_id for q in run_qs if q.question_id not in subs]
    if missing and not allow_missing:
        raise BfrError(f"{path}: {len(missing)} question(s) of the run are not in the file: "
                       f"{some(missing)} (pass --allow-missing to score them as empty sets)")
    rows, traces, bad, expanded = [], [], [], 0
    resolvers: dict[str, _Resolver] = {}
    for q in run_qs:
        sub = subs.get(q.question_id)
        if sub is None:
            rows.append(failed_row(run_id, q, name, "", "not in the imported file"))
            continue
        if q.scope_id not in resolvers:
            resolvers[q.scope_id] = _Resolver(store.scope_turns(dataset_id, q.scope_id), dataset_id)
        ids, scores, unknown, n_exp = resolve(sub, resolvers[q.scope_id], k)
        bad += [(q.question_id, u, resolvers[q.scope_id].near(u)) for u in unknown]
        expanded += n_exp
        trace = _trace(dataset_id, q, name, fmt, source, ids, scores, sub, k,
                       resolvers[q.scope_id].session_ranking(sub, k))
        rows.append(result_row(run_id, q, trace))
        traces.append((run_id, q.question_id, name, json.dumps(trace.to_dict())))
    if bad:
        shown = "; ".join(f"{qid}: {u!r}" + (f" (the scope has {near!r}: spaces or Unicode form differ)" if near else "")
                          for qid, u, near in bad[:5])
        more = f" and {len(bad) - 5:,} more" if len(bad) > 5 else ""
        raise BfrError(f"{path}: {len(bad)} id(s) name no turn or session of their question's scope: {shown}{more}")
    register = None if new_run is None else {
        "dataset_id": dataset_id, "arms": [name], "budget": "", "k": k or 0, "provider": PROVIDER,
        "n_questions": len(run_qs), "options": new_run,
        "data_sha": str(store.dataset(dataset_id)["source_sha256"])}  # the data version it was scored on
    _write(store, run_id, name, rows, traces, replace, own_run=run_arg is None, register=register)
    sizes = [r[6] for r in rows]
    return ImportReport(run_id, name, fmt, len(rows), len(missing), len(subs) - (len(run_qs) - len(missing)),
                        round(sum(sizes) / len(sizes), 2) if sizes else 0.0, expanded)


def check_name(name: str) -> None:
    """An imported system's name: not empty, no whitespace or '|' (TREC tags and Markdown tables hold
    it), no control or format character (a terminal would act on it), and not the name of an arm this workbench runs (it would stand in for that arm)."""
    if not name or any(c.isspace() for c in name) or "|" in name or not name.isprintable():
        raise BfrError(f"--name {name!r}: a system's name must be non-empty, printable (no control characters), "
                       "without spaces or '|'")
    if canonical_arm(name) in pipeline.arm_names():  # an alias would stand in for its arm too
        raise BfrError(f"--name {name!r} is an arm of this workbench; name the imported system otherwise "
                       f"(e.g. '{name}-theirs')")


def _run_questions(store: Store, dataset_id: str, run_id: str | None, name: str, path: str | Path, source: str,
                   k: int | None, tag: str | None, every: dict[str, Question]) -> tuple[list[Question], str, dict | None]:
    """The questions the arm is scored on, the run id, and for a new run (scoreable questions) its
    options: registered only once every id has mapped."""
    if run_id is not None:
        row = run_row(store, run_id)
        if row is None:
            raise BfrError(f"no run '{run_id}' in {store.path}")
        if row[0] != dataset_id:
            raise BfrError(f"run '{run_id}' is over dataset '{row[0]}', not '{dataset_id}'")
        qids = dict.fromkeys(r["question_id"] for r in load_results(store, run_id))
        return [every[q] for q in qids if q in every], run_id, None
    qs = select_questions(store, dataset_id)
    key = json.dumps([dataset_id, name, sha256_file(path), k, tag])
    new_id = f"{dataset_id}-import-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
    return qs, new_id, {"imported": {"source": source, "k": k, "tag": tag}}


def _write(store: Store, run_id: str, name: str, rows: list, traces: list, replace: bool, own_run: bool,
           register: dict[str, Any] | None) -> None:
    """The arm in one transaction (``runs.write_arm``): an earlier import replaced only with ``replace``;
    the run marked finished only when it is the import's own (an existing run keeps its state)."""
    again = name in {r["arm"] for r in load_results(store, run_id)}
    if again:
        if not replace:
            why = (f"this file's content was imported as '{name}' before (its run '{run_id}', named by the content, "
                   "not the path)" if own_run else f"run '{run_id}' already has an arm '{name}'")
            raise BfrError(f"{why}; pass --replace to import it again, or choose another --name")
        ran = store.cursor().execute("SELECT count(*) FROM traces WHERE run_id = ? AND arm = ? AND "
                                     "coalesce(trace->>'$.provider', '') NOT LIKE ?", [run_id, name, f"{PROVIDER}:%"]
                                     ).fetchone()[0]
        if ran:
            raise BfrError(f"arm '{name}' of run '{run_id}' was run here, not imported: --replace only replaces an "
                           "imported system; choose another --name")
    try:
        write_arm(store, run_id, name, rows, traces, new_run=register, replace=again, finish=own_run)
    except (duckdb.IOException, duckdb.FatalException, duckdb.TransactionException, duckdb.OutOfMemoryException) as exc:
        raise BfrError(f"cannot write the arm '{name}' to {store.path} ({_first_line(exc)}); nothing of this import "
                       "was kept and the store holds what it held before") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


# -- reading a run back out ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImportedSystem:
    """One imported arm of one run: where its file came from and how many questions it holds."""

    run_id: str
    dataset_id: str
    arm: str
    source: str
    fmt: str
    questions: int


def imported_systems(store: Store, dataset_id: str | None = None) -> list[ImportedSystem]:
    """Every arm :func:`import_run` wrote (its traces' provider is ``imported:<format>``), newest run
    first, then by arm; none on a read-only store no run was ever written to."""
    ensure_schema(store)
    sql = ("SELECT t.run_id, u.dataset_id, t.arm, any_value(t.trace->'$.steps[0].data'->>'source'), "
           "any_value(t.trace->>'$.provider'), count(*) FROM traces t JOIN runs u USING (run_id) "
           "WHERE t.trace->>'$.provider' LIKE ? " + ("AND u.dataset_id = ? " if dataset_id else "")
           + "GROUP BY t.run_id, u.dataset_id, t.arm, u.created ORDER BY u.created DESC, t.run_id, t.arm")
    rows = fetch_if_tables(store.cursor(), sql, [f"{PROVIDER}:%", *([dataset_id] if dataset_id else [])]) or []
    return [ImportedSystem(r[0], r[1], r[2], r[3] or "", (r[4] or "").removeprefix(f"{PROVIDER}:"), int(r[5]))
            for r in rows]


def _ranking(trace: dict[str, Any] | None, evidence: Sequence[str]) -> tuple[list[str], list[float] | None]:
    """An arm's ids in order with their scores when its last step carried them (a top-k view)."""
    hits = ((trace or {}).get("steps") or [{}])[-1].get("data", {}).get("hits")
    if hits and [h.get("turn_id") for h in hits] == list(evidence):
        return list(evidence), [float(h["score"]) for h in hits]
    return list(evidence), None


def export_rows(store: Store, run_id: str, arms: Sequence[str] | None = None
                ) -> Iterator[tuple[str, str, list[str], list[float] | None]]:
    """``(arm, question_id, ids, scores)`` for every stored row of the run (``arms`` picks some)."""
    for arm, qid, evidence, trace in _arm_rows(store, run_id, arms):
        ids, scores = _ranking(trace, evidence)
        yield arm, qid, ids, scores


def _arm_rows(store: Store, run_id: str, arms: Sequence[str] | None
              ) -> Iterator[tuple[str, str, list[str], dict[str, Any] | None]]:
    """``(arm, question_id, evidence, trace)`` for every stored row of the run (``arms`` picks some), each
    arm by its registered name (``arm_names``: an alias picks, and a run stored under one exports as, its arm)."""
    row = run_row(store, run_id)
    if row is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    have = [canonical_arm(a) for a in row[1] or []]
    unknown = [a for a in arms or () if canonical_arm(a) not in have]
    if unknown:
        raise BfrError(f"run '{run_id}' has no arm {', '.join(unknown)} (arms: {', '.join(have)})")
    wanted = {canonical_arm(a) for a in arms or ()}
    for r in load_results(store, run_id):
        if arms and canonical_arm(r["arm"]) not in wanted:
            continue
        yield (canonical_arm(r["arm"]), r["question_id"], r["evidence"] or [],
               load_trace_dict(store, run_id, r["question_id"], r["arm"]))


def gold_rows(store: Store, run_id: str) -> list[tuple[str, list[str]]]:
    """``(question_id, gold turn ids)`` of the run's questions, in question order."""
    row = run_row(store, run_id)
    if row is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    qids = set(r["question_id"] for r in load_results(store, run_id))
    return [(q.question_id, list(q.gold)) for q in store.questions(row[0]) if q.question_id in qids]


def official_rows(store: Store, run_id: str, arm: str, ks: Sequence[int] = (5, 10)) -> list[dict[str, Any]]:
    """Per non-abstention question, LongMemEval's official figures (``metrics.official_scores``, on
    ``run_retrieval.py``'s ids) of the arm's stored ranking over the scope's user turns (its
    corpus), with ``question_id`` and ``qtype``. An imported session-granularity ranking is scored
    as sessions (``metrics.official_session_scores``: what ``run_retrieval.py`` reports for such a
    log; its turn figures are None), not through the turns it was expanded into."""
    row = run_row(store, run_id)
    if row is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    qs = {q.question_id: q for q in store.questions(row[0])}
    out = []
    corpora: dict[str, list[Turn]] = {}
    for _, qid, evidence, trace in _arm_rows(store, run_id, [arm]):
        q = qs[qid]
        if q.is_abstention:
            continue
        if q.scope_id not in corpora:
            corpora[q.scope_id] = [t.turn_id for t in store.scope_turns(row[0], q.scope_id) if t.speaker == "user"]
        corpus = corpora[q.scope_id]
        user = frozenset(corpus)
        sessions = ((trace or {}).get("steps") or [{}])[-1].get("data", {}).get("session_ranking")
        scores = (official_session_scores(sessions, q.gold, corpus, ks) if sessions
                  else official_scores([t for t in evidence if t in user], q.gold, corpus, ks))
        out.append({"question_id": qid, "qtype": q.qtype, **scores})
    return out
