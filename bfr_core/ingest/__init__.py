"""Benchmark files -> the flat store. Loaders are pure (file -> Bundle); :func:`ingest` writes.

Kinds: ``locomo`` (``locomo10.json``), ``longmemeval`` (S / M / oracle ``.json`` or the gzipped
dev50 sample), ``jsonl`` (our documented generic format, ``docs/jsonl-format.md``), ``beam`` (a BEAM
folder: one conversation, a tier or the root) and ``locomo-plus`` (stitched into LoCoMo; its
``locomo`` option names ``locomo10.json``). Each loader is ``load_<kind>(path, *, dataset_id=None,
progress=None, **options) -> Bundle`` and raises :class:`~bfr_core.errors.InputError` on bad input,
before anything touches the store.

:func:`ingest` writes the bundle in one transaction (the store refuses a second copy unless
``replace``), then, when ``embed`` is set, computes or reuses the dense embeddings (``retrieval.embed``,
imported when first needed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace as dc_replace
from pathlib import Path

from bfr_core.duck import StoreError
from bfr_core.errors import BfrError
from bfr_core.ingest.beam import load_beam
from bfr_core.ingest.common import check_turn_lengths, sha256_file
from bfr_core.ingest.generic_jsonl import default_dataset_id, load_jsonl
from bfr_core.ingest.locomo import load_locomo
from bfr_core.ingest.locomo_plus import load_locomo_plus
from bfr_core.ingest.longmemeval import load_longmemeval
from bfr_core.ingest.releases import recognise
from bfr_core.ingest.validate import validate
from bfr_core.progress import Progress, StepMeter, ticking
from bfr_core.records import Bundle, IngestReport
from bfr_core.retrieval import embed as embeddings
from bfr_core.retrieval.views.common import index_text
from bfr_core.retrieval.views.entity import ensure_entities
from bfr_core.sentences import search_texts
from bfr_core.store import Store

Loader = Callable[..., Bundle]
LOADERS: dict[str, Loader] = {"locomo": load_locomo, "longmemeval": load_longmemeval, "jsonl": load_jsonl,
                               "beam": load_beam, "locomo-plus": load_locomo_plus}
KINDS: tuple[str, ...] = tuple(LOADERS)
FOLDER_KINDS = frozenset({"beam"})  # read from a folder, not one file

__all__ = ["FOLDER_KINDS", "KINDS", "LOADERS", "check_kind", "ingest", "load", "load_beam", "load_jsonl",
           "load_locomo", "load_locomo_plus", "load_longmemeval"]


def check_kind(kind: str) -> Loader:
    """The loader for ``kind``; an unknown kind is a BfrError listing the kinds."""
    if kind not in LOADERS:
        raise BfrError(f"unknown ingest kind '{kind}'; choose one of: {', '.join(KINDS)}")
    return LOADERS[kind]


def default_name(kind: str, path: str | Path, options: dict | None = None) -> str:
    """The dataset id used when none is given: the kind, or the file name for JSONL; LoCoMo-Plus stitched
    another way than the benchmark's (``options["stitch"]``) is named so, never plain "locomo-plus"."""
    if kind == "jsonl":
        return default_dataset_id(path)
    stitch = (options or {}).get("stitch") or "session"
    return kind if kind != "locomo-plus" or stitch == "session" else f"{kind}-{stitch}"


def load(kind: str, path: str | Path, *, dataset_id: str | None = None, progress: Progress | None = None,
         **options: object) -> Bundle:
    """Dispatch to ``load_<kind>`` (``options``: that loader's own keywords); an unknown kind is a
    BfrError listing the kinds."""
    return check_kind(kind)(path, dataset_id=dataset_id, progress=progress, **options)


def _same_file(store: Store, dataset_id: str, path: str | Path) -> bool:
    """Whether ``dataset_id`` already holds this very file (a rerun: its cache stages are finished);
    a dataset of that name from another file is refused before a large file is parsed."""
    existing = store.dataset(dataset_id)
    if existing is None:
        return False
    if existing["source_sha256"] == sha256_file(path):
        return True
    raise StoreError(
        f"dataset '{dataset_id}' is already in {store.path} (a dataset with this name exists); store unchanged. "
        "Pass --replace to overwrite it or --name to keep both."
    )


def _resume(store: Store, dataset_id: str, kind: str, embed: bool, entities: bool,
            progress: Progress | None) -> IngestReport:
    """A rerun of an ingest whose dataset is written: finish the cache stages a kill cut short (each
    is a cache by text hash, so this encodes or parses only what is missing; nothing else changes)."""
    stored = store.dataset(dataset_id) or {}
    rep = stored.get("report") or {}
    if isinstance(rep, str):
        rep = json.loads(rep)
    counts = store.counts(dataset_id)
    report = IngestReport(dataset_id, kind, str(stored.get("source", "")), counts["scopes"], counts["sessions"],
                          counts["turns"], counts["questions"], counts["scoreable"], tuple(rep.get("notes", ())),
                          tuple(sorted(store.questions_by_type(dataset_id).items())))
    notes = ["already in the store from this same file: the dataset was not rewritten (--replace rewrites it)"]
    if embed:
        n = embeddings.finish_embeddings(store, dataset_id, progress)
        notes.append(f"embeddings: finished, {n:,} text(s) encoded (bfr_core.retrieval.embed.finish_embeddings)")
    if entities:
        meter = StepMeter()
        notes.append(ticking(lambda: _entities(store, dataset_id, meter), progress,
                             "finding names in the turns (entity view)", meter=meter))
    return dc_replace(report, notes=(*report.notes, *notes))


