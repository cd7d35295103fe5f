"""Rejudging every answer of a run with one judge (``bfr judge``): cached, resumable, concurrent.

Covers: :class:`JudgeSpec` / :func:`parse_judge` (``rules``, ``local``, ``local:MODEL``,
``openai:MODEL``, ``anthropic:MODEL``, with a prompt: ``mem0`` the paper's, ``strict``
(``roles.answer_judge.STRICT_PROMPT``) or ``lme``, LongMemEval's per question type), :func:`decide`
(one verdict: label, reason), :func:`todo` (the answers a judge still has to judge under a key: a
verdict stored with the same prompt hash on the same gold text is kept, so a rerun of a finished
judge run makes no call; a verdict on the original key stands for a key whose gold text is the same) and :func:`judge_run` (the rest, in ``workers`` threads, written in batches
by the calling thread so an interrupted run keeps what it finished; ``dry_run`` only counts and
prices). Each verdict is stored (``bfr_core.verdicts``) with the judge's name, model, prompt name and
hash, the gold it was given and the reason.

Keys. ``golds`` maps each question to the gold answer it is judged against under ``key``: the
dataset's (``original``) or an overlay's corrected one (``evaluation.overlay``); a question absent
from ``golds`` (an overlay's unanswerable) is not judged under that key.

Does not cover: the judge prompts (``roles.answer_judge``, ``roles.lme_judge``), the offline rules
(``llm.rules_judges``), the figures (``evaluation.judge_report``).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from bfr_core.arm_names import canonical_arm
from bfr_core.errors import BfrError
from bfr_core.llm import rules_judges
from bfr_core.llm.prices import cost_usd
from bfr_core.roles import lme_judge as lme
from bfr_core.roles.answer_judge import PROMPTS, UNDECIDED, judgment
from bfr_core.roles.fit import prompt_budget
from bfr_core.runs import ensure_schema, load_results, run_row
from bfr_core.store import Store
from bfr_core.verdicts import ORIGINAL, done_verdicts, write_verdicts

PROMPT_NAMES = ("mem0", "strict", "lme")
PROVIDERS = ("rules", "local", "openai", "anthropic")
_LME_LABEL = {lme.YES: "CORRECT", lme.NO: "WRONG", lme.UNDECIDED: UNDECIDED}
_EST_OUT_TOKENS = 60  # a one-sentence reason and a label


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    provider: str  # rules | local | openai | anthropic
    model: str  # "" = the provider's default
    prompt: str  # mem0 | strict | lme

    @property
    def name(self) -> str:
        """The judge's name in the store and the report: ``rules``, ``rules/lme``, ``openai:gpt-4o/strict``."""
        if self.provider == "rules":
            return "rules" if self.prompt != "lme" else "rules/lme"
        who = f"{self.provider}:{self.model}" if self.model else self.provider
        return f"{who}/{self.prompt}"


def parse_judge(judge: str, prompt: str = "mem0") -> JudgeSpec:
    """``rules`` | ``local[:MODEL]`` | ``openai:MODEL`` | ``anthropic:MODEL`` with a prompt name."""
    provider, _, model = judge.strip().partition(":")
    if provider not in PROVIDERS:
        raise BfrError(f"--judge {judge!r}: choose rules, local, openai:MODEL or anthropic:MODEL")
    if provider in ("openai", "anthropic") and not model:
        raise BfrError(f"--judge {judge!r}: name the model ({provider}:MODEL)")
    if provider == "rules" and model:
        raise BfrError(f"--judge {judge!r}: the offline rules take no model")
    if prompt not in PROMPT_NAMES:
        raise BfrError(f"--prompt {prompt!r}: choose one of {', '.join(PROMPT_NAMES)}")
    return JudgeSpec(provider, model, prompt)


