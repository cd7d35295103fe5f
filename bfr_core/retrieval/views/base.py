"""The retrieval-view Protocol: every access path to the flat store answers the same one call.

A view is scoped to one store scope (a LoCoMo conversation or a LongMemEval haystack). The cue is
free text for text-like views, a name for the entity view and an anchor turn id for the session
view. ``exclude`` implements the paper's exclusion rule (Eq. 8): excluded turns are never returned,
and ``k`` counts only turns that are returned. Ties are broken by turn order in the scope.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol, runtime_checkable

from bfr_core.records import Hit


@runtime_checkable
class View(Protocol):
    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]: ...
