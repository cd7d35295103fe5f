"""How fast the local model reads a prompt, and whether another quantisation of it reads faster.

Prompt evaluation dominates the local model's answer-level time (``llm_local.json``: the answerer reads a
40-turn set of ~2,300 tokens). This measures prompt tokens/s and generation tokens/s on a LoCoMo-shaped
prompt of ~1,600 tokens for the shipped Q4_K_M GGUF and for Q4_0 and Q8_0 requantisations of it made
locally with llama.cpp's quantiser (nothing is downloaded; the requantised files go to a temporary
directory and are deleted). Writes ``bench/out/llm_prefill.json``.

    .venv/bin/python -m bench.speed.bench_llm_prefill        # ~3 min on 2 cores; needs the local extra
"""

from __future__ import annotations

import ctypes
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bfr_core.ingest.locomo import load_locomo
from bfr_core.ingest.sources import benchmark_file
from bfr_core.llm.local_provider import N_THREADS, SEED, resolve_model_path

ROOT = Path(__file__).resolve().parents[2]

DATA = benchmark_file("locomo")
REPEATS = 2


def prompt_text(n_turns: int = 40) -> str:
    turns = load_locomo(DATA).turns[:n_turns]  # the first conversation's, in order
    lines = [f"[{i}] {t.speaker}: {t.text}" for i, t in enumerate(turns, 1)]
    return ("Evidence snippets, in order:\n" + "\n".join(lines)
            + "\n\nQuestion: When did Caroline go to the support group?\nReply with JSON only.")


def requantise(src: Path, dst: Path, ftype: str) -> float:
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, ftype)
    params.allow_requantize = True
    params.nthread = N_THREADS
    start = time.perf_counter()
    if llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params)) != 0:
        raise RuntimeError(f"quantising to {ftype} failed")
    return time.perf_counter() - start


def speed(path: Path, text: str) -> dict[str, Any]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(path), n_ctx=4096, n_threads=N_THREADS, seed=SEED, verbose=False)
    messages = [{"role": "user", "content": text}]
    n_prompt = len(llm.tokenize(text.encode("utf-8")))
    llm.create_chat_completion(messages=[{"role": "user", "content": "hi"}], max_tokens=1)  # warm up
    prompt_s, gen_rates = [], []
    for _ in range(REPEATS):
        llm.reset()
        t = time.perf_counter()
        llm.create_chat_completion(messages=messages, max_tokens=1, temperature=0)
        pp = time.perf_counter() - t
        llm.reset()
        t = time.perf_counter()
        out = llm.create_chat_completion(messages=messages, max_tokens=48, temperature=0)
        total = time.perf_counter() - t
        prompt_s.append(pp)
        gen_rates.append(out["usage"]["completion_tokens"] / max(total - pp, 1e-3))
    pp = statistics.median(prompt_s)
    return {"file_mb": round(path.stat().st_size / 1e6), "prompt_tokens": n_prompt, "prompt_s": round(pp, 2),
            "prompt_tokens_per_s": round(n_prompt / pp, 1), "generation_tokens_per_s": round(statistics.median(gen_rates), 1)}


def main() -> int:
    shipped = resolve_model_path()
    text = prompt_text()
    result: dict[str, Any] = {"what": "prompt and generation speed of the local model, 2 threads, median of "
                                      f"{REPEATS}; Q4_0 / Q8_0 are requantised from the shipped Q4_K_M",
                              "models": {"q4_k_m (shipped)": speed(shipped, text)}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, ftype in (("q4_0", "LLAMA_FTYPE_MOSTLY_Q4_0"), ("q8_0", "LLAMA_FTYPE_MOSTLY_Q8_0")):
            dst = Path(tmp) / f"{name}.gguf"
            secs = requantise(shipped, dst, ftype)
            result["models"][name] = speed(dst, text) | {"requantise_s": round(secs, 1)}
            dst.unlink()
    out = ROOT / "bench" / "out" / "llm_prefill.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
