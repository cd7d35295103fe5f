"""The one entry point: run(question, arm, budget, provider) -> Trace.

The app, the CLI and the benchmarks all call :func:`run` (or :func:`run_query` when they already
hold the views), so nothing is computed twice in two places. The question's gold ids never reach
the arm: it receives ``question.query()``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bfr_core.arms import DEFAULT_BUDGET, resolve
from bfr_core.config import Budget, Config
from bfr_core.records import Query, Trace

if TYPE_CHECKING:
    from bfr_core.index import ScopeViews
    from bfr_core.store import Store


@dataclass(frozen=True)
class ArmContext:
    views: ScopeViews  # every view over the question's scope, plus its turns
    config: Config = field(default_factory=Config)
    budget: Budget = field(default_factory=Budget)
    budget_name: str = ""
    llm: Any = None  # a bfr_core.llm LLM, or None for the offline rules path
    k: int = 10  # top-k cutoff for the one-shot arms


def provider_label(llm: Any) -> str:
    if llm is None:
        return "offline rules"
    return str(getattr(llm, "label", "offline rules"))


def resolve_budget(arm: str, budget: str | Budget | None) -> tuple[str, Budget]:
    """A budget name from the grid (C0..C9), an explicit Budget, or the arm's default."""
    from bfr_core.budgets import budget_for

    if isinstance(budget, Budget):
        return "custom", budget
    name = budget or DEFAULT_BUDGET.get(arm, "")
    return name, budget_for(arm, name) if name else Budget()


def run_query(
    views: ScopeViews, query: Query, arm: str, *, dataset_id: str, budget: str | Budget | None = None,
    llm: Any = None, config: Config | None = None, k: int | None = None,
) -> Trace:
    config = config or Config()
    name, b = resolve_budget(arm, budget)
    ctx = ArmContext(views, config, b, name, llm, k or config.retrieval.k)
    start = time.perf_counter()
    steps = resolve(arm)(ctx, query)
    elapsed = (time.perf_counter() - start) * 1000
    return Trace(dataset_id, query.question_id, arm, name, provider_label(llm), tuple(steps), elapsed)


def run(
    store: Store, dataset_id: str, question_id: str, arm: str, *, budget: str | Budget | None = None,
    llm: Any = None, config: Config | None = None, k: int | None = None,
) -> Trace:
    from bfr_core.index import scope_views

    question = store.question(dataset_id, question_id)
    views = scope_views(store, dataset_id, question.scope_id)
    return run_query(views, question.query(), arm, dataset_id=dataset_id, budget=budget, llm=llm,
                     config=config, k=k)
