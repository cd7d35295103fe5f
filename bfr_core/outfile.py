"""Writing an output file a user named (``--json``, ``--out``, an export) without ever losing data.

Covers: :func:`check_output` (refuses, as a :class:`~bfr_core.errors.BfrError` naming the option and
the path: the store itself or its write-ahead log ``<store>.wal``, also through a symbolic or hard
link or another spelling of its path; any DuckDB file and any DuckDB file's ``.wal``; a folder; a
path under a file; a folder this process may not write in; any other existing file unless
``force``) and :func:`write_output` (the same checks, then the bytes go to a temporary file in the
target's folder, flushed, and renamed over the target, so a failure leaves no half file and an old
file stays whole until then). A link to an ordinary file is followed: the file it names is
replaced, the link stays.

Every option of the ``bfr`` commands that names a file or folder to write is declared with
:func:`output_argument`, which marks it (:func:`is_output`): tests/test_cli_outputs.py lists every
option of every command's parser and holds each marked one to these checks, and fails on an
option that looks like an output but is not marked.

Does not cover: what goes into the file (each command's own formatting).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from pathlib import Path

from bfr_core.duck import is_duckdb_file
from bfr_core.errors import BfrError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


WAL_SUFFIX = ".wal"  # DuckDB's write-ahead log sits beside the store as <store>.wal
_OUTPUT_MARK = "bfr_output"


def output_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *flags: str, kind: str = "file",
                    **kwargs: object) -> argparse.Action:
    """``parser.add_argument(*flags, **kwargs)`` for an option naming a ``kind`` ("file" or "folder")
    the command writes, marked so a test finds every such option (the command still calls
    :func:`check_output` / :func:`write_output` with it)."""
    if kind not in ("file", "folder"):
        raise ValueError(f"output kind {kind!r}: file or folder")
    action = parser.add_argument(*flags, **kwargs)  # type: ignore[arg-type]
    setattr(action, _OUTPUT_MARK, kind)
    return action


def is_output(action: argparse.Action) -> str | None:
    """"file" / "folder" for an option declared with :func:`output_argument`, else None."""
    return getattr(action, _OUTPUT_MARK, None)


def _store_files(store: str | Path) -> tuple[Path, Path]:
    """The store and its write-ahead log."""
    s = Path(store)
    return s, s.with_name(s.name + WAL_SUFFIX)


def _is_store_file(target: Path, store: str | Path) -> bool:
    """``target`` (resolved) is the store or its WAL, by any spelling, symbolic or hard link."""
    return any(_same_file(target, f) or target == f.resolve() for f in _store_files(store))


def _is_wal_of_duckdb(target: Path) -> bool:
    """``target`` is named like the WAL of a DuckDB file beside it (replacing it loses what the log held)."""
    return target.name.endswith(WAL_SUFFIX) and is_duckdb_file(target.with_name(target.name[:-len(WAL_SUFFIX)]))


def check_output(path: str | Path, *, option: str = "output", store: str | Path | None = None,
                 force: bool = False) -> Path:
    """The file ``path`` names (links followed) once it is safe to write there; else a one-line
    :class:`BfrError` (``option`` names the argument in it)."""
    given = Path(path)
    where = f"{option} {given}"
    try:
        target = given.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        raise BfrError(f"{where}: cannot follow the path ({exc})") from None
    for path_or_folder in (target, *target.parents):  # a folder made there would block the log too
        if store is not None and _is_store_file(path_or_folder, store):
            raise BfrError(f"{where}: that is the store ({store}) or its write-ahead log; name another file")
        if _is_wal_of_duckdb(path_or_folder):
            raise BfrError(f"{where}: is the write-ahead log of a DuckDB store; name another file")
    if target.is_dir():
        raise BfrError(f"{where}: is a folder; name a file in it")
    folder = next((p for p in target.parents if p.exists()), None)
    if folder is not None and not folder.is_dir():
        raise BfrError(f"{where}: {folder} is a file, not a folder")
    if folder is not None and not os.access(folder, os.W_OK | os.X_OK):
        raise BfrError(f"{where}: cannot write in {folder} (permission denied)")
    if target.exists():
        if is_duckdb_file(target):
            raise BfrError(f"{where}: is a DuckDB store; name another file")
        if not force:
            raise BfrError(f"{where}: exists; pass --force to replace it")
    return target


def write_output(path: str | Path, data: str | bytes, *, option: str = "output", store: str | Path | None = None,
                 force: bool = False) -> Path:
    """Write ``data`` to ``path`` after :func:`check_output`: temp file in the same folder, then a rename."""
    target = check_output(path, option=option, store=store, force=force)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        os.fchmod(fd, _mode(target))  # mkstemp's 0600 would otherwise outlive the rename
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise BfrError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None
    return target


def _mode(target: Path) -> int:
    """The permissions the written file gets: the replaced file's, else what a plain ``open`` would give."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without setting it (os.umask would change it for every thread a moment)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022
