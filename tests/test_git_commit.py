"""bench/lib/git_commit.py: the code a bench measured, named the same way by every bench."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.lib import git_commit


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_commit_names_head_and_marks_tracked_changes_only(tmp_path: Path):
    assert git_commit.commit(tmp_path) == "unknown"  # not a work tree
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = _git(tmp_path, "rev-parse", "--short", "HEAD")
    assert git_commit.commit(tmp_path) == head
    (tmp_path / "new.py").write_text("y = 2\n")  # untracked: not the code measured
    assert git_commit.commit(tmp_path) == head
    (tmp_path / "a.py").write_text("x = 2\n")
    assert git_commit.commit(tmp_path) == head + "+uncommitted"
    assert git_commit.commit(tmp_path, mark_changes=False) == head
