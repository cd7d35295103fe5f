"""Answer-level scores for a finished run: extractive answer, stem F1, Mem0-style judge, LLM-Suff@Set,
and (LongMemEval) LongMemEval's official per-type judge.

Reads the evidence sets a run stored, renders them as text (session date, speaker, text; no ids),
and fills the ``answer``, ``f1``, ``judge``, ``lme_judge``, ``suff`` and ``suff_detail`` columns of
``results``. On LongMemEval the answerer is shown the question's date, as LongMemEval's own reader is;
the question type reaches LongMemEval's judge only (``roles.lme_judge``), never a method.
Resumable: rows that already have a value are skipped, and every LLM call is cached, so a rerun of a
finished run makes no provider call. A call that fails for good is recorded in ``error`` and the run
goes on. LoCoMo F1 follows the official scorer (per category); other datasets use plain stem F1.
A client with a small context (the local model) makes every role read the same fitted set: long
snippets shortened to their sentences nearest the question (``bfr_core.roles.fit``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from bfr_core.config import LLMConfig
from bfr_core.errors import BfrError
from bfr_core.evaluation.answer_f1 import f1_score, locomo_f1
from bfr_core.evaluation.evaluate import worker_llm
from bfr_core.evaluation.executors import ThreadExecutor
from bfr_core.llm.base import LLM, LLMCallFailed
from bfr_core.llm.cache import CallRecord, LLMCache, call_arm, spent_ms
from bfr_core.progress import Progress
from bfr_core.records import Question, Turn
from bfr_core.roles.answer_judge import judgment as judge_role
from bfr_core.roles.answerer import answer as answer_role
from bfr_core.roles.fit import fit_for
from bfr_core.roles.lme_judge import QUESTION_TYPES
from bfr_core.roles.lme_judge import lme_judge as lme_judge_role
from bfr_core.roles.snippets import DATE_FORMAT, render
from bfr_core.roles.sufficiency import suff_at_set
from bfr_core.runs import answer_todo, update_answer_columns, update_judge_column, update_lme_judge_column
from bfr_core.store import Store

LME_KIND = "longmemeval"  # the dataset kind whose answerer sees the question date


@dataclass(frozen=True, slots=True)
class SuffPanel:
    """Who judges sufficiency: two independent judges and an adjudicator (Appendix M).

    The paper's judges are two different models. :meth:`single` builds the panel of a run with one
    model: judge B then follows the "cite" procedure (see ``roles.sufficiency.suff_at_set``).
    """

    judge_a: LLM
    judge_b: LLM
    adjudicator: LLM
    procedure_b: str = "reason"

    @classmethod
    def single(cls, llm: LLM) -> SuffPanel:
        return cls(llm, llm, llm, procedure_b="cite")

    @property
    def clients(self) -> tuple[LLM, LLM, LLM]:
        return self.judge_a, self.judge_b, self.adjudicator

    @property
    def labels(self) -> list[str]:
        b = f"{self.judge_b.label} ({self.procedure_b} procedure)" if self.procedure_b != "reason" else self.judge_b.label
        return [self.judge_a.label, b, self.adjudicator.label]


def answer_f1(question: Question, prediction: str) -> float:
    if question.category is not None and 1 <= question.category <= 5:
        return locomo_f1(prediction, question.answer, question.category)
    return f1_score(prediction, question.answer)


@dataclass(frozen=True, slots=True)
class ArmTodo:
    """One row to score: its arm, its evidence rendered as text, and what is already filled."""

    arm: str
    texts: tuple[str, ...]
    prev_answer: str | None
    prev_judge: str | None
    prev_suff: str | None
    prev_lme: str | None = None


@dataclass(frozen=True, slots=True)
class Scored:
    """What one row's LLM work produced (the driver writes it)."""

    arm: str
    answer: str | None
    f1: float | None
    suff: str | None
    suff_detail: str | None
    error: str | None
    first_ms: float
    judged: bool  # the judge ran (its columns are written)
    judge: str | None = None
    judge_error: str | None = None
    judge_ms: float = 0.0
    judge_reason: str | None = None
    lme_judged: bool = False  # LongMemEval's judge ran
    lme_judge: str | None = None
    lme_error: str | None = None
    lme_ms: float = 0.0


@dataclass(frozen=True, eq=False)
class LocalClients:
    """A thread worker's clients: the run's own (cached, logging) ones."""

    llm: LLM
    panel: SuffPanel

    def open(self) -> tuple[LLM, SuffPanel]:
        return self.llm, self.panel


@dataclass(frozen=True)
class ShippedClients:
    """A remote worker's clients, as settings (keys come from the worker's environment)."""

    llm: LLMConfig
    judge_b: LLMConfig | None = None
    adjudicator: LLMConfig | None = None
    procedure_b: str = "cite"

    def open(self) -> tuple[LLM, SuffPanel]:
        main = worker_llm(self.llm)
        b = worker_llm(self.judge_b) if self.judge_b else main
        adj = worker_llm(self.adjudicator) if self.adjudicator else main
        return main, SuffPanel(main, b, adj, procedure_b=self.procedure_b)


