"""``bfr eval --dry-run``: the calls, tokens and cost a run would make, without calling any model.

Covers: :class:`DryRunLLM` (a recording stand-in for a real client: every request the run's own role
code renders is kept; the reply is the real client's cached one when the cache holds it, else the
offline rules backend's, labelled an estimate), :func:`dry_run` (retrieval with the stand-in, then
the answer-level roles over the sets it finds, exactly as ``evaluate`` and ``answers`` would call
them) and :func:`render_plan`. Does not cover: running anything for real.

What is exact and what is estimated:
* input tokens are counted on the rendered prompts (system + user message) with
  ``llm.limits.count_tokens`` (ceil(chars / 4)); a provider's own tokenizer will differ from it;
* ``answer``, ``span`` and ``suff`` prompts depend only on the evidence, so over the offline arms
  (whose sets need no model) they are the run's own prompts, and a cache lookup says which are paid;
* ``judge`` (reads the model's answer), ``adjudicate`` (only when the two judges disagree) and the
  Stage I/II roles of LLM arms (``decompose``, ``select``, ``tool``: each call depends on earlier
  replies) cannot be known before the replies: they are counted with the rules backend's replies
  standing in for uncached ones, and flagged ``estimated``;
* output tokens are the mean reply length this provider and model gave for the role in earlier runs
  (``llm_calls``, at least 3 paid calls), else the role's ``max_tokens`` cap (an upper bound); each
  role says which (``tokens_out_source``);
* cost uses ``llm.prices`` (overridable); a model without a price is "unknown", never 0.

The store is only read, apart from the caches retrieval itself fills (turn and question vectors,
entities) when they are missing.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from bfr_core.config import Config
from bfr_core.evaluation.answers import AnswerWork, ArmTodo, LocalClients, SuffPanel, score_question
from bfr_core.evaluation.evaluate import RunSpec, bind_data, select_questions
from bfr_core.llm.base import LLMRequest, LLMResponse
from bfr_core.llm.cache import Q_GET
from bfr_core.llm.limits import count_tokens
from bfr_core.llm.prices import PRICES, cost_usd, price_key
from bfr_core.llm.rules import RulesLLM
from bfr_core.pipeline import run_query
from bfr_core.records import Question
from bfr_core.retrieval.scope import scope_views
from bfr_core.roles.snippets import render
from bfr_core.roles.sufficiency import ADJUDICATE_NOTE
from bfr_core.store import Store

EXACT_ROLES = frozenset({"answer", "span", "suff"})  # inputs known from the evidence alone
Q_TYPICAL = """
SELECT role, count(*), avg(tokens_out) FROM llm_calls
WHERE provider = ? AND model = ? AND NOT cached AND ok GROUP BY role
"""


class _ReadCache:
    """``LLMCache.get`` without its DDL or any write (the dry run changes nothing)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, provider: str, model: str, temperature: float, sha: str) -> LLMResponse | None:
        try:
            row = self.store.cursor().execute(Q_GET, [provider, model, float(temperature), sha]).fetchone()
        except Exception:  # noqa: BLE001 - no cache table yet
            return None
        return None if row is None else LLMResponse(row[0], row[1] or 0, row[2] or 0, row[3] or 0.0, cached=True,
                                                    attempts=0)


class DryRunLLM:
    """Stands in for ``real``: records each request, replies from ``real``'s cache or the rules backend."""

    def __init__(self, real: Any, cache: _ReadCache | None) -> None:
        self.inner = real  # role code looks through ``inner`` for a small model's evidence budget
        self.provider, self.model = real.provider, real.model
        self.cache = cache
        self.rules = RulesLLM()
        self.calls: list[tuple[LLMRequest, bool]] = []  # (request, the cache holds its reply)
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return self.inner.label

    def complete(self, request: LLMRequest) -> LLMResponse:
        hit = None
        if self.cache is not None:
            hit = self.cache.get(self.provider, self.model, request.temperature, request.sha256())
        with self._lock:
            self.calls.append((request, hit is not None))
        return hit if hit is not None else self.rules.complete(request)


def _typical_out(store: Store, provider: str, model: str) -> dict[str, float]:
    try:
        rows = store.cursor().execute(Q_TYPICAL, [provider, model]).fetchall()
    except Exception:  # noqa: BLE001 - no call log yet
        return {}
    return {role: float(mean) for role, n, mean in rows if n >= 3 and mean is not None}


def _adjudicated_share(store: Store) -> tuple[float, str]:
    """The share of Suff@Set judgments earlier runs in this store sent to the adjudicator (at least
    5 of them), else 1.0 (every one: an upper bound)."""
    try:
        rows = store.cursor().execute(
            "SELECT json_extract(suff_detail, '$.adjudicated')::BOOLEAN FROM results WHERE suff_detail IS NOT NULL"
        ).fetchall()
    except Exception:  # noqa: BLE001 - no results yet
        rows = []
    if len(rows) >= 5:
        share = sum(bool(r[0]) for r in rows) / len(rows)
        return share, f"{share:.0%} of {len(rows)} earlier Suff@Set judgments were adjudicated"
    return 1.0, "no earlier Suff@Set judgments: every one counted as adjudicated (upper bound)"