def _embed(store: Store, dataset_id: str, progress: Progress | None) -> str:
    n = embeddings.ensure_embeddings(store, dataset_id, progress=progress) or 0
    return f"embeddings: ensured, {n:,} text(s) encoded after the write (bfr_core.retrieval.embed.ensure_embeddings)"


def _entities(store: Store, dataset_id: str, meter: StepMeter | None = None) -> str:
    """The entity view's NER for every turn text, cached by text hash at ingest instead of on each scope's
    first entity search during evaluation (the slowest part of a first offline run); ``meter``
    counts the texts parsed."""
    try:
        parsed = ensure_entities(store, dataset_id, meter=meter)
    except ImportError as exc:
        return f"entities: skipped ({exc})"
    return f"entities: {parsed:,} text(s) parsed and cached (bfr_core.retrieval.views.entity.ensure_entities)"


def _encode_first(store: Store, bundle: Bundle, progress: Progress | None, written: list,
                  executor: object | None = None) -> None:
    """Encode and cache the bundle's texts before it is written; every cached chunk is appended to
    ``written`` at once, for a rollback. ``executor``: where MiniLM's chunks run (``run_encoding``)."""
    texts = [index_text(t) for t in bundle.turns]
    tasks = ticking(lambda: embeddings.plan_encoding(store, texts, search_texts(q.text for q in bundle.questions)), progress,
                    "checking which texts are already encoded")
    embeddings.run_encoding(store, tasks, progress, written, executor)


def _undo(store: Store, dataset_id: str, written_dataset: bool, vectors: list) -> None:
    if written_dataset:
        store.delete_dataset(dataset_id)
    if vectors:
        embeddings.delete_vectors(store, vectors)


def ingest(
    store: Store, kind: str, path: str | Path, *, name: str | None = None, replace: bool = False,
    embed: bool = True, progress: Progress | None = None, entities: bool | None = None,
    options: dict | None = None, executor: object | None = None,
) -> IngestReport:
    """Load ``path`` as ``kind`` into ``store`` as dataset ``name`` (default: see ``default_name``).

    Nothing is written unless the whole file parses. Stages, each reported to ``progress`` under a
    readable label: reading the file, encoding the texts not cached yet (in small steps, one bar
    over every model's texts), writing the dataset (one transaction), a final cache check.
    Interrupted anywhere (an exception, Ctrl-C, the app's Cancel) it takes back what it added: the
    vectors it cached and, when the dataset was new, the dataset; a replaced dataset stays replaced
    once its write has committed (the old copy is gone by then). Returns the report, with one extra
    note on the embedding step and one on the entity step (``entities``, default off: the entity
    view parses only the turns a cue could match, when first searched; both are caches by text hash).
    ``options`` go to the loader (``locomo-plus``: ``locomo``, ``locomo_questions``, ``stitch``). ``executor``
    (``evaluation.executors.make_executor``, e.g. a Ray cluster) runs MiniLM's encoding on its
    workers; the vectors come back and are written here, by the one store writer.

    Run again on the same file (same sha256, no ``replace``) after a kill left its cache stages
    unfinished, it finishes them instead of refusing (:func:`_resume`); ``embed=False`` then has
    nothing to do and the store refuses the second copy as before.
    """
    loader = check_kind(kind)
    dataset_id = name or default_name(kind, path, options)
    if store.read_only:
        raise StoreError(f"store {store.path} is open read-only; nothing can be ingested into it")
    wants_entities = bool(entities)
    if not replace and Path(path).is_file() and _same_file(store, dataset_id, path) and (embed or wants_entities):
        return _resume(store, dataset_id, kind, embed, wants_entities, progress)
    reading = (lambda d, t, _label: progress(d, t, "reading the file")) if progress else None
    bundle = loader(path, dataset_id=dataset_id, progress=reading, **(options or {}))
    where = str(Path(path).resolve())  # stored: the Data page's "finish" command runs from the repository folder
    bundle = dc_replace(bundle, source=where, report=dc_replace(bundle.report, source=where))
    if kind == "longmemeval":  # which release (S / M / oracle, full or a part): the report's first note
        release = recognise(bundle).note
        bundle = dc_replace(bundle, report=dc_replace(bundle.report, notes=(release, *bundle.report.notes)))
    bundle = validate(bundle)  # refuse or repair (notes)
    check_turn_lengths(bundle.turns, path)
    existed = store.dataset(dataset_id) is not None
    vectors: list = []
    written = False
    try:
        if embed:
            _encode_first(store, bundle, progress, vectors, executor)
        try:
            report = ticking(lambda: store.write_bundle(bundle, replace=replace), progress,
                             "writing the dataset to the store")
        finally:  # a Cancel waits for the transaction: it committed unless write_bundle raised
            written = not existed and store.dataset(dataset_id) is not None
        note = _embed(store, dataset_id, progress) if embed else "embeddings: skipped (--no-embed)"
        meter = StepMeter()
        ents = (ticking(lambda: _entities(store, dataset_id, meter), progress, "finding names in the turns (entity view)",
                        meter=meter) if wants_entities else "entities: skipped")
    except BaseException:
        _undo(store, dataset_id, written, vectors)
        raise
    return dc_replace(report, notes=(*report.notes, ents, note))
