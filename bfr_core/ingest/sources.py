"""Where the benchmark files are: the one place that finds ``../shared/data``.

The files are never copied into the repository; code reads them from the folder beside the project
(``<project>/../shared/data``) or from ``$BFR_DATA`` when set. Covers :func:`data_dir` and
:func:`benchmark_file` (the LoCoMo file and the LongMemEval dev50 sample by kind). Does not cover
downloading anything.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
FILES = {"locomo": "locomo10.json", "longmemeval": "longmemeval_s_dev50.json.gz"}


def data_dir() -> Path:
    """``$BFR_DATA`` when set, else ``../shared/data`` beside the project."""
    env = os.environ.get("BFR_DATA")
    return Path(env) if env else PROJECT.parent / "shared" / "data"


def benchmark_file(kind: str) -> Path:
    """The shipped benchmark file of ``kind`` (``locomo`` or ``longmemeval``); it may not exist."""
    return data_dir() / FILES[kind]
