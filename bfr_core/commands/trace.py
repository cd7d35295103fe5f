"""``bfr trace QUESTION_ID``: one question's step-by-step trace, run now or read from a stored run.

Prints the pool head, the requirements, the formal context (incidence matrix), the lattice size,
the prefilter, the selection with its coverage, E0, every completion round (actions, retained,
counters) and the final set. Gold turns are marked ``*`` for the reader; the arm never saw them.
``--json`` prints ``Trace.to_dict()`` instead.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bfr_core.errors import BfrError
from bfr_core.evaluation.evaluate import load_trace
from bfr_core.pipeline import run as run_pipeline
from bfr_core.records import Step, Trace
from bfr_core.store import Store

WIDTH = 88


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("question_id", metavar="QUESTION_ID")
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--dataset", default=None, help="dataset id (default: the one holding the question)")
    p.add_argument("--arm", default="bfr-mv", help="arm to run or show (default bfr-mv)")
    p.add_argument("--budget", default="", help="budget C0..C9 (default: the arm's own)")
    p.add_argument("--run", default=None, help="show the trace stored by this eval run instead of running")
    p.add_argument("--head", type=int, default=5, help="rows of long lists to show (default 5)")
    p.add_argument("--json", action="store_true", help="print the trace as JSON")


def run(args: argparse.Namespace) -> int:
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist; create it with `bfr ingest ... --db {args.db}`")
    store = Store(args.db, read_only=True)
    dataset = args.dataset or _find_dataset(store, args.question_id)
    question = store.question(dataset, args.question_id)
    if args.run:
        trace = load_trace(store, args.run, args.question_id, args.arm)
        if trace is None:
            raise BfrError(f"run '{args.run}' has no trace for question {args.question_id} and arm {args.arm}")
    else:
        trace = run_pipeline(store, dataset, args.question_id, args.arm, budget=args.budget or None)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2))
        return 0
    ids = {tid for s in trace.steps for tid in _ids_in(s)}
    turns = store.turns_by_id(dataset, sorted(ids), question.scope_id) if ids else {}
    print(format_trace(trace, question=question, turns=turns, head=args.head))
    return 0


def _find_dataset(store: Any, question_id: str) -> str:
    holders = []
    for d in store.datasets():
        try:
            store.question(d["dataset_id"], question_id)
            holders.append(d["dataset_id"])
        except BfrError:
            continue
    if not holders:
        raise BfrError(f"no dataset in this store has question '{question_id}'")
    if len(holders) > 1:
        raise BfrError(f"question '{question_id}' is in several datasets ({', '.join(holders)}); pass --dataset")
    return holders[0]


def _ids_in(step: Step) -> list[str]:
    out = list(step.evidence)
    d = step.data
    out += [c["turn_id"] for c in d.get("candidates", []) if isinstance(c, dict)]
    out += list(d.get("selected", [])) + list(d.get("e0", [])) + list(d.get("retained", []))
    return out


# ----------------------------------------------------------------------------------------------
# Formatting (pure; tests call it directly)
# ----------------------------------------------------------------------------------------------


def _short(text: str, n: int = 70) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def format_trace(trace: Trace, *, question: Any = None, turns: dict[str, Any] | None = None,
                 head: int = 5) -> str:
    turns = turns or {}
    gold = set(getattr(question, "gold", ()) or ())

    def tid(t: str) -> str:
        local = getattr(turns.get(t), "local_id", "") or t
        return ("*" if t in gold else "") + local

    def line(t: str, extra: str = "") -> str:
        text = getattr(turns.get(t), "text", "")
        speaker = getattr(turns.get(t), "speaker", "")
        who = f"{speaker}: " if speaker else ""
        return f"      {tid(t):>14} {extra:>8}  {_short(who + text)}"

    out: list[str] = []
    if question is not None:
        out.append(f"Question {question.question_id} ({trace.dataset_id}, {question.qtype}): {question.text}")
        out.append(f"Answer: {question.answer}   gold: {', '.join(tid(g) for g in question.gold) or '-'}")
    budget = f" @ {trace.budget}" if trace.budget else ""
    out.append(f"Arm {trace.arm}{budget} ({trace.provider}), {trace.elapsed_ms:.1f} ms")
    out.append("-" * WIDTH)
    for n, step in enumerate(trace.steps, 1):
        fmt = FORMATTERS.get(step.kind, _fmt_generic)
        out.append(f"{n:>2}. {step.title}   [evidence {len(step.evidence)}, calls {step.calls}]")
        out.extend(fmt(step, tid, line, head))
    out.append("-" * WIDTH)
    final = trace.evidence
    hit = sorted(gold & set(final))
    verdict = f"gold {len(hit)}/{len(gold)} retrieved" if gold else "no gold annotation"
    out.append(f"Final set: {len(final)} turns, {trace.calls} calls; {verdict}")
    if gold:
        out.append("   missed: " + (", ".join(tid(g) for g in sorted(gold - set(final))) or "none"))
    return "\n".join(out)


Fmt = Callable[[Step, Callable[[str], str], Callable[..., str], int], list[str]]


def _fmt_pool(step: Step, tid, line, head) -> list[str]:
    cands = step.data.get("candidates", [])
    rows = [f"   view {step.data.get('view', '?')}, {len(cands)} candidates; head:"]
    rows += [line(c["turn_id"], f"{c['score']:.3f}") for c in cands[:head]]
    return rows


def _fmt_requirements(step: Step, tid, line, head) -> list[str]:
    rows = [f"   source: {step.data.get('source', '?')}"]
    rows += [f"   {r['id']} [{r['kind']}] {r['text']}" for r in step.data.get("requirements", [])]
    return rows


def _fmt_context(step: Step, tid, line, head) -> list[str]:
    objs, attrs, inc = step.data["objects"], step.data["attributes"], step.data["incidence"]
    per_attr = [sum(row[j] for row in inc) for j in range(len(attrs))]
    rows = ["   column counts: " + ", ".join(f"{a}={c}" for a, c in zip(attrs, per_attr, strict=True))]
    rows.append("   " + " " * 16 + " ".join(f"{a:>3}" for a in attrs))
    shown = [i for i, row in enumerate(inc) if any(row)][: head * 2] or list(range(min(head, len(objs))))
    for i in shown:
        rows.append(f"   {tid(objs[i]):>15} " + " ".join(f"{'x' if v else '.':>3}" for v in inc[i]))
    rest = len(objs) - len(shown)
    if rest > 0:
        rows.append(f"   ... {rest} more objects ({sum(1 for r in inc if not any(r))} cover nothing)")
    return rows


def _fmt_lattice(step: Step, tid, line, head) -> list[str]:
    cs = step.data.get("concepts", [])
    rows = [f"   {len(cs)} concepts, {len(step.data.get('edges', []))} covering edges, "
            f"prefilter used {step.data.get('used', [])}"]
    for c in sorted(cs, key=lambda c: (-len(c["intent"]), c["id"]))[:head]:
        rows.append(f"   #{c['id']} level {c['level']}: intent {{{', '.join(c['intent'])}}}, "
                    f"|extent| {len(c['extent'])}")
    return rows


def _fmt_prefilter(step: Step, tid, line, head) -> list[str]:
    kept, dropped = step.data.get("kept", []), step.data.get("dropped", [])
    return [f"   kept {len(kept)}: " + " ".join(tid(t) for t in kept),
            f"   dropped {len(dropped)}"]


def _fmt_selection(step: Step, tid, line, head) -> list[str]:
    d = step.data
    rows = [f"   method {d.get('method')}, fallback {'yes' if d.get('fallback') else 'no'}, "
            f"uncovered {d.get('uncovered') or '-'}"]
    for t in d.get("selected", []):
        rows.append(line(t, ",".join(d.get("coverage", {}).get(t, [])) or "-"))
    return rows


def _fmt_grounding(step: Step, tid, line, head) -> list[str]:
    scores = step.data.get("scores", {})
    return [line(t, f"{scores.get(t, 0):.2f}") for t in step.data.get("e0", [])]


def _fmt_round(step: Step, tid, line, head) -> list[str]:
    d = step.data
    rows = []
    for a in d.get("actions", []):
        cue = _short(a.get("cue", ""), 40)
        if a.get("skipped"):
            rows.append(f"   {a['view']:>8}: skipped ({a.get('reason', '')}) cue '{cue}'")
        else:
            rows.append(f"   {a['view']:>8}: cue '{cue}' -> {len(a['candidates'])} unseen")
    kept = d.get("retained", [])
    rows.append(f"   retained {len(kept)}:")
    rows += [line(t) for t in kept[:head]]
    if len(kept) > head:
        rows.append(f"      ... {len(kept) - head} more: " + " ".join(tid(t) for t in kept[head:]))
    c, b = d.get("counters", {}), d.get("budget", {})
    rows.append(f"   counters: rounds {c.get('rounds')}/{b.get('rounds')}, calls {c.get('calls')}/{b.get('calls')}, "
                f"new {c.get('new')}/{b.get('new')} (keep {b.get('keep')})"
                + (f"; stop: {d['stopped_by']} budget spent" if d.get("stopped_by") else ""))
    return rows


def _fmt_generic(step: Step, tid, line, head) -> list[str]:
    rows = []
    for k, v in step.data.items():
        if isinstance(v, list) and v and isinstance(v[0], str):
            rows.append(f"   {k}: " + " ".join(tid(t) if isinstance(t, str) else str(t) for t in v[: head * 3]))
        elif isinstance(v, list | dict):
            rows.append(f"   {k}: {_short(json.dumps(v), 150)}")
        else:
            rows.append(f"   {k}: {v}")
    if not step.data and step.evidence:
        rows.append("   " + " ".join(tid(t) for t in step.evidence[: head * 3]))
    return rows


FORMATTERS: dict[str, Any] = {
    "pool": _fmt_pool, "requirements": _fmt_requirements, "context": _fmt_context, "lattice": _fmt_lattice,
    "prefilter": _fmt_prefilter, "selection": _fmt_selection, "grounding": _fmt_grounding, "round": _fmt_round,
}