def lme_type(qtype: str) -> str:
    """The LongMemEval prompt a question type takes: its own, else the temporal one for a temporal
    type (LoCoMo's ``temporal``), else the plain fact prompt."""
    if qtype in lme.PROMPTS:
        return qtype
    return "temporal-reasoning" if "temporal" in qtype else "single-session-user"


@functools.lru_cache(maxsize=256)
def prompt_hash(spec: JudgeSpec, qtype: str) -> str:
    """12 hex digits of the prompt this judge uses for this type (the rules' source for the rules):
    a verdict under another hash is stale and judged again."""
    if spec.provider == "rules":
        text = inspect.getsource(rules_judges)
    elif spec.prompt == "lme":
        text = lme.PROMPTS[lme_type(qtype)]
    else:
        text = PROMPTS[spec.prompt]
    return hashlib.sha256(f"{spec.prompt}\0{text}".encode()).hexdigest()[:12]


def overflow(llm: Any, *texts: str) -> str | None:
    """Why a model judge cannot read ``texts`` whole (None when it can): they take more tokens than the
    model's context leaves beside a role's instructions and reply (``roles.fit.prompt_budget``; API
    models declare no limit). Such an answer is undecided: a judge that read part of it would guess."""
    budget = prompt_budget([llm])
    if budget is None:
        return None
    limit, count = budget
    used = count("\n".join(texts))
    if used <= limit:
        return None
    return f"the question, gold and answer take {used:,} tokens, more than the {limit:,} this judge's context leaves"


def decide(spec: JudgeSpec, llm: Any, question: str, gold: str, answer: str, qtype: str,
           abstention: bool = False) -> tuple[str, str]:
    """(CORRECT | WRONG | UNDECIDED, reason) of one answer; undecided without a call when a model judge
    cannot read it whole (:func:`overflow`)."""
    if spec.provider == "rules":
        if spec.prompt == "lme":
            label, reason = rules_judges.lme_judge("abstention" if abstention else lme_type(qtype), gold, answer)
            return _LME_LABEL[label], reason
        return rules_judges.judge(question, gold, answer)
    if too_long := overflow(llm, question, gold, answer):
        return UNDECIDED, too_long
    if spec.prompt == "lme":
        label = lme.lme_judge(llm, lme_type(qtype), question, gold, answer, abstention=abstention)
        return _LME_LABEL[label], f"LongMemEval judge replied {label}"
    j = judgment(llm, question, gold, answer, prompt_name=spec.prompt)
    return j.label, j.reason


@dataclass(frozen=True, slots=True)
class Item:
    question_id: str
    arm: str
    question: str
    gold: str
    answer: str
    qtype: str
    abstention: bool


@dataclass
class JudgeReport:
    run_id: str
    judge: str
    key: str
    answers: int = 0  # answers the run holds that the key judges
    kept: int = 0  # verdicts already stored (same prompt, same gold): no call
    judged: int = 0
    failed: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    dry_run: dict[str, Any] | None = None


def todo(store: Store, run_id: str, spec: JudgeSpec, golds: Mapping[str, str], key: str = ORIGINAL,
         arms: list[str] | None = None) -> tuple[list[Item], int]:
    """(the answers ``spec`` still has to judge under ``key``, how many it has judged already); ``arms``
    picks some arms, by registered name or alias (``arm_names``)."""
    ensure_schema(store)
    run = run_row(store, run_id)
    if run is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    qs = {q.question_id: q for q in store.questions(run[0])}
    done = done_verdicts(store, run_id, spec.name)
    items, kept = [], 0
    wanted = {canonical_arm(a) for a in arms or ()}
    for r in load_results(store, run_id):
        if r["answer"] is None or r["status"] != "ok" or (wanted and canonical_arm(r["arm"]) not in wanted):
            continue
        q = qs.get(r["question_id"])
        if q is None or r["question_id"] not in golds:
            continue
        gold = golds[r["question_id"]]
        current = (prompt_hash(spec, q.qtype), gold)
        if current in (done.get((r["question_id"], r["arm"], key)), done.get((r["question_id"], r["arm"], ORIGINAL))):
            kept += 1  # judged before with this prompt on this gold text (under this key or the original)
            continue
        items.append(Item(q.question_id, r["arm"], q.text, gold, r["answer"], q.qtype, q.is_abstention))
    return items, kept


