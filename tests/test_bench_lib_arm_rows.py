"""bench/lib/arm_rows.py: comparing two dumps of arm rows, and what the differing rows did to gold."""

from __future__ import annotations

import json

import bench.lib.arm_rows as B

OLD = {"a:q1": [["t1", "t2", "g1"], ["k"], 3], "a:q2": [["g2", "t1"], ["k"], 2], "a:q3": [["g3", "t1"], ["k"], 2],
       "b:q1": [["g1", "t2"], ["k"], 2]}
NEW = {"a:q1": [["t2", "t1", "g1"], ["k"], 3],  # same set, other order, gold where it was
       "a:q2": [["t1", "g2"], ["k"], 2],  # same set, gold moved
       "a:q3": [["t1", "t2"], ["k"], 2],  # gold left
       "b:q1": [["g1", "t2"], ["k"], 2]}  # unchanged
GOLD = {"q1": frozenset({"g1"}), "q2": frozenset({"g2"}), "q3": frozenset({"g3"})}


def test_gold_moves_tells_a_lost_gold_turn_from_a_moved_one():
    assert B.gold_moves(OLD, NEW, ["a:q1", "a:q2", "a:q3"], GOLD) == {
        "differing_other_gold_turns": 1, "differing_gold_turns_moved": 1}


def test_compare_counts_and_keeps_one_entry_per_label(tmp_path):
    a, b, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "out.json"
    a.write_text(json.dumps(OLD)), b.write_text(json.dumps(NEW))
    r = B.compare(str(a), str(b), "x", str(out), GOLD)
    assert (r["rows_compared"], r["rows_differing"], r["differing_same_set_other_order"]) == (4, 3, 2)
    assert r["differing_by_arm"] == {"a": 3} and r["differing_other_gold_turns"] == 1
    B.compare(str(a), str(b), "x", str(out))  # the same label again: replaced, and without gold no gold counts
    runs = json.loads(out.read_text())["comparisons"]
    assert len(runs) == 1 and "differing_other_gold_turns" not in runs[0]
