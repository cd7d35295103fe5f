"""Formal Concept Analysis: formal contexts, all formal concepts, the covering relation (Hasse diagram).

Pure functions, no I/O. Stage I (``bfr_core.method.stage1``) builds a context whose objects are candidate
turns and whose attributes are the question's requirements; the app draws :func:`lattice_graph`.

Covers
------
* :class:`FormalContext` ``(G, M, I)``: objects, attributes, incidence as one attribute bitmask per
  object (Python ints: bit ``j`` set <=> object has attribute ``j``).
* :func:`concepts`: every formal concept ``(A, B)`` with ``A' = B`` and ``B' = A``, enumerated by
  Ganter's NextClosure over attribute sets (closed intents in lectic order). Cost is
  ``O(|C| * |M|^2 * |G|)`` word operations; fine for the contexts we meet (<= 50 objects, <= 5
  requirements in Stage I; textbook contexts in tests).
* :func:`covering`: the covering relation ``c < d`` with nothing strictly between (Hasse edges),
  as ``(lower, upper)`` index pairs; :func:`levels`: longest-chain distance from the top concept.
* :func:`lattice_graph`: a ``networkx.DiGraph`` (edge lower -> upper) with ``extent``, ``intent``
  (labels) and ``level`` node attributes.

Does not cover: attribute implications / stem bases, iceberg lattices, incremental algorithms,
many-valued contexts and scaling.

Order conventions (deterministic): concepts come out in NextClosure's lectic order, which starts at
the top concept (intent ``{}''``, largest extent) and ends at the bottom one. Ids are positions in
that list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx


@dataclass(frozen=True, slots=True)
class FormalContext:
    objects: tuple[str, ...]
    attributes: tuple[str, ...]
    rows: tuple[int, ...]  # per object: bitmask of its attributes

    def __post_init__(self) -> None:
        if len(self.rows) != len(self.objects):
            raise ValueError(f"{len(self.rows)} incidence rows for {len(self.objects)} objects")
        if len(set(self.objects)) != len(self.objects) or len(set(self.attributes)) != len(self.attributes):
            raise ValueError("object and attribute names must be unique")
        full = (1 << len(self.attributes)) - 1
        if any(r & ~full for r in self.rows):
            raise ValueError("an incidence row names an attribute index out of range")

    @property
    def all_attributes(self) -> int:
        return (1 << len(self.attributes)) - 1

    def has(self, g: int, m: int) -> bool:
        return bool(self.rows[g] >> m & 1)

    def matrix(self) -> list[list[int]]:
        """The incidence as a 0/1 matrix, objects x attributes (JSON-friendly)."""
        n = len(self.attributes)
        return [[r >> j & 1 for j in range(n)] for r in self.rows]


@dataclass(frozen=True, slots=True)
class Concept:
    extent: int  # bitmask over objects
    intent: int  # bitmask over attributes


def context_from_matrix(objects: Sequence[str], attributes: Sequence[str],
                        matrix: Sequence[Sequence[int | bool]]) -> FormalContext:
    rows = tuple(sum(1 << j for j, v in enumerate(row) if v) for row in matrix)
    return FormalContext(tuple(objects), tuple(attributes), rows)


def context_from_sets(objects: Sequence[str], attributes: Sequence[str],
                      has: Sequence[Sequence[str]]) -> FormalContext:
    """``has[i]`` lists the attribute names of ``objects[i]``."""
    index = {a: j for j, a in enumerate(attributes)}
    rows = tuple(sum(1 << index[a] for a in set(names)) for names in has)
    return FormalContext(tuple(objects), tuple(attributes), rows)


def bits(mask: int) -> list[int]:
    """Indices of the set bits, ascending."""
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def extent_of(ctx: FormalContext, intent: int) -> int:
    """B' : the objects having every attribute in ``intent``."""
    ext = 0
    for g, row in enumerate(ctx.rows):
        if row & intent == intent:
            ext |= 1 << g
    return ext


