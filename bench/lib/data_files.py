"""The benchmark files the offline equivalence checks read, found under the data folder.

Does not cover: loading them (``bfr_core.ingest.load``), stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bfr_core.ingest.sources import data_dir


def benchmark_files() -> dict[str, tuple[str, Path, dict[str, Any]]]:
    """Name -> (ingest kind, path, load options) of every benchmark file present under the data folder:
    LoCoMo, LongMemEval S dev50 and dev200, LoCoMo-Plus dev and each BEAM tier."""
    d = Path(data_dir())
    files = {"locomo": ("locomo", d / "locomo10.json", {}),
             "longmemeval_s_dev50": ("longmemeval", d / "longmemeval_s_dev50.json.gz", {}),
             "longmemeval_s_dev200": ("longmemeval", d / "longmemeval_s_dev200.json.gz", {}),
             "locomo_plus_dev": ("locomo-plus", d / "locomo_plus_dev.json", {"locomo": d / "locomo10.json"})}
    files.update({f"beam_{t.name}": ("beam", t, {}) for t in sorted((d / "beam").iterdir()) if t.is_dir()}
                 if (d / "beam").is_dir() else {})
    return {name: entry for name, entry in files.items() if entry[1].exists()}
