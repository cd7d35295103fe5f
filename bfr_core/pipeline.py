"""The one entry point: run(question, arm, budget, provider) -> Trace, and the arm registry.

The app, the CLI and the benchmarks all call :func:`run` (or :func:`run_query` when they already
hold the views), so nothing is computed twice in two places. The question's gold ids never reach
the arm: it receives ``question.query()``. :data:`ARMS` names each arm's function directly, then
the arms installed packages add through the ``bfr.arms`` entry-point group (:func:`plugin_arms`:
name -> a function with the arm contract of ``method.arms``; a built-in name or an alias of one
(``arm_names``) is never replaced, an entry point that fails to load is left out and its error kept in :data:`PLUGIN_ERRORS`).
"""

from __future__ import annotations

import time
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from bfr_core.arm_names import ALIASES, CONV_FUSION, canonical_arm
from bfr_core.baselines.com import com
from bfr_core.baselines.mragent import mragent_flat
from bfr_core.baselines.topk import amem, mem0
from bfr_core.config import Budget, Config
from bfr_core.errors import BfrError
from bfr_core.method.arms import DEFAULT_BUDGET, ArmContext, ArmFn, checked_steps
from bfr_core.method.budgets import budget_for
from bfr_core.method.ours import conv_fusion
from bfr_core.method.stage1 import fca_ms
from bfr_core.method.stage2 import bfr_mv, bfr_text
from bfr_core.records import Query, Trace
from bfr_core.retrieval.scope import scope_views

if TYPE_CHECKING:
    from bfr_core.retrieval.scope import ScopeViews
    from bfr_core.store import Store

__all__ = ["ARMS", "DEFAULT_BUDGET", "ArmContext", "arm_names", "plugin_arms", "refresh_plugins", "resolve",
           "resolve_budget", "run", "run_query"]

ARMS: dict[str, ArmFn] = {
    "mem0": mem0,  # BM25 top-k over turns
    "amem": amem,  # dense MiniLM top-k over turns
    "com": com,  # CoM*: anchors, chains by relevance and consistency, blocking
    "mragent-flat": mragent_flat,  # tool-choosing policy over flat views
    "fca-ms": fca_ms,  # Stage I only (C0)
    "bfr-text": bfr_text,  # Stage I + text completion (C3)
    "bfr-mv": bfr_mv,  # Stage I + multi-view completion (C6)
    CONV_FUSION: conv_fusion,  # our own arm (beyond the paper): conversation-aware score fusion
}


BUILTIN_ARMS: frozenset[str] = frozenset(ARMS)
PLUGIN_GROUP = "bfr.arms"
PLUGIN_ERRORS: dict[str, str] = {}


def plugin_arms() -> dict[str, ArmFn]:
    """The arms of the ``bfr.arms`` entry points of the installed packages, by name."""
    PLUGIN_ERRORS.clear()
    out: dict[str, ArmFn] = {}
    for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: (e.name, e.value)):
        if ep.name in BUILTIN_ARMS or ep.name in ALIASES or ep.name in out:
            PLUGIN_ERRORS[ep.name] = f"{ep.value}: the name is taken by another arm"
            continue
        try:
            fn = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken package must not break the built-in arms
            PLUGIN_ERRORS[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
            continue
        if not callable(fn):
            PLUGIN_ERRORS[ep.name] = f"{ep.value}: not a function"
            continue
        out[ep.name] = fn
    return out


def refresh_plugins() -> list[str]:
    """Re-read the entry points (after a package was installed); returns the plugin arms' names."""
    for name in [n for n in ARMS if n not in BUILTIN_ARMS]:
        del ARMS[name]
    found = plugin_arms()
    ARMS.update(found)
    return list(found)


ARMS.update(plugin_arms())


def arm_names() -> list[str]:
    return list(ARMS)


def resolve(name: str) -> ArmFn:
    """The function of the arm ``name`` names (a registered name or an alias, ``arm_names``)."""
    if canonical_arm(name) not in ARMS:
        raise BfrError(f"unknown arm '{name}'; choose from {', '.join(ARMS)}")
    return ARMS[canonical_arm(name)]


def provider_label(llm: Any) -> str:
    if llm is None:
        return "offline rules"
    return str(getattr(llm, "label", "offline rules"))


def resolve_budget(arm: str, budget: str | Budget | None) -> tuple[str, Budget]:
    """A budget name from the grid (C0..C9), an explicit Budget, or the arm's default."""
    if isinstance(budget, Budget):
        return "custom", budget
    name = budget or DEFAULT_BUDGET.get(canonical_arm(arm), "")
    return name, budget_for(arm, name) if name else Budget()


def run_query(
    views: ScopeViews, query: Query, arm: str, *, dataset_id: str, budget: str | Budget | None = None,
    llm: Any = None, config: Config | None = None, k: int | None = None,
) -> Trace:
    config = config or Config()
    name, b = resolve_budget(arm, budget)
    ctx = ArmContext(views, config, b, name, llm, k or config.retrieval.k)
    start = time.perf_counter()
    steps = checked_steps(resolve(arm)(ctx, query), views.position)  # the arm boundary: ids of this scope
    elapsed = (time.perf_counter() - start) * 1000
    return Trace(dataset_id, query.question_id, canonical_arm(arm), name, provider_label(llm), tuple(steps), elapsed)


def run(
    store: Store, dataset_id: str, question_id: str, arm: str, *, budget: str | Budget | None = None,
    llm: Any = None, config: Config | None = None, k: int | None = None,
) -> Trace:
    question = store.question(dataset_id, question_id)
    views = scope_views(store, dataset_id, question.scope_id)
    return run_query(views, question.query(), arm, dataset_id=dataset_id, budget=budget, llm=llm,
                     config=config, k=k)
