"""``bfr eval``: arms over a benchmark in a store; writes the DESIGN.md section 4 JSON contract."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bfr_core.arm_names import ALIASES, canonical_arm
from bfr_core.config import Config
from bfr_core.errors import BfrError, printable
from bfr_core.evaluation import dryrun
from bfr_core.evaluation.answers import ShippedClients, SuffPanel, score_answers
from bfr_core.evaluation.evaluate import (
    RunSpec,
    StatusTracker,
    bind_data,
    evaluate,
    resumed_stale,
    select_questions,
)
from bfr_core.evaluation.executors import make_executor
from bfr_core.evaluation.labels import flush_pending
from bfr_core.evaluation.official import official_summary
from bfr_core.evaluation.summary import summarize
from bfr_core.llm.cache import call_summary, usage_by
from bfr_core.llm.factory import configured, make_llm
from bfr_core.llm.prices import cost_usd, load_prices, price_key
from bfr_core.method.budgets import budget_for
from bfr_core.outfile import check_output, output_argument, write_output
from bfr_core.pipeline import ARMS, BUILTIN_ARMS, resolve
from bfr_core.progress import tqdm_progress
from bfr_core.retrieval.readiness import first_use_seconds, readiness
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--benchmark", default=None, help="locomo | longmemeval (the dataset of that name)")
    p.add_argument("--dataset", default=None, help="any dataset name in the store (e.g. demo)")
    p.add_argument("--arms", required=True,
                   help=f"comma-separated: {','.join(ARMS)} ({', '.join(f'{a} = {c}' for a, c in ALIASES.items())})")
    p.add_argument("--budget", default="", help="budget grid point C0..C9 (default: each arm's own)")
    p.add_argument("--k", type=int, default=10, help="top-k cutoff for the one-shot arms (default 10)")
    p.add_argument("--limit", type=int, default=None, help="only the first N scoreable questions")
    p.add_argument("--sample", type=int, default=None,
                   help="a seeded sample of N questions stratified by question type")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    p.add_argument("--provider", default="rules", help="rules | anthropic | openai | local")
    p.add_argument("--model", default="", help="provider model id (default: the config file's, for its provider)")
    p.add_argument("--base-url", default="",
                   help="OpenAI-compatible endpoint (default: the config file's, for its provider)")
    p.add_argument("--config", default=None, metavar="TOML",
                   help="config file whose [llm] table sets each provider's model, base_url and limits "
                        "(default: $BFR_CONFIG, else bfr.toml in the repository folder when present)")
    p.add_argument("--answer", action="store_true", help="run the extractive answerer and stem F1")
    p.add_argument("--judge", action="store_true", help="Mem0-style CORRECT/WRONG judge (implies --answer)")
    p.add_argument("--lme-judge", action="store_true",
                   help="LongMemEval's official yes/no judge, per question type (implies --answer)")
    p.add_argument("--suff", action="store_true", help="blinded LLM-Suff@Set (two judges + adjudicator)")
    p.add_argument("--judge-b", default="", metavar="PROVIDER[:MODEL]",
                   help="second Suff@Set judge (default: the --provider model with the 'cite' procedure)")
    p.add_argument("--adjudicator", default="", metavar="PROVIDER[:MODEL]",
                   help="Suff@Set adjudicator on disagreement (default: the --provider model)")
    p.add_argument("--processes", type=int, default=1,
                   help="offline runs (no --provider model): scopes in N worker processes (same rows)")
    output_argument(p, "--json", dest="json_out", default=None, help="write the summary JSON here (default stdout)")
    p.add_argument("--force", action="store_true", help="replace the --json file if it exists (never a DuckDB file)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--official-corpus", action="store_true",
                   help="LongMemEval only: also rank user turns only and add the official session-level "
                        "recall_any@5/@10 and ndcg_any@10 (key official_corpus)")
    # -- scale: concurrency, limits, executors, cost --
    g = p.add_argument_group("scale")
    g.add_argument("--workers", type=int, default=1,
                   help="(question, arm) jobs run at once (threads; default 1 = one after another)")
    g.add_argument("--executor", default="thread", choices=("thread", "ray"),
                   help="where jobs run: threads in this process, or a Ray cluster")
    g.add_argument("--ray-address", default=None,
                   help="Ray cluster to join (e.g. ray://head:10001 or auto; default: start a local one)")
    g.add_argument("--max-concurrent", type=int, default=None,
                   help="requests in flight per provider (default: --workers, at least the config's 2)")
    g.add_argument("--rpm", type=float, default=None,
                   help="requests per minute per provider (0 = no limit; default: the config file's)")
    g.add_argument("--tpm", type=float, default=None,
                   help="tokens per minute per provider (0 = no limit; default: the config file's)")
    g.add_argument("--max-retries", type=int, default=None, help="retries of a transient failure (default 4)")
    g.add_argument("--dry-run", action="store_true",
                   help="print the calls, tokens and cost the run would make; call nothing, write nothing")
    g.add_argument("--prices", default=None, metavar="JSON",
                   help='price overrides {"provider": {"model-prefix": [usd_in, usd_out per 1M]}}')


def check_arguments(args: argparse.Namespace) -> tuple[str, ...]:
    """The arms by registered name (an alias read as its arm, ``arm_names``), once every argument is one
    a run can use (before the store is opened or written); a one-line :class:`BfrError` naming the
    argument otherwise."""
    arms = tuple(dict.fromkeys(canonical_arm(a.strip()) for a in args.arms.split(",") if a.strip()))
    if not arms:
        raise BfrError(f"--arms names no arm; choose from {', '.join(ARMS)}")
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise BfrError(f"unknown arm(s) {', '.join(unknown)}; choose from {', '.join(ARMS)}")
    at_least(args, {"k": 1, "limit": 1, "sample": 1, "workers": 1, "processes": 1, "max_concurrent": 1,
                    "max_retries": 0, "rpm": 0, "tpm": 0})
    if args.budget:
        budget_for(arms[0], args.budget)  # an unknown grid point says which ones exist
    if args.json_out:
        check_output(args.json_out, option="--json", store=args.db, force=args.force)
    return arms


def at_least(args: argparse.Namespace, lows: dict[str, float]) -> None:
    """Each named argument that is set is at least its bound (``--max-retries -1`` is refused)."""
    for name, low in lows.items():
        value = getattr(args, name, None)
        if value is not None and value < low:
            what = "a positive number" if low == 1 else "0 or more"
            raise BfrError(f"--{name.replace('_', '-')} {value:g}: needs {what}")


def llm_settings(args: argparse.Namespace, spec: str = "") -> Any:
    """The settings of one client of the run: ``spec`` (``PROVIDER[:MODEL]``; empty: ``--provider`` and
    ``--model``) as the config file gives them (``llm.factory.configured``, the one home of that rule),
    with this command line's settings over them: ``--base-url`` for the ``--provider``'s clients,
    concurrency, rpm, tpm and retries for every client."""
    cfg = configured(spec or f"{args.provider}:{args.model}", getattr(args, "config", None))
    if args.base_url and cfg.provider == args.provider.strip().lower():
        cfg = replace(cfg, base_url=args.base_url)
    rpm, tpm = getattr(args, "rpm", None), getattr(args, "tpm", None)
    return replace(cfg, concurrency=args.max_concurrent or max(cfg.concurrency, args.workers),
                   rpm=cfg.rpm if rpm is None else rpm, tpm=cfg.tpm if tpm is None else tpm,
                   max_retries=cfg.max_retries if args.max_retries is None else args.max_retries)


def _client(spec: str, args: argparse.Namespace, store: Any) -> Any:
    """A cached client for ``PROVIDER[:MODEL]`` with the settings :func:`llm_settings` gives it."""
    return make_llm(llm_settings(args, spec), store)


def _panel(args: argparse.Namespace, llm: Any, store: Any) -> Any:
    """The Suff@Set panel: one model (judge B cites snippets) unless --judge-b names another."""
    if not args.judge_b:
        panel = SuffPanel.single(llm)
    else:
        panel = SuffPanel(llm, _client(args.judge_b, args, store), llm)
    if args.adjudicator:
        panel = replace(panel, adjudicator=_client(args.adjudicator, args, store))
    return panel


def _official(store: Any, dataset: str, arms: tuple[str, ...], args: argparse.Namespace) -> dict[str, Any]:
    """The official-convention section (bfr_core.evaluation.official) over the run's own questions."""
    return official_summary(store, dataset, arms, select_questions(store, dataset, args.limit, args.sample, args.seed))


