"""The exact ``bfr`` command lines the app shows, for the store that is open, runnable as printed.

Covers: ``bfr ingest`` (also on a dataset's own file again, which finishes its vectors) /
``bfr eval`` / ``bfr sweep`` lines with this store's path and dataset names, shell-quoted, in the
README's form: ``.venv/bin/bfr`` (``scripts/app.sh`` installs it there; a bare ``bfr`` is not on
PATH after it), run from the repository folder (where the app resolves a
relative store path too); the benchmark files where ``bfr_core.ingest.sources`` finds them.
Does not cover: running them (``ui.evaluating`` runs an ``eval`` line from the app).
No streamlit import, so tests can compare a page's text with these strings.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bfr_core.config import PROJECT_CONFIG, config_path
from bfr_core.ingest.sources import PROJECT, benchmark_file
from bfr_core.llm.factory import configured

BFR = ".venv/bin/bfr"
DEFAULT_ARMS = "mem0,bfr-text,bfr-mv"
SAMPLE = 50


def shared_path(kind: str) -> str:
    """The benchmark file of ``kind`` as the command names it: relative to the repository folder when
    it sits beside it (``../shared/data/locomo10.json``), else its absolute path."""
    p = benchmark_file(kind)
    return os.path.relpath(p, PROJECT) if Path(p).is_relative_to(PROJECT.parent) else str(p)


def ingest_cmd(db: str, kind: str = "locomo", path: str | None = None) -> str:
    return f"{BFR} ingest {kind} {shlex.quote(path or shared_path(kind))} --db {shlex.quote(db)}"


def finish_cmd(db: str, kind: str, path: str, dataset: str) -> str:
    """``bfr ingest`` on the file a dataset was written from: it finishes its cache stages (vectors)."""
    return f"{ingest_cmd(db, kind, path)} --name {shlex.quote(dataset)}"


def export_data_cmd(db: str, dataset: str, out: str, *, blind: bool = False) -> str:
    """``bfr export-data``: what each question of ``dataset`` searches, as JSON Lines."""
    return (f"{BFR} export-data {shlex.quote(dataset)} --db {shlex.quote(db)} --out {shlex.quote(out)}"
            + (" --blind" if blind else ""))


def eval_cmd(db: str, dataset: str, *, suff: bool = False, arms: str = DEFAULT_ARMS, sample: int | None = SAMPLE,
             provider: str | None = None, answer: bool = False, judge: bool = False) -> str:
    """``bfr eval`` for ``provider`` (``PROVIDER[:MODEL]``; ``None``: offline rules) with the settings the
    config file gives it (``llm.factory.configured``): its model and ``base_url`` spelled out, and the file
    itself (``--config``) when ``$BFR_CONFIG`` names one, so the line runs as shown from a shell too.
    ``answer`` / ``judge`` / ``suff``: the extractive answer, the answer judge, LLM Suff@Set."""
    parts = [f"{BFR} eval", f"--db {shlex.quote(db)}", f"--dataset {shlex.quote(dataset)}",
             f"--arms {shlex.quote(arms)}"]
    if sample:
        parts.append(f"--sample {sample}")
    if provider and provider.partition(":")[0].strip().lower() != "rules":
        cfg = configured(provider)
        parts.append(f"--provider {shlex.quote(cfg.provider)}")
        if cfg.model:
            parts.append(f"--model {shlex.quote(cfg.model)}")
        if cfg.base_url:
            parts.append(f"--base-url {shlex.quote(cfg.base_url)}")
        named = config_path()
        if named is not None and named != PROJECT_CONFIG:
            parts.append(f"--config {shlex.quote(str(named))}")
    parts += [flag for flag, on in (("--answer", answer and not judge), ("--judge", judge), ("--suff", suff)) if on]
    return " ".join(parts)


def eval_cmds(db: str, datasets: Sequence[dict[str, Any]], *, suff: bool = False) -> list[str]:
    """One ``bfr eval`` line per dataset (``resources.datasets`` rows) that has a scoreable question (one
    with gold turns; a retrieval run of any other has nothing to score and is refused): the user's own
    first, the built-in demo last."""
    ids = [d["dataset_id"] for d in datasets if d["counts"]["scoreable"]]
    return [eval_cmd(db, d, suff=suff) for d in sorted(ids, key=lambda d: (d == "demo", d))]


NOTHING_TO_SCORE = ("No question of this store's datasets has gold turns, so an evaluation run has nothing to score "
                    "(`bfr eval` refuses it); load a dataset whose questions name their evidence.")


def sweep_cmd(db: str, dataset: str, out: str) -> str:
    return f"{BFR} sweep --db {shlex.quote(db)} --dataset {shlex.quote(dataset)} --out {shlex.quote(out)}"
