"""The exact ``bfr`` command lines the app's empty states show, for the store that is open.

Covers: ``bfr ingest`` / ``bfr eval`` / ``bfr sweep`` lines with this store's path and dataset
names, shell-quoted. Does not cover: running them (the pages only show them).
No streamlit import, so tests can compare a page's text with these strings.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

DEFAULT_ARMS = "mem0,bfr-text,bfr-mv"
SAMPLE = 50


def ingest_cmd(db: str, kind: str = "locomo", path: str = "../shared/data/locomo10.json") -> str:
    return f"bfr ingest {kind} {shlex.quote(path)} --db {shlex.quote(db)}"


def eval_cmd(db: str, dataset: str, *, suff: bool = False, arms: str = DEFAULT_ARMS, sample: int | None = SAMPLE) -> str:
    parts = ["bfr eval", f"--db {shlex.quote(db)}", f"--dataset {shlex.quote(dataset)}", f"--arms {arms}"]
    if sample:
        parts.append(f"--sample {sample}")
    if suff:
        parts.append("--suff")
    return " ".join(parts)


def eval_cmds(db: str, datasets: Sequence[str], *, suff: bool = False) -> list[str]:
    """One ``bfr eval`` line per dataset (the demo's first when present)."""
    ordered = sorted(datasets, key=lambda d: (d != "demo", d))
    return [eval_cmd(db, d, suff=suff) for d in ordered]


def sweep_cmd(db: str, dataset: str, out: str) -> str:
    return f"bfr sweep --db {shlex.quote(db)} --dataset {shlex.quote(dataset)} --out {shlex.quote(out)}"