def _stored(store: Store, run_id: str) -> dict[tuple[str, str], tuple[Any, ...]]:
    """(question, arm) -> (evidence, answer, judge, suff) of the run's finished rows, if any."""
    try:
        rows = store.cursor().execute(
            "SELECT question_id, arm, evidence, answer, judge, suff FROM results WHERE run_id = ? AND status = 'ok'",
            [run_id]).fetchall()
    except Exception:  # noqa: BLE001 - no results table yet
        return {}
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


def dry_run(store: Store, spec: RunSpec, *, llm: Any = None, answer_llm: Any = None,
            panel: SuffPanel | None = None, config: Config | None = None, answer: bool = False,
            judge: bool = False, suff: bool = False,
            prices: Mapping[str, Mapping[str, tuple[float, float]]] = PRICES) -> dict[str, Any]:
    """The plan of ``spec``: calls per role, how many the cache holds, tokens and cost (see module doc).

    ``llm`` is the client the arms get (None: offline arms, no retrieval calls); ``answer_llm`` and
    ``panel`` the answer-level clients."""
    cache = _ReadCache(store)  # reads only: no DDL, no writes
    fakes: dict[int, DryRunLLM] = {}

    def fake(client: Any) -> DryRunLLM | None:
        if client is None:
            return None
        if id(client) not in fakes:
            fakes[id(client)] = DryRunLLM(client, cache)
        return fakes[id(client)]

    spec = bind_data(store, spec)
    questions = select_questions(store, spec.dataset_id, spec.limit, spec.sample, spec.seed)
    stored = _stored(store, spec.run_id)
    by_scope: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_scope[q.scope_id].append(q)
    arm_llm = fake(llm)
    evidence: dict[tuple[str, str], tuple[str, ...]] = {}
    todo_pairs = 0
    for scope_id in sorted(by_scope):
        todo = [(q, a) for q in by_scope[scope_id] for a in spec.arms if (q.question_id, a) not in stored]
        todo_pairs += len(todo)
        if todo:
            views = scope_views(store, spec.dataset_id, scope_id)
            for q, arm in todo:
                try:
                    trace = run_query(views, q.query(), arm, dataset_id=spec.dataset_id,
                                      budget=spec.budget or None, llm=arm_llm, config=config, k=spec.k)
                    evidence[(q.question_id, arm)] = tuple(trace.evidence)
                except Exception:  # noqa: BLE001 - the real run records it as failed; nothing to answer
                    continue
        for q in by_scope[scope_id]:
            for arm in spec.arms:
                if (q.question_id, arm) in stored:
                    evidence[(q.question_id, arm)] = tuple(stored[(q.question_id, arm)][0])
    retrieval_calls = list(arm_llm.calls) if arm_llm is not None else []
    answer_fakes: list[DryRunLLM] = []
    if answer and answer_llm is not None:
        panel = panel or SuffPanel.single(answer_llm)
        a_llm = fake(answer_llm)
        f_panel = SuffPanel(fake(panel.judge_a), fake(panel.judge_b), fake(panel.adjudicator),
                            procedure_b=panel.procedure_b)
        answer_fakes = list(dict.fromkeys([a_llm, *f_panel.clients]))
        work = AnswerWork(LocalClients(a_llm, f_panel), True, judge, suff)
        qmap = {q.question_id: q for q in questions}
        for (qid, arm), ev in sorted(evidence.items()):
            prev = stored.get((qid, arm), (None, None, None, None))
            if not ((prev[1] is None) or (judge and prev[2] is None) or (suff and prev[3] is None)):
                continue
            by_id = store.turns_by_id(spec.dataset_id, list(ev), qmap[qid].scope_id)
            texts = tuple(render([by_id[t] for t in ev if t in by_id]))
            score_question(work, (qmap[qid], (ArmTodo(arm, texts, prev[1], prev[2], prev[3]),)))
    if arm_llm is not None and arm_llm in answer_fakes:  # one client for both: split its log
        answer_calls = arm_llm.calls[len(retrieval_calls):]
    else:
        answer_calls = []
    per_client = [(f, f.calls) for f in answer_fakes if f is not arm_llm] + (
        [(arm_llm, answer_calls)] if answer_calls else [])
    if arm_llm is not None:
        per_client.append((arm_llm, retrieval_calls))
    return _tally(store, spec, per_client, prices, todo_pairs, len(questions))


