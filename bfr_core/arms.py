"""The arm registry: arm name -> the function implementing it, imported only when used.

An arm is ``fn(ctx: ArmContext, query: Query) -> list[Step]``: it reads the scope's views through
``ctx`` and returns its steps; the last step's evidence is the arm's evidence set. Arms never see
gold ids, answers or question categories (they receive a :class:`~bfr_core.records.Query`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from bfr_core.errors import BfrError

if TYPE_CHECKING:
    from bfr_core.pipeline import ArmContext
    from bfr_core.records import Query, Step

ArmFn = Callable[["ArmContext", "Query"], "list[Step]"]

ARMS: dict[str, str] = {
    "mem0": "bfr_core.baselines:mem0",  # BM25 top-k over turns
    "amem": "bfr_core.baselines:amem",  # dense MiniLM top-k over turns
    "com": "bfr_core.com:com",  # CoM*: anchors, chains by relevance and consistency, blocking
    "mragent-flat": "bfr_core.mragent:mragent_flat",  # tool-choosing policy over flat views
    "fca-ms": "bfr_core.stage1:fca_ms",  # Stage I only (C0)
    "bfr-text": "bfr_core.stage2:bfr_text",  # Stage I + text completion (C3)
    "bfr-mv": "bfr_core.stage2:bfr_mv",  # Stage I + multi-view completion (C6)
    "bfr": "bfr_core.ours:bfr",  # our own arm (beyond the paper)
}

# Budget each arm runs at when none is named (paper's operating points).
DEFAULT_BUDGET: dict[str, str] = {"fca-ms": "C0", "bfr-text": "C3", "bfr-mv": "C6", "bfr": "C6"}


def arm_names() -> list[str]:
    return list(ARMS)


def resolve(name: str) -> ArmFn:
    if name not in ARMS:
        raise BfrError(f"unknown arm '{name}'; choose from {', '.join(ARMS)}")
    module_name, attr = ARMS[name].split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise BfrError(f"arm '{name}' is not available in this build ({exc})") from exc
    return getattr(module, attr)
