"""Counts the reliability tests hand to ``bench/checks/bench_reliability.py``: each test module adds its own
entry to the JSON file ``$BFR_RELIABILITY_STATS`` names, keeping the other modules' entries."""

import json
import os
from pathlib import Path
from typing import Any


def record(key: str, stats: dict[str, Any]) -> None:
    """Write ``stats`` under ``key`` in the stats file, when the bench asked for one."""
    path = os.environ.get("BFR_RELIABILITY_STATS")
    if not path:
        return
    p = Path(path)
    data = json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}
    data[key] = stats
    p.write_text(json.dumps(data, indent=2), encoding="utf-8")
