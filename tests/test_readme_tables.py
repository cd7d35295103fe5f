"""The README's generated tables are what their generators print from bench/out today (issue 25: the
README's figures are read from the JSON they cite): a rerun bench without a pasted table fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATORS = (["bench/ours_readme.py"], ["bench/byo_readme.py", "100K", "500K", "1M"], ["bench/byo_readme.py", "plus"],
              ["bench/byo_readme.py", "stitching"])


@pytest.mark.parametrize("command", GENERATORS, ids=lambda c: " ".join(c))
def test_every_generated_table_is_in_the_readme_as_printed(command):
    printed = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in printed.strip().split("\n\n") if b.strip()]
    assert blocks
    stale = [b.splitlines()[0] for b in blocks if b not in readme]
    assert not stale, f"README blocks out of date (rerun {' '.join(command)} and paste): {stale}"
