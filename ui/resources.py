"""Cached resources and frames: the only place the app calls ``st.cache_resource`` / ``st.cache_data``.

The store object is made once per path and process, in shared mode: app.py holds it open (read-write)
only for the length of one request, so an idle app holds no lock and ``bfr eval`` can run beside it;
while another process holds the file, requests read a snapshot copy and labels are queued. Frames are cached per (store path, arguments); the sidebar's Refresh
button clears them. The default store is the embedded demo (``data/demo.duckdb``), created from
``data/demo.jsonl`` (written by ``bfr_core.ingest.demo.demo_file``) on first start, so a fresh clone opens with no set-up.
``BFR_STORE`` in the environment overrides the default path (tests, the browser check).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from bfr_core.ingest.sources import data_dir
from bfr_core.records import Turn
from bfr_core.store import Store, remove_stale_snapshots
from ui import access

ROOT = Path(__file__).resolve().parents[1]
DEMO_DB = ROOT / "data" / "demo.duckdb"
ICON = str(Path(__file__).with_name("icon.svg"))  # the page icon, sent inline as a data URL
SHARED_DATA = data_dir()
OFFLINE = "offline rules"


def default_store_path() -> str:
    return os.environ.get("BFR_STORE") or "data/demo.duckdb"


def resolve(path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else ROOT / p


@st.cache_resource(show_spinner="Opening the store…")
def open_store(path: str) -> Store:
    """The store at ``path`` in shared mode (no lock held between requests; see ``bfr_core.store``);
    the demo store is built from data/demo.jsonl when missing or stale (:func:`build_demo`)."""
    p = resolve(path)
    remove_stale_snapshots()  # copies left by an app or command that was killed
    if p.resolve() == DEMO_DB.resolve() and not _held_elsewhere(p):
        build_demo(p)
    return Store(p, shared=True)


def build_demo(p: Path) -> None:
    """Write the demo dataset into the store at ``p`` when missing or stale, without vectors or names.

    With them (``embed=True``) a fresh clone's first page would wait for MiniLM's load, the encoding
    and the names (most of a minute on two busy cores, bench/speed/bench_app.py); without, about a second. Nothing is lost: the dense view encodes a scope's uncached texts on first use and the
    entity view finds names on first use, both cached in the store (``retrieval.scope.scope_views``).
    """
    from bfr_core.ingest.demo import ensure_demo_store

    ensure_demo_store(p, embed=False).close()


def _held_elsewhere(p: Path) -> bool:
    """Whether another process holds ``p`` now (checked within a second, then let go)."""
    from bfr_core.duck import StoreLocked, connect

    if not p.exists():
        return False
    try:
        connect(str(p), wait_s=1.0).close()
    except StoreLocked:
        return True
    return False


def being_written(s: Store) -> bool:
    """Whether ``s`` is a snapshot of a store another process is creating (a terminal ``bfr ingest``
    into a new file): its copy, as of the last checkpoint, holds no table yet."""
    if not s.snapshot_of:
        return False
    return not s.cursor().execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'datasets'").fetchone()[0]


def set_aside_labels(s: Store) -> tuple[int, str]:
    """How many queued-label lines flushes set aside (``labels.flush_pending``), and the file that keeps them."""
    from bfr_core.evaluation.labels import set_aside, set_aside_path

    return len(set_aside(s.path)), str(set_aside_path(s.path))


def flush_queued_labels(s: Store) -> int:
    """Write labels queued while another process held the store, once it is writable again."""
    from bfr_core.evaluation.labels import flush_pending, has_pending

    if s.read_only or not has_pending(s.path):
        return 0
    return flush_pending(s)


def require_frame() -> None:
    """Make sure the page runs inside app.py's ``st.navigation`` frame (sidebar, store check).

    Streamlit keeps a legacy mode for apps with a ``pages/`` folder: until some run calls
    ``st.navigation``, a request for ``/trace`` runs pages/trace.py alone. That happens on a fresh
    server whose first request is a deep link (the Failures page's links). The sidebar's widget
    key is then missing: switch the legacy mode off and rerun, which runs app.py first.
    """
    if "app_store" not in st.session_state:
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False
        st.rerun()


def sticky(key: str, default: Any, options: Sequence[Any] | None = None) -> None:
    """Before the sidebar widget ``key`` is drawn: give it back the value it had on the last run.

    Streamlit drops every widget's state on ``st.switch_page`` (its ``on_script_finished`` with the
    empty widget list a switch carries), so a Failures row opening Trace reset the store path to the
    default while the browser still showed the user's path. A plain session key survives a switch:
    it keeps a copy. ``options``: a kept value that is not among them falls back to ``default``.
    """
    ss, kept = st.session_state, f"{key}__kept"
    if key not in ss:
        value = ss.get(kept, default)
        ss[key] = value if options is None or value in options else default
    ss[kept] = ss[key]


def store_path() -> str:
    return st.session_state.get("app_store") or default_store_path()


def initial_store_path() -> str:
    """The sidebar's store on a session's first run: a link's ``?store=`` (the Failures table's
    "open" links start a new tab, a new session), else the default."""
    return st.query_params.get("store") or default_store_path()


def store_param(path: str) -> dict[str, str]:
    """The query parameter that opens a link on this store (none for the default store)."""
    return {} if path == default_store_path() else {"store": path}


def store() -> Store:
    return open_store(store_path())


def provider() -> str:
    chosen = st.session_state.get("app_provider") or OFFLINE
    return chosen if chosen == OFFLINE or access.may_call_models() else OFFLINE


def provider_options() -> list[str]:
    """"offline rules" first, then the provider the config file names (``bfr_core.llm.factory.configured``:
    ``$BFR_CONFIG``, else bfr.toml); in team mode only for users allowed to call models (``ui.access``)."""
    from bfr_core.llm.base import LLMConfigError
    from bfr_core.llm.factory import config_label, file_config

    options = [OFFLINE]
    if not access.may_call_models():
        return options
    try:
        llm = file_config()
    except LLMConfigError:
        return options
    if llm.provider.strip().lower() != "rules":
        options.append(config_label(llm))
    return options


@st.cache_resource(show_spinner=False)
def _llm(path: str, label: str) -> Any:
    """The client for a provider label with the settings the config file gives it (its base_url too)."""
    from bfr_core.llm.factory import configured, make_llm

    return make_llm(configured("rules" if label == OFFLINE else label), open_store(path))


def llm(label: str | None = None) -> Any:
    """The LLM object for a provider label (``None`` when bfr_core.llm is not available); a model
    for a user who may not call models raises :class:`ui.access.AccessDenied`."""
    label = label or provider()
    if label != OFFLINE and not access.may_call_models():
        raise access.AccessDenied(f"{access.identity() or 'this user'} may not call {label}; "
                                  "ask to be added to [bfr] model_users")
    return _llm(store_path(), label)


def pipeline_llm(label: str | None = None) -> Any:
    """What ``pipeline.run`` gets: ``None`` selects the arms' offline rules path."""
    label = label or provider()
    return None if label == OFFLINE else llm(label)


