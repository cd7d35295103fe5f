"""How fast the local model writes a JSON reply: llama-cpp-python's grammar chain against GreedyGrammar.

Every LLM role asks for JSON under a schema. llama-cpp-python's ``response_format`` filters the whole
~151k-token vocabulary through the grammar at every generated token; ``GreedyGrammar``
(``bfr_core.llm.local_provider``) checks only the greedy token and filters the vocabulary only when
the grammar rejects it, as llama.cpp's own sampler does. At temperature 0 both must give the same
tokens. This builds the real requests of each role (answer, both Suff@Set judges, the Mem0 judge,
decomposition, selection) for a few LoCoMo questions, evaluates each prompt once, then times the reply
in both modes with the prompt already evaluated (so the time is generation), and checks the replies
are identical. Writes ``bench/out/llm_decode.json``.

    .venv/bin/python -m bench.speed.bench_llm_decode        # ~4 min on 2 cores; needs the local extra
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from bfr_core.ingest.locomo import load_locomo
from bfr_core.ingest.sources import benchmark_file
from bfr_core.llm.base import LLMRequest, LLMResponse
from bfr_core.llm.local_provider import LocalLLM, chat, prefix_state_cache
from bfr_core.roles import answer_judge, answerer, decomposer, selector, sufficiency
from bfr_core.roles.snippets import render as render_evidence

ROOT = Path(__file__).resolve().parents[2]

DATA = benchmark_file("locomo")
N_QUESTIONS = 4
N_TURNS = 25
REPEATS = 2


class Recorder:
    """Stands in for a model to collect the requests a role makes; replies with a valid canned JSON."""

    provider, model, label = "recorder", "recorder", "request recorder"

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        label = "sufficient" if request.role in ("suff", "adjudicate") else "CORRECT"
        coverage = {}
        if request.role == "select":  # one shown id for every requirement
            props = json.loads(request.json_schema)["properties"]["coverage"]["properties"]
            coverage = {key: [spec["items"]["enum"][0]] for key, spec in props.items()}
        return LLMResponse(json.dumps({"reason": "-", "label": label, "answer": "-", "requirements": ["-"],
                                       "coverage": coverage}))


def role_requests() -> list[LLMRequest]:
    bundle = load_locomo(DATA)
    scope = bundle.questions[0].scope_id  # the first conversation
    snippets = render_evidence([t for t in bundle.turns if t.turn_id.startswith(f"{scope}:")][:N_TURNS])
    rec = Recorder()
    for q in [q for q in bundle.questions if q.scope_id == scope and q.category in (1, 2, 3, 4)][:N_QUESTIONS]:
        answerer.answer(rec, q.text, snippets)
        sufficiency.suff_at_set((rec, rec), rec, q.text, q.answer, snippets, procedure_b="cite")
        answer_judge.judge(rec, q.text, q.answer, "-")
        reqs = decomposer.decompose(rec, q.text)
        selector.select_subset(rec, q.text, [(f"t{i}", s) for i, s in enumerate(snippets[:12])], requirements=reqs)
    return rec.requests


def reply(llama: Any, request: LLMRequest, lazy: bool) -> tuple[str, int, float, int]:
    start = time.perf_counter()
    out, full = chat(llama, request, lazy_grammar=lazy)
    secs = time.perf_counter() - start
    return out["choices"][0]["message"]["content"], out["usage"]["completion_tokens"], secs, full


def main() -> int:
    llama = LocalLLM()._load()
    llama.set_cache(prefix_state_cache(1 << 30))
    rows, by_role = [], {}
    for request in role_requests():
        reply(llama, request, lazy=False)  # evaluates the prompt; the timed replies reuse it
        times: dict[bool, list[float]] = {False: [], True: []}
        texts: dict[bool, set[str]] = {False: set(), True: set()}
        for _ in range(REPEATS):
            for lazy in (False, True):
                text, n_out, secs, full = reply(llama, request, lazy)
                times[lazy].append(secs)
                texts[lazy].add(text)
        row = {"role": request.role, "tokens_out": n_out, "grammar_chain_s": round(min(times[False]), 3),
               "greedy_grammar_s": round(min(times[True]), 3), "full_vocabulary_passes": full,
               "identical": texts[False] == texts[True] and len(texts[True]) == 1}
        rows.append(row)
        by_role.setdefault(request.role, []).append(row)
        print(json.dumps(row), flush=True)

    def rate(rs: list[dict[str, Any]], key: str) -> float:
        return round(sum(r["tokens_out"] for r in rs) / sum(r[key] for r in rs), 1)

    result = {
        "what": "reply time with the prompt already evaluated (best of "
                f"{REPEATS}), llama-cpp-python response_format vs GreedyGrammar, temperature 0, 2 threads; "
                f"requests of each role for {N_QUESTIONS} LoCoMo questions over {N_TURNS} turns",
        "requests": len(rows), "identical": sum(r["identical"] for r in rows),
        "tokens_per_s": {"grammar_chain": rate(rows, "grammar_chain_s"), "greedy_grammar": rate(rows, "greedy_grammar_s")},
        "by_role": {role: {"requests": len(rs), "tokens_out_median": statistics.median(r["tokens_out"] for r in rs),
                           "grammar_chain_s_median": round(statistics.median(r["grammar_chain_s"] for r in rs), 3),
                           "greedy_grammar_s_median": round(statistics.median(r["greedy_grammar_s"] for r in rs), 3)}
                    for role, rs in by_role.items()},
        "full_vocabulary_passes": sum(r["full_vocabulary_passes"] for r in rows),
        "rows": rows,
    }
    out = ROOT / "bench" / "out" / "llm_decode.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=1))
    return 0 if result["identical"] == result["requests"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