def judge_run(store: Store, run_id: str, spec: JudgeSpec, golds: Mapping[str, str], *, key: str = ORIGINAL,
              llm: Any = None, workers: int = 4, batch: int = 200, dry_run: bool = False,
              arms: list[str] | None = None, on_batch: Callable[[int, int], None] | None = None) -> JudgeReport:
    """Judge every answer of ``run_id`` ``spec`` has no current verdict on under ``key``. ``llm`` is the
    (cached) client of a model judge; the rules need none. ``dry_run`` counts and prices the calls
    (:func:`estimate_cost`) and writes nothing."""
    start = time.perf_counter()
    items, kept = todo(store, run_id, spec, golds, key, arms)
    rep = JudgeReport(run_id, spec.name, key, answers=len(items) + kept, kept=kept)
    if dry_run:
        rep.dry_run = {"calls": 0 if spec.provider == "rules" else len(items),
                       **estimate_cost(spec, items if spec.provider != "rules" else [])}
        return rep
    if spec.provider != "rules" and llm is None:
        raise BfrError(f"judge {spec.name} needs a model client")
    model = "rules" if spec.provider == "rules" else getattr(llm, "model", spec.model) or spec.model

    def one(it: Item) -> tuple[Any, ...]:
        t0 = time.perf_counter()
        try:
            label, reason = decide(spec, llm, it.question, it.gold, it.answer, it.qtype, it.abstention)
        except BfrError as exc:  # one failed call: no verdict stored, judged again on the next run
            label, reason = None, f"judge failed: {exc}"
        return (run_id, it.question_id, it.arm, spec.name, key, label, reason, model, spec.prompt,
                prompt_hash(spec, it.qtype), it.gold, round((time.perf_counter() - t0) * 1000, 2))

    pool = ThreadPoolExecutor(max(1, workers)) if spec.provider != "rules" and workers > 1 else None
    try:
        for i in range(0, len(items), batch):
            chunk = items[i:i + batch]
            rows = list(pool.map(one, chunk)) if pool else [one(it) for it in chunk]
            write_verdicts(store, [r for r in rows if r[5] is not None])
            for r in rows:
                rep.failed += r[5] is None
                if r[5] is not None:
                    rep.judged += 1
                    rep.labels[r[5]] = rep.labels.get(r[5], 0) + 1
            if on_batch:
                on_batch(i + len(chunk), len(items))
    finally:
        if pool:
            pool.shutdown(wait=True, cancel_futures=True)
    rep.wall_s = round(time.perf_counter() - start, 2)
    return rep


def estimate_cost(spec: JudgeSpec, items: list[Item]) -> dict[str, Any]:
    """The to-do list's estimated tokens (a character is a quarter token; a reply :data:`_EST_OUT_TOKENS`)
    and their price (``llm.prices``; None when the model's price is unknown)."""
    tin = sum((len(lme.PROMPTS[lme_type(it.qtype)] if spec.prompt == "lme" else PROMPTS[spec.prompt])
               + len(it.question) + len(it.gold) + len(it.answer)) // 4 for it in items)
    tout = len(items) * _EST_OUT_TOKENS
    cost = cost_usd(spec.provider, spec.model, tin, tout)
    return {"tokens_in_est": tin, "tokens_out_est": tout, "cost_usd": None if cost is None else round(cost, 4)}


def original_golds(store: Store, run_id: str) -> dict[str, str]:
    """Each question of the run's dataset -> its gold answer as the dataset states it."""
    run = run_row(store, run_id)
    if run is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    return {q.question_id: q.answer for q in store.questions(run[0])}
