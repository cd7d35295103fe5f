"""The measured sufficiency gap the Trace page shows: where its JSON lives, which benchmark a dataset reads,
and the curves to draw. No streamlit import, so the bench that writes the file names the same path.

The JSON (written by the sufficiency bench, :data:`COMMAND`) holds per benchmark, per system and per budget k
(5, 10, 20, 40): ``n`` questions with gold turns, ``any`` (% with at least one gold turn among the first k
turns: Turn Hit / Gold Hit), ``all`` (% with every gold turn among them: recall_all / CER), ``gap``
(any - all), ``set_size`` (mean turns held at k) and ``reached`` (share of sets holding k turns or more).

Does not cover: running the bench, drawing (``bfr_core.plots.sufficiency_gap``), streamlit widgets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bfr_core.arm_names import CONV_FUSION, canonical_arm

RELATIVE = "bench/out/sufficiency_budgets.json"  # from the project root
PATH = Path(__file__).resolve().parents[1] / RELATIVE
COMMAND = "nice .venv/bin/python -m bench.quality.bench_ours_sufficiency --db STORE --dataset DATASET"
# A budget is drawn for a system when at least half of its sets hold k turns; past that the first k turns
# are the whole set (a one-shot baseline's 10 turns, say), which is no measurement at budget k.
REACH = 0.5


def load(path: Path | None = None) -> dict[str, Any] | None:
    """The measurement at ``path`` (default :data:`PATH`), or None when the file is absent; a file that is not the
    bench's JSON raises ValueError."""
    path = path or PATH
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path.name} is unreadable ({type(exc).__name__}): rerun {COMMAND}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), dict):
        raise ValueError(f"{path.name} has no 'benchmarks' table: rerun {COMMAND}")
    return data


def benchmark_for(data: Mapping[str, Any], kind: str) -> str | None:
    """The key of the measured benchmark of a dataset's kind (its ``kind`` field), or None."""
    return next((key for key, entry in data["benchmarks"].items() if entry.get("kind") == kind), None)


def curves(entry: Mapping[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """System -> budget -> {"any", "all"} for one benchmark's entry, the budgets each system reaches
    (:data:`REACH`) only, systems in the entry's order under their registered names (an alias in the JSON,
    ``arm_names.ALIASES``, shows as its arm, ``arm_names.canonical_arm``)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system, row in entry.get("systems", {}).items():
        points = {k: {"any": p["any"], "all": p["all"]} for k, p in row.get("budgets", {}).items()
                  if p.get("reached", 1.0) >= REACH}
        if points:
            out[canonical_arm(system)] = points
    return out


def ours_note(entry: Mapping[str, Any]) -> str:
    """What our arm's figures in ``entry`` are: its label from the JSON (development; cross-fitted where its head
    model's trees trained on the benchmark) and, when the bench kept them, its in-sample all gold at 10 beside the
    plotted one."""
    row = next((r for s, r in entry.get("systems", {}).items() if canonical_arm(s) == CONV_FUSION), {})
    note = row.get("label") or "development figures (its weights were chosen on these benchmarks' questions)"
    inside, shown = entry.get("in_sample", {}).get("10"), row.get("budgets", {}).get("10")
    if inside and shown:
        note += (f"; all gold @10 is {shown['all']:.1f} cross-fitted against {inside['all']:.1f} in-sample (the trees "
                 "trained on these questions)")
    return note
