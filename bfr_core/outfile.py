"""Writing an output file a user named (``--json``, ``--out``, an export) without ever losing data.

Covers: :func:`check_output` (refuses, as a :class:`~bfr_core.errors.BfrError` naming the option and
the path: the store itself, also through a link or another spelling of its path; any DuckDB file;
a folder; a path under a file; any other existing file unless ``force``) and :func:`write_output`
(the same checks, then the bytes go to a temporary file in the target's folder, flushed, and
renamed over the target, so a failure leaves no half file and an old file stays whole until then).
A link to an ordinary file is followed: the file it names is replaced, the link stays.

Does not cover: what goes into the file (each command's own formatting).
"""

from __future__ import annotations

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


def check_output(path: str | Path, *, option: str = "output", store: str | Path | None = None,
                 force: bool = False) -> Path:
    """The file ``path`` names (links followed) once it is safe to write there; else a one-line
    :class:`BfrError` (``option`` names the argument in it)."""
    given = Path(path)
    target = given.resolve()
    where = f"{option} {given}"
    if store is not None and (_same_file(target, Path(store)) or target == Path(store).resolve()):
        raise BfrError(f"{where}: that is the store ({store}); name another file")
    if target.is_dir():
        raise BfrError(f"{where}: is a folder; name a file in it")
    folder = next((p for p in target.parents if p.exists()), None)
    if folder is not None and not folder.is_dir():
        raise BfrError(f"{where}: {folder} is a file, not a folder")
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
