"""The sidebar's store path, checked before anything opens it (no streamlit import).

Covers: :func:`problem` (why a typed path cannot be opened as it stands: a folder, a missing
parent folder, a file that is not a DuckDB store, or a store that does not exist yet and was not
asked for) and :func:`size_mb` (the store's size on disk, its write-ahead log included).
Does not cover: opening the store (``ui.resources``).
The messages are Markdown: the typed path (which a crafted ``?store=`` link chooses) appears only
as a code span (``ui.markup.code``), so it cannot add a link, an image or a tag to the page.
"""

from __future__ import annotations

from pathlib import Path

from bfr_core.duck import not_a_store
from ui.markup import code


def size_mb(p: Path) -> float:
    """MB on disk of the store and its ``.wal`` (a fresh store's data sits in the WAL until a checkpoint)."""
    wal = p.with_name(p.name + ".wal")
    return sum(f.stat().st_size for f in (p, wal) if f.is_file()) / 1e6


def creatable(p: Path) -> bool:
    """Whether "create a new store here" can apply to ``p``: nothing (no file, no folder) is there yet."""
    return not p.exists()


def problem(p: Path, *, is_default: bool, create: bool) -> str | None:
    """``None`` when the app may open ``p``; else what is wrong, in the sidebar's words (Markdown)."""
    if is_default:
        return None  # the demo store is built on first start
    if p.is_dir():
        return f"{code(p)} is a folder; give the path of a DuckDB file (for example {code(p / 'store.duckdb')})."
    if p.is_file():
        return f"{code(p)} exists but is not a DuckDB store." if not_a_store(p) else None
    if not create:
        where = "" if p.parent.is_dir() else f" (and its folder {code(p.parent)} does not exist either)"
        return (f"No store at {code(p)}{where}. Check the path, or tick “Create a new store here” to start an "
                "empty one.")
    return None