def intent_of(ctx: FormalContext, extent: int) -> int:
    """A' : the attributes shared by every object in ``extent`` (all attributes when A is empty)."""
    common = ctx.all_attributes
    g = 0
    while extent:
        if extent & 1:
            common &= ctx.rows[g]
        extent >>= 1
        g += 1
    return common


def closure(ctx: FormalContext, intent: int) -> int:
    """B'' for an attribute set B."""
    return intent_of(ctx, extent_of(ctx, intent))


def concepts(ctx: FormalContext) -> list[Concept]:
    """All formal concepts by NextClosure (Ganter 1984), in lectic order of their intents.

    Attribute ``j`` is more significant the smaller ``j`` is; ``A <_i B`` iff ``i`` is the
    smallest element where A and B differ and ``i`` is in B. Starting from ``{}''`` the next closed
    set is ``A (+) i = ((A & {0..i-1}) | {i})''`` for the largest ``i`` not in A whose closure adds
    no attribute below ``i``.
    """
    m = len(ctx.attributes)
    intent = closure(ctx, 0)
    out = [Concept(extent_of(ctx, intent), intent)]
    full = ctx.all_attributes
    while intent != full:
        for i in range(m - 1, -1, -1):
            bit = 1 << i
            if intent & bit:
                continue
            below = bit - 1  # attributes 0..i-1
            cand = closure(ctx, (intent & below) | bit)
            if cand & below == intent & below:
                intent = cand
                break
        else:  # pragma: no cover - unreachable: the full set is always a closed successor
            break
        out.append(Concept(extent_of(ctx, intent), intent))
    return out


def covering(found: Sequence[Concept]) -> list[tuple[int, int]]:
    """Hasse edges ``(lower, upper)``: ``lower`` < ``upper`` by extent inclusion, nothing between.

    For each concept, its upper covers are the minimal concepts among those whose extent strictly
    contains its extent. Sorted for a stable output.
    """
    edges: list[tuple[int, int]] = []
    for i, c in enumerate(found):
        above = [j for j, d in enumerate(found) if d.extent != c.extent and d.extent & c.extent == c.extent]
        for j in above:
            ej = found[j].extent
            # j covers i unless some other concept above i lies strictly below j
            if not any(k != j and found[k].extent != ej and found[k].extent & ej == found[k].extent
                       for k in above):
                edges.append((i, j))
    return sorted(edges)


def levels(found: Sequence[Concept], edges: Sequence[tuple[int, int]]) -> list[int]:
    """Longest-chain distance from the top concept (top = 0): a layered drawing puts each concept
    strictly below all its upper covers."""
    upper: dict[int, list[int]] = {i: [] for i in range(len(found))}
    for lo, up in edges:
        upper[lo].append(up)
    # process by decreasing extent size: every upper cover has a strictly larger extent
    order = sorted(range(len(found)), key=lambda i: (-found[i].extent.bit_count(), i))
    level = [0] * len(found)
    for i in order:
        level[i] = max((level[u] + 1 for u in upper[i]), default=0)
    return level


def lattice_graph(ctx: FormalContext, found: Sequence[Concept] | None = None,
                  edges: Sequence[tuple[int, int]] | None = None) -> nx.DiGraph:
    """The concept lattice as a DiGraph: node = concept id, edge lower -> upper (Hasse edges).

    Node attributes: ``extent`` and ``intent`` (lists of object / attribute names), ``level``.
    """
    found = list(concepts(ctx) if found is None else found)
    edges = covering(found) if edges is None else list(edges)
    lv = levels(found, edges)
    g = nx.DiGraph()
    for i, c in enumerate(found):
        g.add_node(i, extent=[ctx.objects[k] for k in bits(c.extent)],
                   intent=[ctx.attributes[k] for k in bits(c.intent)], level=lv[i])
    g.add_edges_from(edges)
    return g