@dataclass(frozen=True, slots=True)
class AnswerWork:
    """The shared part of a scoring run: which columns to fill, and with what."""

    clients: LocalClients | ShippedClients
    answer: bool
    judge: bool
    suff: bool
    lme_judge: bool = False
    dated: bool = False  # the answerer sees the question date (LongMemEval)


def score_question(work: AnswerWork, item: tuple[Question, tuple[ArmTodo, ...]]) -> tuple[tuple[Scored, ...],
                                                                                          tuple[CallRecord, ...]]:
    """One question's rows (all its arms, or one): first the answer and Suff@Set of each arm's set
    (they read the same evidence, so a local model reuses its evaluated snippets; an arm whose set
    starts with another's, as FCA-MS's E0 starts BFR-MV's, reuses that prefix from the local model's
    state cache), then the judge for every arm (its long fixed preamble is evaluated once and
    reused). A function of its arguments: it runs in any thread or worker."""
    q, todos = item
    llm, panel = work.clients.open()
    firsts: list[tuple[ArmTodo, dict[str, Any], float]] = []
    for t in todos:
        with call_arm(t.arm):
            start = spent_ms(llm, *panel.clients)
            values = _answer_and_suff(q, t, llm, panel, answer=work.answer, suff=work.suff, dated=work.dated)
            firsts.append((t, values, spent_ms(llm, *panel.clients) - start))
    out = []
    for t, values, first_ms in firsts:
        judged, label, reason, error, judge_ms = False, None, None, None, 0.0
        if work.judge and values["answer"] is not None and t.prev_judge is None:
            judged = True
            with call_arm(t.arm):
                start = spent_ms(llm, *panel.clients)
                try:
                    verdict = judge_role(llm, q.text, q.answer, values["answer"])
                    label, reason = verdict.label, verdict.reason
                except LLMCallFailed as exc:
                    error = f"llm: {exc.reason}"
                judge_ms = spent_ms(llm, *panel.clients) - start
        lme_judged, lme_label, lme_error, lme_ms = False, None, None, 0.0
        if work.lme_judge and values["answer"] is not None and t.prev_lme is None:
            lme_judged = True
            with call_arm(t.arm):
                lme_label, lme_error, lme_ms = _lme_judgment(llm, panel, q, values["answer"])
        f1 = answer_f1(q, values["answer"]) if values["answer"] is not None else None
        out.append(Scored(t.arm, values["answer"], f1, values["suff"], values["suff_detail"], values["error"],
                          first_ms, judged, label, error, judge_ms, reason, lme_judged, lme_label, lme_error, lme_ms))
    calls: list[CallRecord] = []
    for client in dict.fromkeys([llm, *panel.clients]):
        drain = getattr(client, "drain", None)
        if drain is not None:
            calls += drain()
    return tuple(out), tuple(calls)