def run(args: argparse.Namespace) -> int:
    dataset = args.dataset or args.benchmark
    if not dataset:
        raise BfrError("name the data with --benchmark locomo|longmemeval or --dataset NAME")
    arms = check_arguments(args)
    plugin_note(arms)
    prices = load_prices(args.prices)
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist; create it with `bfr ingest ... --db {args.db}`")
    store = Store(args.db)
    if store.dataset(dataset) is None:
        raise BfrError(f"dataset '{dataset}' is not in {args.db}; ingest it first")
    config = Config(llm=llm_settings(args))
    llm = None
    provider_label = "offline rules"
    wants_answers = args.answer or args.judge or args.suff or args.lme_judge
    if args.provider != "rules" or wants_answers:
        llm = make_llm(config.llm, store)
        provider_label = getattr(llm, "label", args.provider)
    if args.official_corpus and dataset != "longmemeval":
        raise BfrError("--official-corpus is LongMemEval's convention (user turns); use --benchmark longmemeval")
    spec = bind_data(store, RunSpec(dataset, arms, args.budget, args.k, provider_label, args.limit, args.sample,
                                    args.seed))
    earlier = resumed_stale(store, spec)
    if earlier and not args.dry_run:
        print(f"note: run {earlier} of this command was computed on data of '{dataset}' that has since been "
              f"replaced; it is kept (marked stale) and this run starts afresh as {spec.run_id}", file=sys.stderr)
    if llm is not None:
        llm = llm.with_run(spec.run_id)  # calls, tokens and cost are accounted to this run
    panel = _panel(args, llm, store) if wants_answers else None
    if panel is not None:  # a second judge's or the adjudicator's calls count to this run too
        panel = replace(panel, judge_b=panel.judge_b if panel.judge_b is llm else panel.judge_b.with_run(spec.run_id),
                        adjudicator=panel.adjudicator if panel.adjudicator is llm
                        else panel.adjudicator.with_run(spec.run_id))
    vectors_note(store, dataset)
    if args.dry_run:
        plan = dryrun.dry_run(store, spec, llm=llm if args.provider != "rules" else None, answer_llm=llm, panel=panel,
                       config=config, answer=wants_answers, judge=args.judge, suff=args.suff,
                       prices=prices)
        print(dryrun.render_plan(plan), file=sys.stderr)
        _emit(args, json.dumps(plan, indent=2), spec.run_id)
        return 0
    executor = make_executor(args.executor, args.workers, args.ray_address)
    price = _pricer(llm, panel, prices)
    clients = [llm, *(panel.clients if panel else ())]
    tracker_price = (lambda tin, tout: price(llm.provider, llm.model, tin, tout)) if llm is not None else None
    progress = None if args.quiet else tqdm_progress(f"eval {dataset}")
    run_id = evaluate(store, spec, llm=llm if args.provider != "rules" else None, config=config,
                      progress=progress, executor=executor, llm_config=config.llm, price=tracker_price,
                      processes=args.processes)
    if wants_answers:
        tracker = StatusTracker(0, clients, tracker_price)
        score_answers(store, run_id, llm, answer=True, judge=args.judge, suff=args.suff, lme_judge=args.lme_judge,
                      panel=panel,
                      progress=None if args.quiet else tqdm_progress("answers"), executor=executor,
                      shipped=_shipped(args, config), status=lambda: tracker.status().line(),
                      on_calls=tracker.record)
    summary = summarize(store, run_id, args.benchmark)
    if args.official_corpus:
        summary["official_corpus"] = _official(store, dataset, arms, args)
    if llm is not None:  # what this run spent: calls, cache hits, tokens, cost (provider calls only)
        summary["llm_calls"] = asdict(call_summary(store, run_id))
        # per arm (and role inside) and per role; beside the arms, whose contract (DESIGN.md 4) stays as is
        summary["usage"] = usage_by(store, run_id, price)

    queued = flush_pending(store)  # labels the app queued while this run held the store
    if queued:
        print(f"wrote {queued} label(s) saved in the app during the run", file=sys.stderr)
    store.close()
    _emit(args, json.dumps(summary, indent=2), run_id)
    return 0


