"""fca.py on textbook contexts, cross-checked against the ``concepts`` package."""

from __future__ import annotations

import random

import concepts as concepts_pkg
import pytest

from bfr_core.method import fca

# Ganter & Wille, "Formal Concept Analysis" (1999), Fig. 1.1: living beings and water.
LIVING_OBJECTS = ["leech", "bream", "frog", "dog", "spike-weed", "reed", "bean", "maize"]
LIVING_ATTRS = ["needs water", "lives in water", "lives on land", "needs chlorophyll",
                "two seed leaves", "one seed leaf", "can move", "has limbs", "suckles offspring"]
LIVING_HAS = {
    "leech": "abg", "bream": "abgh", "frog": "abcgh", "dog": "acghi",
    "spike-weed": "abdf", "reed": "abcdf", "bean": "acde", "maize": "acdf",
}


def living() -> fca.FormalContext:
    has = [[LIVING_ATTRS[ord(c) - ord("a")] for c in LIVING_HAS[o]] for o in LIVING_OBJECTS]
    return fca.context_from_sets(LIVING_OBJECTS, LIVING_ATTRS, has)


def names(ctx: fca.FormalContext, c: fca.Concept) -> tuple[frozenset[str], frozenset[str]]:
    return (frozenset(ctx.objects[i] for i in fca.bits(c.extent)),
            frozenset(ctx.attributes[j] for j in fca.bits(c.intent)))


def package_lattice(ctx: fca.FormalContext):
    """Concepts and Hasse edges from the ``concepts`` package, as name sets."""
    pkg = concepts_pkg.Context(list(ctx.objects), list(ctx.attributes),
                               [tuple(bool(v) for v in row) for row in ctx.matrix()])
    nodes = {(frozenset(c.extent), frozenset(c.intent)) for c in pkg.lattice}
    edges = {((frozenset(c.extent), frozenset(c.intent)), (frozenset(u.extent), frozenset(u.intent)))
             for c in pkg.lattice for u in c.upper_neighbors}
    return nodes, edges


def ours(ctx: fca.FormalContext):
    found = fca.concepts(ctx)
    nodes = [names(ctx, c) for c in found]
    edges = {(nodes[lo], nodes[up]) for lo, up in fca.covering(found)}
    return found, set(nodes), edges


def test_living_beings_has_19_concepts_and_matches_package():
    ctx = living()
    found, nodes, edges = ours(ctx)
    assert len(found) == 19
    pkg_nodes, pkg_edges = package_lattice(ctx)
    assert nodes == pkg_nodes
    assert edges == pkg_edges


def test_concepts_are_closed_pairs_and_top_first():
    ctx = living()
    found = fca.concepts(ctx)
    for c in found:
        assert fca.extent_of(ctx, c.intent) == c.extent
        assert fca.intent_of(ctx, c.extent) == c.intent
    assert found[0].extent == (1 << len(ctx.objects)) - 1  # top: every object
    assert found[-1].intent == ctx.all_attributes  # bottom: every attribute (empty extent here)
    assert found[-1].extent == 0


def test_tiny_hand_checked_context():
    # x:{a}, y:{a,b}, z:{b}  -> concepts: ({xyz},{}), ({xy},{a}), ({yz},{b}), ({y},{ab}); diamond
    ctx = fca.context_from_matrix(["x", "y", "z"], ["a", "b"], [[1, 0], [1, 1], [0, 1]])
    found, nodes, edges = ours(ctx)
    f = frozenset
    assert nodes == {(f("xyz"), f()), (f("xy"), f("a")), (f("yz"), f("b")), (f("y"), f("ab"))}
    assert edges == {
        ((f("xy"), f("a")), (f("xyz"), f())), ((f("yz"), f("b")), (f("xyz"), f())),
        ((f("y"), f("ab")), (f("xy"), f("a"))), ((f("y"), f("ab")), (f("yz"), f("b"))),
    }
    g = fca.lattice_graph(ctx)
    by_intent = {tuple(d["intent"]): d["level"] for _, d in g.nodes(data=True)}
    assert by_intent == {(): 0, ("a",): 1, ("b",): 1, ("a", "b"): 2}
    assert g.number_of_edges() == 4


def test_empty_attribute_set_and_no_objects():
    ctx = fca.context_from_matrix([], ["a", "b"], [])
    found = fca.concepts(ctx)
    assert len(found) == 1 and found[0].intent == 0b11 and found[0].extent == 0
    ctx2 = fca.context_from_matrix(["x"], [], [[]])
    assert [(c.extent, c.intent) for c in fca.concepts(ctx2)] == [(1, 0)]


def test_lattice_graph_attributes():
    ctx = living()
    g = fca.lattice_graph(ctx)
    assert g.number_of_nodes() == 19
    top = next(n for n, d in g.nodes(data=True) if d["level"] == 0)
    assert set(g.nodes[top]["extent"]) == set(LIVING_OBJECTS)
    assert g.nodes[top]["intent"] == ["needs water"]
    for lo, up in g.edges:
        assert g.nodes[lo]["level"] > g.nodes[up]["level"]
        assert set(g.nodes[lo]["extent"]) < set(g.nodes[up]["extent"])


@pytest.mark.parametrize("seed", range(12))
def test_random_contexts_match_package(seed):
    rng = random.Random(seed)
    n_obj, n_attr = rng.randint(1, 9), rng.randint(1, 6)
    matrix = [[rng.random() < 0.45 for _ in range(n_attr)] for _ in range(n_obj)]
    ctx = fca.context_from_matrix([f"g{i}" for i in range(n_obj)], [f"m{j}" for j in range(n_attr)], matrix)
    _, nodes, edges = ours(ctx)
    pkg_nodes, pkg_edges = package_lattice(ctx)
    assert nodes == pkg_nodes
    assert edges == pkg_edges


def test_bad_context_rejected():
    with pytest.raises(ValueError):
        fca.FormalContext(("x",), ("a",), (0b10,))
    with pytest.raises(ValueError):
        fca.FormalContext(("x", "x"), ("a",), (1, 1))
