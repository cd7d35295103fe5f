"""Seconds per verdict of the local model's strict answer judge, one llama.cpp thread.

Takes ``--n`` answers (seeded, drawn evenly from the six ``locomo-audit/answers`` files), judges each
through ``roles.answer_judge.judgment`` on a fresh in-process ``LocalLLM`` (no call cache: every
verdict is computed), after one untimed warm-up verdict that loads the model and evaluates the
prompt's fixed prefix. Records per verdict the wall seconds, prompt and reply tokens, and how many
prompt tokens llama.cpp had to evaluate (the rest came from the previous call's KV cache), and the
process's CPU seconds (the figure least moved by the other jobs sharing the cores); the labels, so
two settings can be compared on the same answers; the machine's load average at start and end.
Writes ``bench/out/local_judge_speed.json`` under ``--label`` (other labels in the file are kept).

    nice .venv/bin/python -m bench.speed.bench_local_judge_speed --label after   # ~3 min idle, ~15 min at load 10
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

from bfr_core.ingest.sources import benchmark_file
from bfr_core.llm.local_provider import STATE_CACHE_BYTES, LocalLLM
from bfr_core.roles.answer_judge import PROMPTS, judgment

ROOT = Path(__file__).resolve().parents[2]

AUDIT = benchmark_file("locomo").parent / "locomo-audit" / "answers"
OUT = ROOT / "bench" / "out" / "local_judge_speed.json"


def sample(n: int, seed: int) -> list[dict[str, str]]:
    """``n`` answers, the same count from each file (seeded), in a seeded order."""
    files = sorted(AUDIT.glob("*.json"))
    rng = random.Random(seed)
    picked = []
    for i, p in enumerate(files):
        recs = [r for rs in json.loads(p.read_text())["detailed_results"].values() for r in rs]
        k = n // len(files) + (i < n % len(files))
        picked += [{"file": p.stem, "question": r["question"], "gold": str(r["golden_answer"]),
                    "answer": r["generated_answer"]} for r in rng.sample(recs, k)]
    rng.shuffle(picked)
    return picked


class Counting:
    """Wraps the provider to record each call's tokens and the prompt tokens llama.cpp evaluated."""

    def __init__(self, inner: LocalLLM) -> None:
        self.inner, self.provider, self.model, self.label = inner, inner.provider, inner.model, inner.label
        self.calls: list[dict[str, int]] = []

    def complete(self, request):  # noqa: ANN001, ANN201 - an LLMRequest, an LLMResponse
        llama = self.inner._load()  # noqa: SLF001 - the bench reads llama.cpp's own counters
        before = llama.n_tokens
        prev = list(llama._input_ids[:before])  # noqa: SLF001
        resp = self.inner.complete(request)
        toks = list(llama._input_ids[:llama.n_tokens])  # noqa: SLF001 - prompt + reply
        prompt_toks = toks[:resp.tokens_in]
        reused = 0
        for a, b in zip(prev, prompt_toks, strict=False):
            if a != b:
                break
            reused += 1
        self.calls.append({"prompt_tokens": resp.tokens_in, "reply_tokens": resp.tokens_out,
                           "evaluated_prompt_tokens": resp.tokens_in - reused})
        return resp


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-state-cache", action="store_true",
                    help="no RAM prompt-state cache (LocalLLM(state_cache_bytes=0)): only the previous call's prefix is reused")
    ap.add_argument("--label", required=True, help="the setting measured (e.g. before, after)")
    args = ap.parse_args(argv)
    items = sample(args.n + 1, args.seed)
    inner = LocalLLM(n_threads=args.threads, state_cache_bytes=0 if args.no_state_cache else STATE_CACHE_BYTES)
    llm = Counting(inner)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    judgment(llm, items[0]["question"], items[0]["gold"], items[0]["answer"], prompt_name="strict")
    warm = round(time.perf_counter() - t0, 2)
    rows: list[dict[str, Any]] = []
    for it in items[1:]:
        n_calls = len(llm.calls)
        t, c = time.perf_counter(), time.process_time()
        j = judgment(llm, it["question"], it["gold"], it["answer"], prompt_name="strict")
        s, cpu = time.perf_counter() - t, time.process_time() - c
        calls = llm.calls[n_calls:]
        rows.append({"file": it["file"], "s": round(s, 2), "cpu_s": round(cpu, 2), "label": j.label, "calls": len(calls),
                     **{k: sum(c[k] for c in calls) for k in ("prompt_tokens", "evaluated_prompt_tokens", "reply_tokens")}})
    secs = [r["s"] for r in rows]
    fig = {"n": len(rows), "seed": args.seed, "llama_threads": args.threads, "model": inner.label,
           "state_cache_bytes": inner.state_cache_bytes,
           "prompt_sha": hashlib.sha256(PROMPTS["strict"].encode()).hexdigest()[:12],
           "warmup_s": warm, "s_per_verdict_mean": round(statistics.mean(secs), 2),
           "s_per_verdict_median": round(statistics.median(secs), 2),
           "cpu_s_per_verdict_mean": round(statistics.mean(r["cpu_s"] for r in rows), 2),
           "prompt_tokens_mean": round(statistics.mean(r["prompt_tokens"] for r in rows), 1),
           "evaluated_prompt_tokens_mean": round(statistics.mean(r["evaluated_prompt_tokens"] for r in rows), 1),
           "reply_tokens_mean": round(statistics.mean(r["reply_tokens"] for r in rows), 1),
           "reasks": sum(r["calls"] - 1 for r in rows), "load_avg_1m": [round(load0, 2), round(os.getloadavg()[0], 2)],
           "labels": [r["label"] for r in rows], "per_verdict": rows}
    data = json.loads(OUT.read_text()) if OUT.is_file() else {}
    data[args.label] = fig
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps({k: v for k, v in fig.items() if k not in ("per_verdict", "labels")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