def plugin_note(arms: tuple[str, ...], out: Any = None) -> None:
    """One line (stderr) per plug-in arm of the run: it runs in-process from an installed package and can
    read the store, gold included (docs/plugins.md), so its figures are marked as such."""
    for arm in (a for a in arms if a not in BUILTIN_ARMS):
        module = getattr(resolve(arm), "__module__", "?")
        print(f"note: arm {printable(arm)} is a plug-in (package module {printable(str(module))}); it runs in this "
              "process and can read the store, gold included: its figures are as trustworthy as its code "
              "(docs/plugins.md)", file=out or sys.stderr)


def vectors_note(store: Any, dataset: str, out: Any = None) -> None:
    """One line (stderr) when some turn texts of ``dataset`` have no cached vectors yet (``bfr ingest
    --no-embed``, or an ingest stopped while encoding): the run computes each scope's on its first
    question, so the first question of each conversation or haystack takes longer."""
    r = readiness(store, dataset)
    if not r.dense_ready:
        print(f"note: {r.missing:,} of {r.texts:,} turn texts of '{dataset}' have no vectors yet; this run computes "
              f"them per conversation or haystack on its first question (about {first_use_seconds(r, loaded=True):.0f} "
              "s each here); `bfr ingest` on the same file computes them all first", file=out or sys.stderr)


def _pricer(llm: Any, panel: Any, table: Any) -> Any:
    """cost(provider, model, tokens_in, tokens_out) for this run's clients; None = unknown price."""
    keys = {(c.provider, c.model): price_key(c) for c in [llm, *(panel.clients if panel else ())] if c is not None}

    def price(provider: str, model: str, tin: int, tout: int) -> float | None:
        return cost_usd(keys.get((provider, model), provider), model, tin, tout, table)

    return price


def _shipped(args: argparse.Namespace, config: Any) -> Any:
    """The Suff@Set panel as settings, for remote workers."""
    def cfg(spec: str) -> Any:
        return llm_settings(args, spec) if spec else None

    return ShippedClients(config.llm, cfg(args.judge_b), cfg(args.adjudicator), "reason" if args.judge_b else "cite")


def _emit(args: argparse.Namespace, text: str, run_id: str) -> None:
    if args.json_out:
        write_output(args.json_out, text + "\n", option="--json", store=args.db, force=args.force)
        print(f"run {run_id}: wrote {args.json_out}", file=sys.stderr)
    else:
        print(text)
