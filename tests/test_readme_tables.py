"""The measured tables shown to users are what their generators print from bench/out today: the README's
headline table is a block of ``bench/lib/ours_readme.py``'s output, and ``docs/results.md`` is exactly what
``bench/lib/results_doc.py`` writes. A rerun bench whose JSON changed fails here until both are regenerated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_results_page_is_what_the_generator_writes():
    done = subprocess.run([sys.executable, "-m", "bench.lib.results_doc", "--check"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_readme_headline_table_is_a_generated_block():
    printed = subprocess.run([sys.executable, "-m", "bench.lib.ours_readme"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
    blocks = [b for b in printed.strip().split("\n\n") if b.strip()]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table_lines = [line for line in readme.splitlines() if line.startswith("| benchmark, figure")]
    assert table_lines, "README has no headline table"
    assert any(b in readme for b in blocks if "| benchmark, figure" in b), (
        "README's headline table is out of date: paste the 'versus' block of bench/lib/ours_readme.py")
