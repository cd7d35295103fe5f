"""The code a bench measured: one way for every bench to name it in its JSON.

Covers :func:`commit` (the repository's short HEAD, with "+uncommitted" when tracked files differ
from it, or "unknown" outside a git work tree). Does not cover untracked files (a new file is not
the code measured until it is added).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def commit(root: Path = ROOT, *, mark_changes: bool = True) -> str:
    """``root``'s short HEAD, "+uncommitted" when a tracked file differs (unless ``mark_changes`` is off)."""
    try:
        head = _git(root, "rev-parse", "--short", "HEAD")
        dirty = mark_changes and bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+uncommitted" if dirty else "")
