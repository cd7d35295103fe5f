"""Role ``select``: the smallest subset of a candidate pool that jointly covers the requirements.

Does not cover: the FCA cover itself (``method.stage1``), which this role stands in for when a model
is given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from bfr_core.llm.base import LLM
from bfr_core.llm.retry import complete_json
from bfr_core.roles.decomposer import decompose
from bfr_core.roles.prompting import as_object, build_request, fill

SELECT_PROMPT = """Pick the smallest set of memories that together supply every requirement of the \
question. Use only the ids shown. For each requirement number, list the ids (at most 3) of the picked \
memories that supply it.

Example
Question: How many days after I adopted the kitten did I take her to the vet?
Requirements:
1. date I adopted the kitten
2. date I took the kitten to the vet
Memories:
[m1] I adopted a kitten on March 3rd.
[m2] Kittens need lots of sleep.
[m3] Took her to the vet on March 10th.
{"coverage": {"1": ["m1"], "2": ["m3"]}}

Question: {question}
Requirements:
{requirements}
Memories:
{memories}
Reply with JSON only."""
MAX_PER_REQUIREMENT = 3


def select_schema(n_requirements: int, aliases: Sequence[str]) -> dict[str, Any]:
    """One list per requirement number, each of at most 3 of the shown ids: a grammar-constrained
    model cannot invent ids or requirements, and its reply stays a few dozen tokens."""
    ids = {"type": "array", "items": {"type": "string", "enum": list(aliases)}, "maxItems": MAX_PER_REQUIREMENT}
    keys = [str(i) for i in range(1, n_requirements + 1)]
    return {"type": "object", "required": ["coverage"], "properties": {"coverage": {
        "type": "object", "required": keys, "properties": dict.fromkeys(keys, ids)}}}


class Selection(NamedTuple):
    """Selected pool ids (in the model's order) and, per requirement text, the selected ids that
    supply it. Unpacks as ``ids, coverage``."""

    ids: list[str]
    coverage: dict[str, list[str]]

    @property
    def covered_fraction(self) -> float:
        return sum(1 for v in self.coverage.values() if v) / len(self.coverage) if self.coverage else 0.0


def select_subset(llm: LLM, question: str, pool: Sequence[tuple[str, str]], *,
                  requirements: Sequence[str] | None = None) -> Selection:
    """The smallest subset of ``pool`` ((id, text) pairs) that jointly covers the requirements.

    Pool ids are shown to the model as short aliases (m1, m2, ...) and mapped back; ids the model
    invents are dropped. ``requirements`` default to :func:`decompose`. An empty selection is a
    valid answer (Stage I then applies its fallback).
    """
    reqs = list(requirements) if requirements is not None else decompose(llm, question)
    if not pool:
        return Selection([], {r: [] for r in reqs})
    alias = {f"m{i}": pid for i, (pid, _) in enumerate(pool, 1)}
    pool_ids = set(alias.values())
    shown = [(a, text) for a, (_, text) in zip(alias, pool, strict=True)]

    def parse(obj: Any, raw: str) -> Selection:
        o = as_object(obj)
        cov_in = o.get("coverage")
        if not isinstance(cov_in, dict) and not isinstance(o.get("ids"), list):
            raise ValueError("expected a 'coverage' object")
        cov: dict[str, list[str]] = {r: [] for r in reqs}
        for k, v in (cov_in or {}).items():
            m = re.search(r"\d+", str(k))
            if m and 1 <= int(m.group(0)) <= len(reqs) and isinstance(v, list):
                picked = [alias[str(a).strip()] for a in v if str(a).strip() in alias]
                cov[reqs[int(m.group(0)) - 1]] = list(dict.fromkeys(picked))
        # the selection is the union of the coverage lists (a client may also list "ids" itself)
        listed = o["ids"] if isinstance(o.get("ids"), list) else [a for v in cov.values() for a in v]
        ids = list(dict.fromkeys(alias.get(str(a).strip(), str(a).strip()) for a in listed))
        ids = [i for i in ids if i in pool_ids]
        return Selection(ids, {r: [i for i in v if i in ids] for r, v in cov.items()})

    prompt = fill(SELECT_PROMPT, question=question,
                   requirements="\n".join(f"{i}. {r}" for i, r in enumerate(reqs, 1)),
                   memories="\n".join(f"[{a}] {' '.join(t.split())}" for a, t in shown))
    payload = {"question": question, "requirements": reqs, "pool": [list(p) for p in shown]}
    schema = select_schema(len(reqs), list(alias))
    return complete_json(llm, build_request("select", prompt, payload, schema, max_tokens=160), parse)

