"""The cache folder of a machine that never calibrated MiniLM, for the ingest bench's cold runs.

Does not cover: the ingest timings (``bench.speed.bench_ingest``).
"""

from __future__ import annotations

from pathlib import Path


def first_machine_cache(folder: Path) -> Path:
    """A cache folder as on a machine where MiniLM was never calibrated (``embed.remembered`` finds
    nothing): this machine's distilled static model linked in (distilling it again would take a
    minute no user pays twice), no ``calibration.json``."""
    try:
        from bfr_core.retrieval.encoders import cache_dir
    except ImportError:  # code before 2026-12-03 (--code)
        from bfr_core.retrieval.encoders import _cache_dir as cache_dir

    folder.mkdir(parents=True, exist_ok=True)
    for f in cache_dir().glob("*.npy"):
        if not (folder / f.name).exists():
            (folder / f.name).symlink_to(f)
    return folder
