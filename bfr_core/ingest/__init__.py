"""Benchmark files -> the flat store. Loaders are pure (file -> Bundle); :func:`ingest` writes.

Kinds: ``locomo`` (``locomo10.json``), ``longmemeval`` (S / M / oracle ``.json`` or the gzipped
dev50 sample) and ``jsonl`` (our documented generic format, ``docs/jsonl-format.md``). Each loader
is ``load_<kind>(path, *, dataset_id=None, progress=None) -> Bundle`` and raises
:class:`~bfr_core.errors.InputError` on bad input, before anything touches the store.

:func:`ingest` writes the bundle in one transaction (the store refuses a second copy unless
``replace``), then, when ``embed`` is set, computes or reuses the dense embeddings (``retrieval.embed``,
imported when first needed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace as dc_replace
from pathlib import Path

from bfr_core.errors import BfrError
from bfr_core.ingest.common import sha256_file
from bfr_core.ingest.jsonl import default_dataset_id, load_jsonl
from bfr_core.ingest.locomo import load_locomo
from bfr_core.ingest.longmemeval import load_longmemeval
from bfr_core.progress import Progress
from bfr_core.records import Bundle, IngestReport
from bfr_core.store import Store, StoreError

Loader = Callable[..., Bundle]
LOADERS: dict[str, Loader] = {"locomo": load_locomo, "longmemeval": load_longmemeval, "jsonl": load_jsonl}
KINDS: tuple[str, ...] = tuple(LOADERS)

__all__ = ["KINDS", "LOADERS", "check_kind", "ingest", "load", "load_jsonl", "load_locomo",
           "load_longmemeval"]


def check_kind(kind: str) -> Loader:
    """The loader for ``kind``; an unknown kind is a BfrError listing the kinds."""
    if kind not in LOADERS:
        raise BfrError(f"unknown ingest kind '{kind}'; choose one of: {', '.join(KINDS)}")
    return LOADERS[kind]


def default_name(kind: str, path: str | Path) -> str:
    """The dataset id used when none is given: the kind, or the file name for JSONL."""
    return default_dataset_id(path) if kind == "jsonl" else kind


def load(kind: str, path: str | Path, *, dataset_id: str | None = None, progress: Progress | None = None) -> Bundle:
    """Dispatch to ``load_<kind>``; an unknown kind is a BfrError listing the kinds."""
    return check_kind(kind)(path, dataset_id=dataset_id, progress=progress)


def _refuse_early(store: Store, dataset_id: str, path: str | Path) -> None:
    """Refuse before parsing a large file when the store would refuse the write anyway."""
    existing = store.dataset(dataset_id)
    if existing is None:
        return
    same = existing["source_sha256"] == sha256_file(path)
    why = "this same file was already ingested" if same else "a dataset with this name exists"
    raise StoreError(
        f"dataset '{dataset_id}' is already in {store.path} ({why}); store unchanged. "
        "Pass --replace to overwrite it or --name to keep both."
    )


def _embed(store: Store, dataset_id: str, progress: Progress | None) -> str:
    from bfr_core.retrieval.embed import ensure_embeddings  # lazy: loads the embedding stack only when used

    ensure_embeddings(store, dataset_id, progress=progress)
    return "embeddings: ensured (bfr_core.retrieval.embed.ensure_embeddings)"


def _entities(store: Store, dataset_id: str) -> str:
    """The entity view's NER for every turn text, cached by text hash now instead of on each scope's
    first entity search during evaluation (the slowest part of a first offline run)."""
    try:
        from bfr_core.retrieval.views.entity import ensure_entities

        parsed = ensure_entities(store, dataset_id)
    except ImportError as exc:
        return f"entities: skipped ({exc})"
    return f"entities: {parsed:,} text(s) parsed and cached (bfr_core.retrieval.views.entity.ensure_entities)"


def ingest(
    store: Store, kind: str, path: str | Path, *, name: str | None = None, replace: bool = False,
    embed: bool = True, progress: Progress | None = None, entities: bool | None = None,
) -> IngestReport:
    """Load ``path`` as ``kind`` into ``store`` as dataset ``name`` (default: see ``default_name``).

    Nothing is written unless the whole file parses. Returns the report, with one extra note on
    the embedding step and one on the entity step (``entities``, default: as ``embed``; both are
    caches by text hash, so a later evaluation only reads them).
    """
    loader = check_kind(kind)
    dataset_id = name or default_name(kind, path)
    if not replace and Path(path).is_file():
        _refuse_early(store, dataset_id, path)
    bundle = loader(path, dataset_id=dataset_id, progress=progress)
    report = store.write_bundle(bundle, replace=replace)
    note = _embed(store, dataset_id, progress) if embed else "embeddings: skipped (--no-embed)"
    ents = _entities(store, dataset_id) if (embed if entities is None else entities) else "entities: skipped"
    return dc_replace(report, notes=(*report.notes, ents, note))
