"""The arm contract: what an arm receives (:class:`ArmContext`) and what it is (:data:`ArmFn`).

An arm is ``fn(ctx: ArmContext, query: Query) -> list[Step]``: it reads the scope's views through
``ctx`` and returns its steps; the last step's evidence is the arm's evidence set. Arms never see
gold ids, answers or question categories (they receive a :class:`~bfr_core.records.Query`).
The registry that names every arm's function lives one layer up, in ``bfr_core.pipeline``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bfr_core.config import Budget, Config

if TYPE_CHECKING:
    from bfr_core.records import Query, Step
    from bfr_core.retrieval.scope import ScopeViews


@dataclass(frozen=True)
class ArmContext:
    views: ScopeViews  # every view over the question's scope, plus its turns
    config: Config = field(default_factory=Config)
    budget: Budget = field(default_factory=Budget)
    budget_name: str = ""
    llm: Any = None  # a bfr_core.llm LLM, or None for the offline rules path
    k: int = 10  # top-k cutoff for the one-shot arms


ArmFn = Callable[[ArmContext, "Query"], "list[Step]"]

# Budget each arm runs at when none is named (paper's operating points).
DEFAULT_BUDGET: dict[str, str] = {"fca-ms": "C0", "bfr-text": "C3", "bfr-mv": "C6", "bfr": "C6"}
