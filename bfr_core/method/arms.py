"""The arm contract: what an arm receives (:class:`ArmContext`) and what it is (:data:`ArmFn`).

An arm is ``fn(ctx: ArmContext, query: Query) -> list[Step]``: it reads the scope's views through
``ctx`` and returns its steps; the last step's evidence is the arm's evidence set. Arms never see
gold ids, answers or question categories (they receive a :class:`~bfr_core.records.Query`).
The registry that names every arm's function lives one layer up, in ``bfr_core.pipeline``.

:func:`checked_steps` is the arm boundary: what an arm returned, refused with the reason (an
:class:`ArmOutputError`) unless it is a list of :class:`~bfr_core.records.Step` whose evidence ids
are strings naming distinct turns of the question's scope, with whole-number calls and a dict of
data (whether JSON holds that data is found where the trace is stored, failing that row alone). Built-in arms meet it by construction; an arm from an installed package (a plug-in,
``docs/plugins.md``) is held to it, so a bad id fails that one (question, arm) row with the reason
and every other row of the run is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bfr_core.arm_names import CONV_FUSION
from bfr_core.config import Budget, Config
from bfr_core.records import Step

if TYPE_CHECKING:
    from bfr_core.records import Query
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
DEFAULT_BUDGET: dict[str, str] = {"fca-ms": "C0", "bfr-text": "C3", "bfr-mv": "C6", CONV_FUSION: "C6"}


class ArmOutputError(Exception):
    """What an arm returned breaks the arm contract; the message says how (the row's error)."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def checked_steps(steps: Any, scope_turns: Collection[str]) -> tuple[Step, ...]:
    """``steps`` as a tuple once they keep the arm contract (see the module docstring); else an
    :class:`ArmOutputError` naming the first break: a step that is no ``Step``, an id that is no
    string, an id twice in one step's evidence, an id naming no turn of the scope (``scope_turns``),
    calls that are no whole number, data that is no dict."""
    if not isinstance(steps, (list, tuple)) or not steps:
        raise ArmOutputError(f"the arm returned {type(steps).__name__}, not a non-empty list of steps")
    for n, step in enumerate(steps):
        where = f"step {n}"
        if not isinstance(step, Step):
            raise ArmOutputError(f"{where} is a {type(step).__name__}, not a bfr_core.records.Step")
        if not isinstance(step.evidence, (list, tuple)):
            raise ArmOutputError(f"{where}: evidence is a {type(step.evidence).__name__}, not a list of turn ids")
        seen: set[str] = set()
        for i, tid in enumerate(step.evidence):
            if not isinstance(tid, str):
                raise ArmOutputError(f"{where}: evidence[{i}] is a {type(tid).__name__} ({_shown(tid)}), not a turn id")
            if tid in seen:
                raise ArmOutputError(f"{where}: evidence[{i}] {_shown(tid)} is in the evidence twice")
            if tid not in scope_turns:
                raise ArmOutputError(f"{where}: evidence[{i}] {_shown(tid)} names no turn of the question's scope")
            seen.add(tid)
        if isinstance(step.calls, bool) or not isinstance(step.calls, int) or step.calls < 0:
            raise ArmOutputError(f"{where}: calls {_shown(step.calls)} is not a whole number of calls")
        if not isinstance(step.kind, str) or not isinstance(step.title, str) or not isinstance(step.data, dict):
            raise ArmOutputError(f"{where}: kind and title must be text and data a dict")
    return tuple(s if isinstance(s.evidence, tuple) else Step(s.kind, s.title, tuple(s.evidence), s.calls, s.data)
                 for s in steps)