def _tally(store: Store, spec: RunSpec, per_client: list[tuple[DryRunLLM, list[tuple[LLMRequest, bool]]]],
           prices: Mapping[str, Mapping[str, tuple[float, float]]], todo_pairs: int, n_questions: int) -> dict[str, Any]:
    roles: dict[str, dict[str, Any]] = {}
    asked: set[tuple[str, str, float, str]] = set()  # a prompt asked twice in one run is paid once
    for client, calls in per_client:
        typical = _typical_out(store, client.provider, client.model)
        key = price_key(client.inner)
        for req, cached in calls:
            role = req.role or "call"
            r = roles.setdefault(role, {"calls": 0, "cache_hits": 0, "tokens_in": 0, "tokens_out": 0,
                                        "cost_usd": 0.0, "estimated": role not in EXACT_ROLES,
                                        "tokens_out_source": "max_tokens (upper bound)"})
            r["calls"] += 1
            key_ = (client.provider, client.model, req.temperature, req.sha256())
            if key_ in asked:
                cached = True
            asked.add(key_)
            if cached:
                r["cache_hits"] += 1
                continue
            tin = count_tokens(req.system + req.prompt)
            if role in typical:
                tout = round(typical[role])
                r["tokens_out_source"] = "typical reply (earlier runs)"
            else:
                tout = req.max_tokens
            r["tokens_in"] += tin
            r["tokens_out"] += tout
            c = cost_usd(key, client.model, tin, tout, prices)
            r["cost_usd"] = None if c is None or r["cost_usd"] is None else r["cost_usd"] + c
    notes: list[str] = []
    suff = roles.get("suff")
    if suff is not None:  # who disagrees depends on the replies: the share earlier runs measured
        roles.pop("adjudicate", None)
        share, why = _adjudicated_share(store)
        paid = suff["calls"] - suff["cache_hits"]
        pairs = paid / 2  # judge A and judge B per judged set
        n = round(pairs * share)

        per_call = (suff["tokens_in"] / paid if paid else 0) + count_tokens(ADJUDICATE_NOTE)
        out = round(suff["tokens_out"] / paid) if paid else 0
        client = next((c for c, calls in per_client if any(r.role == "suff" for r, _ in calls)), None)
        c = cost_usd(price_key(client.inner), client.model, round(n * per_call), n * out, prices) if client else None
        roles["adjudicate"] = {"calls": n, "cache_hits": 0, "tokens_in": round(n * per_call), "tokens_out": n * out,
                               "cost_usd": c, "estimated": True, "tokens_out_source": suff["tokens_out_source"]}
        notes.append(f"adjudicate: {why}")
    total = {"calls": sum(r["calls"] for r in roles.values()),
             "cache_hits": sum(r["cache_hits"] for r in roles.values()),
             "tokens_in": sum(r["tokens_in"] for r in roles.values()),
             "tokens_out": sum(r["tokens_out"] for r in roles.values())}
    costs = [r["cost_usd"] for r in roles.values()]
    total["cost_usd"] = None if any(c is None for c in costs) else round(sum(costs), 4)
    for r in roles.values():
        r["cost_usd"] = None if r["cost_usd"] is None else round(r["cost_usd"], 4)
    return {
        "dry_run": True, "run_id": spec.run_id, "dataset_id": spec.dataset_id, "arms": list(spec.arms),
        "n_questions": n_questions, "pairs_to_retrieve": todo_pairs, "roles": dict(sorted(roles.items())),
        "total": total,
        "notes": [
            "tokens are estimated as ceil(characters / 4) of each rendered prompt (system + user)",
            "cache_hits counts replies the cache holds and prompts asked earlier in the same run (paid once)",
            "roles marked estimated depend on earlier model replies (judge on the answer, adjudicate on "
            "a disagreement, Stage I/II roles on each round): counted with the offline rules backend "
            "replying where the cache does not hold the real reply",
            "cost_usd null = unknown price for that model (see bfr_core.llm.prices; override with --prices)",
            *notes,
        ],
    }


def render_plan(plan: Mapping[str, Any]) -> str:
    """The plan as a small table for a person."""
    lines = [f"dry run of {plan['run_id']}: {plan['n_questions']} questions x {len(plan['arms'])} arms "
             f"({plan['pairs_to_retrieve']} (question, arm) pairs still to retrieve)",
             f"{'role':<12}{'calls':>8}{'cached':>8}{'tokens in':>12}{'tokens out':>12}{'cost USD':>12}  note"]
    for role, r in plan["roles"].items():
        cost = "unknown" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"
        note = ("estimated; " if r["estimated"] else "") + f"out = {r['tokens_out_source']}"
        lines.append(f"{role:<12}{r['calls']:>8}{r['cache_hits']:>8}{r['tokens_in']:>12}{r['tokens_out']:>12}"
                     f"{cost:>12}  {note}")
    t = plan["total"]
    cost = "unknown" if t["cost_usd"] is None else f"{t['cost_usd']:.4f}"
    lines.append(f"{'total':<12}{t['calls']:>8}{t['cache_hits']:>8}{t['tokens_in']:>12}{t['tokens_out']:>12}"
                 f"{cost:>12}")
    lines += [f"note: {n}" for n in plan["notes"]]
    return "\n".join(lines)