def refresh() -> None:
    st.cache_data.clear()


# -- frames -------------------------------------------------------------------------------------
def store_version(path: str) -> tuple[float, float]:
    """The store file's and its write-ahead log's modification times (0 when absent): what the store
    holds changes only when one of them does, so frames keyed on it follow an ingest or an eval made
    by a command while the app is open, without a Refresh."""
    p = resolve(path)
    out = []
    for f in (p, p.with_name(p.name + ".wal")):
        try:
            out.append(f.stat().st_mtime)
        except OSError:
            out.append(0.0)
    return out[0], out[1]


def datasets(path: str) -> list[dict[str, Any]]:
    """Every dataset with its counts and question types, re-read whenever the store changed."""
    return _datasets(path, store_version(path))


@st.cache_data(show_spinner=False, max_entries=16)
def _datasets(path: str, version: tuple[float, float]) -> list[dict[str, Any]]:  # noqa: ARG001 - the cache key
    s = open_store(path)
    return [{**d, "counts": s.counts(d["dataset_id"]), "by_type": s.questions_by_type(d["dataset_id"])}
            for d in s.datasets()]


@st.cache_data(show_spinner=False, ttl=30)
def readiness(path: str, dataset_id: str) -> Any:
    """``bfr_core.retrieval.readiness.readiness`` of a dataset (a few SQL counts, cached for the
    ``ttl``; a scope built meanwhile by another page or a ``bfr eval`` shows after it, or at Refresh)."""
    from bfr_core.retrieval.readiness import readiness as ready

    return ready(open_store(path), dataset_id)


@st.cache_data(show_spinner=False)
def questions(path: str, dataset_id: str) -> pd.DataFrame:
    qs = open_store(path).questions(dataset_id)
    return pd.DataFrame([{"question_id": q.question_id, "scope_id": q.scope_id, "qtype": q.qtype,
                          "text": q.text, "n_gold": len(q.gold)} for q in qs],
                        columns=["question_id", "scope_id", "qtype", "text", "n_gold"])


@st.cache_data(show_spinner=False)
def scope_turns(path: str, dataset_id: str, scope_id: str) -> dict[str, Turn]:
    return {t.turn_id: t for t in open_store(path).scope_turns(dataset_id, scope_id)}


