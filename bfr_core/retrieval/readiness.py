"""How much of a dataset's (or one scope's) retrieval caches is filled: what a view still computes on first use.

Covers
------
* :func:`readiness` -> :class:`Readiness`: for a dataset, or one scope of it, the number of unique
  turn texts and, per default dense model (``encoders.default_spec``: the static base, then MiniLM
  on short texts, which caches a long text as a zero row, so every text counts), how many have a
  cached vector (``embeddings``, keyed by the hash of ``views.common.index_text``, rendered and
  hashed inside DuckDB as ``embed.Q_MISSING`` does); and how many unique raw turn texts have cached
  names (the entity view's NER, ``entities``, keyed by ``turns.text_hash``). Pure SQL over the
  store, one query per model and one for names; reads nothing else and computes nothing.
* :func:`first_use_seconds`: what a scope's first build costs when its vectors are missing, from
  the per-text cost measured by ``bench/speed/bench_later.py``.

A dataset ingested with ``--no-embed`` (or an ingest stopped during encoding) is usable at once:
``scope.scope_views`` encodes a scope's missing texts on its first build and caches them; the entity
view parses names on its first search. This module says how far that has got, so the app and
``bfr eval`` can say so instead of leaving a user to wonder at a slow first question.

Does not cover: computing any of it (``embed.ensure_embeddings``, ``views.entity.ensure_entities``,
``scope.scope_views``).
"""

from __future__ import annotations

from dataclasses import dataclass

from bfr_core.retrieval.encoders import default_spec
from bfr_core.retrieval.views.common import INDEX_TEXT_SQL
from bfr_core.retrieval.views.entity import NER_MODEL
from bfr_core.store import Store

__all__ = ["Readiness", "first_use_seconds", "readiness"]

# The turns of a dataset, or of one scope (its sessions' turns); both take (dataset_id, scope_id).
_DATASET = "SELECT speaker, text, text_hash FROM turns WHERE dataset_id = ? AND ? IS NULL"
_SCOPE = """SELECT t.speaker, t.text, t.text_hash FROM scope_sessions ss
JOIN turns t ON t.dataset_id = ss.dataset_id AND t.session_id = ss.session_id
WHERE ss.dataset_id = ? AND ss.scope_id = ?"""
Q_VECTORS = """
WITH h AS (SELECT DISTINCT left(sha1({index_text}), 20) AS text_hash FROM ({turns}))
SELECT count(*), {cached} FROM h
"""
Q_NAMES = """
WITH h AS (SELECT DISTINCT text_hash FROM ({turns}))
SELECT count(*), {cached} FROM h
"""
_CACHED = "count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {table} e WHERE e.{key} = ? AND e.text_hash = h.text_hash))"
Q_SCOPES = "SELECT count(*) FROM scopes WHERE dataset_id = ? AND (? IS NULL OR scope_id = ?)"

# Seconds a scope's first build spends per turn text it must encode (both default models, MiniLM's
# load excluded), measured by bench/speed/bench_later.py on dev50 and LoCoMo (the slower is used). MiniLM's
# load (LOAD_S, the larger of the two measured) comes once per process.
PER_TEXT_S = 0.0069
LOAD_S = 6.2


@dataclass(frozen=True)
class Readiness:
    """What the caches hold for a dataset (or one scope): counts of unique texts."""

    texts: int  # unique texts the dense view indexes (``index_text``)
    vectors: tuple[tuple[str, int], ...]  # (model id, texts with a cached vector), per default model
    name_texts: int  # unique raw turn texts (what the entity view parses)
    names: int  # of those, with cached names
    scopes: int  # scopes counted

    @property
    def missing(self) -> int:
        """Texts some default model has no vector for yet (the most any model lacks)."""
        return max((self.texts - n for _, n in self.vectors), default=0)

    @property
    def dense_ready(self) -> bool:
        return self.missing == 0


def _tables(store: Store) -> set[str]:
    return {r[0] for r in store.cursor().execute("SELECT table_name FROM information_schema.tables").fetchall()}


def _count(store: Store, sql: str, turns: str, table: str | None, key: str, value: str,
           params: list) -> tuple[int, int]:
    cached = _CACHED.format(table=table, key=key) if table else "0"
    row = store.cursor().execute(sql.format(index_text=INDEX_TEXT_SQL, turns=turns, cached=cached),
                                 params + ([value] if table else [])).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def readiness(store: Store, dataset_id: str, scope_id: str | None = None) -> Readiness:
    """The cache counts of ``dataset_id`` (or of its scope ``scope_id``); see the module docstring.
    Fast enough to call on every page render (bench/speed/bench_later.py times it)."""
    spec = default_spec()
    models = [spec.base] + ([spec.short] if spec.short else [])
    tables = _tables(store)
    turns = _SCOPE if scope_id is not None else _DATASET
    params = [dataset_id, scope_id]
    vectors = []
    texts = 0
    for mid in models:
        texts, n = _count(store, Q_VECTORS, turns, "embeddings" if "embeddings" in tables else None,
                          "model_id", mid, params)
        vectors.append((mid, n))
    name_texts, names = _count(store, Q_NAMES, turns, "entities" if "entities" in tables else None,
                               "model", NER_MODEL, params)
    row = store.cursor().execute(Q_SCOPES, [dataset_id, scope_id, scope_id]).fetchone()
    return Readiness(texts, tuple(vectors), name_texts, names, int(row[0]) if row else 0)


def first_use_seconds(ready: Readiness, *, loaded: bool = False) -> float:
    """About how long one scope's first build takes while its vectors are missing: its share of the
    missing texts at :data:`PER_TEXT_S`, plus MiniLM's load unless ``loaded``."""
    if ready.dense_ready:
        return 0.0
    per_scope = ready.missing / max(1, ready.scopes)
    return per_scope * PER_TEXT_S + (0.0 if loaded else LOAD_S)