def score_answers(
    store: Store, run_id: str, llm: LLM, *, answer: bool = True, judge: bool = False, suff: bool = False,
    panel: SuffPanel | None = None, progress: Progress | None = None, executor: Any = None,
    shipped: ShippedClients | None = None, status: Callable[[], str] | None = None,
    on_calls: Callable[[Sequence[CallRecord]], None] | None = None, lme_judge: bool = False,
) -> int:
    """Fill answer-level columns for every finished row of ``run_id``; returns rows updated.

    Question by question (so an interrupted run leaves whole questions done; see :func:`score_question`
    for the order of the calls). ``executor`` runs the questions (default: one at a time, here); with
    more than one worker each (question, arm) is its own job, for more calls in flight. The calling
    thread alone writes the store, one transaction per batch of jobs (a killed run loses at most the
    batch in flight), in job order. A remote executor needs ``shipped`` (the clients as settings).
    ``llm_ms`` accumulates each row's LLM wall time. ``status()`` adds a line to the progress label.
    ``lme_judge``: LongMemEval's official judge after the paper's (a question of a type it has no prompt
    for is an error); on a LongMemEval dataset the answerer sees the question date.
    """
    executor = executor or ThreadExecutor(1)
    remote = bool(getattr(executor, "remote", False))
    if remote and shipped is None:
        raise BfrError("a remote executor needs the clients' settings (shipped) to score answers")
    cur = store.cursor()
    dataset_id = cur.execute("SELECT dataset_id FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
    rows = answer_todo(store, run_id)
    questions = {q.question_id: q for q in store.questions(dataset_id)}
    panel = panel or SuffPanel.single(llm)
    answer = answer or judge or lme_judge
    dated = (store.dataset(dataset_id) or {}).get("kind") == LME_KIND
    if lme_judge:
        _check_lme_types(questions.values())
    todo = [r for r in rows if (answer and r[3] is None) or (judge and r[4] is None) or (suff and r[5] is None)
            or (lme_judge and r[6] is None)]
    by_question: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for r in todo:
        by_question[r[0]].append(r)
    workers = int(getattr(executor, "workers", 1))
    work = AnswerWork(shipped if remote else LocalClients(llm, panel), answer, judge, suff, lme_judge, dated)
    cache = LLMCache(store) if remote else None

    def jobs() -> Iterator[tuple[AnswerWork, tuple[Question, tuple[ArmTodo, ...]]]]:
        for qid, group in by_question.items():
            # every arm's evidence in one query, dated as the question's haystack dates it
            by_id = store.turns_by_id(dataset_id, sorted({t for r in group for t in r[2]}), questions[qid].scope_id)
            arms = tuple(_todo(by_id, r) for r in group)
            for part in ((arms,) if workers == 1 else tuple((a,) for a in arms)):
                yield work, (questions[qid], part)

    sizes = [len(g) if workers == 1 else 1 for g in by_question.values() for _ in range(1 if workers == 1 else len(g))]
    qids = [qid for qid, g in by_question.items() for _ in range(1 if workers == 1 else len(g))]
    batch: list[tuple[str, tuple[Scored, ...]]] = []
    per_batch = max(1, workers)
    done = 0
    for n, (scored, calls) in enumerate(executor.map(score_question, jobs())):
        if cache is not None and calls:
            cache.replay(calls, run_id)
        if on_calls is not None:
            on_calls(calls)
        batch.append((qids[n], scored))
        done += sizes[n]
        if len(batch) >= per_batch or n + 1 == len(sizes):
            _write(store, run_id, batch)
            batch = []
            if progress:
                progress(done, len(todo), f"{qids[n]} {status()}" if status else qids[n])
    return len(todo)


def _check_lme_types(questions: Any) -> None:
    """LongMemEval's judge has a prompt per LongMemEval question type (and one for abstention)."""
    odd = sorted({q.qtype for q in questions if not q.is_abstention and q.qtype not in QUESTION_TYPES})
    if odd:
        raise BfrError(f"--lme-judge: LongMemEval's judge has no prompt for question type(s) {', '.join(odd)}")


def _lme_judgment(llm: LLM, panel: SuffPanel, q: Question, response: str) -> tuple[str | None, str | None, float]:
    """One row's LongMemEval judgment ("yes" / "no" / the offline rules' "undecided"), error, ms."""
    start = spent_ms(llm, *panel.clients)
    label, error = None, None
    try:
        label = lme_judge_role(llm, q.qtype, q.text, q.answer, response, abstention=q.is_abstention)
    except LLMCallFailed as exc:
        error = f"llm: {exc.reason}"
    return label, error, spent_ms(llm, *panel.clients) - start


def _todo(by_id: dict[str, Turn], row: tuple[Any, ...]) -> ArmTodo:
    _, arm, evidence, prev_answer, prev_judge, prev_suff, prev_lme = row
    return ArmTodo(arm, tuple(render([by_id[t] for t in evidence if t in by_id])), prev_answer, prev_judge, prev_suff,
                  prev_lme)


def _write(store: Store, run_id: str, batch: Sequence[tuple[str, tuple[Scored, ...]]]) -> None:
    """One transaction: each row's answer and Suff@Set columns, then its judge, then LongMemEval's."""
    with store.transaction() as tx:
        for qid, scored in batch:
            for s in scored:
                update_answer_columns(tx, run_id, qid, s.arm, answer=s.answer, f1=s.f1, suff=s.suff,
                                      suff_detail=s.suff_detail, error=s.error, llm_ms=s.first_ms)
            for s in scored:
                if s.judged:
                    update_judge_column(tx, run_id, qid, s.arm, judge=s.judge, error=s.judge_error,
                                        llm_ms=s.judge_ms, reason=s.judge_reason)
            for s in scored:
                if s.lme_judged:
                    update_lme_judge_column(tx, run_id, qid, s.arm, label=s.lme_judge, error=s.lme_error,
                                            llm_ms=s.lme_ms)


def _answer_and_suff(q: Question, t: ArmTodo, llm: LLM, panel: SuffPanel, *, answer: bool,
                     suff: bool, dated: bool = False) -> dict[str, Any]:
    """One row's answer and Suff@Set (the values of its columns)."""
    texts = list(t.texts)
    # a small-context model: every role reads the same fitted snippets
    fitted = fit_for([llm, *panel.clients], q.text, texts)
    trimmed = sum(a != b for a, b in zip(texts, fitted, strict=True))
    texts = fitted
    values: dict[str, Any] = {"answer": t.prev_answer, "suff": t.prev_suff, "suff_detail": None, "error": None}
    try:
        if answer and t.prev_answer is None:
            when = q.date.strftime(DATE_FORMAT) if dated and q.date else None
            values["answer"] = answer_role(llm, q.text, texts, question_date=when)
        if suff and t.prev_suff is None:
            res = suff_at_set((panel.judge_a, panel.judge_b), panel.adjudicator, q.text, q.answer, texts,
                              procedure_b=panel.procedure_b)
            values["suff"] = res.label
            values["suff_detail"] = json.dumps({
                "judge_labels": list(res.judge_labels), "adjudicated": res.adjudicated,
                "reasons": list(res.reasons), "judges": panel.labels, "snippets_shortened": trimmed,
            })
    except LLMCallFailed as exc:
        values["error"] = f"llm: {exc.reason}"
    return values