@st.cache_data(show_spinner=False)
def session_turns(path: str, dataset_id: str, session_id: str) -> tuple[Turn, ...]:
    return open_store(path).session_turns(dataset_id, session_id)


def all_runs(path: str) -> list[dict[str, Any]]:
    """Every run of the store, re-read whenever the store changed (a run a command finished shows)."""
    return _all_runs(path, store_version(path))


@st.cache_data(show_spinner=False, max_entries=16)
def _all_runs(path: str, version: tuple[float, float]) -> list[dict[str, Any]]:  # noqa: ARG001 - the cache key
    from bfr_core.runs import list_runs

    return list_runs(open_store(path))


@st.cache_data(show_spinner=False)
def imported_systems(path: str, dataset_id: str | None = None) -> list[Any]:
    from bfr_core.evaluation.imported import imported_systems as systems

    return systems(open_store(path), dataset_id)


def runs(path: str) -> list[dict[str, Any]]:
    """The runs computed on the data the store holds now; runs on a replaced version of a dataset
    (``stale_runs``) are never offered beside them."""
    return [r for r in all_runs(path) if r.get("current")]


def stale_runs(path: str) -> list[dict[str, Any]]:
    return [r for r in all_runs(path) if not r.get("current")]


@st.cache_data(show_spinner="Pivoting results…")
def failures_frame(path: str, run_id: str) -> pd.DataFrame:
    from ui.tables import pivot_results

    return pivot_results(open_store(path), run_id)


@st.cache_data(show_spinner=False)
def set_sizes(path: str, run_id: str) -> tuple[dict[str, int], int | None]:
    """Arm -> its largest evidence set in the run, and the common size the arms are compared at
    (None: they are of one size already); ``evaluation.summary.set_sizes`` / ``common_size``."""
    from bfr_core.evaluation.summary import common_size, run_rows
    from bfr_core.evaluation.summary import set_sizes as sizes

    rows = run_rows(open_store(path), run_id)
    return sizes(rows), common_size(rows)


@st.cache_data(show_spinner="Pivoting results…")
def failures_frame_at(path: str, run_id: str, k: int | None) -> pd.DataFrame:
    """:func:`failures_frame` with each arm's retrieval columns (GH, ER, CER, size) recomputed on its
    set cut to the first ``k`` ids (None: as stored); the answer columns stay those of the full set."""
    df = failures_frame(path, run_id)
    if k is None:
        return df
    _, rows = cut_summary(path, run_id, k)
    df = df.copy()
    for arm in {r["arm"] for r in rows}:
        by_q = {r["question_id"]: r for r in rows if r["arm"] == arm}
        for key, short in (("gold_hit", "GH"), ("er", "ER"), ("cer", "CER"), ("set_size", "size")):
            col = f"{arm} {short}"
            if col in df.columns:
                df[col] = [by_q[q][key] if q in by_q else None for q in df["question_id"]]
    return df


@st.cache_data(show_spinner="Summarising at one set size…")
def cut_summary(path: str, run_id: str, k: int | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's summary and rows with every set cut to its first ``k`` ids (None: as stored)."""
    from bfr_core.evaluation.summary import run_rows, summarize

    store = open_store(path)
    return summarize(store, run_id, k=k), run_rows(store, run_id, k)


@st.cache_data(show_spinner="Building the annotation queue…")
def label_queue_size(path: str, stamp: Any = None) -> int:  # noqa: ARG001 - part of the cache key
    """Sync the annotation queue with finished runs (once per Refresh); returns its size."""
    from bfr_core.evaluation.labels import sync_queue

    return sync_queue(open_store(path))


# ``stamp`` (labels.queue_stamp, read on every page run) is part of each key below: a run finished or
# judged by another process rebuilds them without a Refresh.
# The annotation queue's items do not change between its syncs (label_queue_size, cleared by Refresh
# with it): what depends on them alone is read once per sync, not on every label saved (on a full
# LoCoMo run each would otherwise slow every rerun; bench/speed/bench_annotate.py).
@st.cache_data(show_spinner=False)
def label_item_questions(path: str, stamp: Any = None) -> dict[str, str]:  # noqa: ARG001 - part of the cache key
    from bfr_core.evaluation.labels import item_questions

    return item_questions(open_store(path))


@st.cache_data(show_spinner=False)
def judged_item_count(path: str, stamp: Any = None) -> int:  # noqa: ARG001 - part of the cache key
    from bfr_core.evaluation.labels import judged_items

    return judged_items(open_store(path))


@st.cache_data(show_spinner=False, max_entries=256)
def blinded_item(path: str, item_id: str) -> Any:
    """An item as annotators see it (``labels.BlindItem``: question, answer, evidence text; fixed once queued)."""
    from bfr_core.evaluation.labels import blinded_item as blind

    return blind(open_store(path), item_id)
